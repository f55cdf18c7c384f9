/* SPDX-License-Identifier: MIT */
/* The synthetic run directory of the report tests (helper_rundir.h). */
#include "helper_rundir.h"

#include "runlog/pd_runlog.h"
#include "core/pd_core.h"
#include "pd_test.h"
#include "plan/pd_plan.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char platform_yaml[] =
	"platform:\n"
	"  name: synthetic\n"
	"  reference_frequency: 1000MHz\n"
	"  base_power: 1W\n"
	"  dl: {max_util_per_cpu: 0.95}\n"
	"  islands:\n"
	"    - name: main\n"
	"      cpus: [0, 1]\n"
	"      capacity: 1.0\n"
	"      opps:\n"
	"        - {freq: 1000MHz, busy: 800mW, idle: 100mW}\n"
	"  accelerators:\n"
	"    - {name: gpu0, kind: gpu, opps: [{freq: 1000MHz, busy: 2W, idle: 500mW}]}\n"
	"  sensors:\n"
	"    - {uri: \"local:\", device: ina-cpu, channel: power0, rail: VDD_CPU, measures: main}\n"
	"    - {uri: \"local:\", device: ina-soc, channel: power1, rail: VDD_SOC, measures: soc}\n"
	"    - {uri: \"local:\", device: ina-gpu, channel: power2, rail: VDD_GPU, measures: gpu0}\n";

static const char dags_yaml[] =
	"dags:\n"
	"  - name: cam\n"
	"    period: 10ms\n"
	"    deadline: 8ms\n"
	"    tasks:\n"
	"      - {name: grab, wcet: 1ms}\n"
	"      - {name: detect, wcet: 3ms}\n"
	"    edges:\n"
	"      - [grab, detect]\n"
	"  - name: ctl\n"
	"    period: 20ms\n"
	"    tasks:\n"
	"      - name: law\n"
	"        wcet: 2ms\n"
	"        accel: [{kind: gpu, latency: 1ms}]\n";

/* Placements: grab, detect on cpu0; law on the GPU (-1). */
static const int task_cpu[3] = {0, 0, -1};
static const uint32_t task_dag[3] = {0, 0, 1};

static pd_plan *make_plan(struct syn_run *s)
{
	const char *pf = pd_test_write(s->dir, "platform.yaml", platform_yaml);
	const char *df = pd_test_write(s->dir, "dags.yaml", dags_yaml);
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *plat = pd_platform_load_file(pf, &d);
	pd_dagset *dags = pd_dags_load_file(df, &d);
	pd_diags_print(&d, stderr);
	ck_assert_ptr_nonnull(plat);
	ck_assert_ptr_nonnull(dags);
	pd_diags_free(&d);
	pd_plan *p = pd_plan_new(dags, plat);
	ck_assert_ptr_nonnull(p);
	const pd_dagset *ds = pd_plan_dags(p);
	for (size_t i = 0; i < 3; i++) {
		struct pd_plan_task *t = pd_plan_task(p, i);
		const struct pd_dag *g = pd_dags_dag(ds, pd_dags_task(ds, i)->dag);
		if (task_cpu[i] < 0) {
			t->place = (struct pd_placement){.kind = PD_PLACE_GPU, .cpu = -1, .accel = 0, .impl = 0};
			t->wcet_ns = t->response_ns = pd_dags_task(ds, i)->impls[0].latency_ns;
			continue;
		}
		t->place.kind = PD_PLACE_CPU;
		t->place.cpu = task_cpu[i];
		t->place.island = 0;
		t->wcet_ns = t->runtime_ns = pd_dags_task(ds, i)->wcet_ns;
		t->deadline_ns = t->response_ns = g->deadline_ns / 2;
		t->period_ns = g->period_ns;
	}
	for (size_t g = 0; g < 2; g++) {
		s->deadline_ns[g] = pd_dags_dag(ds, g)->deadline_ns;
		s->period_ns[g] = pd_dags_dag(ds, g)->period_ns;
	}
	struct pd_plan_meta *m = pd_plan_meta(p);
	m->status = PD_STATUS_OPTIMAL;
	m->power_uw = s->plan_power_uw = 1500000;
	m->lower_bound_uw = 1500000;
	m->power_cap_uw = -1;
	char path[4096];
	snprintf(path, sizeof(path), "%s/plan.yaml", s->dir);
	pd_err e = {0};
	ck_assert_msg(pd_plan_write_file(p, path, &e) == 0, "%s", e.msg);
	unlink(pf);
	unlink(df);
	return p;
}

