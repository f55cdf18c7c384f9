/* SPDX-License-Identifier: MIT */
/*
 * Deadline assignment for a fixed placement and fixed OPPs.
 *
 * Every CPU task i has an execution time C_i (wcet_at), every accelerated task a fixed delay R_i (its
 * FIFO bound). We look for deadlines d_i >= C_i such that every source-to-sink path of DAG g sums to
 * at most D'_g = (1 - slack) D_g, and the largest core density sum_{i on c} C_i / d_i is as small as
 * possible (<= cap means schedulable).
 *
 * Fast rule (used inside the local search, O(iters * (V + E))): give every task its execution time
 * plus a share of the path slack proportional to a weight w_i = sqrt(mu_c C_i):
 *
 *     d_i = C_i + w_i (D' - Emax_i) / Wmax_i
 *
 * where Emax_i / Wmax_i are the largest sums of execution times / weights over the paths through i.
 * For any path P through i, Emax_i >= E(P) and Wmax_i >= W(P), so sum_{j in P} d_j <= E(P) + (D' -
 * E(P)) = D': every path fits by construction. The proportional rule d_i = w_i (D' - Rmax_i) / Wmax_i
 * (accelerator delays Rmax only) is tried too; it is the closed-form optimum on a chain (d ~ sqrt(C),
 * Lagrange) and valid by the same argument when it keeps d_i >= C_i. The multipliers mu_c are
 * raised on the most loaded cores for a few rounds (a cheap subgradient step on the min-max).
 *
 * Exact rule (polish): the convex program min lambda s.t. sum_{i on c} C_i/d_i <= lambda, paths, box;
 * first by the interior point method of deadlines_ipm.c, and where that leaves the question open by
 * GLPK dual simplex on u_i >= C_i/d_i with Kelley tangent cuts u_i >= C_i (2/t - d_i/t^2).
 */
#include "optimizer/opt_impl.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Slack-reclaim passes after each rule (each one sweep); 0 turns it off. */
#ifndef OPT_RECLAIM_LOOP
#define OPT_RECLAIM_LOOP 1
#endif
#ifndef OPT_RECLAIM_FINAL
#define OPT_RECLAIM_FINAL 2
#endif

/* The adjacency of every task in topological order, flat (CSR): g_pred[g_poff[t] .. g_poff[t + 1]) are
 * the predecessors of task g_topo[t], in the DAG file's order (g_succ likewise). A sweep then reads
 * three arrays instead of one struct pd_task per task. */
static int graph_new(const struct opt_inst *in, struct opt_ws *w)
{
	size_t n = in->n_tasks, np = 0, ns = 0;
	const size_t *topo = pd_dags_topo(in->dags);
	for (size_t i = 0; i < n; i++)
		np += in->tasks[i].n_preds, ns += in->tasks[i].n_succs;
	w->g_topo = calloc(n + 1, sizeof(size_t));
	w->g_poff = calloc(n + 1, sizeof(size_t));
	w->g_soff = calloc(n + 1, sizeof(size_t));
	w->g_pred = calloc(np + 1, sizeof(size_t));
	w->g_succ = calloc(ns + 1, sizeof(size_t));
	if (!w->g_topo || !w->g_poff || !w->g_soff || !w->g_pred || !w->g_succ)
		return -1;
	np = ns = 0;
	for (size_t t = 0; t < n; t++) {
		const struct pd_task *T = &in->tasks[topo[t]];
		w->g_topo[t] = topo[t];
		w->g_poff[t] = np, w->g_soff[t] = ns;
		for (size_t p = 0; p < T->n_preds; p++)
			w->g_pred[np++] = T->preds[p];
		for (size_t p = 0; p < T->n_succs; p++)
			w->g_succ[ns++] = T->succs[p];
	}
	w->g_poff[n] = np, w->g_soff[n] = ns;
	return 0;
}

