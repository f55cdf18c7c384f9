/* SPDX-License-Identifier: MIT */
/*
 * A cheap proof that an OPP vector has no plan, one that sees every path (docs/MODEL.md, "Exact",
 * lazy bounds over canonical vectors). Xavier at 120 tasks: most of the vectors with the smallest
 * bounds have no plan, and the screening LP that proves it costs 100-600 ms each.
 *
 * Every plan at vector s satisfies, with C_ik the runtime on island k at s and L_iv the latency on
 * server v (times in ms, cap = cap_raw):
 *   island k:   sum_{i on k} C_ik / d_i <= n_k cap                  (density per core <= cap)
 *   server v:   sum_{i on v} L_iv / T_i <= 1                        (FIFO utilisation)
 *   cardinality: at most p n_k tasks of density > cap / (p + 1) on k, p = 1, 2 (a task on k has
 *               density >= C_ik / hi_i)
 *   paths:      every source-to-sink path P of a DAG: sum_{i in P} delta_i <= D_P,
 *   with delta_i = d_i in [C_ik / cap, hi_i] on an island, delta_i >= L_iv on a server.
 * For multipliers z >= 0 on the island, server and cardinality rows and a flow Pi >= 0 (node
 * throughputs of a nonnegative combination of source-to-sink paths, each path weighing D_P), every
 * plan has
 *   0 >= sum_rows z (lhs - rhs) + sum_P pi_P (sum_{i in P} delta_i - D_P)
 *     >= sum_i h_i(Pi_i) - sum_P pi_P D_P - sum_rows z rhs =: g,
 *   h_i(Pi) = min over i's options of [z-weighted row terms + Pi delta], minimised over delta too:
 *   island: min_{d in [C/cap, hi]} lambda_k C / d + Pi d + sigma terms; server: mu_v L / T + Pi L.
 * So g > 0 proves that no plan exists at s (and at every vector nowhere faster: that is the
 * screening LP's monotonicity, which holds for these rows too). g is the Lagrangian of the screening
 * LP's rows (without the symmetry rows, which only cut plans that have an equivalent), with the
 * island choice and the perspective solved exactly per task: at the best multipliers as strong as
 * that LP with cap_raw for cap. Here they are searched for cheaply (multiplicative weights on z,
 * normalised to sum z rhs = 1; for each z, path steps with a line search on the flow), and every
 * call starts from the multipliers of the last proof (neighbouring vectors share their proofs).
 * Any (z, Pi) gives a valid g, so the search can only miss proofs, never make a wrong one; a margin
 * covers the rounding of the sums.
 */
#include "optimizer/opt_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PL_INNER 2 /* path passes per multiplier update */
#define PL_MARGIN 1e-6 /* g must exceed this (sum z rhs = 1) */
/* bisection steps of the line searches (any step keeps g valid: only its size is searched) */
#define PL_BISECT 30

struct opt_pathlag {
	const struct opt_inst *in;
	size_t n, nk, nv, nz;
	double *D, *hi, *T; /* per task, ms */
	double *C, *L;      /* [i * nk + k], [i * nv + v]: ms at the vector, < 0: no such option */
	unsigned char *big; /* [i * nk + k]: bit p-1 when C / hi > cap / (p + 1) */
	double *z, *rhs, *lhs; /* per row: islands, servers, then 2 cardinality rows per island */
	double *Pi, *len;
	double *z_ok, *Pi_ok; /* the multipliers of the last proof: every call starts from them */
	bool have_ok;
	size_t *from;       /* longest-path DP: best predecessor (SIZE_MAX: source) */
};

struct opt_pathlag *opt_pathlag_new(const struct opt_inst *in)
{
	struct opt_pathlag *P = calloc(1, sizeof(*P));
	if (!P)
		return NULL;
	size_t n = in->n_tasks ? in->n_tasks : 1;
	P->in = in, P->n = in->n_tasks, P->nk = in->n_isl, P->nv = in->n_srv;
	P->nz = P->nk + P->nv + 2 * P->nk;
	P->D = calloc(n, sizeof(double)), P->hi = calloc(n, sizeof(double)), P->T = calloc(n, sizeof(double));
	P->C = calloc(n * P->nk + 1, sizeof(double)), P->L = calloc(n * P->nv + 1, sizeof(double));
	P->big = calloc(n * P->nk + 1, 1);
	P->z = calloc(P->nz + 1, sizeof(double)), P->rhs = calloc(P->nz + 1, sizeof(double));
	P->lhs = calloc(P->nz + 1, sizeof(double));
	P->Pi = calloc(n, sizeof(double)), P->len = calloc(n, sizeof(double));
	P->z_ok = calloc(P->nz + 1, sizeof(double)), P->Pi_ok = calloc(n, sizeof(double));
	P->from = calloc(n, sizeof(size_t));
	if (!P->D || !P->hi || !P->T || !P->C || !P->L || !P->big || !P->z || !P->rhs || !P->lhs || !P->Pi || !P->len ||
	    !P->from || !P->z_ok || !P->Pi_ok) {
		opt_pathlag_free(P);
		return NULL;
	}
	for (size_t i = 0; i < P->n; i++) {
		P->D[i] = (double)in->D_ns[i] * 1e-6;
		P->hi[i] = opt_longest_d(in, i) * 1e-6;
		P->T[i] = (double)in->T_ns[i] * 1e-6;
	}
	for (size_t k = 0; k < P->nk; k++) {
		P->rhs[k] = (double)in->isl_ncores[k] * in->cap_raw;
		P->rhs[P->nk + P->nv + 2 * k] = (double)in->isl_ncores[k];
		P->rhs[P->nk + P->nv + 2 * k + 1] = 2.0 * (double)in->isl_ncores[k];
	}
	for (size_t v = 0; v < P->nv; v++)
		P->rhs[P->nk + v] = 1.0;
	for (size_t j = 0; j < P->nz; j++)
		P->z[j] = 1.0 / ((double)P->nz * P->rhs[j]); /* sum z rhs = 1 */
	return P;
}

