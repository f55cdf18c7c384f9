/* SPDX-License-Identifier: MIT */
/*
 * Solving one master: the LP relaxation with a root loop of perspective tangents, then GLPK's branch
 * and cut with lazy tangents in the GLP_IROWGEN callback (or CBC in an outer-approximation loop);
 * the integral points found become candidates, which are packed onto cores and checked by the
 * exact evaluator before they can become the incumbent. Also the exact packing check of one island
 * assignment with the core-level master (combinatorial Benders step).
 */
#include "optimizer/master_impl.h"

#include <stdlib.h>
#include <string.h>
#ifdef PD_HAVE_CBC
#include <coin/Cbc_C_Interface.h>
#endif

/* ---------------------------------------------------------------- separation, candidates */

typedef double (*prim_fn)(glp_prob *, int);

/* Adds the tangents violated by the point x (column values through get); returns how many. */
static int separate_tol(struct master *M, glp_prob *lp, const double *x, double tol);
static int separate(struct master *M, glp_prob *lp, const double *x)
{
	return separate_tol(M, lp, x, 1e-7);
}

/* Kelley converges slowly near the curve: at fractional nodes only clearly violated tangents are
 * worth a re-solve; integral points are separated tightly before GLPK may accept them. Any accepted
 * point violates the perspective by at most tol (relative), so the bound is that of a relaxation
 * (still valid) and every plan is re-packed and re-checked exactly anyway. */
static int separate_tol(struct master *M, glp_prob *lp, const double *x, double tol)
{
	const struct opt_inst *in = M->in;
	int added = 0;
	for (size_t ik = 0; ik < in->n_tasks * M->nb; ik++) {
		if (!M->a[ik])
			continue;
		double a = x[M->a[ik]], d = x[M->d[ik]], v = x[M->v[ik]];
		if (a < 1e-6 || d < 1e-9)
			continue;
		double need = a * a / d;
		if (v < need * (1 - tol) - 1e-9) {
			opt_mst_tangent(lp, M->a[ik], M->d[ik], M->v[ik], d / a);
			added++;
		}
	}
	M->n_cuts += added;
	return added;
}

static bool integral(const struct master *M, glp_prob *lp, const double *x)
{
	for (int c = 1; c <= glp_get_num_cols(lp); c++)
		if (glp_get_col_kind(lp, c) != GLP_CV && fabs(x[c] - floor(x[c] + 0.5)) > 1e-5)
			return false;
	(void)M;
	return true;
}

static void record(struct master *M, const double *x, double obj)
{
	const struct opt_inst *in = M->in;
	if (M->n_cands == M->cap_cands) {
		size_t nc = M->cap_cands ? 2 * M->cap_cands : 8;
		struct cand *p = realloc(M->cands, nc * sizeof(*p));
		if (!p)
			return;
		M->cands = p, M->cap_cands = nc;
	}
	struct cand *c = &M->cands[M->n_cands];
	c->obj = obj;
	c->where = calloc(in->n_tasks + 1, sizeof(int));
	c->isl_opp = calloc(in->n_isl + 1, sizeof(size_t));
	c->acc_opp = calloc(in->n_acc + 1, sizeof(size_t));
	if (!c->where || !c->isl_opp || !c->acc_opp) {
		free(c->where), free(c->isl_opp), free(c->acc_opp);
		return;
	}
	for (size_t k = 0; k < in->n_isl; k++)
		for (size_t m = 0; m < in->isl_nopp[k]; m++)
			if (x[M->y[k] + (int)m] > 0.5)
				c->isl_opp[k] = m;
	for (size_t a = 0; a < in->n_acc; a++)
		for (size_t m = 0; m < in->acc_nopp[a]; m++)
			if (x[M->g[a] + (int)m] > 0.5)
				c->acc_opp[a] = m;
	for (size_t i = 0; i < in->n_tasks; i++) {
		for (size_t b = 0; b < M->nb; b++)
			if (M->a[i * M->nb + b] && x[M->a[i * M->nb + b]] > 0.5)
				c->where[i] = M->core_level ? (int)b : (int)in->isl_core0[b];
		for (size_t s = 0; s < in->n_srv; s++)
			if (M->z[i * in->n_srv + s] && x[M->z[i * in->n_srv + s]] > 0.5)
				c->where[i] = opt_where_server(s);
	}
	M->n_cands++;
}

