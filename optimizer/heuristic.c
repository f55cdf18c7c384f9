/* SPDX-License-Identifier: MIT */
/*
 * The heuristic: OPP-vector enumeration with a valid bound, greedy placement, repair, local search.
 *
 * For a fixed OPP vector (one OPP per island and GPU) the power of a plan is
 *     idle(vector) + sum_i busy_i(placement of i)
 * so the cheapest conceivable plan puts every task on its cheapest option that can hold it alone:
 * LB(vector) = idle + sum_i min_option busy_i. This is a valid lower bound for every plan at that
 * vector; min over vectors is a valid lower bound for the instance. Below the first incumbent each
 * vector's LB is raised to the capacity-aware Lagrangian bound of bound.c where that is stronger.
 * Vectors are visited in increasing LB; the search stops when LB(vector) >= incumbent (nothing left
 * can be better) or at the time limit. When the cheapest placement of a vector packs, that vector is solved exactly.
 * Otherwise a repair moves tasks off the overloaded resource to the option with the best power
 * increase per relief, then a local search moves tasks to cheaper options while the plan packs.
 *
 * The searches over OPP vectors beyond the plain enumeration (the separable bound, the descent with
 * its group and exchange steps, the bound strengthening) are in heur_search.c; both files work on
 * struct heur (heur_impl.h). This file stays ~780 lines: placement, repair and the local search
 * move the same scratch solutions and incremental core loads, whose invariants read best together.
 */
#include "optimizer/heur_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>





int heur_cmp_vec(const void *a, const void *b)
{
	double x = ((const struct vec *)a)->lb_w, y = ((const struct vec *)b)->lb_w;
	return (x > y) - (x < y);
}

/* LB(vector) and, into s->where, the cheapest placement (INFINITY when a task fits nowhere). */
double heur_vector_lb(struct heur *h, struct opt_sol *s)
{
	const struct opt_inst *in = h->in;
	if (!opt_vector_paths_ok(in, s, h->slack_frac, h->tmp.d_ns))
		return INFINITY;
	double p = opt_vector_idle_w(in, s);
	for (size_t i = 0; i < in->n_tasks; i++) {
		double best = INFINITY;
		for (size_t o = 0; o < h->n_opt; o++) {
			if (!opt_option_fits(in, s, i, o, h->slack_frac))
				continue;
			/* FPGA slots of one device cost the same: take the first, placement spreads later */
			double c = opt_task_busy_w(in, s, i, h->opt_where[o]);
			if (c < best - 1e-15) {
				best = c;
				s->where[i] = h->opt_where[o];
			}
		}
		if (!isfinite(best))
			return INFINITY;
		p += best;
	}
	return p;
}

/* FPGA slots of one device are interchangeable: put each FPGA task on a slot that already holds its
 * bitstream, else an empty one, else the least loaded (keeps reconfigurations away). */
static void spread_slots(const struct opt_inst *in, struct opt_sol *s)
{
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (s->where[i] >= 0)
			continue;
		size_t v0 = opt_where_server_of(s->where[i]);
		if (in->srv[v0].kind != PD_ACCEL_FPGA)
			continue;
		size_t a = in->srv[v0].accel;
		long pick = -1;
		double best_load = INFINITY;
		for (size_t v = 0; v < in->n_srv; v++) {
			if (in->srv[v].accel != a || in->impl[i * in->n_srv + v] < 0)
				continue;
			double load = 0;
			bool same = false, other = false;
			for (size_t j = 0; j < i; j++)
				if (s->where[j] == opt_where_server(v)) {
					load += (double)in->lat_top[j * in->n_srv + v] / (double)in->T_ns[j];
					if (strcmp(in->bits[j * in->n_srv + v], in->bits[i * in->n_srv + v]) == 0)
						same = true;
					else
						other = true;
				}
			double score = load + (other && !same ? 10.0 : 0.0) - (same ? 20.0 : 0.0);
			if (score < best_load)
				best_load = score, pick = (long)v;
		}
		if (pick >= 0)
			s->where[i] = opt_where_server(pick);
	}
}

static double cost_of(const struct heur *h, const struct opt_sol *s)
{
	return opt_power_w(h->in, s);
}

/* Index of the option a "where" value belongs to. */
static size_t option_of(const struct heur *h, int where)
{
	if (where >= 0)
		return h->in->core_isl[where];
	return h->in->n_isl + opt_where_server_of(where);
}

/* The tasks a repair move should consider: those on an overloaded FIFO server, on a path that is too
 * long, or on an island with an overloaded core (moving inside the island is the packer's job). */
