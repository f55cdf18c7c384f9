/* SPDX-License-Identifier: MIT */
/*
 * deadlines_ipm.c - the exact deadline assignment for a fixed placement and fixed OPPs without a
 * general LP: a log-barrier (interior point) method on the convex program itself,
 *
 *     min lambda  s.t.  K_c + sum_{i on c} C_i / d_i <= lambda        (every core c)
 *                       F_i >= F_p + x_i (every edge p -> i), F_i >= x_i (sources), F_i <= D' (sinks)
 *                       C_i <= d_i <= min(T_i, D')                     (x_i = d_i, or the fixed delay)
 *
 * (finish potentials F, as in the deadline LP of deadlines.c; K_c the density of a core's tasks whose
 * deadline cannot move). Why not the LP: it solves the same program through Kelley tangents, and GLPK's
 * simplex on ~700 rows took 20-50 ms per call, about half of the heuristic's time on Xavier at 120
 * tasks. Here every Newton step is cheap because of the structure: the Hessian of the barrier is
 * block diagonal by DAG (potentials and deadlines of one DAG; 10-25 variables) plus one rank-one term
 * per core (its density couples DAGs) and lambda, so a step is a Cholesky factorisation per DAG and
 * one dense (cores + 1) system. Times are in ms (conditioning); D' is 2 ns below the DAG's deadline as
 * in the LP, so that floored deadlines keep every path within D.
 *
 * The central path gives a valid bound: at the barrier's minimiser for parameter t, lambda - M / t is
 * at most the optimum (M: number of barrier terms); every iterate is strictly feasible, so its true
 * max density is attained by deadlines that fit every path.
 */
#include "optimizer/opt_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Once deadlines within the cap are found, the centring goes on until the gap is below this fraction
 * of lambda (a few more Newton steps): stopping at the first iterate within the cap (as the LP stops
 * at its first vertex) left more core density and gave plans 0.002-0.017 % worse than the LP's on
 * five Xavier 120-task sets; this gave -0.0017 to +0.0017 % there, and the heuristic was faster. */
#define OPT_IPM_AIM 1e-3

struct ipm {
	const struct opt_inst *in;
	size_t n, nv, nk;    /* tasks, variables (lambda apart), cores with CPU tasks */
	int *fv, *dv;        /* per task: variable of F_i, of d_i (-1: fixed) */
	double *C, *hi, *xf; /* per task (ms): Q or the FIFO delay R, largest d, fixed delay (fixed tasks) */
	double *Dp;          /* per task: D' of its DAG (ms) */
	size_t nb, *b0, *bn; /* blocks (one per DAG): first variable, size */
	size_t *boff;        /* offset of block g's dense matrix in H */
	double *H, *grad, *dx, *z0, *Z, *xt; /* H: blocks; Z: nk columns of nv */
	int *core;           /* per core: its row among the nk, or -1 */
	double *K;           /* per core row: density of its fixed tasks */
	double *S, *rhs;     /* the (nk + 1)^2 system */
	double M;            /* barrier terms */
};

static void ipm_free(struct ipm *p)
{
	free(p->fv), free(p->dv), free(p->C), free(p->hi), free(p->xf), free(p->Dp);
	free(p->b0), free(p->bn), free(p->boff), free(p->H), free(p->grad), free(p->dx), free(p->z0);
	free(p->Z), free(p->xt), free(p->core), free(p->K), free(p->S), free(p->rhs);
}

/* Delay of task i at the point x (variables). */
static double delay(const struct ipm *p, const double *x, size_t i)
{
	return p->dv[i] >= 0 ? x[p->dv[i]] : p->xf[i];
}

/* Core densities at x into g (per core row, without lambda). */
static void densities(const struct ipm *p, const struct opt_sol *s, const double *x, double *g)
{
	for (size_t k = 0; k < p->nk; k++)
		g[k] = p->K[k];
	for (size_t i = 0; i < p->n; i++)
		if (p->dv[i] >= 0)
			g[p->core[s->where[i]]] += p->C[i] / x[p->dv[i]];
}