static void callback(glp_tree *T, void *info)
{
	struct master *M = info;
	int best = glp_ios_best_node(T);
	if (best)
		M->bound = glp_ios_node_bound(T, best);
	if (opt_now_s() > M->deadline_s) {
		glp_ios_terminate(T);
		return;
	}
	if (glp_ios_reason(T) != GLP_IROWGEN)
		return;
	glp_prob *lp = glp_ios_get_prob(T);
	int n = glp_get_num_cols(lp);
	double *x = malloc((size_t)(n + 1) * sizeof(double));
	if (!x)
		return;
	for (int c = 1; c <= n; c++)
		x[c] = glp_get_col_prim(lp, c);
	bool integ = integral(M, lp, x);
	if (!separate_tol(M, lp, x, integ ? 1e-6 : 1e-3) && integ)
		record(M, x, glp_get_obj_val(lp));
	free(x);
}

/* LP relaxation plus the root cut loop. Tangents added here are global (rows added in the callback
 * only live in their subtree), so the B&B starts from a tight outer approximation.
 * Returns 0 (LP optimal), 1 (time or numerical trouble), 2 (relaxation infeasible). */
static int lp_root(struct master *M, double deadline_s)
{
	glp_smcp sp;
	glp_init_smcp(&sp);
	sp.msg_lev = GLP_MSG_OFF;
	sp.meth = GLP_DUALP;
	double *x = malloc((size_t)(glp_get_num_cols(M->lp) + 1) * sizeof(double));
	int res = x ? 0 : 1;
	M->bound = -INFINITY; /* every round's LP optimum is a valid bound (tangents under-estimate) */
	for (int round = 0; !res && round < 60; round++) {
		double left_ms = (deadline_s - opt_now_s()) * 1000.0;
		if (left_ms < 20) {
			res = 1;
			break;
		}
		sp.tm_lim = (int)left_ms;
		int rc = glp_simplex(M->lp, &sp);
		if (rc != GLP_ETMLIM && (rc != 0 || (glp_get_status(M->lp) != GLP_OPT &&
						      glp_get_status(M->lp) != GLP_NOFEAS))) {
			/* a warm basis after new rows once misled primal simplex; the retry gets only
			 * what is left of the budget (a full tm_lim again would overrun the deadline) */
			left_ms = (deadline_s - opt_now_s()) * 1000.0;
			if (left_ms < 20) {
				res = 1;
				break;
			}
			sp.tm_lim = (int)left_ms;
			/* numerically hard LPs (big-M rows next to 1/t^2 tangent coefficients): rescale,
			 * start from the standard basis, and let the simplex work with looser tolerances */
			glp_scale_prob(M->lp, GLP_SF_AUTO);
			glp_std_basis(M->lp);
			sp.tol_bnd = 1e-6, sp.tol_dj = 1e-6;
			rc = glp_simplex(M->lp, &sp);
			sp.tol_bnd = 1e-7, sp.tol_dj = 1e-7;
		}
		if (rc == 0 && glp_get_status(M->lp) == GLP_NOFEAS) {
			res = 2;
			break;
		}
		if (rc != 0 || glp_get_status(M->lp) != GLP_OPT) {
			res = 1;
			break;
		}
		M->bound = fmax(M->bound, glp_get_obj_val(M->lp));
		for (int c = 1; c <= glp_get_num_cols(M->lp); c++)
			x[c] = glp_get_col_prim(M->lp, c);
		if (!separate(M, M->lp, x))
			break;
	}
	free(x);
	return res;
}

