/* SPDX-License-Identifier: MIT */
/*
 * The report's numbers against the raw data of a synthetic run (helper_rundir.h), recomputed here
 * from the definitions of docs/REPORTS.md with code of its own; the JSON, CSV and Perfetto forms;
 * truncated logs; bad run directories.
 */
#include "helper_rundir.h"
#include "pd_test.h"
#include "reports/pd_reports.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(a, b) ck_assert_msg(fabs((a) - (b)) <= 1e-9 * fmax(1.0, fabs(b)), "%.12g != %.12g", (double)(a), (double)(b))

static json_t *report_json(const char *dir)
{
	pd_err e = {0};
	pd_report *r = pd_report_open(dir, &e);
	ck_assert_msg(r != NULL, "%s", e.msg);
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_report_json(r, &b, &e), 0);
	json_error_t je;
	json_t *j = json_loads(b.data, 0, &je);
	ck_assert_msg(j != NULL, "report JSON does not parse: %s", je.text);
	pd_buf_free(&b);
	pd_report_free(r);
	return j;
}

static double jnum(const json_t *o, const char *path)
{
	/* "a.b.c" walk through objects */
	char key[128];
	const char *p = path;
	const json_t *v = o;
	while (*p) {
		size_t n = strcspn(p, ".");
		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		v = json_object_get(v, key);
		ck_assert_msg(v != NULL, "missing %s", path);
		p += n + (p[n] == '.');
	}
	ck_assert_msg(json_is_number(v), "%s is not a number", path);
	return json_number_value(v);
}

/* ---------------------------------------------------------------- independent recomputation */
struct series {
	double t[SYN_MAX_SAMPLES], w[SYN_MAX_SAMPLES];
	size_t n;
};

static void trapezoid(const struct series *s, double *avg, double *peak, double *energy)
{
	double e = 0, pk = s->w[0];
	for (size_t i = 1; i < s->n; i++) {
		e += (s->w[i] + s->w[i - 1]) * 0.5 * (s->t[i] - s->t[i - 1]);
		pk = fmax(pk, s->w[i]);
	}
	*energy = e;
	*peak = pk;
	*avg = e / (s->t[s->n - 1] - s->t[0]);
}

static void rail_series(const struct syn_run *s, int k, struct series *out)
{
	out->n = 0;
	for (size_t i = 0; i < s->n_samples; i++)
		if (s->has[i][k]) {
			out->t[out->n] = (double)s->t_ns[i] * 1e-9;
			out->w[out->n++] = (double)s->uw[i][k] * 1e-6;
		}
}