/* The barrier objective t lambda - sum log(slacks) at (x, lam); INFINITY outside the interior. */
static double barrier(const struct ipm *p, const struct opt_sol *s, const double *x, double lam, double t, double *g)
{
	const struct opt_inst *in = p->in;
	double f = t * lam;
	for (size_t i = 0; i < p->n; i++) {
		const struct pd_task *T = &in->tasks[i];
		double Fi = x[p->fv[i]], xi = delay(p, x, i);
		if (p->dv[i] >= 0) {
			double a = xi - p->C[i], b = p->hi[i] - xi;
			if (!(a > 0 && b > 0))
				return INFINITY;
			f -= log(a) + log(b);
		}
		if (!T->n_preds) {
			if (!(Fi - xi > 0))
				return INFINITY;
			f -= log(Fi - xi);
		}
		for (size_t q = 0; q < T->n_preds; q++) {
			double sl = Fi - x[p->fv[T->preds[q]]] - xi;
			if (!(sl > 0))
				return INFINITY;
			f -= log(sl);
		}
		if (!T->n_succs) {
			if (!(p->Dp[i] - Fi > 0))
				return INFINITY;
			f -= log(p->Dp[i] - Fi);
		}
	}
	densities(p, s, x, g);
	for (size_t k = 0; k < p->nk; k++) {
		if (!(lam - g[k] > 0))
			return INFINITY;
		f -= log(lam - g[k]);
	}
	return f;
}

/* H[a][b] += v inside the block of variable a (a and b in the same block). */
static inline double *hat(struct ipm *p, size_t g, size_t a, size_t b)
{
	return &p->H[p->boff[g] + (a - p->b0[g]) * p->bn[g] + (b - p->b0[g])];
}

/* One linear constraint term a^T x - c > 0 with slack sl over up to 3 variables (coef +-1). */
static void lin_term(struct ipm *p, size_t g, const int *v, const double *a, int m, double sl)
{
	for (int j = 0; j < m; j++) {
		p->grad[v[j]] -= a[j] / sl;
		for (int l = 0; l < m; l++)
			*hat(p, g, (size_t)v[j], (size_t)v[l]) += a[j] * a[l] / (sl * sl);
	}
}

/* Gradient (grad, and *glam for lambda) and the block part of the Hessian at (x, lam); gk: the
 * core densities (filled by barrier() at this point). */
static void assemble(struct ipm *p, const struct opt_sol *s, const double *x, double lam, double t, const double *gk,
		     double *glam, size_t *task_block)
{
	const struct opt_inst *in = p->in;
	memset(p->grad, 0, p->nv * sizeof(double));
	memset(p->H, 0, p->boff[p->nb] * sizeof(double));
	for (size_t i = 0; i < p->n; i++) {
		const struct pd_task *T = &in->tasks[i];
		size_t g = task_block[i];
		int f = p->fv[i], d = p->dv[i];
		double Fi = x[f], xi = delay(p, x, i);
		if (d >= 0) {
			double a = xi - p->C[i], b = p->hi[i] - xi;
			p->grad[d] += -1.0 / a + 1.0 / b;
			*hat(p, g, (size_t)d, (size_t)d) += 1.0 / (a * a) + 1.0 / (b * b);
			/* the core's barrier: its diagonal part (the rank-one part stays outside the blocks) */
			size_t k = (size_t)p->core[s->where[i]];
			double gc = lam - gk[k], dd = x[d];
			p->grad[d] += -(p->C[i] / (dd * dd)) / gc;
			*hat(p, g, (size_t)d, (size_t)d) += 2.0 * p->C[i] / (dd * dd * dd * gc);
		}
		int v[3];
		double a[3];
		int m = 0;
		v[m] = f, a[m++] = 1.0;
		if (d >= 0)
			v[m] = d, a[m++] = -1.0;
		if (!T->n_preds)
			lin_term(p, g, v, a, m, Fi - xi);
		for (size_t q = 0; q < T->n_preds; q++) {
			v[m] = p->fv[T->preds[q]], a[m] = -1.0;
			lin_term(p, g, v, a, m + 1, Fi - x[p->fv[T->preds[q]]] - xi);
		}
		if (!T->n_succs) {
			double sl = p->Dp[i] - Fi;
			p->grad[f] += 1.0 / sl;
			*hat(p, g, (size_t)f, (size_t)f) += 1.0 / (sl * sl);
		}
	}
	double gl = t;
	for (size_t k = 0; k < p->nk; k++)
		gl -= 1.0 / (lam - gk[k]);
	*glam = gl;
}

