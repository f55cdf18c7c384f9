/* SPDX-License-Identifier: MIT */
/*
 * The lazy bound loop over canonical OPP vectors (optimizer/lazy.c), against brute force on three
 * identical one-core islands with four OPPs and six independent tasks (20 canonical vectors, 729
 * assignments each): every vector it closes as having no plan (by its own LP or, without one, as
 * nowhere faster than a grown infeasible vector) has none, it closes vectors in bulk, and its bound
 * never exceeds the optimum, whatever the cut-off.
 */
#include "helper_opt.h"
#include "optimizer/opt_impl.h"
#include "pd_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct fixture {
	pd_plan *plan;
	struct opt_inst in;
	struct opt_sol s;
	struct opt_screen *S;
	size_t ids[64], nc;
	double lb0[64];
	double best[64]; /* brute force: the cheapest plan at canonical vector c (INFINITY: none) */
	double opt;      /* and over all of them */
};

/* 250 / 500 / 750 / 1000 MHz; six tasks of 2 ms at 1000 MHz per 10 ms: a core holds one of them at
 * 250 MHz (0.8 of it), two at 500, three at 750, four at 1000 MHz, so (0 0 0), (0 0 1), (0 0 2) and
 * (0 1 1) have no plan (nor an LP point: cardinality rows, 3.56 tasks' worth of capacity at 750 MHz)
 * while (0 0 3), (0 1 2) and (1 1 1) have one. Every task fits a core alone everywhere, so the
 * cheapest-option bound closes nothing: the LPs and the dominance of grown vectors must. */
static void setup(struct fixture *f)
{
	f->plan = pd_to_load(pd_to_six_2ms, pd_to_plat_three);
	pd_err e = {0};
	ck_assert_msg(opt_inst_build(&f->in, pd_plan_dags(f->plan), pd_plan_platform(f->plan), 1e-5, &e) == 0, "%s",
		      e.msg);
	ck_assert_int_eq(opt_sol_init(&f->s, &f->in), 0);
	f->S = opt_screen_new(&f->in);
	ck_assert_ptr_nonnull(f->S);
	f->nc = opt_canonical_vectors(&f->in, f->ids, 64);
	ck_assert_uint_eq(f->nc, 20); /* multisets of 3 of 4 OPPs */
	double sep = opt_quick_bound(&f->in) - opt_min_idle_w(&f->in);
	f->opt = INFINITY;
	for (size_t c = 0; c < f->nc; c++) {
		opt_vector_decode(&f->in, &f->s, f->ids[c]);
		f->lb0[c] = opt_vector_idle_w(&f->in, &f->s) + sep; /* what the exact mode starts from */
		f->best[c] = INFINITY;
		for (int a = 0; a < 729; a++) {
			int isl[6], x = a;
			for (size_t i = 0; i < 6; i++, x /= 3)
				isl[i] = x % 3;
			double load[3] = {0, 0, 0}, p = opt_vector_idle_w(&f->in, &f->s);
			for (size_t i = 0; i < 6; i++) {
				size_t k = (size_t)isl[i];
				load[k] += (double)runtime_at(&f->in, i, k, f->s.isl_opp[k]) / (double)f->in.T_ns[i];
				p += opt_task_busy_w(&f->in, &f->s, i, (int)f->in.isl_core0[k]);
			}
			if (load[0] <= f->in.cap && load[1] <= f->in.cap && load[2] <= f->in.cap)
				f->best[c] = fmin(f->best[c], p);
		}
		f->opt = fmin(f->opt, f->best[c]);
	}
	ck_assert(isfinite(f->opt));
}

static void teardown(struct fixture *f)
{
	opt_screen_free(f->S);
	opt_sol_free(&f->s);
	opt_inst_free(&f->in);
	pd_plan_free(f->plan);
}

/* Every vector closed as having no plan has none (brute force), every bound is below the vector's
 * cheapest plan, and the loop's bound below the optimum. Returns how many vectors it closed so. */
static size_t check_valid(const struct fixture *f, const struct opt_lazy *L, double bound)
{
	size_t none = 0;
	for (size_t c = 0; c < f->nc; c++) {
		if (opt_lazy_no_plan(L, c)) {
			ck_assert_msg(!isfinite(f->best[c]), "vector %zu closed as without plan, has one at %.6f W", f->ids[c],
				      f->best[c]);
			none++;
		} else if (isfinite(f->best[c])) {
			ck_assert_msg(opt_lazy_bound(L, c) <= f->best[c] * (1 + 1e-9), "vector %zu: bound %.9f W above %.9f W",
				      f->ids[c], opt_lazy_bound(L, c), f->best[c]);
		}
	}
	ck_assert_msg(bound <= f->opt * (1 + 1e-9), "bound %.9f W above the optimum %.9f W", bound, f->opt);
	return none;
}

/* The OPP hull (optimizer/hull.c) bounds every vector at once: never above the brute-force optimum,
 * and above the smallest idle-plus-separable bound, which is where the search over vectors starts
 * (here the hull's capacity and cardinality rows per OPP see that six tasks need at least two
 * islands above 250 MHz). On both of its LP solvers (GLPK, and CLP where the build has CBC), which
 * converge to the same bound (both Kelley loops stop within 1e-3 of the perspective). */
