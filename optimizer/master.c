/* SPDX-License-Identifier: MIT */
/*
 * The exact mode: the island-level master of formulation B (docs/MODEL.md, "Exact mode").
 *
 * Power depends only on which island / server each task uses and on the OPPs, never on the core or
 * the deadlines. The master therefore drops cores: per island k the aggregate density of its tasks
 * must fit n_k * cap at the chosen OPP; each task alone must fit one core (d >= C/cap); paths use
 * finish potentials; FIFO servers are linearised exactly. It is a relaxation of the full problem with
 * the same objective, so its bound is a valid lower bound; a master solution whose tasks can then be
 * packed onto cores (opt_pack: worst fit + deadline LP) is globally optimal.
 *
 * The density C/d is convex but not linear. With inverse-deadline variables v_ik and the placement
 * binary a_ik, v >= a^2 / d is the perspective of 1/d (= 1/d at a = 1, 0 at a = d = 0); its tangents
 *     v >= 2 a / t - d / t^2
 * are valid everywhere, so any finite set of them is an outer approximation (valid bound). Four are
 * static; more are generated lazily in GLPK's GLP_IROWGEN callback at every LP optimum that violates
 * the perspective (rows added there live only in the current subtree; we re-separate at every node).
 * GLPK settings per the reference notes: presolve off (the callback must see the original columns),
 * simple rounding off (its incumbents would bypass the lazy rows), dual simplex. The incumbent from the
 * heuristic enters as an objective cut-off row (P <= incumbent (1 - gap tolerance)): if the master becomes
 * infeasible, the incumbent is proven optimal; rather than glp_ios_heur_sol, whose solutions GLPK does
 * not check against lazy rows.
 *
 * With --backend cbc the same model goes to CBC (C interface) in an outer-approximation loop: solve,
 * add the violated tangents, solve again; every CBC bound is a valid bound.
 */
#include "optimizer/opt_internal.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef PD_HAVE_CBC
#include <coin/Cbc_C_Interface.h>
#endif

#define NO_COL 0

struct master {
	const struct opt_inst *in;
	glp_prob *lp;
	int *y;    /* [k] first column of y_k,m (consecutive) */
	int *g;    /* [a] first column of g_a,m */
	/* Bins: islands (island-level master) or cores (core-level master, exact without packing). */
	bool core_level;
	size_t nb;
	size_t *bin_isl, *bin_cores; /* island of a bin; cores it stands for (n_k or 1) */
	int *a, *d, *v; /* [i * nb + b]: a_ib, d_ib, v_ib (NO_COL when impossible) */
	int *wm;        /* [i * n_isl + k]: first w_ik,m */
	int *z, *r; /* [i * n_srv + s] */
	int *q;    /* [i * n_srv + s]: first q_i,s,m (GPU) */
	int *F;    /* [i] */
	int cutoff_row;
	/* search state */
	double bound, deadline_s;
	int n_cuts;
	struct cand *cands;
	size_t n_cands, cap_cands;
	/* vector screening (screen.c), shared by both phases of opt_exact: bound per vector id (NAN:
	 * not screened yet) and the vectors proven infeasible */
	struct opt_screen *scr;
	double *scr_lb;
	size_t *infeas, n_infeas;
};

struct cand {
	double obj;
	int *where; /* island core 0 or -(1 + server) */
	size_t *isl_opp, *acc_opp;
};

static int add_col(glp_prob *lp, int kind, double lb, double ub, double obj)
{
	int c = glp_add_cols(lp, 1);
	glp_set_col_kind(lp, c, kind);
	if (kind == GLP_BV)
		;
	else if (ub >= lb && isfinite(ub))
		glp_set_col_bnds(lp, c, ub > lb ? GLP_DB : GLP_FX, lb, ub);
	else
		glp_set_col_bnds(lp, c, GLP_LO, lb, 0);
	glp_set_obj_coef(lp, c, obj);
	return c;
}

/* Row from (col, coef) pairs ending with col 0. type GLP_LO/UP/FX with rhs. */
static void add_row(glp_prob *lp, int type, double rhs, int n, const int *ind, const double *val)
{
	/* GLPK arrays are 1-based */
	int sind[16];
	double sval[16];
	int *i1 = n < 16 ? sind : malloc((size_t)(n + 1) * sizeof(int));
	double *v1 = n < 16 ? sval : malloc((size_t)(n + 1) * sizeof(double));
	if (i1 && v1) {
		memcpy(i1 + 1, ind, (size_t)n * sizeof(int));
		memcpy(v1 + 1, val, (size_t)n * sizeof(double));
		int r = glp_add_rows(lp, 1);
		glp_set_mat_row(lp, r, n, i1, v1);
		glp_set_row_bnds(lp, r, type, rhs, rhs);
	}
	if (i1 != sind)
		free(i1);
	if (v1 != sval)
		free(v1);
}

static double ms(int64_t ns) { return (double)ns * 1e-6; }

/* What a plan must cost less than to matter: the incumbent less the optimality tolerance (every
 * search prunes at it; INFINITY without an incumbent). */
static double cut_w(const struct opt_inst *in, const struct opt_sol *inc)
{
	return inc->ok ? inc->power_w * (1 - in->rel_gap) : INFINITY;
}

static void tangent(glp_prob *lp, int a, int d, int v, double t)
{
	/* v - (2/t) a + (1/t^2) d >= 0 */
	int ind[3] = {v, a, d};
	double val[3] = {1.0, -2.0 / t, 1.0 / (t * t)};
	add_row(lp, GLP_LO, 0.0, 3, ind, val);
}

static bool isl_fits(const struct opt_inst *in, size_t i, size_t k, size_t m)
{
	return opt_core_fits(in, i, (double)wcet_at(in, i, k, m), 0);
}

static void build_islands(struct master *M)
{
	const struct opt_inst *in = M->in;
	glp_prob *lp = M->lp;
	for (size_t k = 0; k < in->n_isl; k++) {
		M->y[k] = 0;
		int ind[64];
		double val[64];
		size_t nm = in->isl_nopp[k];
		for (size_t m = 0; m < nm; m++) {
			int c = add_col(lp, GLP_BV, 0, 1, (double)in->isl_ncores[k] * in->idle_w[k][m]);
			if (!m)
				M->y[k] = c;
		}
		int *ix = nm <= 32 ? ind : calloc(2 * nm, sizeof(int));
		double *vx = nm <= 32 ? val : calloc(2 * nm, sizeof(double));
		for (size_t m = 0; ix && vx && m < nm; m++)
			ix[m] = M->y[k] + (int)m, vx[m] = 1.0;
		if (ix && vx)
			add_row(lp, GLP_FX, 1.0, (int)nm, ix, vx);
		long j = in->isl_prev_twin[k];
		for (size_t m = 0; ix && vx && j >= 0 && m < nm; m++) /* twins: OPP(j) <= OPP(k), symmetry.c */
			ix[m] = M->y[j] + (int)m, vx[m] = (double)m, ix[nm + m] = M->y[k] + (int)m, vx[nm + m] = -(double)m;
		if (ix && vx && j >= 0)
			add_row(lp, GLP_UP, 0.0, (int)(2 * nm), ix, vx);
		if (ix != ind)
			free(ix);
		if (vx != val)
			free(vx);
	}
	for (size_t a = 0; a < in->n_acc; a++) {
		size_t nm = in->acc_nopp[a];
		int ind[256];
		double val[256];
		for (size_t m = 0; m < nm && m < 256; m++) {
			int c = add_col(lp, GLP_BV, 0, 1, in->acc_idle_w[a][m]);
			if (!m)
				M->g[a] = c;
			ind[m] = c, val[m] = 1.0;
		}
		add_row(lp, GLP_FX, 1.0, (int)(nm < 256 ? nm : 256), ind, val);
	}
}