/* Sum of the rails, each held at its last value (rail 1 is held across its unread stretch). */
static void total_series(const struct syn_run *s, struct series *out)
{
	double last[SYN_RAILS] = {0}; /* every rail has a value in the first row; {0} for the compiler */
	out->n = 0;
	for (size_t i = 0; i < s->n_samples; i++) {
		double sum = 0;
		for (int k = 0; k < SYN_RAILS; k++) {
			if (s->has[i][k])
				last[k] = (double)s->uw[i][k] * 1e-6;
			sum += last[k]; /* every rail has a value in the first row */
		}
		out->t[out->n] = (double)s->t_ns[i] * 1e-9;
		out->w[out->n++] = sum;
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct dag_truth {
	int instances, misses;
	double p50, p99, max, worst_slack;
};

static struct dag_truth dag_truth(const struct syn_run *s, uint32_t g)
{
	double r[SYN_MAX_INST];
	size_t n = 0;
	struct dag_truth t = {0};
	for (size_t i = 0; i < s->n_inst; i++) {
		const struct syn_inst *in = &s->inst[i];
		if (in->dag != g)
			continue;
		t.instances++;
		if (!in->finished) { /* never finished, deadline long past the end: a miss */
			t.misses++;
			continue;
		}
		double resp = (double)(in->finish_ns - in->release_ns) / 1e6;
		r[n++] = resp;
		t.misses += resp * 1e6 > (double)s->deadline_ns[g];
	}
	qsort(r, n, sizeof(double), cmp_d);
	t.p50 = r[(size_t)ceil(0.50 * (double)n) - 1];
	t.p99 = r[(size_t)ceil(0.99 * (double)n) - 1];
	t.max = r[n - 1];
	t.worst_slack = ((double)s->deadline_ns[g] / 1e6 - t.max) / ((double)s->deadline_ns[g] / 1e6);
	return t;
}

/* ---------------------------------------------------------------- tests */
START_TEST(power_numbers_match_raw_samples)
{
	static struct syn_run s;
	syn_write(&s);
	json_t *j = report_json(s.dir);
	const char *names[SYN_RAILS] = {"VDD_CPU", "VDD_SOC", "VDD_GPU"};
	json_t *rs = json_object_get(json_object_get(j, "measured"), "rail_stats");
	ck_assert_int_eq(json_array_size(rs), SYN_RAILS);
	static struct series ser;
	double avg, peak, energy;
	for (int k = 0; k < SYN_RAILS; k++) {
		rail_series(&s, k, &ser);
		trapezoid(&ser, &avg, &peak, &energy);
		json_t *r = json_array_get(rs, (size_t)k);
		ck_assert_str_eq(json_string_value(json_object_get(r, "name")), names[k]);
		NEAR(jnum(r, "avg_w"), avg);
		NEAR(jnum(r, "peak_w"), peak);
		NEAR(jnum(r, "energy_j"), energy);
		ck_assert_int_eq((int)jnum(r, "samples"), (int)ser.n);
		NEAR(jnum(json_object_get(json_object_get(j, "measured"), "rails"), names[k]), avg);
	}
	/* the CPU rail measures island "main": 2 idle cores + (busy - idle) * sum C/T = 0.2 + 0.7 * 0.4 */
	NEAR(jnum(json_array_get(rs, 0), "predicted_w"), 2 * 0.1 + (0.8 - 0.1) * (1.0 / 10 + 3.0 / 10));
	ck_assert(json_is_null(json_object_get(json_array_get(rs, 1), "predicted_w"))); /* "soc": no model */
	/* the GPU rail: idle + (busy - idle) * L/T = 0.5 + 1.5 * 1 ms / 20 ms */
	NEAR(jnum(json_array_get(rs, 2), "predicted_w"), 0.5 + 1.5 * (1.0 / 20));

	total_series(&s, &ser);
	trapezoid(&ser, &avg, &peak, &energy);
	NEAR(jnum(j, "measured.power_w"), avg);
	NEAR(jnum(j, "measured.peak_w"), peak);
	NEAR(jnum(j, "measured.energy_j"), energy);
	NEAR(jnum(j, "predicted.power_w"), 1.5);
	NEAR(jnum(j, "power_error_pct"), (avg - 1.5) / 1.5 * 100);
	NEAR(jnum(j, "sim_power_error_pct"), (avg - 1.6) / 1.6 * 100);
	NEAR(jnum(j, "predicted.misses"), 3.0);
	ck_assert(json_is_true(json_object_get(j, "complete")));
	json_decref(j);
}
END_TEST

START_TEST(deadline_numbers_match_raw_instances)
{
	static struct syn_run s;
	syn_write(&s);
	json_t *j = report_json(s.dir);
	json_t *dags = json_object_get(json_object_get(j, "measured"), "dags");
	ck_assert_int_eq(json_array_size(dags), 2);
	int all_inst = 0, all_miss = 0;
	for (uint32_t g = 0; g < 2; g++) {
		struct dag_truth t = dag_truth(&s, g);
		json_t *d = json_array_get(dags, g);
		ck_assert_int_eq((int)jnum(d, "instances"), t.instances);
		ck_assert_int_eq((int)jnum(d, "misses"), t.misses);
		NEAR(jnum(d, "miss_ratio"), (double)t.misses / t.instances);
		NEAR(jnum(d, "p50_response_ms"), t.p50);
		NEAR(jnum(d, "p99_response_ms"), t.p99);
		NEAR(jnum(d, "max_response_ms"), t.max);
		NEAR(jnum(d, "worst_relative_slack"), t.worst_slack);
		all_inst += t.instances;
		all_miss += t.misses;
	}
	/* the synthetic cam DAG (D = 8 ms, responses 2..9 ms) does miss, ctl (D = 20 ms) never */
	ck_assert_int_gt((int)jnum(json_array_get(dags, 0), "misses"), 1);
	ck_assert_int_eq((int)jnum(json_array_get(dags, 1), "misses"), 0);
	ck_assert_int_eq((int)jnum(j, "measured.instances"), all_inst);
	ck_assert_int_eq((int)jnum(j, "measured.misses"), all_miss);
	ck_assert_int_eq(all_inst, 450);
	ck_assert_int_eq((int)jnum(json_array_get(dags, 0), "unfinished"), 1);
	json_decref(j);
}
END_TEST

static char *text_report(const char *dir);

START_TEST(overruns_and_gaps_match_raw_records)
{
	static struct syn_run s;
	syn_write(&s);
	json_t *j = report_json(s.dir);
	json_t *tasks = json_object_get(json_object_get(j, "measured"), "tasks");
	int total = 0;
	for (uint32_t i = 0; i < 3; i++) {
		int ov = 0, jobs = 0;
		double max_exec = 0;
		for (size_t k = 0; k < s.n_jobs; k++)
			if (s.jobs[k].task == i) {
				ov += s.jobs[k].overrun;
				jobs++;
				/* CPU time for CPU jobs; the GPU's jobs have none: their span counts */
				max_exec = fmax(max_exec, (double)(s.jobs[k].cpu >= 0 ? s.jobs[k].cpu_ns
										 : s.jobs[k].end_ns - s.jobs[k].start_ns) / 1e6);
			}
		json_t *t = json_array_get(tasks, i);
		ck_assert_int_eq((int)jnum(t, "overruns"), ov);
		ck_assert_int_eq((int)jnum(t, "jobs"), jobs);
		NEAR(jnum(t, "max_exec_ms"), max_exec);
		total += ov;
	}
	ck_assert_int_gt(total, 0);
	ck_assert_int_eq((int)jnum(j, "measured.overruns"), total);
	/* the replay (reports/replay.c) ran every executed CPU job of the log through the simulator */
	int cpu_jobs = 0;
	for (size_t k = 0; k < s.n_jobs; k++)
		cpu_jobs += s.jobs[k].cpu >= 0;
	ck_assert_int_eq((int)jnum(j, "predicted.replay.jobs"), cpu_jobs);
	ck_assert_int_gt((int)jnum(j, "predicted.replay.instances"), 0);
	/* skipped jobs (late policy resync) are not executions: left out above, said in a note */
	ck_assert_uint_gt(s.n_skipped, 0);
	char want[128];
	snprintf(want, sizeof(want), "%zu jobs were skipped by the late-instance policy", s.n_skipped);
	bool noted = false;
	json_t *notes = json_object_get(j, "notes");
	for (size_t k = 0; k < json_array_size(notes); k++)
		noted |= strstr(json_string_value(json_array_get(notes, k)), want) != NULL;
	ck_assert_msg(noted, "no note '%s'", want);
	/* gaps: the logged one on VDD_SOC (unreadable), plus the 400..500 ms hole on all three rails
	 * (> 2 x 10 ms, no GAP record: one late tick of the sampler, listed once for all rails);
	 * VDD_SOC's unread stretch is the logged gap, not counted twice */
	size_t before = 0, after = 0;
	while (s.t_ns[before + 1] < 450 * 1000000LL)
		before++;
	after = before + 1;
	double hole_ms = (double)(s.t_ns[after] - s.t_ns[before]) / 1e6;
	double logged_ms = (double)(s.gap_to_ns - s.gap_from_ns) / 1e6;
	ck_assert_int_eq((int)jnum(j, "measured.sampling_gaps.count"), 2);
	NEAR(jnum(j, "measured.sampling_gaps.total_ms"), hole_ms + logged_ms);
	ck_assert_int_eq((int)jnum(j, "measured.sampling_gaps.unreadable.count"), 1);
	NEAR(jnum(j, "measured.sampling_gaps.unreadable.total_ms"), logged_ms);
	ck_assert_int_eq((int)jnum(j, "measured.sampling_gaps.late.count"), 1);
	NEAR(jnum(j, "measured.sampling_gaps.late.total_ms"), hole_ms);
	json_t *list = json_object_get(json_object_get(json_object_get(j, "measured"), "sampling_gaps"), "list");
	ck_assert_uint_eq(json_array_size(list), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(list, 0), "kind")), "unreadable");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(list, 0), "rail")), "VDD_SOC");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(list, 1), "kind")), "late");
	ck_assert(json_is_null(json_object_get(json_array_get(list, 1), "rail")));
	/* the text names it "(every rail)": scripts read the DAG table's row whose first word is "all" */
	char *t = text_report(s.dir);
	ck_assert_msg(strstr(t, "  (every rail)  "), "%s", t);
	for (const char *l = t; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		ck_assert_msg(strncmp(l, "  all rails", 11) != 0, "a line starts with 'all rails':\n%s", t);
	free(t);
	json_decref(j);
}
END_TEST

static size_t count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s missing", path);
	size_t n = 0;
	int c;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

