/* SPDX-License-Identifier: MIT */
/*
 * Building the master of formulation B (docs/MODEL.md, "Exact"): OPP binaries y / g, per task and bin
 * (island, or core in the core-level master) a, d, v with the perspective tangents, the disaggregated
 * busy-power columns w = a y, capacity rows per OPP, FIFO servers linearised exactly, finish
 * potentials, symmetry breaking (FPGA slots, cores of an island, identical islands' OPPs) and the
 * incumbent's cut-off row. Every row array is sized to what it holds (no truncation); an allocation
 * failure fails the whole build (a master missing rows would be a relaxation of another problem).
 */
#include "optimizer/master_impl.h"

#include <stdlib.h>
#include <string.h>

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

/* Zeroed scratch from GLPK's allocator: running out of memory there is a GLPK error, which ends the
 * solver worker with GLPK's own message (worker.c) instead of silently dropping a row. */
static void *galloc(size_t n, size_t size)
{
	void *p = glp_alloc((int)(n ? n : 1), (int)size);
	memset(p, 0, (n ? n : 1) * size);
	return p;
}

/* Row from n (col, coef) pairs. type GLP_LO/UP/FX with rhs. */
static void add_row(glp_prob *lp, int type, double rhs, int n, const int *ind, const double *val)
{
	/* GLPK arrays are 1-based */
	int sind[16];
	double sval[16];
	int *i1 = n < 16 ? sind : galloc((size_t)n + 1, sizeof(int));
	double *v1 = n < 16 ? sval : galloc((size_t)n + 1, sizeof(double));
	memcpy(i1 + 1, ind, (size_t)n * sizeof(int));
	memcpy(v1 + 1, val, (size_t)n * sizeof(double));
	int r = glp_add_rows(lp, 1);
	glp_set_mat_row(lp, r, n, i1, v1);
	glp_set_row_bnds(lp, r, type, rhs, rhs);
	if (i1 != sind)
		glp_free(i1);
	if (v1 != sval)
		glp_free(v1);
}

void opt_mst_tangent(glp_prob *lp, int a, int d, int v, double t)
{
	/* v - (2/t) a + (1/t^2) d >= 0 */
	int ind[3] = {v, a, d};
	double val[3] = {1.0, -2.0 / t, 1.0 / (t * t)};
	add_row(lp, GLP_LO, 0.0, 3, ind, val);
}

