/* SPDX-License-Identifier: MIT */
/*
 * The OPP hull: one LP whose optimum bounds every plan at every OPP vector at once (docs/MODEL.md,
 * "Exact", the OPP hull bound).
 *
 * Why: on Xavier (four identical Carmel islands x 29 OPPs x 14 GPU OPPs: 503440 canonical vectors)
 * the vector search bounds one vector after another; at 120 tasks tens of thousands of vectors keep
 * bounds below what a 3 % gap needs after the whole time limit. This LP has the screening LP's rows
 * (screen.c) with the OPP choice relaxed instead of fixed:
 *     y_cm >= 0, sum_m y_cm = |c|            islands of twin class c at OPP m (integer in a plan)
 *     y_am >= 0, sum_m y_am = 1              accelerator a at OPP m
 *     sum_cm a_icm + sum_vm z_ivm = 1        every task placed (class c at OPP m, server v at OPP m)
 *     z_ivm <= y_am                          only at the device's OPP
 *     (C_icm / cap) a <= d_icm <= hi_i a,  v_icm >= a^2 / d  (both as cuts: tangents and range
 *                                            rows come in when the LP's point violates them)
 *     sum_i C_icm v_icm <= n_c cap y_cm       the cores of the class's islands at OPP m
 *     sum_{i: C_icm / hi_i > cap / (p+1)} a_icm <= p n_c y_cm   (p = 1, 2) cardinality
 *     sum_i (L_ivm / T_i) z_ivm <= y_am        FIFO utilisation at the device's OPP
 *     w_ijv >= Z_iv + Z_jv - 1, Z_iv = sum_m z_ivm   both i and j on server v (fifo_pairs)
 *     F_i >= F_p + sum_cm d_icm + sum_vm L_ivm z_ivm + sum_jv W_ijv w_ijv,  F_i <= D
 *                                            (W_ijv: j's fastest latency, + rho: pair_wait_ms)
 *     min base + sum_cm y_cm const_cm + sum_am y_am idle_am + sum busy a + sum busy z
 * A plan is a point: y_cm the number of islands of c at OPP m, a_icm = 1 for the class and OPP of
 * task i's island, d its deadline, v = 1/d. The class's islands at one OPP pool their cores (a
 * relaxation: twins are interchangeable, docs/MODEL.md "Symmetry"), a FIFO request waits for the
 * others on its server at their fastest latencies, and the reconfiguration time counts once per pair
 * of bitstreams (as in screen.c): each only relaxes. So
 * every LP optimum of the Kelley loop (tangents under-estimate the perspective) is a valid lower
 * bound on every plan, whatever its vector.
 *
 * Measured on Xavier, 120 tasks (bench shape, seed 778; docs/OPTIMIZER-LOG.md): 2.2 s for the first LP and
 * ~0.25 s per Kelley round. The rows a_icm <= y_cm (valid, and stronger round for round) made the
 * first LP 9.6 s and every round 3-6 s, so within 30 s the bound was 5.75 W with them and 5.79 W
 * without; they are left out. Five static tangents per option (geometric from the single-core
 * deadline to the longest one) instead of three: the first LP's bound 5.714 W instead of 5.600 W, in
 * 3.6 s instead of 2.2 s: Kelley adds one tangent per option and round, about +0.006 W a round.
 * Since 2026-12-06 (later): the first LP by the primal simplex, the range rows as cuts, and the
 * slack cuts deleted after the first LP and every 5 rounds (compact): first LP 2.7-3.3 s instead of
 * 3.9-9.5 s, rounds 0.03-0.13 s instead of 0.17-0.25 s, 50-70 rounds in 10 s instead of 12-25.
 * Since the eighth session the LP is CLP's where the build has CBC (hull_lp.c), with 13 static
 * tangents per option instead of 5: CLP's barrier solves that first LP in 1.9-2.2 s on five sets, the
 * hull alone (GLPK's primal simplex took 2.5-8.3 s for it with 5, and none ended within 10 s with 7
 * on one set), and from it the loop stalls after 18-30 rounds, 3.0-4.5 s in all, at a bound above
 * what GLPK's loop reached in 14 s (seed 12000111: 6.1227 W against 6.1188 W; docs/MODEL.md, "The
 * hull on CLP").
 */
