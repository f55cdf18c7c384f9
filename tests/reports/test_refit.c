/* SPDX-License-Identifier: MIT */
/*
 * Longer than ~600 lines: one suite per command or component; its cases share its fixtures.
 *
 * `powerdag refit` and the report's "model error at the measured utilisation", on run directories
 * fabricated here: the plan through the plan API, the run log byte by byte in the documented format
 * (docs/RUNLOG.md), NOT through the agent's writer. Every expected number is recomputed in this file
 * from the raw data it wrote, with the laws of docs/MODEL.md and docs/REFIT.md:
 *
 *   - WCET: inverse WCET law per sample (capacity 0.5, 500 MHz of a 1000 MHz reference, a fixed
 *     part), nearest-rank quantile, margin, floor at the observed maximum, --allow-below-max;
 *     the forward law of the new WCET covers every sample; refit -> validate -> optimize works;
 *   - power: the rail written from a known "true" table at the measured busy fractions is fitted
 *     back (line fit), the one-factor scale fit, base power from a "base" rail;
 *   - report: busy fraction, model at the measured utilisation and its error, per rail and total;
 *   - every bad input: exit 2, one message, no output file; a truncated run is used.
 */
#include "runlog/pd_runlog.h"
#include "core/pd_core.h"
#include "pd_test.h"
#include "plan/pd_plan.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char platform_yaml[] =
	"platform:\n"
	"  name: refit-test\n"
	"  reference_frequency: 1000MHz\n"
	"  base_power: 500mW\n"
	"  dl: {max_util_per_cpu: 0.95}\n"
	"  islands:\n"
	"    - name: little\n"
	"      cpus: [0, 1]\n"
	"      capacity: 0.5\n"
	"      opps:\n"
	"        - {freq: 500MHz, busy: 600mW, idle: 100mW}\n"
	"        - {freq: 1000MHz, busy: 1W, idle: 200mW}\n"
	"  sensors:\n"
	"    - {uri: \"local:\", device: ina0, channel: power0, rail: VDD_LITTLE, measures: little}\n"
	"    - {uri: \"local:\", device: ina1, channel: power1, rail: VDD_BASE, measures: base}\n";

static const char dags_yaml[] =
	"dags:\n"
	"  - name: chain\n"
	"    period: 20ms\n"
	"    tasks:\n"
	"      - {name: a, wcet: 1ms, wcet_fixed: 200us}\n"
	"      - {name: b, wcet: 2ms, bcet: 1500us}\n"
	"      - {name: c, wcet: 1ms}\n"
	"    edges:\n"
	"      - [a, b]\n"
	"      - [b, c]\n";

#define N_INST 150 /* 3 s of 20-ms instances */
#define N_TASKS 3
#define PERIOD_NS (20 * PD_NS_PER_MS)
#define RUN_NS (3 * PD_NS_PER_S)
#define TRUE_BUSY_UW 700000 /* the "true" table at 500 MHz the rail is written from */
#define TRUE_IDLE_UW 150000
#define TRUE_BASE_UW 450000

static const int task_cpu[N_TASKS] = {0, 1, 0};

struct fab {
	char dir[4096];
	int64_t exec[N_INST][N_TASKS]; /* every job runs contiguously: cpu_ns = end - start */
	int64_t start[N_INST][N_TASKS];
	double window_u[3];            /* busy fraction of each 1-s window */
	size_t log_bytes, header_bytes;
	bool no_power;
	const char *platform; /* NULL: platform_yaml */
	/* > 0: the board's other software kept the plan CPUs busy this many ns per second beyond the jobs
	 * (half on each); the log then has BUSY records and the rail follows the true table at jobs + other */
	int64_t other_ns_per_s;
};

/* Execution times: a = 3 ms + j us (j = instance mod 100: every value exactly known), b grows with
 * the second of the run (5, 10, 12 ms; every instance ends inside its second) so that the windows' busy fractions spread, c = 2 ms. */
static void gen_jobs(struct fab *f)
{
	for (int k = 0; k < N_INST; k++) {
		int64_t rel = (int64_t)k * PERIOD_NS, t = rel + 10000;
		static const int64_t b_ns[3] = {5000000, 10000000, 12000000};
		int64_t x[N_TASKS] = {3000000 + (int64_t)(k % 100) * 1000, b_ns[k / 50], 2000000};
		for (int i = 0; i < N_TASKS; i++) {
			f->start[k][i] = t;
			f->exec[k][i] = x[i];
			t += x[i] + 5000;
		}
	}
	for (int w = 0; w < 3; w++) {
		int64_t e = 0;
		for (int k = w * 50; k < (w + 1) * 50; k++)
			for (int i = 0; i < N_TASKS; i++)
				e += f->exec[k][i];
		f->window_u[w] = (double)e / (double)PD_NS_PER_S;
	}
}