START_TEST(hull_bounds_every_vector)
{
	struct fixture f;
	setup(&f);
	double sep = INFINITY;
	for (size_t c = 0; c < f.nc; c++)
		sep = fmin(sep, f.lb0[c]);
	double h[2];
	for (int glpk = 0; glpk < 2; glpk++) {
		h[glpk] = opt_hull_bound_on(&f.in, opt_now_s() + 5.0, glpk, NULL);
		ck_assert_msg(h[glpk] <= f.opt * (1 + 1e-9), "glpk %d: hull %.9f W above the optimum %.9f W", glpk, h[glpk],
			      f.opt);
		ck_assert_msg(h[glpk] > sep + 1e-6, "glpk %d: hull %.9f W not above the separable bound %.9f W", glpk,
			      h[glpk], sep);
	}
	ck_assert_msg(fabs(h[0] - h[1]) <= 1e-3 * h[1], "hull %.9f W (default) against %.9f W (GLPK)", h[0], h[1]);
	teardown(&f);
}
END_TEST

START_TEST(closes_only_vectors_without_plan)
{
	struct fixture f;
	setup(&f);
	size_t without = 0;
	for (size_t c = 0; c < f.nc; c++)
		without += !isfinite(f.best[c]);
	ck_assert_uint_eq(without, 4);
	/* (0 1 1) first (0 is a valid bound too), (0 0 0) and (0 0 1) just below the optimum (any
	 * bound is valid where no plan exists): grown, (0 1 1) must close them without LPs of their own */
	double lb0[64];
	for (size_t c = 0; c < f.nc; c++) {
		opt_vector_decode(&f.in, &f.s, f.ids[c]);
		const size_t *o = f.s.isl_opp;
		bool first = o[0] == 0 && o[1] == 1 && o[2] == 1, below = o[0] == 0 && o[1] == 0 && o[2] <= 1;
		lb0[c] = first ? 0 : below ? f.opt * 0.999 : f.lb0[c];
	}
	/* no cut-off: the loop runs until the smallest open bound is a screened one */
	struct opt_lazy *L = opt_lazy_new(&f.in, f.S, f.ids, f.nc, lb0);
	ck_assert_ptr_nonnull(L);
	double b = opt_lazy_run(L, INFINITY, opt_now_s() + 10.0);
	size_t none = check_valid(&f, L, b);
	ck_assert(isfinite(b));
	size_t n_lp, n_lag, n_cover, n_anti;
	opt_lazy_stats(L, &n_lp, &n_lag, &n_cover, &n_anti);
	ck_assert_uint_ge(n_anti, 1);
	ck_assert_msg(none >= 3 && n_cover >= 2, "closed %zu, by the antichain %zu, %zu LPs", none, n_cover, n_lp);
	for (size_t c = 0; c < f.nc; c++) {
		opt_vector_decode(&f.in, &f.s, f.ids[c]);
		if (f.s.isl_opp[0] == 0 && f.s.isl_opp[1] == 0 && f.s.isl_opp[2] <= 1)
			ck_assert_msg(opt_lazy_no_plan(L, c), "vector %zu not closed", f.ids[c]);
	}
	opt_lazy_free(L);
	teardown(&f);
}
END_TEST

START_TEST(bound_valid_at_every_cut)
{
	struct fixture f;
	setup(&f);
	/* at the optimum (nothing closes it), slightly above (every vector but the optimum's closes or
	 * stays below), and far above */
	double cuts[] = {f.opt, f.opt * 1.001, f.opt * 1.2, f.opt * 2};
	for (size_t t = 0; t < sizeof(cuts) / sizeof(cuts[0]); t++) {
		struct opt_lazy *L = opt_lazy_new(&f.in, f.S, f.ids, f.nc, f.lb0);
		ck_assert_ptr_nonnull(L);
		double b = opt_lazy_run(L, cuts[t], opt_now_s() + 10.0);
		check_valid(&f, L, b);
		ck_assert(b <= cuts[t]);
		/* run again with a lower cut-off (after a better plan), as the exact mode does */
		b = opt_lazy_run(L, f.opt, opt_now_s() + 10.0);
		check_valid(&f, L, b);
		opt_lazy_free(L);
	}
	teardown(&f);
}
END_TEST

/* Sorting the twins gives the canonical vector with the same OPPs (brute force over all 64 ids). */
START_TEST(sort_twins_is_canonical)
{
	struct fixture f;
	setup(&f);
	for (size_t id = 0; id < opt_vector_count(&f.in); id++) {
		opt_vector_decode(&f.in, &f.s, id);
		size_t hist[4] = {0};
		for (size_t k = 0; k < 3; k++)
			hist[f.s.isl_opp[k]]++;
		opt_vector_sort_twins(&f.in, &f.s);
		ck_assert(opt_vector_canonical(&f.in, &f.s));
		for (size_t k = 0; k < 3; k++)
			hist[f.s.isl_opp[k]]--;
		for (size_t m = 0; m < 4; m++)
			ck_assert_uint_eq(hist[m], 0);
	}
	teardown(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("optimizer_lazy");
	TCase *tc = tcase_create("lazy");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, closes_only_vectors_without_plan);
	tcase_add_test(tc, hull_bounds_every_vector);
	tcase_add_test(tc, bound_valid_at_every_cut);
	tcase_add_test(tc, sort_twins_is_canonical);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
