/* SPDX-License-Identifier: MIT */
/*
 * The OPP hull's LP (hull.c): CLP when the build has CBC (coinor-libcbc-dev brings CLP), else GLPK.
 *
 * Why: on Xavier's 120-task sets the hull is a Kelley loop over an LP of ~18 000 rows and ~11 000
 * columns. GLPK's primal simplex took 2.5-8.3 s for the first LP (one set none within 10 s with seven
 * tangents per option) and its dual simplex 0.03-0.13 s per round, so the hull had not converged
 * when the 10-s limit ended it (3.15 % on seed 12000111, where the converged hull certifies 2.5 %).
 * CLP's barrier with crossover solves the same first LP (5 tangents) in 0.65-1.1 s (docs/OPTIMIZER-LOG.md,
 * "The hull on CLP"). Both solvers run in the hull's forked worker (optimize.c), so an abort in either costs that
 * worker and the bounds it has not published yet, never the plan.
 *
 * The interface is the hull's few operations, in GLPK's numbering (1-based rows and columns, index
 * and value arrays read from [1]). On CLP, columns and rows are buffered and handed over in one call
 * before each solve: CLP resizes its arrays on every addRows call, and the hull builds ~18 000 rows
 * one by one. Any allocation failure marks the LP broken; every later solve then fails, and the hull
 * keeps the bound it has.
 */
#include "optimizer/opt_impl.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <glpk.h>
#ifdef PD_HAVE_CBC
#include <coin/Clp_C_Interface.h>
#endif

struct opt_hlp {
	glp_prob *glp; /* the GLPK LP, or NULL on CLP */
	bool broken;   /* an allocation failed: the LP is not the one the hull built */
	int n_rows, n_cols;
#ifdef PD_HAVE_CBC
	Clp_Simplex *clp;
	int rows_in, cols_in;           /* rows and columns already handed to CLP */
	double *clb, *cub, *cobj;       /* pending columns */
	double *rlb, *rub, *rval;       /* pending rows: bounds, entries */
	int *rstart, *rind;             /* row r's entries [rstart[r], rstart[r + 1]), 0-based columns */
	size_t n_ent;                   /* pending entries */
	size_t cap_clb, cap_cub, cap_cobj, cap_rlb, cap_rub, cap_rval, cap_rstart, cap_rind;
#endif
};

#ifdef PD_HAVE_CBC
/* Grows *p (elem bytes each) to hold need elements; false (and *p unchanged) on no memory. */
static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t c = 2 * need + 256;
	void *q = realloc(*p, c * elem);
	if (!q)
		return false;
	*p = q, *cap = c;
	return true;
}

/* CLP's infinity for an unbounded side. */
static double clp_inf(double x) { return isinf(x) ? (x > 0 ? DBL_MAX : -DBL_MAX) : x; }

static struct opt_hlp *clp_new(struct opt_hlp *L)
{
	L->clp = Clp_newModel();
	if (!L->clp)
		return free(L), NULL;
	Clp_setLogLevel(L->clp, 0);
	Clp_setOptimizationDirection(L->clp, 1.0);
	/* row starts hold one more entry than there are rows */
	if (!grow((void **)&L->rstart, &L->cap_rstart, 1, sizeof(int)))
		return Clp_deleteModel(L->clp), free(L), NULL;
	L->rstart[0] = 0;
	return L;
}

/* Hands the pending columns, then the pending rows (which may use them), to CLP. */
static void clp_flush(struct opt_hlp *L)
{
	int nc = L->n_cols - L->cols_in, nr = L->n_rows - L->rows_in;
	if (nc > 0) {
		int *start = calloc((size_t)nc + 1, sizeof(int));
		if (!start) {
			L->broken = true;
			return;
		}
		int dummy_row = 0;
		double dummy_val = 0;
		Clp_addColumns(L->clp, nc, L->clb, L->cub, L->cobj, start, &dummy_row, &dummy_val);
		free(start);
		L->cols_in = L->n_cols;
	}
	if (nr > 0) {
		Clp_addRows(L->clp, nr, L->rlb, L->rub, L->rstart, L->rind, L->rval);
		L->rows_in = L->n_rows, L->n_ent = 0;
	}
}
#endif