#include "optimizer/opt_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Kelley rounds at most; relative violation below which no tangent is added; a round that gains less
 * than HULL_STALL (relative) ends the loop. */
#define HULL_ROUNDS 400
#define HULL_TOL 1e-3
#define HULL_STALL 1e-5
/* Static tangents per (task, class, OPP) option, on GLPK and on CLP: more tangents make a slower
 * first LP and fewer rounds (docs/OPTIMIZER-LOG.md, "The hull on CLP"). */
#define HULL_POINTS_GLPK 5
#define HULL_POINTS_CLP 13
/* The slack cuts are deleted after the first LP and every this many rounds after it (compact). */
#define HULL_COMPACT 5
/* Entries of the FIFO pair map (servers x tasks x tasks) up to which the pairs are modelled. */
#define HULL_FIFO_MAP_MAX ((size_t)4 << 20)

struct hull {
	const struct opt_inst *in;
	struct opt_hlp *lp;
	size_t n_cls, *cls_root, *cls_n; /* twin classes: first island, member count */
	size_t *opp0;                   /* per class: offset of its OPP block in the (class, OPP) list */
	size_t n_cm;                    /* sum over classes of their OPPs */
	int *a, *d, *v;                 /* [i * n_cm + cm] (0: option cannot hold the task) */
	int *y;                         /* [cm]: islands of the class at the OPP */
	int *ya;                        /* [aopp0[a] + m]: accelerator a at OPP m */
	size_t *aopp0;
	double *lo;                     /* [i * n_cm + cm]: the shortest deadline per unit of a, C / cap (ms) */
	int *ind;
	double *val;
	int points;         /* static tangents per option (HULL_POINTS_*) */
	unsigned char *cut; /* [r]: row r is a cut, which compact may delete (1-based; cap_cut entries) */
	size_t cap_cut;
};

static double ms(double ns) { return ns * 1e-6; }

/* A column in [0, ub] and its cost. */
static int col(struct opt_hlp *lp, double ub, double c) { return opt_hlp_col(lp, 0, ub, c); }

/* Rows: sum <= hi, sum >= lo, sum == x. */
static int row_le(struct opt_hlp *lp, double hi, int n, const int *ind, const double *val)
{
	return opt_hlp_row(lp, -INFINITY, hi, n, ind, val);
}

static int row_ge(struct opt_hlp *lp, double lo, int n, const int *ind, const double *val)
{
	return opt_hlp_row(lp, lo, INFINITY, n, ind, val);
}

static int row_eq(struct opt_hlp *lp, double x, int n, const int *ind, const double *val)
{
	return opt_hlp_row(lp, x, x, n, ind, val);
}

/* Marks row row_no as a cut: compact may delete it (separate adds it back when violated). */
static void mark(struct hull *H, int row_no)
{
	size_t r = (size_t)row_no;
	if (r >= H->cap_cut) {
		size_t cap = 2 * r + 1024;
		unsigned char *p = realloc(H->cut, cap);
		if (!p)
			return; /* an unmarked cut only stays in the LP */
		memset(p + H->cap_cut, 0, cap - H->cap_cut);
		H->cut = p, H->cap_cut = cap;
	}
	H->cut[r] = 1;
}

static void tangent(struct hull *H, size_t q, double t)
{
	int ind[4] = {0, H->v[q], H->a[q], H->d[q]};
	double val[4] = {0, 1.0, -2.0 / t, 1.0 / (t * t)};
	mark(H, row_ge(H->lp, 0, 3, ind, val));
}

/*
 * Deletes the cuts (tangents, range rows) whose slack is basic at the last optimum (not tight: a
 * zero dual), which stays optimal, so the bound stays what it was and separate adds back any cut a
 * later point needs. Deleting rows only relaxes the LP, so every bound stays valid whatever is
 * deleted. Why: 5 static tangents per (task, class, OPP) option are 17 400 rows at 120 tasks on
 * Xavier, 11 500 of them slack at the first LP's optimum, and every round's dual simplex pays for
 * each row: rounds of 0.08 s instead of 0.17-0.19 s (with the range rows still static: 32-44 rounds
 * in 10 s instead of 12-23; docs/MODEL.md).
 */
