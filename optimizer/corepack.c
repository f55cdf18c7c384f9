/* SPDX-License-Identifier: MIT */
/*
 * Exact packing of an island assignment onto cores (docs/MODEL.md, "Exact"): given the island or
 * server of every task and the OPPs, do cores and deadlines exist such that every core's density
 * fits and every path meets its deadline?
 *
 * Depth-first over the CPU tasks, the fullest island's first and densest first within an island (by
 * the root LP's densities), each onto a core of its island: the cores already used, most loaded
 * first, then one empty core (the empty cores of an island are interchangeable, so trying more than
 * one repeats the same subtree). Every node solves the
 * deadline LP of its partial assignment:
 *     C_i / cap <= d_i <= min(T_i, D_i),  u_i >= C_i / d_i (tangents u >= C (2/t - d/t^2)),
 *     sum_{i on core c} u_i <= cap,   sum_{i on island k} u_i <= n_k cap  (assigned or not),
 *     F_i >= F_p + d_i (CPU) or + R_i (accelerator, its FIFO bound), F_i <= D
 * The tangents under-estimate C/d, so an infeasible LP proves that no completion exists (the
 * subtree is closed); a point where every u_i >= C_i / d_i is a certificate for its assignment. At a
 * leaf such a point is the plan (its deadlines, checked again by the exact evaluator).
 *
 * Pools (opt_corepack_pooled, the branch and bound's leaves): identical islands at one OPP share
 * their cores, so a task placed on any of them may go to any core of all of them (its runtime is the
 * same there), the island rows become one row per pool, and the empty cores of a pool are
 * interchangeable. A "cannot be packed" then covers every split of the pool's tasks between twins.
 *
 * Between a short first run of this search and a second one, a heuristic packer (corepack_search.c)
 * tries the tight leaves it does not decide at once (exact_then_search).
 *
 * Cuts (opt_corepack_cut): once an assignment is known not to pack, which of its tasks make it so?
 * A task the cut frees counts on its paths only with the least time it takes wherever it goes
 * (least_ms), in no density row; the tasks kept stay on their islands. The projections of the kept
 * tasks are searched as above; every plan with the kept tasks where they are is a point of each node
 * LP whatever the free tasks' placement, so a "cannot be packed" holds for all of them, and the
 * branch and bound's no-good need only name the kept tasks. A deletion filter frees what it can:
 * the servers' tasks together (each FIFO bound counts the others on its server), each DAG's tasks
 * together, then, where a DAG could be freed, each task left in turn.
 *
 * Why not GLPK's tree search on the core-level master: with the assignment fixed GLPK sometimes
 * cannot decide a 20-task packing in 9 s (symmetric cores, lazily separated tangents at every node),
 * while this search mostly needs a few hundred small LPs.
 */
#include "optimizer/opt_impl.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Kelley rounds per node; a node whose loop ends without a verdict is branched on (its LP serves
 * only to prune), a leaf then relies on the exact evaluator and the deadline LP. The tolerance is
 * well inside the solvers' margin eta (docs/MODEL.md).
 * Inner nodes get CP_ROUNDS_INNER rounds, leaves (every task on a core) CP_ROUNDS. Why: an inner
 * node's LP never reached a certificate on the hard packings (the objective pushes every u_i onto
 * its tangents, so some task always stays a little below C_i / d_i), so it ran all 30 rounds, and
 * every round's tangents stay in the LP for all later nodes. With 30 rounds a 30-task XU4 leaf took
 * ~15 ms per node (118 nodes in its 2 s); with 5, ~4 ms (529 nodes). Soundness does not depend on
 * the count: only an infeasible LP prunes (the tangents under-estimate C/d whatever their number),
 * an undecided inner node is branched on. Bench sets (XU4 20 tasks, seeds 4914100 and 15327899)
 * that stayed open in 10 s with 30 rounds are proven in 1.8-2.7 s with 5 (with 2 or 3 rounds as
 * fast when the machine is quiet, but one run of four stayed open under load; with 10: 3.8 s). */