static void find_hot(struct heur *h, struct opt_sol *s, double r, bool *hot, double *load)
{
	const struct opt_inst *in = h->in;
	memset(hot, 0, in->n_tasks * sizeof(bool));
	if (r >= OPT_FIFO_OVERLOAD) {
		for (size_t i = 0; i < in->n_tasks; i++)
			hot[i] = s->where[i] < 0;
		return;
	}
	if (r >= OPT_PATH_INFEASIBLE) {
		opt_deadlines_fast(in, s, h->ws, h->slack_frac, 1);
		for (size_t i = 0; i < in->n_tasks; i++)
			hot[i] = opt_ws_path_exec(h->ws, i) > (double)in->D_ns[i] * (1.0 - h->slack_frac);
		return;
	}
	memset(load, 0, in->n_cores * sizeof(double));
	for (size_t i = 0; i < in->n_tasks; i++)
		if (s->where[i] >= 0)
			load[s->where[i]] += (double)opt_exec_ns(in, s, i) / s->d_ns[i];
	bool over_isl[64] = {false};
	for (size_t c = 0; c < in->n_cores; c++)
		if (load[c] > in->cap && in->core_isl[c] < 64)
			over_isl[in->core_isl[c]] = true;
	for (size_t i = 0; i < in->n_tasks; i++)
		hot[i] = s->where[i] >= 0 && (in->core_isl[s->where[i]] >= 64 || over_isl[in->core_isl[s->where[i]]]);
}

/* A repair move: task i to option o, with its pre-score (lower is more promising). */
struct move {
	size_t i, o;
	double key;
};

static int cmp_move(const void *a, const void *b)
{
	double x = ((const struct move *)a)->key, y = ((const struct move *)b)->key;
	return (x > y) - (x < y);
}

/* Moves fully evaluated (a pack each) per repair step when the plan is over capacity; the others are
 * ranked first by power increase per unit of the task's current density, which is what a move
 * relieves at most. Keeps a repair O(K) packs per step instead of O(tasks x options) (at 120 tasks
 * that was most of the heuristic's time). */
#define OPT_REPAIR_CANDIDATES 24

/* Collects the hot tasks' moves into mv (n_tasks * n_opt); ranks and trims them unless paths or FIFO
 * queues are infeasible (then every move is evaluated: any progress counts). Returns the count. */
static size_t repair_moves(struct heur *h, const struct opt_sol *s, double r, const bool *hot, struct move *mv)
{
	const struct opt_inst *in = h->in;
	size_t n = 0;
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (!hot[i])
			continue;
		size_t cur = option_of(h, s->where[i]);
		double curw = opt_task_busy_w(in, s, i, s->where[i]);
		double e = (double)opt_exec_ns(in, s, i);
		double dens = s->where[i] >= 0 && s->d_ns[i] > 0 ? e / s->d_ns[i] : e / (double)in->T_ns[i];
		for (size_t o = 0; o < h->n_opt; o++) {
			if (o == cur || !opt_option_fits(in, s, i, o, h->slack_frac))
				continue;
			double dc = opt_task_busy_w(in, s, i, h->opt_where[o]) - curw;
			mv[n++] = (struct move){i, o, (fmax(dc, 0) + 1e-6) / fmax(dens, 1e-9)};
		}
	}
	if (r < OPT_PATH_INFEASIBLE && n > OPT_REPAIR_CANDIDATES) {
		qsort(mv, n, sizeof(*mv), cmp_move);
		n = OPT_REPAIR_CANDIDATES;
	}
	return n;
}

/* Repair: while the placement does not pack, move one task to another option, choosing the move
 * with the least power increase per unit of max-density relief. */
static double repair(struct heur *h, struct opt_sol *s, double r)
{
	const struct opt_inst *in = h->in;
	bool *hot = calloc(in->n_tasks + 1, sizeof(bool));
	double *load = calloc(in->n_cores + 1, sizeof(double));
	struct move *mv = calloc(in->n_tasks * h->n_opt + 1, sizeof(*mv));
	for (int step = 0; hot && load && mv && step < 4 * (int)in->n_tasks && r > 1.0 &&
			   opt_now_s() < h->deadline_s;
	     step++) {
		double base = cost_of(h, s), best_score = INFINITY, br = r;
		long bi = -1;
		find_hot(h, s, r, hot, load);
		size_t nm = repair_moves(h, s, r, hot, mv);
		for (size_t m = 0; m < nm && opt_now_s() < h->deadline_s; m++) { /* a step packs up to n x options */
			size_t i = mv[m].i;
			opt_sol_copy(&h->tmp, s, in);
			h->tmp.where[i] = h->opt_where[mv[m].o];
			spread_slots(in, &h->tmp);
			double dc = cost_of(h, &h->tmp) - base;
			if (base + dc > h->cutoff_w)
				continue; /* cost does not depend on cores or deadlines: no pack needed */
			double r2 = opt_pack(in, &h->tmp, h->ws, h->slack_frac, false, h->deadline_s);
			if (!(r2 < r - 1e-9))
				continue;
			/* leaving an infeasible region (paths, FIFO) matters more than any power */
			double score = r >= OPT_PATH_INFEASIBLE ? r2 : (fmax(dc, 0) + 1e-6) / (r - r2);
			if (score < best_score) {
				best_score = score, bi = (long)i, br = r2;
				opt_sol_copy(&h->rep, &h->tmp, in);
			}
		}
		if (bi < 0)
			break;
		/* the move's plan as packed above: a pack depends only on the island (and FPGA slot)
		 * assignment and the OPPs, so packing s with the move again gave the same plan */
		opt_sol_copy(s, &h->rep, in);
		r = br;
	}
	free(hot);
	free(load);
	free(mv);
	if (r > 1.0 && r < OPT_LP_POLISH_BELOW)
		r = opt_pack(in, s, h->ws, h->slack_frac, true, h->deadline_s);
	return r;
}

