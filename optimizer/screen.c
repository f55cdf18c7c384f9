/* SPDX-License-Identifier: MIT */
/*
 * Vector screening: the continuous relaxation of the island-level master at one OPP vector, as a
 * small LP that is kept from vector to vector (docs/MODEL.md, "Exact", vector screening).
 *
 * With the OPPs fixed, the island master (master.c) has no OPP binaries; relaxing its placement
 * binaries leaves a convex program:
 *     min  sum_ik busy_ik a_ik + sum_is busy_is z_is
 *     s.t. sum_k a_ik + sum_s z_is = 1                      every task placed
 *          (C_ik / cap) a_ik <= d_ik <= hi_i a_ik             alone it must fit one core
 *          v_ik >= a_ik^2 / d_ik                            perspective of 1/d (tangents below)
 *          sum_i C_ik v_ik <= n_k cap                       island density
 *          sum_i (L_is / T_i) z_is <= 1                     FIFO utilisation
 *          w_ijs >= z_is + z_js - 1, 0 <= w_ijs <= 1          both on server s (i < j)
 *          F_i >= F_p + sum_k d_ik + sum_s (L_is z_is + sum_{j != i} W_ijs w_ijs), F_i <= D
 *                                                           finish potentials, FIFO response
 *                                                           (W_ijs = L_js, + rho: wait_ms)
 * Every plan at the vector is a point of it (a, z 0/1, d its deadlines, v = 1/d, w_ijs = z_is z_js:
 * a request waits for every request on its FIFO server, R_i = sum_j L_js z_js; on an FPGA slot the
 * reconfiguration time enters as rho per pair of different bitstreams (wait_ms), at most what a
 * shared slot costs), so its optimum - and, as
 * the tangents v >= 2a/t - d/t^2 under-estimate the perspective, every LP optimum of the Kelley loop
 * below - plus the vector's idle power is a valid lower bound on every plan at that vector.
 *
 * Why a separate LP rather than the master's root: only the coefficients that depend on the OPPs
 * (C_ik, L_is, busy power) change between vectors, and the tangents depend on (a, d, v) alone, so
 * the rows, the cut pool and the simplex basis carry over from one vector to the next. On the
 * benchmark's 120-task XU4 set this is what lets every OPP vector be bounded within the time limit
 * (the master's root LP carries every OPP's columns and took 0.4-0.9 s per vector).
 */
#include "optimizer/opt_impl.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Kelley rounds per vector, and the relative violation below which a tangent is not worth a row. */
#define SCREEN_ROUNDS 40
#define SCREEN_TOL 1e-3
/* Kelley's tail: a round that gains less than this (relative) ends the loop. */
#define SCREEN_STALL 1e-4
/* The same two in the precise mode (opt_screen_precise): a tenth of a per mille of violation, and
 * rounds until they gain less than 1e-6. With SCREEN_TOL an LP point may put an island 0.1 % over
 * its cores (Xavier 30 tasks, seed 11045238: integral leaves at 2.0005-2.0011 of 2 cores), and
 * with SCREEN_STALL a node whose bound would reach the cut-off by the last 0.01 % stays open: both
 * are as large as the default gap tolerance 1e-4 they are meant to prove. */
#define SCREEN_TOL_PRECISE 1e-4
#define SCREEN_STALL_PRECISE 1e-6
/* The cut pool is dropped and rebuilt from the static tangents when it grows past this many rows
 * per task (an LP that only grows would make every later vector slower). */
#define SCREEN_ROWS_PER_TASK 60
/* Cardinality rows per island: p = 1 .. CARD_P. */
#define CARD_P 2
/* Entries of the FIFO pair map (servers x tasks x tasks) up to which the pairs are modelled. */
#define SCREEN_FIFO_MAP_MAX ((size_t)4 << 20)

struct opt_screen {
	const struct opt_inst *in;
	glp_prob *lp;
	int *a, *d, *v;  /* [i * n_isl + k] */
	int *z;          /* [i * n_srv + s] (0: no implementation) */
	int *dlo;        /* [i * n_isl + k]: row d - (C/cap) a >= 0 */
	int *cap;        /* [k]: island density row */
	int *srv;        /* [s]: utilisation row */
	int *path0;      /* [i]: first path row of task i (one per predecessor, or one) */
	int *F;          /* [i] */
	int *card;       /* [k * CARD_P + p - 1]: at most p n_k tasks of density > cap / (p + 1) on k */
	int *sym;        /* [i * n_isl + k]: a_ik <= sum_{j<i} a_jp, p = k's previous twin (0: none) */
	int *w;          /* [(s * n + i) * n + j]: both i and j on server s (symmetric; 0: none) */
	size_t *mem, *n_mem; /* [s * n + q]: the tasks that can run on server s, n_mem[s] of them */
	int n_static;    /* rows up to here survive a pool reset */
	double tol, stall; /* SCREEN_TOL and SCREEN_STALL, or their precise values */
	double idle_w;   /* idle power of the vector set last (added to every LP value) */
	/* The last solve (simplex): GLP_OPT, GLP_NOFEAS or GLP_UNDEF (also when the clock or the simplex
	 * cut the Kelley loop short: opt_screen_at_optimum); its objective (without idle_w),
	 * primal x[1..cols] and row duals y[1..rows]; rc[1..cols] scratch (opt_screen_option_bounds).
	 * clp: CLP solves (screen_clp.c), NULL: GLPK; iters: CLP's simplex iterations so far. */
	int status, iters;
	double obj;
	double *y, *rc;
	size_t cap_y;
	int y_rows; /* rows that y covers (rows added since have no dual yet: 0) */
	struct opt_sclp *clp;
	int *ind;
	double *val, *x;
};

static double ms(double ns) { return ns * 1e-6; }

