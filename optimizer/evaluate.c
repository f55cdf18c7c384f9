/* SPDX-License-Identifier: MIT */
/*
 * The optimizer's own exact evaluator. Solvers work in floating point with a capacity shrunk by eta;
 * before anything leaves the optimizer, the integer plan (deadlines floored to whole ns, WCETs
 * rounded up by pd_platform_wcet_at) is checked here against the unshrunk rules of docs/MODEL.md:
 *
 *   - CPU task: 1024 ns <= runtime Q = runtime_at (WCET + per-job overhead, margin) <= deadline <= period;
 *   - per core: sum of density Q_i / d_i <= U_max - fair share (long double);
 *   - per FIFO server: sum (L_j + reconfig) / T_j <= 1; R_i = sum over the server of (L_j + reconfig);
 *   - per DAG: finish F_i = max_pred F_p + (d_i or R_i) <= D at every sink.
 */
#include "optimizer/opt_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define DL_MIN_RUNTIME_NS 1024

static bool fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *why, size_t n, const char *fmt, ...)
{
	if (why && n) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, n, fmt, ap);
		va_end(ap);
	}
	return false;
}

static const char *tname(const struct opt_inst *in, size_t i) { return pd_dags_task(in->dags, i)->name; }
static const char *dname(const struct opt_inst *in, size_t i)
{
	return pd_dags_dag(in->dags, in->task_dag[i])->name;
}

static bool check_tasks(const struct opt_inst *in, struct opt_sol *s, long double *load, char *why, size_t n)
{
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (s->where[i] < 0)
			continue;
		int64_t C = opt_exec_ns(in, s, i), d = s->dl_ns[i];
		if (C < DL_MIN_RUNTIME_NS)
			return fail(why, n, "task %s/%s: runtime %lld ns below the kernel floor %d ns", dname(in, i),
				    tname(in, i), (long long)C, DL_MIN_RUNTIME_NS);
		if (d < C)
			return fail(why, n, "task %s/%s: deadline %.0f ns below its runtime %.0f ns", dname(in, i), tname(in, i),
				    (double)d, (double)C);
		if (d > in->T_ns[i])
			return fail(why, n, "task %s/%s: deadline %.0f ns above the period %.0f ns", dname(in, i),
				    tname(in, i), (double)d, (double)in->T_ns[i]);
		load[s->where[i]] += (long double)C / (long double)d;
	}
	for (size_t c = 0; c < in->n_cores; c++)
		if (load[c] > (long double)in->cap_raw) {
			if (why && n)
				snprintf(why, n, "core %zu (island %s): density %.9f above the capacity %.9f", c,
					 pd_platform_island(in->plat, in->core_isl[c])->name, (double)load[c], in->cap_raw);
			return false;
		}
	return true;
}

static bool check_servers(const struct opt_inst *in, struct opt_sol *s, int64_t *r, char *why, size_t n)
{
	double u = opt_fifo_response(in, s, r);
	if (u > 1.0) {
		if (why && n)
			snprintf(why, n, "an accelerator queue is over capacity (utilisation %.6f > 1)", u);
		return false;
	}
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (s->where[i] >= 0)
			continue;
		s->dl_ns[i] = r[i];
		size_t v = opt_where_server_of(s->where[i]);
		if (v >= in->n_srv || in->impl[i * in->n_srv + v] < 0)
			return fail(why, n, "task %s/%s: placed on an accelerator it has no implementation for",
				    dname(in, i), tname(in, i));
	}
	return true;
}

/* Finish potentials per DAG; the minimum relative slack over DAGs into *slack. */
static bool check_paths(const struct opt_inst *in, struct opt_sol *s, double *slack, char *why, size_t n)
{
	int64_t *fin = calloc(in->n_tasks ? in->n_tasks : 1, sizeof(int64_t));
	if (!fin)
		return fail(why, n, "out of memory");
	bool ok = true;
	*slack = INFINITY;
	for (size_t g = 0; g < in->n_dags && ok; g++) {
		const struct pd_dag *G = pd_dags_dag(in->dags, g);
		int64_t end = pd_dags_longest_path(in->dags, g, s->dl_ns, fin, NULL);
		if (end > G->deadline_ns) {
			ok = fail(why, n, "DAG %s: a path takes %lld ns, more than the deadline %lld ns", G->name,
				  (long long)end, (long long)G->deadline_ns);
		}
		*slack = fmin(*slack, (double)(G->deadline_ns - end) / (double)G->deadline_ns);
	}
	free(fin);
	return ok;
}

bool opt_evaluate(const struct opt_inst *in, struct opt_sol *s, char *why, size_t n)
{
	s->ok = false;
	for (size_t i = 0; i < in->n_tasks; i++)
		if (s->where[i] >= 0)
			s->dl_ns[i] = (int64_t)floor(fmin(s->d_ns[i], (double)INT64_MAX / 2));
	long double *load = calloc(in->n_cores ? in->n_cores : 1, sizeof(long double));
	int64_t *r = calloc(in->n_tasks ? in->n_tasks : 1, sizeof(int64_t));
	bool ok = load && r && check_tasks(in, s, load, why, n) && check_servers(in, s, r, why, n);
	double slack = -INFINITY;
	if (ok)
		ok = check_paths(in, s, &slack, why, n);
	free(load);
	free(r);
	s->power_w = opt_power_w(in, s);
	s->slack = slack;
	s->ok = ok;
	return ok;
}