/* Per-core densities of the CPU tasks of s under its own cores and deadlines; returns the largest
 * over cap (what opt_pack calls r). */
static double core_loads(const struct opt_inst *in, const struct opt_sol *s, double *load)
{
	memset(load, 0, in->n_cores * sizeof(double));
	for (size_t i = 0; i < in->n_tasks; i++)
		if (s->where[i] >= 0)
			load[s->where[i]] += (double)opt_exec_ns(in, s, i) / s->d_ns[i];
	double m = 0;
	for (size_t c = 0; c < in->n_cores; c++)
		m = opt_max(m, load[c]);
	return m / in->cap;
}

/* A local-search candidate: task i to option o saves `save` W. */
struct cand {
	size_t i, o;
	double save;
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	if (x->save != y->save)
		return (x->save < y->save) - (x->save > y->save); /* largest saving first */
	if (x->i != y->i)
		return (x->i > y->i) - (x->i < y->i);
	return (x->o > y->o) - (x->o < y->o);
}

/* The moves of single tasks to options that cost less busy power (FIFO options only when
 * with_servers), largest saving first; returns the count (cs holds n_tasks * n_opt). */
static size_t cheaper_moves(struct heur *h, const struct opt_sol *s, struct cand *cs)
{
	const struct opt_inst *in = h->in;
	size_t n = 0;
	for (size_t i = 0; i < in->n_tasks; i++) {
		double curw = opt_task_busy_w(in, s, i, s->where[i]);
		size_t cur = option_of(h, s->where[i]);
		for (size_t o = 0; o < h->n_opt; o++) {
			if (o == cur || !opt_option_fits(in, s, i, o, h->slack_frac))
				continue;
			double save = curw - opt_task_busy_w(in, s, i, h->opt_where[o]);
			if (save > 1e-12)
				cs[n++] = (struct cand){i, o, save};
		}
	}
	qsort(cs, n, sizeof(*cs), cmp_cand);
	return n;
}

/*
 * Moves that keep every deadline (O(cores of the island) each): CPU task i goes to another island,
 * onto its core with the least density, when its runtime there is at most its deadline and that
 * core's density stays within cap. No deadline changes, so no path changes, and the core left only
 * gets lighter: the plan still packs with its own deadlines (invariant: load[] are the densities of
 * s, every one <= cap). Candidates in cs (largest saving first, computed at entry: a task moves once
 * per call). Returns the number of moves made.
 */
static size_t improve_fixed(struct heur *h, struct opt_sol *s, const struct cand *cs, size_t n, double *load)
{
	const struct opt_inst *in = h->in;
	size_t moved = 0;
	for (size_t m = 0; m < n; m++) {
		size_t i = cs[m].i, o = cs[m].o;
		if (s->where[i] < 0 || o >= in->n_isl || in->core_isl[s->where[i]] == o)
			continue;
		/* the saving was computed from the option i had at entry: it must still be that one */
		if (opt_task_busy_w(in, s, i, s->where[i]) - opt_task_busy_w(in, s, i, h->opt_where[o]) < cs[m].save - 1e-12)
			continue;
		double q = (double)runtime_at(in, i, o, s->isl_opp[o]);
		if (q > s->d_ns[i])
			continue;
		size_t c0 = in->isl_core0[o], low = c0;
		for (size_t c = c0; c < c0 + in->isl_ncores[o]; c++)
			if (load[c] < load[low])
				low = c;
		double u = q / s->d_ns[i];
		if (load[low] + u > in->cap)
			continue;
		load[s->where[i]] -= (double)opt_exec_ns(in, s, i) / s->d_ns[i];
		s->where[i] = (int)low;
		load[low] += u;
		moved++;
	}
	return moved;
}

/* Full re-packs tried per local search (each one worst-fit packing and deadline rules): past the
 * deadline-keeping moves, a move that needs new deadlines costs a pack, and at 120 tasks the old
 * every-task-every-option search spent 95 % of the heuristic's time here for little gain. */
