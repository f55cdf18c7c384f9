/* SPDX-License-Identifier: MIT */
/*
 * The late-instance policy in the simulator (docs/MODEL.md "Late instances"): one injected overrun
 * on the chain a -> b -> c of tests/agents/plans/late.plan.yaml (the plan the agent's e2e test runs).
 * Exact, deterministic counts: under queue the chain stays a period behind for the rest of the run;
 * under resync the overrun costs ceil(F C / Q) instances (the periods the overrunning job spans),
 * then every instance meets its deadline again.
 */
#include "pd_test.h"
#include "simulator/pd_simulator.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000LL
#define S 1000000000LL

/* The test plan, with 'late: queue' added to its DAG when queue. */
static pd_plan *load(bool queue)
{
	const char *path = pd_test_src("tests/agents/plans/late.plan.yaml");
	if (queue) {
		char *data = NULL;
		size_t len = 0;
		pd_err e = {0};
		ck_assert_int_eq(pd_read_file(path, &data, &len, 1 << 20, &e), 0);
		const char *at = strstr(data, "    deadline: 20ms\n");
		ck_assert_ptr_nonnull(at);
		size_t head = (size_t)(at - data) + strlen("    deadline: 20ms\n");
		char *t = malloc(len + 32);
		memcpy(t, data, head);
		strcpy(t + head, "    late: queue\n");
		strcat(t, data + head);
		path = pd_test_write(pd_test_tmpdir(), "late-queue.plan.yaml", t);
		free(t);
		free(data);
	}
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *p = pd_plan_load_file(path, &d);
	ck_assert_msg(p != NULL, "%s", d.n ? d.v[0].msg : "?");
	pd_diags_free(&d);
	ck_assert_int_eq(pd_dags_dag(pd_plan_dags(p), 0)->late, queue ? PD_LATE_QUEUE : PD_LATE_RESYNC);
	return p;
}

static struct pd_sim_dag_stats run(const pd_plan *p, const char *inject, int64_t duration_ns)
{
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = duration_ns;
	pd_err e = {0};
	if (inject)
		ck_assert_int_eq(pd_sim_parse_inject(inject, &prm, &e), 0);
	pd_sim_result *r = pd_sim_run(p, &prm, &e);
	ck_assert_msg(r != NULL, "%s", e.msg);
	struct pd_sim_dag_stats st = r->dags[0];
	pd_sim_result_free(r);
	return st;
}

START_TEST(without_overrun_no_miss_under_either_policy)
{
	for (int q = 0; q < 2; q++) {
		pd_plan *p = load(q);
		struct pd_sim_dag_stats st = run(p, NULL, 2 * S);
		ck_assert_uint_eq(st.instances, 100);
		ck_assert_uint_eq(st.misses, 0);
		ck_assert_uint_eq(st.skipped, 0);
		ck_assert_int_eq(st.max_response_ns, 4 * MS);
		pd_plan_free(p);
	}
}
END_TEST

START_TEST(queue_one_overrun_leaves_the_chain_a_period_behind)
{
	/* b's job 20 needs 3 ms on a 2.2 ms budget: throttled until its next period, it ends in the next
	 * period with 1.4 ms of budget left and job 21 already ready: it never sleeps again, every
	 * later job starts with a stale budget, is throttled and ends a period late. Instances 20..98
	 * miss (99 is still running when the 2-s run stops, within its deadline: not judged). */
	pd_plan *p = load(true);
	struct pd_sim_dag_stats st = run(p, "chain/b:20:1.5", 2 * S);
	ck_assert_uint_eq(st.instances, 99);
	ck_assert_uint_eq(st.misses, 79);
	ck_assert_uint_eq(st.skipped, 0);
	pd_plan_free(p);
}
END_TEST

START_TEST(resync_one_overrun_costs_two_instances)
{
	/* Instance 20: b ends after the deadline (a miss; it wakes no successor, c skips it). Job 21 of b
	 * is ready when b ends: b skips it and sleeps, so job 22 wakes it with a fresh budget. */
	pd_plan *p = load(false);
	struct pd_sim_dag_stats st = run(p, "chain/b:20:1.5", 2 * S);
	ck_assert_uint_eq(st.instances, 100);
	ck_assert_uint_eq(st.misses, 2);
	ck_assert_uint_eq(st.skipped, 2);
	ck_assert_int_eq(st.max_response_ns, 4 * MS); /* every instance that finished was on time */
	pd_plan_free(p);
}
END_TEST