static void compact(struct hull *H)
{
	int nr = opt_hlp_rows(H->lp), n = 0;
	int *del = malloc(((size_t)nr + 1) * sizeof(int));
	if (!del)
		return;
	size_t w = 1;
	for (int r = 1; r <= nr; r++) {
		bool c = (size_t)r < H->cap_cut && H->cut[r];
		if (c && opt_hlp_row_basic(H->lp, r))
			del[++n] = r;
		else if ((size_t)r < H->cap_cut)
			H->cut[w++] = c; /* the rows kept, renumbered in order */
	}
	memset(H->cut + w, 0, H->cap_cut - w);
	opt_hlp_del_rows(H->lp, n, del); /* basic rows: the basis stays valid */
	free(del);
}

/* Twin classes: an island without a previous twin starts one; its twins join it. */
static int classes(struct hull *H)
{
	const struct opt_inst *in = H->in;
	H->cls_root = calloc(in->n_isl + 1, sizeof(size_t));
	H->cls_n = calloc(in->n_isl + 1, sizeof(size_t));
	H->opp0 = calloc(in->n_isl + 1, sizeof(size_t));
	if (!H->cls_root || !H->cls_n || !H->opp0)
		return -1;
	for (size_t k = 0; k < in->n_isl; k++) {
		size_t r = opt_twin_root(in, k), c = 0;
		while (c < H->n_cls && H->cls_root[c] != r)
			c++;
		if (c == H->n_cls)
			H->cls_root[H->n_cls++] = r;
		H->cls_n[c]++;
	}
	for (size_t c = 0; c < H->n_cls; c++) {
		H->opp0[c] = H->n_cm;
		H->n_cm += in->isl_nopp[H->cls_root[c]];
	}
	return 0;
}

/* The class's island power with no task at OPP m: the smallest over its members (equal for twins). */
static double class_const(const struct hull *H, size_t c, size_t m)
{
	const struct opt_inst *in = H->in;
	double w = INFINITY;
	for (size_t k = 0; k < in->n_isl; k++) {
		if (opt_twin_root(in, k) == H->cls_root[c])
			w = fmin(w, in->isl_const_w[k][m]);
	}
	return w;
}

/* Whether task i has a column on server v (at some OPP of the device). */
static bool on_server(int *const *z, size_t max_am, size_t i, size_t v)
{
	for (size_t m = 0; m < max_am; m++)
		if (z[i][v * max_am + m])
			return true;
	return false;
}

/* Z_iv: the sum of task i's columns on server v over the device's OPPs into ind/val from k on, each
 * with coefficient coef; returns the new k. */
static int server_terms(struct hull *H, int *const *z, size_t max_am, size_t i, size_t v, int k, double coef)
{
	for (size_t m = 0; m < max_am; m++)
		if (z[i][v * max_am + m])
			H->ind[++k] = z[i][v * max_am + m], H->val[k] = coef;
	return k;
}

/*
 * What request j adds to the response of request i when both are on server v, at least: j's latency
 * at the device's fastest OPP that j has a column at, plus on an FPGA slot the reconfiguration time
 * where the two use different bitstreams (screen.c, wait_ms: the same argument).
 */
static double pair_wait_ms(const struct hull *H, int *const *z, size_t max_am, size_t i, size_t j, size_t v)
{
	const struct opt_inst *in = H->in;
	double L = INFINITY;
	for (size_t m = 0; m < max_am; m++)
		if (z[j][v * max_am + m])
			L = fmin(L, ms((double)opt_latency(in, j, v, m)));
	return isfinite(L) ? L + ms((double)opt_pair_reconfig_ns(in, i, j, v)) : 0;
}