#define OPT_IMPROVE_PACKS 16

/* Local search: move single tasks to cheaper options while the plan still packs. s packs on entry
 * with its own cores and deadlines (possibly the LP's, which the fast packer cannot reproduce), and
 * keeps packing after every accepted move: deadline-keeping moves first (improve_fixed), then moves
 * that need a re-pack (FIFO options, or no room at the current deadlines), largest saving first and
 * at most OPT_IMPROVE_PACKS of them. */
static void improve(struct heur *h, struct opt_sol *s)
{
	const struct opt_inst *in = h->in;
	struct cand *cs = calloc(in->n_tasks * h->n_opt + 1, sizeof(*cs));
	double *load = calloc(in->n_cores + 1, sizeof(double));
	if (!cs || !load || core_loads(in, s, load) > 1.0 + 1e-12)
		goto out; /* not packed as given: nothing safe to do incrementally */
	int packs = 0;
	for (int pass = 0; pass < 3 && opt_now_s() < h->deadline_s; pass++) {
		size_t n = cheaper_moves(h, s, cs);
		size_t moved = improve_fixed(h, s, cs, n, load);
		for (size_t m = 0; m < n && packs < OPT_IMPROVE_PACKS && opt_now_s() < h->deadline_s; m++) {
			size_t i = cs[m].i, o = cs[m].o;
			if (option_of(h, s->where[i]) == o ||
			    opt_task_busy_w(in, s, i, s->where[i]) - opt_task_busy_w(in, s, i, h->opt_where[o]) < cs[m].save - 1e-12)
				continue; /* already moved (by improve_fixed or an earlier pack) */
			opt_sol_copy(&h->tmp, s, in);
			h->tmp.where[i] = h->opt_where[o];
			spread_slots(in, &h->tmp);
			packs++;
			if (cost_of(h, &h->tmp) < cost_of(h, s) - 1e-12 &&
			    opt_pack(in, &h->tmp, h->ws, h->slack_frac, false, h->deadline_s) <= 1.0) {
				opt_sol_copy(s, &h->tmp, in);
				core_loads(in, s, load);
				moved++;
				/* new deadlines: the deadline-keeping moves may have room again */
				moved += improve_fixed(h, s, cs + m + 1, n - m - 1, load);
			}
		}
		if (!moved)
			break;
	}
out:
	free(cs);
	free(load);
}

/* Every task on its fastest option that fits alone at the OPPs of s (paths most likely to fit). */
static void place_fastest(struct heur *h, struct opt_sol *s)
{
	const struct opt_inst *in = h->in;
	for (size_t i = 0; i < in->n_tasks; i++) {
		double fast = INFINITY;
		int pick = s->where[i];
		for (size_t o = 0; o < h->n_opt; o++) {
			if (!opt_option_fits(in, s, i, o, h->slack_frac))
				continue;
			s->where[i] = h->opt_where[o];
			double e = (double)opt_exec_ns(in, s, i);
			if (e < fast)
				fast = e, pick = h->opt_where[o];
		}
		s->where[i] = pick;
	}
}

/* Capacity-aware construction: deadlines from the fastest placement give each task a budget d_i
 * (every path fits with these, whatever option of time <= d_i a task then takes); tasks in decreasing
 * density take the cheapest option whose time fits d_i and whose island / server still has room. */
