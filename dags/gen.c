/* SPDX-License-Identifier: MIT */
/*
 * Random DAG sets for experiments (`powerdag gen`), reproducible per seed (pd_rng, no global state).
 *
 * Shape: each DAG has one source (t0), one sink (t<n-1>) and n-2 inner tasks spread over L-2 inner
 * layers (L drawn in [layers_min, layers_max], at least one task per layer). Edges only join
 * adjacent layers: each pair with probability edge_prob, then every task gets at least one
 * predecessor in the layer before it and at least one successor in the layer after it, which is
 * what makes t0 the only source and t<n-1> the only sink.
 *
 * Timing: period T drawn from {20, 25, 40, 50, 80, 100} ms, D = T. The total utilisation U is split
 * over the DAGs, then over each DAG's tasks, with UUniFast; a draw is discarded (UUniFast-Discard)
 * when a task would get u > 1 or when the DAG's critical path would exceed its deadline at f_ref
 * (sum of u along the path > 1: infeasible on any capacity-1.0 platform). Among the accepted draws
 * of a DAG the first whose path takes at most half of D (REALISTIC_PATH_UTIL) is kept, else the one
 * with the shortest path: a path near D is schedulable only with each of its tasks alone on a core
 * at top speed, while half of D leaves the optimizer room to share cores and lower frequencies.
 * Only a DAG share that cannot meet the hard limit in TRIES draws makes the whole split redrawn.
 * The requested U is honoured (within 1 %, in practice within 1e-4): a task whose share u T falls below
 * min_wcet_ns gets exactly min_wcet_ns, and the utilisation this adds is taken back from the other
 * tasks in proportion to their shares (repeated until no further task falls below the floor; the
 * others only shrink, so u <= 1 and the critical-path bound still hold). When the tasks at the floor
 * alone already exceed U (many tasks, a low U), the request cannot be met and is refused with the
 * smallest U these tasks and periods allow, instead of silently generating a heavier set. C is
 * rounded to 1 us with the rounding error carried to the next task, so the sum stays within one
 * rounding (0.5us / 20ms) of U. bcet is drawn in [C/2, C], a non-scalable part C_fixed in [0, C/10).
 *
 * Accelerators: with probability accel_ratio a task gets a GPU or an FPGA implementation (and, one
 * time in four, the other one too), 2x-7x faster than its WCET; FPGA ones carry a bitstream named
 * <dag>_<task>.bin and a busy power of 50-400 mW, GPU ones 0.5-2.5 W.
 */
#include "dags/dags_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DAGS 1000
#define MAX_TASKS 1000 /* per DAG */
#define TRIES 200
#define REALISTIC_PATH_UTIL 0.5 /* preferred: critical path <= D/2 at f_ref (see above) */

static const int64_t periods_ms[] = {20, 25, 40, 50, 80, 100};

void pd_dags_gen_defaults(struct pd_gen_params *p)
{
	*p = (struct pd_gen_params){
		.n_dags = 3,
		.min_tasks = 5,
		.max_tasks = 10,
		.util = 1.6, /* the defaults' floor: 3 x 10 tasks x 1.024 ms / 20 ms = 1.54 at most */
		.accel_ratio = 0.0,
		.seed = 1,
		.layers_min = 3,
		.layers_max = 5,
		.edge_prob = 0.4,
		.min_wcet_ns = 1024000,
	};
}