static size_t bin_first(const struct master *M, size_t k)
{
	return M->core_level ? M->in->isl_core0[k] : k;
}

static size_t bin_count(const struct master *M, size_t k)
{
	return M->core_level ? M->in->isl_ncores[k] : 1;
}

/* Columns and rows of task i on island k: power columns w_ik,m = a_ik y_km at island level, and per
 * bin of the island (the island itself, or each of its cores) a_ib, d_ib, v_ib with its tangents. */
static void build_task_island(struct master *M, size_t i, size_t k, int *ind, double *val)
{
	const struct opt_inst *in = M->in;
	glp_prob *lp = M->lp;
	size_t nm = in->isl_nopp[k], ik = i * in->n_isl + k, b0 = bin_first(M, k), nbk = bin_count(M, k);
	bool any = false;
	for (size_t m = 0; m < nm; m++)
		any = any || isl_fits(in, i, k, m);
	if (!any)
		return;
	double hi = ms((int64_t)opt_longest_d(in, i));
	double ctop = ms(wcet_at(in, i, k, nm - 1));
	double lo = ctop / in->cap;
	double pts[4] = {lo, sqrt(lo * hi), hi, ms(wcet_at(in, i, k, 0)) / in->cap};
	for (size_t b = b0; b < b0 + nbk; b++) {
		size_t ib = i * M->nb + b;
		M->a[ib] = add_col(lp, GLP_BV, 0, 1, 0);
		M->d[ib] = add_col(lp, GLP_CV, 0, hi, 0);
		M->v[ib] = add_col(lp, GLP_CV, 0, in->cap / ctop, 0);
		int i3[2] = {M->d[ib], M->a[ib]};
		double v3[2] = {1.0, -hi};
		add_row(lp, GLP_UP, 0.0, 2, i3, v3); /* d <= hi a */
		for (int p = 0; p < 4; p++)
			if (pts[p] > 0 && pts[p] <= hi * 1.000001)
				tangent(lp, M->a[ib], M->d[ib], M->v[ib], pts[p]);
	}
	int n1 = 0;
	for (size_t b = b0; b < b0 + nbk; b++)
		ind[n1] = M->a[i * M->nb + b], val[n1++] = -1.0;
	for (size_t m = 0; m < nm; m++) {
		double C = ms(wcet_at(in, i, k, m));
		double dw = (in->busy_w[k][m] - in->idle_w[k][m]) * C / ms(in->T_ns[i]);
		int c = add_col(lp, GLP_CV, 0, isl_fits(in, i, k, m) ? 1 : 0, dw);
		if (!m)
			M->wm[ik] = c;
		ind[n1] = c, val[n1++] = 1.0;
		int ij[2] = {c, M->y[k] + (int)m};
		double vj[2] = {1.0, -1.0};
		add_row(lp, GLP_UP, 0.0, 2, ij, vj); /* w <= y */
	}
	add_row(lp, GLP_FX, 0.0, n1, ind, val); /* sum_m w = sum_b a */
	/* sum_b d_ib >= sum_m (C_m / cap) w_m: alone on a core the task must fit */
	int n2 = 0;
	for (size_t b = b0; b < b0 + nbk; b++)
		ind[n2] = M->d[i * M->nb + b], val[n2++] = 1.0;
	for (size_t m = 0; m < nm; m++)
		ind[n2] = M->wm[ik] + (int)m, val[n2++] = -ms(wcet_at(in, i, k, m)) / in->cap;
	add_row(lp, GLP_LO, 0.0, n2, ind, val);
}

/* Per bin and OPP: sum_i C_ikm v_ib <= cores(b) cap + Big (1 - y_km), and the big-M-free form. */
static void build_capacity(struct master *M, int *ind, double *val)
{
	const struct opt_inst *in = M->in;
	for (size_t b = 0; b < M->nb; b++) {
		size_t k = M->bin_isl[b];
		double ncap = (double)M->bin_cores[b] * in->cap;
		for (size_t m = 0; m < in->isl_nopp[k]; m++) {
			int n = 0;
			double big = -ncap;
			for (size_t i = 0; i < in->n_tasks; i++) {
				size_t ib = i * M->nb + b;
				if (!M->v[ib])
					continue;
				double C = ms(wcet_at(in, i, k, m));
				ind[n] = M->v[ib], val[n++] = C;
				big += C * glp_get_col_ub(M->lp, M->v[ib]);
			}
			if (!n || big <= 0)
				continue;
			ind[n] = M->y[k] + (int)m, val[n++] = big;
			add_row(M->lp, GLP_UP, ncap + big, n, ind, val);
		}
		/* With phi_m = f_m / f_top, phi_m * density_m >= min_m' phi_m' C_ikm' v =: coef v, so
		 *     sum_i coef_i v_ib <= cores(b) cap sum_m phi_m y_km
		 * holds at every OPP (exact when no task has a fixed part). */
		const struct pd_island *isl = pd_platform_island(in->plat, k);
		size_t nm = in->isl_nopp[k];
		double ftop = (double)isl->opps[nm - 1].freq_khz;
		int n = 0;
		for (size_t i = 0; i < in->n_tasks; i++) {
			size_t ib = i * M->nb + b;
			if (!M->v[ib])
				continue;
			double coef = INFINITY;
			for (size_t m = 0; m < nm; m++)
				coef = fmin(coef, (double)isl->opps[m].freq_khz / ftop * ms(wcet_at(in, i, k, m)));
			ind[n] = M->v[ib], val[n++] = coef;
		}
		if (!n)
			continue;
		for (size_t m = 0; m < nm; m++)
			ind[n] = M->y[k] + (int)m, val[n++] = -ncap * (double)isl->opps[m].freq_khz / ftop;
		add_row(M->lp, GLP_UP, 0.0, n, ind, val);
	}
}

/* Identical cores of an island: core c is used only when core c-1 holds a task of lower index
 * (cores relabelled by their smallest task; empty cores last). */