START_TEST(frequencies_read_back_are_checked_against_the_plan)
{
	static struct syn_run s;
	syn_write(&s);
	json_t *j = report_json(s.dir);
	json_t *f = json_object_get(j, "frequencies");
	ck_assert_uint_eq(json_array_size(f), 2);
	json_t *isl = json_array_get(f, 0), *gpu = json_array_get(f, 1);
	ck_assert_str_eq(json_string_value(json_object_get(isl, "name")), "main");
	ck_assert_int_eq((int)jnum(isl, "planned_khz"), 1000000);
	ck_assert_int_eq((int)jnum(isl, "snapshots"), 2);
	ck_assert(json_is_true(json_object_get(isl, "matches")));
	ck_assert_str_eq(json_string_value(json_object_get(gpu, "kind")), "accelerator");
	ck_assert_int_eq((int)jnum(gpu, "planned_khz"), 1000000);
	ck_assert_int_eq((int)jnum(gpu, "min_khz"), 900000);
	ck_assert_int_eq((int)jnum(gpu, "unreadable"), 1);
	ck_assert(json_is_false(json_object_get(gpu, "matches")));
	json_decref(j);
	pd_err e = {0};
	pd_report *r = pd_report_open(s.dir, &e);
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_report_text(r, &b, &e), 0);
	ck_assert_msg(strstr(b.data, "MISMATCH") != NULL, "%s", b.data);
	pd_buf_free(&b);
	pd_report_free(r);
}
END_TEST

static char *text_report(const char *dir)
{
	pd_err e = {0};
	pd_report *r = pd_report_open(dir, &e);
	ck_assert_msg(r != NULL, "%s", e.msg);
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_report_text(r, &b, &e), 0);
	pd_report_free(r);
	return b.data; /* caller frees */
}

START_TEST(deploy_metadata_is_summarised)
{
	static struct syn_run s;
	syn_write(&s);
	char *t = text_report(s.dir);
	ck_assert_msg(strstr(t, "ssh://root@twin:2222") && strstr(t, "restore ok (board state as before)"), "%s", t);
	free(t);
	pd_test_write(s.dir, "deploy.json",
		      "{\"board\": \"local\", \"result\": \"error\", \"error\": \"agent lost\", \"interrupted\": true, "
		      "\"agent_status\": 137, \"restore\": {\"requested\": true, \"done\": false}}\n");
	t = text_report(s.dir);
	ck_assert_msg(strstr(t, "restore FAILED") && strstr(t, "deploy result: error: agent lost") &&
			      strstr(t, "INCOMPLETE RUN: the deployment was interrupted") && strstr(t, "status 137"),
		      "%s", t);
	free(t);
	pd_test_write(s.dir, "deploy.json", "{not json");
	t = text_report(s.dir); /* a broken optional file is a note, not a failure */
	ck_assert_msg(strstr(t, "deploy.json:1:") && strstr(t, "ignored"), "%s", t);
	free(t);
}
END_TEST

START_TEST(csv_tables_hold_every_observation)
{
	static struct syn_run s;
	syn_write(&s);
	pd_err e = {0};
	pd_report *r = pd_report_open(s.dir, &e);
	ck_assert_ptr_nonnull(r);
	char dir[4096], path[4200];
	snprintf(dir, sizeof(dir), "%s/csv", s.dir);
	ck_assert_int_eq(pd_report_write_csv(r, dir, &e), 0);
	size_t values = 0;
	for (size_t i = 0; i < s.n_samples; i++)
		for (int k = 0; k < SYN_RAILS; k++)
			values += s.has[i][k];
	snprintf(path, sizeof(path), "%s/power.csv", dir);
	ck_assert_uint_eq(count_lines(path), 1 + values);
	snprintf(path, sizeof(path), "%s/instances.csv", dir);
	ck_assert_uint_eq(count_lines(path), 1 + s.n_inst); /* the unfinished one included */
	snprintf(path, sizeof(path), "%s/tasks.csv", dir);
	ck_assert_uint_eq(count_lines(path), 1 + 3);
	snprintf(path, sizeof(path), "%s/jobs.csv", dir);
	ck_assert_uint_eq(count_lines(path), 1 + s.n_jobs);
	/* the sum of power.csv's VDD_CPU column equals the raw microwatts */
	snprintf(path, sizeof(path), "%s/power.csv", dir);
	FILE *f = fopen(path, "r");
	char line[256];
	double sum = 0, want = 0;
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	ck_assert_str_eq(line, "t_ns,rail,power_w\n");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, ",VDD_CPU,"))
			sum += strtod(strrchr(line, ',') + 1, NULL);
	fclose(f);
	for (size_t i = 0; i < s.n_samples; i++)
		want += (double)s.uw[i][0] / 1e6;
	NEAR(sum, want);
	pd_report_free(r);
}
END_TEST

START_TEST(perfetto_trace_has_slices_async_and_counters)
{
	static struct syn_run s;
	syn_write(&s);
	pd_err e = {0};
	pd_report *r = pd_report_open(s.dir, &e);
	ck_assert_ptr_nonnull(r);
	char path[4096];
	snprintf(path, sizeof(path), "%s/trace.json", s.dir);
	ck_assert_int_eq(pd_report_write_perfetto(r, path, &e), 0);
	json_error_t je;
	json_t *t = json_load_file(path, 0, &je);
	ck_assert_msg(t != NULL, "%s", je.text);
	json_t *ev = json_object_get(t, "traceEvents");
	size_t x = 0, b = 0, en = 0, c = 0;
	for (size_t i = 0; i < json_array_size(ev); i++) {
		const char *ph = json_string_value(json_object_get(json_array_get(ev, i), "ph"));
		x += strcmp(ph, "X") == 0;
		b += strcmp(ph, "b") == 0;
		en += strcmp(ph, "e") == 0;
		c += strcmp(ph, "C") == 0;
	}
	size_t values = 0;
	for (size_t i = 0; i < s.n_samples; i++)
		for (int k = 0; k < SYN_RAILS; k++)
			values += s.has[i][k];
	ck_assert_uint_eq(x, s.n_jobs);
	ck_assert_uint_eq(b, s.n_inst);
	ck_assert_uint_eq(en, s.n_inst);
	ck_assert_uint_eq(c, values);
	/* every job slice sits on its CPU's track at its start time (microseconds), with its length */
	for (size_t i = 0; i < json_array_size(ev); i++) {
		json_t *o = json_array_get(ev, i);
		if (strcmp(json_string_value(json_object_get(o, "ph")), "X") != 0)
			continue;
		double ts = json_number_value(json_object_get(o, "ts")), dur = json_number_value(json_object_get(o, "dur"));
		json_int_t pid = json_integer_value(json_object_get(o, "pid")), tid = json_integer_value(json_object_get(o, "tid"));
		bool found = false;
		for (size_t k = 0; k < s.n_jobs && !found; k++) {
			/* CPU jobs on process 1, thread = CPU; GPU jobs on process 2, thread = accelerator 0 + 1 */
			bool track = s.jobs[k].cpu >= 0 ? pid == 1 && tid == s.jobs[k].cpu : pid == 2 && tid == 1;
			found = track && fabs((double)s.jobs[k].start_ns / 1e3 - ts) < 1e-6 &&
				fabs((double)(s.jobs[k].end_ns - s.jobs[k].start_ns) / 1e3 - dur) < 1e-6;
		}
		ck_assert_msg(found, "slice at %.3f us matches no job", ts);
	}
	json_decref(t);
	pd_report_free(r);
}
END_TEST