static void place_capacity(struct heur *h, struct opt_sol *s)
{
	const struct opt_inst *in = h->in;
	place_fastest(h, s);
	if (opt_pack(in, s, h->ws, h->slack_frac, false, h->deadline_s) >= OPT_PATH_INFEASIBLE) {
		/* the fastest placement overloads a FIFO: budgets from the fastest CPU-only placement */
		for (size_t i = 0; i < in->n_tasks; i++) {
			double fast = INFINITY;
			for (size_t k = 0; k < in->n_isl; k++)
				if (opt_option_fits(in, s, i, k, h->slack_frac) && (double)runtime_at(in, i, k, s->isl_opp[k]) < fast) {
					fast = (double)runtime_at(in, i, k, s->isl_opp[k]);
					s->where[i] = (int)in->isl_core0[k];
				}
		}
		if (opt_pack(in, s, h->ws, h->slack_frac, false, h->deadline_s) >= OPT_PATH_INFEASIBLE)
			return;
	}
	size_t n = in->n_tasks;
	double *budget = h->tmp.d_ns, *room = calloc(h->n_opt, sizeof(double));
	size_t *order = calloc(n, sizeof(size_t));
	if (!room || !order) {
		free(room), free(order);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		budget[i] = s->where[i] >= 0 ? s->d_ns[i] : (double)opt_exec_ns(in, s, i);
		order[i] = i;
	}
	for (size_t o = 0; o < h->n_opt; o++)
		room[o] = o < in->n_isl ? (double)in->isl_ncores[o] * in->cap * 0.97 : 0.97;
	/* FIFO servers: the queue (sum of latencies) must fit the budget of every task on it, and a slot
	 * keeps one bitstream (no reconfiguration per request) */
	double *qload = calloc(in->n_srv + 1, sizeof(double)), *qmin = calloc(in->n_srv + 1, sizeof(double));
	const char **qbits = calloc(in->n_srv + 1, sizeof(char *));
	if (!qload || !qmin || !qbits) {
		free(room), free(order), free(qload), free(qmin), free(qbits);
		return;
	}
	for (size_t v = 0; v < in->n_srv; v++)
		qmin[v] = INFINITY;
	for (size_t a = 1; a < n; a++) /* insertion sort by density of the fastest placement, descending */
		for (size_t b = a; b > 0; b--) {
			size_t x = order[b - 1], y = order[b];
			if ((double)opt_exec_ns(in, s, x) / budget[x] >= (double)opt_exec_ns(in, s, y) / budget[y])
				break;
			order[b - 1] = y, order[b] = x;
		}
	for (size_t j = 0; j < n; j++) {
		size_t i = order[j];
		int fast = s->where[i];
		double best = INFINITY;
		int pick = fast;
		for (size_t o = 0; o < h->n_opt; o++) {
			if (!opt_option_fits(in, s, i, o, h->slack_frac))
				continue;
			s->where[i] = h->opt_where[o];
			double e = (double)opt_exec_ns(in, s, i);
			double use = o < in->n_isl ? e / budget[i] : e / (double)in->T_ns[i];
			double c = opt_task_busy_w(in, s, i, h->opt_where[o]);
			bool fits = e <= budget[i] && use <= room[o] && (o >= in->n_isl || use <= in->cap);
			if (fits && o >= in->n_isl) {
				size_t v = o - in->n_isl;
				const char *bits = in->bits[i * in->n_srv + v];
				fits = qload[v] + e <= fmin(qmin[v], budget[i]) &&
				       (in->srv[v].kind != PD_ACCEL_FPGA || !qbits[v] || strcmp(qbits[v], bits) == 0);
			}
			if (fits && c < best)
				best = c, pick = h->opt_where[o];
		}
		s->where[i] = pick;
		size_t o = option_of(h, pick);
		double e = (double)opt_exec_ns(in, s, i);
		room[o] -= o < in->n_isl ? e / budget[i] : e / (double)in->T_ns[i];
		if (o >= in->n_isl) {
			size_t v = o - in->n_isl;
			qload[v] += e;
			qmin[v] = fmin(qmin[v], budget[i]);
			qbits[v] = in->bits[i * in->n_srv + v];
		}
	}
	free(room);
	free(order);
	free(qload), free(qmin), free(qbits);
}

/* The balance runs when the constructions leave the max density below this (over cap): on the XU4
 * 120-task sets the vectors where it then packed were at 1.05-1.35; far above, the vector is
 * hopeless and the balance only costs its packs. */
#define OPT_BALANCE_BELOW 1.5

/* Moves of the island balance at fixed deadlines d_ns (CPU tasks of s on core 0 of their islands);
 * L: per island, its density over n_k cap (kept up to date). */
static void balance_moves(const struct opt_inst *in, struct opt_sol *s, double *L)
{
	for (size_t mv = 0; mv < in->n_tasks; mv++) {
		size_t t = 0;
		for (size_t k = 1; k < in->n_isl; k++)
			if (L[k] > L[t])
				t = k;
		double best = 0, ut_b = 0, uk_b = 0;
		long bi = -1;
		size_t bk = 0;
		for (size_t i = 0; i < in->n_tasks; i++) {
			if (s->where[i] < 0 || in->core_isl[s->where[i]] != t)
				continue;
			double ut = (double)opt_exec_ns(in, s, i) / s->d_ns[i] / ((double)in->isl_ncores[t] * in->cap);
			for (size_t k = 0; k < in->n_isl; k++) {
				double q = k == t ? INFINITY : (double)runtime_at(in, i, k, s->isl_opp[k]);
				if (!(q <= s->d_ns[i]))
					continue; /* the deadline must hold the runtime there: paths stay as they are */
				double uk = q / s->d_ns[i] / ((double)in->isl_ncores[k] * in->cap);
				if (L[k] + uk < L[t] - 1e-12 && ut / uk > best)
					best = ut / uk, bi = (long)i, bk = k, ut_b = ut, uk_b = uk;
			}
		}
		if (bi < 0)
			break;
		s->where[bi] = (int)in->isl_core0[bk];
		L[t] -= ut_b;
		L[bk] += uk_b;
	}
}