/* ---------------------------------------------------------------- raw data */
static void gen_power(struct syn_run *s, pd_rng *rng)
{
	/* 100 Hz for 3 s, with a hole 400..500 ms (no ticks at all: a detected gap) and rail 1 unread
	 * 700..750 ms (logged GAP record, NO_VALUE in those rows) */
	s->n_samples = 0;
	for (int64_t t = 0; t <= 3000 * PD_NS_PER_MS; t += 10 * PD_NS_PER_MS) {
		if (t > 400 * PD_NS_PER_MS && t < 500 * PD_NS_PER_MS)
			continue;
		size_t i = s->n_samples++;
		s->t_ns[i] = t + pd_rng_range(rng, 0, 200000); /* jitter up to 0.2 ms */
		s->uw[i][0] = pd_rng_range(rng, 900000, 1300000);
		s->uw[i][1] = pd_rng_range(rng, 300000, 500000);
		s->uw[i][2] = pd_rng_range(rng, 500000, 2000000);
		s->has[i][0] = s->has[i][2] = true;
		s->has[i][1] = !(t >= 700 * PD_NS_PER_MS && t <= 750 * PD_NS_PER_MS);
	}
	s->gap_from_ns = 695 * PD_NS_PER_MS;
	s->gap_to_ns = 755 * PD_NS_PER_MS;
}

static void gen_jobs_of(struct syn_run *s, const struct syn_inst *in, pd_rng *rng)
{
	int64_t t = in->release_ns;
	for (uint32_t i = 0; i < 3; i++) {
		if (task_dag[i] != in->dag)
			continue;
		struct syn_job *j = &s->jobs[s->n_jobs++];
		j->task = i;
		j->seq = in->seq;
		j->release_ns = in->release_ns;
		j->start_ns = t + pd_rng_range(rng, 10000, 100000);
		/* the last task of the DAG ends when the instance finishes */
		bool last = (i == 1 && in->dag == 0) || (i == 2);
		j->end_ns = last ? in->finish_ns : j->start_ns + (in->finish_ns - j->start_ns) / 3;
		j->cpu_ns = task_cpu[i] < 0 ? 0 : (j->end_ns - j->start_ns) * 9 / 10; /* GPU: no CPU time */
		j->cpu = task_cpu[i];
		j->overrun = pd_rng_range(rng, 0, 19) == 0;
		t = j->end_ns;
	}
}

static void gen_instances(struct syn_run *s, pd_rng *rng)
{
	s->n_inst = 0;
	s->n_jobs = 0;
	s->n_skipped = 0;
	for (uint32_t g = 0; g < 2; g++) {
		for (uint64_t k = 0; (int64_t)k * s->period_ns[g] < 3000 * PD_NS_PER_MS; k++) {
			struct syn_inst *in = &s->inst[s->n_inst++];
			in->dag = g;
			in->seq = k;
			in->release_ns = (int64_t)k * s->period_ns[g];
			/* responses 2..9 ms: cam (D = 8 ms) misses now and then, ctl (D = 20 ms) never */
			in->finish_ns = in->release_ns + pd_rng_range(rng, 2 * PD_NS_PER_MS, 9 * PD_NS_PER_MS);
			in->finished = !(g == 0 && k == 20);
			if (in->finished)
				gen_jobs_of(s, in, rng);
		}
	}
}