static int64_t true_little_uw(double u)
{
	return llround(2.0 * TRUE_IDLE_UW + (double)(TRUE_BUSY_UW - TRUE_IDLE_UW) * u);
}

static pd_plan *make_plan(const struct fab *f)
{
	const char *pf = pd_test_write(f->dir, "platform.yaml", f->platform ? f->platform : platform_yaml);
	char pfp[4096];
	snprintf(pfp, sizeof(pfp), "%s", pf);
	const char *df = pd_test_write(f->dir, "dags.yaml", dags_yaml);
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *plat = pd_platform_load_file(pfp, &d);
	pd_dagset *dags = pd_dags_load_file(df, &d);
	pd_diags_print(&d, stderr);
	ck_assert_ptr_nonnull(plat);
	ck_assert_ptr_nonnull(dags);
	pd_diags_free(&d);
	pd_plan *p = pd_plan_new(dags, plat);
	ck_assert_ptr_nonnull(p);
	pd_plan_set_island_opp(p, 0, 0); /* 500 MHz */
	for (size_t i = 0; i < N_TASKS; i++) {
		struct pd_plan_task *t = pd_plan_task(p, i);
		t->place.kind = PD_PLACE_CPU;
		t->place.cpu = task_cpu[i];
		t->place.island = 0;
		t->wcet_ns = t->runtime_ns = pd_platform_wcet_at(pd_plan_platform(p), pd_dags_task(pd_plan_dags(p), i), 0, 0);
		t->deadline_ns = t->response_ns = PERIOD_NS / 3;
		t->period_ns = PERIOD_NS;
	}
	struct pd_plan_meta *m = pd_plan_meta(p);
	m->status = PD_STATUS_FEASIBLE;
	m->power_uw = 1200000;
	char path[4200];
	snprintf(path, sizeof(path), "%s/plan.yaml", f->dir);
	pd_err e = {0};
	ck_assert_msg(pd_plan_write_file(p, path, &e) == 0, "%s", e.msg);
	return p;
}

static void put_record(FILE *fp, uint16_t type, const void *payload, uint32_t len)
{
	unsigned char frame[8 + PD_RUNLOG_MAX_PAYLOAD + 4];
	uint16_t zero = 0;
	memcpy(frame, &len, 4); /* little endian, like the format */
	memcpy(frame + 4, &type, 2);
	memcpy(frame + 6, &zero, 2);
	memcpy(frame + 8, payload, len);
	uint32_t crc = pd_runlog_crc32(0, frame, 8 + len);
	memcpy(frame + 8 + len, &crc, 4);
	ck_assert_int_eq(fwrite(frame, 1, 12 + len, fp), 12 + len);
}

static void write_header(FILE *fp, const pd_plan *p, const struct fab *f)
{
	const pd_dagset *ds = pd_plan_dags(p);
	json_t *tasks = json_array();
	for (size_t i = 0; i < N_TASKS; i++) {
		const struct pd_plan_task *pt = pd_plan_task_c(p, i);
		json_array_append_new(tasks, json_pack("{s:s, s:s, s:s, s:i, s:I, s:I, s:I, s:I, s:[]}", "name",
						       pd_dags_task(ds, i)->name, "dag", "chain", "work", "builtin:spin", "cpu",
						       task_cpu[i], "runtime_ns", (json_int_t)pt->runtime_ns, "deadline_ns",
						       (json_int_t)pt->deadline_ns, "period_ns", (json_int_t)PERIOD_NS,
						       "wcet_ns", (json_int_t)pt->wcet_ns, "preds"));
	}
	char hash[32];
	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)pd_plan_hash(p));
	json_t *h = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:i, s:o, s:[{s:s, s:I, s:I}]}", "format", PD_RUNLOG_FORMAT,
			      "version", PD_RUNLOG_VERSION, "plan_hash", hash, "board", "refit-test", "kernel", "6.18.0-test",
			      "machine", "x86_64", "sample_hz", f->no_power ? 0 : 100, "tasks", tasks, "dags", "name", "chain",
			      "period_ns", (json_int_t)PERIOD_NS, "deadline_ns", (json_int_t)PERIOD_NS);
	json_object_set_new(h, "rails", f->no_power ? json_array()
						    : json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "VDD_LITTLE", "measures",
								"little", "name", "VDD_BASE", "measures", "base"));
	json_object_set_new(h, "islands", json_pack("[{s:s, s:s}]", "name", "little", "policy", "policy0"));
	if (f->other_ns_per_s > 0)
		json_object_set_new(h, "busy_period_ns", json_integer(PD_NS_PER_S));
	json_object_set_new(h, "accelerators", json_array());
	char *text = json_dumps(h, JSON_COMPACT | JSON_SORT_KEYS);
	fprintf(fp, "%s\n", text);
	free(text);
	json_decref(h);
}

