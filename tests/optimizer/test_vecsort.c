/* SPDX-License-Identifier: MIT */
/*
 * The exact mode's vector list (optimizer/vecsort.c): after the bounds of a prefix rose (or fell),
 * opt_vec_resort leaves the whole list sorted by bound, with the same vectors in it, whatever the
 * prefix's length, ties and infinite bounds (vectors without a plan).
 */
#include "optimizer/master_impl.h"
#include "pd_test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

/* A bound drawn from few values (ties), now and then INFINITY (a vector without a plan). */
static double draw_lb(uint64_t *x)
{
	uint64_t r = next(x) % 64;
	return r == 0 ? INFINITY : 5.0 + (double)(r % 16) * 0.01;
}

static int cmp_id(const void *a, const void *b)
{
	size_t x = ((const struct opt_vec *)a)->id, y = ((const struct opt_vec *)b)->id;
	return (x > y) - (x < y);
}

/* vs is sorted by lb and holds exactly the vectors 0..nv-1, each with the bound it was given. */
static void assert_sorted_permutation(struct opt_vec *vs, size_t nv, const double *lb_of)
{
	for (size_t t = 1; t < nv; t++)
		ck_assert_msg(!(vs[t].lb < vs[t - 1].lb), "out of order at %zu: %g after %g", t, vs[t].lb,
			      vs[t - 1].lb);
	qsort(vs, nv, sizeof(*vs), cmp_id);
	for (size_t t = 0; t < nv; t++) {
		ck_assert_uint_eq(vs[t].id, t);
		ck_assert(vs[t].lb == lb_of[t] || (isinf(vs[t].lb) && isinf(lb_of[t])));
	}
}

/* Random lists: a sorted list, the bounds of its first m vectors changed, re-sorted. */
START_TEST(resort_sorts_after_a_prefix_changed)
{
	uint64_t x = 88172645463325252ull;
	size_t sizes[] = {0, 1, 2, 3, 7, 64, 1000};
	for (size_t si = 0; si < sizeof(sizes) / sizeof(*sizes); si++) {
		size_t nv = sizes[si];
		struct opt_vec *vs = malloc((nv + 1) * sizeof(*vs));
		double *lb_of = malloc((nv + 1) * sizeof(double));
		ck_assert(vs && lb_of);
		for (size_t m = 0; m <= nv; m += nv < 10 ? 1 : nv / 7 + 1) {
			for (size_t t = 0; t < nv; t++)
				vs[t] = (struct opt_vec){t, t, draw_lb(&x)};
			qsort(vs, nv, sizeof(*vs), opt_vec_cmp);
			/* the screening raised the first m bounds; some stay, some pass the whole list */
			for (size_t t = 0; t < m; t++)
				vs[t].lb = next(&x) % 4 == 0 ? vs[t].lb : draw_lb(&x) + 0.2;
			for (size_t t = 0; t < nv; t++)
				lb_of[vs[t].id] = vs[t].lb;
			opt_vec_resort(vs, m, nv);
			assert_sorted_permutation(vs, nv, lb_of);
		}
		free(vs);
		free(lb_of);
	}
}
END_TEST

/* The whole list changed (m = nv) and a prefix that falls below the rest both end sorted. */
START_TEST(resort_edges)
{
	struct opt_vec a[5] = {{0, 0, 9}, {1, 1, 8}, {2, 2, 1}, {3, 3, 2}, {4, 4, 3}};
	double lb_a[5] = {9, 8, 1, 2, 3};
	opt_vec_resort(a, 2, 5); /* prefix above the sorted rest */
	ck_assert(a[0].lb == 1 && a[1].lb == 2 && a[2].lb == 3 && a[3].lb == 8 && a[4].lb == 9);
	assert_sorted_permutation(a, 5, lb_a);
	struct opt_vec b[4] = {{0, 0, 4}, {1, 1, 0.5}, {2, 2, 1}, {3, 3, INFINITY}};
	double lb_b[4] = {4, 0.5, 1, INFINITY};
	opt_vec_resort(b, 4, 4); /* the whole list */
	ck_assert(b[0].lb == 0.5 && b[1].lb == 1 && b[2].lb == 4 && isinf(b[3].lb));
	assert_sorted_permutation(b, 4, lb_b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vecsort");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, resort_sorts_after_a_prefix_changed);
	tcase_add_test(tc, resort_edges);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
