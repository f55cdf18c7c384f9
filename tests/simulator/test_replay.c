/* SPDX-License-Identifier: MIT */
/*
 * The replay execution model (`simulate --exec replay:RUN`, simulator/sim_replay.c): a run log written
 * here with the run-log writer, for the chain a -> b -> c of tests/agents/plans/late.plan.yaml (the
 * plan the agent's late-policy test runs, job_overhead 0). A run whose jobs all took their WCET replays
 * like the WCET model; a run in which one job took 3 x its WCET replays exactly like the same overrun
 * injected; jobs the board abandoned replay the task's median; a run of another plan, a missing run
 * and a run without jobs are refused with exit 2.
 */
#include "pd_test.h"
#include "runlog/pd_runlog.h"
#include "simulator/pd_simulator.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MS 1000000LL
#define S 1000000000LL

static pd_plan *load_plan(void)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *p = pd_plan_load_file(pd_test_src("tests/agents/plans/late.plan.yaml"), &d);
	ck_assert_msg(p != NULL, "%s", d.n ? d.v[0].msg : "?");
	pd_diags_free(&d);
	return p;
}

/* The header the agent writes, reduced to what the reader needs: format, version, plan hash, the
 * tasks (name, DAG, CPU) and the DAG. */
static char *header(uint64_t plan_hash)
{
	char hash[32];
	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)plan_hash);
	json_t *h = json_pack("{s:s, s:i, s:s, s:[{s:s,s:s,s:i},{s:s,s:s,s:i},{s:s,s:s,s:i}], s:[{s:s,s:I,s:I}]}",
			      "format", PD_RUNLOG_FORMAT, "version", 1, "plan_hash", hash, "tasks", "name", "a", "dag",
			      "chain", "cpu", 1, "name", "b", "dag", "chain", "cpu", 0, "name", "c", "dag", "chain",
			      "cpu", 1, "dags", "name", "chain", "period_ns", (json_int_t)(20 * MS), "deadline_ns",
			      (json_int_t)(20 * MS));
	char *s = json_dumps(h, JSON_COMPACT);
	json_decref(h);
	return s;
}

/* A run of n instances: every job of task i takes wcet[i] of CPU, except job `seq` of task `task`,
 * which takes `factor` x its WCET (factor 0: that job is logged as skipped). Returns the directory
 * (the caller frees it). */
static char *write_run(const char *name, uint64_t plan_hash, uint64_t n, int task, uint64_t seq, double factor)
{
	static const int64_t wcet[3] = {1 * MS, 2 * MS, 1 * MS};
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/%s", pd_test_tmpdir(), name);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	char path[600];
	snprintf(path, sizeof(path), "%s/run.pdlog", dir);
	pd_err e = {0};
	pd_runlog_writer *w = pd_runlog_writer_new();
	struct pd_runlog_ring *ring = pd_runlog_add_ring(w, sizeof(struct pd_runlog_job_rec) + 16, 4096);
	char *h = header(plan_hash);
	ck_assert_int_eq(pd_runlog_writer_open(w, path, h, &e), 0);
	free(h);
	for (uint64_t k = 0; k < n; k++) {
		for (uint32_t i = 0; i < 3; i++) {
			bool odd = (int)i == task && k == seq;
			int64_t cpu = odd ? (int64_t)((double)wcet[i] * factor) : wcet[i];
			struct pd_runlog_job_rec j = {.task = i, .seq = k, .release_ns = (int64_t)k * 20 * MS,
						      .start_ns = (int64_t)k * 20 * MS, .end_ns = (int64_t)k * 20 * MS + cpu,
						      .cpu_ns = cpu, .demand_ns = cpu, .cpu = i == 1 ? 0 : 1,
						      .flags = odd && factor == 0 ? PD_RUNLOG_JOB_SKIPPED : 0};
			ck_assert(pd_runlog_put(ring, PD_RUNLOG_JOB, &j, sizeof(j)));
		}
		if (k % 512 == 511)
			pd_runlog_writer_drain(w);
	}
	struct pd_runlog_end_rec end = {.t_ns = (int64_t)n * 20 * MS};
	ck_assert_int_eq(pd_runlog_writer_close(w, &end, &e), 0);
	return strdup(dir);
}

static pd_sim_result *sim(const pd_plan *p, const char *replay_dir, const char *inject, int64_t duration_ns)
{
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = duration_ns;
	pd_err e = {0};
	pd_sim_replay *rp = NULL;
	if (replay_dir) {
		char spec[700];
		snprintf(spec, sizeof(spec), "replay:%s", replay_dir);
		ck_assert_int_eq(pd_sim_parse_exec(spec, &prm, &e), 0);
		rp = pd_sim_replay_load(prm.replay_path, p, &e);
		ck_assert_msg(rp != NULL, "%s", e.msg);
		prm.replay = rp;
	}
	if (inject)
		ck_assert_int_eq(pd_sim_parse_inject(inject, &prm, &e), 0);
	pd_sim_result *r = pd_sim_run(p, &prm, &e);
	ck_assert_msg(r != NULL, "%s", e.msg);
	pd_sim_replay_free(rp);
	return r;
}