#define CP_ROUNDS 30
#define CP_ROUNDS_INNER 5
#define CP_TOL 1e-6
/* Time of the exact search before the heuristic packer, and the heuristic's (exact_then_search). */
#define CP_EXACT_FIRST_S 0.05
#define CP_SEARCH_S 0.1
/* Pooled leaves get the heuristic packer above this many tasks (exact_then_search). */
#define CP_POOL_SEARCH_TASKS 20
/* Share of what is left that each pool's projection (project_pool) may take after those two. */
#define CP_PROJECT_SHARE 0.3

/* opt_corepack_cut's state: the tasks it frees (placed anywhere: a path delay only, least_ms), and
 * the pool whose projection proved the rest impossible (-1 none yet: all are tried). */
struct cut {
	const struct opt_inst *in;
	struct opt_sol *s;
	bool pool, *free_;
	long only;
	double deadline_s;
};

struct cp {
	const struct opt_inst *in;
	struct opt_sol *s;
	glp_prob *lp;
	int *d, *u, *F;   /* per task (0 for accelerated tasks' d and u) */
	int *core_row;    /* per core */
	double *C;        /* per task: execution time (ms) */
	size_t *order, n_cpu;
	int *core_of;     /* per task: core, or -1 while free */
	bool project;     /* a leaf only says "this part packs in the relaxation" (project_pool) */
	struct cut *cut;  /* opt_corepack_cut's search, or NULL */
	size_t *pool;     /* per island: the island whose cores it shares (itself, or its pool's first) */
	int *ind;
	double *val, *x;
	double deadline_s;
};

static bool is_free(const struct cp *P, size_t i)
{
	return P->cut && P->cut->free_[i];
}

static int lp_col(glp_prob *lp, double lb, double ub)
{
	int c = glp_add_cols(lp, 1);
	if (isfinite(ub))
		glp_set_col_bnds(lp, c, ub > lb ? GLP_DB : GLP_FX, lb, ub > lb ? ub : lb);
	else
		glp_set_col_bnds(lp, c, GLP_LO, lb, 0);
	return c;
}

static void lp_row(glp_prob *lp, int type, double rhs, int n, const int *ind, const double *val)
{
	int r = glp_add_rows(lp, 1);
	glp_set_mat_row(lp, r, n, ind, val);
	glp_set_row_bnds(lp, r, type, rhs, rhs);
}

static void tangent(struct cp *P, size_t i, double t)
{
	int ind[3] = {0, P->u[i], P->d[i]};
	double val[3] = {0, 1.0, P->C[i] / (t * t)};
	lp_row(P->lp, GLP_LO, 2.0 * P->C[i] / t, 2, ind, val);
}

/*
 * The least time a task placed anywhere takes on its paths at the OPPs of s (ms): on a CPU island at
 * its OPP, C / cap (no deadline is shorter: the density C / d fits a core), capped at min(T, D) as
 * its deadline column is; on a FIFO server, the implementation's latency at its accelerator's OPP
 * (its FIFO response is never shorter). A lower bound over every placement, which is what lets a
 * search with such tasks speak for all of them (opt_corepack_cut).
 */
static double least_ms(const struct cp *P, size_t i)
{
	const struct opt_inst *in = P->in;
	double best = fmin((double)in->T_ns[i], (double)in->D_ns[i] - 2.0);
	for (size_t k = 0; k < in->n_isl; k++) {
		int64_t q = runtime_at(in, i, k, P->s->isl_opp[k]);
		if (q != INT64_MAX)
			best = fmin(best, (double)q / in->cap);
	}
	for (size_t v = 0; v < in->n_srv; v++)
		if (in->impl[i * in->n_srv + v] >= 0)
			best = fmin(best, (double)opt_latency(in, i, v, P->s->acc_opp[in->srv[v].accel]));
	return best * 1e-6;
}

