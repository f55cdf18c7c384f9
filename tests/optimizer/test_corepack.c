/* SPDX-License-Identifier: MIT */
/*
 * Exact core packing (optimizer/corepack.c) against brute force. On random small sets (three chains
 * of two or three tasks on one island of two cores) every core assignment is tried with the exact
 * deadline LP, and the packer's verdict must agree:
 * - "cannot be packed" (0) only when no assignment reaches a max density <= cap: its inner nodes
 *   run only a few Kelley rounds (CP_ROUNDS_INNER), and a node left without a verdict must be
 *   branched on, never counted as infeasible;
 * - "packed" (1) only when some assignment packs, with a plan that passes the exact evaluator;
 * - always a verdict (these sets are decided in milliseconds).
 * Both verdicts occur over the seeds, so neither direction is vacuous.
 */
#include "helper_opt.h"
#include "optimizer/checker/pd_check.h"
#include "optimizer/opt_impl.h"
#include "pd_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t next(uint64_t *r)
{
	*r = *r * 6364136223846793005ULL + 1442695040888963407ULL;
	return *r >> 33;
}

/* Three chains of 2-3 tasks, WCETs 0.3-1.8 ms, period 10 ms, as DAG YAML into buf. */
static void random_chains(uint64_t seed, char *buf, size_t n)
{
	uint64_t r = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t at = (size_t)snprintf(buf, n, "dags:\n");
	for (int g = 0; g < 3; g++) {
		int len = 2 + (int)(next(&r) % 2);
		at += (size_t)snprintf(buf + at, n - at, "  - name: g%d\n    period: 10ms\n    tasks:\n", g);
		for (int t = 0; t < len; t++)
			at += (size_t)snprintf(buf + at, n - at, "      - {name: t%d, wcet: %uus}\n", t,
					       300 + (unsigned)(next(&r) % 1501));
		at += (size_t)snprintf(buf + at, n - at, "    edges:\n");
		for (int t = 1; t < len; t++)
			at += (size_t)snprintf(buf + at, n - at, "      - [t%d, t%d]\n", t - 1, t);
	}
}

/* The smallest max density / cap over every core assignment (task 0 on core 0: the two cores are
 * interchangeable), each with the exact deadline LP. */
static double brute_min(const struct opt_inst *in, struct opt_sol *s)
{
	double best = INFINITY;
	size_t n = in->n_tasks;
	for (unsigned long m = 0; m < (1UL << (n - 1)); m++) {
		for (size_t i = 0; i < n; i++)
			s->where[i] = i == 0 ? 0 : (int)((m >> (i - 1)) & 1);
		best = fmin(best, opt_deadlines_lp(in, s, 0, opt_now_s() + 5.0));
	}
	return best;
}

/* One random set (random_chains(seed)) on platform plat, every island at OPP opp: its plan,
 * instance, a solution s with every task on the first island (the packers choose the cores) and one
 * b for brute force. */
struct rset {
	pd_plan *plan;
	struct opt_inst in;
	struct opt_sol s, b;
};

static void rset_load_on(struct rset *R, uint64_t seed, const char *plat, size_t opp)
{
	char yaml[4096];
	random_chains(seed, yaml, sizeof(yaml));
	R->plan = pd_to_load(yaml, plat);
	pd_err e = {0};
	ck_assert_msg(opt_inst_build(&R->in, pd_plan_dags(R->plan), pd_plan_platform(R->plan), 1e-5, &e) == 0, "%s",
		      e.msg);
	ck_assert_int_eq(opt_sol_init(&R->s, &R->in), 0);
	ck_assert_int_eq(opt_sol_init(&R->b, &R->in), 0);
	for (size_t k = 0; k < R->in.n_isl; k++)
		R->s.isl_opp[k] = R->b.isl_opp[k] = opp;
	for (size_t i = 0; i < R->in.n_tasks; i++)
		R->s.where[i] = 0;
}

/* The same on pd_to_plat2 (one island of two cores). */
static void rset_load(struct rset *R, uint64_t seed, size_t opp)
{
	rset_load_on(R, seed, pd_to_plat2, opp);
}

