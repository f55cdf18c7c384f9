/* SPDX-License-Identifier: MIT */
/*
 * The screening LP (screen.c) solved by CLP's dual simplex where the build has CBC (CLP comes with
 * it); GLPK's problem stays the model that screen.c edits, and this file hands it to CLP for each
 * solve, warm from the basis statuses kept in the GLPK problem, and writes CLP's statuses back.
 *
 * Why: the screening LP is most of the exact mode's time. Xavier 30 tasks: 91 % of a 10-s run in
 * GLPK, half of it the branch and bound's node LPs (docs/OPTIMIZER-LOG.md, fourteenth session).
 * Xavier 120 tasks: the plans where the hull points get two or three vectors screened in their
 * window, at 0.4-1 s per LP. On 24 such LPs taken from one 120-task run (4200-5300 rows, 1626
 * columns), GLPK's dual simplex took 9.47 s from an advanced basis and 0.65 s warm after a change of
 * the objective, CLP's 4.64 s and 0.29 s, both to the same optima (docs/OPTIMIZER-LOG.md,
 * fifteenth session).
 *
 * Why a copy per solve rather than CLP as the model: screen.c changes the LP between solves in ways
 * CLP's C interface makes dear or awkward (whole rows rewritten per vector, rows added and deleted,
 * bases saved and restored by the branch and bound), and a copy costs a few milliseconds (one pass
 * over ~35 000 entries) against 5-700 ms per solve. CLP starts from the statuses it left, so the
 * warm start survives the copy; only the factorization is rebuilt, as GLPK rebuilds it after most
 * of those changes too.
 *
 * Like GLPK, CLP runs inside the optimizer's workers (worker.c forks them; only where fork fails
 * does the first run in-process): an abort or an uncaught exception costs that worker, never the
 * plan the parent holds.
 */
#include "optimizer/opt_impl.h"

#include <glpk.h>

#ifdef PD_HAVE_CBC
#include <coin/Clp_C_Interface.h>
#include <float.h>
#include <stdlib.h>

/* A buffer that grows as the LP does. */
struct buf {
	void *p;
	size_t cap; /* elements */
};

/* b's memory for n elements of elem bytes; NULL (b unchanged) without memory. */
static void *need(struct buf *b, size_t n, size_t elem)
{
	if (n > b->cap) {
		void *q = realloc(b->p, (2 * n + 64) * elem);
		if (!q)
			return NULL;
		b->p = q, b->cap = 2 * n + 64;
	}
	return b->p;
}

struct opt_sclp {
	Clp_Simplex *m;
	/* CLP's copy of the LP: columns (CSC: start, index, value), their bounds and costs, the rows'
	 * bounds, the statuses (columns, then rows); ind / val: one GLPK column (1-based) */
	struct buf start, index, value, clb, cub, obj, rlb, rub, stat, ind, val;
};

struct opt_sclp *opt_sclp_new(void)
{
	struct opt_sclp *L = calloc(1, sizeof(*L));
	if (!L)
		return NULL;
	L->m = Clp_newModel();
	if (!L->m)
		return free(L), NULL;
	Clp_setLogLevel(L->m, 0);
	return L;
}

void opt_sclp_free(struct opt_sclp *L)
{
	if (!L)
		return;
	Clp_deleteModel(L->m);
	struct buf *b[] = {&L->start, &L->index, &L->value, &L->clb, &L->cub, &L->obj,
			   &L->rlb,   &L->rub,   &L->stat,  &L->ind, &L->val};
	for (size_t j = 0; j < sizeof(b) / sizeof(b[0]); j++)
		free(b[j]->p);
	free(L);
}

/* A GLPK variable's bounds as CLP's (DBL_MAX for none). */
static void bounds(int type, double lb, double ub, double *lo, double *hi)
{
	*lo = type == GLP_FR || type == GLP_UP ? -DBL_MAX : lb;
	*hi = type == GLP_FR || type == GLP_LO ? DBL_MAX : ub;
}

/* Basis statuses, GLPK's to CLP's (ClpSimplex::Status: isFree 0, basic 1, atUpperBound 2,
 * atLowerBound 3, superBasic 4, isFixed 5) and back. Rows are the row activities in both. */
static unsigned char to_clp(int s)
{
	switch (s) {
	case GLP_BS:
		return 1;
	case GLP_NU:
		return 2;
	case GLP_NF:
		return 0;
	case GLP_NS:
		return 5;
	default:
		return 3;
	}
}