struct opt_ws *opt_ws_new(const struct opt_inst *in)
{
	struct opt_ws *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	size_t n = in->n_tasks ? in->n_tasks : 1, nc = in->n_cores ? in->n_cores : 1;
	w->n = n;
	w->nc = nc;
	double **arrs[] = {&w->e, &w->w, &w->ef, &w->eb, &w->wf, &w->wb, &w->rf, &w->rb, &w->dbest, &w->keep,
			   &w->xf, &w->xb, &w->dprop, &w->c_w, &w->c_wf, &w->c_wb, &w->c_ds, &w->c_dp,
			   &w->c_wmax, &w->dlim, &w->emax, &w->rmax, &w->wmax, &w->yf, &w->yb};
	bool ok = true;
	for (size_t j = 0; j < sizeof(arrs) / sizeof(arrs[0]); j++)
		ok = (*arrs[j] = calloc(n, sizeof(double))) && ok;
	ok = graph_new(in, w) == 0 && ok;
	ok = (w->mu = calloc(nc, sizeof(double))) && ok;
	ok = (w->load = calloc(nc, sizeof(double))) && ok;
	ok = (w->load2 = calloc(nc, sizeof(double))) && ok;
	ok = (w->pload = calloc(nc, sizeof(double))) && ok;
	ok = (w->bload = calloc(nc, sizeof(double))) && ok;
	ok = (w->r = calloc(n, sizeof(int64_t))) && ok;
	ok = (w->keys = calloc(2 * n, 2 * sizeof(double))) && ok;
	ok = (w->cgrp = calloc(nc, sizeof(size_t))) && ok;
	ok = (w->ipool = calloc(in->n_isl ? in->n_isl : 1, sizeof(size_t))) && ok;
	ok = opt_sol_init(&w->pbest, in) == 0 && ok;
	ok = opt_sol_init(&w->ptmp, in) == 0 && ok;
	if (!ok) {
		opt_ws_free(w);
		return NULL;
	}
	return w;
}

void opt_ws_free(struct opt_ws *w)
{
	if (!w)
		return;
	free(w->e), free(w->w), free(w->ef), free(w->eb), free(w->wf), free(w->wb), free(w->keep);
	free(w->xf), free(w->xb);
	free(w->dprop), free(w->c_w), free(w->c_wf), free(w->c_wb), free(w->c_ds), free(w->c_dp);
	free(w->rf), free(w->rb), free(w->mu), free(w->load), free(w->load2), free(w->dbest), free(w->r), free(w->pload), free(w->bload), free(w->keys);
	free(w->c_wmax), free(w->dlim), free(w->emax), free(w->rmax), free(w->wmax), free(w->yf), free(w->yb);
	free(w->g_topo), free(w->g_poff), free(w->g_pred), free(w->g_soff), free(w->g_succ);
	free(w->cgrp), free(w->ipool);
	opt_sol_free(&w->pbest);
	opt_sol_free(&w->ptmp);
	free(w);
}

double opt_ws_path_exec(const struct opt_ws *w, size_t i)
{
	return w->ef[i] + w->eb[i] - w->e[i];
}

/* Forward and backward longest sums of x over the paths ending at / starting from each task. */
static void sweep(const struct opt_ws *w, size_t n, const double *x, double *fwd, double *bwd)
{
	const size_t *topo = w->g_topo, *off = w->g_poff, *adj = w->g_pred;
	for (size_t t = 0; t < n; t++) {
		double m = 0;
		for (size_t p = off[t]; p < off[t + 1]; p++)
			m = fwd[adj[p]] > m ? fwd[adj[p]] : m;
		fwd[topo[t]] = m + x[topo[t]];
	}
	off = w->g_soff, adj = w->g_succ;
	for (size_t t = n; t-- > 0;) {
		double m = 0;
		for (size_t p = off[t]; p < off[t + 1]; p++)
			m = bwd[adj[p]] > m ? bwd[adj[p]] : m;
		bwd[topo[t]] = m + x[topo[t]];
	}
}

/* sweep() of x and of y in one pass over the graph (each result exactly as from its own sweep). */
static void sweep2(const struct opt_ws *w, size_t n, const double *x, double *xf, double *xb, const double *y,
		   double *yf, double *yb)
{
	const size_t *topo = w->g_topo, *off = w->g_poff, *adj = w->g_pred;
	for (size_t t = 0; t < n; t++) {
		double m = 0, k = 0;
		for (size_t p = off[t]; p < off[t + 1]; p++) {
			m = xf[adj[p]] > m ? xf[adj[p]] : m;
			k = yf[adj[p]] > k ? yf[adj[p]] : k;
		}
		xf[topo[t]] = m + x[topo[t]];
		yf[topo[t]] = k + y[topo[t]];
	}
	off = w->g_soff, adj = w->g_succ;
	for (size_t t = n; t-- > 0;) {
		double m = 0, k = 0;
		for (size_t p = off[t]; p < off[t + 1]; p++) {
			m = xb[adj[p]] > m ? xb[adj[p]] : m;
			k = yb[adj[p]] > k ? yb[adj[p]] : k;
		}
		xb[topo[t]] = m + x[topo[t]];
		yb[topo[t]] = k + y[topo[t]];
	}
}