/* ---------------------------------------------------------------- the documented format */
static void put_record(FILE *f, uint16_t type, const void *payload, uint32_t len)
{
	unsigned char frame[8 + PD_RUNLOG_MAX_PAYLOAD + 4];
	uint16_t zero = 0;
	memcpy(frame, &len, 4); /* the test machines are little endian, like the format */
	memcpy(frame + 4, &type, 2);
	memcpy(frame + 6, &zero, 2);
	memcpy(frame + 8, payload, len);
	uint32_t crc = pd_runlog_crc32(0, frame, 8 + len);
	memcpy(frame + 8 + len, &crc, 4);
	ck_assert_int_eq(fwrite(frame, 1, 12 + len, f), 12 + len);
}

static void write_header(FILE *f, const pd_plan *p, const struct syn_run *s)
{
	const pd_dagset *ds = pd_plan_dags(p);
	json_t *tasks = json_array(), *dags = json_array();
	for (size_t i = 0; i < 3; i++) {
		const struct pd_task *t = pd_dags_task(ds, i);
		json_array_append_new(tasks, json_pack("{s:s, s:s, s:s, s:i, s:I, s:I, s:I, s:I}", "name", t->name, "dag",
						       pd_dags_dag(ds, t->dag)->name, "work", "builtin:busy", "cpu",
						       task_cpu[i], "runtime_ns", (json_int_t)t->wcet_ns, "deadline_ns",
						       (json_int_t)s->deadline_ns[t->dag] / 2, "period_ns",
						       (json_int_t)s->period_ns[t->dag], "wcet_ns", (json_int_t)t->wcet_ns));
	}
	for (size_t g = 0; g < 2; g++)
		json_array_append_new(dags, json_pack("{s:s, s:I, s:I}", "name", pd_dags_dag(ds, g)->name, "period_ns",
						      (json_int_t)s->period_ns[g], "deadline_ns",
						      (json_int_t)s->deadline_ns[g]));
	char hash[32];
	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)pd_plan_hash(p));
	json_t *h = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:i, s:o, s:o, s:[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}]}", "format",
			      PD_RUNLOG_FORMAT, "version", PD_RUNLOG_VERSION, "plan_hash", hash, "board", "synthetic-board",
			      "kernel", "6.18.0-test", "arch", "x86_64", "sample_hz", 100, "tasks", tasks, "dags", dags,
			      "rails", "name", "VDD_CPU", "measures", "main", "name", "VDD_SOC", "measures", "soc", "name", "VDD_GPU",
			      "measures", "gpu0");
	json_object_set_new(h, "islands", json_pack("[{s:s, s:s}]", "name", "main", "policy", "policy0"));
	json_object_set_new(h, "accelerators", json_pack("[{s:s, s:s}]", "name", "gpu0", "kind", "gpu"));
	if (s->steal_sampled)
		json_object_set_new(h, "steal_period_ns", json_integer(100 * PD_NS_PER_MS));
	if (s->busy_sampled)
		json_object_set_new(h, "busy_period_ns", json_integer(100 * PD_NS_PER_MS));
	if (s->foreign_period_ns > 0)
		json_object_set_new(h, "foreign_period_ns", json_integer(s->foreign_period_ns));
	if (s->n_busy_cpus) {
		json_t *bc = json_array();
		for (size_t i = 0; i < s->n_busy_cpus; i++)
			json_array_append_new(bc, json_integer(s->busy_cpus[i]));
		json_object_set_new(h, "busy_cpus", bc);
	}
	char *text = json_dumps(h, JSON_COMPACT);
	fprintf(f, "%s\n", text);
	free(text);
	json_decref(h);
}