static int col(glp_prob *lp, double lb, double ub)
{
	int c = glp_add_cols(lp, 1);
	glp_set_col_bnds(lp, c, ub > lb ? GLP_DB : GLP_FX, lb, ub);
	return c;
}

/* Column c in [0, ub] (fixed at 0 when ub <= 0: GLPK takes no double bound with lb = ub). */
static void upto(glp_prob *lp, int c, double ub)
{
	glp_set_col_bnds(lp, c, ub > 0 ? GLP_DB : GLP_FX, 0, fmax(ub, 0));
}

static int row(glp_prob *lp, int type, double rhs, int n, const int *ind1, const double *val1)
{
	int r = glp_add_rows(lp, 1);
	glp_set_mat_row(lp, r, n, ind1, val1); /* 1-based arrays */
	glp_set_row_bnds(lp, r, type, rhs, rhs);
	return r;
}

static void tangent(struct opt_screen *S, size_t ik, double t)
{
	int ind[4] = {0, S->v[ik], S->a[ik], S->d[ik]};
	double val[4] = {0, 1.0, -2.0 / t, 1.0 / (t * t)};
	row(S->lp, GLP_LO, 0.0, 3, ind, val);
}

static double hi_ms(const struct opt_inst *in, size_t i)
{
	return ms(opt_longest_d(in, i));
}

/* Tangents at the fastest single-core deadline, the geometric middle and the longest deadline:
 * rows that every vector needs, so they are part of the static model. */
static void static_tangents(struct opt_screen *S)
{
	const struct opt_inst *in = S->in;
	for (size_t i = 0; i < in->n_tasks; i++)
		for (size_t k = 0; k < in->n_isl; k++) {
			double hi = hi_ms(in, i), lo = ms((double)runtime_at(in, i, k, in->isl_nopp[k] - 1)) / in->cap;
			if (lo <= 0 || lo > hi)
				continue;
			double pts[3] = {lo, sqrt(lo * hi), hi};
			for (int p = 0; p < 3; p++)
				tangent(S, i * in->n_isl + k, pts[p]);
		}
}

static void build_tasks(struct opt_screen *S)
{
	const struct opt_inst *in = S->in;
	for (size_t i = 0; i < in->n_tasks; i++) {
		double hi = hi_ms(in, i);
		int n = 0;
		for (size_t k = 0; k < in->n_isl; k++) {
			size_t ik = i * in->n_isl + k;
			S->a[ik] = col(S->lp, 0, 1);
			S->d[ik] = col(S->lp, 0, hi);
			S->v[ik] = col(S->lp, 0, 0);
			glp_set_col_bnds(S->lp, S->v[ik], GLP_LO, 0, 0);
			S->ind[++n] = S->a[ik], S->val[n] = 1.0;
			int ih[3] = {0, S->d[ik], S->a[ik]};
			double vh[3] = {0, 1.0, -hi};
			row(S->lp, GLP_UP, 0.0, 2, ih, vh); /* d <= hi a */
			double vl[3] = {0, 1.0, 0.0};       /* d >= (C / cap) a: set per vector */
			S->dlo[ik] = row(S->lp, GLP_LO, 0.0, 2, ih, vl);
		}
		for (size_t s = 0; s < in->n_srv; s++)
			if (in->impl[i * in->n_srv + s] >= 0) {
				S->z[i * in->n_srv + s] = col(S->lp, 0, 1);
				S->ind[++n] = S->z[i * in->n_srv + s], S->val[n] = 1.0;
			}
		row(S->lp, GLP_FX, 1.0, n, S->ind, S->val);
		S->F[i] = col(S->lp, 0, ms((double)in->D_ns[i]));
	}
}

/* Accelerator latency of task i on server v at the vector (ns). */
static double lat(const struct opt_inst *in, const struct opt_sol *s, size_t i, size_t v)
{
	return (double)opt_latency(in, i, v, s->acc_opp[in->srv[v].accel]);
}

/*
 * What request j adds to the response of request i when both are on server v: its latency, and on an
 * FPGA slot where the two use different bitstreams also the reconfiguration time rho. Why rho is
 * valid: two bitstreams make the slot shared, every request on it then waits for m (L + rho) in all
 * (opt_fifo_response, m the requests there), at least rho more per request i shares it with than
 * sum_j L_j, whatever the other bitstreams are. (2 rho for the pair would hold at m = 2 and not
 * beyond: three bitstreams pay 3 rho, not 4.) Without it the LP put several FPGA tasks on ZCU102's
 * one slot, each with its own latency alone on its path, where the 22.7 ms of reconfiguration made
 * every such assignment miss: 30 tasks, seed 11127984, 393 integral leaves at the 300 MHz vector,
 * each refused by a no-good of its own, open at 0.44 % after 60 s.
 */
static double wait_ms(const struct opt_inst *in, const struct opt_sol *s, size_t i, size_t j, size_t v)
{
	return ms(lat(in, s, j, v)) + ms((double)opt_pair_reconfig_ns(in, i, j, v));
}

/* Finish-potential rows F_i - F_p - sum_k d_ik - sum_s L_is z_is >= 0, one per predecessor (or one
 * at a source): added on the first call (s NULL: no accelerator terms yet), rewritten with the
 * latencies of vector s afterwards. */