/* The largest of the core densities load, over cap. */
static double top_load(const struct opt_inst *in, const double *load)
{
	double m = 0;
	for (size_t c = 0; c < in->n_cores; c++)
		m = load[c] > m ? load[c] : m;
	return m / in->cap;
}

/* Largest core density over cap for deadlines d (CPU tasks). */
static double max_load(const struct opt_inst *in, const struct opt_sol *s, struct opt_ws *w, const double *d)
{
	memset(w->load, 0, in->n_cores * sizeof(double));
	for (size_t i = 0; i < in->n_tasks; i++)
		if (s->where[i] >= 0)
			w->load[s->where[i]] += w->e[i] / d[i];
	return top_load(in, w->load);
}

/* One reclaim pass (below) on the delays d from their sweeps xf / xb; returns whether a deadline grew
 * by more than 1e-6 (relative). load (or NULL): the core densities of the new deadlines, summed in
 * the order max_load sums them (the same numbers, without another pass over the tasks). */
static bool reclaim_update(const struct opt_inst *in, const struct opt_sol *s, const struct opt_ws *w, double *d,
			   const double *xf, const double *xb, double *load)
{
	bool grew = false;
	if (load)
		memset(load, 0, in->n_cores * sizeof(double));
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (s->where[i] < 0)
			continue;
		double D = w->dlim[i];
		double lmax = xf[i] + xb[i] - d[i], wmax = w->wmax[i];
		if (!(wmax <= 0 || lmax >= D)) {
			double nd = opt_min(d[i] + w->w[i] * (D - lmax) / wmax, (double)in->T_ns[i]);
			grew = grew || nd > d[i] * (1 + 1e-6);
			d[i] = opt_max(d[i], nd);
		}
		if (load)
			load[s->where[i]] += w->e[i] / d[i];
	}
	return grew;
}

/* Slack reclaim: the rule above is conservative (task i's share uses the worst execution sum and the
 * worst weight sum over its paths, often two different paths), so most paths end before D'. The same
 * argument applied again with x = the current delays (d_i for CPU tasks, R_i for accelerated ones)
 * gives every CPU task d_i += w_i (D' - Lmax_i) / Wmax_i, Lmax_i / Wmax_i the largest sums of x / w over
 * the paths through i: for every path P through i, Lmax_i >= L(P) and Wmax_i >= W(P), so P grows by at
 * most (D' - L(P)) and still fits. Deadlines only grow, so every density only falls. Reads the weight
 * sweeps w->w / wmax of the rule just applied; w->xf / xb are its scratch. d must hold every task's
 * delay (R_i = w->e[i] for accelerated tasks, as both rules write them): it is swept as it is. d2 (or
 * NULL, same form): a second deadline set reclaimed the same way, independently, its sweeps in the
 * same pass over the graph (w->yf / yb); each set stops after the first pass that grows none of its
 * deadlines. load / load2 (or NULL): the core densities of d / d2 after the last pass (none without
 * a pass). */
static void reclaim(const struct opt_inst *in, const struct opt_sol *s, struct opt_ws *w, double *d, double *d2,
		    int passes, double *load, double *load2)
{
	bool on1 = true, on2 = d2 != NULL;
	for (int p = 0; p < passes && (on1 || on2); p++) {
		if (on1 && on2) {
			sweep2(w, in->n_tasks, d, w->xf, w->xb, d2, w->yf, w->yb);
			on1 = reclaim_update(in, s, w, d, w->xf, w->xb, load);
			on2 = reclaim_update(in, s, w, d2, w->yf, w->yb, load2);
		} else {
			double *dd = on1 ? d : d2;
			sweep(w, in->n_tasks, dd, w->xf, w->xb);
			bool grew = reclaim_update(in, s, w, dd, w->xf, w->xb, on1 ? load : load2);
			if (on1)
				on1 = grew;
			else
				on2 = grew;
		}
	}
}

