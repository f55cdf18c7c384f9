/* SPDX-License-Identifier: MIT */
/*
 * Heuristic core packing of a tight island assignment (the branch and bound's leaves, corepack.c):
 * finds cores and deadlines, never proves that none exist.
 *
 * Why: on XU4 30-task sets the exact search (corepack.c) left single leaves undecided in its 2 s
 * whose islands are full to 3.59 of 3.60 cores in the LP, and which are packable (found by the exact
 * search after 11 s and 210 s): the search's depth-first order makes an early wrong core choice
 * show only deep in the tree. A packing found at once makes such a leaf a plan.
 *
 * The search works on densities fixed by one path-feasible set of deadlines (the corepack root LP's:
 * every path fits with them, so an assignment whose cores all hold their densities within cap is a
 * plan with those very deadlines). With densities fixed, packing is number partitioning per pool of
 * cores: a descent on the sum of squared core loads (moves and swaps of tasks between cores of one
 * pool) from a largest-first worst-fit start, then random kicks from the best assignment seen. Every
 * new local optimum is handed to the exact deadline LP for its cores (opt_deadlines_lp), which may
 * shift deadlines along the paths to bring the cores within cap where the fixed densities do not
 * fit. Every plan returned has passed the exact evaluator (opt_evaluate: floored deadlines, every
 * core within cap_raw, every path within its deadline).
 */
#include "optimizer/opt_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct srch {
	const struct opt_inst *in;
	size_t n;        /* CPU tasks */
	size_t *task;    /* [n]: task index */
	double *u;       /* [n]: density (fixed) */
	size_t *pool;    /* [n]: pool of the task (an island index) */
	int *a, *best;   /* [n]: core */
	double *load;    /* [n_cores] */
	uint64_t rng;
	uint64_t *seen;  /* hashes of the assignments handed to the LP */
	size_t n_seen, cap_seen;
};

static uint64_t rnd(struct srch *S)
{
	S->rng ^= S->rng << 13;
	S->rng ^= S->rng >> 7;
	S->rng ^= S->rng << 17;
	return S->rng;
}

/* Whether core c belongs to pool p (the island of c, or its pool's first island). */
static bool in_pool(const struct srch *S, const size_t *isl_pool, size_t c, size_t p)
{
	return isl_pool[S->in->core_isl[c]] == p;
}

static void loads(struct srch *S)
{
	memset(S->load, 0, S->in->n_cores * sizeof(double));
	for (size_t j = 0; j < S->n; j++)
		S->load[S->a[j]] += S->u[j];
}

/* Largest first, each onto the least loaded core of its pool. */
static void lpt(struct srch *S, const size_t *isl_pool)
{
	const struct opt_inst *in = S->in;
	size_t *ord = malloc(S->n * sizeof(size_t));
	if (!ord)
		return;
	for (size_t j = 0; j < S->n; j++) {
		size_t at = j;
		while (at && S->u[ord[at - 1]] < S->u[j])
			ord[at] = ord[at - 1], at--;
		ord[at] = j;
	}
	memset(S->load, 0, in->n_cores * sizeof(double));
	for (size_t q = 0; q < S->n; q++) {
		size_t j = ord[q];
		long best = -1;
		for (size_t c = 0; c < in->n_cores; c++)
			if (in_pool(S, isl_pool, c, S->pool[j]) && (best < 0 || S->load[c] < S->load[best]))
				best = (long)c;
		S->a[j] = (int)best;
		S->load[best] += S->u[j];
	}
	free(ord);
}

/*
 * Best-improvement descent on sum_c load_c^2 (with a pool's total fixed, the most balanced cores):
 * a move of task j from core x to y changes it by 2 u_j (load_y - load_x + u_j), a swap of j (on x)
 * and l (on y) by 2 (u_j - u_l) (load_y - load_x + u_j - u_l).
 */
static void descend(struct srch *S, const size_t *isl_pool)
{
	const struct opt_inst *in = S->in;
	for (int it = 0; it < 1000; it++) {
		double bd = -1e-12;
		long bj = -1, bl = -1, by = -1;
		for (size_t j = 0; j < S->n; j++) {
			size_t x = (size_t)S->a[j];
			for (size_t y = 0; y < in->n_cores; y++) {
				if (y == x || !in_pool(S, isl_pool, y, S->pool[j]))
					continue;
				double dl = 2 * S->u[j] * (S->load[y] - S->load[x] + S->u[j]);
				if (dl < bd)
					bd = dl, bj = (long)j, bl = -1, by = (long)y;
			}
			for (size_t l = j + 1; l < S->n; l++) {
				size_t y = (size_t)S->a[l];
				if (y == x || S->pool[l] != S->pool[j])
					continue;
				double du = S->u[j] - S->u[l];
				double dl = 2 * du * (S->load[y] - S->load[x] + du);
				if (dl < bd)
					bd = dl, bj = (long)j, bl = (long)l, by = (long)y;
			}
		}
		if (bj < 0)
			return;
		size_t x = (size_t)S->a[bj];
		S->a[bj] = (int)by;
		if (bl >= 0)
			S->a[bl] = (int)x;
		loads(S);
	}
}