START_TEST(replay_of_wcet_jobs_is_the_wcet_model)
{
	pd_plan *p = load_plan();
	char *dir = write_run("clean", pd_plan_hash(p), 100, -1, 0, 1);
	pd_sim_result *a = sim(p, dir, NULL, 2 * S), *b = sim(p, NULL, NULL, 2 * S);
	ck_assert_uint_eq(a->dags[0].instances, 100);
	ck_assert_uint_eq(a->misses, 0);
	ck_assert_int_eq(a->dags[0].max_response_ns, b->dags[0].max_response_ns);
	ck_assert_uint_eq(a->jobs, b->jobs);
	pd_sim_result_free(a);
	pd_sim_result_free(b);
	free(dir);
	pd_plan_free(p);
}
END_TEST

/* b's job 20 took 3 x 2 ms on a 2.2-ms budget in the run: the replay predicts what injecting that
 * overrun predicts (3 instances, resync rule 4), nothing more. */
START_TEST(replayed_overrun_costs_what_the_injected_one_costs)
{
	pd_plan *p = load_plan();
	char *dir = write_run("overrun", pd_plan_hash(p), 200, 1, 20, 3);
	pd_sim_result *a = sim(p, dir, NULL, 4 * S), *b = sim(p, NULL, "chain/b:20:3", 4 * S);
	ck_assert_uint_gt(b->misses, 0);
	ck_assert_uint_eq(a->misses, b->misses);
	ck_assert_uint_eq(a->dags[0].skipped, b->dags[0].skipped);
	ck_assert_uint_eq(a->tasks[1].throttles, b->tasks[1].throttles);
	ck_assert_uint_eq(a->reanchors, b->reanchors);
	pd_sim_result_free(a);
	pd_sim_result_free(b);
	free(dir);
	pd_plan_free(p);
}
END_TEST

/* A job the board abandoned (skipped, cpu 0) is not a measurement: the replay runs it with its task's
 * median (2 ms), so nothing misses; read as 0 ns it would shorten b's instance 30. The duration
 * defaults to the run's (the CLI), and the count of matched jobs excludes the skipped one. */
START_TEST(skipped_jobs_replay_the_median)
{
	pd_plan *p = load_plan();
	char *dir = write_run("skipped", pd_plan_hash(p), 100, 1, 30, 0);
	pd_err e = {0};
	pd_sim_replay *rp = pd_sim_replay_load(dir, p, &e);
	ck_assert_ptr_nonnull(rp);
	ck_assert_uint_eq(pd_sim_replay_jobs(rp), 299);
	ck_assert_int_eq(pd_sim_replay_duration(rp), 2 * S);
	pd_sim_replay_free(rp);
	pd_sim_result *a = sim(p, dir, NULL, 2 * S), *b = sim(p, NULL, NULL, 2 * S);
	ck_assert_uint_eq(a->misses, 0);
	ck_assert_int_eq(a->dags[0].max_response_ns, b->dags[0].max_response_ns);
	pd_sim_result_free(a);
	pd_sim_result_free(b);
	free(dir);
	pd_plan_free(p);
}
END_TEST

START_TEST(replay_refuses_other_plans_and_missing_runs)
{
	pd_plan *p = load_plan();
	char *dir = write_run("other", pd_plan_hash(p) ^ 1, 10, -1, 0, 1);
	pd_err e = {0};
	ck_assert_ptr_null(pd_sim_replay_load(dir, p, &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "another plan"));
	pd_err e2 = {0};
	ck_assert_ptr_null(pd_sim_replay_load("/nonexistent/run", p, &e2));
	ck_assert_int_eq(e2.code, PD_EXIT_USAGE);
	/* REPLAY without a loaded run is a usage error, not a crash */
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	pd_err e3 = {0};
	ck_assert_int_eq(pd_sim_parse_exec("replay:x", &prm, &e3), 0);
	ck_assert_ptr_null(pd_sim_run(p, &prm, &e3));
	ck_assert_int_eq(e3.code, PD_EXIT_USAGE);
	pd_err e4 = {0};
	ck_assert_int_ne(pd_sim_parse_exec("replay:", &prm, &e4), 0);
	free(dir);
	pd_plan_free(p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("simulator_replay");
	TCase *tc = tcase_create("replay");
	tcase_add_test(tc, replay_of_wcet_jobs_is_the_wcet_model);
	tcase_add_test(tc, replayed_overrun_costs_what_the_injected_one_costs);
	tcase_add_test(tc, skipped_jobs_replay_the_median);
	tcase_add_test(tc, replay_refuses_other_plans_and_missing_runs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return pd_test_main(suite());
}