static void path_rows(struct opt_screen *S, const struct opt_sol *s)
{
	const struct opt_inst *in = S->in;
	for (size_t i = 0; i < in->n_tasks; i++) {
		const struct pd_task *t = pd_dags_task(in->dags, i);
		size_t np = t->n_preds ? t->n_preds : 1;
		for (size_t p = 0; p < np; p++) {
			int n = 0;
			S->ind[++n] = S->F[i], S->val[n] = 1.0;
			if (t->n_preds)
				S->ind[++n] = S->F[t->preds[p]], S->val[n] = -1.0;
			for (size_t k = 0; k < in->n_isl; k++)
				S->ind[++n] = S->d[i * in->n_isl + k], S->val[n] = -1.0;
			for (size_t v = 0; s && v < in->n_srv; v++) {
				if (!S->z[i * in->n_srv + v])
					continue;
				S->ind[++n] = S->z[i * in->n_srv + v], S->val[n] = -ms(lat(in, s, i, v));
				for (size_t q = 0; S->w && q < S->n_mem[v]; q++) { /* the requests i waits for */
					size_t j = S->mem[v * in->n_tasks + q];
					if (j != i)
						S->ind[++n] = S->w[(v * in->n_tasks + i) * in->n_tasks + j],
						S->val[n] = -wait_ms(in, s, i, j, v);
				}
			}
			/* a task's rows are consecutive: path0[i] + p */
			if (s)
				glp_set_mat_row(S->lp, S->path0[i] + (int)p, n, S->ind, S->val);
			else if (p)
				row(S->lp, GLP_LO, 0.0, n, S->ind, S->val);
			else
				S->path0[i] = row(S->lp, GLP_LO, 0.0, n, S->ind, S->val);
		}
	}
}

/*
 * Symmetry of identical islands at equal OPPs (symmetry.c): when island k and its previous twin p run
 * the same OPP at the vector, swapping their tasks maps every plan to an equivalent one, so it is
 * enough to search the assignments where p's lowest task index is below k's (islands ordered by their
 * first task, empty ones last): a_ik <= sum_{j<i} a_jp for every task i. Along a run of equal twins
 * these rows hold together for that ordering, so every plan keeps an equivalent that satisfies them
 * and every bound and closure stays valid. Without them the branch and bound on Xavier (four Carmel
 * islands, most often at one level) searched each assignment up to 24 times. Rows are free (GLP_FR)
 * at vectors where the two OPPs differ.
 */
static void sym_rows(struct opt_screen *S)
{
	const struct opt_inst *in = S->in;
	for (size_t k = 0; k < in->n_isl; k++) {
		long p = in->isl_prev_twin[k];
		for (size_t i = 0; p >= 0 && i < in->n_tasks; i++) {
			int n = 0;
			S->ind[++n] = S->a[i * in->n_isl + k], S->val[n] = 1.0;
			for (size_t j = 0; j < i; j++)
				S->ind[++n] = S->a[j * in->n_isl + (size_t)p], S->val[n] = -1.0;
			S->sym[i * in->n_isl + k] = row(S->lp, GLP_UP, 0.0, n, S->ind, S->val);
			glp_set_row_bnds(S->lp, S->sym[i * in->n_isl + k], GLP_FR, 0, 0);
		}
	}
}

/*
 * FIFO pairs: a request on server s waits for every other request there (opt_fifo_response), so the
 * delay of i on s is L_is + sum_j L_js z_is z_js. The products get McCormick's lower envelope
 * w >= z_is + z_js - 1 (exact at 0/1): without it an LP optimum that put two or three of Xavier's
 * GPU tasks on the GPU, each with its own latency alone on the path, was integral in the branch and
 * bound and every such leaf went to the exact packer, whose first LP (with the real FIFO response)
 * had no point: 391 leaves of a 20-task set in 10 s, each closed by a no-good of its own.
 */
static void fifo_pairs(struct opt_screen *S)
{
	const struct opt_inst *in = S->in;
	size_t n = in->n_tasks;
	for (size_t v = 0; S->w && v < in->n_srv; v++)
		for (size_t i = 0; i < n; i++)
			if (S->z[i * in->n_srv + v])
				S->mem[v * n + S->n_mem[v]++] = i;
	for (size_t v = 0; S->w && v < in->n_srv; v++)
		for (size_t a = 0; a < S->n_mem[v]; a++)
			for (size_t b = a + 1; b < S->n_mem[v]; b++) {
				size_t i = S->mem[v * n + a], j = S->mem[v * n + b];
				int c = col(S->lp, 0, 1);
				S->w[(v * n + i) * n + j] = S->w[(v * n + j) * n + i] = c;
				int ih[4] = {0, c, S->z[i * in->n_srv + v], S->z[j * in->n_srv + v]};
				double vh[4] = {0, 1.0, -1.0, -1.0};
				row(S->lp, GLP_LO, -1.0, 3, ih, vh);
			}
}

static void build_rows(struct opt_screen *S)
{
	const struct opt_inst *in = S->in;
	for (size_t k = 0; k < in->n_isl; k++)
		S->cap[k] = row(S->lp, GLP_UP, (double)in->isl_ncores[k] * in->cap, 0, S->ind, S->val);
	for (size_t s = 0; s < in->n_srv; s++)
		S->srv[s] = row(S->lp, GLP_UP, 1.0, 0, S->ind, S->val);
	for (size_t k = 0; k < in->n_isl; k++)
		for (int p = 1; p <= CARD_P; p++)
			S->card[k * CARD_P + (size_t)p - 1] =
				row(S->lp, GLP_UP, (double)(p * (int)in->isl_ncores[k]), 0, S->ind, S->val);
	fifo_pairs(S);
	path_rows(S, NULL);
	sym_rows(S);
}

