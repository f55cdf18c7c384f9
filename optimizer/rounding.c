/* SPDX-License-Identifier: MIT */
/*
 * LP rounding (incumbents, not bounds; docs/MODEL.md, "Exact", LP rounding): at one OPP vector every
 * task goes to its largest share of the screening LP (screen.c) solved with some capacity held back,
 * and opt_round_pack makes a plan of it. A better incumbent closes more vectors. Holding back more
 * only makes the LP worse, so once a share leaves no LP plan below the cut-off, only the shares
 * between it and the last one whose rounding did not pack are left: bisection, ROUND_BISECT steps.
 *
 * Above the per-core sizes, where capacity held back on every island leaves no LP plan before any
 * rounding packs, it is held back on one island at a time, island by island. Why: at the cheapest
 * open vector of XU4 120-task sets the LP fills both islands to within 0.1 % and its rounding does
 * not pack (the deadline LP spreads the overload over both islands' fullest cores); with 0.125 % held
 * back on both the LP has no plan, with 0.125 % held back on LITTLE alone its rounding packs (seed
 * 11520000: 4.1725 W, proven optimal, where the plan had been the next vector's 4.2235 W, 1.2 %).
 * Where none of those packs either, an LP dive (dive below), with 0 and then 1 % held back.
 *
 * Used by the vector search (master.c, at the vectors with the smallest bounds) and by the hull's
 * vector search (hull_plans.c, at the vectors the OPP hull points to).
 */
#include "optimizer/master_impl.h"

#include <stdlib.h>
#include <string.h>

/* Capacity held back, in turn, when rounding a vector's LP: the LP optimum fills the islands to the
 * last bit and its rounding then rarely packs onto cores. The first share that packs is kept. */
static const double round_shrink[] = {0, 0.01, 0.02, 0.03, 0.045, 0.06, 0.08};

/* Halvings of the interval between the last share whose rounding did not pack and the next one,
 * which leaves no LP plan below the cut-off. XU4, 120 tasks (seed 5113962): the LP of the cheapest
 * open vector is infeasible with 1 % (and 0.5 %) held back and its rounding at 0 % does not pack;
 * at 0.25 % it packs, 4.8141 W where the search had ended at 5.1754 W (gap 7.1 %, the plan's). */
#define ROUND_BISECT 3

/* Capacity held back, in turn, by the LP dives at a vector whose roundings did not pack (dive). */
static const double dive_hold[] = {0, 0.01};

/* Makes a plan of a rounded screening LP (s->where: island core 0 or server): its deadlines are the
 * LP's, packed exactly (opt_pack_given, which keeps every task on its island); failing that and
 * when repair is set, the heuristic's own packing and repair (which may move tasks elsewhere). */
bool opt_round_pack(const struct opt_inst *in, struct opt_screen *scr, struct opt_sol *s, struct opt_ws *w, double dl,
		    bool repair)
{
	for (size_t i = 0; i < in->n_tasks; i++) {
		double t;
		if (s->where[i] >= 0 && opt_screen_deadline(scr, i, in->core_isl[s->where[i]], &t))
			s->d_ns[i] = t * 1e6;
		else if (s->where[i] >= 0)
			s->d_ns[i] = opt_longest_d(in, i);
	}
	double r = opt_pack_given(in, s, w, dl);
	bool ok = r <= 1.0 && opt_evaluate(in, s, NULL, 0);
	/* opt_pack_given moved tasks between cores of their pools only, and opt_pack starts again
	 * from the islands: no copy of the assignment is needed */
	if (!ok && repair)
		ok = opt_heur_polish(in, s, dl);
	return ok;
}

/* A rounding's packing (with the heuristic's repair) gets at most this long (s). */
#define ROUND_PACK_S 2.0

int opt_round_current(const struct opt_inst *in, struct opt_screen *scr, struct opt_sol *s, struct opt_ws *w,
		      struct opt_sol *inc, double dl)
{
	opt_screen_round(scr, s->where);
	if (!opt_round_pack(in, scr, s, w, fmin(dl, opt_now_s() + ROUND_PACK_S), true))
		return 1;
	if (!inc->ok || s->power_w < inc->power_w)
		opt_sol_copy(inc, s, in);
	return 2;
}

