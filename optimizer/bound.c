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
 * Paths are also too long when the cheap (slow) options of their tasks add up: every plan has
 * sum_{j in P} e_j <= D_P (e_j the execution time or accelerator latency, d_j >= C_j, R_j >= L_j),
 * dualised with nu_P >= 0 over the normalised row sum e_j / D_P - 1.
 * Every (lambda, mu, nu, A) gives a valid bound, so the crude subgradient search over them below
 * can only cost tightness, never validity.
 */
#include "optimizer/opt_impl.h"

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
	double *esum;      /* per path: sum of e of the chosen options */
	double *nu, *gnu;  /* per path: multiplier of the length row, its subgradient */
	double *mult, *g;  /* per option: lambda (islands) or mu (servers), its subgradient */
	size_t *choice;    /* per task: option of the last Lagrangian minimum */
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
	b->esum = calloc(n, sizeof(double));
	b->nu = calloc(n, sizeof(double));
	b->gnu = calloc(n, sizeof(double));
	b->choice = calloc(n, sizeof(size_t));
	b->mult = calloc(b->n_opt + 1, sizeof(double));
	b->g = calloc(b->n_opt + 1, sizeof(double));
	if (!b->path || !b->path_len || !b->path_D || !b->h_ns || !b->e || !b->busy || !b->A || !b->sum ||
	    !b->esum || !b->nu || !b->gnu || !b->choice || !b->mult || !b->g ||
	    cover_paths(b)) {
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
	free(b->esum), free(b->nu), free(b->gnu), free(b->choice), free(b->g);
	free(b);
}

/* The Lagrangian value at (b->mult, b->nu) with path points b->A. Records each task's chosen
 * option, and per path the sum of sqrt(w) (the best A for the next round) and of e. */
static double lagrangian(struct opt_bound *b, double idle_w)
{
	const struct opt_inst *in = b->in;
	double v = idle_w;
	memset(b->sum, 0, b->n_paths * sizeof(double));
	memset(b->esum, 0, b->n_paths * sizeof(double));
	for (size_t i = 0; i < in->n_tasks; i++) {
		size_t p = b->path[i];
		bool single = b->path_len[p] == 1;
		double best = INFINITY, root = 0, len = 0;
		for (size_t o = 0; o < b->n_opt; o++) {
			double e = b->e[i * b->n_opt + o];
			if (e < 0)
				continue;
			double c = b->busy[i * b->n_opt + o], r = 0;
			if (!single)
				c += b->nu[p] * e / b->path_D[p];
			if (o >= in->n_isl)
				c += b->mult[o] * e / (double)in->T_ns[i];
			else if (single)
				c += b->mult[o] * e / b->h_ns[i];
			else {
				r = sqrt(b->mult[o] * e);
				c += 2.0 * b->A[p] * r / b->path_D[p];
			}
			if (c < best)
				best = c, root = r, len = e, b->choice[i] = o;
		}
		if (!isfinite(best))
			return INFINITY; /* a task fits nowhere: no plan at this vector */
		v += best;
		b->sum[p] += root;
		b->esum[p] += len;
	}
	for (size_t p = 0; p < b->n_paths; p++)
		if (b->path_len[p] > 1)
			v -= b->A[p] * b->A[p] / b->path_D[p] + b->nu[p];
	for (size_t o = 0; o < b->n_opt; o++)
		v -= b->mult[o] * (o < in->n_isl ? (double)in->isl_ncores[o] * in->cap_raw : 1.0);
	return v;
}

/* Subgradient of the last Lagrangian minimum (rows normalised to "fraction over the limit"); the
 * island densities use the sqrt split of their path, d_j = D sqrt(e_j) / sum sqrt(e). Returns the
 * squared norm. */
static double subgradient(struct opt_bound *b)
{
	const struct opt_inst *in = b->in;
	double *se = b->sum; /* reused: per path sum of sqrt(e) of the CPU choices */
	memset(se, 0, b->n_paths * sizeof(double));
	memset(b->g, 0, b->n_opt * sizeof(double));
	for (size_t i = 0; i < in->n_tasks; i++)
		if (b->choice[i] < in->n_isl)
			se[b->path[i]] += sqrt(b->e[i * b->n_opt + b->choice[i]]);
	for (size_t i = 0; i < in->n_tasks; i++) {
		size_t p = b->path[i], o = b->choice[i];
		double e = b->e[i * b->n_opt + o];
		if (o >= in->n_isl)
			b->g[o] += e / (double)in->T_ns[i];
		else if (b->path_len[p] == 1)
			b->g[o] += e / b->h_ns[i];
		else
			b->g[o] += sqrt(e) * se[p] / b->path_D[p];
	}
	double norm = 0;
	for (size_t o = 0; o < b->n_opt; o++) {
		double cap = o < in->n_isl ? (double)in->isl_ncores[o] * in->cap_raw : 1.0;
		b->g[o] = b->g[o] / cap - 1.0;
		if (b->mult[o] > 0 || b->g[o] > 0)
			norm += b->g[o] * b->g[o];
	}
	for (size_t p = 0; p < b->n_paths; p++) {
		b->gnu[p] = b->path_len[p] > 1 ? b->esum[p] / b->path_D[p] - 1.0 : 0.0;
		if (b->nu[p] > 0 || b->gnu[p] > 0)
			norm += b->gnu[p] * b->gnu[p];
	}
	return norm;
}

/* Subgradient steps on the multipliers; the island / server rows are scaled by their capacity so
 * that every multiplier is in W per "fraction over the limit". */
#define OPT_BOUND_ITERS 60

double opt_bound_vector(struct opt_bound *b, const struct opt_sol *s, double target_w)
{
	double idle_w = opt_vector_idle_w(b->in, s);
	const struct opt_inst *in = b->in;
	for (size_t i = 0; i < in->n_tasks; i++)
		for (size_t o = 0; o < b->n_opt; o++) {
			double e = -1;
			int where;
			if (o < in->n_isl) {
				where = (int)in->isl_core0[o];
				e = (double)runtime_at(in, i, o, s->isl_opp[o]);
			} else {
				size_t v = o - in->n_isl;
				where = opt_where_server(v);
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
	memset(b->nu, 0, b->n_paths * sizeof(double));
	double best = lagrangian(b, idle_w);
	if (!isfinite(best))
		return best;
	double theta = 1.0;
	int stall = 0;
	for (int it = 0; it < OPT_BOUND_ITERS; it++) {
		double norm = subgradient(b);
		if (norm < 1e-18)
			break; /* the minimum satisfies every row: the bound cannot rise this way */
		double gap = (isfinite(target_w) ? target_w : best * 1.5) - best;
		if (gap <= 0)
			break;
		double step = theta * gap / norm;
		for (size_t o = 0; o < b->n_opt; o++) {
			double cap = o < in->n_isl ? (double)in->isl_ncores[o] * in->cap_raw : 1.0;
			b->mult[o] = fmax(0, b->mult[o] + step * b->g[o] / cap);
		}
		for (size_t p = 0; p < b->n_paths; p++)
			b->nu[p] = fmax(0, b->nu[p] + step * b->gnu[p]);
		/* A: the realised sqrt sums of the previous minimum (any A >= 0 is valid) */
		memcpy(b->A, b->sum, b->n_paths * sizeof(double));
		lagrangian(b, idle_w);
		memcpy(b->A, b->sum, b->n_paths * sizeof(double));
		double v = lagrangian(b, idle_w);
		if (v > best + 1e-12) {
			best = v, stall = 0;
		} else if (++stall >= 5) {
			theta *= 0.5, stall = 0;
		}
	}
	return best;
}