static void build_paths(struct cp *P, const int64_t *r_ns)
{
	const struct opt_inst *in = P->in;
	for (size_t i = 0; i < in->n_tasks; i++) {
		const struct pd_task *t = pd_dags_task(in->dags, i);
		double fixed = is_free(P, i) ? least_ms(P, i)
			       : P->s->where[i] < 0 ? (double)r_ns[i] * 1e-6 : 0.0;
		size_t np = t->n_preds ? t->n_preds : 1;
		for (size_t p = 0; p < np; p++) {
			int n = 0;
			P->ind[++n] = P->F[i], P->val[n] = 1.0;
			if (t->n_preds)
				P->ind[++n] = P->F[t->preds[p]], P->val[n] = -1.0;
			if (P->d[i])
				P->ind[++n] = P->d[i], P->val[n] = -1.0;
			lp_row(P->lp, GLP_LO, fixed, n, P->ind, P->val);
		}
	}
}

static void build(struct cp *P, const int64_t *r_ns)
{
	const struct opt_inst *in = P->in;
	glp_set_obj_dir(P->lp, GLP_MIN);
	for (size_t i = 0; i < in->n_tasks; i++) {
		/* 2 ns below D, as in deadlines.c: floored deadlines never push a path past D */
		double D = ((double)in->D_ns[i] - 2.0) * 1e-6;
		P->F[i] = lp_col(P->lp, 0, D);
		if (P->s->where[i] < 0 || is_free(P, i))
			continue;
		double hi = fmin((double)in->T_ns[i] * 1e-6, D);
		P->d[i] = lp_col(P->lp, fmin(P->C[i] / in->cap, hi), hi);
		P->u[i] = lp_col(P->lp, 0, in->cap);
		glp_set_obj_coef(P->lp, P->u[i], 1.0);
	}
	for (size_t c = 0; c < in->n_cores; c++)
		P->core_row[c] = glp_add_rows(P->lp, 1), glp_set_row_bnds(P->lp, P->core_row[c], GLP_UP, 0, in->cap);
	for (size_t k = 0; k < in->n_isl; k++) {
		int n = 0;
		size_t cores = 0;
		for (size_t q = 0; q < in->n_isl; q++)
			cores += P->pool[q] == k ? in->isl_ncores[q] : 0;
		for (size_t i = 0; i < in->n_tasks; i++)
			if (P->u[i] && P->pool[in->core_isl[P->s->where[i]]] == k)
				P->ind[++n] = P->u[i], P->val[n] = 1.0;
		if (n)
			lp_row(P->lp, GLP_UP, (double)cores * in->cap, n, P->ind, P->val);
	}
	build_paths(P, r_ns);
	for (size_t i = 0; i < in->n_tasks; i++)
		if (P->d[i]) {
			double lo = glp_get_col_lb(P->lp, P->d[i]), hi = glp_get_col_ub(P->lp, P->d[i]);
			tangent(P, i, lo);
			tangent(P, i, sqrt(lo * hi));
			tangent(P, i, hi);
		}
}

/* Core c's row lists the tasks now assigned to it. */
static void set_core_row(struct cp *P, size_t c)
{
	int n = 0;
	for (size_t i = 0; i < P->in->n_tasks; i++)
		if (P->core_of[i] == (int)c)
			P->ind[++n] = P->u[i], P->val[n] = 1.0;
	glp_set_mat_row(P->lp, P->core_row[c], n, P->ind, P->val);
}

/* Kelley loop of at most `rounds` rounds: 0 the LP is infeasible (no completion exists), 1 not
 * proven so (possibly a certificate point: every u_i >= C_i / d_i (1 - tol)), -1 out of time or
 * numerical trouble. */