/* One LP rounding at vector s with the share frac of the capacity held back on the islands with
 * isl[k] (every island: isl NULL): 2 packed (inc updated if cheaper), 1 rounded but not packed, 0 no
 * LP optimum in time, -1 no LP plan below the cut-off. */
static int round_at(const struct opt_inst *in, struct opt_screen *scr, struct opt_sol *s, struct opt_ws *w,
		    struct opt_sol *inc, double frac, const bool *isl, double cut, double dl)
{
	bool inf;
	opt_screen_shrink(scr, frac, isl);
	double b = opt_screen_vector(scr, s, INFINITY, dl, &inf);
	opt_screen_shrink(scr, 0, NULL);
	if (inf || b >= cut)
		return -1;
	/* a loop the clock cut short has no optimum to round (opt_screen_at_optimum) */
	return isfinite(b) && opt_screen_at_optimum(scr) ? opt_round_current(in, scr, s, w, inc, dl) : 0;
}

/* The roundings at vector s with the shares held back in turn on the islands isl (NULL: all), and
 * bisect halvings between the last share whose rounding did not pack and the first that leaves no LP
 * plan below the cut-off. Returns 2 when a rounding packed, 1 when some LP had a plan and none of its
 * roundings packed, else 0. */
static int round_shares(const struct opt_inst *in, struct opt_screen *scr, struct opt_sol *s, struct opt_ws *w,
			struct opt_sol *inc, const bool *isl, int bisect, double cut, double dl)
{
	double lo = -1; /* the largest share held back whose rounding did not pack */
	for (size_t r = 0; r < sizeof(round_shrink) / sizeof(round_shrink[0]) && opt_now_s() < dl; r++) {
		int v = round_at(in, scr, s, w, inc, round_shrink[r], isl, cut, dl);
		if (v == 2)
			return 2;
		if (v == 1)
			lo = round_shrink[r];
		if (v >= 0)
			continue;
		double hi = round_shrink[r];
		for (int h = 0; h < bisect && lo >= 0 && opt_now_s() < dl; h++) {
			double mid = 0.5 * (lo + hi);
			v = round_at(in, scr, s, w, inc, mid, isl, cut, dl);
			if (v == 2)
				return 2;
			if (v == 0)
				break;
			if (v == 1)
				lo = mid;
			else
				hi = mid;
		}
		break;
	}
	return lo >= 0;
}

/* The free task of the screening LP at s whose largest share is smallest, if below 1 (else -1), with
 * that option and the one of its next largest share (-1 if none). */
static long most_split(const struct opt_screen *S, const struct opt_inst *in, const long *fixed, long *o1, long *o2)
{
	long pick = -1;
	double low = 1 - 1e-6;
	for (size_t i = 0; i < in->n_tasks; i++) {
		double a = -1, b = -1;
		long oa = -1, ob = -1;
		for (size_t q = 0; fixed[i] < 0 && q < in->n_isl + in->n_srv; q++) {
			double x = opt_screen_share(S, i, q);
			if (x > a)
				b = a, ob = oa, a = x, oa = (long)q;
			else if (x > b)
				b = x, ob = (long)q;
		}
		if (oa >= 0 && a < low)
			low = a, pick = (long)i, *o1 = oa, *o2 = b > 1e-9 ? ob : -1;
	}
	return pick;
}