static void build_core_symmetry(struct master *M, int *ind, double *val)
{
	const struct opt_inst *in = M->in;
	if (!M->core_level)
		return;
	for (size_t k = 0; k < in->n_isl; k++)
		for (size_t b = in->isl_core0[k] + 1; b < in->isl_core0[k] + in->isl_ncores[k]; b++)
			for (size_t j = 0; j < in->n_tasks; j++) {
				if (!M->a[j * M->nb + b])
					continue;
				int n = 0;
				ind[n] = M->a[j * M->nb + b], val[n++] = 1.0;
				for (size_t i = 0; i < j; i++)
					if (M->a[i * M->nb + b - 1])
						ind[n] = M->a[i * M->nb + b - 1], val[n++] = -1.0;
				add_row(M->lp, GLP_UP, 0.0, n, ind, val);
			}
}

/* Servers: per task z (and GPU q), the load, the FIFO response r, utilisation, FPGA sharing. */
static void build_servers(struct master *M, int *ind, double *val)
{
	const struct opt_inst *in = M->in;
	glp_prob *lp = M->lp;
	for (size_t s = 0; s < in->n_srv; s++) {
		size_t a = in->srv[s].accel, nm = in->acc_nopp[a];
		bool fpga = in->srv[s].kind == PD_ACCEL_FPGA;
		double rho = fpga ? ms(pd_platform_accel(in->plat, a)->reconfig_ns) : 0;
		double bigL = 0;
		size_t users = 0;
		for (size_t i = 0; i < in->n_tasks; i++)
			if (in->impl[i * in->n_srv + s] >= 0) {
				double worst = 0;
				for (size_t m = 0; m < nm; m++)
					worst = fmax(worst, ms(opt_latency(in, i, s, m)));
				bigL += worst + rho;
				users++;
			}
		if (!users)
			continue;
		int load = add_col(lp, GLP_CV, 0, bigL, 0), sh = 0;
		if (fpga)
			sh = add_col(lp, GLP_BV, 0, 1, 0);
		int nl = 0, nu = 0;
		int *uind = calloc(3 * in->n_tasks * (nm + 1) + 2, sizeof(int));
		double *uval = calloc(3 * in->n_tasks * (nm + 1) + 2, sizeof(double));
		if (!uind || !uval) {
			free(uind), free(uval);
			continue;
		}
		ind[nl] = load, val[nl++] = -1.0;
		for (size_t i = 0; i < in->n_tasks; i++) {
			size_t is = i * in->n_srv + s;
			if (in->impl[is] < 0)
				continue;
			double T = ms(in->T_ns[i]);
			M->z[is] = add_col(lp, GLP_BV, 0, 1, 0);
			if (!fpga) {
				int qind[258];
				double qval[258];
				int nq = 0;
				qind[nq] = M->z[is], qval[nq++] = -1.0;
				for (size_t m = 0; m < nm && m < 256; m++) {
					double L = ms(opt_latency(in, i, s, m));
					double dw = (in->acc_busy_w[a][m] - in->acc_idle_w[a][m]) * L / T;
					int c = add_col(lp, GLP_CV, 0, L <= ms(in->T_ns[i]) ? 1 : 0, dw);
					if (!m)
						M->q[is] = c;
					qind[nq] = c, qval[nq++] = 1.0;
					int ij[2] = {c, M->g[a] + (int)m};
					double vj[2] = {1.0, -1.0};
					add_row(lp, GLP_UP, 0.0, 2, ij, vj);
					ind[nl] = c, val[nl++] = L;
					uind[nu] = c, uval[nu++] = L / T;
				}
				add_row(lp, GLP_FX, 0.0, nq, qind, qval);
			} else {
				double L = ms(opt_latency(in, i, s, 0));
				glp_set_obj_coef(lp, M->z[is], in->fpga_pw[is] * L / T);
				ind[nl] = M->z[is], val[nl++] = L;
				uind[nu] = M->z[is], uval[nu++] = L / T;
				/* e >= z + sh - 1 carries the reconfiguration of each request on a shared slot */
				int e = add_col(lp, GLP_CV, 0, 1, 0);
				int ij[3] = {e, M->z[is], sh};
				double vj[3] = {1.0, -1.0, -1.0};
				add_row(lp, GLP_LO, -1.0, 3, ij, vj);
				ind[nl] = e, val[nl++] = rho;
				uind[nu] = e, uval[nu++] = rho / T;
			}
		}
		add_row(lp, GLP_FX, 0.0, nl, ind, val); /* load = sum ... */
		add_row(lp, GLP_UP, 1.0, nu, uind, uval); /* utilisation <= 1 */
		free(uind), free(uval);
		for (size_t i = 0; i < in->n_tasks; i++) { /* r >= load - big (1 - z); r <= big z */
			size_t is = i * in->n_srv + s;
			if (in->impl[is] < 0)
				continue;
			M->r[is] = add_col(lp, GLP_CV, 0, bigL, 0);
			int ij[3] = {M->r[is], load, M->z[is]};
			double vj[3] = {1.0, -1.0, -bigL};
			add_row(lp, GLP_LO, -bigL, 3, ij, vj);
			int ik[2] = {M->r[is], M->z[is]};
			double vk[2] = {1.0, -bigL};
			add_row(lp, GLP_UP, 0.0, 2, ik, vk);
		}
		if (fpga) { /* sharing: one binary per distinct bitstream; more than one => sh = 1 */
			int nb = 0, bi[512];
			double bv[512];
			for (size_t i = 0; i < in->n_tasks && nb < 500; i++) {
				size_t is = i * in->n_srv + s;
				if (in->impl[is] < 0)
					continue;
				bool seen = false;
				for (size_t j = 0; j < i && !seen; j++)
					seen = in->impl[j * in->n_srv + s] >= 0 && strcmp(in->bits[j * in->n_srv + s], in->bits[is]) == 0;
				if (seen)
					continue;
				int b = add_col(lp, GLP_BV, 0, 1, 0);
				bi[nb] = b, bv[nb++] = 1.0;
				for (size_t j = i; j < in->n_tasks; j++)
					if (in->impl[j * in->n_srv + s] >= 0 && strcmp(in->bits[j * in->n_srv + s], in->bits[is]) == 0) {
						int ij[2] = {b, M->z[j * in->n_srv + s]};
						double vj[2] = {1.0, -1.0};
						add_row(lp, GLP_LO, 0.0, 2, ij, vj);
					}
			}
			if (nb > 1) {
				bi[nb] = sh, bv[nb] = -(double)(nb - 1);
				nb++;
				add_row(lp, GLP_UP, 1.0, nb, bi, bv);
			}
		}
	}
}