static int node_lp(struct cp *P, int rounds)
{
	glp_smcp sp;
	glp_init_smcp(&sp);
	sp.msg_lev = GLP_MSG_OFF;
	sp.meth = GLP_DUALP;
	for (int round = 0; round < rounds; round++) {
		double left_ms = (P->deadline_s - opt_now_s()) * 1000.0;
		if (left_ms < 1)
			return -1;
		sp.tm_lim = (int)left_ms;
		int rc = glp_simplex(P->lp, &sp);
		if (rc != 0 && rc != GLP_ETMLIM) {
			glp_std_basis(P->lp);
			rc = glp_simplex(P->lp, &sp);
		}
		if (rc != 0)
			return -1;
		if (glp_get_status(P->lp) == GLP_NOFEAS)
			return 0;
		if (glp_get_status(P->lp) != GLP_OPT)
			return -1;
		int added = 0;
		for (size_t i = 0; i < P->in->n_tasks; i++) {
			if (!P->d[i])
				continue;
			double d = glp_get_col_prim(P->lp, P->d[i]), u = glp_get_col_prim(P->lp, P->u[i]);
			if (u < P->C[i] / d * (1 - CP_TOL)) {
				tangent(P, i, d);
				added++;
			}
		}
		if (!added)
			return 1;
	}
	return 1;
}

/* A certificate at a leaf: the plan with these cores and the LP's deadlines. */
static int leaf(struct cp *P)
{
	const struct opt_inst *in = P->in;
	for (size_t i = 0; i < in->n_tasks; i++)
		if (P->d[i]) {
			P->s->where[i] = P->core_of[i];
			P->s->d_ns[i] = glp_get_col_prim(P->lp, P->d[i]) * 1e6;
		}
	if (opt_evaluate(in, P->s, NULL, 0))
		return 1;
	/* float dust at the cap: the exact deadline LP for these cores */
	return opt_deadlines_lp(in, P->s, 0, P->deadline_s) <= 1.0 && opt_evaluate(in, P->s, NULL, 0) ? 1 : -1;
}

static int dfs(struct cp *P, size_t pos)
{
	int r = node_lp(P, pos == P->n_cpu ? CP_ROUNDS : CP_ROUNDS_INNER);
	if (r <= 0)
		return r;
	if (pos == P->n_cpu)
		return P->project ? 1 : leaf(P);
	const struct opt_inst *in = P->in;
	size_t i = P->order[pos], k = P->pool[in->core_isl[P->s->where[i]]];
	/* the pool's used cores by the LP's load, most loaded first, then one empty core (best fit).
	 * Why: a tight leaf's packing has its cores full to the cap, and filling a core before opening
	 * the next finds such packings early; least loaded first (worst fit, until 2026-12-07) spread
	 * the load and met the dead ends deep. XU4 20 tasks, seed 4789763, a leaf whose big island is
	 * at 3.6000 of 3.6 cores in the LP: packed after 4592 nodes in 7.3 s, with best fit and the
	 * tightest pool first (corepack_run) after 448 nodes in 0.8 s. */
	double load[64];
	size_t cand[64], n = 0;
	bool empty_tried = false;
	for (size_t c = 0; c < in->n_cores && n < 64; c++) {
		if (P->pool[in->core_isl[c]] != k)
			continue;
		double l = 0;
		bool used = false;
		for (size_t j = 0; j < in->n_tasks; j++)
			if (P->core_of[j] == (int)c)
				used = true, l += glp_get_col_prim(P->lp, P->u[j]);
		if (!used && empty_tried)
			continue;
		empty_tried = empty_tried || !used;
		size_t at = n++;
		while (at && load[at - 1] < l)
			load[at] = load[at - 1], cand[at] = cand[at - 1], at--;
		load[at] = l, cand[at] = c;
	}
	bool unknown = false;
	for (size_t t = 0; t < n; t++) {
		P->core_of[i] = (int)cand[t];
		set_core_row(P, cand[t]);
		r = dfs(P, pos + 1);
		P->core_of[i] = -1;
		set_core_row(P, cand[t]);
		if (r == 1)
			return 1;
		if (r < 0 && opt_now_s() >= P->deadline_s)
			return -1;
		if (r < 0)
			unknown = true; /* that subtree stays open: this one cannot be proven empty */
	}
	return unknown ? -1 : 0;
}