struct opt_screen *opt_screen_new(const struct opt_inst *in)
{
	struct opt_screen *S = calloc(1, sizeof(*S));
	size_t nik = in->n_tasks * in->n_isl + 1, nis = in->n_tasks * in->n_srv + 1;
	size_t wide = in->n_tasks * (in->n_isl + in->n_srv) + in->n_isl + in->n_srv + 8;
	if (!S)
		return NULL;
	S->in = in;
	S->a = calloc(nik, sizeof(int)), S->d = calloc(nik, sizeof(int)), S->v = calloc(nik, sizeof(int));
	S->dlo = calloc(nik, sizeof(int)), S->z = calloc(nis, sizeof(int)), S->sym = calloc(nik, sizeof(int));
	S->card = calloc(in->n_isl * CARD_P + 1, sizeof(int));
	S->cap = calloc(in->n_isl + 1, sizeof(int)), S->srv = calloc(in->n_srv + 1, sizeof(int));
	S->path0 = calloc(in->n_tasks + 1, sizeof(int)), S->F = calloc(in->n_tasks + 1, sizeof(int));
	S->ind = calloc(wide + 1, sizeof(int)), S->val = calloc(wide + 1, sizeof(double));
	/* the FIFO pair map while it stays small (4 servers x 1000 tasks); without it the LP keeps R >= L */
	size_t nw = in->n_srv * in->n_tasks * in->n_tasks;
	if (nw && nw <= SCREEN_FIFO_MAP_MAX &&
	    (!(S->w = calloc(nw, sizeof(int))) || !(S->mem = calloc(in->n_srv * in->n_tasks, sizeof(size_t))) ||
	     !(S->n_mem = calloc(in->n_srv, sizeof(size_t))))) {
		opt_screen_free(S);
		return NULL;
	}
	S->lp = glp_create_prob();
	if (!S->a || !S->d || !S->v || !S->dlo || !S->z || !S->sym || !S->card || !S->cap || !S->srv || !S->path0 || !S->F || !S->ind ||
	    !S->val || !S->lp) {
		opt_screen_free(S);
		return NULL;
	}
	glp_set_obj_dir(S->lp, GLP_MIN);
	build_tasks(S);
	build_rows(S);
	static_tangents(S);
	S->n_static = glp_get_num_rows(S->lp);
	opt_screen_precise(S, false);
	S->x = calloc((size_t)glp_get_num_cols(S->lp) + 1, sizeof(double));
	S->rc = calloc((size_t)glp_get_num_cols(S->lp) + 1, sizeof(double));
	/*
	 * CLP solves where the build has it and the board has identical islands (Xavier's Carmel
	 * clusters), GLPK elsewhere. Measured (fifteenth session, docs/OPTIMIZER-LOG.md): on Xavier CLP
	 * halved the LP time and 120-task sets gained most; on XU4 (big.LITTLE, no twins) the 120-task
	 * sets took longer to prove (1.9-6.9 s -> 2.5-8.5 s: many vectors there have no plan and GLPK
	 * proves that in a few pivots, where each CLP solve copies and factorizes the LP afresh), even
	 * with CLP kept for solves of 100 pivots and more. Identical islands make the LP's optima
	 * degenerate (every split of a task between twins at one OPP costs the same), which is the
	 * likely reason why CLP's dual simplex, with its perturbation, does better there.
	 */
#ifdef PD_HAVE_CBC
	if (opt_twin_pairs(in) > 0 && !(S->clp = opt_sclp_new())) {
		opt_screen_free(S);
		return NULL;
	}
#endif
	if (!S->x || !S->rc) {
		opt_screen_free(S);
		return NULL;
	}
	return S;
}

void opt_screen_free(struct opt_screen *S)
{
	if (!S)
		return;
	if (S->lp)
		glp_delete_prob(S->lp);
	free(S->a), free(S->d), free(S->v), free(S->dlo), free(S->z), free(S->sym), free(S->card), free(S->cap), free(S->srv);
	free(S->path0), free(S->F), free(S->ind), free(S->val), free(S->x), free(S->w), free(S->y), free(S->rc);
	opt_sclp_free(S->clp);
	free(S->mem), free(S->n_mem);
	free(S);
}

/*
 * Bin-packing cardinality rows of island k at vector s: a task on k has density Q / d >= Q / hi
 * (hi: its longest possible deadline), and a core holds at most p tasks whose density exceeds
 * cap / (p + 1), so island k holds at most p n_k of them. Valid for every plan; the island capacity
 * row alone lets two such tasks share what is in fact one core each (Xavier's Carmel islands at their
 * lowest OPPs, where most tasks need more than half a core).
 */
static void card_rows(struct opt_screen *S, const struct opt_sol *s, size_t k)
{
	const struct opt_inst *in = S->in;
	for (int p = 1; p <= CARD_P; p++) {
		int n = 0;
		for (size_t i = 0; i < in->n_tasks; i++) {
			double u = (double)runtime_at(in, i, k, s->isl_opp[k]) / opt_longest_d(in, i);
			if (u > in->cap / (p + 1) * (1 + 1e-9))
				S->ind[++n] = S->a[i * in->n_isl + k], S->val[n] = 1.0;
		}
		glp_set_mat_row(S->lp, S->card[k * CARD_P + (size_t)p - 1], n, S->ind, S->val);
	}
}

static void set_option(struct opt_screen *S, const struct opt_sol *s, size_t i, size_t o, bool open);

/* Puts the OPP-dependent coefficients of vector s into the LP: objective, single-core rows,
 * island densities, FIFO utilisations, accelerator delays on the paths; options that cannot hold
 * the task alone are fixed to 0. */