/* Placement rows and finish potentials. */
static void build_paths(struct master *M, int *ind, double *val)
{
	const struct opt_inst *in = M->in;
	for (size_t i = 0; i < in->n_tasks; i++) {
		int n = 0;
		for (size_t b = 0; b < M->nb; b++)
			if (M->a[i * M->nb + b])
				ind[n] = M->a[i * M->nb + b], val[n++] = 1.0;
		for (size_t s = 0; s < in->n_srv; s++)
			if (M->z[i * in->n_srv + s])
				ind[n] = M->z[i * in->n_srv + s], val[n++] = 1.0;
		add_row(M->lp, GLP_FX, 1.0, n, ind, val);
		M->F[i] = add_col(M->lp, GLP_CV, 0, ms(in->D_ns[i]), 0);
	}
	for (size_t i = 0; i < in->n_tasks; i++) {
		const struct pd_task *t = pd_dags_task(in->dags, i);
		size_t np = t->n_preds ? t->n_preds : 1;
		for (size_t p = 0; p < np; p++) {
			int n = 0;
			ind[n] = M->F[i], val[n++] = 1.0;
			if (t->n_preds)
				ind[n] = M->F[t->preds[p]], val[n++] = -1.0;
			for (size_t b = 0; b < M->nb; b++)
				if (M->d[i * M->nb + b])
					ind[n] = M->d[i * M->nb + b], val[n++] = -1.0;
			for (size_t s = 0; s < in->n_srv; s++)
				if (M->r[i * in->n_srv + s])
					ind[n] = M->r[i * in->n_srv + s], val[n++] = -1.0;
			add_row(M->lp, GLP_LO, 0.0, n, ind, val);
		}
	}
}

/* FPGA slots of one device are interchangeable: slot q is used only when slot q-1 holds a task of
 * lower index (cores are not in the master, so only slots need symmetry breaking). */
static void build_symmetry(struct master *M, int *ind, double *val)
{
	const struct opt_inst *in = M->in;
	for (size_t s = 1; s < in->n_srv; s++) {
		if (in->srv[s].kind != PD_ACCEL_FPGA || in->srv[s].accel != in->srv[s - 1].accel)
			continue;
		for (size_t j = 0; j < in->n_tasks; j++) {
			if (!M->z[j * in->n_srv + s])
				continue;
			int n = 0;
			ind[n] = M->z[j * in->n_srv + s], val[n++] = 1.0;
			for (size_t i = 0; i < j; i++)
				if (M->z[i * in->n_srv + s - 1])
					ind[n] = M->z[i * in->n_srv + s - 1], val[n++] = -1.0;
			add_row(M->lp, GLP_UP, 0.0, n, ind, val);
		}
	}
}

static int master_build(struct master *M, const struct opt_inst *in, double cutoff_w, bool core_level)
{
	M->in = in;
	M->core_level = core_level;
	M->nb = core_level ? in->n_cores : in->n_isl;
	size_t nib = in->n_tasks * M->nb + 1, nik = in->n_tasks * in->n_isl + 1, nis = in->n_tasks * in->n_srv + 1;
	M->bin_isl = calloc(M->nb + 1, sizeof(size_t));
	M->bin_cores = calloc(M->nb + 1, sizeof(size_t));
	M->y = calloc(in->n_isl + 1, sizeof(int));
	M->g = calloc(in->n_acc + 1, sizeof(int));
	M->a = calloc(nib, sizeof(int)), M->d = calloc(nib, sizeof(int)), M->v = calloc(nib, sizeof(int));
	M->wm = calloc(nik, sizeof(int));
	M->z = calloc(nis, sizeof(int)), M->r = calloc(nis, sizeof(int)), M->q = calloc(nis, sizeof(int));
	M->F = calloc(in->n_tasks + 1, sizeof(int));
	size_t nbuf = 4 * (in->n_tasks + 8) * (M->nb + in->n_isl + in->n_srv + 64);
	int *ind = calloc(nbuf, sizeof(int));
	double *val = calloc(nbuf, sizeof(double));
	if (!M->bin_isl || !M->bin_cores || !M->y || !M->g || !M->a || !M->d || !M->v || !M->wm || !M->z || !M->r ||
	    !M->q || !M->F || !ind || !val) {
		free(ind), free(val);
		return -1;
	}
	for (size_t b = 0; b < M->nb; b++) {
		M->bin_isl[b] = core_level ? in->core_isl[b] : b;
		M->bin_cores[b] = core_level ? 1 : in->isl_ncores[b];
	}
	M->lp = glp_create_prob();
	glp_set_obj_dir(M->lp, GLP_MIN);
	glp_set_obj_coef(M->lp, 0, in->base_w);
	build_islands(M);
	for (size_t i = 0; i < in->n_tasks; i++)
		for (size_t k = 0; k < in->n_isl; k++)
			build_task_island(M, i, k, ind, val);
	build_capacity(M, ind, val);
	build_servers(M, ind, val);
	build_paths(M, ind, val);
	build_symmetry(M, ind, val);
	build_core_symmetry(M, ind, val);
	{ /* objective cut-off from the incumbent (free row until there is one) */
		int n = 0;
		for (int c = 1; c <= glp_get_num_cols(M->lp); c++) {
			double o = glp_get_obj_coef(M->lp, c);
			if (o != 0)
				ind[n] = c, val[n++] = o;
		}
		add_row(M->lp, GLP_UP, isfinite(cutoff_w) ? cutoff_w - in->base_w : 0.0, n, ind, val);
		M->cutoff_row = glp_get_num_rows(M->lp);
		if (!isfinite(cutoff_w))
			glp_set_row_bnds(M->lp, M->cutoff_row, GLP_FR, 0, 0);
	}
	free(ind), free(val);
	return 0;
}

static void master_free(struct master *M)
{
	if (M->lp)
		glp_delete_prob(M->lp);
	free(M->y), free(M->g), free(M->a), free(M->d), free(M->v), free(M->wm), free(M->bin_isl), free(M->bin_cores);
	free(M->z), free(M->r), free(M->q), free(M->F);
	for (size_t c = 0; c < M->n_cands; c++)
		free(M->cands[c].where), free(M->cands[c].isl_opp), free(M->cands[c].acc_opp);
	free(M->cands);
	opt_screen_free(M->scr);
	free(M->scr_lb), free(M->infeas);
}

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
			tangent(lp, M->a[ik], M->d[ik], M->v[ik], d / a);
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
				c->where[i] = -(int)s - 1;
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
static void mip(struct master *M, double deadline_s, bool *finished)
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

/* Valid bound of one OPP vector: idle power + every task on its cheapest option that fits alone. */
static double vector_bound(const struct opt_inst *in, struct opt_sol *s)
{
	if (!opt_vector_paths_ok(in, s, 0, s->d_ns))
		return INFINITY;
	double p = opt_vector_idle_w(in, s);
	for (size_t i = 0; i < in->n_tasks; i++) {
		double best = INFINITY;
		for (size_t o = 0; o < in->n_isl + in->n_srv; o++)
			if (opt_option_fits(in, s, i, o, 0))
				best = fmin(best, opt_task_busy_w(in, s, i, opt_option_where(in, o)));
		if (!isfinite(best))
			return INFINITY;
		p += best;
	}
	return p;
}

struct vec {
	size_t id;
	double lb;
};

static int cmp_vec(const void *a, const void *b)
{
	double x = ((const struct vec *)a)->lb, y = ((const struct vec *)b)->lb;
	return (x > y) - (x < y);
}