void opt_pathlag_free(struct opt_pathlag *P)
{
	if (!P)
		return;
	free(P->D), free(P->hi), free(P->T), free(P->C), free(P->L), free(P->big), free(P->z), free(P->rhs);
	free(P->lhs), free(P->Pi), free(P->len), free(P->from), free(P->z_ok), free(P->Pi_ok);
	free(P);
}

/* h_i(Pi) and its minimiser: the delay (*delta) and option (*opt: island k, or nk + v). */
static double task_h(const struct opt_pathlag *P, size_t i, double Pi, double *delta, size_t *opt)
{
	double best = INFINITY;
	*delta = 0, *opt = SIZE_MAX;
	for (size_t k = 0; k < P->nk; k++) {
		double C = P->C[i * P->nk + k];
		if (C < 0)
			continue;
		double a = P->z[k] * C, lo = C / P->in->cap_raw, hi = P->hi[i], d;
		if (Pi <= 0)
			d = a > 0 ? hi : lo; /* a = 0: the smallest minimiser (the right derivative in Pi) */
		else
			d = fmin(hi, fmax(lo, sqrt(a / Pi)));
		unsigned char b = P->big[i * P->nk + k];
		double c = a / d + Pi * d + ((b & 1) ? P->z[P->nk + P->nv + 2 * k] : 0) +
			   ((b & 2) ? P->z[P->nk + P->nv + 2 * k + 1] : 0);
		if (c < best)
			best = c, *delta = d, *opt = k;
	}
	for (size_t v = 0; v < P->nv; v++) {
		double L = P->L[i * P->nv + v];
		if (L < 0)
			continue;
		double c = P->z[P->nk + v] * L / P->T[i] + Pi * L;
		if (c < best)
			best = c, *delta = L, *opt = P->nk + v;
	}
	return best;
}

/* g at the current (z, Pi); fills lhs (the rows' left sides at the minimisers) when asked. */
static double value(struct opt_pathlag *P, bool rows)
{
	const struct opt_inst *in = P->in;
	double g = 0;
	if (rows)
		memset(P->lhs, 0, P->nz * sizeof(double));
	for (size_t i = 0; i < P->n; i++) {
		double d;
		size_t o;
		g += task_h(P, i, P->Pi[i], &d, &o);
		if (pd_dags_task(in->dags, i)->n_succs == 0)
			g -= P->D[i] * P->Pi[i]; /* every path ends at a sink: its weight D_P counted there */
		if (!rows || o == SIZE_MAX)
			continue;
		if (o < P->nk) {
			P->lhs[o] += P->C[i * P->nk + o] / d;
			unsigned char b = P->big[i * P->nk + o];
			P->lhs[P->nk + P->nv + 2 * o] += (b & 1) ? 1 : 0;
			P->lhs[P->nk + P->nv + 2 * o + 1] += (b & 2) ? 1 : 0;
		} else {
			P->lhs[o] += P->L[i * P->nv + (o - P->nk)] / P->T[i];
		}
	}
	for (size_t j = 0; j < P->nz; j++)
		g -= P->z[j] * P->rhs[j];
	return g;
}

/* Slope of the path ending at sink t (via P->from) when t units of flow are added to it. */
static double path_slope(const struct opt_pathlag *P, size_t sink, double t)
{
	double s = -P->D[sink], d;
	size_t o;
	for (size_t i = sink; i != SIZE_MAX; i = P->from[i]) {
		task_h(P, i, P->Pi[i] + t, &d, &o);
		s += d;
	}
	return s;
}

/* One pass: for every sink whose longest path (delays at the current minimisers) is longer than its
 * deadline, flow is added along that path up to where the path's slope reaches 0 (the flow's value
 * is concave in it). Keeps Pi a combination of source-to-sink paths. */