static void rset_free(struct rset *R)
{
	opt_sol_free(&R->s);
	opt_sol_free(&R->b);
	opt_inst_free(&R->in);
	pd_plan_free(R->plan);
}

/* Holds a packer's verdict r on set `seed` (s: what it wrote) against brute force's smallest max
 * density m: a verdict at all, "cannot be packed" only where no assignment fits, "packed" only where
 * one does, with a plan the exact evaluator accepts; counts it. */
static void hold_verdict(const char *who, uint64_t seed, int r, double m, const struct opt_inst *in,
			 struct opt_sol *s, int *packed, int *unpackable)
{
	unsigned long long sd = (unsigned long long)seed;
	ck_assert_msg(r >= 0, "seed %llu: %s: no verdict", sd, who);
	if (r == 0) {
		ck_assert_msg(m > 1.0 - 1e-9, "seed %llu: %s says unpackable, an assignment has %.6f", sd, who, m);
		(*unpackable)++;
	} else {
		ck_assert_msg(m <= 1.0 + 1e-4, "seed %llu: %s packed, brute force best %.6f", sd, who, m);
		ck_assert(opt_evaluate(in, s, NULL, 0));
		(*packed)++;
	}
}

/* Packs every random set at island OPP opp and holds each verdict against brute force; counts them. */
static void check_verdicts(size_t opp, int *packed, int *unpackable)
{
	for (uint64_t seed = 1; seed <= 24; seed++) {
		struct rset R;
		rset_load(&R, seed, opp);
		int r = opt_corepack(&R.in, &R.s, opt_now_s() + 10.0);
		hold_verdict("corepack", seed, r, brute_min(&R.in, &R.b), &R.in, &R.s, packed, unpackable);
		rset_free(&R);
	}
}

START_TEST(verdicts_match_brute_force)
{
	int packed = 0, unpackable = 0;
	check_verdicts(1, &packed, &unpackable); /* 1000 MHz */
	printf("corepack: %d packed, %d unpackable\n", packed, unpackable);
	ck_assert_int_ge(packed, 3);
	ck_assert_int_ge(unpackable, 3);
}
END_TEST

/* At 500 MHz every WCET doubles: most sets no longer fit, many already in the root LP (the island's
 * density row or a path), which corepack now solves first to order the tasks by their LP densities;
 * an infeasible root must be the verdict "unpackable" (0), never "not decided", and a feasible one
 * must still be decided right with the tasks in that order. */
START_TEST(verdicts_match_brute_force_slow_opp)
{
	int packed = 0, unpackable = 0;
	check_verdicts(0, &packed, &unpackable);
	printf("corepack at 500 MHz: %d packed, %d unpackable\n", packed, unpackable);
	ck_assert_int_ge(packed, 1);
	ck_assert_int_ge(unpackable, 12);
}
END_TEST

/* pd_to_plat2's island split into two identical one-core islands (symmetry.c: twins). */
static const char twin_plat[] = "platform:\n"
				"  name: twins\n"
				"  reference_frequency: 1000MHz\n"
				"  base_power: 1W\n"
				"  dl: {max_util_per_cpu: 0.95, job_overhead: 0ns}\n"
				"  islands:\n"
				"    - {name: a, cpus: [0], opps: [{freq: 500MHz, busy: 300mW, idle: 100mW}, {freq: 1000MHz, busy: 1W, idle: 200mW}]}\n"
				"    - {name: b, cpus: [1], opps: [{freq: 500MHz, busy: 300mW, idle: 100mW}, {freq: 1000MHz, busy: 1W, idle: 200mW}]}\n";

/* Identical islands at one OPP share their cores in opt_corepack_pooled (the branch and bound's leaves
 * on Xavier, where a "cannot be packed" becomes a no-good on the pool: every split of those tasks
 * between the twins). On the random sets with every task on the first twin, its verdict must match
 * brute force over both cores (each assignment with the exact deadline LP), and some sets that do
 * not fit the first twin's core alone (opt_corepack) fit the pool. At different OPPs there is no
 * pool: the verdict is the single core's. */