START_TEST(resync_cost_is_the_periods_the_overrunning_job_spans)
{
	/* Source a (C = 1 ms, Q = 1.2 ms per 20 ms): a job of F C spans ceil(F C / Q) periods; those
	 * instances miss, every later one is on time. Beyond the simulator's 16 instances in flight the
	 * releases are dropped, still misses (F = 24: 20 periods). A job within its budget costs none. */
	static const struct { const char *inj; uint64_t misses; } cases[] = {
		{"chain/a:20:1.1", 0}, {"chain/a:20:1.5", 2}, {"chain/a:20:3", 3},
		{"chain/a:20:12", 10}, {"chain/a:20:24", 20}, {"chain/c:20:3", 3},
	};
	pd_plan *p = load(false);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pd_sim_dag_stats st = run(p, cases[i].inj, 4 * S);
		ck_assert_msg(st.misses == cases[i].misses, "%s: %llu misses, expected %llu", cases[i].inj,
			      (unsigned long long)st.misses, (unsigned long long)cases[i].misses);
		ck_assert_uint_eq(st.instances, 200);
	}
	pd_plan_free(p);
}
END_TEST

/* Rule 4: b's job 20 charged 24 x 2 ms on a 2.2-ms budget moves its reservation on
 * ceil(48 / 2.2) - 1 = 21 periods in its replenishments; b must not be woken before its next period
 * (the jobs ready before it abandon their instances): 22 instances lost, one re-anchor, then on time
 * at the plan's phase (the maximum response is the undisturbed one). */
START_TEST(resync_rule4_reanchors_once_and_costs_the_periods_charged)
{
	pd_plan *p = load(false);
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = 4 * S;
	pd_err e = {0};
	ck_assert_int_eq(pd_sim_parse_inject("chain/b:20:24", &prm, &e), 0);
	pd_sim_result *r = pd_sim_run(p, &prm, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->dags[0].misses, 22);
	ck_assert_uint_eq(r->reanchors, 1);
	ck_assert_int_eq(r->dags[0].max_response_ns, 4 * MS);
	pd_sim_result_free(r);
	/* within its budget a job is never late: no re-anchor, no miss */
	ck_assert_int_eq(pd_sim_parse_inject("chain/b:20:1.05", &prm, &e), 0);
	r = pd_sim_run(p, &prm, &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->dags[0].misses, 0);
	ck_assert_uint_eq(r->reanchors, 0);
	pd_sim_result_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(injection_names_a_task_of_the_plan)
{
	pd_plan *p = load(false);
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	pd_err e = {0};
	ck_assert_int_eq(pd_sim_parse_inject("chain/zz:1:2", &prm, &e), 0);
	ck_assert_ptr_null(pd_sim_run(p, &prm, &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "chain/zz"));
	static const char *const bad[] = {"chain:1:2", "chain/a:x:2", "chain/a:1:0", "chain/a:1:1001",
					  "chain/a:1", "/a:1:2", "chain/a:-1:2", "chain/a:1:2x"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&e, 0, sizeof(e));
		ck_assert_msg(pd_sim_parse_inject(bad[i], &prm, &e) == PD_EXIT_USAGE, "%s accepted", bad[i]);
	}
	pd_plan_free(p);
}
END_TEST

START_TEST(json_reports_skipped_instances)
{
	pd_plan *p = load(false);
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = 2 * S;
	pd_err e = {0};
	ck_assert_int_eq(pd_sim_parse_inject("chain/b:20:1.5", &prm, &e), 0);
	pd_sim_result *r = pd_sim_run(p, &prm, &e);
	ck_assert_ptr_nonnull(r);
	char *txt = pd_sim_result_json(r, p);
	json_t *j = json_loads(txt, 0, NULL);
	ck_assert_ptr_nonnull(j);
	json_t *d = json_array_get(json_object_get(j, "dags"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(d, "skipped")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(d, "misses")), 2);
	json_decref(j);
	free(txt);
	pd_sim_result_free(r);
	pd_plan_free(p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("simulator_late");
	TCase *tc = tcase_create("late");
	tcase_add_test(tc, without_overrun_no_miss_under_either_policy);
	tcase_add_test(tc, queue_one_overrun_leaves_the_chain_a_period_behind);
	tcase_add_test(tc, resync_one_overrun_costs_two_instances);
	tcase_add_test(tc, resync_cost_is_the_periods_the_overrunning_job_spans);
	tcase_add_test(tc, resync_rule4_reanchors_once_and_costs_the_periods_charged);
	tcase_add_test(tc, injection_names_a_task_of_the_plan);
	tcase_add_test(tc, json_reports_skipped_instances);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return pd_test_main(suite());
}