/*
 * Island balance (min-max of the island densities): from the fastest placement, island-level
 * deadlines (every CPU task on core 0 of its island, the fast rules), then CPU tasks move off the
 * fullest island (density over n_k cap), the move with the most relief there per unit of density
 * added on the other island first (fractional-knapsack order: overhead-dominated tasks, whose
 * runtime grows least on a slow island, go there first), while that lowers the larger of the two.
 * A task moves only where its runtime fits its deadline, so every path still fits under those
 * deadlines and every island density is exact for them (no deadline rule per move: O(tasks x
 * islands) per move). One round: new deadlines for the balanced placement and the moves again
 * never ended better on the XU4 80- and 120-task sets. Why: at high load the capacity-aware
 * construction fills the cheap island (XU4 LITTLE) with the densest tasks first and ends ~10 % over
 * cap on both islands of the XU4 120-task sets, where this balance ends at ~0.91 (every such set
 * then had a plan).
 */
static void place_balance(struct heur *h, struct opt_sol *s)
{
	const struct opt_inst *in = h->in;
	double *L = calloc(in->n_isl + 1, sizeof(double));
	if (!L)
		return;
	place_fastest(h, s);
	for (size_t i = 0; i < in->n_tasks; i++)
		if (s->where[i] >= 0)
			s->where[i] = (int)in->isl_core0[in->core_isl[s->where[i]]];
	if (opt_deadlines_fast(in, s, h->ws, h->slack_frac, 4) < OPT_PATH_INFEASIBLE) {
		for (size_t i = 0; i < in->n_tasks; i++)
			if (s->where[i] >= 0) {
				size_t k = in->core_isl[s->where[i]];
				L[k] += (double)opt_exec_ns(in, s, i) / s->d_ns[i] / ((double)in->isl_ncores[k] * in->cap);
			}
		balance_moves(in, s, L);
	}
	free(L);
}

/* Tries the vector of h->cur (whose where[] holds the cheapest placement); updates best when a
 * better feasible plan is found. Returns true when the vector was solved exactly (its LB attained):
 * the cheapest placement packed. Otherwise: fastest placement, repair if needed, then improve. */
bool heur_try_vector(struct heur *h, double lb, double power_cap_w, struct opt_sol *best)
{
	const struct opt_inst *in = h->in;
	struct opt_sol *s = &h->cur;
	h->cutoff_w = best->ok ? best->power_w * (1 + OPT_REPAIR_MARGIN) : INFINITY;
	spread_slots(in, s);
	double r = opt_pack(in, s, h->ws, h->slack_frac, false, h->deadline_s);
	bool exact = r <= 1.0;
	if (!exact) {
		place_capacity(h, s);
		spread_slots(in, s);
		r = opt_pack(in, s, h->ws, h->slack_frac, false, h->deadline_s);
		if (r > 1.0) {
			opt_sol_copy(&h->keep, s, in);
			place_fastest(h, s);
			spread_slots(in, s);
			double r2 = opt_pack(in, s, h->ws, h->slack_frac, false, h->deadline_s);
			if (r2 > r) /* the capacity-aware start was closer: back to it (both are deterministic) */
				opt_sol_copy(s, &h->keep, in), r2 = r;
			r = r2;
		}
		if (r > 1.0 && r < OPT_BALANCE_BELOW && opt_twin_pairs(in) + 1 < in->n_isl) {
			/* both constructions over cap: the island balance (it trades runtime growth between
			 * islands of different speed; between identical ones every move weighs the same and
			 * the packer balances already: Xavier's four Carmel islands, ZCU102's one) */
			opt_sol_copy(&h->keep, s, in);
			place_balance(h, s);
			spread_slots(in, s);
			double r2 = opt_pack(in, s, h->ws, h->slack_frac, false, h->deadline_s);
			if (r2 < r)
				r = r2;
			else
				opt_sol_copy(s, &h->keep, in);
		}
		if (r > 1.0 && r < OPT_LP_POLISH_BELOW)
			r = opt_pack(in, s, h->ws, h->slack_frac, true, h->deadline_s);
		if (r > 1.0)
			r = repair(h, s, r);
		if (r > 1.0)
			return false;
		improve(h, s);
	}
	if (!opt_evaluate(in, s, NULL, 0))
		return false;
	exact = exact && s->power_w <= lb * (1 + 1e-12) + 1e-12;
	if ((s->power_w < best->power_w - 1e-12 || !best->ok) && s->power_w <= power_cap_w)
		opt_sol_copy(best, s, in);
	return exact;
}

/*
 * Warm start for a descent step: the incumbent's placement at the OPP vector v (islands, then
 * accelerators; v need not be canonical: a valid plan is valid at any vector). When only island OPPs
 * changed and every CPU task still fits its own deadline and core (runtime <= deadline, core density
 * <= cap: an O(tasks) check, paths and FIFO queues unchanged), the incumbent's cores and deadlines
 * stay; otherwise the island assignment is re-packed (the LP when close). No repair (the full
 * try_vector at that vector already ran). Then the local search. Returns true when best improved.
 * Often finds a better plan than the fresh placement when the incumbent is already tight.
 */