/*
 * FIFO pairs, as in the screening LP (screen.c): a request on server v waits for every request
 * there, so i's response is at least L_i + sum_j L_j Z_iv Z_jv, and McCormick's lower envelope
 * w_ijv >= Z_iv + Z_jv - 1 (exact at 0/1) stands for the product. Z_iv sums i's columns over the
 * device's OPPs, and j's term takes its fastest latency (pair_wait_ms), so every plan keeps a point
 * whatever OPP the device runs at. Without the pairs each request waited for itself alone (R >= L):
 * on Xavier the LP could put every GPU-capable task on the GPU, each path seeing one latency.
 * w: the pair map, or NULL (too large: the LP keeps R >= L). Returns -1 without memory.
 */
static int fifo_pairs(struct hull *H, int *const *z, size_t max_am, int *w)
{
	const struct opt_inst *in = H->in;
	size_t n = in->n_tasks;
	for (size_t v = 0; w && v < in->n_srv; v++)
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n && on_server(z, max_am, i, v); j++) {
				if (!on_server(z, max_am, j, v))
					continue;
				int c = col(H->lp, 1, 0);
				if (!c)
					return -1;
				w[(v * n + i) * n + j] = w[(v * n + j) * n + i] = c;
				int k = 0;
				H->ind[++k] = c, H->val[k] = 1.0;
				k = server_terms(H, z, max_am, i, v, k, -1.0);
				k = server_terms(H, z, max_am, j, v, k, -1.0);
				row_ge(H->lp, -1.0, k, H->ind, H->val);
			}
	return 0;
}