/* Branch and cut from the root LP; bound into M->bound, *finished when the search completed. */
void opt_mst_mip(struct master *M, double deadline_s, bool *finished)
{
	*finished = false;
	int st0 = lp_root(M, deadline_s);
	if (st0 == 2) {
		*finished = true;
		M->bound = INFINITY;
		return;
	}
	if (st0 == 1)
		return; /* M->bound: the last root LP optimum reached in time, or -INFINITY */
	M->bound = glp_get_obj_val(M->lp);
	glp_iocp ip;
	glp_init_iocp(&ip);
	ip.msg_lev = GLP_MSG_OFF;
	ip.presolve = GLP_OFF;
	ip.sr_heur = GLP_OFF;
	ip.fp_heur = GLP_OFF;
	ip.ps_heur = GLP_OFF;
	ip.br_tech = GLP_BR_DTH;
	ip.bt_tech = GLP_BT_BLB;
	ip.mip_gap = 1e-7;
	ip.cb_func = callback;
	ip.cb_info = M;
	M->deadline_s = deadline_s;
	double left_ms = (deadline_s - opt_now_s()) * 1000.0;
	ip.tm_lim = left_ms > 1 ? (int)left_ms : 1;
	int rc = glp_intopt(M->lp, &ip);
	int st = glp_mip_status(M->lp);
	if ((st == GLP_OPT || st == GLP_FEAS) && !M->n_cands) { /* GLPK's incumbent, if the callback missed it */
		int n = glp_get_num_cols(M->lp);
		double *x = malloc((size_t)(n + 1) * sizeof(double));
		for (int c = 1; x && c <= n; c++)
			x[c] = glp_mip_col_val(M->lp, c);
		if (x)
			record(M, x, glp_mip_obj_val(M->lp));
		free(x);
	}
	if (rc == 0 && (st == GLP_OPT || st == GLP_NOFEAS)) {
		*finished = true;
		M->bound = st == GLP_OPT ? glp_mip_obj_val(M->lp) : INFINITY;
	} else if (st == GLP_FEAS) {
		M->bound = fmin(M->bound, glp_mip_obj_val(M->lp));
	}
}

void opt_mst_fix_vector(struct master *M, const struct opt_sol *s)
{
	const struct opt_inst *in = M->in;
	for (size_t k = 0; k < in->n_isl; k++)
		for (size_t m = 0; m < in->isl_nopp[k]; m++)
			glp_set_col_bnds(M->lp, M->y[k] + (int)m, GLP_FX, m == s->isl_opp[k], 0);
	for (size_t a = 0; a < in->n_acc; a++)
		for (size_t m = 0; m < in->acc_nopp[a]; m++)
			glp_set_col_bnds(M->lp, M->g[a] + (int)m, GLP_FX, m == s->acc_opp[a], 0);
}

/* Copies the best (lowest objective) candidate of M into dst; false when there is none. */
bool opt_mst_best_cand(const struct master *M, struct cand *dst)
{
	const struct opt_inst *in = M->in;
	if (!M->n_cands)
		return false;
	size_t b = 0;
	for (size_t c = 1; c < M->n_cands; c++)
		if (M->cands[c].obj < M->cands[b].obj)
			b = c;
	dst->obj = M->cands[b].obj;
	memcpy(dst->where, M->cands[b].where, in->n_tasks * sizeof(int));
	memcpy(dst->isl_opp, M->cands[b].isl_opp, in->n_isl * sizeof(size_t));
	memcpy(dst->acc_opp, M->cands[b].acc_opp, in->n_acc * sizeof(size_t));
	return true;
}

/*
 * Exact packing check (combinatorial Benders step): can the island / server assignment of cd be put
 * on cores with deadlines at its OPPs? The core-level master C, restricted to that assignment, is a
 * feasibility MILP. Returns 1 (packed: the plan is in out), 0 (proven impossible), -1 (unknown).
 */