/* In-place Cholesky of every block (lower triangle); false when one is not positive definite. */
static bool factor_blocks(struct ipm *p)
{
	for (size_t g = 0; g < p->nb; g++) {
		size_t n = p->bn[g];
		double *A = &p->H[p->boff[g]];
		for (size_t j = 0; j < n; j++) {
			double sum = A[j * n + j];
			for (size_t k = 0; k < j; k++)
				sum -= A[j * n + k] * A[j * n + k];
			if (!(sum > 0))
				return false;
			double l = sqrt(sum);
			A[j * n + j] = l;
			for (size_t i = j + 1; i < n; i++) {
				double v = A[i * n + j];
				for (size_t k = 0; k < j; k++)
					v -= A[i * n + k] * A[j * n + k];
				A[i * n + j] = v / l;
			}
		}
	}
	return true;
}

/* Whether v[0 .. n) are all +0 (a block's solution is then +0 too, bit for bit: +0 - A * (+0) and
 * +0 / A for A > 0 stay +0). */
static bool all_pos_zero(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] != 0 || signbit(v[i]))
			return false;
	return true;
}

/* y = B^-1 r with the factored blocks (r and y may be the same array). A block whose part of r is +0
 * is skipped: a core's column of the Newton system is zero outside the DAGs with a task on that core,
 * about a third of the solves at 120 tasks (10 DAGs, 8 cores). */
static void solve_blocks(const struct ipm *p, const double *r, double *y)
{
	if (y != r)
		memcpy(y, r, p->nv * sizeof(double));
	for (size_t g = 0; g < p->nb; g++) {
		size_t n = p->bn[g];
		const double *A = &p->H[p->boff[g]];
		double *v = y + p->b0[g];
		if (all_pos_zero(v, n))
			continue;
		for (size_t i = 0; i < n; i++) {
			for (size_t k = 0; k < i; k++)
				v[i] -= A[i * n + k] * v[k];
			v[i] /= A[i * n + i];
		}
		for (size_t i = n; i-- > 0;) {
			for (size_t k = i + 1; k < n; k++)
				v[i] -= A[k * n + i] * v[k];
			v[i] /= A[i * n + i];
		}
	}
}

/* Dense Gaussian elimination with partial pivoting on the (m x m) system A z = b (b becomes z). */
static bool dense_solve(double *A, double *b, size_t m)
{
	for (size_t c = 0; c < m; c++) {
		size_t piv = c;
		for (size_t r = c + 1; r < m; r++)
			if (fabs(A[r * m + c]) > fabs(A[piv * m + c]))
				piv = r;
		if (!(fabs(A[piv * m + c]) > 1e-300))
			return false;
		if (piv != c) {
			for (size_t k = 0; k < m; k++) {
				double t = A[c * m + k];
				A[c * m + k] = A[piv * m + k], A[piv * m + k] = t;
			}
			double t = b[c];
			b[c] = b[piv], b[piv] = t;
		}
		for (size_t r = c + 1; r < m; r++) {
			double f = A[r * m + c] / A[c * m + c];
			if (f == 0)
				continue;
			for (size_t k = c; k < m; k++)
				A[r * m + k] -= f * A[c * m + k];
			b[r] -= f * b[c];
		}
	}
	for (size_t c = m; c-- > 0;) {
		for (size_t k = c + 1; k < m; k++)
			b[c] -= A[c * m + k] * b[k];
		b[c] /= A[c * m + c];
	}
	return true;
}

/*
 * The Newton step (dx, *dlam) at (x, lam): H = B + sum_k v_k v_k^T with v_k = grad(core k's
 * density row) / its slack = (u_k, 1 / s_k). With y_k = v_k^T step: B dx = -grad - U y and
 * (I + U^T B^-1 U) y - (1/s) dlam = -U^T B^-1 grad, (1/s)^T y = -glam.
 */