static void path_pass(struct opt_pathlag *P)
{
	const struct opt_inst *in = P->in;
	const size_t *topo = pd_dags_topo(in->dags);
	for (size_t q = 0; q < P->n; q++) {
		size_t i = topo[q];
		const struct pd_task *t = pd_dags_task(in->dags, i);
		double d;
		size_t o;
		task_h(P, i, P->Pi[i], &d, &o);
		P->len[i] = d, P->from[i] = SIZE_MAX;
		double best = -1;
		for (size_t p = 0; p < t->n_preds; p++)
			if (P->len[t->preds[p]] > best)
				best = P->len[t->preds[p]], P->from[i] = t->preds[p];
		if (best > 0)
			P->len[i] += best;
	}
	for (size_t sink = 0; sink < P->n; sink++) {
		if (pd_dags_task(in->dags, sink)->n_succs != 0 || path_slope(P, sink, 0) <= 0)
			continue;
		double lo = 0, hi = 1e-6;
		for (int it = 0; it < 60 && path_slope(P, sink, hi) > 0; it++)
			lo = hi, hi *= 4;
		if (path_slope(P, sink, hi) > 0)
			continue; /* the path does not fit even at its fastest options: no step needed here */
		for (int it = 0; it < PL_BISECT; it++) {
			double mid = 0.5 * (lo + hi);
			if (path_slope(P, sink, mid) > 0)
				lo = mid;
			else
				hi = mid;
		}
		for (size_t i = sink; i != SIZE_MAX; i = P->from[i])
			P->Pi[i] += lo;
	}
}

/* Scales the whole flow by the factor in [0, 1] that maximises g along that ray (paths that got too
 * much flow for the current multipliers): bisection on the slope sum_i Pi_i delta_i(s Pi_i) - sum D Pi. */
static void scale_pass(struct opt_pathlag *P)
{
	const struct opt_inst *in = P->in;
	double lo = 0, hi = 1;
	for (int it = 0; it <= PL_BISECT; it++) {
		double s = it == 0 ? 1.0 : 0.5 * (lo + hi), slope = 0, d;
		size_t o;
		for (size_t i = 0; i < P->n; i++) {
			task_h(P, i, s * P->Pi[i], &d, &o);
			slope += P->Pi[i] * d;
			if (pd_dags_task(in->dags, i)->n_succs == 0)
				slope -= P->D[i] * P->Pi[i];
		}
		if (it == 0 && slope >= 0)
			return; /* g still rises with the flow */
		if (it > 0) {
			if (slope > 0)
				lo = s;
			else
				hi = s;
		}
	}
	for (size_t i = 0; i < P->n; i++)
		P->Pi[i] *= 0.5 * (lo + hi);
}

static void set_vector(struct opt_pathlag *P, const struct opt_sol *s)
{
	const struct opt_inst *in = P->in;
	for (size_t i = 0; i < P->n; i++) {
		for (size_t k = 0; k < P->nk; k++) {
			double C = (double)runtime_at(in, i, k, s->isl_opp[k]) * 1e-6;
			/* alone on a core it needs C / d <= cap, d <= hi */
			bool fits = C > 0 && C / in->cap_raw <= P->hi[i];
			P->C[i * P->nk + k] = fits ? C : -1;
			unsigned char b = 0;
			if (fits && C / P->hi[i] > in->cap_raw / 2 * (1 + 1e-9))
				b |= 1;
			if (fits && C / P->hi[i] > in->cap_raw / 3 * (1 + 1e-9))
				b |= 2;
			P->big[i * P->nk + k] = b;
		}
		for (size_t v = 0; v < P->nv; v++)
			P->L[i * P->nv + v] = in->impl[i * in->n_srv + v] >= 0
						      ? (double)opt_latency(in, i, v, s->acc_opp[in->srv[v].accel]) * 1e-6
						      : -1;
	}
}

bool opt_pathlag_no_plan(struct opt_pathlag *P, const struct opt_sol *s, int rounds, double deadline_s)
{
	set_vector(P, s);
	/* neighbours share their proofs: start from the last one (a failed search drifts far from it) */
	if (P->have_ok) {
		memcpy(P->z, P->z_ok, P->nz * sizeof(double));
		memcpy(P->Pi, P->Pi_ok, P->n * sizeof(double));
	}
	for (int outer = 0; outer < rounds && opt_now_s() < deadline_s; outer++) {
		for (int r = 0; r < PL_INNER; r++) {
			path_pass(P);
			scale_pass(P);
		}
		double g = value(P, true);
		if (g > PL_MARGIN) {
			memcpy(P->z_ok, P->z, P->nz * sizeof(double));
			memcpy(P->Pi_ok, P->Pi, P->n * sizeof(double));
			P->have_ok = true;
			return true;
		}
		if (!isfinite(g))
			return false;
		/* multiplicative weights: rows over their limit gain weight; sum z rhs stays 1 */
		double eta = 1.0 / sqrt(1.0 + outer), sum = 0;
		for (size_t j = 0; j < P->nz; j++) {
			double u = P->lhs[j] / P->rhs[j] - 1.0;
			P->z[j] *= exp(eta * fmax(-2.0, fmin(2.0, u)));
			P->z[j] = fmax(P->z[j], 1e-12 / P->rhs[j]);
			sum += P->z[j] * P->rhs[j];
		}
		for (size_t j = 0; j < P->nz; j++)
			P->z[j] /= sum;
		for (size_t i = 0; i < P->n; i++)
			P->Pi[i] /= sum; /* the same ray of (z, Pi): g is homogeneous */
	}
	return false;
}