struct opt_hlp *opt_hlp_new(bool glpk)
{
	struct opt_hlp *L = calloc(1, sizeof(*L));
	if (!L)
		return NULL;
#ifdef PD_HAVE_CBC
	if (!glpk)
		return clp_new(L);
#endif
	L->glp = glp_create_prob();
	if (!L->glp)
		return free(L), NULL;
	glp_set_obj_dir(L->glp, GLP_MIN);
	return L;
}

void opt_hlp_free(struct opt_hlp *L)
{
	if (!L)
		return;
	if (L->glp)
		glp_delete_prob(L->glp);
#ifdef PD_HAVE_CBC
	if (L->clp)
		Clp_deleteModel(L->clp);
	free(L->clb), free(L->cub), free(L->cobj);
	free(L->rlb), free(L->rub), free(L->rval), free(L->rstart), free(L->rind);
#endif
	free(L);
}

const char *opt_hlp_solver(const struct opt_hlp *L) { return L->glp ? "glpk" : "clp"; }

/* GLPK's bound type of a (lo, hi) pair, each side possibly infinite. */
static int glp_type(double lo, double hi)
{
	if (isinf(lo) && isinf(hi))
		return GLP_FR;
	if (isinf(hi))
		return GLP_LO;
	if (isinf(lo))
		return GLP_UP;
	return lo == hi ? GLP_FX : GLP_DB;
}

int opt_hlp_col(struct opt_hlp *L, double lo, double hi, double cost)
{
	if (L->glp) {
		int j = glp_add_cols(L->glp, 1);
		glp_set_col_bnds(L->glp, j, glp_type(lo, hi), lo, hi);
		glp_set_obj_coef(L->glp, j, cost);
		return L->n_cols = j;
	}
#ifdef PD_HAVE_CBC
	size_t k = (size_t)(L->n_cols - L->cols_in);
	if (!grow((void **)&L->clb, &L->cap_clb, k + 1, sizeof(double)) ||
	    !grow((void **)&L->cub, &L->cap_cub, k + 1, sizeof(double)) ||
	    !grow((void **)&L->cobj, &L->cap_cobj, k + 1, sizeof(double))) {
		L->broken = true;
		return 0;
	}
	L->clb[k] = clp_inf(lo), L->cub[k] = clp_inf(hi), L->cobj[k] = cost;
#endif
	return ++L->n_cols;
}

int opt_hlp_row(struct opt_hlp *L, double lo, double hi, int n, const int *ind, const double *val)
{
	if (L->glp) {
		int r = glp_add_rows(L->glp, 1);
		glp_set_mat_row(L->glp, r, n, ind, val);
		glp_set_row_bnds(L->glp, r, glp_type(lo, hi), lo, hi);
		return L->n_rows = r;
	}
#ifdef PD_HAVE_CBC
	size_t k = (size_t)(L->n_rows - L->rows_in), e = L->n_ent + (size_t)n;
	if (!grow((void **)&L->rlb, &L->cap_rlb, k + 1, sizeof(double)) ||
	    !grow((void **)&L->rub, &L->cap_rub, k + 1, sizeof(double)) ||
	    !grow((void **)&L->rstart, &L->cap_rstart, k + 2, sizeof(int)) ||
	    !grow((void **)&L->rind, &L->cap_rind, e, sizeof(int)) ||
	    !grow((void **)&L->rval, &L->cap_rval, e, sizeof(double))) {
		L->broken = true;
		return 0;
	}
	for (int t = 1; t <= n; t++)
		L->rind[L->n_ent] = ind[t] - 1, L->rval[L->n_ent++] = val[t];
	L->rlb[k] = clp_inf(lo), L->rub[k] = clp_inf(hi);
	L->rstart[k + 1] = (int)L->n_ent;
#endif
	return ++L->n_rows;
}

void opt_hlp_offset(struct opt_hlp *L, double c0)
{
	if (L->glp)
		glp_set_obj_coef(L->glp, 0, c0);
#ifdef PD_HAVE_CBC
	else
		Clp_setObjectiveOffset(L->clp, -c0); /* CLP reports objective - offset */
#endif
}