static bool newton_step(struct ipm *p, const struct opt_sol *s, const double *x, double lam, const double *gk,
			double glam, double *dlam)
{
	size_t nk = p->nk, m = nk + 1, nv = p->nv;
	if (!factor_blocks(p))
		return false;
	solve_blocks(p, p->grad, p->z0);
	memset(p->Z, 0, nk * nv * sizeof(double));
	for (size_t i = 0; i < p->n; i++)
		if (p->dv[i] >= 0) {
			size_t k = (size_t)p->core[s->where[i]];
			double d = x[p->dv[i]];
			p->Z[k * nv + (size_t)p->dv[i]] = p->C[i] / (d * d) / (lam - gk[k]);
		}
	for (size_t k = 0; k < nk; k++)
		solve_blocks(p, p->Z + k * nv, p->Z + k * nv);
	memset(p->S, 0, m * m * sizeof(double));
	memset(p->rhs, 0, m * sizeof(double));
	for (size_t i = 0; i < p->n; i++) {
		if (p->dv[i] < 0)
			continue;
		size_t k = (size_t)p->core[s->where[i]], v = (size_t)p->dv[i];
		double d = x[v], uk = p->C[i] / (d * d) / (lam - gk[k]);
		p->rhs[k] -= uk * p->z0[v];
		for (size_t l = 0; l < nk; l++)
			p->S[k * m + l] += uk * p->Z[l * nv + v];
	}
	for (size_t k = 0; k < nk; k++) {
		p->S[k * m + k] += 1.0;
		p->S[k * m + nk] = -1.0 / (lam - gk[k]);
		p->S[nk * m + k] = 1.0 / (lam - gk[k]);
	}
	p->rhs[nk] = -glam;
	if (!dense_solve(p->S, p->rhs, m))
		return false;
	for (size_t v = 0; v < nv; v++) {
		double t = -p->z0[v];
		for (size_t k = 0; k < nk; k++)
			t -= p->Z[k * nv + v] * p->rhs[k];
		p->dx[v] = t;
	}
	*dlam = p->rhs[nk];
	return true;
}

/* Variables, blocks and the fixed parts; false without memory. */
static bool ipm_setup(struct ipm *p, const struct opt_inst *in, const struct opt_sol *s, const double *e,
		      double slack_frac, size_t *task_block)
{
	size_t n = in->n_tasks;
	p->in = in, p->n = n;
	p->fv = calloc(n, sizeof(int)), p->dv = calloc(n, sizeof(int));
	p->C = calloc(n, sizeof(double)), p->hi = calloc(n, sizeof(double)), p->xf = calloc(n, sizeof(double));
	p->Dp = calloc(n, sizeof(double));
	p->b0 = calloc(in->n_dags + 1, sizeof(size_t)), p->bn = calloc(in->n_dags + 1, sizeof(size_t));
	p->boff = calloc(in->n_dags + 1, sizeof(size_t));
	p->core = calloc(in->n_cores + 1, sizeof(int));
	if (!p->fv || !p->dv || !p->C || !p->hi || !p->xf || !p->Dp || !p->b0 || !p->bn || !p->boff || !p->core)
		return false;
	for (size_t c = 0; c < in->n_cores; c++)
		p->core[c] = -1;
	size_t nv = 0;
	p->nb = in->n_dags;
	p->M = 0;
	for (size_t g = 0; g < in->n_dags; g++) {
		p->b0[g] = nv;
		for (size_t i = 0; i < n; i++) {
			if (in->task_dag[i] != g)
				continue;
			task_block[i] = g;
			p->Dp[i] = ((double)in->D_ns[i] * (1.0 - slack_frac) - 2.0) * 1e-6;
			p->C[i] = e[i] * 1e-6;
			p->fv[i] = (int)nv++;
			p->dv[i] = -1;
			const struct pd_task *T = &in->tasks[i];
			p->M += (double)(T->n_preds ? T->n_preds : 1) + (T->n_succs ? 0 : 1);
			if (s->where[i] < 0) {
				p->xf[i] = p->C[i];
				continue;
			}
			if (p->core[s->where[i]] < 0)
				p->core[s->where[i]] = (int)p->nk++;
			p->hi[i] = fmin((double)in->T_ns[i] * 1e-6, p->Dp[i]);
			if (p->hi[i] > p->C[i] * (1 + 1e-9)) {
				p->dv[i] = (int)nv++;
				p->M += 2;
			} else {
				p->xf[i] = s->d_ns[i] * 1e-6;
			}
		}
		p->bn[g] = nv - p->b0[g];
		p->boff[g + 1] = p->boff[g] + p->bn[g] * p->bn[g];
	}
	p->nv = nv;
	p->M += (double)p->nk;
	size_t m = p->nk + 1;
	p->H = calloc(p->boff[p->nb] + 1, sizeof(double));
	p->grad = calloc(nv + 1, sizeof(double)), p->dx = calloc(nv + 1, sizeof(double));
	p->z0 = calloc(nv + 1, sizeof(double)), p->xt = calloc(nv + 1, sizeof(double));
	p->Z = calloc(p->nk * nv + 1, sizeof(double));
	p->K = calloc(m, sizeof(double)), p->S = calloc(m * m, sizeof(double)), p->rhs = calloc(m, sizeof(double));
	if (!p->H || !p->grad || !p->dx || !p->z0 || !p->xt || !p->Z || !p->K || !p->S || !p->rhs)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s->where[i] >= 0 && p->dv[i] < 0)
			p->K[p->core[s->where[i]]] += p->C[i] / p->xf[i];
	return true;
}