int opt_mst_pack_exact(struct master *C, const struct cand *cd, struct opt_sol *out, double deadline_s)
{
	const struct opt_inst *in = C->in;
	memcpy(out->isl_opp, cd->isl_opp, in->n_isl * sizeof(size_t));
	memcpy(out->acc_opp, cd->acc_opp, in->n_acc * sizeof(size_t));
	opt_mst_fix_vector(C, out);
	for (size_t i = 0; i < in->n_tasks; i++) {
		int w = cd->where[i];
		for (size_t b = 0; b < C->nb; b++) {
			int col = C->a[i * C->nb + b];
			if (col)
				glp_set_col_bnds(C->lp, col, w >= 0 && in->core_isl[w] == C->bin_isl[b] ? GLP_DB : GLP_FX, 0, 1);
		}
		for (size_t sv = 0; sv < in->n_srv; sv++) {
			int col = C->z[i * in->n_srv + sv];
			if (col)
				glp_set_col_bnds(C->lp, col, GLP_FX, w == opt_where_server(sv), 0);
		}
	}
	glp_set_row_bnds(C->lp, C->cutoff_row, GLP_FR, 0, 0);
	bool fin = false;
	opt_mst_mip(C, deadline_s, &fin);
	int res = fin && !isfinite(C->bound) ? 0 : -1;
	struct opt_ws *w = opt_ws_new(in);
	for (size_t c = 0; w && c < C->n_cands && res != 1; c++) {
		memcpy(out->where, C->cands[c].where, in->n_tasks * sizeof(int));
		double r = opt_deadlines_fast(in, out, w, 0, 12);
		if (r > 1.0 && r < OPT_PATH_INFEASIBLE)
			r = opt_deadlines_lp(in, out, 0, deadline_s);
		if (r <= 1.0 && opt_evaluate(in, out, NULL, 0))
			res = 1;
	}
	opt_ws_free(w);
	for (size_t c = 0; c < C->n_cands; c++)
		free(C->cands[c].where), free(C->cands[c].isl_opp), free(C->cands[c].acc_opp);
	C->n_cands = 0;
	/* C is also the per-core phase's model: the assignment must not stay fixed in it (that made a
	 * later per-core MILP search a restriction, and "closed" a vector that had a better plan) */
	for (size_t i = 0; i < in->n_tasks; i++) {
		for (size_t b = 0; b < C->nb; b++)
			if (C->a[i * C->nb + b])
				glp_set_col_bnds(C->lp, C->a[i * C->nb + b], GLP_DB, 0, 1);
		for (size_t sv = 0; sv < in->n_srv; sv++)
			if (C->z[i * in->n_srv + sv])
				glp_set_col_bnds(C->lp, C->z[i * in->n_srv + sv], GLP_DB, 0, 1);
	}
	return res;
}

int opt_mst_cand_alloc(struct cand *c, const struct opt_inst *in)
{
	c->where = calloc(in->n_tasks + 1, sizeof(int));
	c->isl_opp = calloc(in->n_isl + 1, sizeof(size_t));
	c->acc_opp = calloc(in->n_acc + 1, sizeof(size_t));
	return c->where && c->isl_opp && c->acc_opp ? 0 : -1;
}

void opt_mst_cand_free(struct cand *c)
{
	free(c->where), free(c->isl_opp), free(c->acc_opp);
}

#ifdef PD_HAVE_CBC
/* Outer approximation with CBC: solve, add violated tangents, repeat. */
int opt_mst_solve_cbc(struct master *M, double deadline_s, bool *finished)
{
	glp_prob *lp = M->lp;
	double best_bound = -INFINITY;
	for (int it = 0; it < 50 && opt_now_s() < deadline_s - 0.25; it++) { /* copying the model costs time */
		int nc = glp_get_num_cols(lp), nr = glp_get_num_rows(lp);
		Cbc_Model *cm = Cbc_newModel();
		Cbc_setLogLevel(cm, 0);
		int *ind = malloc((size_t)(nc + 1) * sizeof(int));
		double *val = malloc((size_t)(nc + 1) * sizeof(double));
		if (!cm || !ind || !val) {
			free(ind), free(val);
			if (cm)
				Cbc_deleteModel(cm);
			return -1;
		}
		for (int c = 1; c <= nc; c++) {
			int kind = glp_get_col_kind(lp, c);
			Cbc_addCol(cm, "", glp_get_col_lb(lp, c), kind == GLP_BV ? 1.0 : (glp_get_col_type(lp, c) == GLP_LO ? 1e30 : glp_get_col_ub(lp, c)),
				   glp_get_obj_coef(lp, c), kind != GLP_CV, 0, NULL, NULL);
		}
		for (int r = 1; r <= nr; r++) {
			int len = glp_get_mat_row(lp, r, ind, val);
			for (int j = 1; j <= len; j++)
				ind[j] -= 1;
			int type = glp_get_row_type(lp, r);
			char sense = type == GLP_LO ? 'G' : type == GLP_UP ? 'L' : 'E';
			double rhs = type == GLP_UP ? glp_get_row_ub(lp, r) : glp_get_row_lb(lp, r);
			Cbc_addRow(cm, "", len, ind + 1, val + 1, sense, rhs);
		}
		Cbc_setObjSense(cm, 1.0);
		/* CBC checks its limit only between nodes and after root cuts and heuristics, so it
		 * gets part of what is left: the overrun must stay inside the caller's deadline */
		double left_s = deadline_s - opt_now_s();
		Cbc_setMaximumSeconds(cm, fmax(0.02, 0.6 * left_s - 0.1));
		Cbc_setAllowableFractionGap(cm, 1e-7);
		Cbc_setParameter(cm, "threads", "1");
		Cbc_solve(cm);
		double bnd = Cbc_getBestPossibleObjValue(cm) + M->in->base_w;
		bool opt = Cbc_isProvenOptimal(cm), inf = Cbc_isProvenInfeasible(cm);
		if (inf) {
			*finished = true;
			M->bound = INFINITY;
			Cbc_deleteModel(cm);
			free(ind), free(val);
			return 0;
		}
		if (isfinite(bnd))
			best_bound = fmax(best_bound, bnd);
		const double *sol = Cbc_getColSolution(cm);
		bool have = sol && (opt || Cbc_numberSavedSolutions(cm) > 0);
		double *x = malloc((size_t)(nc + 1) * sizeof(double));
		int added = 0;
		if (have && x) {
			for (int c = 1; c <= nc; c++)
				x[c] = sol[c - 1];
			added = separate(M, lp, x);
			if (!added)
				record(M, x, Cbc_getObjValue(cm) + M->in->base_w);
		}
		free(x);
		Cbc_deleteModel(cm);
		free(ind), free(val);
		if (!have)
			break;
		if (!added) {
			*finished = opt;
			break;
		}
	}
	M->bound = best_bound;
	return 0;
}
#endif