static void set_vector(struct opt_screen *S, const struct opt_sol *s)
{
	const struct opt_inst *in = S->in;
	for (size_t k = 0; k < in->n_isl; k++) {
		int n = 0;
		for (size_t i = 0; i < in->n_tasks; i++) {
			size_t ik = i * in->n_isl + k;
			double C = (double)runtime_at(in, i, k, s->isl_opp[k]);
			set_option(S, s, i, k, true);
			glp_set_obj_coef(S->lp, S->a[ik], opt_task_busy_w(in, s, i, (int)in->isl_core0[k]));
			int ih[3] = {0, S->d[ik], S->a[ik]};
			double vl[3] = {0, 1.0, -ms(C) / in->cap};
			glp_set_mat_row(S->lp, S->dlo[ik], 2, ih, vl);
			S->ind[++n] = S->v[ik], S->val[n] = ms(C);
		}
		glp_set_mat_row(S->lp, S->cap[k], n, S->ind, S->val);
		card_rows(S, s, k);
		long p = in->isl_prev_twin[k];
		bool same = p >= 0 && s->isl_opp[p] == s->isl_opp[k];
		for (size_t i = 0; p >= 0 && i < in->n_tasks; i++)
			glp_set_row_bnds(S->lp, S->sym[i * in->n_isl + k], same ? GLP_UP : GLP_FR, 0, 0);
	}
	for (size_t v = 0; v < in->n_srv; v++) {
		int n = 0;
		for (size_t i = 0; i < in->n_tasks; i++) {
			int c = S->z[i * in->n_srv + v];
			if (!c)
				continue;
			double L = lat(in, s, i, v);
			bool fits = opt_option_fits(in, s, i, in->n_isl + v, 0);
			glp_set_col_bnds(S->lp, c, fits ? GLP_DB : GLP_FX, 0, fits ? 1 : 0);
			glp_set_obj_coef(S->lp, c, opt_task_busy_w(in, s, i, opt_where_server(v)));
			S->ind[++n] = c, S->val[n] = L / (double)in->T_ns[i];
		}
		glp_set_mat_row(S->lp, S->srv[v], n, S->ind, S->val);
	}
	if (in->n_srv)
		path_rows(S, s);
}

/*
 * Adds a tangent at the LP optimum's deadline for every perspective the optimum violates; returns how
 * many. One per violation: the pool outlives the node and the vector (it is pruned only past
 * SCREEN_ROWS_PER_TASK), so the tangents that a later point needs are mostly there already, and every
 * row makes each simplex iteration dearer. Until 2026-12-07 each violation added three (at the point,
 * and at 0.8 and 1.25 times its deadline): the branch and bound's LP carried 1700-2800 rows, 780 of
 * them static, and GLPK's dual simplex took 50-90 us per iteration there, growing with the rows
 * (Xavier 30 tasks, seed 1264068). With one, on two fresh draws of 24 Xavier 30-task sets (10 s):
 * median time to proof 4.0 -> 3.0 s and 4.2 -> 3.2 s, 7 sets open after 10 s before and 7 after;
 * the 120-task sets and the XU4 and ZCU102 30-task sets unchanged or faster (docs/OPTIMIZER-LOG.md,
 * 2026-12-07).
 */
static int separate(struct opt_screen *S)
{
	const struct opt_inst *in = S->in;
	int added = 0;
	for (size_t ik = 0; ik < in->n_tasks * in->n_isl; ik++) {
		double a = S->x[S->a[ik]], d = S->x[S->d[ik]], v = S->x[S->v[ik]];
		if (a < 1e-7 || d < 1e-9)
			continue;
		double need = a * a / d;
		if (v < need * (1 - S->tol) - 1e-12) {
			tangent(S, ik, d / a);
			added++;
		}
	}
	return added;
}

/* Drops the generated tangents (the static rows stay) once the pool has grown too large. */
static void prune_pool(struct opt_screen *S)
{
	int nr = glp_get_num_rows(S->lp);
	if ((size_t)(nr - S->n_static) <= SCREEN_ROWS_PER_TASK * S->in->n_tasks)
		return;
	int n = nr - S->n_static;
	int *del = malloc(((size_t)n + 1) * sizeof(int));
	if (!del)
		return;
	for (int r = 1; r <= n; r++)
		del[r] = S->n_static + r;
	glp_del_rows(S->lp, n, del);
	free(del);
	glp_std_basis(S->lp);
	if (S->y_rows > S->n_static)
		S->y_rows = S->n_static;
}

/*
 * Deletes the generated rows that the LP's optimum does not use (a basic slack: the tangent, or a
 * released no-good, is not tight there). The LP's optimum stays optimal (a row that is
 * not tight has a zero dual), so its bound is unchanged; the Kelley loop adds back any tangent a
 * later point needs. Why: the branch and bound solves the same LP with one more fixing per node, and
 * on Xavier 30-task sets its tree carried 1600-1900 generated rows of which 1400-1700 were slack at
 * the root: 8.7 ms per node LP with them, 6.0 ms without (1000 node LPs in 10 s where it had been
 * 650). Row numbers above the static rows change: no caller may hold one (the branch and bound
 * compacts before its first no-good).
 */
int opt_screen_compact(struct opt_screen *S)
{
	int nr = glp_get_num_rows(S->lp), n = 0;
	int *del = malloc(((size_t)(nr - S->n_static) + 1) * sizeof(int));
	if (!del)
		return 0;
	int kept = S->n_static;
	for (int r = S->n_static + 1; r <= nr; r++)
		if (glp_get_row_stat(S->lp, r) == GLP_BS)
			del[++n] = r;
		else if (r <= S->y_rows)
			S->y[++kept] = S->y[r]; /* the duals follow their rows */
	if (S->y_rows > S->n_static)
		S->y_rows = kept;
	if (n)
		glp_del_rows(S->lp, n, del); /* the deleted rows are basic: the basis stays valid */
	free(del);
	return n;
}

size_t opt_screen_basis_size(const struct opt_screen *S)
{
	return 2 * sizeof(int) + (size_t)glp_get_num_rows(S->lp) + (size_t)glp_get_num_cols(S->lp);
}

