/* SPDX-License-Identifier: MIT */
/*
 * The OPP hull's LP (optimizer/hull_lp.c) on both its solvers, GLPK and (where the build has CBC)
 * CLP: the same optima with the objective's constant, the rounds after a cut, the deletion of basic
 * rows, and no optimum where there is none; and the hull built on it sees that requests on a FIFO
 * server wait for each other.
 */
#include "helper_opt.h"
#include "optimizer/opt_impl.h"
#include "optimizer/pd_optimizer.h"
#include "pd_test.h"

#include <math.h>

/* min x + 2y + 3, x, y in [0, 10]: row 1 x + y >= 2, row 2 x <= 1.5. Optimum x = 1.5, y = 0.5: 5.5. */
static struct opt_hlp *small(bool glpk, int *x, int *y)
{
	struct opt_hlp *L = opt_hlp_new(glpk);
	ck_assert_ptr_nonnull(L);
	*x = opt_hlp_col(L, 0, 10, 1.0), *y = opt_hlp_col(L, 0, 10, 2.0);
	ck_assert_int_eq(*x, 1);
	ck_assert_int_eq(*y, 2);
	opt_hlp_offset(L, 3.0);
	int ind[3] = {0, *x, *y};
	double one[3] = {0, 1, 1};
	ck_assert_int_eq(opt_hlp_row(L, 2, INFINITY, 2, ind, one), 1);
	ck_assert_int_eq(opt_hlp_row(L, -INFINITY, 1.5, 1, ind, one), 2);
	return L;
}

START_TEST(solves_cuts_and_deletes)
{
	for (int glpk = 0; glpk < 2; glpk++) {
		int x, y;
		struct opt_hlp *L = small(glpk, &x, &y);
		ck_assert_str_eq(opt_hlp_solver(L), glpk || !pd_opt_have_cbc() ? "glpk" : "clp");
		ck_assert_int_eq(opt_hlp_solve(L, true, 5.0), 0);
		ck_assert_double_eq_tol(opt_hlp_obj(L), 5.5, 1e-9);
		ck_assert_double_eq_tol(opt_hlp_prim(L, x), 1.5, 1e-9);
		ck_assert_double_eq_tol(opt_hlp_prim(L, y), 0.5, 1e-9);
		ck_assert(!opt_hlp_row_basic(L, 1)); /* both rows tight */
		ck_assert(!opt_hlp_row_basic(L, 2));
		/* a cut y >= 1 (row 3) cuts the optimum off: x = 1, y = 1, 6, and row 2 goes slack */
		int iy[2] = {0, y};
		double v1[2] = {0, 1};
		ck_assert_int_eq(opt_hlp_row(L, 1, INFINITY, 1, iy, v1), 3);
		ck_assert_int_eq(opt_hlp_rows(L), 3);
		ck_assert_int_eq(opt_hlp_solve(L, false, 5.0), 0);
		ck_assert_double_eq_tol(opt_hlp_obj(L), 6.0, 1e-9);
		ck_assert_double_eq_tol(opt_hlp_prim(L, x), 1.0, 1e-9);
		ck_assert(opt_hlp_row_basic(L, 2));
		/* deleting the slack row leaves the optimum; the cut is row 2 now */
		int del[2] = {0, 2};
		opt_hlp_del_rows(L, 1, del);
		ck_assert_int_eq(opt_hlp_rows(L), 2);
		ck_assert_int_eq(opt_hlp_solve(L, false, 5.0), 0);
		ck_assert_double_eq_tol(opt_hlp_obj(L), 6.0, 1e-9);
		ck_assert(!opt_hlp_row_basic(L, 2));
		/* an equality row x + y == 4 after it, read from index 1 as GLPK does */
		double v2[3] = {0, 1, 1};
		int i2[3] = {0, x, y};
		ck_assert_int_eq(opt_hlp_row(L, 4, 4, 2, i2, v2), 3);
		ck_assert_int_eq(opt_hlp_solve(L, false, 5.0), 0);
		ck_assert_double_eq_tol(opt_hlp_obj(L), 3.0 + 3.0 + 2.0, 1e-9); /* x = 3, y = 1 */
		opt_hlp_free(L);
	}
}
END_TEST

