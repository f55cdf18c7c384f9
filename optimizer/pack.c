/* SPDX-License-Identifier: MIT */
/*
 * Packing an island-level assignment onto cores. Power does not depend on which core of an island
 * a task runs on, nor on the deadlines (docs/MODEL.md), so once the island of every CPU task and the
 * OPPs are chosen, what is left is a feasibility question: cores and deadlines such that every core
 * density fits. Densities depend on deadlines and good deadlines depend on the cores, so we alternate:
 * island-level deadlines -> worst-fit decreasing (balances the cores, which is what lets a low OPP
 * work) -> per-core deadlines -> re-pack, then move tasks off the fullest core, and finally the LP.
 */
#include "optimizer/opt_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct key {
	size_t i;
	double dens;
};

/* Sorts k[0 .. n) by decreasing density, stably (equal densities keep their order, as glibc's merge
 * sort did here before: the same packs); tmp: n keys of scratch. Bottom-up merge sort, inline
 * comparisons: a pack sorts 3 times and a repair step packs 24 times, and qsort's calls through the
 * comparator were 8 % of the heuristic's instructions at 120 tasks. */
static void sort_dens_desc(struct key *k, struct key *tmp, size_t n)
{
	struct key *src = k, *dst = tmp;
	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t a = lo, b = mid, o = lo;
			while (a < mid && b < hi) /* the right run's key first only when strictly denser */
				dst[o++] = src[b].dens > src[a].dens ? src[b++] : src[a++];
			while (a < mid)
				dst[o++] = src[a++];
			while (b < hi)
				dst[o++] = src[b++];
		}
		struct key *t = src;
		src = dst, dst = t;
	}
	if (src != k)
		memcpy(k, src, n * sizeof(*k));
}

/*
 * The groups of cores a task may move between (w->cgrp, per core): in opt_pack, its island; in
 * opt_pack_given, its island's pool, the run of identical islands at the same OPP (opt_twin_pools).
 * A task's runtime, power and density are the same on every core of a pool, so moving it there
 * changes neither the plan's power nor any density: the packing only gains room. Why: Xavier's
 * Carmel islands have two cores each, and the LP roundings at 120 tasks (rounding.c), which fill
 * every island to its capacity, ended at 1.0002-1.02 of the cap on one core of a twin while the
 * other twin's cores had crumbs the task did not fit (docs/OPTIMIZER-LOG.md, fifteenth session).
 * opt_pack keeps the islands: the heuristic's moves and its cache of deadline sweeps
 * (opt_ws.reuse) are per island.
 */
static void core_groups(const struct opt_inst *in, const struct opt_sol *s, struct opt_ws *w, bool pooled)
{
	if (pooled)
		opt_twin_pools(in, s, w->ipool);
	for (size_t c = 0; c < in->n_cores; c++)
		w->cgrp[c] = pooled ? w->ipool[in->core_isl[c]] : in->core_isl[c];
}

/* Worst-fit decreasing of the CPU tasks' densities onto the cores of their groups (core_groups);
 * ties to the lowest core. keys: 2 n_tasks. */
static void wfd(const struct opt_inst *in, struct opt_sol *s, struct key *keys, double *load, const size_t *grp)
{
	size_t n = 0;
	for (size_t i = 0; i < in->n_tasks; i++)
		if (s->where[i] >= 0)
			keys[n++] = (struct key){i, (double)opt_exec_ns(in, s, i) / s->d_ns[i]};
	sort_dens_desc(keys, keys + in->n_tasks, n);
	memset(load, 0, in->n_cores * sizeof(double));
	for (size_t j = 0; j < n; j++) {
		size_t i = keys[j].i, g = grp[s->where[i]], best = in->n_cores;
		for (size_t c = 0; c < in->n_cores; c++)
			if (grp[c] == g && (best == in->n_cores || load[c] < load[best]))
				best = c;
		s->where[i] = (int)best;
		load[best] += keys[j].dens;
	}
}

/* Core densities of s under its own deadlines; returns the fullest core. */
static size_t loads_of(const struct opt_inst *in, const struct opt_sol *s, double *load)
{
	memset(load, 0, in->n_cores * sizeof(double));
	for (size_t i = 0; i < in->n_tasks; i++)
		if (s->where[i] >= 0)
			load[s->where[i]] += (double)opt_exec_ns(in, s, i) / s->d_ns[i];
	size_t top = 0;
	for (size_t c = 1; c < in->n_cores; c++)
		if (load[c] > load[top])
			top = c;
	return top;
}