/* Random kicks: `k` moves of a task to another core of its pool. */
static void kick(struct srch *S, const size_t *isl_pool, int k)
{
	const struct opt_inst *in = S->in;
	for (int t = 0; t < k; t++) {
		size_t j = rnd(S) % S->n, ncand = 0;
		for (size_t c = 0; c < in->n_cores; c++)
			ncand += in_pool(S, isl_pool, c, S->pool[j]) && (int)c != S->a[j];
		if (!ncand)
			continue;
		size_t pick = rnd(S) % ncand;
		for (size_t c = 0; c < in->n_cores; c++)
			if (in_pool(S, isl_pool, c, S->pool[j]) && (int)c != S->a[j] && pick-- == 0) {
				S->a[j] = (int)c;
				break;
			}
	}
	loads(S);
}

/* Hash of the assignment up to the order of the cores inside each pool (interchangeable cores):
 * the cores renumbered by their first task. */
static uint64_t key(const struct srch *S)
{
	int ren[256];
	for (size_t c = 0; c < S->in->n_cores && c < 256; c++)
		ren[c] = -1;
	int next = 0;
	uint64_t h = 1469598103934665603ULL;
	for (size_t j = 0; j < S->n; j++) {
		int c = S->a[j];
		if (c < 256 && ren[c] < 0)
			ren[c] = next++;
		h = (h ^ (uint64_t)(c < 256 ? ren[c] : c)) * 1099511628211ULL;
	}
	return h;
}

static bool seen_before(struct srch *S, uint64_t h)
{
	for (size_t q = 0; q < S->n_seen; q++)
		if (S->seen[q] == h)
			return true;
	if (S->n_seen == S->cap_seen) {
		size_t nc = S->cap_seen ? 2 * S->cap_seen : 64;
		uint64_t *ns = realloc(S->seen, nc * sizeof(uint64_t));
		if (!ns)
			return false;
		S->seen = ns, S->cap_seen = nc;
	}
	S->seen[S->n_seen++] = h;
	return false;
}

/* The current assignment as a plan in t (deadlines of s, then the exact LP): max density / cap. */
static double check(struct srch *S, const struct opt_sol *s, struct opt_sol *t, double deadline_s)
{
	const struct opt_inst *in = S->in;
	opt_sol_copy(t, s, in);
	for (size_t j = 0; j < S->n; j++)
		t->where[S->task[j]] = S->a[j];
	double m = 0;
	for (size_t c = 0; c < in->n_cores; c++)
		m = fmax(m, S->load[c]);
	if (m <= in->cap && opt_evaluate(in, t, NULL, 0))
		return m / in->cap;
	double r = opt_deadlines_lp(in, t, 0, deadline_s);
	return r <= 1.0 && opt_evaluate(in, t, NULL, 0) ? r : fmax(r, 1.0 + 1e-9);
}

int opt_corepack_search(const struct opt_inst *in, struct opt_sol *s, const size_t *isl_pool, uint64_t seed,
			double deadline_s)
{
	struct srch S = {.in = in, .rng = seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL};
	size_t n = in->n_tasks;
	S.task = malloc((n + 1) * sizeof(size_t)), S.pool = malloc((n + 1) * sizeof(size_t));
	S.u = malloc((n + 1) * sizeof(double));
	S.a = malloc((n + 1) * sizeof(int)), S.best = malloc((n + 1) * sizeof(int));
	S.load = malloc((in->n_cores + 1) * sizeof(double));
	struct opt_sol t = {0};
	int res = -1;
	if (!S.task || !S.pool || !S.u || !S.a || !S.best || !S.load || opt_sol_init(&t, in))
		goto out;
	if (!S.rng)
		S.rng = 1;
	for (size_t i = 0; i < n; i++) {
		if (s->where[i] < 0)
			continue;
		S.task[S.n] = i;
		S.pool[S.n] = isl_pool[in->core_isl[s->where[i]]];
		S.u[S.n++] = (double)opt_exec_ns(in, s, i) / s->d_ns[i];
	}
	if (!S.n) /* nothing to place on cores: the exact search's leaf is the whole question */
		goto out;
	lpt(&S, isl_pool);
	double best = INFINITY;
	for (int round = 0; opt_now_s() < deadline_s; round++) {
		descend(&S, isl_pool);
		if (!seen_before(&S, key(&S))) {
			double r = check(&S, s, &t, deadline_s);
			if (r <= 1.0) {
				opt_sol_copy(s, &t, in);
				res = 1;
				break;
			}
			if (r < best) {
				best = r;
				memcpy(S.best, S.a, S.n * sizeof(int));
			}
		}
		if (isfinite(best))
			memcpy(S.a, S.best, S.n * sizeof(int));
		kick(&S, isl_pool, 1 + (int)(rnd(&S) % 3));
	}
out:
	opt_sol_free(&t);
	free(S.task), free(S.pool), free(S.u), free(S.a), free(S.best), free(S.load), free(S.seen);
	return res;
}