static void fix_vector(struct master *M, const struct opt_sol *s)
{
	const struct opt_inst *in = M->in;
	for (size_t k = 0; k < in->n_isl; k++)
		for (size_t m = 0; m < in->isl_nopp[k]; m++)
			glp_set_col_bnds(M->lp, M->y[k] + (int)m, GLP_FX, m == s->isl_opp[k], 0);
	for (size_t a = 0; a < in->n_acc; a++)
		for (size_t m = 0; m < in->acc_nopp[a]; m++)
			glp_set_col_bnds(M->lp, M->g[a] + (int)m, GLP_FX, m == s->acc_opp[a], 0);
}

static void repair_candidates(struct master *M, struct opt_sol *inc, double deadline_s);

/* Whether vector s is nowhere faster than a vector proven infeasible (then it is infeasible too:
 * every WCET and latency there is at least as long, so every row only gets harder). */
static bool dominated_infeasible(const struct master *M, const struct opt_sol *s, struct opt_sol *tmp)
{
	const struct opt_inst *in = M->in;
	for (size_t j = 0; j < M->n_infeas; j++) {
		opt_vector_decode(in, tmp, M->infeas[j]);
		bool dom = true;
		for (size_t k = 0; dom && k < in->n_isl; k++)
			dom = s->isl_opp[k] <= tmp->isl_opp[k];
		for (size_t a = 0; dom && a < in->n_acc; a++)
			dom = s->acc_opp[a] <= tmp->acc_opp[a];
		if (dom)
			return true;
	}
	return false;
}

/*
 * Raises the bounds of the vectors in vs[0..nv) (sorted by bound) with the screening LP, in order,
 * while they are below the incumbent and until screen_dl; results are cached in M for the other
 * phase. Re-sorts vs. Every screened bound is valid (screen.c), so pruning on it stays exact.
 */
static void screen_vectors(struct master *M, struct vec *vs, size_t nv, const struct opt_sol *inc, double screen_dl)
{
	const struct opt_inst *in = M->in;
	struct opt_sol s, tmp;
	if (!M->scr_lb) {
		M->scr_lb = malloc(nv * sizeof(double));
		M->infeas = malloc(nv * sizeof(size_t));
		M->scr = opt_screen_new(in);
		for (size_t id = 0; M->scr_lb && id < nv; id++)
			M->scr_lb[id] = NAN;
	}
	if (!M->scr_lb || !M->infeas || !M->scr || opt_sol_init(&s, in))
		return;
	if (opt_sol_init(&tmp, in)) {
		opt_sol_free(&s);
		return;
	}
	double cut = cut_w(in, inc);
	for (size_t j = 0; j < nv && vs[j].lb < cut; j++) {
		size_t id = vs[j].id;
		if (isnan(M->scr_lb[id]) && opt_now_s() < screen_dl) {
			opt_vector_decode(in, &s, id);
			bool inf = dominated_infeasible(M, &s, &tmp);
			double b = inf ? INFINITY
				       : opt_screen_vector(M->scr, &s, cut, screen_dl, &inf);
			if (inf)
				M->infeas[M->n_infeas++] = id;
			if (b > -INFINITY || inf) /* -INFINITY: no LP optimum in time, screen again later */
				M->scr_lb[id] = b;
		}
		if (!isnan(M->scr_lb[id]))
			vs[j].lb = fmax(vs[j].lb, M->scr_lb[id]);
	}
	qsort(vs, nv, sizeof(*vs), cmp_vec);
	opt_sol_free(&s);
	opt_sol_free(&tmp);
}

/* Capacity held back, in turn, when rounding a vector's LP: the LP optimum fills the islands to the
 * last bit and its rounding then rarely packs onto cores. The first share that packs is kept. */
static const double round_shrink[] = {0, 0.01, 0.02, 0.03, 0.045, 0.06, 0.08};

/* Makes a plan of a rounded screening LP (s->where: island core 0 or server): its deadlines are the
 * LP's, packed exactly (opt_pack_given, which keeps every task on its island); failing that and
 * when repair is set, the heuristic's own packing and repair (which may move tasks elsewhere). */
static bool round_pack(struct master *M, struct opt_sol *s, struct opt_ws *w, double dl, bool repair)
{
	const struct opt_inst *in = M->in;
	for (size_t i = 0; i < in->n_tasks; i++) {
		double t;
		if (s->where[i] >= 0 && opt_screen_deadline(M->scr, i, in->core_isl[s->where[i]], &t))
			s->d_ns[i] = t * 1e6;
		else if (s->where[i] >= 0)
			s->d_ns[i] = opt_longest_d(in, i);
	}
	double r = opt_pack_given(in, s, w, dl);
	bool ok = r <= 1.0 && opt_evaluate(in, s, NULL, 0);
	/* opt_pack_given moved tasks between cores of their islands only, and opt_pack starts again
	 * from the islands: no copy of the assignment is needed */
	if (!ok && repair)
		ok = opt_heur_polish(in, s, dl);
	return ok;
}

/*
 * LP rounding (incumbents, not bounds): at the vectors with the smallest bounds, every task goes to
 * its largest share of the screening LP solved with some capacity held back, and round_pack makes a
 * plan of it. A better incumbent closes more vectors.
 */
static void round_vectors(struct master *M, const struct vec *vs, size_t nv, struct opt_sol *inc, double dl)
{
	const struct opt_inst *in = M->in;
	struct opt_sol s;
	struct opt_ws *w = opt_ws_new(in);
	if (!w)
		return;
	if (!M->scr || opt_sol_init(&s, in)) {
		opt_ws_free(w);
		return;
	}
	for (size_t j = 0; j < nv && opt_now_s() < dl; j++) {
		double cut = cut_w(in, inc);
		if (vs[j].lb >= cut)
			break;
		opt_vector_decode(in, &s, vs[j].id);
		for (size_t r = 0; r < sizeof(round_shrink) / sizeof(round_shrink[0]) && opt_now_s() < dl; r++) {
			bool inf;
			opt_screen_shrink(M->scr, round_shrink[r]);
			double b = opt_screen_vector(M->scr, &s, INFINITY, dl, &inf);
			opt_screen_shrink(M->scr, 0);
			if (inf || b >= cut)
				break; /* holding back more only makes it worse */
			if (!isfinite(b))
				continue;
			opt_screen_round(M->scr, s.where);
			bool ok = round_pack(M, &s, w, fmin(dl, opt_now_s() + 2.0), true);
			if (ok && (!inc->ok || s.power_w < inc->power_w))
				opt_sol_copy(inc, &s, in);
			if (ok)
				break;
		}
	}
	opt_sol_free(&s);
	opt_ws_free(w);
}