/* POWER ticks every 10 ms over [0, 3 s] (301 ticks) interleaved with the jobs in time order. */
static void write_records(FILE *fp, const struct fab *f)
{
	struct pd_runlog_opp_rec o0 = {PD_RUNLOG_OPP_ISLAND, 0, 0, 500000}, o1 = {PD_RUNLOG_OPP_ISLAND, 0, RUN_NS, 500000};
	put_record(fp, PD_RUNLOG_OPP, &o0, sizeof(o0));
	int k = 0;
	for (int64_t t = 0; t <= RUN_NS; t += 10 * PD_NS_PER_MS) {
		while (k < N_INST && f->start[k][N_TASKS - 1] + f->exec[k][N_TASKS - 1] <= t) {
			for (int i = 0; i < N_TASKS; i++) {
				struct pd_runlog_job_rec j = {(uint32_t)i, 0, (uint64_t)k, (int64_t)k * PERIOD_NS, f->start[k][i],
						      f->start[k][i] + f->exec[k][i], f->exec[k][i], f->exec[k][i],
						      task_cpu[i], 0};
				put_record(fp, PD_RUNLOG_JOB, &j, sizeof(j));
			}
			int64_t fin = f->start[k][N_TASKS - 1] + f->exec[k][N_TASKS - 1];
			struct pd_runlog_instance_rec in = {0, 0, (uint64_t)k, (int64_t)k * PERIOD_NS, fin, fin - (int64_t)k * PERIOD_NS};
			put_record(fp, PD_RUNLOG_INSTANCE, &in, sizeof(in));
			k++;
		}
		if (f->no_power)
			continue;
		int w = t >= 2 * PD_NS_PER_S ? 2 : (int)(t / PD_NS_PER_S);
		unsigned char buf[sizeof(struct pd_runlog_power_rec) + 16];
		struct pd_runlog_power_rec ph = {t, 0, 2};
		double other = (double)f->other_ns_per_s / (double)PD_NS_PER_S;
		int64_t v[2] = {true_little_uw(f->window_u[w] + other), TRUE_BASE_UW};
		memcpy(buf, &ph, sizeof(ph));
		memcpy(buf + sizeof(ph), v, 16);
		put_record(fp, PD_RUNLOG_POWER, buf, sizeof(buf));
	}
	ck_assert_int_eq(k, N_INST); /* every instance finished inside the run */
	for (int c = 0; f->other_ns_per_s > 0 && c < 2; c++) /* one BUSY record per CPU and second */
		for (int w = 0; w < 3; w++) {
			int64_t b = f->other_ns_per_s / 2;
			for (int q = w * 50; q < (w + 1) * 50; q++)
				for (int i = 0; i < N_TASKS; i++)
					b += task_cpu[i] == c ? f->exec[q][i] : 0;
			struct pd_runlog_busy_rec br = {(int64_t)w * PD_NS_PER_S, (int64_t)(w + 1) * PD_NS_PER_S, b, c, 0};
			put_record(fp, PD_RUNLOG_BUSY, &br, sizeof(br));
		}
	put_record(fp, PD_RUNLOG_OPP, &o1, sizeof(o1));
	struct pd_runlog_end_rec end = {RUN_NS + PD_NS_PER_MS, 0, 1000, 1000, 5000, 0, 0};
	put_record(fp, PD_RUNLOG_END, &end, sizeof(end));
}

static void fab_write(struct fab *f)
{
	snprintf(f->dir, sizeof(f->dir), "%s", pd_test_tmpdir());
	gen_jobs(f);
	pd_plan *p = make_plan(f);
	char path[4200];
	snprintf(path, sizeof(path), "%s/run.pdlog", f->dir);
	FILE *fp = fopen(path, "wb");
	ck_assert_ptr_nonnull(fp);
	write_header(fp, p, f);
	f->header_bytes = (size_t)ftell(fp);
	write_records(fp, f);
	f->log_bytes = (size_t)ftell(fp);
	fclose(fp);
	pd_plan_free(p);
}

