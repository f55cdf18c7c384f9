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

int main(void)
{
	Suite *s = suite_create("reports_stats");
	TCase *tc = tcase_create("stats");
	tcase_add_test(tc, percentiles_are_nearest_rank);
	tcase_add_test(tc, sum_of_rails_holds_last_samples_and_skips_silent_rails);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