/*
 * LP diving at vector s (above the per-core sizes, where its roundings did not pack): the free task
 * whose largest share is smallest is fixed to that option and the LP solved again, until the LP
 * optimum is integral, which is then packed as a rounding is (opt_mst_round_pack). Where a fix leaves
 * no LP plan below the cut-off, the task's next option is tried instead, once; failing that the dive
 * ends. frac of every island's capacity is held back. Returns 2 when it packed (inc updated if
 * cheaper), else 1. The LP's fixings and capacity are restored before it returns.
 *
 * Why: a rounding moves every split task to its larger share at once. Where tasks are few and dense,
 * one such task overfills an island by several per cent whatever share is held back: XU4, 40
 * independent tasks (`gen --dags 40 --tasks 1 --util 2 --min-wcet 20us --seed 5`), the cheapest open
 * vector (LITTLE 5, big 7) rounds to LITTLE at 1.058 of its cores, and the search ended at 4.0180 W
 * with a 0.86 % gap. A dive there makes 23 tasks integral one at a time with the LP keeping both
 * islands within capacity (0.978 and 1.000) and packs: 3.9858 W, 0.054 %. Worst-fit decreasing alone
 * left that island's cores at 0.94-1.004; the exchanges in opt_pack_given level them.
 */
static int dive(const struct opt_inst *in, struct opt_screen *scr, struct opt_sol *s, struct opt_ws *w,
		struct opt_sol *inc, double frac, double dl)
{
	long *fixed = malloc(in->n_tasks * sizeof(long));
	if (!fixed)
		return 1;
	for (size_t i = 0; i < in->n_tasks; i++)
		fixed[i] = -1;
	bool inf;
	int got = 1;
	opt_screen_shrink(scr, frac, NULL);
	double b = opt_screen_vector(scr, s, INFINITY, dl, &inf);
	while (!inf && isfinite(b) && b < cut_w(in, inc) && opt_screen_at_optimum(scr) && opt_now_s() < dl) {
		long o1 = -1, o2 = -1, i = most_split(scr, in, fixed, &o1, &o2);
		if (i < 0) {
			got = opt_round_current(in, scr, s, w, inc, dl);
			break;
		}
		fixed[i] = o1;
		opt_screen_fix(scr, s, (size_t)i, o1);
		b = opt_screen_resolve(scr, INFINITY, dl, &inf);
		if ((inf || b >= cut_w(in, inc)) && o2 >= 0) {
			fixed[i] = o2;
			opt_screen_fix(scr, s, (size_t)i, o2);
			b = opt_screen_resolve(scr, INFINITY, dl, &inf);
		}
	}
	for (size_t i = 0; i < in->n_tasks; i++)
		if (fixed[i] >= 0)
			opt_screen_fix(scr, s, i, -1);
	opt_screen_shrink(scr, 0, NULL);
	free(fixed);
	return got;
}

/* Sets s to the OPPs of vec. */
static void set_opps(const struct opt_inst *in, struct opt_sol *s, const struct opt_sol *vec)
{
	memcpy(s->isl_opp, vec->isl_opp, in->n_isl * sizeof(size_t));
	memcpy(s->acc_opp, vec->acc_opp, in->n_acc * sizeof(size_t));
}

int opt_round_vector(const struct opt_inst *in, struct opt_screen *scr, const struct opt_sol *vec, struct opt_sol *s,
		     struct opt_ws *w, struct opt_sol *inc, double dl)
{
	/* above the per-core sizes only: the small sets are proven by the branch and bound, whose time
	 * the extra roundings would take (measured: no small set gained) */
	bool large = in->n_tasks > OPT_PER_CORE_TASKS;
	int bisect = large ? ROUND_BISECT : 0;
	bool *one = calloc(in->n_isl + 1, sizeof(bool));
	if (!one)
		return 0;
	set_opps(in, s, vec);
	int v = round_shares(in, scr, s, w, inc, NULL, bisect, cut_w(in, inc), dl);
	for (size_t k = 0; large && v == 1 && in->n_isl > 1 && k < in->n_isl && opt_now_s() < dl; k++) {
		memset(one, 0, in->n_isl * sizeof(bool));
		one[k] = true;
		set_opps(in, s, vec);
		if (round_shares(in, scr, s, w, inc, one, bisect, cut_w(in, inc), dl) == 2)
			v = 2;
	}
	size_t n_dive = large ? sizeof(dive_hold) / sizeof(dive_hold[0]) : 0;
	for (size_t r = 0; v == 1 && r < n_dive && opt_now_s() < dl; r++) {
		set_opps(in, s, vec);
		v = dive(in, scr, s, w, inc, dive_hold[r], dl);
	}
	free(one);
	return v;
}