/* ---------------------------------------------------------------- expectations, from the laws */
/* inverse WCET law at capacity 0.5 (500000 millionths), 500 MHz, reference 1000 MHz */
static int64_t to_ref(int64_t x, int64_t fixed)
{
	if (x <= fixed)
		return x;
	__int128 num = (__int128)(x - fixed) * 500000 * 500000, den = (__int128)1000000 * 1000000;
	return fixed + (int64_t)((num + den - 1) / den);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Expected new WCET of task i over nruns copies of the same samples. */
static int64_t expect_wcet(const struct fab *f, int i, int64_t fixed, int nruns, double q, int64_t margin_micro,
			   bool allow_below)
{
	size_t n = (size_t)N_INST * (size_t)nruns;
	int64_t *v = malloc(n * sizeof(int64_t));
	for (int r = 0; r < nruns; r++)
		for (int k = 0; k < N_INST; k++)
			v[r * N_INST + k] = to_ref(f->exec[k][i], fixed);
	qsort(v, n, sizeof(int64_t), cmp_i64);
	size_t rank = (size_t)ceil(q * (double)n);
	int64_t qv = v[rank - 1];
	__int128 t = (__int128)qv * margin_micro;
	int64_t target = (int64_t)((t + 999999) / 1000000);
	int64_t mx = v[n - 1];
	free(v);
	if (!allow_below && target < mx)
		target = mx;
	return target < fixed ? fixed : target;
}

static const char *powerdag(void)
{
	const char *p = pd_test_bin("powerdag");
	ck_assert_msg(access(p, X_OK) == 0, "%s is not built", p);
	return p;
}

static char out[1 << 17];

static pd_dagset *load_dags(const char *path)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = pd_dags_load_file(path, &d);
	pd_diags_print(&d, stderr);
	pd_diags_free(&d);
	ck_assert_ptr_nonnull(s);
	return s;
}

static int64_t wcet_of(const pd_dagset *s, const char *task)
{
	long i = pd_dags_find_task(s, "chain", task);
	ck_assert_int_ge(i, 0);
	return pd_dags_task(s, (size_t)i)->wcet_ns;
}

static bool exists(const char *dir, const char *name)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/* ---------------------------------------------------------------- WCET */
START_TEST(wcet_quantile_margin_max_floor_and_inverse_law)
{
	static struct fab f;
	fab_write(&f);
	const char *bin = powerdag();
	/* q = 0.9, margin 1.05: above the maximum for every task */
	int rc = pd_test_run(out, sizeof(out), "%s refit %s -o %s/q.yaml --quantile 0.9 --margin 1.05 --json 2>%s/err.txt",
			     bin, f.dir, f.dir, f.dir);
	ck_assert_int_eq(rc, 0);
	char path[4200];
	snprintf(path, sizeof(path), "%s/q.yaml", f.dir);
	pd_dagset *s = load_dags(path);
	int64_t ea = expect_wcet(&f, 0, 200000, 1, 0.9, 1050000, false);
	int64_t eb = expect_wcet(&f, 1, 0, 1, 0.9, 1050000, false);
	int64_t ec = expect_wcet(&f, 2, 0, 1, 0.9, 1050000, false);
	ck_assert_int_eq(wcet_of(s, "a"), ea);
	ck_assert_int_eq(wcet_of(s, "b"), eb);
	ck_assert_int_eq(wcet_of(s, "c"), ec);
	/* by hand for a: samples x = 3 ms + j us, ref = 200 us + (x - 200 us) / 4 = 900 us + 0.25 j us
	 * (exact); the fixed part is kept, and the forward law covers every sample at 500 MHz */
	ck_assert_int_eq(to_ref(3099000, 200000), 924750);
	pd_diags d;
	pd_diags_init(&d);
	snprintf(path, sizeof(path), "%s/platform.yaml", f.dir);
	pd_platform *pf = pd_platform_load_file(path, &d);
	ck_assert_ptr_nonnull(pf);
	const char *names[3] = {"a", "b", "c"};
	for (int i = 0; i < 3; i++) {
		const struct pd_task *t = pd_dags_task(s, (size_t)pd_dags_find_task(s, "chain", names[i]));
		int64_t fw = pd_platform_wcet_at(pf, t, 0, 0), mx = 0;
		for (int k = 0; k < N_INST; k++)
			mx = f.exec[k][i] > mx ? f.exec[k][i] : mx;
		ck_assert_msg(fw >= mx, "%s: forward law %lld < observed max %lld", names[i], (long long)fw, (long long)mx);
	}
	ck_assert_int_eq(pd_dags_task(s, 0)->wcet_fixed_ns, 200000);
	pd_dags_free(s);
	/* the JSON explains each task */
	json_t *j = json_loads(out, 0, NULL);
	ck_assert_msg(j != NULL, "not JSON: %.300s", out);
	json_t *ta = json_array_get(json_object_get(j, "tasks"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(ta, "samples")), N_INST);
	ck_assert_int_eq(json_integer_value(json_object_get(ta, "observed_max_ns")), 3099000);
	ck_assert_int_eq(json_integer_value(json_object_get(ta, "old_wcet_ns")), 1000000);
	ck_assert_int_eq(json_integer_value(json_object_get(ta, "new_wcet_ns")), ea);
	ck_assert_str_eq(json_string_value(json_object_get(ta, "bound")), "quantile x margin");
	json_decref(j);

	/* q = 0.5, margin 1: below the maximum -> floored at it, unless --allow-below-max */
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s refit %s -o %s/m.yaml --quantile 0.5 --margin 1 2>/dev/null", bin, f.dir, f.dir), 0);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s refit %s -o %s/b.yaml --quantile 0.5 --margin 1 --allow-below-max 2>/dev/null",
				     bin, f.dir, f.dir),
			 0);
	snprintf(path, sizeof(path), "%s/m.yaml", f.dir);
	s = load_dags(path);
	ck_assert_int_eq(wcet_of(s, "a"), expect_wcet(&f, 0, 200000, 1, 0.5, 1000000, false));
	ck_assert_int_eq(wcet_of(s, "a"), to_ref(3099000, 200000)); /* the observed maximum */
	pd_dags_free(s);
	snprintf(path, sizeof(path), "%s/b.yaml", f.dir);
	s = load_dags(path);
	int64_t below = expect_wcet(&f, 0, 200000, 1, 0.5, 1000000, true);
	ck_assert_int_lt(below, to_ref(3099000, 200000));
	ck_assert_int_eq(wcet_of(s, "a"), below);
	/* b's bcet (1.5 ms) is below its new WCET and kept */
	ck_assert_int_eq(pd_dags_task(s, 1)->bcet_ns, 1500000);
	pd_dags_free(s);
	pd_platform_free(pf);
	pd_diags_free(&d);
}
END_TEST