static bool isl_fits(const struct opt_inst *in, size_t i, size_t k, size_t m)
{
	return opt_core_fits(in, i, (double)runtime_at(in, i, k, m), 0);
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
			int c = add_col(lp, GLP_BV, 0, 1, in->isl_const_w[k][m]);
			if (!m)
				M->y[k] = c;
		}
		int *ix = nm <= 32 ? ind : galloc(2 * nm, sizeof(int));
		double *vx = nm <= 32 ? val : galloc(2 * nm, sizeof(double));
		for (size_t m = 0; m < nm; m++)
			ix[m] = M->y[k] + (int)m, vx[m] = 1.0;
		add_row(lp, GLP_FX, 1.0, (int)nm, ix, vx);
		long j = in->isl_prev_twin[k];
		for (size_t m = 0; j >= 0 && m < nm; m++) /* twins: OPP(j) <= OPP(k), symmetry.c */
			ix[m] = M->y[j] + (int)m, vx[m] = (double)m, ix[nm + m] = M->y[k] + (int)m, vx[nm + m] = -(double)m;
		if (j >= 0)
			add_row(lp, GLP_UP, 0.0, (int)(2 * nm), ix, vx);
		if (ix != ind)
			glp_free(ix);
		if (vx != val)
			glp_free(vx);
	}
	for (size_t a = 0; a < in->n_acc; a++) {
		size_t nm = in->acc_nopp[a];
		int *ind = galloc(nm, sizeof(int));
		double *val = galloc(nm, sizeof(double));
		for (size_t m = 0; m < nm; m++) {
			int c = add_col(lp, GLP_BV, 0, 1, in->acc_idle_w[a][m]);
			if (!m)
				M->g[a] = c;
			ind[m] = c, val[m] = 1.0;
		}
		add_row(lp, GLP_FX, 1.0, (int)nm, ind, val);
		glp_free(ind), glp_free(val);
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
	double ctop = ms(runtime_at(in, i, k, nm - 1));
	double lo = ctop / in->cap;
	double pts[4] = {lo, sqrt(lo * hi), hi, ms(runtime_at(in, i, k, 0)) / in->cap};
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
				opt_mst_tangent(lp, M->a[ib], M->d[ib], M->v[ib], pts[p]);
	}
	int n1 = 0;
	for (size_t b = b0; b < b0 + nbk; b++)
		ind[n1] = M->a[i * M->nb + b], val[n1++] = -1.0;
	for (size_t m = 0; m < nm; m++) {
		double dw = (in->busy_w[k][m] - in->idle_w[k][m]) * ms(demand_at(in, i, k, m)) / ms(in->T_ns[i]);
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
		ind[n2] = M->wm[ik] + (int)m, val[n2++] = -ms(runtime_at(in, i, k, m)) / in->cap;
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
				double C = ms(runtime_at(in, i, k, m));
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
				coef = fmin(coef, (double)isl->opps[m].freq_khz / ftop * ms(runtime_at(in, i, k, m)));
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
		/* load row: 1 + per task nm (GPU) or 2 (FPGA) entries; utilisation row the same less one */
		size_t rowcap = 2 + in->n_tasks * (nm + 2);
		int *uind = galloc(rowcap, sizeof(int)), *lind = galloc(rowcap, sizeof(int));
		double *uval = galloc(rowcap, sizeof(double)), *lval = galloc(rowcap, sizeof(double));
		int *qind = galloc(nm + 1, sizeof(int));
		double *qval = galloc(nm + 1, sizeof(double));
		lind[nl] = load, lval[nl++] = -1.0;
		for (size_t i = 0; i < in->n_tasks; i++) {
			size_t is = i * in->n_srv + s;
			if (in->impl[is] < 0)
				continue;
			double T = ms(in->T_ns[i]);
			M->z[is] = add_col(lp, GLP_BV, 0, 1, 0);
			if (!fpga) {
				int nq = 0;
				qind[nq] = M->z[is], qval[nq++] = -1.0;
				for (size_t m = 0; m < nm; m++) {
					double L = ms(opt_latency(in, i, s, m));
					double dw = (in->acc_busy_w[a][m] - in->acc_idle_w[a][m]) * L / T;
					int c = add_col(lp, GLP_CV, 0, L <= ms(in->T_ns[i]) ? 1 : 0, dw);
					if (!m)
						M->q[is] = c;
					qind[nq] = c, qval[nq++] = 1.0;
					int ij[2] = {c, M->g[a] + (int)m};
					double vj[2] = {1.0, -1.0};
					add_row(lp, GLP_UP, 0.0, 2, ij, vj);
					lind[nl] = c, lval[nl++] = L;
					uind[nu] = c, uval[nu++] = L / T;
				}
				add_row(lp, GLP_FX, 0.0, nq, qind, qval);
			} else {
				double L = ms(opt_latency(in, i, s, 0));
				glp_set_obj_coef(lp, M->z[is], in->fpga_pw[is] * L / T);
				lind[nl] = M->z[is], lval[nl++] = L;
				uind[nu] = M->z[is], uval[nu++] = L / T;
				/* e >= z + sh - 1 carries the reconfiguration of each request on a shared slot */
				int e = add_col(lp, GLP_CV, 0, 1, 0);
				int ij[3] = {e, M->z[is], sh};
				double vj[3] = {1.0, -1.0, -1.0};
				add_row(lp, GLP_LO, -1.0, 3, ij, vj);
				lind[nl] = e, lval[nl++] = rho;
				uind[nu] = e, uval[nu++] = rho / T;
			}
		}
		add_row(lp, GLP_FX, 0.0, nl, lind, lval); /* load = sum ... */
		add_row(lp, GLP_UP, 1.0, nu, uind, uval); /* utilisation <= 1 */
		glp_free(uind), glp_free(uval), glp_free(lind), glp_free(lval), glp_free(qind), glp_free(qval);
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
			int nb = 0, *bi = galloc(in->n_tasks + 1, sizeof(int)); /* a binary per bitstream, and sh */
			double *bv = galloc(in->n_tasks + 1, sizeof(double));
			for (size_t i = 0; i < in->n_tasks; i++) {
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
			glp_free(bi), glp_free(bv);
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

int opt_mst_build(struct master *M, const struct opt_inst *in, double cutoff_w, bool core_level)
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

void opt_mst_free(struct master *M)
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
	free(M->isl_lb), free(M->isl_bb);
}

/* No-good cut: this island/server assignment at these OPPs does not pack (proven by pack_exact). */
void opt_mst_nogood(struct master *M, const struct cand *cd)
{
	const struct opt_inst *in = M->in;
	size_t cap = in->n_tasks + in->n_isl + in->n_acc + 1;
	int *ind = calloc(cap, sizeof(int));
	double *val = calloc(cap, sizeof(double));
	int n = 0;
	for (size_t i = 0; ind && val && i < in->n_tasks; i++) {
		int w = cd->where[i];
		int col = w >= 0 ? M->a[i * M->nb + in->core_isl[w]] : M->z[i * in->n_srv + opt_where_server_of(w)];
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

