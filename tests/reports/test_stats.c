/* SPDX-License-Identifier: MIT */
/* The statistics kernels of reports/ on hand-computed cases: percentiles, the sum of rails. */
#include "pd_test.h"
#include "reports/run_model_impl.h"

#include <stdlib.h>

START_TEST(percentiles_are_nearest_rank)
{
	int64_t v[100];
	for (int i = 0; i < 100; i++)
		v[i] = (i + 1) * 10;
	ck_assert_int_eq(rpt_percentile(v, 100, 0.99), 990); /* ceil(99) = 99th value */
	ck_assert_int_eq(rpt_percentile(v, 100, 0.50), 500);
	ck_assert_int_eq(rpt_percentile(v, 100, 1.0), 1000);
	ck_assert_int_eq(rpt_percentile(v, 10, 0.99), 100); /* ceil(9.9) = 10th of 10 */
	ck_assert_int_eq(rpt_percentile(v, 10, 0.50), 50);
	ck_assert_int_eq(rpt_percentile(v, 1, 0.5), 10);
	ck_assert_int_eq(rpt_percentile(v, 0, 0.5), -1);
}
END_TEST

START_TEST(sum_of_rails_holds_last_samples_and_skips_silent_rails)
{
	struct rpt_run *r = rpt_run_new();
	struct rpt_rail *a = rpt_run_rail(r, "A"), *b;
	ck_assert_int_eq(rpt_rail_add(a, 0, 1000), 0);
	ck_assert_int_eq(rpt_rail_add(a, 20, 3000), 0);
	ck_assert_int_eq(rpt_rail_add(a, 20, 9999), 0); /* same time again: dropped */
	ck_assert_int_eq(rpt_rail_add(a, 10, 9999), 0); /* back in time: dropped */
	ck_assert_uint_eq(a->n, 2);
	b = rpt_run_rail(r, "B");
	ck_assert_ptr_eq(rpt_run_rail(r, "A"), &r->rails[0]); /* found, not duplicated */
	ck_assert_int_eq(rpt_rail_add(b, 5, 100), 0);
	ck_assert_int_eq(rpt_rail_add(b, 30, 200), 0);
	rpt_run_rail(r, "C"); /* declared, never read */
	int64_t *t = NULL, *uw = NULL;
	size_t n = 0;
	ck_assert_int_eq(rpt_total_series(r, &t, &uw, &n), 0);
	/* t=0: B not started yet -> no point; t=5: 1000+100; t=20: 3000+100; t=30: 3000+200 */
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(t[0], 5);
	ck_assert_int_eq(uw[0], 1100);
	ck_assert_int_eq(t[1], 20);
	ck_assert_int_eq(uw[1], 3100);
	ck_assert_int_eq(t[2], 30);
	ck_assert_int_eq(uw[2], 3200);
	free(t);
	free(uw);
	rpt_run_free(r);
}
END_TEST

/* CPU stalls (reports/stall.c) on a DAG a -> b plus a source c, all on cpu0, 100-ms period:
 *   instance 0: b waits 0.05 ms for its wake-up: no stall;
 *   instance 1: c waits for a (busy, 1 ms), b waits for c (busy, 3 ms): no stall;
 *   instance 2: nothing runs in [200, 205] ms, then a; c waits until 206.1 with a in [205, 206]:
 *               a and c stalled (5 ms each, the same 5 ms: union 5 ms; c's 0.1 ms after a is below
 *               no threshold but counts in its total, 5.1 ms);
 *   instance 3: b, ready at 301 (a's end), is skipped at 340 by its thread, nothing ran meanwhile:
 *               39 ms; instance 4: b skipped too but a ended after the instance's deadline (rule 2:
 *               no one woke b), not a stall; a 0.5-ms gap (instance 5) is below the threshold. */
#define MS PD_NS_PER_MS
static struct rpt_job J(size_t task, uint64_t inst, double start, double end)
{
	return (struct rpt_job){.task = task, .inst = inst, .cpu = 0, .release_ns = (int64_t)inst * 100 * MS,
				.start_ns = (int64_t)(start * MS), .end_ns = (int64_t)(end * MS), .exec_ns = (int64_t)((end - start) * MS)};
}

START_TEST(cpu_stalls_are_waits_no_job_of_the_plan_explains)
{
	const char *yaml = "dags:\n  - name: g\n    period: 100ms\n    deadline: 50ms\n    tasks:\n"
			   "      - {name: a, wcet: 1ms}\n      - {name: b, wcet: 1ms}\n      - {name: c, wcet: 3ms}\n"
			   "    edges:\n      - [a, b]\n";
	const char *path = pd_test_write(pd_test_tmpdir(), "stall.yaml", yaml);
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *ds = pd_dags_load_file(path, &d);
	pd_diags_print(&d, stderr);
	ck_assert_ptr_nonnull(ds);
	struct rpt_job jobs[] = {
		J(0, 0, 0.05, 1.05),    J(1, 0, 1.10, 2.10),    J(2, 0, 2.10, 5.10),    /* instance 0 */
		J(0, 1, 100.05, 101.0), J(2, 1, 101.0, 104.0),  J(1, 1, 104.0, 105.0),  /* instance 1 */
		J(0, 2, 205.0, 206.0),  J(2, 2, 206.1, 209.1),  J(1, 2, 209.1, 210.1),  /* instance 2 */
		J(0, 3, 300.05, 301.0), J(2, 3, 340.5, 343.5),                         /* instance 3 */
		J(0, 4, 400.05, 455.0), J(2, 4, 455.0, 458.0),                         /* instance 4 */
		J(0, 5, 500.5, 501.5),  J(2, 5, 501.5, 504.5),  J(1, 5, 504.5, 505.5),  /* instance 5 */
	};
	struct rpt_skip skips[] = {{1, 3, 0, 300 * MS, 340 * MS}, {1, 4, 0, 400 * MS, 470 * MS}};
	struct rpt_steal *g = NULL;
	size_t ng = 0;
	int64_t max_ns = 0;
	long k = rpt_stalls(jobs, sizeof(jobs) / sizeof(jobs[0]), skips, 2, ds, RPT_STALL_MIN_NS, &g, &ng, &max_ns);
	/* a and c of instance 2, b of instance 3 (skipped), c of instance 3 (waited 300 -> 340.5 less a's
	 * 0.95 ms): 4 jobs */
	ck_assert_int_eq(k, 4);
	ck_assert_int_eq(max_ns, (int64_t)(40.5 * MS) - (int64_t)(0.95 * MS));
	int64_t u = rpt_union_ns(g, ng);
	/* [200, 205] + [206, 206.1] + [300, 300.05] + [301, 340.5] */
	ck_assert_int_eq(u, 5 * MS + MS / 10 + MS / 20 + (int64_t)(39.5 * MS));
	for (size_t i = 0; i < ng; i++) /* every gap lies where no job ran */
		for (size_t j = 0; j < sizeof(jobs) / sizeof(jobs[0]); j++)
			ck_assert_msg(g[i].to_ns <= jobs[j].start_ns || g[i].from_ns >= jobs[j].end_ns,
				      "gap [%lld, %lld] inside a job", (long long)g[i].from_ns, (long long)g[i].to_ns);
	free(g);
	pd_dags_free(ds);
	pd_diags_free(&d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("reports_stats");
	TCase *tc = tcase_create("stats");
	tcase_add_test(tc, percentiles_are_nearest_rank);
	tcase_add_test(tc, sum_of_rails_holds_last_samples_and_skips_silent_rails);
	tcase_add_test(tc, cpu_stalls_are_waits_no_job_of_the_plan_explains);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