static int to_glp(int s)
{
	switch (s) {
	case 1:
		return GLP_BS;
	case 2:
		return GLP_NU;
	case 0:
		return GLP_NF;
	case 5:
		return GLP_NS;
	default:
		return GLP_NL; /* GLPK fits a non-basic status to the variable's bounds */
	}
}

/* Copies lp (matrix, bounds, objective, basis statuses) into CLP's model. */
static bool load(struct opt_sclp *L, glp_prob *lp)
{
	int nr = glp_get_num_rows(lp), nc = glp_get_num_cols(lp), nnz = glp_get_num_nz(lp);
	size_t r1 = (size_t)nr + 1, c1 = (size_t)nc + 1;
	int *start = need(&L->start, c1, sizeof(int)), *index = need(&L->index, (size_t)nnz + 1, sizeof(int));
	int *ind = need(&L->ind, r1, sizeof(int));
	double *value = need(&L->value, (size_t)nnz + 1, sizeof(double)), *val = need(&L->val, r1, sizeof(double));
	double *clb = need(&L->clb, c1, sizeof(double)), *cub = need(&L->cub, c1, sizeof(double));
	double *obj = need(&L->obj, c1, sizeof(double));
	double *rlb = need(&L->rlb, r1, sizeof(double)), *rub = need(&L->rub, r1, sizeof(double));
	unsigned char *stat = need(&L->stat, r1 + c1, 1);
	if (!start || !index || !ind || !value || !val || !clb || !cub || !obj || !rlb || !rub || !stat)
		return false;
	int p = 0;
	for (int c = 1; c <= nc; c++) {
		start[c - 1] = p;
		int n = glp_get_mat_col(lp, c, ind, val);
		for (int e = 1; e <= n; e++)
			index[p] = ind[e] - 1, value[p++] = val[e];
		bounds(glp_get_col_type(lp, c), glp_get_col_lb(lp, c), glp_get_col_ub(lp, c), &clb[c - 1], &cub[c - 1]);
		obj[c - 1] = glp_get_obj_coef(lp, c);
		stat[c - 1] = to_clp(glp_get_col_stat(lp, c));
	}
	start[nc] = p;
	for (int r = 1; r <= nr; r++) {
		bounds(glp_get_row_type(lp, r), glp_get_row_lb(lp, r), glp_get_row_ub(lp, r), &rlb[r - 1], &rub[r - 1]);
		stat[nc + r - 1] = to_clp(glp_get_row_stat(lp, r));
	}
	Clp_loadProblem(L->m, nc, nr, start, index, value, clb, cub, obj, rlb, rub);
	Clp_copyinStatus(L->m, stat);
	return true;
}

int opt_sclp_solve(struct opt_sclp *L, struct glp_prob *lp, double seconds, double *x, double *y, double *obj,
		   int *iters)
{
	if (seconds <= 0 || !load(L, lp))
		return -1;
	int nr = glp_get_num_rows(lp), nc = glp_get_num_cols(lp);
	/* CLP's limit is on the process's CPU time, so a preempted worker may run over it in wall
	 * time; screen.c hands each solve at most SCREEN_LP_S, and the parent ends a forked worker at
	 * the hard deadline whatever its LP does (worker.c) */
	Clp_setMaximumSeconds(L->m, seconds);
	Clp_dual(L->m, 0);
	*iters += Clp_numberIterations(L->m);
	int st = Clp_status(L->m);
	if (st == 3)
		return 2;
	if (st == 1)
		return 1;
	if (st != 0)
		return -1; /* dual infeasible (an unbounded LP: not this one once a vector is set) or trouble */
	const double *cs = Clp_getColSolution(L->m), *rp = Clp_getRowPrice(L->m);
	for (int c = 1; c <= nc; c++) {
		x[c] = cs[c - 1];
		glp_set_col_stat(lp, c, to_glp(Clp_getColumnStatus(L->m, c - 1)));
	}
	for (int r = 1; r <= nr; r++) {
		y[r] = rp[r - 1];
		glp_set_row_stat(lp, r, to_glp(Clp_getRowStatus(L->m, r - 1)));
	}
	*obj = Clp_objectiveValue(L->m) + glp_get_obj_coef(lp, 0);
	return 0;
}
#else
struct opt_sclp *opt_sclp_new(void) { return NULL; }
void opt_sclp_free(struct opt_sclp *L) { (void)L; }
int opt_sclp_solve(struct opt_sclp *L, struct glp_prob *lp, double seconds, double *x, double *y, double *obj, int *iters)
{
	(void)L, (void)lp, (void)seconds, (void)x, (void)y, (void)obj, (void)iters;
	return -1;
}
#endif