START_TEST(two_runs_are_pooled_and_refit_validates_and_optimizes)
{
	static struct fab f1, f2;
	fab_write(&f1);
	fab_write(&f2);
	const char *bin = powerdag();
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s refit %s %s -o %s/two.yaml --quantile 0.999 --margin 1.1 --json 2>/dev/null",
				     bin, f1.dir, f2.dir, f1.dir),
			 0);
	json_t *j = json_loads(out, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(json_object_get(j, "tasks"), 1), "samples")),
			 2 * N_INST);
	json_decref(j);
	char path[4200];
	snprintf(path, sizeof(path), "%s/two.yaml", f1.dir);
	pd_dagset *s = load_dags(path);
	ck_assert_int_eq(wcet_of(s, "b"), expect_wcet(&f1, 1, 0, 2, 0.999, 1100000, false));
	pd_dags_free(s);
	/* the refitted set is a valid DAG file the optimizer takes */
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s validate %s/two.yaml %s/platform.yaml >/dev/null 2>&1", bin, f1.dir, f1.dir), 0);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s optimize %s/two.yaml %s/platform.yaml -o %s/p2.yaml >/dev/null 2>&1", bin,
				     f1.dir, f1.dir, f1.dir),
			 0);
	ck_assert(exists(f1.dir, "p2.yaml"));
}
END_TEST

/* ---------------------------------------------------------------- power */
/* refit --what power of f's run into f->dir/pf.yaml (its --json in out); the fitted platform, loaded. */
static pd_platform *refit_what(const struct fab *f, const char *what, pd_diags *d)
{
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s refit %s --what %s -o %s/pf.yaml --json 2>/dev/null", powerdag(),
				     f->dir, what, f->dir),
			 0);
	char path[4200];
	snprintf(path, sizeof(path), "%s/pf.yaml", f->dir);
	pd_diags_init(d);
	pd_platform *pf = pd_platform_load_file(path, d);
	pd_diags_print(d, stderr);
	ck_assert_ptr_nonnull(pf);
	return pf;
}

static pd_platform *refit_power(const struct fab *f, pd_diags *d) { return refit_what(f, "power", d); }

START_TEST(power_line_fit_recovers_the_true_table_and_base)
{
	static struct fab f;
	fab_write(&f);
	const char *bin = powerdag();
	pd_diags d;
	pd_platform *pf = refit_power(&f, &d);
	const struct pd_opp *o = &pd_platform_island(pf, 0)->opps[0];
	/* the rail was written (rounded to 1 uW) from the true table at the windows' busy fractions */
	ck_assert_msg(llabs(o->busy_uw - TRUE_BUSY_UW) <= 1 && llabs(o->idle_uw - TRUE_IDLE_UW) <= 1,
		      "busy %lld idle %lld", (long long)o->busy_uw, (long long)o->idle_uw);
	/* the OPP the runs never used, and everything else, is kept */
	ck_assert_int_eq(pd_platform_island(pf, 0)->opps[1].busy_uw, 1000000);
	ck_assert_int_eq(pd_platform_island(pf, 0)->opps[1].idle_uw, 200000);
	ck_assert_int_eq(pd_platform_base_uw(pf), TRUE_BASE_UW);
	ck_assert_int_eq(pd_platform_sensor_count(pf), 2);
	pd_platform_free(pf);
	pd_diags_free(&d);
	json_t *j = json_loads(out, 0, NULL);
	json_t *en = json_array_get(json_object_get(j, "entries"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(en, "method")), "line");
	ck_assert_int_eq(json_integer_value(json_object_get(en, "observations")), 3);
	ck_assert(json_real_value(json_object_get(en, "residual_w")) < 1e-5);
	ck_assert(json_real_value(json_object_get(en, "old_residual_w")) > 0.01);
	json_decref(j);
	/* the fitted platform optimizes the original DAG set */
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s optimize %s/dags.yaml %s/pf.yaml -o %s/p.yaml >/dev/null 2>&1", bin, f.dir,
				     f.dir, f.dir),
			 0);
}
END_TEST