/* Insertion sort of order[0..n) by key, largest first (n is a task count: small). */
static void sort_desc(size_t *order, size_t n, const double *key)
{
	for (size_t j = 1; j < n; j++) {
		size_t v = order[j], at = j;
		while (at && key[order[at - 1]] < key[v])
			order[at] = order[at - 1], at--;
		order[at] = v;
	}
}

/*
 * Projection onto one pool k: the same search over the tasks of k alone, every other task left to
 * its island's density row (and the paths) as at the root. Every packing of the whole assignment,
 * restricted to k, is a point of each node LP of this search, so when it closes every packing of k
 * (0) no packing of the whole exists; its leaves prove nothing (1: k packs in the relaxation).
 * Why: when one island alone cannot be packed, the whole search, whose order interleaves the
 * islands' tasks by density, proves it only after enumerating the other islands' packings in
 * between. XU4 20 tasks, seed 1627767: a leaf whose LITTLE island has 4 tasks above half a core,
 * one per core, and 5 more that must fill the rest exactly stayed undecided after 2 s of exact search
 * and 2 s of GLPK's core-level master; its projection proves it in 0.02-0.06 s.
 */
static int project_pool(struct cp *P, size_t k, size_t *part, double deadline_s)
{
	const struct opt_inst *in = P->in;
	size_t *all = P->order, n_all = P->n_cpu, n = 0;
	for (size_t q = 0; q < n_all; q++)
		if (P->pool[in->core_isl[P->s->where[all[q]]]] == k)
			part[n++] = all[q];
	if (n < 2 || (n == n_all && !P->cut)) /* one task: the root LP decided it; all: the whole search */
		return 1;
	P->order = part, P->n_cpu = n, P->project = true, P->deadline_s = deadline_s;
	int r = dfs(P, 0);
	P->order = all, P->n_cpu = n_all, P->project = false;
	return r;
}

/* 0 when some pool alone cannot be packed, else 1 (nothing proven); each pool's search gets at most
 * `share` of what is left before deadline_s. */
static int project_pools(struct cp *P, double share, double deadline_s)
{
	const struct opt_inst *in = P->in;
	size_t *part = calloc(P->n_cpu + 1, sizeof(size_t));
	int res = 1;
	for (size_t k = 0; part && k < in->n_isl && res != 0 && opt_now_s() < deadline_s; k++)
		if (P->pool[k] == k && (!P->cut || P->cut->only < 0 || (size_t)P->cut->only == k)) {
			res = project_pool(P, k, part, fmin(deadline_s, opt_now_s() + share * (deadline_s - opt_now_s())));
			if (res == 0 && P->cut)
				P->cut->only = (long)k;
		}
	free(part);
	return res == 0 ? 0 : 1;
}

/*
 * The exact search, with the heuristic packer (corepack_search.c) in between: first CP_EXACT_FIRST_S
 * of exact search (most assignments that cannot be packed are proven so by then: on the branch and
 * bound leaves of fifteen 20 / 30-task bench sets, 50 of 73 in under 0.05 s), then CP_SEARCH_S of
 * the heuristic from the root LP's deadlines (it packed every packable leaf there in 1-36 ms,
 * among them two XU4 30-task leaves the exact search needed 11 s and 210 s for), then the exact
 * search again, from its root, for the rest of the time. The exact search leaves its LP as it found
 * it (every fixing undone on the way back; the tangents it added stay valid), so it can start again.
 * Not with pools of twins up to CP_POOL_SEARCH_TASKS tasks (Xavier's leaves): there every packable
 * leaf of the 20-task sets was packed by the exact search in 7-15 ms, while 21 of 59 that cannot be
 * packed took over 0.05 s, each of which the heuristic would have made 0.1 s longer. Above, pooled
 * leaves get it (Xavier 30 tasks, 17 hard sets, two runs each: 11 of 17 proven with, 10 without;
 * two of them got cheaper plans, 13732371: 5.2440 against 5.2457-5.2461 W).
 * Then, before the exact search's second run, each pool's projection (project_pool) with up to
 * CP_PROJECT_SHARE of what is left: it costs little where it proves nothing (a packable pool's first
 * descent is a leaf), and it decides leaves the whole search does not.
 * root_ok: the root LP is at its optimum (its deadlines are path-feasible).
 */