START_TEST(pooled_twins_match_brute_force)
{
	int packed = 0, unpackable = 0, pool_only = 0;
	for (uint64_t seed = 1; seed <= 24; seed++) {
		struct rset R;
		rset_load_on(&R, seed, twin_plat, 1);
		ck_assert_int_eq(opt_twin_pairs(&R.in), 1);
		/* every task on the first twin; the pool's two cores are open to every task */
		int alone = opt_corepack(&R.in, &R.s, opt_now_s() + 10.0);
		ck_assert_msg(alone >= 0, "seed %llu: no verdict alone", (unsigned long long)seed);
		for (size_t i = 0; i < R.in.n_tasks; i++)
			R.s.where[i] = 0;
		int r = opt_corepack_pooled(&R.in, &R.s, true, opt_now_s() + 10.0);
		int was_packed = packed;
		/* cores 0 and 1 are the two islands' */
		hold_verdict("pooled", seed, r, brute_min(&R.in, &R.b), &R.in, &R.s, &packed, &unpackable);
		if (r == 0)
			ck_assert_int_eq(alone, 0);
		pool_only += packed > was_packed && alone == 0;
		/* different OPPs: no pool, the first twin's core alone */
		R.s.isl_opp[1] = 0;
		for (size_t i = 0; i < R.in.n_tasks; i++)
			R.s.where[i] = 0;
		ck_assert_int_eq(opt_corepack_pooled(&R.in, &R.s, true, opt_now_s() + 10.0), alone);
		rset_free(&R);
	}
	printf("pooled corepack: %d packed (%d only with the pool), %d unpackable\n", packed, pool_only, unpackable);
	ck_assert_int_ge(pool_only, 3);
	ck_assert_int_ge(unpackable, 1);
}
END_TEST

/* Two islands of two cores each (different power: no twins). */
static const char two_isl_plat[] = "platform:\n"
				   "  name: two-islands\n"
				   "  reference_frequency: 1000MHz\n"
				   "  base_power: 1W\n"
				   "  dl: {max_util_per_cpu: 0.95, job_overhead: 0ns}\n"
				   "  islands:\n"
				   "    - {name: a, cpus: [0, 1], opps: [{freq: 500MHz, busy: 300mW, idle: 100mW}, {freq: 1000MHz, busy: 1W, idle: 200mW}]}\n"
				   "    - {name: b, cpus: [2, 3], opps: [{freq: 500MHz, busy: 310mW, idle: 110mW}, {freq: 1000MHz, busy: 1.1W, idle: 210mW}]}\n";

/* The smallest max density / cap over every core assignment that keeps each task on its island
 * (where[i]: the island's first core; each island's first task on that core), each with the exact
 * deadline LP. */
static double brute_min_islands(const struct opt_inst *in, const int *isl_of, struct opt_sol *s)
{
	size_t n = in->n_tasks, free_bits = 0, first[2] = {SIZE_MAX, SIZE_MAX};
	for (size_t i = 0; i < n; i++)
		if (first[isl_of[i]] == SIZE_MAX)
			first[isl_of[i]] = i;
		else
			free_bits++;
	double best = INFINITY;
	for (unsigned long m = 0; m < (1UL << free_bits); m++) {
		size_t b = 0;
		for (size_t i = 0; i < n; i++) {
			int c0 = (int)in->isl_core0[isl_of[i]];
			s->where[i] = i == first[isl_of[i]] ? c0 : c0 + (int)((m >> b++) & 1);
		}
		best = fmin(best, opt_deadlines_lp(in, s, 0, opt_now_s() + 5.0));
	}
	return best;
}

/* Random set `seed` on two_isl_plat (island OPP 0 every third seed, else 1), split over the two
 * islands: the first chain and every other task of the rest on island a (isl_of[i], 16 entries),
 * each task on its island's first core in R->s. */
