/* SPDX-License-Identifier: MIT */
/*
 * The solver workers (optimizer/worker.c): when one worker decides the instance - its plan proven
 * optimal, or no plan at all (bound +infinity) - the others are stopped at once rather than at the
 * limit; a worker that ends with only a finite bound stops nobody.
 */
#include "helper_opt.h"
#include "optimizer/opt_impl.h"
#include "pd_test.h"

#include <math.h>
#include <time.h>

enum job_kind { JOB_NO_PLAN, JOB_PROVEN, JOB_BOUND, JOB_SLEEP };

struct job {
	struct opt_inst *in;
	struct opt_pub *P;
	enum job_kind kind;
	double sleep_s;
};

static int work(void *arg)
{
	struct job *j = arg;
	j->in->pub = j->P; /* in the child: its own copy of the instance */
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
	case JOB_SLEEP:
		break;
	}
	return 0;
}

/* Runs two workers (kinds a and b, b after sleep_b seconds) with the kill 5 s away; returns the
 * wall time taken and fills ends. */
static double run_two(enum job_kind a, enum job_kind b, double sleep_b, struct opt_worker_end *ends)
{
	pd_plan *plan = pd_to_load("dags:\n"
				   "  - {name: a, period: 10ms, tasks: [{name: t, wcet: 1ms}]}\n",
				   pd_to_plat2);
	struct opt_inst in;
	pd_err e = {0};
	ck_assert_msg(opt_inst_build(&in, pd_plan_dags(plan), pd_plan_platform(plan), 1e-5, &e) == 0, "%s", e.msg);
	struct opt_pub *P[2] = {opt_pub_new(&in), opt_pub_new(&in)};
	ck_assert_ptr_nonnull(P[0]);
	ck_assert_ptr_nonnull(P[1]);
	struct job jobs[2] = {{&in, P[0], a, 0}, {&in, P[1], b, sleep_b}};
	void *args[2] = {&jobs[0], &jobs[1]};
	double t0 = opt_now_s();
	ck_assert_int_eq(opt_workers_run(2, P, t0 + 5.0, work, args, ends), 0);
	double took = opt_now_s() - t0;
	opt_pub_free(P[0]);
	opt_pub_free(P[1]);
	opt_inst_free(&in);
	pd_plan_free(plan);
	return took;
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

int main(void)
{
	Suite *s = suite_create("optimizer_worker");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, a_decision_stops_the_others);
	tcase_add_test(tc, a_bound_alone_stops_nobody);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