/* The deadlines of both rules at the current mu into ds (slack rule) and dp (proportional rule, valid
 * when *pok), accelerated tasks at their delay; no core loads. Returns the largest execution sum
 * over the paths through a task over its D (> 1: no deadlines fit; ds, dp then unset). */
static double rule_deadlines(const struct opt_inst *in, const struct opt_sol *s, struct opt_ws *w, double *ds,
			     double *dp, bool *pok)
{
	for (size_t i = 0; i < in->n_tasks; i++)
		w->w[i] = s->where[i] >= 0 ? sqrt(w->e[i] * w->mu[s->where[i]]) : 0.0;
	sweep(w, in->n_tasks, w->w, w->wf, w->wb);
	for (size_t i = 0; i < in->n_tasks; i++)
		w->wmax[i] = w->wf[i] + w->wb[i] - w->w[i];
	/* slack rule */
	double worst = w->worst;
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (s->where[i] < 0) {
			ds[i] = dp[i] = w->e[i];
			continue;
		}
		double wmax = w->wmax[i];
		double extra = wmax > 0 ? w->w[i] * (w->dlim[i] - w->emax[i]) / wmax : 0;
		ds[i] = opt_min(w->e[i] + extra, (double)in->T_ns[i]);
	}
	*pok = false;
	if (worst > 1.0)
		return worst;
	/* proportional rule (it does not read ds: both are reclaimed in one pass over the graph) */
	bool ok = true;
	for (size_t i = 0; i < in->n_tasks && ok; i++) {
		if (s->where[i] < 0)
			continue;
		dp[i] = opt_min(w->w[i] * (w->dlim[i] - w->rmax[i]) / w->wmax[i], (double)in->T_ns[i]);
		ok = dp[i] >= w->e[i];
	}
	reclaim(in, s, w, ds, ok ? dp : NULL, OPT_RECLAIM_LOOP, w->load, w->load2);
	*pok = ok;
	return worst;
}

enum rules_cache { RULES_FRESH, RULES_STORE, RULES_CACHED };

/* One application of both rules with the current mu; the better one goes to s->d_ns. RULES_STORE
 * keeps the deadlines (and weight sweeps, which the final reclaim reads) in the cache, RULES_CACHED
 * takes them from it (every mu at 1: the first round). */
static double apply_rules(const struct opt_inst *in, struct opt_sol *s, struct opt_ws *w, enum rules_cache mode)
{
	size_t n = in->n_tasks;
	const double *ds = w->dbest, *dp = w->dprop;
	bool ok;
	double worst;
	if (mode == RULES_CACHED) {
		memcpy(w->w, w->c_w, n * sizeof(double));
		memcpy(w->wf, w->c_wf, n * sizeof(double));
		memcpy(w->wb, w->c_wb, n * sizeof(double));
		memcpy(w->wmax, w->c_wmax, n * sizeof(double));
		ds = w->c_ds, dp = w->c_dp, ok = w->c_pok, worst = w->c_worst;
	} else {
		worst = rule_deadlines(in, s, w, w->dbest, w->dprop, &ok);
		if (mode == RULES_STORE) {
			memcpy(w->c_w, w->w, n * sizeof(double));
			memcpy(w->c_wf, w->wf, n * sizeof(double));
			memcpy(w->c_wb, w->wb, n * sizeof(double));
			memcpy(w->c_wmax, w->wmax, n * sizeof(double));
			memcpy(w->c_ds, w->dbest, n * sizeof(double));
			memcpy(w->c_dp, w->dprop, n * sizeof(double));
			w->c_pok = ok, w->c_worst = worst, w->c_ok = true;
		}
	}
	if (worst > 1.0)
		return OPT_PATH_INFEASIBLE + worst; /* graded, so that a repair can see progress */
	/* fresh rules: their reclaim left the core densities of ds in w->load, of dp in w->load2 */
	bool summed = mode != RULES_CACHED && OPT_RECLAIM_LOOP > 0;
	double best = summed ? top_load(in, w->load) : max_load(in, s, w, ds);
	memcpy(s->d_ns, ds, n * sizeof(double));
	memcpy(w->bload, w->load, in->n_cores * sizeof(double));
	if (ok) {
		double m = summed ? top_load(in, w->load2) : max_load(in, s, w, dp);
		if (m < best) {
			best = m;
			memcpy(s->d_ns, dp, n * sizeof(double));
			memcpy(w->bload, summed ? w->load2 : w->load, in->n_cores * sizeof(double));
		}
	}
	return best;
}