static int exact_then_search(struct cp *P, bool root_ok, double deadline_s)
{
	const struct opt_inst *in = P->in;
	struct opt_sol h = {0};
	bool pooled = false;
	for (size_t k = 0; k < in->n_isl; k++)
		pooled = pooled || P->pool[k] != k;
	bool heur = root_ok && (!pooled || in->n_tasks > CP_POOL_SEARCH_TASKS) && opt_sol_init(&h, in) == 0;
	if (heur) {
		opt_sol_copy(&h, P->s, in);
		for (size_t i = 0; i < in->n_tasks; i++)
			if (P->d[i])
				h.d_ns[i] = glp_get_col_prim(P->lp, P->d[i]) * 1e6;
	}
	P->deadline_s = fmin(deadline_s, opt_now_s() + CP_EXACT_FIRST_S);
	int res = dfs(P, 0);
	if (res < 0 && heur && opt_now_s() < deadline_s &&
	    opt_corepack_search(in, &h, P->pool, 1, fmin(deadline_s, opt_now_s() + CP_SEARCH_S)) == 1) {
		opt_sol_copy(P->s, &h, in);
		res = 1;
	}
	if (res < 0 && opt_now_s() < deadline_s && project_pools(P, CP_PROJECT_SHARE, deadline_s) == 0)
		res = 0;
	if (res < 0 && opt_now_s() < deadline_s) {
		P->deadline_s = deadline_s;
		res = dfs(P, 0);
	}
	if (heur)
		opt_sol_free(&h);
	return res;
}

int opt_corepack(const struct opt_inst *in, struct opt_sol *s, double deadline_s)
{
	return opt_corepack_pooled(in, s, false, deadline_s);
}

/*
 * Orders the pools by how full the root LP has them (the sum of their tasks' densities over their
 * cores' capacity), fullest first, and raises each task's key (its density, at most cap <= 1) by
 * 2 per pool after its own, so the search places the fullest pool's tasks first, densest first
 * within a pool. Why: the pools interact only through the paths' deadlines, and where the fullest
 * pool's tasks came between the others' (densest first across pools), each of its dead ends was met
 * again under every packing of the other pools' tasks placed before it (the leaf of XU4 20 seed
 * 4789763 in dfs: 2636 nodes in 4.0 s by this order alone, 448 with best fit too).
 */
static void tightest_pool_first(const struct cp *P, double *key)
{
	const struct opt_inst *in = P->in;
	double *full = calloc(in->n_isl + 1, sizeof(double));
	if (!full)
		return; /* densest first across pools: the same verdicts, only slower */
	for (size_t i = 0; i < in->n_tasks; i++)
		if (P->u[i])
			full[P->pool[in->core_isl[P->s->where[i]]]] += key[i];
	for (size_t k = 0; k < in->n_isl; k++) {
		size_t cores = 0;
		for (size_t q = 0; q < in->n_isl; q++)
			cores += P->pool[q] == k ? in->isl_ncores[q] : 0;
		full[k] = cores ? full[k] / ((double)cores * in->cap) : 0.0;
	}
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (!P->u[i])
			continue;
		size_t k = P->pool[in->core_isl[P->s->where[i]]], later = 0;
		for (size_t q = 0; q < in->n_isl; q++) /* pools placed after k: less full, or tied and after it */
			later += P->pool[q] == q && q != k && (full[q] < full[k] || (full[q] == full[k] && q > k));
		key[i] += 2.0 * (double)later;
	}
	free(full);
}

/* Set-up, root LP and order of the entry points. project_only: the projections alone (with cut: the
 * search of the tasks the cut keeps, every pool's, the one pool's once one was proven impossible). */