/* The rail measured the jobs and 0.15 cores of other software (agent, iiod, sshd: BUSY records): the
 * fit takes the busy time of everything and recovers the true table; fitted to the jobs alone, the
 * other software's power would have been folded into the idle power. */
START_TEST(power_fit_counts_the_other_software)
{
	static struct fab f;
	f.other_ns_per_s = 150 * PD_NS_PER_MS;
	fab_write(&f);
	pd_diags d;
	pd_platform *pf = refit_power(&f, &d);
	const struct pd_opp *o = &pd_platform_island(pf, 0)->opps[0];
	ck_assert_msg(llabs(o->busy_uw - TRUE_BUSY_UW) <= 2 && llabs(o->idle_uw - TRUE_IDLE_UW) <= 2,
		      "busy %lld idle %lld", (long long)o->busy_uw, (long long)o->idle_uw);
	/* and the other software's time becomes the island's background_util, which every prediction
	 * adds: at the fitted table, (busy - idle) x 0.15 */
	ck_assert_msg(fabs(pd_platform_island(pf, 0)->background_util - 0.15) < 0.005, "background %g",
		      pd_platform_island(pf, 0)->background_util);
	ck_assert_msg(fabs(pd_platform_island_background_w(pd_platform_island(pf, 0), 0) -
			   (double)(o->busy_uw - o->idle_uw) * 1e-6 * pd_platform_island(pf, 0)->background_util) < 1e-12,
		      "background power");
	pd_platform_free(pf);
	pd_diags_free(&d);
	/* --what background: the same background, and the table as the plan had it (not the fit's) */
	pf = refit_what(&f, "background", &d);
	ck_assert_msg(fabs(pd_platform_island(pf, 0)->background_util - 0.15) < 0.005, "background %g",
		      pd_platform_island(pf, 0)->background_util);
	o = &pd_platform_island(pf, 0)->opps[0]; /* platform_yaml's 600 / 100 mW, not the truth's 700 / 150 */
	ck_assert_int_eq(o->busy_uw, 600000);
	ck_assert_int_eq(o->idle_uw, 100000);
	ck_assert_int_eq(pd_platform_base_uw(pf), 500000);
	json_t *jb = json_loads(out, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(jb, "what")), "background");
	ck_assert_uint_eq(json_array_size(json_object_get(jb, "entries")), 0);
	json_decref(jb);
	pd_platform_free(pf);
	pd_diags_free(&d);
	/* without other software there is no background to fit */
	static struct fab quiet;
	quiet.other_ns_per_s = 0;
	fab_write(&quiet);
	pd_diags dq;
	pd_platform *pq = refit_power(&quiet, &dq);
	ck_assert_msg(pd_platform_island(pq, 0)->background_util < 0.005, "background %g", pd_platform_island(pq, 0)->background_util);
	pd_platform_free(pq);
	pd_diags_free(&dq);
	/* the report evaluates its model (the plan's table) at the busy time of everything too */
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s report %s --json 2>/dev/null", powerdag(), f.dir), 0);
	json_t *j = json_loads(out, 0, NULL);
	ck_assert_ptr_nonnull(j);
	json_t *rl = json_array_get(json_object_get(json_object_get(j, "measured"), "rail_stats"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(rl, "model_busy")), "all");
	ck_assert_msg(fabs(json_real_value(json_object_get(rl, "other_busy")) - 0.15) < 0.005, "other %g",
		      json_real_value(json_object_get(rl, "other_busy")));
	json_decref(j);
}
END_TEST