static int build(struct hull *H, size_t max_am)
{
	int rc = -1;
	const struct opt_inst *in = H->in;
	struct opt_hlp *lp = H->lp;
	size_t n = in->n_tasks;
	opt_hlp_offset(lp, in->base_w);
	int *y = H->y = calloc(H->n_cm + 1, sizeof(int));
	size_t nam = 0;
	for (size_t a = 0; a < in->n_acc; a++)
		nam += in->acc_nopp[a];
	int *ya = H->ya = calloc(nam + 1, sizeof(int));
	size_t *aopp0 = H->aopp0 = calloc(in->n_acc + 1, sizeof(size_t));
	int *F = calloc(n + 1, sizeof(int));
	int **z = calloc(n + 1, sizeof(int *)); /* [i][v * max_am + m] */
	size_t nw = in->n_srv * n * n;
	int *w = nw && nw <= HULL_FIFO_MAP_MAX ? calloc(nw, sizeof(int)) : NULL; /* [(v * n + i) * n + j] */
	if (!y || !ya || !aopp0 || !F || !z || (nw && nw <= HULL_FIFO_MAP_MAX && !w))
		goto out;
	/* OPP columns and their "number of islands" rows */
	for (size_t c = 0; c < H->n_cls; c++) {
		size_t r = H->cls_root[c], nm = in->isl_nopp[r];
		int k = 0;
		for (size_t m = 0; m < nm; m++) {
			y[H->opp0[c] + m] = col(lp, (double)H->cls_n[c], class_const(H, c, m));
			H->ind[++k] = y[H->opp0[c] + m], H->val[k] = 1.0;
		}
		row_eq(lp, (double)H->cls_n[c], k, H->ind, H->val);
	}
	for (size_t a = 0, off = 0; a < in->n_acc; a++) {
		aopp0[a] = off;
		int k = 0;
		for (size_t m = 0; m < in->acc_nopp[a]; m++) {
			ya[off + m] = col(lp, 1, in->acc_idle_w[a][m]);
			H->ind[++k] = ya[off + m], H->val[k] = 1.0;
		}
		row_eq(lp, 1, k, H->ind, H->val);
		off += in->acc_nopp[a];
	}
	/* task columns */
	for (size_t i = 0; i < n; i++) {
		double hi = ms(opt_longest_d(in, i)), T = (double)in->T_ns[i];
		int k = 0;
		for (size_t c = 0; c < H->n_cls; c++) {
			size_t r = H->cls_root[c];
			for (size_t m = 0; m < in->isl_nopp[r]; m++) {
				double C = (double)runtime_at(in, i, r, m);
				if (!opt_core_fits(in, i, C, 0))
					continue;
				size_t q = i * H->n_cm + H->opp0[c] + m;
				double busy = (in->busy_w[r][m] - in->idle_w[r][m]) * (double)demand_at(in, i, r, m) / T;
				H->a[q] = col(lp, 1, busy);
				H->d[q] = col(lp, hi, 0);
				H->v[q] = col(lp, in->cap / ms(C), 0);
				H->ind[++k] = H->a[q], H->val[k] = 1.0;
				/* the deadline's range rows (C / cap) a <= d <= hi a come in when violated
				 * (separate): most are never needed, and without them the first LP has 17 800
				 * rows instead of 24 800 (Xavier 120 tasks) */
				double lo = ms(C) / in->cap; /* <= hi: the option fits */
				H->lo[q] = lo;
				for (int p = 0; p < H->points; p++)
					tangent(H, q, lo * pow(hi / lo, (double)p / (H->points - 1)));
			}
		}
		z[i] = calloc(in->n_srv * max_am + 1, sizeof(int));
		if (!z[i])
			goto out;
		for (size_t v = 0; v < in->n_srv; v++) {
			if (in->impl[i * in->n_srv + v] < 0)
				continue;
			size_t a = in->srv[v].accel;
			for (size_t m = 0; m < in->acc_nopp[a]; m++) {
				double L = (double)opt_latency(in, i, v, m);
				if (L > opt_longest_d(in, i))
					continue;
				double busy = in->srv[v].kind == PD_ACCEL_FPGA ? in->fpga_pw[i * in->n_srv + v] * L / T
									       : (in->acc_busy_w[a][m] - in->acc_idle_w[a][m]) * L / T;
				int zc = col(lp, 1, busy);
				z[i][v * max_am + m] = zc;
				H->ind[++k] = zc, H->val[k] = 1.0;
				int iy[3] = {0, zc, ya[aopp0[a] + m]};
				double vy[3] = {0, 1.0, -1.0};
				row_le(lp, 0, 2, iy, vy);
			}
		}
		row_eq(lp, 1, k, H->ind, H->val);
		F[i] = col(lp, ms((double)in->D_ns[i]), 0);
	}
	/* per (class, OPP): capacity and cardinality */
	for (size_t c = 0; c < H->n_cls; c++) {
		size_t r = H->cls_root[c], nc = in->isl_ncores[r];
		for (size_t m = 0; m < in->isl_nopp[r]; m++) {
			size_t cm = H->opp0[c] + m;
			int k = 0;
			for (size_t i = 0; i < n; i++)
				if (H->v[i * H->n_cm + cm])
					H->ind[++k] = H->v[i * H->n_cm + cm], H->val[k] = ms((double)runtime_at(in, i, r, m));
			H->ind[++k] = y[cm], H->val[k] = -(double)nc * in->cap;
			row_le(lp, 0, k, H->ind, H->val);
			for (int p = 1; p <= 2; p++) {
				k = 0;
				for (size_t i = 0; i < n; i++) {
					int ac = H->a[i * H->n_cm + cm];
					double u = (double)runtime_at(in, i, r, m) / opt_longest_d(in, i);
					if (ac && u > in->cap / (p + 1) * (1 + 1e-9))
						H->ind[++k] = ac, H->val[k] = 1.0;
				}
				if (!k)
					continue;
				H->ind[++k] = y[cm], H->val[k] = -(double)(p * (int)nc);
				row_le(lp, 0, k, H->ind, H->val);
			}
		}
	}
	/* per (server, OPP): FIFO utilisation */
	for (size_t v = 0; v < in->n_srv; v++) {
		size_t a = in->srv[v].accel;
		for (size_t m = 0; m < in->acc_nopp[a]; m++) {
			int k = 0;
			for (size_t i = 0; i < n; i++)
				if (z[i][v * max_am + m])
					H->ind[++k] = z[i][v * max_am + m],
					H->val[k] = (double)opt_latency(in, i, v, m) / (double)in->T_ns[i];
			if (!k)
				continue;
			H->ind[++k] = ya[aopp0[a] + m], H->val[k] = -1.0;
			row_le(lp, 0, k, H->ind, H->val);
		}
	}
	/* FIFO pairs: w_ijv >= Z_iv + Z_jv - 1 (Z: the task's z over the device's OPPs) */
	if (fifo_pairs(H, z, max_am, w))
		goto out;
	/* finish potentials */
	for (size_t i = 0; i < n; i++) {
		const struct pd_task *t = pd_dags_task(in->dags, i);
		size_t np = t->n_preds ? t->n_preds : 1;
		for (size_t p = 0; p < np; p++) {
			int k = 0;
			H->ind[++k] = F[i], H->val[k] = 1.0;
			if (t->n_preds)
				H->ind[++k] = F[t->preds[p]], H->val[k] = -1.0;
			for (size_t cm = 0; cm < H->n_cm; cm++)
				if (H->d[i * H->n_cm + cm])
					H->ind[++k] = H->d[i * H->n_cm + cm], H->val[k] = -1.0;
			for (size_t v = 0; v < in->n_srv; v++)
				for (size_t m = 0; m < max_am; m++)
					if (z[i][v * max_am + m])
						H->ind[++k] = z[i][v * max_am + m],
						H->val[k] = -ms((double)opt_latency(in, i, v, m));
			for (size_t v = 0; w && v < in->n_srv; v++) /* the requests i waits for */
				for (size_t j = 0; j < n; j++)
					if (w[(v * n + i) * n + j])
						H->ind[++k] = w[(v * n + i) * n + j],
						H->val[k] = -pair_wait_ms(H, z, max_am, i, j, v);
			row_ge(lp, 0, k, H->ind, H->val);
		}
	}
	rc = 0;
out:
	for (size_t i = 0; z && i < n; i++)
		free(z[i]);
	free(z), free(F), free(w);
	return rc;
}