static int check_params(const struct pd_gen_params *p, pd_err *e)
{
	if (p->n_dags < 1 || p->n_dags > MAX_DAGS)
		return pd_err_set(e, PD_EXIT_USAGE, "number of DAGs must be in [1, %d]", MAX_DAGS);
	if (p->min_tasks < 1 || p->min_tasks > p->max_tasks || p->max_tasks > MAX_TASKS)
		return pd_err_set(e, PD_EXIT_USAGE, "tasks per DAG MIN:MAX needs 1 <= MIN <= MAX <= %d", MAX_TASKS);
	if (!isfinite(p->util) || p->util <= 0 || p->util > (double)p->n_dags * p->min_tasks)
		return pd_err_set(e, PD_EXIT_USAGE, "utilisation must be > 0 and at most dags x min tasks (%u)",
				  p->n_dags * p->min_tasks);
	if (!(p->accel_ratio >= 0 && p->accel_ratio <= 1))
		return pd_err_set(e, PD_EXIT_USAGE, "accelerator ratio must be in [0, 1]");
	if (p->layers_min < 2 || p->layers_min > p->layers_max || p->layers_max > MAX_TASKS)
		return pd_err_set(e, PD_EXIT_USAGE, "layers MIN:MAX needs 2 <= MIN <= MAX");
	if (!(p->edge_prob >= 0 && p->edge_prob <= 1))
		return pd_err_set(e, PD_EXIT_USAGE, "edge probability must be in [0, 1]");
	if (p->min_wcet_ns < 0 || p->min_wcet_ns > 10 * PD_NS_PER_MS)
		return pd_err_set(e, PD_EXIT_USAGE, "minimum WCET must be in [0, 10ms]");
	return 0;
}

/* UUniFast (Bini & Buttazzo): n shares summing to total, uniformly over the simplex. */
static void uunifast(pd_rng *r, double total, size_t n, double *u)
{
	double sum = total;
	for (size_t i = 0; i + 1 < n; i++) {
		double next = sum * pow(pd_rng_uniform(r), 1.0 / (double)(n - 1 - i));
		u[i] = sum - next;
		sum = next;
	}
	u[n - 1] = sum;
}

/* One DAG's shape under construction: tasks in layer order, edges between adjacent layers. */
struct shape {
	size_t n, n_edges, cap;
	size_t *layer_start; /* n_layers + 1 entries */
	size_t n_layers;
	size_t (*edges)[2]; /* local indices */
};

static int add_edge(struct shape *sh, size_t from, size_t to)
{
	if (sh->n_edges == sh->cap) {
		size_t cap = sh->cap ? 2 * sh->cap : 16;
		void *v = realloc(sh->edges, cap * sizeof(*sh->edges));
		if (!v)
			return -1;
		sh->edges = v;
		sh->cap = cap;
	}
	sh->edges[sh->n_edges][0] = from;
	sh->edges[sh->n_edges][1] = to;
	sh->n_edges++;
	return 0;
}

static size_t pick(pd_rng *r, size_t lo, size_t hi_excl)
{
	return (size_t)pd_rng_range(r, (int64_t)lo, (int64_t)hi_excl - 1);
}

/* Links layer l-1 to layer l (see the top comment for the rules). */
static int link_layers(pd_rng *r, const struct pd_gen_params *p, struct shape *sh, size_t l)
{
	size_t a0 = sh->layer_start[l - 1], a1 = sh->layer_start[l], b1 = sh->layer_start[l + 1];
	bool *has_succ = calloc(a1 - a0, sizeof(bool));
	int rc = -1;
	if (!has_succ)
		return -1;
	for (size_t v = a1; v < b1; v++) {
		bool any = false;
		for (size_t u = a0; u < a1; u++) {
			if (pd_rng_uniform(r) < p->edge_prob) {
				if (add_edge(sh, u, v) < 0)
					goto out;
				any = has_succ[u - a0] = true;
			}
		}
		size_t u = any ? 0 : pick(r, a0, a1);
		if (!any && add_edge(sh, u, v) < 0)
			goto out;
		if (!any)
			has_succ[u - a0] = true;
	}
	for (size_t u = a0; u < a1; u++)
		if (!has_succ[u - a0] && add_edge(sh, u, pick(r, a1, b1)) < 0)
			goto out;
	rc = 0;
out:
	free(has_succ);
	return rc;
}