START_TEST(power_scale_fit_below_the_spread)
{
	static struct fab f;
	fab_write(&f);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s refit %s --what power --min-spread 5 -o %s/ps.yaml 2>/dev/null", powerdag(),
				     f.dir, f.dir),
			 0);
	/* s = sum P M / sum M^2 with M the old model (600/100 mW at 500 MHz) at each window's u */
	double pm = 0, mm = 0;
	for (int w = 0; w < 3; w++) {
		double m = 2 * 0.1 + 0.5 * f.window_u[w], p = (double)true_little_uw(f.window_u[w]) * 1e-6;
		pm += p * m;
		mm += m * m;
	}
	double s = pm / mm;
	char path[4200];
	snprintf(path, sizeof(path), "%s/ps.yaml", f.dir);
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *pf = pd_platform_load_file(path, &d);
	ck_assert_ptr_nonnull(pf);
	const struct pd_opp *o = &pd_platform_island(pf, 0)->opps[0];
	ck_assert_int_eq(o->busy_uw, llround(600000 * s));
	ck_assert_int_eq(o->idle_uw, llround(100000 * s));
	pd_platform_free(pf);
	pd_diags_free(&d);
}
END_TEST

/* ---------------------------------------------------------------- report */
START_TEST(report_model_error_at_measured_utilisation)
{
	static struct fab f;
	fab_write(&f);
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s report --json %s", powerdag(), f.dir), 0);
	json_t *j = json_loads(out, 0, NULL);
	ck_assert_ptr_nonnull(j);
	/* recomputed: u over the rail's span [0, 3 s] = all execution / 3 s; trapezoid average of the rail */
	double e = 0;
	for (int k = 0; k < N_INST; k++)
		for (int i = 0; i < N_TASKS; i++)
			e += (double)f.exec[k][i];
	double u = e / (double)RUN_NS, avg = 0;
	for (int64_t t = 0; t < RUN_NS; t += 10 * PD_NS_PER_MS) {
		int w0 = t >= 2 * PD_NS_PER_S ? 2 : (int)(t / PD_NS_PER_S);
		int64_t t1 = t + 10 * PD_NS_PER_MS;
		int w1 = t1 >= 2 * PD_NS_PER_S ? 2 : (int)(t1 / PD_NS_PER_S);
		avg += ((double)true_little_uw(f.window_u[w0]) + (double)true_little_uw(f.window_u[w1])) / 2 * 1e-2;
	}
	avg = avg / 3.0 * 1e-6; /* uW*s / s -> W */
	double model = 2 * 0.1 + 0.5 * u, err = (avg - model) / model * 100;
	json_t *rl = NULL, *rs = json_object_get(json_object_get(j, "measured"), "rail_stats");
	for (size_t i = 0; i < json_array_size(rs); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(rs, i), "name")), "VDD_LITTLE") == 0)
			rl = json_array_get(rs, i);
	ck_assert_ptr_nonnull(rl);
	double got_u = json_real_value(json_object_get(rl, "measured_busy"));
	ck_assert_msg(fabs(got_u - u) < 1e-9, "busy %g vs %g", got_u, u);
	ck_assert(fabs(json_real_value(json_object_get(rl, "model_at_measured_w")) - model) < 1e-9);
	ck_assert(fabs(json_real_value(json_object_get(rl, "model_error_pct")) - err) < 1e-6);
	/* planned busy = sum C(k,f)/T of the plan (3.4, 8, 4 ms at 500 MHz, capacity 0.5) */
	ck_assert(fabs(json_real_value(json_object_get(rl, "planned_busy")) - (3.4 + 8 + 4) / 20) < 1e-9);
	/* total: base 0.5 W + island at u, against the sum of the rails */
	double total_model = 0.5 + model, total = avg + TRUE_BASE_UW * 1e-6;
	json_t *mm = json_object_get(j, "model_at_measured");
	ck_assert(fabs(json_real_value(json_object_get(mm, "power_w")) - total_model) < 1e-9);
	ck_assert(fabs(json_real_value(json_object_get(mm, "error_pct")) - (total - total_model) / total_model * 100) < 1e-6);
	json_decref(j);
	/* the text and the HTML say it too */
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s report %s --html %s/r.html", powerdag(), f.dir, f.dir), 0);
	ck_assert_msg(strstr(out, "model error at the measured utilisation"), "%s", out);
	char *html = NULL;
	size_t len = 0;
	char path[4200];
	snprintf(path, sizeof(path), "%s/r.html", f.dir);
	ck_assert_int_eq(pd_read_file(path, &html, &len, 1 << 24, NULL), 0);
	ck_assert(strstr(html, "model error at measured utilisation") != NULL);
	free(html);
}
END_TEST

/* ---------------------------------------------------------------- bad input */
static void refuse(const char *args, const char *dir, const char *why)
{
	int rc = pd_test_run(out, sizeof(out), "%s refit %s -o %s/out.yaml 2>&1", powerdag(), args, dir);
	ck_assert_msg(rc == 2, "refit %s: exit %d, want 2: %s", args, rc, out);
	ck_assert_msg(strstr(out, why), "refit %s: no '%s' in: %s", args, why, out);
	ck_assert_msg(!exists(dir, "out.yaml"), "refit %s wrote its output", args);
}