int opt_hlp_solve(struct opt_hlp *L, bool first, double seconds)
{
	if (L->broken || seconds <= 0)
		return -1;
	if (L->glp) {
		if (first) {
			int term = glp_term_out(GLP_OFF);
			glp_scale_prob(L->glp, GLP_SF_AUTO);
			glp_term_out(term);
		}
		glp_smcp sp;
		glp_init_smcp(&sp);
		sp.msg_lev = GLP_MSG_OFF;
		/* The first LP by the primal simplex, the rounds after it by the dual: a new cut row
		 * cuts off the last optimum, whose basis stays dual feasible. From the slack basis, which
		 * is dual feasible too (every cost >= 0), the dual simplex took 3.5-9.5 s on Xavier's
		 * 120-task sets under the search's load, the primal 3.1-5.9 s (docs/MODEL.md). */
		sp.meth = first ? GLP_PRIMAL : GLP_DUALP;
		sp.tm_lim = (int)fmin(seconds * 1000.0, 1e9);
		if (glp_simplex(L->glp, &sp) != 0)
			return -1;
		return glp_get_status(L->glp) == GLP_OPT ? 0 : -1;
	}
#ifdef PD_HAVE_CBC
	clp_flush(L);
	if (L->broken)
		return -1;
	/* CLP's limit is on the process's CPU time, so in wall time it may run over when the worker
	 * is preempted, and its barrier does not check it at all (a first LP with 3 500 rows more,
	 * a_icm <= y_cm, ran 32 s for 20). The hull only runs in a forked worker (worker.c runs only
	 * the first worker in-process, when fork fails), which the parent kills at the hard deadline;
	 * every bound published before stands. The first LP by the barrier with crossover (a basis for the
	 * rounds): on one 120-task Xavier set 0.65 / 0.97 s with 5 / 7 tangents, against 1.42 / 2.00 s
	 * by CLP's primal simplex. */
	double t0 = opt_now_s();
	Clp_setMaximumSeconds(L->clp, seconds);
	if (first)
		Clp_initialBarrierSolve(L->clp);
	else
		Clp_dual(L->clp, 0);
	/* numerical trouble (status 4; 1 and 2 are answers, 3 the limit): once more by the primal
	 * simplex from where it stopped, with what is left */
	double left = seconds - (opt_now_s() - t0);
	if (Clp_status(L->clp) == 4 && left > 0.01) {
		Clp_setMaximumSeconds(L->clp, left);
		Clp_primal(L->clp, 0);
	}
	return Clp_status(L->clp) == 0 ? 0 : -1;
#else
	return -1;
#endif
}

double opt_hlp_obj(const struct opt_hlp *L)
{
	if (L->glp)
		return glp_get_obj_val(L->glp);
#ifdef PD_HAVE_CBC
	return Clp_objectiveValue(L->clp);
#else
	return NAN;
#endif
}

double opt_hlp_prim(const struct opt_hlp *L, int col)
{
	if (L->glp)
		return glp_get_col_prim(L->glp, col);
#ifdef PD_HAVE_CBC
	return Clp_getColSolution(L->clp)[col - 1];
#else
	return NAN;
#endif
}

bool opt_hlp_row_basic(const struct opt_hlp *L, int row)
{
	if (L->glp)
		return glp_get_row_stat(L->glp, row) == GLP_BS;
#ifdef PD_HAVE_CBC
	return Clp_getRowStatus(L->clp, row - 1) == 1; /* ClpSimplex::basic */
#else
	return false;
#endif
}

int opt_hlp_rows(const struct opt_hlp *L) { return L->n_rows; }

void opt_hlp_del_rows(struct opt_hlp *L, int n, const int *rows)
{
	if (n <= 0)
		return;
	if (L->glp) {
		glp_del_rows(L->glp, n, rows);
		L->n_rows = glp_get_num_rows(L->glp);
		return;
	}
#ifdef PD_HAVE_CBC
	if (L->broken) /* never hand CLP a row of an LP that is not the hull's */
		return;
	clp_flush(L); /* numbering is CLP's once every row is in */
	if (L->broken)
		return;
	int *w = malloc((size_t)n * sizeof(int));
	if (!w) {
		L->broken = true;
		return;
	}
	for (int t = 0; t < n; t++)
		w[t] = rows[t + 1] - 1;
	Clp_deleteRows(L->clp, n, w);
	free(w);
	L->n_rows = L->rows_in = Clp_numberRows(L->clp);
#endif
}