static int draw_shape(pd_rng *r, const struct pd_gen_params *p, size_t n, struct shape *sh)
{
	size_t L = n == 1 ? 1 : n == 2 ? 2 : (size_t)pd_rng_range(r, p->layers_min, p->layers_max);
	if (n > 2)
		L = L < 3 ? 3 : L > n ? n : L;
	sh->n = n;
	sh->n_layers = L;
	sh->layer_start = calloc(L + 1, sizeof(size_t));
	size_t *size = calloc(L, sizeof(size_t));
	if (!sh->layer_start || !size) {
		free(size);
		return -1;
	}
	for (size_t l = 0; l < L; l++)
		size[l] = 1;
	for (size_t k = L; k < n; k++) /* the rest go to random inner layers */
		size[pick(r, 1, L - 1)]++;
	for (size_t l = 0; l < L; l++)
		sh->layer_start[l + 1] = sh->layer_start[l] + size[l];
	free(size);
	for (size_t l = 1; l < L; l++)
		if (link_layers(r, p, sh, l) < 0)
			return -1;
	return 0;
}

/* Largest sum of u along a path; edges come layer by layer, so preds are final before use. */
static double critical_util(const struct shape *sh, const double *u, double *best_in)
{
	double m = 0;
	memset(best_in, 0, sh->n * sizeof(double));
	for (size_t k = 0; k < sh->n_edges; k++) {
		size_t a = sh->edges[k][0], b = sh->edges[k][1];
		if (u[a] + best_in[a] > best_in[b])
			best_in[b] = u[a] + best_in[a];
	}
	for (size_t i = 0; i < sh->n; i++)
		m = u[i] + best_in[i] > m ? u[i] + best_in[i] : m;
	return m;
}

/* UUniFast-Discard of one DAG's share (see the top comment); 0 when a draw fits. */
static int draw_task_utils(pd_rng *r, const struct shape *sh, double u_dag, double *u, double *tmp, double *best)
{
	double best_path = 2.0; /* > 1: none yet */
	for (int t = 0; t < TRIES; t++) {
		uunifast(r, u_dag, sh->n, u);
		bool ok = true;
		for (size_t i = 0; i < sh->n; i++)
			ok &= u[i] <= 1.0;
		double path = ok ? critical_util(sh, u, tmp) : 2.0;
		if (path <= REALISTIC_PATH_UTIL)
			return 0;
		if (path <= 1.0 && path < best_path) {
			best_path = path;
			memcpy(best, u, sh->n * sizeof(double));
		}
	}
	if (best_path > 1.0)
		return -1;
	memcpy(u, best, sh->n * sizeof(double));
	return 0;
}

static int64_t round_us(double ns)
{
	int64_t v = llround(ns / 1000.0) * 1000;
	return v < 1000 ? 1000 : v;
}

static void draw_impl(pd_rng *r, pd_arena *a, const char *dag, struct pd_task *t, struct pd_impl *m,
		      enum pd_accel_kind kind)
{
	m->kind = kind;
	m->latency_ns = round_us((double)t->wcet_ns * (0.15 + 0.35 * pd_rng_uniform(r)));
	if (kind == PD_ACCEL_FPGA) {
		m->bitstream = pd_arena_printf(a, "%s_%s.bin", dag, t->name);
		m->power_uw = 1000 * pd_rng_range(r, 50, 400);
	} else {
		m->power_uw = 10000 * pd_rng_range(r, 50, 250);
	}
}

static int fill_task(pd_rng *r, const struct pd_gen_params *p, pd_dagset *s, size_t g, size_t i, int64_t wcet_ns)
{
	struct pd_dag *G = &s->dags[g];
	struct pd_task *t = &s->tasks[G->first_task + i];
	t->dag = g;
	t->name = pd_arena_printf(s->arena, "t%zu", i);
	t->wcet_ns = wcet_ns;
	t->has_bcet = true;
	t->bcet_ns = round_us((double)t->wcet_ns * (0.5 + 0.5 * pd_rng_uniform(r)));
	t->bcet_ns = t->bcet_ns > t->wcet_ns ? t->wcet_ns : t->bcet_ns;
	if (p->whole_wcet) { /* drawn all the same: the rest of the set does not depend on the choice */
		t->has_bcet = false;
		t->bcet_ns = t->wcet_ns;
	}
	t->wcet_fixed_ns = llround((double)t->wcet_ns * 0.1 * pd_rng_uniform(r) / 1000.0) * 1000;
	if (pd_rng_uniform(r) < p->accel_ratio) {
		enum pd_accel_kind k = pd_rng_uniform(r) < 0.5 ? PD_ACCEL_GPU : PD_ACCEL_FPGA;
		bool both = pd_rng_uniform(r) < 0.25;
		t->n_impls = both ? 2 : 1;
		t->impls = pd_arena_calloc(s->arena, t->n_impls, sizeof(*t->impls));
		if (!t->impls)
			return -1;
		draw_impl(r, s->arena, G->name, t, &t->impls[0], k);
		if (both)
			draw_impl(r, s->arena, G->name, t, &t->impls[1], k == PD_ACCEL_GPU ? PD_ACCEL_FPGA : PD_ACCEL_GPU);
	}
	return t->name ? 0 : -1;
}