static int corepack_run(const struct opt_inst *in, struct opt_sol *s, bool pool, bool project_only, struct cut *cut,
			double deadline_s)
{
	struct cp P = {.in = in, .s = s, .deadline_s = deadline_s, .cut = cut};
	size_t n = in->n_tasks;
	int64_t *r_ns = calloc(n + 1, sizeof(int64_t));
	double *key = calloc(n + 1, sizeof(double));
	P.d = calloc(n + 1, sizeof(int)), P.u = calloc(n + 1, sizeof(int)), P.F = calloc(n + 1, sizeof(int));
	P.core_row = calloc(in->n_cores + 1, sizeof(int)), P.C = calloc(n + 1, sizeof(double));
	P.order = calloc(n + 1, sizeof(size_t)), P.core_of = calloc(n + 1, sizeof(int));
	P.ind = calloc(2 * n + 8, sizeof(int)), P.val = calloc(2 * n + 8, sizeof(double));
	P.pool = calloc(in->n_isl + 1, sizeof(size_t));
	P.lp = glp_create_prob();
	int res = -1;
	if (!r_ns || !key || !P.d || !P.u || !P.F || !P.core_row || !P.C || !P.order || !P.core_of || !P.ind ||
	    !P.val || !P.pool || !P.lp)
		goto out;
	if (pool)
		opt_twin_pools(in, s, P.pool);
	else
		for (size_t k = 0; k < in->n_isl; k++)
			P.pool[k] = k;
	opt_fifo_response(in, s, r_ns);
	for (size_t i = 0; i < n; i++) {
		P.core_of[i] = -1;
		if (s->where[i] < 0 || is_free(&P, i))
			continue;
		P.C[i] = (double)opt_exec_ns(in, s, i) * 1e-6;
		key[i] = P.C[i] / opt_longest_d(in, i);
		P.order[P.n_cpu++] = i;
	}
	build(&P, r_ns);
	/* Densest first by the root LP's densities, which reflect the deadlines the paths leave each
	 * task; C / longest deadline ignores them (a task at 0.28 of a core by that measure took a whole
	 * core in the LP). Big items first is what makes a packing's dead ends show early: on an XU4
	 * 20-task leaf (both islands full to 4.00 cores) 2013 nodes, 1.1 s to prove it impossible,
	 * against 6083 nodes, 10.9 s in the order of C / longest deadline. The fullest pool goes first
	 * (tightest_pool_first). The order changes no verdict; an infeasible root LP is one (no
	 * completion of the empty assignment). */
	int r0 = node_lp(&P, CP_ROUNDS);
	if (r0 == 0) {
		res = 0;
		goto out;
	}
	for (size_t i = 0; r0 > 0 && i < n; i++)
		if (P.u[i])
			key[i] = glp_get_col_prim(P.lp, P.u[i]);
	if (r0 > 0)
		tightest_pool_first(&P, key);
	sort_desc(P.order, P.n_cpu, key);
	res = project_only ? project_pools(&P, 1.0, deadline_s) : exact_then_search(&P, r0 > 0, deadline_s);
out:
	if (P.lp)
		glp_delete_prob(P.lp);
	free(r_ns), free(key), free(P.d), free(P.u), free(P.F), free(P.core_row), free(P.C), free(P.order);
	free(P.core_of), free(P.ind), free(P.val), free(P.pool);
	return res;
}

int opt_corepack_pooled(const struct opt_inst *in, struct opt_sol *s, bool pool, double deadline_s)
{
	return corepack_run(in, s, pool, false, NULL, deadline_s);
}

int opt_corepack_project(const struct opt_inst *in, struct opt_sol *s, double deadline_s)
{
	return corepack_run(in, s, false, true, NULL, deadline_s);
}