/* ---------------------------------------------------------------- repair and driver */

static int cmp_cand(const void *a, const void *b)
{
	double x = ((const struct cand *)a)->obj, y = ((const struct cand *)b)->obj;
	return (x > y) - (x < y);
}

/* Packs master solutions onto cores, best objective first; keeps the best that passes the evaluator. */
void opt_mst_repair(struct master *M, struct opt_sol *inc, double deadline_s)
{
	const struct opt_inst *in = M->in;
	struct opt_sol s;
	struct opt_ws *w = opt_ws_new(in);
	if (!w || opt_sol_init(&s, in)) {
		opt_ws_free(w);
		return;
	}
	if (M->n_cands)
		qsort(M->cands, M->n_cands, sizeof(*M->cands), cmp_cand);
	for (size_t c = 0; c < M->n_cands && c < 8 && opt_now_s() < deadline_s; c++) {
		struct cand *cd = &M->cands[c];
		if (inc->ok && cd->obj >= inc->power_w * (1 - 1e-9))
			break;
		memcpy(s.isl_opp, cd->isl_opp, in->n_isl * sizeof(size_t));
		memcpy(s.acc_opp, cd->acc_opp, in->n_acc * sizeof(size_t));
		memcpy(s.where, cd->where, in->n_tasks * sizeof(int));
		bool ok = false;
		if (M->core_level) { /* cores are part of the solution: only the deadlines are missing */
			double r = opt_deadlines_fast(in, &s, w, 0, 12);
			if (r > 1.0 && r < OPT_PATH_INFEASIBLE)
				r = opt_deadlines_lp(in, &s, 0, deadline_s);
			ok = r <= 1.0 && opt_evaluate(in, &s, NULL, 0);
		}
		if (!ok) {
			memcpy(s.where, cd->where, in->n_tasks * sizeof(int));
			double r = opt_pack(in, &s, w, 0, true, deadline_s);
			ok = r <= 1.0 && opt_evaluate(in, &s, NULL, 0);
		}
		if (!ok) { /* the master's island choice does not pack: let the heuristic repair it */
			memcpy(s.where, cd->where, in->n_tasks * sizeof(int));
			ok = opt_heur_polish(in, &s, fmin(deadline_s, opt_now_s() + 1.0));
		}
		if (ok && (!inc->ok || s.power_w < inc->power_w))
			opt_sol_copy(inc, &s, in);
	}
	for (size_t c = 0; c < M->n_cands; c++) /* consumed */
		free(M->cands[c].where), free(M->cands[c].isl_opp), free(M->cands[c].acc_opp);
	M->n_cands = 0;
	opt_sol_free(&s);
	opt_ws_free(w);
}