/* Name, period, deadline and edges of DAG g (its tasks come later, once every period is known). */
static int fill_dag(pd_rng *r, pd_dagset *s, size_t g, const struct shape *sh)
{
	struct pd_dag *G = &s->dags[g];
	G->name = pd_arena_printf(s->arena, "dag%zu", g);
	G->period_ns = periods_ms[pick(r, 0, sizeof(periods_ms) / sizeof(periods_ms[0]))] * PD_NS_PER_MS;
	G->deadline_ns = G->period_ns;
	G->has_deadline = true;
	G->n_tasks = sh->n;
	G->edges = pd_arena_calloc(s->arena, sh->n_edges ? sh->n_edges : 1, sizeof(*G->edges));
	if (!G->name || !G->edges)
		return -1;
	G->n_edges = sh->n_edges;
	for (size_t k = 0; k < sh->n_edges; k++)
		G->edges[k] = (struct pd_edge){G->first_task + sh->edges[k][0], G->first_task + sh->edges[k][1], {0}};
	return 0;
}

/* WCETs for the shares u[] (global task index) and the drawn periods T[] that honour the requested
 * total utilisation with every WCET >= min_wcet_ns (top of file). Returns -1 when the floor alone
 * exceeds U; *floor_util is then the utilisation of every task at the floor. */
static int honour_util(const struct pd_gen_params *p, const int64_t *T, const double *u, size_t n, int64_t *wcet,
		       bool *at_floor, double *floor_util)
{
	double f = (double)p->min_wcet_ns, F = 0;
	for (size_t i = 0; i < n; i++) {
		F += f / (double)T[i];
		at_floor[i] = false;
	}
	*floor_util = F;
	if (F > p->util * (1 + 1e-9))
		return -1;
	double scale = 1;
	for (bool changed = true; changed;) { /* at most n rounds: each adds a task to the floor */
		double taken = 0, rest = 0;
		for (size_t i = 0; i < n; i++) {
			if (at_floor[i])
				taken += f / (double)T[i];
			else
				rest += u[i];
		}
		scale = rest > 0 ? (p->util - taken) / rest : 0;
		changed = false;
		for (size_t i = 0; i < n; i++)
			if (!at_floor[i] && scale * u[i] * (double)T[i] < f)
				at_floor[i] = changed = true;
	}
	double carry = 0; /* rounding error so far, in utilisation */
	for (size_t i = 0; i < n; i++) {
		if (at_floor[i]) {
			wcet[i] = p->min_wcet_ns;
			continue;
		}
		double exact = (scale * u[i] + carry) * (double)T[i];
		wcet[i] = round_us(exact);
		if (wcet[i] < p->min_wcet_ns)
			wcet[i] = p->min_wcet_ns;
		carry = (exact - (double)wcet[i]) / (double)T[i];
	}
	return 0;
}

static void free_shapes(struct shape *sh, size_t n)
{
	for (size_t g = 0; sh && g < n; g++) {
		free(sh[g].layer_start);
		free(sh[g].edges);
	}
	free(sh);
}

/* Splits U over the DAGs and each DAG's share over its tasks, retrying the whole split when a DAG
 * cannot take its share (UUniFast-Discard at both levels). u[] is indexed by global task index. */