bool heur_try_warm(struct heur *h, const size_t *v, double power_cap_w, struct opt_sol *best)
{
	const struct opt_inst *in = h->in;
	struct opt_sol *s = &h->cur;
	double before = best->power_w;
	bool acc_same = true;
	opt_sol_copy(s, best, in);
	for (size_t x = 0; x < in->n_isl + in->n_acc; x++)
		if (x < in->n_isl)
			s->isl_opp[x] = v[x];
		else
			acc_same = acc_same && s->acc_opp[x - in->n_isl] == v[x], s->acc_opp[x - in->n_isl] = v[x];
	double *load = calloc(in->n_cores + 1, sizeof(double));
	bool ok = load != NULL;
	for (size_t i = 0; i < in->n_tasks && ok; i++)
		ok = opt_option_fits(in, s, i, option_of(h, s->where[i]), h->slack_frac);
	bool keep = ok && acc_same;
	for (size_t i = 0; i < in->n_tasks && keep; i++)
		keep = s->where[i] < 0 || (double)opt_exec_ns(in, s, i) <= s->d_ns[i];
	double r = keep ? core_loads(in, s, load) : INFINITY;
	free(load);
	if (ok && r > 1.0) {
		r = opt_pack(in, s, h->ws, h->slack_frac, false, h->deadline_s);
		if (r > 1.0 && r < OPT_LP_POLISH_BELOW)
			r = opt_pack(in, s, h->ws, h->slack_frac, true, h->deadline_s);
	}
	if (!ok || r > 1.0)
		return false;
	improve(h, s);
	if (!opt_evaluate(in, s, NULL, 0) || s->power_w > power_cap_w || !(s->power_w < before - 1e-12))
		return false;
	opt_sol_copy(best, s, in);
	return true;
}

/* Frees what heur_open allocated (h may be partly open). */
static void heur_close(struct heur *h)
{
	opt_sol_free(&h->cur);
	opt_sol_free(&h->tmp);
	opt_sol_free(&h->keep);
	opt_sol_free(&h->rep);
	opt_ws_free(h->ws);
	free(h->opt_where);
	h->ws = NULL, h->opt_where = NULL;
}

/* A search state for in (its scratch solutions, workspace and option table): 0, or -1 when out of
 * memory (h is then closed already). */
static int heur_open(struct heur *h, const struct opt_inst *in, double slack_frac, double deadline_s)
{
	*h = (struct heur){.in = in, .slack_frac = slack_frac, .deadline_s = deadline_s, .cutoff_w = INFINITY};
	h->n_opt = in->n_isl + in->n_srv;
	h->ws = opt_ws_new(in);
	h->opt_where = calloc(h->n_opt, sizeof(int));
	if (!h->ws || !h->opt_where || opt_sol_init(&h->cur, in) || opt_sol_init(&h->tmp, in) ||
	    opt_sol_init(&h->keep, in) || opt_sol_init(&h->rep, in)) {
		heur_close(h);
		return -1;
	}
	for (size_t o = 0; o < h->n_opt; o++)
		h->opt_where[o] = opt_option_where(in, o);
	return 0;
}