void opt_screen_basis_get(const struct opt_screen *S, unsigned char *b)
{
	int nr = glp_get_num_rows(S->lp), nc = glp_get_num_cols(S->lp);
	memcpy(b, &nr, sizeof(int));
	memcpy(b + sizeof(int), &nc, sizeof(int));
	b += 2 * sizeof(int);
	for (int q = 1; q <= nr; q++)
		*b++ = (unsigned char)glp_get_row_stat(S->lp, q);
	for (int c = 1; c <= nc; c++)
		*b++ = (unsigned char)glp_get_col_stat(S->lp, c);
}

void opt_screen_basis_set(struct opt_screen *S, const unsigned char *b)
{
	int nr, nc, now = glp_get_num_rows(S->lp);
	memcpy(&nr, b, sizeof(int));
	memcpy(&nc, b + sizeof(int), sizeof(int));
	if (nr > now || nc != glp_get_num_cols(S->lp))
		return; /* not this LP's basis any more */
	b += 2 * sizeof(int);
	/* rows added since are basic: with the saved basis that is one basic variable per row again */
	for (int q = 1; q <= now; q++)
		glp_set_row_stat(S->lp, q, q <= nr ? b[q - 1] : GLP_BS);
	for (int c = 1; c <= nc; c++)
		glp_set_col_stat(S->lp, c, b[nr + c - 1]); /* GLPK fits a non-basic status to the bounds */
}

int opt_screen_iterations(const struct opt_screen *S)
{
	return S->iters;
}

const char *opt_screen_solver(const struct opt_screen *S)
{
	return S->clp ? "clp" : "glpk";
}

void opt_screen_use_glpk(struct opt_screen *S)
{
	opt_sclp_free(S->clp);
	S->clp = NULL;
}

/* One LP may take at most this long: a stalled simplex must not eat the other vectors' time. */
#define SCREEN_LP_S 1.0

/*
 * Dual simplex only (GLP_DUAL), with the long-step ("bound flipping") ratio test.
 * - The long step: the screening LP is mostly boxed columns (a in [0, 1], d in [0, hi], v in
 *   [0, cap / C]), where one long step passes over many breakpoints. The branch and bound's node
 *   LPs take 30-40 iterations each and the factorization is rarely still valid (rows come and go),
 *   so iterations are the cost. Xavier 30 tasks, ten sets proven both ways: time to proof
 *   0.99-6.8 s -> 0.71-5.1 s; XU4 and ZCU102 20 and 30 tasks and the 120-task sets unchanged.
 * - No primal fallback (GLP_DUALP's): with the long step, 2 of 48 Xavier 30-task runs lost a worker
 *   to GLPK's primal simplex ("teta_lim >= 0.0", spxprim.c; the worker dies, the other goes on
 *   alone); with the dual alone none of 24 did. A dual that fails gets one more try from the
 *   standard basis below; an LP that fails again gives no bound (never a wrong one).
 * The measurements: docs/OPTIMIZER-LOG.md, 2026-12-07, twelfth session. The other LPs (core packing,
 * deadlines, the hull, the core-level master) gained nothing measurable from the long step and keep
 * GLPK's defaults.
 */
static int glpk_simplex(glp_prob *lp, double deadline_s)
{
	glp_smcp sp;
	glp_init_smcp(&sp);
	sp.msg_lev = GLP_MSG_OFF;
	sp.meth = GLP_DUAL;
	sp.r_test = GLP_RT_FLIP;
	double left_ms = (deadline_s - opt_now_s()) * 1000.0;
	if (left_ms < 5)
		return GLP_ETMLIM;
	sp.tm_lim = (int)left_ms;
	int rc = glp_simplex(lp, &sp);
	if (rc != 0 && rc != GLP_ETMLIM) { /* a stale basis after coefficient changes: start afresh */
		left_ms = (deadline_s - opt_now_s()) * 1000.0;
		if (left_ms < 5)
			return GLP_ETMLIM;
		sp.tm_lim = (int)left_ms;
		glp_std_basis(lp);
		rc = glp_simplex(lp, &sp);
	}
	return rc;
}

/* Solves the LP as it stands (CLP where S->clp is set, opt_screen_new says when; GLPK otherwise,
 * and after a CLP solve that failed for another reason than the clock): 0 with S->status, S->obj,
 * S->x and S->y set (x and y only at an optimum), GLP_ETMLIM when the time ran out, another GLPK
 * code on failure. */
static int simplex(struct opt_screen *S, double deadline_s)
{
	deadline_s = fmin(deadline_s, opt_now_s() + SCREEN_LP_S);
	int nr = glp_get_num_rows(S->lp), nc = glp_get_num_cols(S->lp);
	S->status = GLP_UNDEF;
	S->y_rows = 0;
	if ((size_t)nr + 1 > S->cap_y) {
		double *y = realloc(S->y, ((size_t)nr + 1) * 2 * sizeof(double));
		if (!y)
			return GLP_EFAIL;
		S->y = y, S->cap_y = ((size_t)nr + 1) * 2;
	}
	if (S->clp) {
		double left = deadline_s - opt_now_s();
		if (left < 0.005)
			return GLP_ETMLIM;
		int rc = opt_sclp_solve(S->clp, S->lp, left, S->x, S->y, &S->obj, &S->iters);
		if (rc == 2)
			return GLP_ETMLIM;
		if (rc >= 0) {
			S->status = rc == 0 ? GLP_OPT : GLP_NOFEAS;
			S->y_rows = rc == 0 ? nr : 0;
			return 0;
		}
	}
	int it0 = glp_get_it_cnt(S->lp);
	int rc = glpk_simplex(S->lp, deadline_s);
	S->iters += glp_get_it_cnt(S->lp) - it0;
	if (rc != 0)
		return rc;
	S->status = glp_get_status(S->lp);
	if (S->status != GLP_OPT)
		return 0;
	S->obj = glp_get_obj_val(S->lp);
	for (int c = 1; c <= nc; c++)
		S->x[c] = glp_get_col_prim(S->lp, c);
	for (int q = 1; q <= nr; q++)
		S->y[q] = glp_get_row_dual(S->lp, q);
	S->y_rows = nr;
	return 0;
}