static void rset_two_islands(struct rset *R, uint64_t seed, int *isl_of)
{
	rset_load_on(R, seed, two_isl_plat, seed % 3 ? 1 : 0);
	ck_assert_uint_le(R->in.n_tasks, 16);
	size_t chain0 = pd_dags_dag(pd_plan_dags(R->plan), 0)->n_tasks;
	for (size_t i = 0; i < R->in.n_tasks; i++) {
		isl_of[i] = i < chain0 || i % 2 ? 0 : 1;
		R->s.where[i] = (int)R->in.isl_core0[isl_of[i]];
	}
}

/*
 * Projections (corepack.c, project_pool): each island's tasks packed with the other island's left
 * to its density row. On random three-chain sets split over two islands of two cores (the first
 * chain and every other task of the rest on island a), "some island alone cannot be packed" (0) must
 * mean that brute force over both islands' cores finds no packing, and it must happen (sets where
 * island a is over-full alone); opt_corepack's verdict on the whole must match brute force too.
 */
START_TEST(projections_match_brute_force)
{
	int proj0 = 0, packed = 0, unpackable = 0;
	for (uint64_t seed = 1; seed <= 24; seed++) {
		struct rset R;
		int isl_of[16];
		rset_two_islands(&R, seed, isl_of);
		int p = opt_corepack_project(&R.in, &R.s, opt_now_s() + 10.0);
		for (size_t i = 0; i < R.in.n_tasks; i++)
			R.s.where[i] = (int)R.in.isl_core0[isl_of[i]];
		int r = opt_corepack(&R.in, &R.s, opt_now_s() + 10.0);
		double m = brute_min_islands(&R.in, isl_of, &R.b);
		if (p == 0) {
			ck_assert_msg(m > 1.0 - 1e-9, "seed %llu: a projection says unpackable, an assignment has %.6f",
				      (unsigned long long)seed, m);
			ck_assert_int_eq(r, 0);
			proj0++;
		}
		hold_verdict("corepack", seed, r, m, &R.in, &R.s, &packed, &unpackable);
		rset_free(&R);
	}
	printf("projections: %d proven by one island, %d unpackable, %d packed\n", proj0, unpackable, packed);
	ck_assert_int_ge(proj0, 2);
	ck_assert_int_ge(packed, 3);
}
END_TEST

/* Whether no island assignment of the tasks that cut leaves free (each to either island; the kept
 * ones where cut puts them) packs: brute force over every core assignment of each. */
static bool cut_holds(const struct opt_inst *in, const int *cut, struct opt_sol *b)
{
	size_t n = in->n_tasks, fr[16], nf = 0;
	int isl_of[16];
	for (size_t i = 0; i < n; i++)
		if (cut[i] == OPT_WHERE_ANY)
			fr[nf++] = i;
		else
			isl_of[i] = (int)in->core_isl[cut[i]];
	for (unsigned long m = 0; m < (1UL << nf); m++) {
		for (size_t f = 0; f < nf; f++)
			isl_of[fr[f]] = (int)((m >> f) & 1);
		if (brute_min_islands(in, isl_of, b) <= 1.0 - 1e-9)
			return false;
	}
	return true;
}

/*
 * Cuts (opt_corepack_cut): on the random two-island sets that cannot be packed, the set of tasks a
 * cut keeps must not pack wherever the freed tasks go (brute force over their islands and every
 * core assignment), each kept task where the assignment had it. Cuts smaller than the assignment
 * must occur (tight chains on island a, the others free), or the test would only see whole
 * assignments.
 */
START_TEST(cuts_hold_wherever_the_free_tasks_go)
{
	int cuts = 0, smaller = 0, unpackable = 0;
	for (uint64_t seed = 1; seed <= 40; seed++) {
		struct rset R;
		int isl_of[16], cut[16];
		rset_two_islands(&R, seed, isl_of);
		if (brute_min_islands(&R.in, isl_of, &R.b) <= 1.0) {
			rset_free(&R);
			continue;
		}
		unpackable++;
		int r = opt_corepack_cut(&R.in, &R.s, false, cut, opt_now_s() + 10.0);
		ck_assert_int_ge(r, 0);
		if (r == 0) {
			size_t kept = 0;
			for (size_t i = 0; i < R.in.n_tasks; i++)
				if (cut[i] != OPT_WHERE_ANY) {
					ck_assert_int_eq(cut[i], (int)R.in.isl_core0[isl_of[i]]);
					kept++;
				}
			ck_assert_uint_ge(kept, 1);
			ck_assert_msg(cut_holds(&R.in, cut, &R.b), "seed %llu: a cut of %zu tasks packs somewhere",
				      (unsigned long long)seed, kept);
			cuts++;
			smaller += kept < R.in.n_tasks;
		}
		rset_free(&R);
	}
	printf("cuts: %d unpackable, %d cut, %d smaller than the assignment\n", unpackable, cuts, smaller);
	ck_assert_int_ge(smaller, 2);
}
END_TEST