/*
 * A strictly feasible start from deadlines that fit every path (s->d_ns): every free deadline
 * moves 2 % of the way back to C, which leaves every path that has any room some slack; one still
 * at C (no room then) gets half its paths' slack, shared by the free tasks at C on them; potentials
 * are the longest finish times plus beta times the hop depth (every edge gets beta of slack, every
 * sink half its slack). False when some sink has no slack at all (then no interior exists).
 */
static bool ipm_start(struct ipm *p, const struct opt_sol *s, double *x, double *fwd, double *bwd, double *hop)
{
	const struct opt_inst *in = p->in;
	const size_t *topo = pd_dags_topo(in->dags);
	for (size_t i = 0; i < p->n; i++)
		if (p->dv[i] >= 0) {
			double d = fmin(s->d_ns[i] * 1e-6, p->hi[i]);
			x[p->dv[i]] = p->C[i] + 0.98 * fmax(d - p->C[i], 0);
		}
	/* free tasks with no room yet: indicator sweeps count them per path */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t t = 0; t < p->n; t++) {
			size_t i = topo[t];
			const struct pd_task *T = &in->tasks[i];
			double m = 0, h = 0;
			for (size_t q = 0; q < T->n_preds; q++) {
				m = fmax(m, fwd[T->preds[q]]);
				h = fmax(h, hop[T->preds[q]]);
			}
			bool at_c = p->dv[i] >= 0 && x[p->dv[i]] - p->C[i] <= 1e-9 * p->C[i];
			fwd[i] = m + delay(p, x, i);
			hop[i] = h + (pass == 0 ? (at_c ? 1 : 0) : 1);
		}
		for (size_t t = p->n; t-- > 0;) {
			size_t i = topo[t];
			const struct pd_task *T = &in->tasks[i];
			double m = 0;
			for (size_t q = 0; q < T->n_succs; q++)
				m = fmax(m, bwd[T->succs[q]]);
			bwd[i] = m + delay(p, x, i);
		}
		if (pass == 1)
			break;
		/* the at-C tasks on the paths from each task: the indicator swept backwards (xt is scratch
		 * here, indexed by task: nv >= n) */
		double *cb = p->xt;
		for (size_t t = p->n; t-- > 0;) {
			size_t i = topo[t];
			const struct pd_task *T = &in->tasks[i];
			double m = 0;
			for (size_t q = 0; q < T->n_succs; q++)
				m = fmax(m, cb[T->succs[q]]);
			bool at_c = p->dv[i] >= 0 && x[p->dv[i]] - p->C[i] <= 1e-9 * p->C[i];
			cb[i] = m + (at_c ? 1 : 0);
		}
		for (size_t i = 0; i < p->n; i++) {
			if (p->dv[i] < 0 || x[p->dv[i]] - p->C[i] > 1e-9 * p->C[i])
				continue;
			double room = p->Dp[i] - (fwd[i] + bwd[i] - delay(p, x, i));
			double cnt = hop[i] + cb[i] - 1;
			if (!(room > 0))
				return false;
			x[p->dv[i]] += fmin(0.5 * room / cnt, 0.5 * (p->hi[i] - p->C[i]));
		}
	}
	double beta = INFINITY;
	for (size_t i = 0; i < p->n; i++)
		if (!in->tasks[i].n_succs)
			beta = fmin(beta, 0.5 * (p->Dp[i] - fwd[i]) / hop[i]);
	if (!(beta > 0) || !isfinite(beta))
		return false;
	for (size_t i = 0; i < p->n; i++)
		x[p->fv[i]] = fwd[i] + beta * hop[i];
	return true;
}