START_TEST(truncated_log_gives_incomplete_report)
{
	static struct syn_run s;
	syn_write(&s);
	/* a torn END record: kill -9 while writing it */
	syn_truncate(&s, s.end_record_offset + 7);
	json_t *j = report_json(s.dir);
	ck_assert(json_is_false(json_object_get(j, "complete")));
	ck_assert(strstr(json_string_value(json_object_get(j, "incomplete_reason")), "END") != NULL);
	/* everything before the tear is still there */
	ck_assert_int_eq((int)jnum(j, "measured.instances"), 450);
	ck_assert_int_eq((int)jnum(json_array_get(json_object_get(json_object_get(j, "measured"), "dags"), 0), "unfinished"), 1);
	json_decref(j);

	/* killed before the agent logged its unfinished instances: cam #20 (deadline 208 ms, long before
	 * the last logged finish minus the writer's 1 s flush bound) is inferred as never finished */
	syn_truncate(&s, s.unfinished_offset);
	j = report_json(s.dir);
	ck_assert(json_is_false(json_object_get(j, "complete")));
	ck_assert_int_eq((int)jnum(j, "measured.instances"), 450);
	ck_assert_int_eq((int)jnum(json_array_get(json_object_get(json_object_get(j, "measured"), "dags"), 0), "unfinished"), 1);
	json_decref(j);

	/* half a log: fewer instances, no unfinished-miss invented past the executor's last record */
	syn_truncate(&s, s.end_record_offset / 2);
	pd_err e = {0};
	pd_report *r = pd_report_open(s.dir, &e);
	ck_assert_msg(r != NULL, "%s", e.msg);
	const char *why = NULL;
	ck_assert(pd_report_incomplete(r, &why));
	ck_assert_ptr_nonnull(why);
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_report_text(r, &b, &e), 0);
	ck_assert_msg(strstr(b.data, "INCOMPLETE RUN") != NULL, "%s", b.data);
	ck_assert_msg(strstr(b.data, "agent.stderr ends with") != NULL, "%s", b.data);
	pd_buf_free(&b);
	j = report_json(s.dir);
	int inst = (int)jnum(j, "measured.instances");
	ck_assert_int_gt(inst, 100);
	ck_assert_int_lt(inst, 450);
	ck_assert_int_eq((int)jnum(json_array_get(json_object_get(json_object_get(j, "measured"), "dags"), 0), "unfinished"), 1);
	json_decref(j);
	pd_report_free(r);

	/* only the header line left (killed before the first flush): an empty report, incomplete */
	syn_truncate(&s, s.header_bytes);
	j = report_json(s.dir);
	ck_assert(json_is_false(json_object_get(j, "complete")));
	ck_assert_int_eq((int)jnum(j, "measured.instances"), 0);
	json_decref(j);

	/* a header cut in half is not a run log: nothing to report on */
	syn_truncate(&s, s.header_bytes / 2);
	r = pd_report_open(s.dir, &e);
	ck_assert_ptr_null(r);
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
}
END_TEST