/* Kelley loop on the LP as it stands (vector and any fixings set). */
static double kelley(struct opt_screen *S, double target_w, double deadline_s, bool *infeasible)
{
	*infeasible = false;
	double bound = -INFINITY;
	for (int round = 0; round < SCREEN_ROUNDS; round++) {
		if (simplex(S, deadline_s) != 0)
			break;
		int st = S->status;
		if (st == GLP_NOFEAS) { /* the relaxation has no point: nothing is feasible here */
			*infeasible = true;
			return INFINITY;
		}
		if (st != GLP_OPT)
			break;
		double z = S->idle_w + S->obj;
		bool stalled = z < bound + S->stall * fabs(bound);
		bound = fmax(bound, z);
		if (bound >= target_w || stalled || !separate(S))
			break;
	}
	return bound;
}

double opt_screen_vector(struct opt_screen *S, const struct opt_sol *s, double target_w, double deadline_s,
			 bool *infeasible)
{
	prune_pool(S);
	set_vector(S, s);
	S->idle_w = opt_vector_idle_w(S->in, s);
	int term = glp_term_out(GLP_OFF); /* glp_scale_prob reports on the terminal */
	glp_scale_prob(S->lp, GLP_SF_AUTO);
	glp_term_out(term);
	return kelley(S, target_w, deadline_s, infeasible);
}

bool opt_screen_at_optimum(const struct opt_screen *S)
{
	return S->status == GLP_OPT;
}

void opt_screen_precise(struct opt_screen *S, bool on)
{
	S->tol = on ? SCREEN_TOL_PRECISE : SCREEN_TOL;
	S->stall = on ? SCREEN_STALL_PRECISE : SCREEN_STALL;
}

double opt_screen_resolve(struct opt_screen *S, double target_w, double deadline_s, bool *infeasible)
{
	return kelley(S, target_w, deadline_s, infeasible);
}

/* Column of option o of task i (islands, then servers); 0 when the task has no such option. */
static int option_col(const struct opt_screen *S, size_t i, size_t o)
{
	const struct opt_inst *in = S->in;
	return o < in->n_isl ? S->a[i * in->n_isl + o] : S->z[i * in->n_srv + (o - in->n_isl)];
}

/*
 * Opens or closes option o of task i at vector s. A closed island option also fixes its deadline and
 * density columns at 0, which every plan has there (d <= hi a, v >= a^2 / d): left free, a closed
 * option sits at a = d = v = 0, where every tangent of its perspective is tight (0 >= 0), and the dual
 * simplex pivots through that degenerate vertex after each fixing.
 */
static void set_option(struct opt_screen *S, const struct opt_sol *s, size_t i, size_t o, bool open)
{
	const struct opt_inst *in = S->in;
	int c = option_col(S, i, o);
	if (!c)
		return;
	open = open && opt_option_fits(in, s, i, o, 0);
	upto(S->lp, c, open ? 1 : 0);
	if (o >= in->n_isl)
		return;
	size_t ik = i * in->n_isl + o;
	/* v <= cap / C when alone on a core: a free upper bound that keeps v finite */
	double C = ms((double)runtime_at(in, i, o, s->isl_opp[o]));
	upto(S->lp, S->d[ik], open ? hi_ms(in, i) : 0);
	upto(S->lp, S->v[ik], open && C > 0 ? in->cap / C : 0);
}

double opt_screen_share(const struct opt_screen *S, size_t i, size_t o)
{
	int c = option_col(S, i, o);
	return c ? S->x[c] : 0.0;
}

void opt_screen_fix(struct opt_screen *S, const struct opt_sol *s, size_t i, long o)
{
	for (size_t q = 0; q < S->in->n_isl + S->in->n_srv; q++)
		set_option(S, s, i, q, o < 0 || (size_t)o == q);
}

void opt_screen_round(const struct opt_screen *S, int *where)
{
	const struct opt_inst *in = S->in;
	for (size_t i = 0; i < in->n_tasks; i++) {
		double best = -1;
		for (size_t k = 0; k < in->n_isl; k++) {
			double a = S->x[S->a[i * in->n_isl + k]];
			if (a > best)
				best = a, where[i] = (int)in->isl_core0[k];
		}
		for (size_t v = 0; v < in->n_srv; v++) {
			int c = S->z[i * in->n_srv + v];
			double z = c ? S->x[c] : -1;
			if (z > best)
				best = z, where[i] = opt_where_server(v);
		}
	}
}

void opt_screen_shrink(struct opt_screen *S, double frac, const bool *isl)
{
	const struct opt_inst *in = S->in;
	for (size_t k = 0; k < in->n_isl; k++) {
		double rhs = (double)in->isl_ncores[k] * in->cap * (1 - (!isl || isl[k] ? frac : 0));
		glp_set_row_bnds(S->lp, S->cap[k], GLP_UP, rhs, rhs);
	}
}

bool opt_screen_deadline(const struct opt_screen *S, size_t i, size_t k, double *t_ms)
{
	size_t ik = i * S->in->n_isl + k;
	double a = S->x[S->a[ik]], d = S->x[S->d[ik]];
	if (a < 1e-6 || d < 1e-9)
		return false;
	*t_ms = d / a;
	return true;
}