/* Adds the cuts the LP's point violates: the range rows of an option's deadline and one tangent of
 * its perspective; returns how many. */
static int separate(struct hull *H)
{
	const struct opt_inst *in = H->in;
	int added = 0;
	for (size_t q = 0; q < in->n_tasks * H->n_cm; q++) {
		if (!H->a[q])
			continue;
		double a = opt_hlp_prim(H->lp, H->a[q]), d = opt_hlp_prim(H->lp, H->d[q]);
		double v = opt_hlp_prim(H->lp, H->v[q]);
		/* the deadline's range rows (not in the first LP; deleted by compact while slack) */
		int ih[3] = {0, H->d[q], H->a[q]};
		double hi = ms(opt_longest_d(in, q / H->n_cm));
		if (d > hi * a * (1 + HULL_TOL) + 1e-9) {
			double vh[3] = {0, 1.0, -hi};
			mark(H, row_le(H->lp, 0, 2, ih, vh));
			added++;
		}
		if (d < H->lo[q] * a * (1 - HULL_TOL) - 1e-9) {
			double vl[3] = {0, 1.0, -H->lo[q]};
			mark(H, row_ge(H->lp, 0, 2, ih, vl));
			added++;
		}
		if (a < 1e-7 || d < 1e-9)
			continue;
		double need = a * a / d;
		if (v < need * (1 - HULL_TOL) - 1e-12) {
			tangent(H, q, d / a);
			added++;
		}
	}
	return added;
}

/*
 * The vector the LP's point suggests (opt_hull_bound's hint): per class of twins, its islands at
 * the OPPs where the cumulative y_cm of the class crosses 1/2, 3/2, ... (the point's distribution of
 * islands over OPPs, rounded by quantiles, ascending: canonical); per accelerator, its OPP of the
 * largest y_am. Why quantiles: the hull's optimum spreads a class over many OPPs (Xavier 120 tasks,
 * seed 13017156: y over 18 of the 29 Carmel OPPs, none above 0.77), so no single OPP has weight
 * enough to be read off, while its quantiles keep the spread between slow and fast islands that
 * its cheap plans have (hull_plans.c).
 */