/* The plan's own check, computed here from its floored deadlines: every CPU task on a core of the
 * island it was given (island_core0: that island's first core, as the leaf gave it), every core's
 * density sum Q / dl within cap_raw; the exact evaluator on top (paths, floors, servers). */
static void assert_packed(const struct opt_inst *in, struct opt_sol *s, const int *island_core0)
{
	double load[64] = {0};
	ck_assert_uint_le(in->n_cores, 64);
	ck_assert(opt_evaluate(in, s, NULL, 0));
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (s->where[i] < 0)
			continue;
		ck_assert_uint_eq(in->core_isl[s->where[i]], in->core_isl[island_core0[i]]);
		ck_assert_int_gt(s->dl_ns[i], 0);
		load[s->where[i]] += (double)opt_exec_ns(in, s, i) / (double)s->dl_ns[i];
	}
	for (size_t c = 0; c < in->n_cores; c++)
		ck_assert_msg(load[c] <= in->cap_raw + 1e-12, "core %zu at %.9f over %.9f", c, load[c], in->cap_raw);
}

/* Leaves of the branch and bound on XU4 bench sets (DAGs of 10 tasks, the bench's shape), islands
 * LITTLE (cores 0-3) and big (4-7) at the OPPs given; each must be packed within the branch and
 * bound's 2 s, with plans that hold every core within cap_raw.
 * - Two 30-task leaves, both islands full to about 3.59 of 3.60 cores in the LP. The exact search
 *   alone did not decide them in 2 s; given longer it packed them after 210 s (seed 219985) and 11 s
 *   (seed 3024769). The heuristic packer (corepack_search.c) in between packs them.
 * - A 20-task leaf (seed 4789763) whose big island is at 3.6000 of 3.60 cores in the LP, which the
 *   heuristic packer does not pack in 3 s: the exact search packs it with best fit and the fullest
 *   island first (0.74 s here; 5 s allowed, so that a loaded CI machine does not decide), with worst
 *   fit and densest first across islands in 7.3 s (fails here). */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED_BUILD 1
#endif
#endif
#ifndef SANITIZED_BUILD
#define SANITIZED_BUILD 0
#endif