START_TEST(bad_run_directories_are_usage_errors)
{
	pd_err e = {0};
	ck_assert_ptr_null(pd_report_open("/nonexistent/run", &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	ck_assert(strstr(e.msg, "no such run directory") != NULL);

	const char *dir = pd_test_tmpdir();
	e.code = 0;
	ck_assert_ptr_null(pd_report_open(dir, &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	ck_assert_msg(strstr(e.msg, "plan.yaml") != NULL, "%s", e.msg);

	pd_test_write(dir, "plan.yaml", "plan:\n  bogus: [\n");
	e.code = 0;
	ck_assert_ptr_null(pd_report_open(dir, &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	ck_assert_msg(strstr(e.msg, "plan.yaml") != NULL, "%s", e.msg);

	/* a log of another plan is refused, not misattributed */
	static struct syn_run s;
	syn_write(&s);
	char path[4096];
	snprintf(path, sizeof(path), "%s/run.pdlog", s.dir);
	pd_test_write(s.dir, "run.pdlog",
		      "{\"format\":\"powerdag-runlog\",\"version\":1,\"plan_hash\":\"0\",\"tasks\":[{\"name\":\"x\","
		      "\"dag\":\"other\"}],\"dags\":[{\"name\":\"other\",\"period_ns\":1000000,\"deadline_ns\":1000000}],"
		      "\"rails\":[]}\n");
	e.code = 0;
	ck_assert_ptr_null(pd_report_open(s.dir, &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	ck_assert_msg(strstr(e.msg, "not of this plan") != NULL, "%s", e.msg);
}
END_TEST

/* A cam instance (DAG 0) from seq 25 on, late or in time, at least 3 periods away from those in avoid. */
static const struct syn_inst *pick_cam(const struct syn_run *s, bool late, const struct syn_inst *const *avoid, size_t n)
{
	for (size_t i = 0; i < s->n_inst; i++) {
		const struct syn_inst *in = &s->inst[i];
		if (in->dag != 0 || in->seq < 25 || !in->finished || (in->finish_ns - in->release_ns > s->deadline_ns[0]) != late)
			continue;
		bool far = true;
		for (size_t k = 0; k < n; k++)
			far &= in->seq + 3 <= avoid[k]->seq || avoid[k]->seq + 3 <= in->seq;
		if (far)
			return in;
	}
	ck_abort_msg("the synthetic run has no such cam instance");
	return NULL;
}

/* Steal records of 1..4 ms intervals, each meeting the window [release, release + 8 ms] of exactly one
 * cam instance (period 10 ms): A on cpu0 during the late instance m1, B on cpu1 (no task of the plan
 * there) during the late m2, C on cpu0 during the in-time n0, D on cpu0 during cam #20, which never
 * finished ([200, 208] ms). */
static void pick_steal(struct syn_run *s)
{
	const struct syn_inst *m1 = pick_cam(s, true, NULL, 0);
	const struct syn_inst *m2 = pick_cam(s, true, &m1, 1);
	const struct syn_inst *used[2] = {m1, m2};
	const struct syn_inst *n0 = pick_cam(s, false, used, 2);
	const int64_t ms = PD_NS_PER_MS;
	s->steal_sampled = true;
	s->n_steal = 4;
	s->steal[0] = (struct syn_steal){0, m1->release_ns + 1 * ms, m1->release_ns + 5 * ms, 3 * ms};
	s->steal[1] = (struct syn_steal){1, m2->release_ns + 1 * ms, m2->release_ns + 5 * ms, 7 * ms};
	s->steal[2] = (struct syn_steal){0, n0->release_ns + 1 * ms, n0->release_ns + 5 * ms, 10 * ms};
	s->steal[3] = (struct syn_steal){0, 201 * ms, 203 * ms, 10 * ms};
}

/* docs/REPORTS.md "Host steal": the total on the plan's CPUs, and the misses whose window meets a
 * steal interval on a CPU of their DAG; null (not 0) for a log without STEAL sampling. */
START_TEST(steal_is_summed_and_matched_to_misses)
{
	static struct syn_run old, s;
	syn_write(&old); /* an agent from before the STEAL record */
	json_t *j = report_json(old.dir);
	json_t *m = json_object_get(j, "measured");
	ck_assert(json_is_null(json_object_get(m, "host_steal_ms")));
	ck_assert(json_is_null(json_object_get(m, "misses_with_steal")));
	json_decref(j);
	char *t = text_report(old.dir);
	ck_assert_msg(strstr(t, "host steal: not sampled"), "%s", t);
	free(t);

	s.pick_steal = pick_steal;
	syn_write(&s);
	struct dag_truth cam = dag_truth(&s, 0);
	ck_assert_int_ge(cam.misses, 4); /* m1, m2, #20 and at least one more, far from any steal */
	j = report_json(s.dir);
	/* cpu0 only (3 + 10 + 10 ms): cpu1's 7 ms are outside the plan */
	NEAR(jnum(j, "measured.host_steal_ms"), 23.0);
	/* m1 and #20; not m2 (its steal is on cpu1), not n0 (in time), no other miss */
	ck_assert_int_eq((int)jnum(j, "measured.misses_with_steal"), 2);
	ck_assert_int_eq((int)jnum(j, "measured.misses"), cam.misses);
	json_decref(j);
	t = text_report(s.dir);
	char want[128];
	snprintf(want, sizeof(want), "host steal: 23.0 ms of CPU time; 2 of %d misses overlap it\n", cam.misses);
	ck_assert_msg(strstr(t, want), "no '%s' in\n%s", want, t);
	free(t);
}
END_TEST

/* Other SCHED_DEADLINE threads (FOREIGN records, 0.5-ms scans): thread 501 on cpu0 seen at two scans
 * inside the window [release, release + 8 ms] of the late m1 (one entry, first and last scan), 502 on
 * cpu1 (no task of the plan) during the late m2, 503 on cpu0 during the in-time n0; 504 on cpu0 seen
 * 1 ms after the window of the late m3 closed (and 1 ms before the next one opened): one scan period
 * each side does not reach either. */
static void pick_foreign(struct syn_run *s)
{
	const struct syn_inst *m1 = pick_cam(s, true, NULL, 0);
	const struct syn_inst *m2 = pick_cam(s, true, &m1, 1);
	const struct syn_inst *used[2] = {m1, m2};
	const struct syn_inst *n0 = pick_cam(s, false, used, 2);
	const struct syn_inst *used3[3] = {m1, m2, n0};
	const struct syn_inst *m3 = pick_cam(s, true, used3, 3);
	const int64_t ms = PD_NS_PER_MS;
	s->foreign_period_ns = ms / 2;
	s->n_foreign = 5;
	struct pd_runlog_foreign_rec base = {.runtime_ns = 2 * ms, .deadline_ns = 5 * ms, .period_ns = 5 * ms};
	for (size_t i = 0; i < 5; i++)
		s->foreign[i] = base;
	s->foreign[0].tid = s->foreign[1].tid = 501;
	s->foreign[0].from_ns = s->foreign[0].t_ns = s->foreign[1].from_ns = m1->release_ns + 2 * ms;
	s->foreign[1].t_ns = m1->release_ns + 3 * ms;
	memcpy(s->foreign[0].comm, "rival,app", 9); /* a comma: CSV must not split it */
	memcpy(s->foreign[1].comm, "rival,app", 9);
	s->foreign[2].tid = 502;
	s->foreign[2].cpu = 1;
	s->foreign[2].from_ns = s->foreign[2].t_ns = m2->release_ns + 2 * ms;
	s->foreign[3].tid = 503;
	s->foreign[3].from_ns = s->foreign[3].t_ns = n0->release_ns + 2 * ms;
	s->foreign[4].tid = 504;
	s->foreign[4].from_ns = s->foreign[4].t_ns = m3->release_ns + 9 * ms;
}

/* docs/REPORTS.md "Other SCHED_DEADLINE threads": one entry per thread, the misses that meet the time
 * it may have been on a CPU of their DAG; null for a log of an agent that did not scan. */
START_TEST(foreign_threads_are_listed_and_matched_to_misses)
{
	static struct syn_run old, s;
	syn_write(&old);
	json_t *j = report_json(old.dir);
	ck_assert(json_is_null(json_object_get(json_object_get(j, "measured"), "foreign_dl")));
	json_decref(j);
	char *t = text_report(old.dir);
	ck_assert_msg(strstr(t, "other SCHED_DEADLINE threads: not scanned"), "%s", t);
	free(t);

	s.pick_foreign = pick_foreign;
	syn_write(&s);
	struct dag_truth cam = dag_truth(&s, 0);
	j = report_json(s.dir);
	json_t *fd = json_object_get(json_object_get(j, "measured"), "foreign_dl");
	ck_assert_int_eq((int)json_array_size(json_object_get(fd, "threads")), 4);
	json_t *t0 = json_array_get(json_object_get(fd, "threads"), 0);
	ck_assert_int_eq((int)json_integer_value(json_object_get(t0, "tid")), 501);
	ck_assert_str_eq(json_string_value(json_object_get(t0, "comm")), "rival,app");
	NEAR(json_number_value(json_object_get(t0, "last_seen_s")) - json_number_value(json_object_get(t0, "first_seen_s")),
	     0.001);
	NEAR(json_number_value(json_object_get(t0, "runtime_ms")), 2.0);
	/* m1 only: not m2 (cpu1), not n0 (in time), not m3 (1 ms after its window, beyond one scan) */
	ck_assert_int_eq((int)json_integer_value(json_object_get(fd, "misses_overlapping")), 1);
	json_decref(j);
	t = text_report(s.dir);
	char want[160];
	snprintf(want, sizeof(want), "other SCHED_DEADLINE threads on the plan's CPUs: 4 (outside the plan's analysis); 1 of %d misses overlap them\n",
		 cam.misses);
	ck_assert_msg(strstr(t, want), "no '%s' in\n%s", want, t);
	ck_assert_msg(strstr(t, "thread 501 'rival,app' on CPU 0: 2.000 ms every 5.000 ms"), "%s", t);
	free(t);
}
END_TEST

/* (from, to] meets [a, b], as the report matches intervals with miss windows. */
static bool meets(int64_t from, int64_t to, int64_t a, int64_t b)
{
	return from < b && to >= a;
}

/* The causes outside the plan together (docs/REPORTS.md "Misses outside the plan"): recomputed from
 * the records written, each cause on cpu0 (the cam DAG's CPU; cpu1 holds no task of the plan)
 * extended by cam's deadline, the time the late-instance policy may take to recover. m1 meets both a
 * steal interval and another reservation and counts once; the instance after #20 (never finished,
 * steal during it) is owned by that steal too when it missed. */
START_TEST(misses_outside_the_plan_are_counted_once)
{
	static struct syn_run s;
	s.pick_steal = pick_steal;
	s.pick_foreign = pick_foreign;
	syn_write(&s);
	struct dag_truth cam = dag_truth(&s, 0);
	const int64_t d = s.deadline_ns[0], p = s.foreign_period_ns;
	int want = 0, both = 0;
	for (size_t i = 0; i < s.n_inst; i++) {
		const struct syn_inst *in = &s.inst[i];
		if (in->dag != 0 || (in->finished && in->finish_ns - in->release_ns <= d))
			continue;
		int64_t a = in->release_ns, b = in->release_ns + d;
		bool st = false, fo = false;
		for (size_t k = 0; k < s.n_steal; k++)
			st |= s.steal[k].cpu == 0 && meets(s.steal[k].from_ns, s.steal[k].t_ns + d, a, b);
		for (size_t k = 0; k < s.n_foreign; k++)
			fo |= s.foreign[k].cpu == 0 && meets(s.foreign[k].from_ns - p, s.foreign[k].t_ns + p + d, a, b);
		want += st || fo;
		both += st && fo;
	}
	ck_assert_int_ge(want, 2);
	ck_assert_int_ge(both, 1); /* m1: a sum would count it twice */
	json_t *j = report_json(s.dir);
	ck_assert_int_eq((int)jnum(j, "measured.cpu_stalls.misses_overlapping"), 0); /* the synthetic jobs never wait */
	ck_assert_int_eq((int)jnum(j, "measured.misses_outside_plan"), want);
	json_decref(j);
	char *t = text_report(s.dir);
	char line[200];
	snprintf(line, sizeof(line), "-> %d of %d misses meet a cause outside the plan (a CPU stall, a stretched job, "
		 "stolen time, another reservation) or follow one within a deadline; %d meet none\n", want, cam.misses,
		 cam.misses - want);
	ck_assert_msg(strstr(t, line), "no '%s' in\n%s", line, t);
	free(t);
	static struct syn_run none;
	syn_write(&none);
	j = report_json(none.dir);
	ck_assert_int_eq((int)jnum(j, "measured.misses_outside_plan"), 0);
	json_decref(j);
}
END_TEST

/* Stretched spin jobs: every seventh CPU job charged twice its work (counted when that is 1 ms or
 * more), every seventh from the fourth 0.9 ms over its work (under RPT_STRETCH_MIN_NS, however large
 * a fraction), the other jobs of more than 5 ms running all along, 1 ms over their work (under
 * RPT_STRETCH_MIN_FRAC); the GPU's jobs (no CPU time) told a tiny demand, which must not count. */
static void pick_stretch(struct syn_run *s)
{
	const int64_t ms = PD_NS_PER_MS;
	for (size_t i = 0; i < s->n_jobs; i++) {
		struct syn_job *j = &s->jobs[i];
		if (j->cpu < 0)
			j->demand_ns = 1000;
		else if (i % 7 == 0)
			j->demand_ns = j->cpu_ns / 2;
		else if (i % 7 == 3 && j->cpu_ns > ms)
			j->demand_ns = j->cpu_ns - 9 * ms / 10;
		else if (j->end_ns - j->start_ns > 5 * ms) {
			j->cpu_ns = j->end_ns - j->start_ns;
			j->demand_ns = j->cpu_ns - ms;
		}
	}
}

/* docs/REPORTS.md "Stretched jobs": recomputed from the records written (the cam DAG's spin jobs, all
 * on cpu0), with each threshold turning some job away; the misses that meet one, and the stretched
 * jobs among the causes outside the plan (extended by cam's deadline like the others). */
START_TEST(stretched_spin_jobs_are_causes_outside_the_plan)
{
	static struct syn_run s;
	s.pick_stretch = pick_stretch;
	syn_write(&s);
	struct dag_truth cam = dag_truth(&s, 0);
	const int64_t d = s.deadline_ns[0];
	int jobs = 0, small = 0, slight = 0;
	double excess = 0, largest = 0;
	for (size_t i = 0; i < s.n_jobs; i++) {
		const struct syn_job *j = &s.jobs[i];
		int64_t x = j->cpu_ns - (j->demand_ns ? j->demand_ns : j->cpu_ns);
		if (j->cpu < 0 || x <= 0)
			continue;
		bool big = x >= PD_NS_PER_MS, frac = (double)x >= 0.25 * (double)j->demand_ns;
		small += frac && !big;
		slight += big && !frac;
		if (big && frac) {
			jobs++;
			excess += (double)x / 1e6;
			largest = fmax(largest, (double)x / 1e6);
		}
	}
	ck_assert_int_ge(jobs, 3);
	ck_assert_int_ge(small, 1);
	ck_assert_int_ge(slight, 1);
	int meet = 0, outside = 0;
	for (size_t i = 0; i < s.n_inst; i++) {
		const struct syn_inst *in = &s.inst[i];
		if (in->dag != 0 || (in->finished && in->finish_ns - in->release_ns <= d))
			continue;
		int64_t a = in->release_ns, b = in->release_ns + d;
		bool m = false, o = false;
		for (size_t k = 0; k < s.n_jobs; k++) {
			const struct syn_job *j = &s.jobs[k];
			int64_t x = j->cpu_ns - (j->demand_ns ? j->demand_ns : j->cpu_ns);
			if (j->cpu < 0 || x < PD_NS_PER_MS || (double)x < 0.25 * (double)j->demand_ns)
				continue;
			m |= meets(j->start_ns, j->end_ns, a, b);
			o |= meets(j->start_ns, j->end_ns + d, a, b);
		}
		meet += m;
		outside += o;
	}
	ck_assert_int_ge(meet, 1);
	json_t *j = report_json(s.dir);
	ck_assert_int_eq((int)jnum(j, "measured.stretched_jobs.jobs"), jobs);
	NEAR(jnum(j, "measured.stretched_jobs.excess_ms"), excess);
	NEAR(jnum(j, "measured.stretched_jobs.max_excess_ms"), largest);
	ck_assert_int_eq((int)jnum(j, "measured.stretched_jobs.misses_overlapping"), meet);
	ck_assert_int_eq((int)jnum(j, "measured.misses_outside_plan"), outside);
	json_decref(j);
	char *t = text_report(s.dir);
	char want[300];
	snprintf(want, sizeof(want), "stretched jobs: %d jobs charged at least 1 ms and 25 %% more CPU time than their "
		 "work (%.1f ms over in all, the largest %.1f ms", jobs, excess, largest);
	ck_assert_msg(strstr(t, want), "no '%s' in\n%s", want, t);
	snprintf(want, sizeof(want), "%d of %d misses overlap them\n", meet, cam.misses);
	ck_assert_msg(strstr(strstr(t, "stretched jobs:"), want), "no '%s' in\n%s", want, t);
	free(t);
	static struct syn_run none; /* every job took exactly its work */
	syn_write(&none);
	j = report_json(none.dir);
	ck_assert_int_eq((int)jnum(j, "measured.stretched_jobs.jobs"), 0);
	ck_assert_int_eq((int)jnum(j, "measured.misses_outside_plan"), 0);
	json_decref(j);
	t = text_report(none.dir);
	ck_assert_msg(!strstr(t, "stretched jobs:"), "%s", t);
	free(t);
}
END_TEST

/* ---------------------------------------------------------------- busy time of the CPUs */
#define BUSY_ALL 0.8                             /* cores' worth on cpu0, the one plan CPU of island main */
#define BUSY_RAIL_UW 760000                      /* VDD_CPU: the model of main at BUSY_ALL: 2 x 100 mW + 700 mW x 0.8 */

/* BUSY records: cpu0 busy BUSY_ALL of every 100-ms interval from 0 to the END (3005 ms), written only
 * where the counter moved, like the agent (an idle CPU writes nothing: 1500..1600 ms is idle and the
 * next record makes up for it at twice the rate); cpu1 (island main, no task of the plan) and cpu7 (on
 * no island) busy too, which the report must leave out. VDD_CPU reads the model of main at BUSY_ALL. */
static void pick_busy(struct syn_run *s)
{
	const int64_t ms = PD_NS_PER_MS;
	s->busy_sampled = true;
	s->n_busy = 0;
	for (int64_t t = 0; t < 3000 * ms; t += 100 * ms) {
		if (t == 1500 * ms)
			continue;
		int64_t from = t == 1600 * ms ? 1500 * ms : t;
		s->busy[s->n_busy++] = (struct syn_busy){0, from, t + 100 * ms, (int64_t)(BUSY_ALL * (double)(t + 100 * ms - from))};
	}
	s->busy[s->n_busy++] = (struct syn_busy){0, 3000 * ms, 3005 * ms, (int64_t)(BUSY_ALL * 5 * ms)};
	s->busy[s->n_busy++] = (struct syn_busy){1, 0, 3000 * ms, 2000 * ms};
	s->busy[s->n_busy++] = (struct syn_busy){7, 0, 3000 * ms, 3000 * ms};
	for (size_t i = 0; i < s->n_samples; i++)
		s->uw[i][0] = BUSY_RAIL_UW;
}

/* The jobs' busy fraction of island main over VDD_CPU's span, recomputed from the raw jobs: CPU time
 * prorated by the part of [start, end] inside the window (docs/REPORTS.md). */
static double jobs_busy(const struct syn_run *s)
{
	double from = (double)s->t_ns[0], to = (double)s->t_ns[s->n_samples - 1], busy = 0;
	for (size_t i = 0; i < s->n_jobs; i++) {
		const struct syn_job *j = &s->jobs[i];
		if (j->cpu < 0 || j->cpu_ns <= 0 || j->end_ns <= j->start_ns)
			continue;
		double lo = fmax((double)j->start_ns, from), hi = fmin((double)j->end_ns, to);
		if (hi > lo)
			busy += (double)j->cpu_ns * (hi - lo) / (double)(j->end_ns - j->start_ns);
	}
	return busy / (to - from);
}

static const json_t *rail_json(const json_t *j, const char *name)
{
	const json_t *rs = json_object_get(json_object_get(j, "measured"), "rail_stats");
	for (size_t i = 0; i < json_array_size(rs); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(rs, i), "name")), name) == 0)
			return json_array_get(rs, i);
	ck_abort_msg("no rail %s", name);
	return NULL;
}

/* docs/REPORTS.md "Model error at the measured utilisation": with BUSY records the island's model term
 * is at everything's busy fraction on its plan CPUs; a rail that reads the model there has no error,
 * where the jobs' figure would blame the table. */
START_TEST(busy_all_explains_the_rail)
{
	static struct syn_run s;
	s.pick_busy = pick_busy;
	syn_write(&s);
	double u = jobs_busy(&s), rail_w = BUSY_RAIL_UW * 1e-6;
	double model_jobs = 0.2 + 0.7 * u, model_all = 0.2 + 0.7 * BUSY_ALL;
	ck_assert_msg((rail_w - model_jobs) / model_jobs > 0.2, "the jobs alone must not explain the rail: u %g", u);
	json_t *j = report_json(s.dir);
	const json_t *r = rail_json(j, "VDD_CPU");
	NEAR(jnum(r, "measured_busy"), u);
	NEAR(jnum(r, "measured_busy_all"), BUSY_ALL);
	NEAR(jnum(r, "other_busy"), BUSY_ALL - u);
	ck_assert_int_eq((int)jnum(r, "busy_cpus"), 1);
	ck_assert_str_eq(json_string_value(json_object_get(r, "model_busy")), "all");
	NEAR(jnum(r, "avg_w"), rail_w);
	NEAR(jnum(r, "model_at_measured_w"), model_all);
	ck_assert_msg(fabs(jnum(r, "model_error_pct")) < 1e-6, "err %g", jnum(r, "model_error_pct"));
	/* the platform has no background_util for the island: the plan includes none of the other software */
	NEAR(jnum(r, "plan_background"), 0.0);
	/* the GPU has no CPU time: no busy all, its model at the jobs as before */
	const json_t *g = rail_json(j, "VDD_GPU");
	ck_assert(json_is_null(json_object_get(g, "measured_busy_all")));
	ck_assert(json_is_null(json_object_get(g, "other_busy")));
	ck_assert(json_is_null(json_object_get(g, "busy_cpus")));
	ck_assert(json_is_null(json_object_get(g, "plan_background"))); /* no island */
	ck_assert_str_eq(json_string_value(json_object_get(g, "model_busy")), "jobs");
	json_decref(j);
	char *t = text_report(s.dir);
	char want[256];
	snprintf(want, sizeof(want), "kept main busy %.1f %% of the time\n     (its 1 sampled CPU: %.4f cores' worth beyond the jobs); "
				     "the plan does not include it\n", (BUSY_ALL - u) * 100, BUSY_ALL - u);
	ck_assert_msg(strstr(t, want), "no '%s' in\n%s", want, t);
	ck_assert_msg(strstr(t, "model@meas is at busy all where known"), "%s", t);
	snprintf(want, sizeof(want), "  VDD_CPU                 0.4000  %9.4f     0.8000  %+9.4f       0.760   0.480", u, BUSY_ALL - u);
	ck_assert_msg(strstr(t, want), "no '%s' in\n%s", want, t);
	free(t);
	/* the HTML: the busy table and the sentence */
	pd_err e = {0};
	pd_report *rep = pd_report_open(s.dir, &e);
	ck_assert_msg(rep, "%s", e.msg);
	char path[4200];
	snprintf(path, sizeof(path), "%s/r.html", s.dir);
	ck_assert_msg(pd_report_write_html(rep, path, &e) == 0, "%s", e.msg);
	pd_report_free(rep);
	size_t len = 0;
	ck_assert_int_eq(pd_read_file(path, &t, &len, 1 << 24, NULL), 0);
	snprintf(want, sizeof(want), "<td>0.8000</td><td>%+.4f</td><td>all</td>", BUSY_ALL - u);
	ck_assert_msg(strstr(t, "<table id='busy'>") && strstr(t, want), "no '%s' in the HTML", want);
	snprintf(want, sizeof(want), "kept main busy %.1f %% of the time (rail VDD_CPU, 1 sampled CPU)", (BUSY_ALL - u) * 100);
	ck_assert_msg(strstr(t, want), "no '%s' in the HTML", want);
	free(t);
}
END_TEST

/* The header lists the CPUs the agent sampled (busy_cpus): cpu1 of island main, where the plan places
 * nothing (the agent's threads, iiod, sshd may run there: the rail sees them), counts; cpu7 (on no
 * island) does not, listed or not. */
START_TEST(busy_all_counts_every_sampled_cpu_of_the_island)
{
	static struct syn_run s;
	s.pick_busy = pick_busy;
	s.busy_cpus[0] = 0, s.busy_cpus[1] = 1, s.busy_cpus[2] = 7;
	s.n_busy_cpus = 3;
	syn_write(&s);
	double from = (double)s.t_ns[0], to = (double)s.t_ns[s.n_samples - 1];
	/* cpu1's one record: 2000 ms busy within (0, 3000 ms], prorated to the rail's window */
	double lo = fmax(0, from), hi = fmin(3000.0 * PD_NS_PER_MS, to);
	double cpu1 = 2000.0 * PD_NS_PER_MS * (hi - lo) / (3000.0 * PD_NS_PER_MS) / (to - from);
	json_t *j = report_json(s.dir);
	const json_t *r = rail_json(j, "VDD_CPU");
	NEAR(jnum(r, "measured_busy_all"), BUSY_ALL + cpu1);
	ck_assert_int_eq((int)jnum(r, "busy_cpus"), 2);
	json_decref(j);
}
END_TEST

/* A log without BUSY records (an agent from before them) reports as before: the model at the jobs' busy
 * fraction, busy all and other unknown (null, never 0), no sentence about other software. */
START_TEST(no_busy_records_report_as_before)
{
	static struct syn_run s;
	syn_write(&s);
	json_t *j = report_json(s.dir);
	const json_t *r = rail_json(j, "VDD_CPU");
	double u = jobs_busy(&s);
	NEAR(jnum(r, "measured_busy"), u);
	NEAR(jnum(r, "model_at_measured_w"), 0.2 + 0.7 * u);
	ck_assert(json_is_null(json_object_get(r, "measured_busy_all")));
	ck_assert(json_is_null(json_object_get(r, "other_busy")));
	ck_assert(json_is_null(json_object_get(r, "busy_cpus")));
	ck_assert_str_eq(json_string_value(json_object_get(r, "model_busy")), "jobs");
	json_decref(j);
	char *t = text_report(s.dir);
	ck_assert_msg(strstr(t, "model@meas is at busy meas, the plan's jobs alone"), "%s", t);
	ck_assert_msg(!strstr(t, "other software (agent sampler"), "%s", t);
	free(t);
}
END_TEST

START_TEST(missing_log_is_an_incomplete_report)
{
	static struct syn_run s;
	syn_write(&s);
	syn_truncate(&s, 0);
	char path[4096];
	snprintf(path, sizeof(path), "%s/run.pdlog", s.dir);
	ck_assert_int_eq(remove(path), 0);
	json_t *j = report_json(s.dir);
	ck_assert(json_is_false(json_object_get(j, "complete")));
	ck_assert_int_eq((int)jnum(j, "measured.instances"), 0);
	ck_assert(json_is_null(json_object_get(json_object_get(j, "measured"), "power_w")));
	json_decref(j);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("reports");
	TCase *tc = tcase_create("report");
	tcase_add_test(tc, power_numbers_match_raw_samples);
	tcase_add_test(tc, deadline_numbers_match_raw_instances);
	tcase_add_test(tc, overruns_and_gaps_match_raw_records);
	tcase_add_test(tc, frequencies_read_back_are_checked_against_the_plan);
	tcase_add_test(tc, deploy_metadata_is_summarised);
	tcase_add_test(tc, csv_tables_hold_every_observation);
	tcase_add_test(tc, perfetto_trace_has_slices_async_and_counters);
	tcase_add_test(tc, truncated_log_gives_incomplete_report);
	tcase_add_test(tc, bad_run_directories_are_usage_errors);
	tcase_add_test(tc, missing_log_is_an_incomplete_report);
	tcase_add_test(tc, steal_is_summed_and_matched_to_misses);
	tcase_add_test(tc, foreign_threads_are_listed_and_matched_to_misses);
	tcase_add_test(tc, misses_outside_the_plan_are_counted_once);
	tcase_add_test(tc, stretched_spin_jobs_are_causes_outside_the_plan);
	tcase_add_test(tc, busy_all_explains_the_rail);
	tcase_add_test(tc, busy_all_counts_every_sampled_cpu_of_the_island);
	tcase_add_test(tc, no_busy_records_report_as_before);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
