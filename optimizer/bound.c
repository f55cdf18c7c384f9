/* SPDX-License-Identifier: MIT */
/*
 * A capacity-aware lower bound per OPP vector (Lagrangian relaxation), for certified gaps on large
 * instances where the exact master does not finish.
 *
 * The heuristic's vector bound puts every task on its cheapest option, as if islands had no
 * capacity. Here the capacity rows are dualised. For an OPP vector, every plan satisfies
 *   island k:  sum_{i on k} C_ik / d_i <= n_k cap_raw     (sum of the per-core density limits)
 *   server v:  sum_{i on v} L_iv / T_i <= 1                 (FIFO utilisation)
 *   path P:    sum_{i in P} d_i <= D_P
 * For any lambda_k, mu_v >= 0, power >= idle + sum_i busy_i + sum_k lambda_k (dens_k - n_k cap_raw)
 *                                                + sum_v mu_v (util_v - 1),
 * and the right side is bounded below by minimising over placements and deadlines. Deadlines: take
 * vertex-disjoint paths P covering every task (any path of the DAG; disjoint so that nothing is
 * counted twice). On P, min sum w_j / d_j s.t. sum d_j <= D is (sum sqrt w_j)^2 / D (Lagrange), and
 * x^2 >= 2 A x - A^2 for every A, so
 *   sum_{j in P} w_j / d_j >= (2 A_P sum_j sqrt(w_j) - A_P^2) / D_P,
 * which is separable: every task picks its option alone. A one-task path uses the exact
 * min w / d = w / h_i with h_i = min(T_i, hi_i) (no plan gives i a longer deadline). Accelerated
 * tasks drop out of the path terms (their delays only shrink the budget: dropping is a relaxation).
 * Every (lambda, mu, A) gives a valid bound, so the crude search over them below can only cost
 * tightness, never validity.
 */
#include "optimizer/opt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct opt_bound {
	const struct opt_inst *in;
	size_t n_opt, n_paths;
	size_t *path;      /* per task: its path */
	size_t *path_len;  /* per path: number of tasks */
	double *path_D;    /* per path: deadline (ns) */
	double *h_ns;      /* per task: largest possible deadline */
	/* per vector scratch, [i * n_opt + o]: execution / latency (ns, < 0 = option impossible), busy W */
	double *e, *busy;
	double *A, *sum;   /* per path */
	double *mult;      /* per option: lambda (islands) or mu (servers) */
};

/* Greedy disjoint path cover: repeatedly the path with the largest sum of sqrt(fastest time) among
 * the tasks not yet covered (a DP over the topological order restricted to those tasks). */