/* The search of the tasks that the cut leaves in place, with its own share of what is left. */
static int cut_run(struct cut *c, double share)
{
	double now = opt_now_s();
	if (now >= c->deadline_s)
		return -1;
	return corepack_run(c->in, c->s, c->pool, true, c, now + share * (c->deadline_s - now));
}

/* Frees the set's tasks that pick selects, at once: kept freed where the rest (some task at least) is
 * still proven impossible. pick is left with the tasks it tried to free. */
static bool free_group(struct cut *c, bool *pick, double share)
{
	size_t n = c->in->n_tasks, m = 0, left = 0;
	for (size_t i = 0; i < n; i++) {
		pick[i] = pick[i] && !c->free_[i]; /* so that undoing it frees nothing freed before */
		m += pick[i];
		left += !pick[i] && !c->free_[i];
	}
	if (!m || !left) /* a cut keeps one task at least */
		return false;
	for (size_t i = 0; i < n; i++)
		c->free_[i] = c->free_[i] || pick[i];
	if (cut_run(c, share) == 0)
		return true;
	for (size_t i = 0; i < n; i++)
		if (pick[i])
			c->free_[i] = false;
	return false;
}

/*
 * Deletion filter: first each DAG's CPU tasks at once (the tasks of a DAG whose paths are not tight
 * go free together), then, if some DAG went free, each CPU task left, least dense first (the dense
 * ones are what a packing fails on). Every set it keeps is proven impossible; what it cannot decide
 * in time stays in the set. Why not task by task always: where no DAG can be freed the failure is on
 * the paths of every DAG, and the filter freed 1-3 of 20 tasks in 0.2 s per leaf (XU4 20 tasks, seed
 * 7715119: 90 leaves, 17.5 s of both workers' 20, and the set's gap grew from 0.037 to 0.066 %).
 * pick: scratch, n_tasks.
 */
static void shrink_cut(struct cut *c, bool *pick)
{
	const struct opt_inst *in = c->in;
	size_t n = in->n_tasks, m = 0, *ord = calloc(n + 1, sizeof(size_t));
	double *key = calloc(n + 1, sizeof(double));
	if (!ord || !key)
		goto out;
	bool any = false;
	for (size_t g = 0; g < in->n_dags && in->n_dags > 1; g++) {
		for (size_t i = 0; i < n; i++)
			pick[i] = in->task_dag[i] == g && c->s->where[i] >= 0;
		any = free_group(c, pick, 1.0 / (double)(in->n_dags - g + 2)) || any;
	}
	if (!any)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!c->free_[i] && c->s->where[i] >= 0) {
			key[i] = (double)opt_exec_ns(in, c->s, i) / opt_longest_d(in, i);
			ord[m++] = i;
		}
	sort_desc(ord, m, key);
	memset(pick, 0, n * sizeof(bool));
	for (size_t q = m; q-- > 1;) { /* least dense first; the densest stays (a cut keeps one) */
		pick[ord[q]] = true;
		free_group(c, pick, 1.0 / (double)q);
		pick[ord[q]] = false;
	}
out:
	free(ord), free(key);
}

int opt_corepack_cut(const struct opt_inst *in, struct opt_sol *s, bool pool, int *cut, double deadline_s)
{
	size_t n = in->n_tasks;
	bool *free_ = calloc(n + 1, sizeof(bool)), *pick = calloc(n + 1, sizeof(bool));
	struct cut c = {.in = in, .s = s, .pool = pool, .free_ = free_, .only = -1, .deadline_s = deadline_s};
	int res = -1;
	if (!free_ || !pick)
		goto out;
	res = cut_run(&c, 0.3);
	if (res == 0) {
		/* the servers' FIFO bounds count every task on them: free them all at once or none */
		for (size_t i = 0; i < n; i++)
			pick[i] = s->where[i] < 0;
		free_group(&c, pick, 0.3);
		shrink_cut(&c, pick);
		for (size_t i = 0; i < n; i++)
			cut[i] = free_[i] ? OPT_WHERE_ANY : s->where[i];
	}
out:
	free(free_), free(pick);
	return res;
}