START_TEST(tight_xu4_leaves_pack_in_2_s)
{
	static const struct {
		uint64_t seed;
		unsigned n_dags;
		double limit_s; /* the branch and bound's 2 s, or more where CI's load must not decide */
		size_t opp[2];
		const char *where; /* per task: 0 LITTLE, 4 big (the island's first core) */
	} leaves[] = {
		{219985, 3, 2.0, {2, 3}, "4 0 4 0 4 4 4 4 0 4 4 0 0 0 0 0 4 0 0 0 4 4 4 4 0 0 4 4 4 4"},
		{3024769, 3, 2.0, {3, 2}, "4 4 4 4 0 4 4 4 4 4 0 0 0 0 0 0 0 0 0 4 0 4 4 0 0 4 0 0 0 4"},
		{4789763, 2, 5.0, {1, 2}, "4 4 4 4 4 4 0 0 0 4 0 0 0 4 0 0 4 0 0 4"},
	};
	for (size_t q = 0; q < sizeof(leaves) / sizeof(leaves[0]); q++) {
		pd_plan *plan = pd_to_bench_set(leaves[q].n_dags, 10, leaves[q].seed, "platforms/odroid-xu4.yaml");
		struct opt_inst in;
		struct opt_sol s;
		pd_err e = {0};
		size_t nt = 10 * leaves[q].n_dags;
		ck_assert_msg(opt_inst_build(&in, pd_plan_dags(plan), pd_plan_platform(plan), 1e-5, &e) == 0, "%s", e.msg);
		ck_assert_uint_eq(in.n_tasks, nt);
		ck_assert_uint_eq(in.n_cores, 8);
		ck_assert_int_eq(opt_sol_init(&s, &in), 0);
		s.isl_opp[0] = leaves[q].opp[0];
		s.isl_opp[1] = leaves[q].opp[1];
		int given[30];
		const char *p = leaves[q].where;
		for (size_t i = 0; i < nt; i++)
			given[i] = s.where[i] = (int)strtol(p, (char **)&p, 10);
		double t0 = opt_now_s();
		int r = opt_corepack_pooled(&in, &s, false, t0 + leaves[q].limit_s);
		printf("leaf of seed %llu: verdict %d in %.3f s\n", (unsigned long long)leaves[q].seed, r, opt_now_s() - t0);
		/* The 2 s are the normal build's promise. A sanitized build runs the packer's fixed 0.1-s
		 * local search several times slower (beside another test on a 2-CPU CI machine it once
		 * left a leaf undecided): there only a wrong verdict fails. */
		if (r == -1 && SANITIZED_BUILD) {
			printf("  undecided in 2 s under the sanitizers (the normal build must pack it)\n");
		} else {
			ck_assert_int_eq(r, 1);
			assert_packed(&in, &s, given);
		}
		opt_sol_free(&s);
		opt_inst_free(&in);
		pd_plan_free(plan);
	}
}
END_TEST

/* The heuristic packer alone on the random sets, from the fast rules' island-level deadlines
 * (path-feasible by construction): every packing it claims must hold against the plan's own check
 * and against brute force (some core assignment packs), it must never claim one where brute force
 * finds none, and it must find some. */
START_TEST(heuristic_never_claims_what_does_not_pack)
{
	int packed = 0, refused = 0;
	for (size_t opp = 0; opp < 2; opp++)
		for (uint64_t seed = 1; seed <= 24; seed++) {
			struct rset R;
			rset_load(&R, seed, opp);
			struct opt_inst in = R.in;
			struct opt_sol s = R.s, b = R.b;
			int given[16] = {0};
			ck_assert_uint_le(in.n_tasks, 16);
			struct opt_ws *w = opt_ws_new(&in);
			ck_assert_ptr_nonnull(w);
			double fast = opt_deadlines_fast(&in, &s, w, 0, 4);
			opt_ws_free(w);
			double m = brute_min(&in, &b);
			if (fast < OPT_PATH_INFEASIBLE) {
				size_t pool[1] = {0};
				int r = opt_corepack_search(&in, &s, pool, seed, opt_now_s() + 0.05);
				ck_assert(r == 1 || r == -1);
				if (r == 1) {
					ck_assert_msg(m <= 1.0 + 1e-4, "seed %llu: packed where brute force has %.6f",
						      (unsigned long long)seed, m);
					assert_packed(&in, &s, given);
					packed++;
				} else if (m > 1.0) {
					refused++;
				}
			}
			R.s = s; /* the packer may have written through s: free what it holds */
			rset_free(&R);
		}
	printf("corepack_search: %d packed, %d refused (brute force: none packs)\n", packed, refused);
	ck_assert_int_ge(packed, 4);
	ck_assert_int_ge(refused, 6);
}
END_TEST

/* The heuristic packer over a pool of twins (the branch and bound's pooled leaves above 20 tasks,
 * corepack.c): on the twin platform at one OPP with every task on the first twin and both islands
 * in one pool, each packing it claims must hold (evaluator, cores within cap_raw, brute force over
 * both cores agrees that one exists), and it must use the second twin's core where the first alone
 * cannot hold the set (some sets are such). */