double opt_deadlines_fast(const struct opt_inst *in, struct opt_sol *s, struct opt_ws *w, double slack_frac,
			  int iters)
{
	bool cached = w->reuse && w->c_ok; /* e, r, rf, rb, ef, eb, emax, rmax, worst of the last call hold */
	w->reuse = false;
	for (size_t i = 0; i < in->n_tasks; i++)
		w->dlim[i] = (double)in->D_ns[i] * (1.0 - slack_frac);
	if (!cached) {
		w->c_ok = false;
		double umax = opt_fifo_response(in, s, w->r);
		if (umax > 1.0)
			return OPT_FIFO_OVERLOAD + umax;
		double *racc = w->dbest; /* accelerator delays only, for the proportional rule */
		for (size_t i = 0; i < in->n_tasks; i++) {
			w->e[i] = (double)(s->where[i] >= 0 ? opt_exec_ns(in, s, i) : w->r[i]);
			racc[i] = s->where[i] >= 0 ? 0.0 : w->e[i];
		}
		sweep2(w, in->n_tasks, racc, w->rf, w->rb, w->e, w->ef, w->eb);
		w->worst = 0;
		for (size_t i = 0; i < in->n_tasks; i++) {
			if (s->where[i] < 0) /* rf + rb counted R_i twice for accel tasks */
				w->rb[i] -= w->e[i];
			w->rmax[i] = w->rf[i] + w->rb[i];
			w->emax[i] = w->ef[i] + w->eb[i] - w->e[i];
			w->worst = opt_max(w->worst, w->emax[i] / w->dlim[i]);
		}
	}
	for (size_t c = 0; c < in->n_cores; c++)
		w->mu[c] = 1.0;
	double *keep = w->keep;
	double best = INFINITY;
	for (int it = 0; it < (iters > 0 ? iters : 1); it++) {
		double m = apply_rules(in, s, w, it ? RULES_FRESH : cached ? RULES_CACHED : RULES_STORE);
		if (m >= OPT_PATH_INFEASIBLE) {
			best = opt_min(best, m);
			break;
		}
		if (m < best) {
			best = m;
			memcpy(keep, s->d_ns, in->n_tasks * sizeof(double));
		}
		if (best <= 1.0 && it >= 1)
			break;
		/* w->bload: the core loads of the deadlines just applied (apply_rules keeps them) */
		double top = 0;
		for (size_t c = 0; c < in->n_cores; c++)
			top = opt_max(top, w->bload[c]);
		if (top <= 0)
			break;
		for (size_t c = 0; c < in->n_cores; c++) {
			double x = opt_max(w->bload[c] / top, 1e-3);
			w->mu[c] *= x * sqrt(x);
		}
	}
	if (best < OPT_PATH_INFEASIBLE) {
		if (OPT_RECLAIM_FINAL > 0) { /* any positive weights keep every path: the last round's */
			reclaim(in, s, w, keep, NULL, OPT_RECLAIM_FINAL, NULL, NULL);
			best = opt_min(best, max_load(in, s, w, keep));
		}
		memcpy(s->d_ns, keep, in->n_tasks * sizeof(double));
	}
	return best;
}

/* ---------------------------------------------------------------- LP + Kelley polish */

struct lp_map {
	int lam;        /* column of lambda */
	int *dcol, *ucol, *fcol;
};

static void add_tangent(glp_prob *lp, const struct lp_map *mp, size_t i, double C, double t)
{
	/* u_i >= C (2/t - d_i/t^2)  <=>  u_i + (C/t^2) d_i >= 2C/t   (ms units) */
	int r = glp_add_rows(lp, 1);
	int ind[3] = {0, mp->ucol[i], mp->dcol[i]};
	double val[3] = {0, 1.0, C / (t * t)};
	glp_set_mat_row(lp, r, 2, ind, val);
	glp_set_row_bnds(lp, r, GLP_LO, 2.0 * C / t, 0);
}