START_TEST(bad_inputs_exit_2_and_write_nothing)
{
	static struct fab f, g, h, np;
	fab_write(&f);
	char a[8400];
	refuse("/nonexistent/run", f.dir, "no such run directory");
	snprintf(a, sizeof(a), "%s --min-samples 1000", f.dir);
	refuse(a, f.dir, "fewer than the 1000 needed");
	snprintf(a, sizeof(a), "%s --quantile 0", f.dir);
	refuse(a, f.dir, "--quantile");
	snprintf(a, sizeof(a), "%s --margin x", f.dir);
	refuse(a, f.dir, "--margin");
	snprintf(a, sizeof(a), "%s --what both", f.dir);
	refuse(a, f.dir, "--what");
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s refit %s 2>&1", powerdag(), f.dir), 2);
	ck_assert_msg(strstr(out, "-o OUT is required"), "%s", out);
	/* runs of another platform mixed in */
	g.platform = "platform:\n  name: other\n  reference_frequency: 1000MHz\n  islands:\n"
		     "    - {name: little, cpus: [0, 1], capacity: 0.5, opps: [{freq: 500MHz, busy: 600mW, idle: 100mW}]}\n";
	fab_write(&g);
	snprintf(a, sizeof(a), "%s %s", f.dir, g.dir);
	refuse(a, f.dir, "differs from");
	/* power without samples */
	np.no_power = true;
	fab_write(&np);
	snprintf(a, sizeof(a), "%s --what power", np.dir);
	refuse(a, np.dir, "no power samples");
	/* a run log of another plan: plan.yaml replaced by g's */
	fab_write(&h);
	char cmd[9000];
	snprintf(cmd, sizeof(cmd), "cp %s/plan.yaml %s/plan.yaml", f.dir, h.dir);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "sed -i 's/feasible/optimal/' %s/plan.yaml", h.dir);
	ck_assert_int_eq(system(cmd), 0);
	refuse(h.dir, h.dir, "of another plan");
	/* missing run log */
	snprintf(cmd, sizeof(cmd), "rm %s/run.pdlog", h.dir);
	ck_assert_int_eq(system(cmd), 0);
	refuse(h.dir, h.dir, "run.pdlog is missing");
	/* a log cut inside its header line is no run log */
	char p[4200];
	snprintf(p, sizeof(p), "%s/run.pdlog", f.dir);
	ck_assert_int_eq(truncate(p, (off_t)(f.header_bytes / 2)), 0);
	refuse(f.dir, f.dir, "run.pdlog");
}
END_TEST

START_TEST(truncated_run_is_used_for_its_complete_records)
{
	static struct fab f;
	fab_write(&f);
	char p[4200];
	snprintf(p, sizeof(p), "%s/run.pdlog", f.dir);
	/* kill -9 half-way: no END, a torn last record */
	ck_assert_int_eq(truncate(p, (off_t)(f.header_bytes + (f.log_bytes - f.header_bytes) / 2 + 7)), 0);
	int rc = pd_test_run(out, sizeof(out), "%s refit %s -o %s/t.yaml --min-samples 10 --json 2>%s/err.txt", powerdag(),
			     f.dir, f.dir, f.dir);
	ck_assert_int_eq(rc, 0);
	json_t *j = json_loads(out, 0, NULL);
	ck_assert_ptr_nonnull(j);
	json_t *run = json_array_get(json_object_get(j, "runs"), 0);
	ck_assert(json_is_false(json_object_get(run, "complete")));
	json_int_t n = json_integer_value(json_object_get(json_array_get(json_object_get(j, "tasks"), 0), "samples"));
	ck_assert_msg(n > 10 && n < N_INST, "samples %lld", (long long)n);
	json_decref(j);
	char *err = NULL;
	size_t len = 0;
	snprintf(p, sizeof(p), "%s/err.txt", f.dir);
	ck_assert_int_eq(pd_read_file(p, &err, &len, 1 << 20, NULL), 0);
	ck_assert_msg(strstr(err, "is incomplete") && strstr(err, "complete job records"), "%s", err);
	free(err);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("reports_refit");
	TCase *tc = tcase_create("refit");
	tcase_add_test(tc, wcet_quantile_margin_max_floor_and_inverse_law);
	tcase_add_test(tc, two_runs_are_pooled_and_refit_validates_and_optimizes);
	tcase_add_test(tc, power_line_fit_recovers_the_true_table_and_base);
	tcase_add_test(tc, power_fit_counts_the_other_software);
	tcase_add_test(tc, power_scale_fit_below_the_spread);
	tcase_add_test(tc, report_model_error_at_measured_utilisation);
	tcase_add_test(tc, bad_inputs_exit_2_and_write_nothing);
	tcase_add_test(tc, truncated_run_is_used_for_its_complete_records);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