/*
 * Exact search over OPP vectors. For a fixed vector the master has no OPP binaries and its capacity
 * rows are exact and tight, so GLPK closes it quickly. Vectors are visited by increasing valid bound
 * (vector_bound); the search stops when the next bound reaches the incumbent. Each vector's MILP runs
 * with the cut-off row at the incumbent, so "infeasible" means "nothing better at this vector". A
 * vector whose MILP optimum could not be packed onto cores, or that ran out of time, stays open with
 * its MILP bound; the final bound is the smallest open bound.
 */
/* Copies the best (lowest objective) candidate of M into dst; false when there is none. */
static bool best_cand(const struct master *M, struct cand *dst)
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
static int pack_exact(struct master *C, const struct cand *cd, struct opt_sol *out, double deadline_s)
{
	const struct opt_inst *in = C->in;
	memcpy(out->isl_opp, cd->isl_opp, in->n_isl * sizeof(size_t));
	memcpy(out->acc_opp, cd->acc_opp, in->n_acc * sizeof(size_t));
	fix_vector(C, out);
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
				glp_set_col_bnds(C->lp, col, GLP_FX, w == -(int)sv - 1, 0);
		}
	}
	glp_set_row_bnds(C->lp, C->cutoff_row, GLP_FR, 0, 0);
	bool fin = false;
	mip(C, deadline_s, &fin);
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

/* No-good cut: this island/server assignment at these OPPs does not pack (proven by pack_exact). */
static void add_nogood(struct master *M, const struct cand *cd)
{
	const struct opt_inst *in = M->in;
	size_t cap = in->n_tasks + in->n_isl + in->n_acc + 1;
	int *ind = calloc(cap, sizeof(int));
	double *val = calloc(cap, sizeof(double));
	int n = 0;
	for (size_t i = 0; ind && val && i < in->n_tasks; i++) {
		int w = cd->where[i];
		int col = w >= 0 ? M->a[i * M->nb + in->core_isl[w]] : M->z[i * in->n_srv + (size_t)(-w - 1)];
		if (col)
			ind[n] = col, val[n++] = 1.0;
	}
	for (size_t k = 0; ind && val && k < in->n_isl; k++)
		ind[n] = M->y[k] + (int)cd->isl_opp[k], val[n++] = 1.0;
	for (size_t a = 0; ind && val && a < in->n_acc; a++)
		ind[n] = M->g[a] + (int)cd->acc_opp[a], val[n++] = 1.0;
	if (ind && val && n)
		add_row(M->lp, GLP_UP, (double)n - 1.0, n, ind, val);
	free(ind);
	free(val);
}

static int cand_alloc(struct cand *c, const struct opt_inst *in)
{
	c->where = calloc(in->n_tasks + 1, sizeof(int));
	c->isl_opp = calloc(in->n_isl + 1, sizeof(size_t));
	c->acc_opp = calloc(in->n_acc + 1, sizeof(size_t));
	return c->where && c->isl_opp && c->acc_opp ? 0 : -1;
}

/*
 * Per-vector branch and bound on the screening LP (small sets, island search). With the OPPs fixed a
 * plan's power is the vector's idle power plus the busy power of its island / server assignment,
 * so only the assignment is searched: depth first, on the task whose LP share is most fractional,
 * the option with the larger share first. A node whose LP bound reaches the incumbent is closed. An
 * integral LP optimum is an assignment whose power is that bound: if it packs with the LP's deadlines
 * (opt_pack_given keeps every task on its island) it is the best plan of its subtree; otherwise the
 * exact packing search decides (corepack.c, then the core-level master if that ran out of time),
 * and an assignment that cannot be packed gets a no-good row in the screening LP (valid at this
 * vector, freed afterwards) and the node is solved again. Every node's LP is an outer approximation,
 * so every closure is valid.
 */
struct bb {
	struct master *M, *C;
	struct opt_sol *inc, s, tmp;
	struct opt_ws *w;
	struct cand cd;
	long *fixed; /* per task: fixed option, or -1 */
	int *nogood; /* no-good rows added to the screening LP at this vector */
	size_t n_nogood, cap_nogood;
	double dl;
	bool unfinished; /* out of time */
	bool unknown;    /* some leaf's packing was not decided */
};
/* One exact packing check of the branch and bound may take this long (corepack.c decides the
 * benchmark's 30-task packings in 0.01-2 s; GLPK's core-level master sometimes not in 9 s); a leaf
 * left undecided stays open and the search goes on. */
#define BB_EXACT_S 2.0

static size_t n_options(const struct opt_inst *in) { return in->n_isl + in->n_srv; }

/* Most fractional free task (largest 1 - max share), or n_tasks when the LP optimum is integral; the
 * option with its largest share in *best_o. */
static size_t bb_branch_task(const struct bb *B, long *best_o)
{
	const struct opt_inst *in = B->M->in;
	size_t bi = in->n_tasks;
	double bf = 1e-6;
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (B->fixed[i] >= 0)
			continue;
		double top = 0;
		long o_top = 0;
		for (size_t o = 0; o < n_options(in); o++) {
			double sh = opt_screen_share(B->M->scr, i, o);
			if (sh > top)
				top = sh, o_top = (long)o;
		}
		if (1 - top > bf)
			bf = 1 - top, bi = i, *best_o = o_top;
	}
	return bi;
}

/* An integral LP optimum: can its assignment be packed? 1 yes (incumbent updated), 0 proven not
 * (a no-good row now excludes it), -1 not known (the exact check ran out of its time). */
static int bb_leaf(struct bb *B)
{
	const struct opt_inst *in = B->M->in;
	opt_screen_round(B->M->scr, B->s.where);
	memcpy(B->cd.where, B->s.where, in->n_tasks * sizeof(int));
	/* only packings that keep this assignment close the subtree (no repair moves here) */
	if (round_pack(B->M, &B->s, B->w, fmin(B->dl, opt_now_s() + 1.0), false)) {
		if (!B->inc->ok || B->s.power_w < B->inc->power_w)
			opt_sol_copy(B->inc, &B->s, in);
		return 1;
	}
	if (B->n_nogood == B->cap_nogood)
		return -1;
	memcpy(B->cd.isl_opp, B->s.isl_opp, in->n_isl * sizeof(size_t));
	memcpy(B->cd.acc_opp, B->s.acc_opp, in->n_acc * sizeof(size_t));
	opt_sol_copy(&B->tmp, &B->s, in);
	memcpy(B->tmp.where, B->cd.where, in->n_tasks * sizeof(int));
	int r = opt_corepack(in, &B->tmp, fmin(B->dl, opt_now_s() + BB_EXACT_S));
	if (r < 0 && B->C)
		r = pack_exact(B->C, &B->cd, &B->tmp, fmin(B->dl, opt_now_s() + BB_EXACT_S));
	if (r == 1 && (!B->inc->ok || B->tmp.power_w < B->inc->power_w))
		opt_sol_copy(B->inc, &B->tmp, in);
	if (r == 0)
		B->nogood[B->n_nogood++] = opt_screen_nogood(B->M->scr, B->cd.where);
	return r;
}