static void build_lp(const struct opt_inst *in, const struct opt_sol *s, const struct opt_ws *w, double slack_frac,
		     glp_prob *lp, struct lp_map *mp)
{
	glp_set_obj_dir(lp, GLP_MIN);
	mp->lam = glp_add_cols(lp, 1);
	glp_set_col_bnds(lp, mp->lam, GLP_LO, 0, 0);
	glp_set_obj_coef(lp, mp->lam, 1.0);
	for (size_t i = 0; i < in->n_tasks; i++) {
		/* 2 ns below D: the LP's float error never makes a floored path exceed D */
		double D = ((double)in->D_ns[i] * (1.0 - slack_frac) - 2.0) * 1e-6;
		mp->fcol[i] = glp_add_cols(lp, 1);
		glp_set_col_bnds(lp, mp->fcol[i], GLP_DB, 0, D);
		if (s->where[i] < 0)
			continue;
		double C = w->e[i] * 1e-6, hi = fmin((double)in->T_ns[i] * 1e-6, D);
		mp->dcol[i] = glp_add_cols(lp, 1);
		glp_set_col_bnds(lp, mp->dcol[i], hi > C ? GLP_DB : GLP_FX, C, hi > C ? hi : C);
		mp->ucol[i] = glp_add_cols(lp, 1);
		glp_set_col_bnds(lp, mp->ucol[i], GLP_LO, 0, 0);
	}
	/* cores */
	int *ind = calloc(in->n_tasks + 2, sizeof(int));
	double *val = calloc(in->n_tasks + 2, sizeof(double));
	for (size_t c = 0; c < in->n_cores && ind && val; c++) {
		int len = 0;
		for (size_t i = 0; i < in->n_tasks; i++)
			if (s->where[i] == (int)c)
				++len, ind[len] = mp->ucol[i], val[len] = 1.0;
		if (!len)
			continue;
		++len, ind[len] = mp->lam, val[len] = -1.0;
		int r = glp_add_rows(lp, 1);
		glp_set_mat_row(lp, r, len, ind, val);
		glp_set_row_bnds(lp, r, GLP_UP, 0, 0);
	}
	/* finish potentials: F_i - F_p - d_i >= 0 (CPU) or >= R_i (accel); F_i >= d_i at sources */
	for (size_t i = 0; i < in->n_tasks && ind && val; i++) {
		const struct pd_task *T = pd_dags_task(in->dags, i);
		double fixed = s->where[i] < 0 ? w->e[i] * 1e-6 : 0.0;
		size_t np = T->n_preds ? T->n_preds : 1;
		for (size_t p = 0; p < np; p++) {
			int len = 0;
			++len, ind[len] = mp->fcol[i], val[len] = 1.0;
			if (T->n_preds)
				++len, ind[len] = mp->fcol[T->preds[p]], val[len] = -1.0;
			if (s->where[i] >= 0)
				++len, ind[len] = mp->dcol[i], val[len] = -1.0;
			int r = glp_add_rows(lp, 1);
			glp_set_mat_row(lp, r, len, ind, val);
			glp_set_row_bnds(lp, r, GLP_LO, fixed, 0);
		}
	}
	free(ind);
	free(val);
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (s->where[i] < 0)
			continue;
		double C = w->e[i] * 1e-6, hi = fmin((double)in->T_ns[i] * 1e-6, (double)in->D_ns[i] * 1e-6);
		add_tangent(lp, mp, i, C, C);
		add_tangent(lp, mp, i, C, fmax(C, s->d_ns[i] * 1e-6));
		add_tangent(lp, mp, i, C, hi);
		add_tangent(lp, mp, i, C, sqrt(C * hi));
	}
}

/* The LP + Kelley loop from the fast rules' deadlines; stop > 0: ends once the max density is <= stop
 * or the LP's bound is above it (what every caller asks: "does it pack"), stop = 0: at the optimum. */