START_TEST(heuristic_packs_over_a_pool_of_twins)
{
	int packed = 0, pool_only = 0;
	for (uint64_t seed = 1; seed <= 24; seed++) {
		struct rset R;
		rset_load_on(&R, seed, twin_plat, 1);
		ck_assert_int_eq(opt_twin_pairs(&R.in), 1);
		struct opt_ws *w = opt_ws_new(&R.in);
		ck_assert_ptr_nonnull(w);
		double fast = opt_deadlines_fast(&R.in, &R.s, w, 0, 4);
		opt_ws_free(w);
		for (size_t i = 0; i < R.in.n_tasks; i++)
			R.b.where[i] = 0;
		double alone = opt_deadlines_lp(&R.in, &R.b, 0, opt_now_s() + 5.0); /* every task on core 0 */
		double m = brute_min(&R.in, &R.b);
		size_t pool[2] = {0, 0};
		int r = -1;
		if (fast < OPT_PATH_INFEASIBLE)
			r = opt_corepack_search(&R.in, &R.s, pool, seed, opt_now_s() + 0.2);
		ck_assert(r == 1 || r == -1);
		if (r == 1) {
			unsigned long long sd = (unsigned long long)seed;
			ck_assert_msg(m <= 1.0 + 1e-4, "seed %llu: packed where brute force has %.6f", sd, m);
			int given[16] = {0}; /* either twin: each task is held to its own core's island */
			ck_assert_uint_le(R.in.n_tasks, 16);
			for (size_t i = 0; i < R.in.n_tasks; i++)
				given[i] = R.s.where[i];
			assert_packed(&R.in, &R.s, given);
			packed++;
			bool second = false;
			for (size_t i = 0; i < R.in.n_tasks; i++)
				second = second || R.s.where[i] == 1;
			if (alone > 1.0) {
				ck_assert_msg(second, "seed %llu: the first core alone cannot hold it", sd);
				pool_only++;
			}
		}
		rset_free(&R);
	}
	printf("corepack_search over a pool: %d packed, %d of them only with both twins\n", packed, pool_only);
	ck_assert_int_ge(pool_only, 3);
}
END_TEST

/* The whole exact mode on the bench's XU4 30-task set of seed 219985: before the heuristic packer it
 * ended every 10 s run at 2.50168 W (0.15-0.2 % open), one leaf's packing undecided; that leaf packs,
 * and the optimum is 2.49814 W. The plan must be at most 2.4990 W and pass the independent checker. */
START_TEST(exact_mode_reaches_the_packed_leaf_plan)
{
	pd_plan *plan = pd_to_bench_set(3, 10, 219985, "platforms/odroid-xu4.yaml");
	struct pd_opt_params p;
	pd_opt_defaults(&p);
	p.time_limit_s = 10;
	struct pd_opt_result r;
	pd_err e = {0};
	ck_assert_msg(pd_optimize(plan, &p, &r, &e) == 0, "%s", e.msg);
	printf("XU4 30 tasks seed 219985: %.6f W, bound %.6f W\n", r.power_w, r.lower_bound_w);
	ck_assert_double_le(r.power_w, 2.4990);
	ck_assert_double_ge(r.power_w, 2.4981);
	ck_assert_double_le(r.lower_bound_w, r.power_w + 1e-9);
	pd_check_report *cr = pd_check_plan(plan, &e);
	ck_assert_ptr_nonnull(cr);
	ck_assert_msg(cr->schedulable, "the checker rejects the plan");
	pd_check_report_free(cr);
	pd_plan_free(plan);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("optimizer_corepack");
	TCase *tc = tcase_create("corepack");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, verdicts_match_brute_force);
	tcase_add_test(tc, verdicts_match_brute_force_slow_opp);
	tcase_add_test(tc, pooled_twins_match_brute_force);
	tcase_add_test(tc, heuristic_packs_over_a_pool_of_twins);
	tcase_add_test(tc, projections_match_brute_force);
	tcase_add_test(tc, cuts_hold_wherever_the_free_tasks_go);
	tcase_add_test(tc, tight_xu4_leaves_pack_in_2_s);
	tcase_add_test(tc, heuristic_never_claims_what_does_not_pack);
	tcase_add_test(tc, exact_mode_reaches_the_packed_leaf_plan);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