static void write_records(FILE *f, struct syn_run *s)
{
	/* frequency snapshots at the start: the island at its planned 1 GHz, the GPU at 900 MHz instead
	 * of its planned 1 GHz; at the end the GPU's devfreq is unreadable (-1) */
	struct pd_runlog_opp_rec opp[4] = {{PD_RUNLOG_OPP_ISLAND, 0, 0, 1000000}, {PD_RUNLOG_OPP_ACCEL, 0, 0, 900000},
				   {PD_RUNLOG_OPP_ISLAND, 0, s->end_ns, 1000000}, {PD_RUNLOG_OPP_ACCEL, 0, s->end_ns, -1}};
	put_record(f, PD_RUNLOG_OPP, &opp[0], sizeof(opp[0]));
	put_record(f, PD_RUNLOG_OPP, &opp[1], sizeof(opp[1]));
	/* interleaved in time order, as the agent's writer drains its rings */
	size_t pi = 0, ii = 0;
	while (pi < s->n_samples || ii < s->n_inst) {
		if (pi < s->n_samples && (ii >= s->n_inst || s->t_ns[pi] <= s->inst[ii].finish_ns)) {
			unsigned char buf[sizeof(struct pd_runlog_power_rec) + SYN_RAILS * 8];
			struct pd_runlog_power_rec h = {s->t_ns[pi], 0, SYN_RAILS};
			memcpy(buf, &h, sizeof(h));
			for (size_t k = 0; k < SYN_RAILS; k++) {
				int64_t v = s->has[pi][k] ? s->uw[pi][k] : PD_RUNLOG_NO_VALUE;
				memcpy(buf + sizeof(h) + 8 * k, &v, 8);
			}
			put_record(f, PD_RUNLOG_POWER, buf, sizeof(buf));
			pi++;
			continue;
		}
		const struct syn_inst *in = &s->inst[ii++];
		if (!in->finished)
			continue;
		for (size_t j = 0; j < s->n_jobs; j++) {
			const struct syn_job *sj = &s->jobs[j];
			if (sj->seq != in->seq || task_dag[sj->task] != in->dag)
				continue;
			struct pd_runlog_job_rec rj = {sj->task, 0, sj->seq, sj->release_ns, sj->start_ns, sj->end_ns,
					       sj->cpu_ns, sj->demand_ns ? sj->demand_ns : sj->cpu_ns, sj->cpu,
					       sj->overrun ? PD_RUNLOG_JOB_OVERRUN : 0};
			put_record(f, PD_RUNLOG_JOB, &rj, sizeof(rj));
		}
		struct pd_runlog_instance_rec ri = {in->dag, in->finish_ns - in->release_ns > s->deadline_ns[in->dag], in->seq,
					    in->release_ns, in->finish_ns, in->finish_ns - in->release_ns};
		put_record(f, PD_RUNLOG_INSTANCE, &ri, sizeof(ri));
	}
	/* at the end of the run the agent logs the instances that never finished */
	fflush(f);
	s->unfinished_offset = (size_t)ftell(f);
	for (size_t i = 0; i < s->n_inst; i++)
		if (!s->inst[i].finished) {
			struct pd_runlog_instance_rec ri = {s->inst[i].dag, 1, s->inst[i].seq, s->inst[i].release_ns, -1, -1};
			put_record(f, PD_RUNLOG_INSTANCE, &ri, sizeof(ri));
			/* and, as under the late policy resync, its sink skips it when the run drains: a
			 * JOB record that executed nothing (docs/RUNLOG.md flag 0x4) */
			int64_t at = s->end_ns - PD_NS_PER_MS;
			struct pd_runlog_job_rec sk = {s->inst[i].dag == 0 ? 1u : 2u, 0, s->inst[i].seq, s->inst[i].release_ns, at, at,
					       0, 0, task_cpu[s->inst[i].dag == 0 ? 1 : 2], PD_RUNLOG_JOB_SKIPPED};
			put_record(f, PD_RUNLOG_JOB, &sk, sizeof(sk));
			s->n_skipped++;
		}
	put_record(f, PD_RUNLOG_OPP, &opp[2], sizeof(opp[2]));
	put_record(f, PD_RUNLOG_OPP, &opp[3], sizeof(opp[3]));
	struct pd_runlog_gap_rec gap = {1, 5, s->gap_from_ns, s->gap_to_ns};
	put_record(f, PD_RUNLOG_GAP, &gap, sizeof(gap));
	for (size_t i = 0; i < s->n_steal; i++) {
		struct pd_runlog_steal_rec st = {s->steal[i].from_ns, s->steal[i].t_ns, s->steal[i].steal_ns, s->steal[i].cpu, 0};
		put_record(f, PD_RUNLOG_STEAL, &st, sizeof(st));
	}
	for (size_t i = 0; i < s->n_busy; i++) {
		struct pd_runlog_busy_rec b = {s->busy[i].from_ns, s->busy[i].t_ns, s->busy[i].busy_ns, s->busy[i].cpu, 0};
		put_record(f, PD_RUNLOG_BUSY, &b, sizeof(b));
	}
	for (size_t i = 0; i < s->n_foreign; i++)
		put_record(f, PD_RUNLOG_FOREIGN, &s->foreign[i], sizeof(s->foreign[i]));
	fflush(f);
	s->end_record_offset = (size_t)ftell(f);
	struct pd_runlog_end_rec end = {s->end_ns, 0, 1000, 1000, 5000, 0, 0};
	put_record(f, PD_RUNLOG_END, &end, sizeof(end));
}