static void hint_from(const struct hull *H, struct opt_sol *hint)
{
	const struct opt_inst *in = H->in;
	double *y = malloc((H->n_cm + 1) * sizeof(double));
	size_t *q = malloc((in->n_isl + 1) * sizeof(size_t));
	if (!y || !q)
		goto out;
	for (size_t c = 0; c < H->n_cls; c++) {
		size_t r = H->cls_root[c], nm = in->isl_nopp[r];
		for (size_t m = 0; m < nm; m++)
			y[m] = opt_hlp_prim(H->lp, H->y[H->opp0[c] + m]);
		opt_hull_quantiles(y, nm, H->cls_n[c], q);
		for (size_t k = 0, j = 0; k < in->n_isl; k++) /* the class's j-th island takes quantile j */
			if (opt_twin_root(in, k) == r)
				hint->isl_opp[k] = q[j++];
	}
	for (size_t a = 0; a < in->n_acc; a++) {
		double top = -1;
		for (size_t m = 0; m < in->acc_nopp[a]; m++) {
			double ya = opt_hlp_prim(H->lp, H->ya[H->aopp0[a] + m]);
			if (ya > top)
				top = ya, hint->acc_opp[a] = m;
		}
	}
	hint->ok = true;
	opt_pub_hint(in, hint);
out:
	free(y);
	free(q);
}

void opt_hull_quantiles(const double *y, size_t nm, size_t n, size_t *out)
{
	double cum = 0;
	size_t j = 0;
	for (size_t m = 0; m < nm && j < n; m++) {
		cum += y[m];
		/* the last OPP takes whatever rounding left over */
		for (; j < n && (cum >= (double)j + 0.5 - 1e-9 || m == nm - 1); j++)
			out[j] = m;
	}
}

double opt_hull_bound(const struct opt_inst *in, double deadline_s, struct opt_sol *hint)
{
	return opt_hull_bound_on(in, deadline_s, false, hint);
}

double opt_hull_bound_on(const struct opt_inst *in, double deadline_s, bool glpk, struct opt_sol *hint)
{
	struct hull H = {.in = in};
	double bound = -INFINITY;
	if (hint)
		hint->ok = false;
	if (classes(&H))
		goto out;
	size_t max_am = 1; /* OPPs of the accelerator with the most */
	for (size_t a = 0; a < in->n_acc; a++)
		max_am = in->acc_nopp[a] > max_am ? in->acc_nopp[a] : max_am;
	/* the longest row: a capacity row (every task and y), or a path row (F twice, every option, a
	 * FIFO pair per other task and server) */
	size_t nq = in->n_tasks * H.n_cm + 1, wide = in->n_tasks + H.n_cm + in->n_srv * (max_am + in->n_tasks) + 8;
	H.a = calloc(nq, sizeof(int)), H.d = calloc(nq, sizeof(int)), H.v = calloc(nq, sizeof(int));
	H.lo = calloc(nq, sizeof(double));
	H.ind = calloc(wide + 1, sizeof(int)), H.val = calloc(wide + 1, sizeof(double));
	H.lp = opt_hlp_new(glpk);
	if (!H.a || !H.d || !H.v || !H.lo || !H.ind || !H.val || !H.lp)
		goto out;
	H.points = strcmp(opt_hlp_solver(H.lp), "clp") ? HULL_POINTS_GLPK : HULL_POINTS_CLP;
	if (build(&H, max_am))
		goto out;
	for (int round = 0; round < HULL_ROUNDS; round++) {
		double left_s = deadline_s - opt_now_s();
		if (left_s < 0.005)
			break;
		/* no optimum: out of time, or no point at all (GLP_NOFEAS would mean no plan anywhere;
		 * the search decides that itself, with its explanation, so the hull claims nothing) */
		if (opt_hlp_solve(H.lp, round == 0, left_s))
			break;
		if (round % HULL_COMPACT == 0)
			compact(&H);
		double z = opt_hlp_obj(H.lp);
		bool stalled = z < bound + HULL_STALL * fabs(bound);
		if (hint && z > bound)
			hint_from(&H, hint);
		bound = fmax(bound, z);
		opt_pub_bound(in, bound);
		if (bound >= opt_peer_w(in) * (1 - in->rel_gap) || stalled || !separate(&H))
			break;
	}
out:
	opt_hlp_free(H.lp);
	free(H.cls_root), free(H.cls_n), free(H.opp0), free(H.a), free(H.d), free(H.v), free(H.ind), free(H.val), free(H.cut), free(H.lo);
	free(H.y), free(H.ya), free(H.aopp0);
	return bound;
}