int opt_screen_nogood(struct opt_screen *S, const int *where, const size_t *pool)
{
	const struct opt_inst *in = S->in;
	int n = 0, tasks = 0;
	for (size_t i = 0; i < in->n_tasks; i++) {
		int w = where[i];
		if (w == OPT_WHERE_ANY)
			continue;
		if (w < 0) {
			int c = option_col(S, i, in->n_isl + opt_where_server_of(w));
			if (c)
				S->ind[++n] = c, S->val[n] = 1.0, tasks++;
			continue;
		}
		size_t k = in->core_isl[w], g = pool ? pool[k] : k;
		for (size_t q = 0; q < in->n_isl; q++)
			if (pool ? pool[q] == g : q == k)
				S->ind[++n] = S->a[i * in->n_isl + q], S->val[n] = 1.0;
		tasks++;
	}
	return n ? row(S->lp, GLP_UP, (double)tasks - 1.0, n, S->ind, S->val) : 0;
}

/*
 * Option bounds from the duals of the last LP, safe against the simplex's tolerances (Neumaier and
 * Shcherbina's rigorous dual bound): for any row multipliers y, every point x of the LP as it
 * stands (rows s = A x within their bounds, columns within theirs) has
 *     c x = (c - A^T y) x + y s >= sum_j min_{x_j in [l_j, u_j]} r_j x_j + sum_q min_{s_q} y_q s_q,
 * r = c - A^T y, whatever y is (a multiplier whose sign would need a missing row bound counts as 0).
 * So the LP's own duals give a bound on the points with option o of task i at 1 by taking that
 * column's term at 1 instead of its minimum. Every plan at the vector that the branch and bound's
 * current node admits is such a point (screen.c's header), so a bound at or above the cut-off
 * closes that option in the node's subtree. The bound does not rest on the simplex being exactly
 * optimal or dual feasible (a slightly wrong y only weakens it), only on every column being bounded,
 * which all are once a vector is set (v at cap / C, F at D, d at hi). Returns the bound on every
 * point (no option forced); out[i * (n_isl + n_srv) + o]: the bound with task i on option o,
 * INFINITY where the LP has that option closed.
 */
double opt_screen_option_bounds(struct opt_screen *S, double *out)
{
	const struct opt_inst *in = S->in;
	glp_prob *lp = S->lp;
	int nr = glp_get_num_rows(lp), nc = glp_get_num_cols(lp);
	double *r = S->rc; /* reduced costs r = c - A^T y */
	double base = S->idle_w + glp_get_obj_coef(lp, 0);
	for (int c = 1; c <= nc; c++)
		r[c] = glp_get_obj_coef(lp, c);
	for (int q = 1; q <= nr; q++) {
		double y = q <= S->y_rows ? S->y[q] : 0;
		int t = glp_get_row_type(lp, q);
		bool lo = t == GLP_LO || t == GLP_DB || t == GLP_FX, up = t == GLP_UP || t == GLP_DB || t == GLP_FX;
		if (y == 0 || (y > 0 && !lo) || (y < 0 && !up))
			continue; /* y_q = 0 */
		base += y * (y > 0 ? glp_get_row_lb(lp, q) : glp_get_row_ub(lp, q));
		int n = glp_get_mat_row(lp, q, S->ind, S->val);
		for (int e = 1; e <= n; e++)
			r[S->ind[e]] -= y * S->val[e];
	}
	for (int c = 1; c <= nc; c++) {
		int t = glp_get_col_type(lp, c);
		if (t != GLP_DB && t != GLP_FX)
			return -INFINITY; /* an unbounded column (no vector set yet): no bound */
		base += fmin(r[c] * glp_get_col_lb(lp, c), r[c] * glp_get_col_ub(lp, c));
	}
	size_t no = in->n_isl + in->n_srv;
	for (size_t i = 0; i < in->n_tasks; i++)
		for (size_t o = 0; o < no; o++) {
			int c = option_col(S, i, o);
			double l = c ? glp_get_col_lb(lp, c) : 0, u = c ? glp_get_col_ub(lp, c) : 0;
			out[i * no + o] = u < 1 ? INFINITY : base - fmin(r[c] * l, r[c] * u) + r[c];
		}
	return base;
}

void opt_screen_open(struct opt_screen *S, const struct opt_sol *s, size_t i, size_t o, bool open)
{
	set_option(S, s, i, o, open);
}

double opt_screen_load(const struct opt_screen *S, const struct opt_sol *s, size_t i, size_t k)
{
	size_t ik = i * S->in->n_isl + k;
	return ms((double)runtime_at(S->in, i, k, s->isl_opp[k])) * S->x[S->v[ik]];
}

/*
 * One core's density row: sum over the tasks with on[i], over the islands with isl[k], of C_ik v_ik
 * <= cap. Valid for every plan that puts each such task on that one core (of one of those islands:
 * a plan has a = 1 and v >= 1 / d at its island, 0 at the others), which is what the branch and bound
 * fixes below a core branch (master_bb.c). The island rows cannot see it: they let the tasks that
 * share a core spread their density over every core of the island.
 */
int opt_screen_core_row(struct opt_screen *S, int r, const struct opt_sol *s, const bool *on, const bool *isl)
{
	const struct opt_inst *in = S->in;
	int n = 0;
	for (size_t i = 0; i < in->n_tasks; i++)
		for (size_t k = 0; on[i] && k < in->n_isl; k++)
			if (isl[k])
				S->ind[++n] = S->v[i * in->n_isl + k],
				S->val[n] = ms((double)runtime_at(in, i, k, s->isl_opp[k]));
	if (r <= 0)
		return row(S->lp, GLP_UP, in->cap, n, S->ind, S->val);
	glp_set_mat_row(S->lp, r, n, S->ind, S->val);
	glp_set_row_bnds(S->lp, r, GLP_UP, in->cap, in->cap);
	return r;
}

void opt_screen_release(struct opt_screen *S, int r)
{
	if (r > 0 && r <= glp_get_num_rows(S->lp))
		glp_set_row_bnds(S->lp, r, GLP_FR, 0, 0);
}