static void bb_node(struct bb *B)
{
	const struct opt_inst *in = B->M->in;
	long o_top = 0;
	size_t bi = in->n_tasks;
	for (;;) { /* again after a no-good row: the same node has a new LP */
		if (B->unfinished || opt_now_s() >= B->dl) {
			B->unfinished = true;
			return;
		}
		double cut = cut_w(in, B->inc);
		bool inf;
		double lb = opt_screen_resolve(B->M->scr, cut, B->dl, &inf);
		if (inf || lb >= cut)
			return;
		if (!isfinite(lb)) {
			B->unfinished = true;
			return;
		}
		bi = bb_branch_task(B, &o_top);
		if (bi < in->n_tasks)
			break;
		int r = bb_leaf(B);
		if (r == 1)
			return;
		if (r < 0) { /* this leaf stays open: the vector cannot be closed, the search goes on */
			B->unknown = true;
			return;
		}
	}
	/* children: the LP's favourite option first, then the others */
	for (size_t t = 0; t < n_options(in) && !B->unfinished; t++) {
		long o = t == 0 ? o_top : (long)(t - 1 < (size_t)o_top ? t - 1 : t);
		B->fixed[bi] = o;
		opt_screen_fix(B->M->scr, &B->s, bi, o);
		bb_node(B);
	}
	B->fixed[bi] = -1;
	opt_screen_fix(B->M->scr, &B->s, bi, -1);
}

/* Returns INFINITY when the search closed vector s (any better plan is now the incumbent), else
 * -INFINITY (unfinished: the caller keeps the vector's other bounds). */
static double vector_bb(struct master *M, struct master *C, const struct opt_sol *s, struct opt_sol *inc, double dl)
{
	const struct opt_inst *in = M->in;
	struct bb B = {.M = M, .C = C, .inc = inc, .dl = dl};
	double res = -INFINITY;
	if (!M->scr)
		return res;
	B.w = opt_ws_new(in);
	B.fixed = malloc(in->n_tasks * sizeof(long));
	B.cap_nogood = 256;
	B.nogood = malloc(B.cap_nogood * sizeof(int));
	if (!B.w || !B.fixed || !B.nogood || opt_sol_init(&B.s, in) || opt_sol_init(&B.tmp, in) || cand_alloc(&B.cd, in))
		goto out;
	memcpy(B.s.isl_opp, s->isl_opp, in->n_isl * sizeof(size_t));
	memcpy(B.s.acc_opp, s->acc_opp, in->n_acc * sizeof(size_t));
	for (size_t i = 0; i < in->n_tasks; i++)
		B.fixed[i] = -1;
	bool inf;
	double lb = opt_screen_vector(M->scr, &B.s, INFINITY, dl, &inf);
	if (inf)
		res = INFINITY;
	else if (isfinite(lb)) {
		bb_node(&B);
		if (!B.unfinished && !B.unknown)
			res = INFINITY;
	}
out:
	for (size_t r = 0; r < B.n_nogood; r++)
		opt_screen_release(M->scr, B.nogood[r]);
	opt_ws_free(B.w);
	free(B.fixed);
	free(B.nogood);
	free(B.cd.where), free(B.cd.isl_opp), free(B.cd.acc_opp);
	opt_sol_free(&B.s);
	opt_sol_free(&B.tmp);
	return res;
}

/*
 * One OPP vector: solve the island-level master; if its optimum beats the incumbent but does not
 * pack (heuristic packing and repair), check packing exactly with the core-level master; a proven
 * impossible assignment gets a no-good cut and the vector is solved again. Returns the vector's open
 * bound (INFINITY when closed: nothing better than the incumbent at this vector).
 */
static double solve_vector(struct master *M, struct master *C, struct opt_sol *inc, double dl, double deadline_s,
			   struct cand *cd, struct opt_sol *tmp)
{
	const struct opt_inst *in = M->in;
	for (int round = 0; round < 50; round++) {
		double cut = cut_w(in, inc);
		if (isfinite(cut))
			glp_set_row_bnds(M->lp, M->cutoff_row, GLP_UP, 0, cut - in->base_w);
		bool fin = false;
		mip(M, dl, &fin);
		double mb = M->bound;
		bool have = best_cand(M, cd);
		if (M->n_cands)
			repair_candidates(M, inc, deadline_s);
		if (!fin)
			return mb;
		if (!isfinite(mb) || mb >= cut_w(in, inc))
			return INFINITY; /* closed */
		if (!have || !C || opt_now_s() >= dl)
			return mb;
		int r = pack_exact(C, cd, tmp, dl);
		if (r == 1) {
			if (!inc->ok || tmp->power_w < inc->power_w)
				opt_sol_copy(inc, tmp, in);
		} else if (r == 0) {
			add_nogood(M, cd);
		} else {
			return mb;
		}
	}
	return M->bound;
}

/*
 * Exact search over OPP vectors. For a fixed vector the master has no OPP binaries and its capacity
 * rows are exact and tight, so GLPK closes it quickly. Vectors are visited by increasing valid bound
 * (vector_bound); the search stops when the next bound reaches the incumbent. Each vector's MILP runs
 * with the cut-off row at the incumbent, so "infeasible" means "nothing better at this vector". A
 * vector that runs out of time stays open with its MILP bound; the final bound is the smallest open
 * bound (or the next unvisited vector's bound).
 *
 * Small sets (<= OPT_PER_CORE_TASKS tasks): each vector is solved with the core-level master itself
 * (binaries per task and core, core symmetry breaking) instead of the island master. With the vector
 * fixed its per-core capacity rows are exact, so its optimum packs by construction (only the
 * deadlines are recomputed from the candidate's cores) and no island assignment that does not fit on
 * the cores can keep a vector open. GLPK closes some vectors much faster this way and others much
 * slower than with the island master (aggregated capacity rows, fewer binaries), hence the
 * portfolio in opt_exact. Its bound is valid for the same reason as the island master's (same
 * objective, deadlines relaxed only by tangents).
 */
