/* SPDX-License-Identifier: MIT */
/*
 * The path Lagrangian's "no plan" proofs (optimizer/pathlag.c) against brute force: three identical
 * one-core islands with four OPPs, a chain of three tasks and one independent task, where the chain's
 * deadline decides as much as the capacity. For a fixed assignment the best deadlines are known in
 * closed form (the independent task at its longest deadline; on each core the chain's tasks at
 * d_i ~ sqrt(C_i), which gives the shortest chain for the room the core has left: the chain fits
 * iff sum over its cores (sum sqrt C)^2 / room <= D), so every canonical vector is decided exactly.
 * Every proof must be at a vector without a plan, and it must prove some of them.
 */
#include "helper_opt.h"
#include "optimizer/opt_impl.h"
#include "pd_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Whether the four tasks (chain a -> b -> c, then x) fit at the OPPs of s with task i on island
 * isl[i]: per-core densities at most cap_raw, the chain within its deadline. */
static bool assignment_fits(const struct opt_inst *in, const struct opt_sol *s, const int *isl)
{
	double room[3], sq[3] = {0, 0, 0};
	for (size_t k = 0; k < 3; k++)
		room[k] = in->cap_raw;
	size_t k = (size_t)isl[3];
	double Cx = (double)runtime_at(in, 3, k, s->isl_opp[k]);
	if (Cx / in->cap_raw > opt_longest_d(in, 3))
		return false;
	room[k] -= Cx / opt_longest_d(in, 3);
	for (size_t i = 0; i < 3; i++) {
		k = (size_t)isl[i];
		sq[k] += sqrt((double)runtime_at(in, i, k, s->isl_opp[k]));
	}
	double len = 0;
	for (k = 0; k < 3; k++) {
		if (sq[k] == 0)
			continue;
		if (room[k] <= 0)
			return false;
		len += sq[k] * sq[k] / room[k];
	}
	return len <= (double)in->D_ns[0];
}

START_TEST(proofs_only_where_no_plan)
{
	pd_plan *plan = pd_to_load("dags:\n"
				   "  - name: ch\n    period: 10ms\n    deadline: 10ms\n"
				   "    tasks: [{name: a, wcet: 1500us}, {name: b, wcet: 1ms}, {name: c, wcet: 1200us}]\n"
				   "    edges: [[a, b], [b, c]]\n"
				   "  - {name: x, period: 10ms, tasks: [{name: t, wcet: 3ms}]}\n",
				   pd_to_plat_three);
	struct opt_inst in;
	pd_err e = {0};
	ck_assert_msg(opt_inst_build(&in, pd_plan_dags(plan), pd_plan_platform(plan), 1e-5, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(in.n_tasks, 4);
	struct opt_sol s;
	ck_assert_int_eq(opt_sol_init(&s, &in), 0);
	size_t ids[64];
	size_t nc = opt_canonical_vectors(&in, ids, 64);
	ck_assert_uint_eq(nc, 20);
	struct opt_pathlag *P = opt_pathlag_new(&in);
	ck_assert_ptr_nonnull(P);
	size_t without = 0, proved = 0;
	/* twice over the vectors: the second pass starts from the multipliers the first left */
	for (int pass = 0; pass < 2; pass++)
		for (size_t c = 0; c < nc; c++) {
			opt_vector_decode(&in, &s, ids[c]);
			bool plan_exists = false;
			for (int a = 0; a < 81 && !plan_exists; a++) {
				int isl[4], x = a;
				for (size_t i = 0; i < 4; i++, x /= 3)
					isl[i] = x % 3;
				plan_exists = assignment_fits(&in, &s, isl);
			}
			bool none = opt_pathlag_no_plan(P, &s, 60, opt_now_s() + 30.0);
			ck_assert_msg(!none || !plan_exists, "(%zu %zu %zu): proof of no plan, but one exists", s.isl_opp[0],
				      s.isl_opp[1], s.isl_opp[2]);
			if (pass == 0) {
				without += !plan_exists;
				proved += none;
			}
		}
	/* at 250 MHz the chain alone needs (sqrt 6 + sqrt 4 + sqrt 4.8)^2 / 0.95 ms on one core or
	 * (6 + 4 + 4.8) / 0.95 ms spread: over 10 ms either way; the capacity alone would allow it */
	ck_assert_uint_eq(without, 7);
	ck_assert_msg(proved >= 6, "%zu of the 7 vectors without a plan proved", proved);
	opt_pathlag_free(P);
	opt_sol_free(&s);
	opt_inst_free(&in);
	pd_plan_free(plan);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("optimizer_pathlag");
	TCase *tc = tcase_create("pathlag");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, proofs_only_where_no_plan);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