/* No point: x + y >= 2 with x <= 1.5 and y <= 0.25; the solve reports no optimum, on either solver,
 * the first time and after a round. */
START_TEST(no_optimum_without_a_point)
{
	for (int glpk = 0; glpk < 2; glpk++) {
		int x, y;
		struct opt_hlp *L = small(glpk, &x, &y);
		ck_assert_int_eq(opt_hlp_solve(L, true, 5.0), 0);
		int iy[2] = {0, y};
		double v1[2] = {0, 1};
		opt_hlp_row(L, -INFINITY, 0.25, 1, iy, v1);
		ck_assert_int_eq(opt_hlp_solve(L, false, 5.0), -1);
		opt_hlp_free(L);
		L = small(glpk, &x, &y);
		opt_hlp_row(L, -INFINITY, 0.25, 1, iy, v1);
		ck_assert_int_eq(opt_hlp_solve(L, true, 5.0), -1);
		ck_assert_int_eq(opt_hlp_solve(L, true, 0.0), -1); /* and no time at all: no solve */
		opt_hlp_free(L);
	}
}
END_TEST

/* A chain a -> b on pd_to_plat_acc (two cores, a GPU at one OPP): each task takes 3 ms on the CPU
 * (3.16 at U_max 0.95) or 2 ms on the GPU, D = 7 ms. Both on the GPU wait for each other (4 + 4 ms):
 * no plan; the cheapest plan runs one of them on the CPU. The hull's bound, on both of its LP
 * solvers, stays at or below that plan and above "both on the GPU": without the FIFO pairs each
 * request waited for itself alone (a 4-ms path), and the bound was that assignment's power. */
START_TEST(hull_sees_fifo_waits)
{
	pd_plan *plan = pd_to_load("dags:\n"
				   "  - name: v\n"
				   "    period: 10ms\n"
				   "    deadline: 7ms\n"
				   "    tasks:\n"
				   "      - {name: a, wcet: 3ms, accel: [{kind: gpu, latency: 2ms}]}\n"
				   "      - {name: b, wcet: 3ms, accel: [{kind: gpu, latency: 2ms}]}\n"
				   "    edges: [[a, b]]\n",
				   pd_to_plat_acc);
	struct opt_inst in;
	pd_err e = {0};
	ck_assert_msg(opt_inst_build(&in, pd_plan_dags(plan), pd_plan_platform(plan), 1e-5, &e) == 0, "%s", e.msg);
	in.rel_gap = 1e-4;
	struct opt_sol p;
	ck_assert_int_eq(opt_sol_init(&p, &in), 0);
	p.where[0] = p.where[1] = opt_where_server(0);
	char why[256] = "";
	ck_assert(!opt_evaluate(&in, &p, why, sizeof(why))); /* 8 ms > 7 ms */
	double both = opt_power_w(&in, &p);
	p.where[0] = 0, p.d_ns[0] = 4e6; /* a on the CPU (density 0.75), b alone on the GPU: 4 + 2 ms */
	ck_assert_msg(opt_evaluate(&in, &p, why, sizeof(why)), "a on the CPU: %s", why);
	for (int glpk = 0; glpk < 2; glpk++) {
		double h = opt_hull_bound_on(&in, opt_now_s() + 5.0, glpk, NULL);
		ck_assert_msg(h <= p.power_w * (1 + 1e-9), "glpk %d: hull %.9f W above the plan's %.9f W", glpk, h,
			      p.power_w);
		ck_assert_msg(h > both + 0.05, "glpk %d: hull %.9f W, both on the GPU %.9f W: no FIFO wait", glpk, h,
			      both);
	}
	opt_sol_free(&p);
	opt_inst_free(&in);
	pd_plan_free(plan);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hull_lp");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, solves_cuts_and_deletes);
	tcase_add_test(tc, no_optimum_without_a_point);
	tcase_add_test(tc, hull_sees_fifo_waits);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