static int solve_glpk(struct master *M, struct master *C, bool per_core, double deadline_s, struct opt_sol *inc,
		      bool *finished)
{
	const struct opt_inst *in = M->in;
	per_core = per_core && C;
	struct master *V = per_core ? C : M;   /* the master solved per vector */
	struct master *P = per_core ? NULL : C; /* exact packing checks of V's island assignments */
	size_t nv = opt_vector_count(in);
	if (nv > OPT_VECTOR_LIMIT) { /* one master with free OPP binaries */
		if (inc->ok)
			glp_set_row_bnds(M->lp, M->cutoff_row, GLP_UP, 0, cut_w(in, inc) - in->base_w);
		mip(M, deadline_s, finished);
		if (M->n_cands)
			repair_candidates(M, inc, deadline_s);
		return 0;
	}
	struct vec *vs = calloc(nv, sizeof(*vs));
	struct opt_sol s, tmp;
	struct cand cd = {0};
	int rc = -1;
	if (!vs || opt_sol_init(&s, in) || opt_sol_init(&tmp, in) || cand_alloc(&cd, in))
		goto out;
	/* each vector's bound: the stronger of "cheapest option per task" and the capacity-aware
	 * Lagrangian bound (bound.c); both valid, so pruning at the incumbent stays exact */
	struct opt_bound *lag = opt_bound_new(in);
	for (size_t id = 0; id < nv; id++) {
		opt_vector_decode(in, &s, id);
		/* only canonical vectors (symmetry.c): the others have an equivalent among them */
		double lb = opt_vector_canonical(in, &s) ? vector_bound(in, &s) : INFINITY;
		if (lag && isfinite(lb) && (!inc->ok || lb < inc->power_w) && opt_now_s() < deadline_s)
			lb = fmax(lb, opt_bound_vector(lag, &s, inc->ok ? inc->power_w : INFINITY));
		vs[id] = (struct vec){id, lb};
	}
	opt_bound_free(lag);
	qsort(vs, nv, sizeof(*vs), cmp_vec);
	/* The island search screens and rounds first (screen.c); above the per-core phase's sizes the
	 * per-vector MILPs hardly move their LP bounds, so most of the time goes to roundings there.
	 * The per-core phase keeps the plain bound order: on the benchmark's 10-task XU4 set, skipping
	 * the vectors that screening closes made GLPK's tree search at the optimum's vector stall (60 s
	 * instead of 1.2 s): the root cut loops at those neighbours leave tangents in the shared model. */
	if (!per_core) {
		screen_vectors(M, vs, nv, inc, opt_now_s() + 0.6 * (deadline_s - opt_now_s()));
		double share = in->n_tasks > OPT_PER_CORE_TASKS ? 0.7 : 0.2;
		round_vectors(M, vs, nv, inc, opt_now_s() + share * (deadline_s - opt_now_s()));
	}
	double *ob = calloc(nv, sizeof(double)); /* open bound per visited vector (INFINITY: closed) */
	if (!ob)
		goto out;
	size_t j = 0;
	for (; j < nv && isfinite(vs[j].lb); j++) {
		double cut = cut_w(in, inc);
		if (vs[j].lb >= cut || opt_now_s() >= deadline_s)
			break;
		opt_vector_decode(in, &s, vs[j].id);
		fix_vector(V, &s);
		/* later vectors must leave time: at most half of what is left, at least 0.2 s */
		double left = deadline_s - opt_now_s();
		double dl = opt_now_s() + fmax(fmin(left, 0.2), 0.5 * left);
		/* small sets: the branch and bound on the screening LP first, half of the vector's share */
		if (!per_core && in->n_tasks <= OPT_PER_CORE_TASKS &&
		    vector_bb(M, P, &s, inc, opt_now_s() + 0.5 * (dl - opt_now_s())) == INFINITY) {
			ob[j] = INFINITY;
			continue;
		}
		ob[j] = solve_vector(V, P, inc, dl, deadline_s, &cd, &tmp);
	}
	/* Vectors left open (time) get the rest of the budget, best bound first: the cuts and no-goods
	 * gathered meanwhile often close them quickly. */
	for (int pass = 0; pass < 3 && opt_now_s() < deadline_s; pass++)
		for (size_t t = 0; t < j && opt_now_s() < deadline_s; t++) {
			double cut = cut_w(in, inc);
			if (ob[t] == INFINITY || vs[t].lb >= cut)
				continue;
			opt_vector_decode(in, &s, vs[t].id);
			fix_vector(V, &s);
			double again = solve_vector(V, P, inc, deadline_s, deadline_s, &cd, &tmp);
			ob[t] = fmax(ob[t], again); /* both are valid bounds of this vector: keep the larger */
		}
	double open_bound = INFINITY;
	for (size_t t = 0; t < j; t++) {
		double cut = cut_w(in, inc);
		if (ob[t] < INFINITY && vs[t].lb < cut) /* -INFINITY (no LP bound in time): the vector's own */
			open_bound = fmin(open_bound, fmax(vs[t].lb, ob[t]));
	}
	free(ob);
	double rest = j < nv ? vs[j].lb : INFINITY;
	M->bound = fmin(open_bound, rest);
	*finished = !isfinite(open_bound) && (j >= nv || !isfinite(rest) || rest >= cut_w(in, inc));
	rc = 0;
out:
	free(vs);
	free(cd.where), free(cd.isl_opp), free(cd.acc_opp);
	opt_sol_free(&s);
	opt_sol_free(&tmp);
	return rc;
}

#ifdef PD_HAVE_CBC
/* Outer approximation with CBC: solve, add violated tangents, repeat. */
static int solve_cbc(struct master *M, double deadline_s, bool *finished)
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
static void repair_candidates(struct master *M, struct opt_sol *inc, double deadline_s)
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

int opt_exact(const struct opt_inst *in, const struct pd_opt_params *p, double deadline_s, struct opt_sol *inc,
	      double *lb, bool *finished)
{
	struct master M = {0};
	*finished = false;
	*lb = -INFINITY;
	double cutoff = cut_w(in, inc);
	/* The island-level master, and for the exact packing checks (up to 60 tasks) the core-level one. */
	struct master C = {0};
	bool with_cores = in->n_tasks <= 60 && p->backend == PD_BACKEND_GLPK;
	if (master_build(&M, in, cutoff, false) || (with_cores && master_build(&C, in, INFINITY, true))) {
		master_free(&M);
		master_free(&C);
		return -1;
	}
	glp_term_out(GLP_OFF);
	int rc;
#ifdef PD_HAVE_CBC
	if (p->backend == PD_BACKEND_CBC) {
		rc = solve_cbc(&M, deadline_s, finished);
	} else
#endif
	{
		/* Small sets: a portfolio on one valid bound. The island search (screening, branch and
		 * bound with exact packing) proves most sets; the per-core search then gets what is left
		 * and proves some that the island search does not. Each phase's bound is valid (min with
		 * the incumbent), so the larger one is kept. */
		bool small = with_cores && in->n_tasks <= OPT_PER_CORE_TASKS;
		double mid = small ? opt_now_s() + (1 - OPT_PER_CORE_SHARE) * (deadline_s - opt_now_s()) : deadline_s;
		rc = solve_glpk(&M, with_cores ? &C : NULL, false, mid, inc, finished);
		if (small && rc == 0 && !*finished && opt_now_s() < deadline_s) {
			double lb1 = fmin(M.bound, cut_w(in, inc));
			rc = solve_glpk(&M, &C, true, deadline_s, inc, finished);
			if (rc == 0 && lb1 > M.bound)
				M.bound = lb1;
		}
	}
	glp_term_out(GLP_ON);
	if (rc < 0) {
		master_free(&M);
		master_free(&C);
		return -1;
	}
	/* Bound: the master's; when the cut-off made it infeasible, nothing beats the incumbent. */
	if (rc == 0)
		repair_candidates(&M, inc, deadline_s);
	cutoff = cut_w(in, inc);
	*lb = fmin(M.bound, cutoff);
	master_free(&M);
	master_free(&C);
	return 0;
}
