/* SPDX-License-Identifier: MIT */
/*
 * The solver workers (optimizer/worker.c): when one worker decides the instance - its plan proven
 * optimal, or no plan at all (bound +infinity) - the others are stopped at once rather than at the
 * limit; a worker that ends with only a finite bound stops nobody, unless that bound certifies the
 * other worker's plan within the gap. A worker sees the power of the other's plan (opt_peer_w).
 */
#include "helper_opt.h"
#include "optimizer/opt_impl.h"
#include "pd_test.h"

#include <math.h>
#include <time.h>

enum job_kind { JOB_NO_PLAN, JOB_PROVEN, JOB_BOUND, JOB_SLEEP, JOB_PLAN, JOB_PEER_BOUND };

/* The plan JOB_PLAN publishes (W), and the gap of the instance. */
#define PLAN_W 2.0
#define GAP 1e-4

struct job {
	struct opt_inst *in;
	struct opt_pub *P, *peer;
	enum job_kind kind;
	double sleep_s;
};

/* JOB_PLAN: a plan of PLAN_W, published before the sleep. */
static void publish_plan(struct opt_inst *in)
{
	struct opt_sol s;
	ck_assert_int_eq(opt_sol_init(&s, in), 0);
	s.ok = true, s.power_w = PLAN_W;
	opt_pub_sol(in, &s);
	opt_sol_free(&s);
}

/* JOB_PEER_BOUND: waits (up to 3 s) for the other worker's plan, then ends with its cut-off as the
 * bound, as a search that closed everything against that plan does (cut_w). */
static void bound_at_peer(struct opt_inst *in)
{
	double t0 = opt_now_s(), w;
	while (!isfinite(w = opt_peer_w(in)) && opt_now_s() < t0 + 3.0) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	opt_pub_bound(in, isfinite(w) ? w * (1 - in->rel_gap) : 0.5);
}

static int work(void *arg)
{
	struct job *j = arg;
	j->in->pub = j->P; /* in the child: its own copy of the instance */
	j->in->peer = j->peer;
	if (j->kind == JOB_PLAN)
		publish_plan(j->in);
	if (j->sleep_s > 0) {
		struct timespec ts = {(time_t)j->sleep_s, (long)((j->sleep_s - floor(j->sleep_s)) * 1e9)};
		nanosleep(&ts, NULL);
	}
	switch (j->kind) {
	case JOB_NO_PLAN:
		opt_pub_bound(j->in, INFINITY);
		break;
	case JOB_PROVEN:
		opt_pub_bound(j->in, 1.0);
		opt_pub_set_proven(j->in, true);
		break;
	case JOB_BOUND:
		opt_pub_bound(j->in, 1.0);
		break;
	case JOB_PEER_BOUND:
		bound_at_peer(j->in);
		break;
	case JOB_SLEEP:
	case JOB_PLAN:
		break;
	}
	return 0;
}

/* Runs two workers (kinds a and b, a after sleep_a seconds, b after sleep_b) with the kill 5 s
 * away, each the other's peer; returns the wall time taken and fills ends and the bounds they
 * published (lb, may be NULL). */
static double run_pair(enum job_kind a, double sleep_a, enum job_kind b, double sleep_b, struct opt_worker_end *ends,
		       double *lb)
{
	struct opt_inst in;
	pd_plan *plan = pd_to_one_task(&in);
	in.rel_gap = GAP;
	struct opt_pub *P[2] = {opt_pub_new(&in), opt_pub_new(&in)};
	ck_assert_ptr_nonnull(P[0]);
	ck_assert_ptr_nonnull(P[1]);
	struct job jobs[2] = {{&in, P[0], P[1], a, sleep_a}, {&in, P[1], P[0], b, sleep_b}};
	void *args[2] = {&jobs[0], &jobs[1]};
	double t0 = opt_now_s();
	ck_assert_int_eq(opt_workers_run(2, P, t0 + 5.0, work, args, ends), 0);
	double took = opt_now_s() - t0;
	for (size_t i = 0; lb && i < 2; i++)
		lb[i] = opt_pub_lb(P[i]);
	opt_pub_free(P[0]);
	opt_pub_free(P[1]);
	opt_inst_free(&in);
	pd_plan_free(plan);
	return took;
}

static double run_two(enum job_kind a, enum job_kind b, double sleep_b, struct opt_worker_end *ends)
{
	return run_pair(a, 0, b, sleep_b, ends, NULL);
}

/* A proof that there is no plan, then a plan proven optimal: each ends the sleeping worker at once. */
START_TEST(a_decision_stops_the_others)
{
	const enum job_kind kinds[] = {JOB_NO_PLAN, JOB_PROVEN};
	for (size_t t = 0; t < 2; t++) {
		struct opt_worker_end ends[2];
		double took = run_two(kinds[t], JOB_SLEEP, 20.0, ends);
		ck_assert_msg(took < 2.0, "kind %zu: %.2f s, the other worker ran on after the proof", t, took);
		ck_assert_int_eq(ends[0].how, OPT_END_DONE);
		ck_assert_int_eq(ends[1].how, OPT_END_KILLED);
	}
}
END_TEST

/* A finite bound decides nothing: the second worker ends on its own, after its 0.5 s. */
START_TEST(a_bound_alone_stops_nobody)
{
	struct opt_worker_end ends[2];
	double took = run_two(JOB_BOUND, JOB_BOUND, 0.5, ends);
	ck_assert_msg(took >= 0.5 && took < 4.0, "%.2f s", took);
	ck_assert_int_eq(ends[0].how, OPT_END_DONE);
	ck_assert_int_eq(ends[1].how, OPT_END_DONE);
}
END_TEST

/* One worker's plan, the other's bound at its cut-off: together they decide, so the first one (asleep
 * for 20 s after its plan) is stopped at once; the second one saw the first one's plan. */
START_TEST(a_bound_that_certifies_the_others_plan_stops_both)
{
	struct opt_worker_end ends[2];
	double lb[2];
	double took = run_pair(JOB_PLAN, 20.0, JOB_PEER_BOUND, 0, ends, lb);
	ck_assert_msg(took < 2.0, "%.2f s: the plan's worker ran on after the bound certified its plan", took);
	ck_assert_int_eq(ends[0].how, OPT_END_KILLED);
	ck_assert_int_eq(ends[1].how, OPT_END_DONE);
	ck_assert_double_eq_tol(lb[1], PLAN_W * (1 - GAP), 1e-12);
}
END_TEST

/* A bound below the plan's cut-off certifies nothing: the plan's worker ends on its own (1 s). */
START_TEST(a_weaker_bound_leaves_the_plan_open)
{
	struct opt_worker_end ends[2];
	double took = run_pair(JOB_PLAN, 1.0, JOB_BOUND, 0, ends, NULL);
	ck_assert_msg(took >= 1.0 && took < 4.0, "%.2f s", took);
	ck_assert_int_eq(ends[0].how, OPT_END_DONE);
	ck_assert_int_eq(ends[1].how, OPT_END_DONE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("optimizer_worker");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_decision_stops_the_others);
	tcase_add_test(tc, a_bound_alone_stops_nobody);
	tcase_add_test(tc, a_bound_that_certifies_the_others_plan_stops_both);
	tcase_add_test(tc, a_weaker_bound_leaves_the_plan_open);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