static int cmp_inst(const void *a, const void *b)
{
	const struct syn_inst *x = a, *y = b;
	return (x->finish_ns > y->finish_ns) - (x->finish_ns < y->finish_ns);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	pd_test_write(dir, name, text);
}

void syn_write(struct syn_run *s)
{
	s->dir = strdup(pd_test_tmpdir());
	s->end_ns = 3005 * PD_NS_PER_MS;
	pd_rng rng;
	pd_rng_seed(&rng, 42);
	pd_plan *p = make_plan(s);
	gen_power(s, &rng);
	gen_instances(s, &rng);
	qsort(s->inst, s->n_inst, sizeof(s->inst[0]), cmp_inst);
	if (s->pick_steal)
		s->pick_steal(s);
	if (s->pick_busy)
		s->pick_busy(s);
	if (s->pick_foreign)
		s->pick_foreign(s);
	if (s->pick_stretch)
		s->pick_stretch(s);
	char path[4096];
	snprintf(path, sizeof(path), "%s/run.pdlog", s->dir);
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	write_header(f, p, s);
	s->header_bytes = (size_t)ftell(f);
	write_records(f, s);
	s->log_bytes = (size_t)ftell(f);
	fclose(f);
	pd_plan_free(p);
	write_file(s->dir, "deploy.json",
		   "{\"board\": \"ssh://root@twin:2222\", \"kernel\": \"6.18.0-test\", \"arch\": \"x86_64\", "
		   "\"start\": \"2026-12-03T05:00:00Z\", \"end\": \"2026-12-03T05:00:03Z\", \"result\": \"ok\", "
		   "\"interrupted\": false, \"agent_status\": 0, \"restore\": {\"requested\": true, \"done\": true, "
		   "\"state_equal\": true, \"left_changed\": [], \"seconds\": 0.1}}\n");
	write_file(s->dir, "simulate.json",
		   "{\"power_w\": 1.6, \"energy_j\": 4.8, \"duration_s\": 3.0, \"jobs\": 750, \"misses\": 3, \"dags\": "
		   "[{\"name\": \"cam\", \"instances\": 300, \"misses\": 3, \"max_response_ms\": 8.5, "
		   "\"p99_response_ms\": 8.4}, {\"name\": \"ctl\", \"instances\": 150, \"misses\": 0, "
		   "\"max_response_ms\": 9.0, \"p99_response_ms\": 8.9}]}\n");
	write_file(s->dir, "agent.stderr", "powerdag-agent: admitted 3 tasks\npowerdag-agent: running\n");
}

void syn_truncate(const struct syn_run *s, size_t len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/run.pdlog", s->dir);
	ck_assert_int_eq(truncate(path, (off_t)len), 0);
}