int opt_heuristic(const struct opt_inst *in, const struct pd_opt_params *p, double deadline_s, double power_cap_w,
		  double slack_frac, struct opt_sol *best, struct opt_heur_result *hr)
{
	struct heur h;
	hr->lower_bound_w = INFINITY;
	hr->proven = false;
	size_t nv = opt_vector_count(in);
	if (heur_open(&h, in, slack_frac, deadline_s))
		return -1;
	struct vec *vs = calloc(nv > OPT_VECTOR_LIMIT ? 1 : nv, sizeof(*vs));
	int rc = -1;
	if (!vs)
		goto out;
	if (nv > OPT_VECTOR_LIMIT) {
		hr->lower_bound_w = heur_separable_bound(&h);
		heur_descend(&h, power_cap_w, best, NULL);
		if (best->ok)
			hr->lower_bound_w = fmin(hr->lower_bound_w, best->power_w);
		rc = 0;
		goto out;
	}
	for (size_t id = 0; id < nv; id++) {
		opt_vector_decode(in, &h.cur, id);
		/* a vector that is not canonical has an equivalent that is (symmetry.c): skipped */
		vs[id] = (struct vec){id, opt_vector_canonical(in, &h.cur) ? heur_vector_lb(&h, &h.cur) : INFINITY};
	}
	/* A first incumbent from the fastest vector (all top OPPs): it prunes everything above it. */
	if (!best->ok) {
		for (size_t k = 0; k < in->n_isl; k++)
			h.cur.isl_opp[k] = in->isl_nopp[k] - 1;
		for (size_t a = 0; a < in->n_acc; a++)
			h.cur.acc_opp[a] = in->acc_nopp[a] - 1;
		double l = heur_vector_lb(&h, &h.cur);
		if (isfinite(l))
			heur_try_vector(&h, l, power_cap_w, best);
	}
	heur_strengthen(&h, vs, nv, best);
	qsort(vs, nv, sizeof(*vs), heur_cmp_vec);
	bool large = in->n_tasks > OPT_DESCEND_TASKS;
	int tries = 0;
	double lb = INFINITY;
	bool lb_set = false;
	size_t j = 0;
	for (; j < nv && isfinite(vs[j].lb_w); j++) {
		double inc = best->ok ? best->power_w : INFINITY;
		if (vs[j].lb_w >= inc * (1 - 1e-12) || vs[j].lb_w > power_cap_w)
			break;
		if (opt_now_s() >= deadline_s || (large && tries++ >= OPT_LARGE_TRIES))
			break;
		opt_vector_decode(in, &h.cur, vs[j].id);
		double l = heur_vector_lb(&h, &h.cur);
		bool solved = heur_try_vector(&h, l, power_cap_w, best);
		if (!solved && !lb_set) {
			lb = vs[j].lb_w; /* this vector may hold something better than what we found */
			lb_set = true;
		}
	}
	/* every vector before j is solved or bounded by lb; vectors from j on have LB >= vs[j].lb_w */
	double rest = j < nv ? vs[j].lb_w : INFINITY;
	hr->lower_bound_w = fmin(lb, rest);
	/* large sets: a descent from the top vector may still find better plans (bound unchanged) */
	if (large)
		heur_descend(&h, power_cap_w, best, NULL);
	if (best->ok)
		hr->lower_bound_w = fmin(hr->lower_bound_w, best->power_w);
	hr->proven = best->ok && hr->lower_bound_w >= best->power_w * (1 - 1e-9);
	rc = 0;
out:
	heur_close(&h);
	free(vs);
	(void)p;
	return rc;
}

void opt_heur_improve(const struct opt_inst *in, struct opt_sol *s, double deadline_s)
{
	struct heur h;
	if (heur_open(&h, in, 0, deadline_s))
		return;
	improve(&h, s);
	heur_close(&h);
}

/* A placement from elsewhere (the exact mode's master): pack it; if it does not pack, repair it
 * (power-aware moves), then improve it. Returns true when s became a feasible plan. */
bool opt_heur_polish(const struct opt_inst *in, struct opt_sol *s, double deadline_s)
{
	struct heur h;
	bool ok = false;
	if (heur_open(&h, in, 0, deadline_s))
		return false;
	double r = opt_pack(in, s, h.ws, 0, true, deadline_s);
	if (r > 1.0)
		r = repair(&h, s, r);
	if (r <= 1.0) {
		improve(&h, s);
		ok = opt_evaluate(in, s, NULL, 0);
	}
	heur_close(&h);
	return ok;
}

/*
 * Iterated descent over OPP vectors: from the vector of best with every coordinate raised by 0-4
 * OPPs at random (xorshift from seed), the descent again (heur_descend); a cheaper plan replaces best
 * and becomes the next start. Until deadline_s. Why: the descent from the top vector ends where no
 * single step down (or exchange) helps; on Xavier at 120 tasks better plans lie several OPPs away on
 * several islands at once (seed 16493118: 6.0813 W from the descent, 6.0448 W found by the exact
 * mode's rounding at (4 13 19 20, GPU 2) after 35 s, from (13 16 15 15, GPU 3)).
 */
void opt_heur_restarts(const struct opt_inst *in, double deadline_s, struct opt_sol *best, uint64_t seed)
{
	struct heur h;
	size_t nc = in->n_isl + in->n_acc;
	if (!best->ok || heur_open(&h, in, 0, deadline_s))
		return;
	size_t *v = malloc((nc + 1) * sizeof(size_t));
	struct opt_sol got = {0};
	if (!v || opt_sol_init(&got, in))
		goto out;
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	while (opt_now_s() < deadline_s) {
		for (size_t c = 0; c < nc; c++) {
			size_t top = opt_coord_nopp(in, c) - 1, cur = *opt_coord_opp(in, best, c);
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			size_t up = (size_t)(x % (OPT_RESTART_UP + 1));
			v[c] = cur + up < top ? cur + up : top;
		}
		got.ok = false;
		heur_descend(&h, INFINITY, &got, v);
		if (got.ok && got.power_w < best->power_w - 1e-12)
			opt_sol_copy(best, &got, in);
	}
out:
	free(v);
	opt_sol_free(&got);
	heur_close(&h);
}