static int draw_utils(pd_rng *r, const struct pd_gen_params *p, const struct shape *sh, size_t total, double *u)
{
	size_t nd = p->n_dags;
	double *ud = malloc(nd * sizeof(double)), *tmp = malloc(total * sizeof(double));
	double *best = malloc(total * sizeof(double));
	int rc = -1;
	if (!ud || !tmp || !best)
		goto out;
	for (int t = 0; t < TRIES && rc != 0; t++) {
		uunifast(r, p->util, nd, ud);
		rc = 0;
		for (size_t g = 0, off = 0; g < nd && rc == 0; off += sh[g].n, g++)
			rc = draw_task_utils(r, &sh[g], ud[g], u + off, tmp, best);
	}
out:
	free(ud);
	free(tmp);
	free(best);
	return rc;
}

pd_dagset *pd_dags_generate(const struct pd_gen_params *p, pd_err *e)
{
	pd_rng r;
	pd_dagset *s = NULL;
	double *u = NULL;
	int64_t *T = NULL, *wcet = NULL;
	bool *at_floor = NULL;
	size_t total = 0;
	if (check_params(p, e))
		return NULL;
	pd_rng_seed(&r, p->seed);
	struct shape *sh = calloc(p->n_dags, sizeof(*sh));
	if (!sh)
		goto oom;
	for (size_t g = 0; g < p->n_dags; g++) {
		size_t n = (size_t)pd_rng_range(&r, p->min_tasks, p->max_tasks);
		if (draw_shape(&r, p, n, &sh[g]) < 0)
			goto oom;
		total += n;
	}
	u = malloc(total * sizeof(double));
	if (!u)
		goto oom;
	if (draw_utils(&r, p, sh, total, u) < 0) {
		pd_err_set(e, PD_EXIT_USAGE,
			   "cannot split utilisation %g over these DAGs with every critical path within its deadline;"
			   " lower the utilisation or use more tasks per DAG", p->util);
		goto fail;
	}
	s = pd_dags__alloc(p->n_dags, total);
	if (!s)
		goto oom;
	for (size_t g = 0, off = 0; g < p->n_dags; off += sh[g].n, g++) {
		s->dags[g].first_task = off;
		if (fill_dag(&r, s, g, &sh[g]) < 0)
			goto oom;
	}
	T = malloc(total * sizeof(int64_t));
	wcet = malloc(total * sizeof(int64_t));
	at_floor = malloc(total * sizeof(bool));
	if (!T || !wcet || !at_floor)
		goto oom;
	for (size_t g = 0, off = 0; g < p->n_dags; off += sh[g].n, g++)
		for (size_t i = 0; i < sh[g].n; i++)
			T[off + i] = s->dags[g].period_ns;
	double floor_util;
	if (honour_util(p, T, u, total, wcet, at_floor, &floor_util) < 0) {
		char w[32];
		pd_err_set(e, PD_EXIT_USAGE,
			   "utilisation %g cannot be met: %zu tasks at the minimum WCET of %s already make %.4g with the "
			   "periods drawn; raise the utilisation, lower the minimum WCET or generate fewer tasks",
			   p->util, total, pd_fmt_duration(p->min_wcet_ns, w, sizeof(w)), floor_util);
		goto fail;
	}
	for (size_t g = 0, off = 0; g < p->n_dags; off += sh[g].n, g++)
		for (size_t i = 0; i < sh[g].n; i++)
			if (fill_task(&r, p, s, g, i, wcet[off + i]) < 0)
				goto oom;
	pd_diags d;
	pd_diags_init(&d);
	int lr = pd_dags__link(s, &d);
	pd_diags_free(&d);
	if (lr < 0) { /* cannot happen: the layered construction is acyclic by design */
		pd_err_set(e, PD_EXIT_ENV, "internal error: generated graph did not link");
		goto fail;
	}
	free_shapes(sh, p->n_dags);
	free(u);
	free(T);
	free(wcet);
	free(at_floor);
	return s;
oom:
	pd_err_set(e, PD_EXIT_ENV, "out of memory");
fail:
	pd_dags_free(s);
	free_shapes(sh, p->n_dags);
	free(u);
	free(T);
	free(wcet);
	free(at_floor);
	return NULL;
}