static int cover_paths(struct opt_bound *b)
{
	const struct opt_inst *in = b->in;
	size_t n = in->n_tasks;
	const size_t *topo = pd_dags_topo(in->dags);
	double *best = calloc(n, sizeof(double));
	size_t *next = calloc(n, sizeof(size_t));
	if (!best || !next) {
		free(best), free(next);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		b->path[i] = SIZE_MAX;
	for (size_t covered = 0; covered < n;) {
		/* best[i]: heaviest uncovered path starting at i; next[i]: its second task */
		size_t top = SIZE_MAX;
		for (size_t t = n; t-- > 0;) {
			size_t i = topo[t];
			if (b->path[i] != SIZE_MAX)
				continue;
			const struct pd_task *T = &in->tasks[i];
			double m = 0;
			next[i] = SIZE_MAX;
			for (size_t s = 0; s < T->n_succs; s++) {
				size_t j = T->succs[s];
				if (b->path[j] == SIZE_MAX && best[j] > m)
					m = best[j], next[i] = j;
			}
			best[i] = m + sqrt(fmax(in->fast_ns[i], 1.0));
			if (top == SIZE_MAX || best[i] > best[top])
				top = i;
		}
		size_t p = b->n_paths++;
		b->path_len[p] = 0;
		b->path_D[p] = (double)in->D_ns[top];
		for (size_t i = top; i != SIZE_MAX; i = next[i]) {
			b->path[i] = p;
			b->path_len[p]++;
			covered++;
		}
	}
	free(best);
	free(next);
	return 0;
}

struct opt_bound *opt_bound_new(const struct opt_inst *in)
{
	struct opt_bound *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	size_t n = in->n_tasks ? in->n_tasks : 1;
	b->in = in;
	b->n_opt = in->n_isl + in->n_srv;
	b->path = calloc(n, sizeof(size_t));
	b->path_len = calloc(n, sizeof(size_t));
	b->path_D = calloc(n, sizeof(double));
	b->h_ns = calloc(n, sizeof(double));
	b->e = calloc(n * b->n_opt + 1, sizeof(double));
	b->busy = calloc(n * b->n_opt + 1, sizeof(double));
	b->A = calloc(n, sizeof(double));
	b->sum = calloc(n, sizeof(double));
	b->mult = calloc(b->n_opt + 1, sizeof(double));
	if (!b->path || !b->path_len || !b->path_D || !b->h_ns || !b->e || !b->busy || !b->A || !b->sum ||
	    !b->mult || cover_paths(b)) {
		opt_bound_free(b);
		return NULL;
	}
	for (size_t i = 0; i < in->n_tasks; i++)
		b->h_ns[i] = fmin(fmin((double)in->T_ns[i], (double)in->D_ns[i]), in->hi_ns[i]);
	return b;
}

void opt_bound_free(struct opt_bound *b)
{
	if (!b)
		return;
	free(b->path), free(b->path_len), free(b->path_D), free(b->h_ns);
	free(b->e), free(b->busy), free(b->A), free(b->sum), free(b->mult);
	free(b);
}

/* The Lagrangian value at b->mult with path points b->A; accumulates into b->sum the sum of
 * sqrt(w) of the chosen options per path (the best A for the next round). */
static double lagrangian(struct opt_bound *b, double idle_w)
{
	const struct opt_inst *in = b->in;
	double v = idle_w;
	memset(b->sum, 0, b->n_paths * sizeof(double));
	for (size_t i = 0; i < in->n_tasks; i++) {
		size_t p = b->path[i];
		bool single = b->path_len[p] == 1;
		double best = INFINITY, root = 0;
		for (size_t o = 0; o < b->n_opt; o++) {
			double e = b->e[i * b->n_opt + o];
			if (e < 0)
				continue;
			double c = b->busy[i * b->n_opt + o], r = 0;
			if (o >= in->n_isl)
				c += b->mult[o] * e / (double)in->T_ns[i];
			else if (single)
				c += b->mult[o] * e / b->h_ns[i];
			else {
				r = sqrt(b->mult[o] * e);
				c += 2.0 * b->A[p] * r / b->path_D[p];
			}
			if (c < best)
				best = c, root = r;
		}
		if (!isfinite(best))
			return INFINITY; /* a task fits nowhere: no plan at this vector */
		v += best;
		b->sum[p] += root;
	}
	for (size_t p = 0; p < b->n_paths; p++)
		if (b->path_len[p] > 1)
			v -= b->A[p] * b->A[p] / b->path_D[p];
	for (size_t o = 0; o < b->n_opt; o++)
		v -= b->mult[o] * (o < in->n_isl ? (double)in->isl_ncores[o] * in->cap_raw : 1.0);
	return v;
}

/* Best A for the multipliers: two rounds of A <- realised sum (each round's value is valid). */
static double value_at(struct opt_bound *b, double idle_w)
{
	double best = -INFINITY;
	for (int round = 0; round < 2; round++) {
		double v = lagrangian(b, idle_w);
		if (!isfinite(v))
			return v;
		best = fmax(best, v);
		memcpy(b->A, b->sum, b->n_paths * sizeof(double));
	}
	return best;
}

double opt_bound_vector(struct opt_bound *b, const struct opt_sol *s, double idle_w)
{
	const struct opt_inst *in = b->in;
	for (size_t i = 0; i < in->n_tasks; i++)
		for (size_t o = 0; o < b->n_opt; o++) {
			double e = -1;
			int where;
			if (o < in->n_isl) {
				where = (int)in->isl_core0[o];
				e = (double)wcet_at(in, i, o, s->isl_opp[o]);
			} else {
				size_t v = o - in->n_isl;
				where = -(int)v - 1;
				if (in->impl[i * in->n_srv + v] >= 0)
					e = (double)opt_latency(in, i, v, s->acc_opp[in->srv[v].accel]);
			}
			/* d_i <= h_i and d_i >= C_i: an option slower than h_i is impossible */
			if (e > b->h_ns[i])
				e = -1;
			b->e[i * b->n_opt + o] = e;
			b->busy[i * b->n_opt + o] = e < 0 ? 0 : opt_task_busy_w(in, s, i, where);
		}
	memset(b->A, 0, b->n_paths * sizeof(double));
	memset(b->mult, 0, b->n_opt * sizeof(double));
	double best = value_at(b, idle_w);
	if (!isfinite(best))
		return best;
	/* coordinate search on the multipliers, multiplicative steps from the scale of a busy core */
	double *scale = calloc(b->n_opt + 1, sizeof(double));
	if (!scale)
		return best;
	for (size_t o = 0; o < b->n_opt; o++)
		if (o < in->n_isl) {
			scale[o] = in->busy_w[o][s->isl_opp[o]];
		} else {
			size_t a = in->srv[o - in->n_isl].accel;
			scale[o] = in->acc_busy_w[a][s->acc_opp[a]];
		}
	for (double step = 2.0; step > 1.05; step = sqrt(step)) {
		/* an over-capacity vector keeps rewarding larger multipliers: 64 doublings make its bound
		 * huge (still finite, still valid) */
		bool moved = true;
		for (int pass = 0; moved && pass < 64; pass++) {
			moved = false;
			for (size_t o = 0; o < b->n_opt; o++) {
				double old = b->mult[o];
				double tries[2] = {old > 0 ? old * step : fmax(scale[o], 1e-6), old / step};
				for (int t = 0; t < 2; t++) {
					b->mult[o] = tries[t];
					double v = value_at(b, idle_w);
					if (v > best * (1 + 1e-9) + 1e-12) {
						best = v, old = tries[t], moved = true;
						break;
					}
				}
				b->mult[o] = old;
			}
		}
	}
	free(scale);
	return best;
}