/*
 * Moves single tasks from the fullest core to the emptiest core of its group (core_groups) while that
 * lowers the max density. Inside one group a task keeps its runtime, and under the current deadlines
 * its density too, so a move's effect on the two cores is exact without new deadlines: the move chosen is
 * the one that leaves the smaller of the two cores' maxima lowest (O(tasks) per round, no deadline
 * rule per candidate). The deadline rules then run once on the new cores (their multipliers follow
 * the new loads); whichever of the two deadline sets is better stays. cur: the max density / cap of s
 * as given (with its deadlines). tmp: scratch.
 */
static double relieve(const struct opt_inst *in, struct opt_sol *s, struct opt_ws *w, double slack_frac,
		      double cur, struct opt_sol *tmp, double *load, bool reuse)
{
	for (int round = 0; round < 4 * (int)in->n_cores && cur > 1.0; round++) {
		size_t top = loads_of(in, s, load), low = top;
		for (size_t c = 0; c < in->n_cores; c++)
			if (w->cgrp[c] == w->cgrp[top] && load[c] < load[low])
				low = c;
		if (low == top)
			break;
		double best = load[top];
		long pick = -1;
		for (size_t i = 0; i < in->n_tasks; i++) {
			if (s->where[i] != (int)top)
				continue;
			double u = (double)opt_exec_ns(in, s, i) / s->d_ns[i];
			double m = opt_max(load[top] - u, load[low] + u);
			if (m < best - 1e-12)
				best = m, pick = (long)i;
		}
		if (pick < 0)
			break;
		double u = (double)opt_exec_ns(in, s, (size_t)pick) / s->d_ns[pick];
		load[top] -= u;
		load[low] += u;
		double m = 0; /* the moved plan under its current deadlines: exact */
		for (size_t c = 0; c < in->n_cores; c++)
			m = opt_max(m, load[c]);
		m /= in->cap;
		s->where[pick] = (int)low;
		opt_sol_copy(tmp, s, in);
		w->reuse = reuse; /* cores moved inside one island: the island assignment is the same */
		double r = opt_deadlines_fast(in, tmp, w, slack_frac, 6);
		if (!(opt_min(m, r) < cur - 1e-9)) {
			s->where[pick] = (int)top; /* no progress: undo (s keeps its deadlines) */
			break;
		}
		if (r < m)
			opt_sol_copy(s, tmp, in), m = r;
		cur = m;
	}
	return cur;
}

double opt_pack(const struct opt_inst *in, struct opt_sol *s, struct opt_ws *w, double slack_frac, bool polish,
		double deadline_s)
{
	struct key *keys = w->keys;
	double *load = w->pload;
	struct opt_sol *best = &w->pbest, *tmp = &w->ptmp;
	core_groups(in, s, w, false);
	for (size_t i = 0; i < in->n_tasks; i++) /* island-level start: every task on core 0 of its island */
		if (s->where[i] >= 0)
			s->where[i] = (int)in->isl_core0[in->core_isl[s->where[i]]];
	double res = opt_deadlines_fast(in, s, w, slack_frac, 1);
	if (res >= OPT_PATH_INFEASIBLE)
		return res; /* no packing can help */
	res = INFINITY;
	for (int round = 0; round < 3; round++) {
		wfd(in, s, keys, load, w->cgrp);
		w->reuse = true; /* wfd moves tasks inside their islands only */
		double r = opt_deadlines_fast(in, s, w, slack_frac, 8);
		if (r < res) {
			res = r;
			opt_sol_copy(best, s, in);
		}
		if (res <= 1.0)
			break;
	}
	opt_sol_copy(s, best, in);
	if (res > 1.0 && res < 1.5) {
		res = relieve(in, s, w, slack_frac, res, tmp, load, true);
		opt_sol_copy(best, s, in);
	}
	if (res > 1.0 && polish && res < OPT_LP_POLISH_BELOW) {
		double r = opt_deadlines_lp(in, s, slack_frac, deadline_s);
		if (r < res)
			res = r;
		else
			opt_sol_copy(s, best, in);
	}
	return res;
}