static double deadlines_lp(const struct opt_inst *in, struct opt_sol *s, double slack_frac, double deadline_s,
			   double stop)
{
	struct opt_ws *w = opt_ws_new(in);
	if (!w)
		return INFINITY;
	/* a fast pass gives execution times, responses and a starting point */
	double start = opt_deadlines_fast(in, s, w, slack_frac, 4);
	if (start >= OPT_PATH_INFEASIBLE) {
		opt_ws_free(w);
		return INFINITY;
	}
	/* the interior point method decides most calls in a tenth of the LP's time; the LP stays for
	 * those it leaves open (and as the reference at stop = 0) */
	if (stop > 0 && opt_deadlines_ipm(in, s, w->e, slack_frac, stop, deadline_s, &start)) {
		/* its deadlines are interior (every path ends before D'; the LP's are a vertex, with the
		 * paths tight): the reclaim hands the rest out, which the local search's deadline-keeping
		 * moves use */
		if (start <= stop) {
			double *d = w->dbest; /* the delays of every task, as reclaim reads them */
			for (size_t i = 0; i < in->n_tasks; i++)
				d[i] = s->where[i] >= 0 ? s->d_ns[i] : w->e[i];
			reclaim(in, s, w, d, NULL, OPT_RECLAIM_FINAL + 1, NULL, NULL);
			for (size_t i = 0; i < in->n_tasks; i++)
				if (s->where[i] >= 0)
					s->d_ns[i] = d[i];
			start = opt_min(start, max_load(in, s, w, s->d_ns));
		}
		opt_ws_free(w);
		return start;
	}
	struct lp_map mp = {0};
	mp.dcol = calloc(in->n_tasks, sizeof(int));
	mp.ucol = calloc(in->n_tasks, sizeof(int));
	mp.fcol = calloc(in->n_tasks, sizeof(int));
	double *d = calloc(in->n_tasks, sizeof(double));
	glp_prob *lp = glp_create_prob();
	double best = start;
	if (!mp.dcol || !mp.ucol || !mp.fcol || !d)
		goto out;
	build_lp(in, s, w, slack_frac, lp, &mp);
	glp_smcp parm;
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	parm.meth = GLP_DUALP;
	for (int it = 0; it < 200 && opt_now_s() < deadline_s; it++) {
		/* every simplex gets only what is left before the caller's absolute deadline */
		parm.tm_lim = (int)fmax(1.0, (deadline_s - opt_now_s()) * 1000.0);
		int rc = glp_simplex(lp, &parm);
		if (rc == GLP_ETMLIM || opt_now_s() >= deadline_s)
			break;
		if (rc != 0 || glp_get_status(lp) != GLP_OPT) {
			parm.tm_lim = (int)fmax(1.0, (deadline_s - opt_now_s()) * 1000.0);
			glp_std_basis(lp);
			rc = glp_simplex(lp, &parm);
			if (rc != 0 || glp_get_status(lp) != GLP_OPT)
				break;
		}
		int added = 0;
		for (size_t i = 0; i < in->n_tasks; i++) {
			if (s->where[i] < 0)
				continue;
			double C = w->e[i] * 1e-6, di = glp_get_col_prim(lp, mp.dcol[i]);
			double ui = glp_get_col_prim(lp, mp.ucol[i]);
			d[i] = fmax(di * 1e6, w->e[i]);
			if (ui < C / di * (1.0 - 1e-9) - 1e-12) {
				add_tangent(lp, &mp, i, C, di);
				added++;
			}
		}
		/* the true max density of the LP's deadlines: keep the best seen */
		for (size_t i = 0; i < in->n_tasks; i++)
			if (s->where[i] < 0)
				d[i] = 0;
		double m = max_load(in, s, w, d);
		if (m < best) {
			best = m;
			for (size_t i = 0; i < in->n_tasks; i++)
				if (s->where[i] >= 0)
					s->d_ns[i] = d[i];
		}
		/* every caller only asks "does it pack" (r <= 1, the evaluator then checks the floored
		 * plan against cap_raw, above cap): past that point more cuts only cost time */
		/* the LP's optimum is a lower bound on the max density of any deadlines for these cores
		 * (tangents under-estimate C/d): above cap, nothing packs them */
		double lb = glp_get_obj_val(lp) / in->cap;
		if (!added || best <= stop || lb > best * (1 - 1e-7) || (stop > 0 && lb > stop + 1e-9))
			break;
	}
out:
	glp_delete_prob(lp);
	free(mp.dcol), free(mp.ucol), free(mp.fcol), free(d);
	opt_ws_free(w);
	return best;
}

double opt_deadlines_lp(const struct opt_inst *in, struct opt_sol *s, double slack_frac, double deadline_s)
{
	return deadlines_lp(in, s, slack_frac, deadline_s, 1.0);
}

double opt_deadlines_lp_min(const struct opt_inst *in, struct opt_sol *s, double slack_frac, double deadline_s)
{
	return deadlines_lp(in, s, slack_frac, deadline_s, 0);
}