int opt_deadlines_ipm(const struct opt_inst *in, struct opt_sol *s, const double *e, double slack_frac, double stop,
		      double deadline_s, double *best)
{
	struct ipm p = {0};
	size_t n = in->n_tasks;
	size_t *task_block = calloc(n + 1, sizeof(size_t));
	double *x = NULL, *fwd = calloc(n + 1, sizeof(double)), *bwd = calloc(n + 1, sizeof(double));
	double *hop = calloc(n + 1, sizeof(double)), *gk = NULL, *gk2 = NULL;
	int decided = 0;
	if (!task_block || !fwd || !bwd || !hop || !ipm_setup(&p, in, s, e, slack_frac, task_block))
		goto out;
	x = calloc(p.nv + 1, sizeof(double)), gk = calloc(p.nk + 1, sizeof(double)), gk2 = calloc(p.nk + 1, sizeof(double));
	if (!x || !gk || !gk2 || !p.nk || !ipm_start(&p, s, x, fwd, bwd, hop))
		goto out;
	densities(&p, s, x, gk);
	double lam = 0;
	for (size_t k = 0; k < p.nk; k++)
		lam = fmax(lam, gk[k]);
	lam = lam * 1.01 + 1e-12;
	/* t: the barrier's weight on lambda; the gap M / t starts at lambda itself (the start is no
	 * better centred than that) and falls 3-fold per centring (8-fold: on Xavier 120-task packs a
	 * third of the calls did not centre within 50 Newton steps, 3- and 5-fold none; 3 was faster) */
	double t = p.M / lam;
	for (int outer = 0; outer < 40 && !decided; outer++) {
		bool centred = false;
		for (int it = 0; it < 50 && !centred; it++) {
			if (opt_now_s() >= deadline_s)
				goto out;
			double f = barrier(&p, s, x, lam, t, gk), glam;
			if (!isfinite(f))
				goto out;
			/* every iterate is strictly feasible: its true max density may already do */
			double m = 0;
			for (size_t k = 0; k < p.nk; k++)
				m = fmax(m, gk[k]);
			m /= in->cap;
			if (m < *best) {
				*best = m;
				for (size_t i = 0; i < n; i++)
					if (p.dv[i] >= 0)
						s->d_ns[i] = x[p.dv[i]] * 1e6;
			}
			if (*best <= stop && p.M / t <= OPT_IPM_AIM * lam) {
				decided = 1;
				goto out;
			}
			assemble(&p, s, x, lam, t, gk, &glam, task_block);
			double dlam;
			if (!newton_step(&p, s, x, lam, gk, glam, &dlam))
				goto out;
			double dec = glam * dlam;
			for (size_t v = 0; v < p.nv; v++)
				dec += p.grad[v] * p.dx[v];
			if (-dec <= 1e-7) { /* Newton decrement^2: f is within it of the centre's */
				centred = true;
				break;
			}
			double a = 1.0, nf = INFINITY;
			for (int bt = 0; bt < 60; bt++, a *= 0.5) {
				for (size_t v = 0; v < p.nv; v++)
					p.xt[v] = x[v] + a * p.dx[v];
				nf = barrier(&p, s, p.xt, lam + a * dlam, t, gk2);
				if (nf <= f + 0.25 * a * dec)
					break;
			}
			if (!(nf <= f + 0.25 * a * dec))
				goto out; /* no progress: rounding has the upper hand */
			memcpy(x, p.xt, p.nv * sizeof(double));
			lam += a * dlam;
		}
		if (!centred)
			goto out; /* the bound below needs the centre */
		/* centred for t: lam - M / t is at most the optimum */
		double lb = (lam - 2 * p.M / t) / in->cap; /* 2: the centre is approximate */
		if ((stop > 0 && lb > stop * (1 + 1e-6)) || p.M / t <= 1e-8 * lam || (*best <= stop && p.M / t <= OPT_IPM_AIM * lam))
			decided = 1;
		t *= 3;
	}
out:
	ipm_free(&p);
	free(task_block), free(x), free(fwd), free(bwd), free(hop), free(gk), free(gk2);
	return decided;
}