/*
 * Exchanges under fixed deadlines: while the fullest core is over the cap, the exchange of one of its
 * tasks with a lighter task (or none) on another core of its island that leaves the higher of the two
 * cores lowest, as long as that is below the fullest core's density now. Densities do not change
 * (same island, same deadlines), so every step is exact and the fullest core only goes down.
 * Bounded by EXCHANGE_ROUNDS steps; O(tasks on the fullest core x tasks of its island) per step.
 * Why: where deadlines cannot move (independent tasks, d = T), the deadline LP cannot level what
 * worst-fit decreasing left uneven, and single moves off the fullest core (relieve) miss the packings
 * that need a swap: two tasks of 0.47 and three of 0.31 on two cores of cap 0.95 (test_heuristic.c);
 * XU4, 40 independent tasks (master.c, dive), an island at 0.978 of its cores left at 1.004 on one.
 */
#define EXCHANGE_ROUNDS 64

/* The exchange for exchange() off core top: its task *pi to core *pc, and task *pj (or none: -1)
 * from *pc to top; *pi is -1 when none leaves both cores strictly below top's density now. */
static void best_exchange(const struct opt_inst *in, const struct opt_sol *s, const double *load, const size_t *grp,
			  size_t top, long *pi, long *pj, long *pc)
{
	size_t g = grp[top];
	double best = load[top] - 1e-12;
	*pi = -1;
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (s->where[i] != (int)top)
			continue;
		double ui = (double)opt_exec_ns(in, s, i) / s->d_ns[i];
		for (size_t c = 0; c < in->n_cores; c++)
			if (grp[c] == g && c != top && opt_max(load[top] - ui, load[c] + ui) < best)
				best = opt_max(load[top] - ui, load[c] + ui), *pi = (long)i, *pj = -1, *pc = (long)c;
		for (size_t j = 0; j < in->n_tasks; j++) {
			if (s->where[j] < 0 || s->where[j] == (int)top || grp[s->where[j]] != g)
				continue;
			double d = ui - (double)opt_exec_ns(in, s, j) / s->d_ns[j];
			size_t c = (size_t)s->where[j];
			if (d > 0 && opt_max(load[top] - d, load[c] + d) < best)
				best = opt_max(load[top] - d, load[c] + d), *pi = (long)i, *pj = (long)j, *pc = (long)c;
		}
	}
}

static void exchange(const struct opt_inst *in, struct opt_sol *s, double *load, const size_t *grp)
{
	for (int round = 0; round < EXCHANGE_ROUNDS; round++) {
		size_t top = loads_of(in, s, load);
		long pi, pj, pc;
		if (load[top] <= in->cap)
			return;
		best_exchange(in, s, load, grp, top, &pi, &pj, &pc);
		if (pi < 0)
			return;
		s->where[pi] = (int)pc;
		if (pj >= 0)
			s->where[pj] = (int)top;
	}
}

double opt_pack_given(const struct opt_inst *in, struct opt_sol *s, struct opt_ws *w, double deadline_s)
{
	struct opt_sol *best = &w->pbest, *tmp = &w->ptmp;
	core_groups(in, s, w, true);
	wfd(in, s, w->keys, w->pload, w->cgrp);
	exchange(in, s, w->pload, w->cgrp);
	double res = opt_deadlines_lp(in, s, 0, deadline_s);
	if (res <= 1.0 || !isfinite(res))
		return res;
	/* the LP's deadlines, re-packed once; then single moves off the fullest core */
	opt_sol_copy(best, s, in);
	wfd(in, s, w->keys, w->pload, w->cgrp);
	exchange(in, s, w->pload, w->cgrp);
	double r = opt_deadlines_lp(in, s, 0, deadline_s);
	if (r < res)
		res = r, opt_sol_copy(best, s, in);
	opt_sol_copy(s, best, in);
	if (res < 1.5) {
		(void)relieve(in, s, w, 0, opt_deadlines_fast(in, s, w, 0, 6), tmp, w->pload, false);
		r = opt_deadlines_lp(in, s, 0, deadline_s);
		if (r < res)
			res = r;
		else
			opt_sol_copy(s, best, in);
	}
	return res;
}
