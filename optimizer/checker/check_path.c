/* SPDX-License-Identifier: MIT */
/*
 * check_path.c - end to end: every source->sink path of every DAG,
 *     sum_{CPU tasks on the path} d_i + sum_{accelerated tasks} R_i <= D_g,
 * with finish potentials F_i = delta_i + max_{p in preds(i)} F_p over a topological order (no path
 * enumeration). delta_i is the plan's d_i for CPU tasks and max(R_i, FIFO bound) for accelerated
 * ones. Exact in __int128, clamped far above any deadline.
 */
#include "optimizer/checker/check_impl.h"

#include <stdlib.h>
#include <string.h>

#define CK_CLAMP (INT64_MAX / 4)

/* Critical path ending at sink s, as "a -> b -> c" (the tail kept when it does not fit). */
static void path_text(const struct ck *c, const long *arg, size_t s, char *buf, size_t n)
{
	size_t chain[64];
	size_t k = 0;
	for (long i = (long)s; i >= 0 && k < 64; i = arg[i])
		chain[k++] = (size_t)i;
	size_t len = 0;
	buf[0] = '\0';
	for (size_t j = k; j-- > 0;) {
		const char *nm = pd_dags_task(c->dags, chain[j])->name;
		int w = snprintf(buf + len, n - len, "%s%s", len ? " -> " : "", nm);
		if (w < 0 || (size_t)w >= n - len)
			break;
		len += (size_t)w;
	}
}

/* Kahn's order of DAG g's tasks into order[] (own computation: the checker trusts no derived data). */
static size_t topo_order(const struct ck *c, const struct pd_dag *d, size_t *order, size_t *indeg)
{
	size_t head = 0, tail = 0;
	for (size_t i = d->first_task; i < d->first_task + d->n_tasks; i++) {
		indeg[i] = pd_dags_task(c->dags, i)->n_preds;
		if (indeg[i] == 0)
			order[tail++] = i;
	}
	while (head < tail) {
		const struct pd_task *t = pd_dags_task(c->dags, order[head++]);
		for (size_t s = 0; s < t->n_succs; s++)
			if (--indeg[t->succs[s]] == 0)
				order[tail++] = t->succs[s];
	}
	return tail; /* < n_tasks only for a cyclic graph, which the reader refuses */
}

static void check_dag(struct ck *c, size_t g, size_t *order, size_t *indeg, int64_t *F, long *arg)
{
	const struct pd_dag *d = pd_dags_dag(c->dags, g);
	struct pd_check_dag *out = &c->r->dags[g];
	out->dag = g;
	out->deadline_ns = d->deadline_ns;
	int64_t worst = 0;
	size_t n = topo_order(c, d, order, indeg);
	for (size_t k = d->first_task; k < d->first_task + d->n_tasks; k++)
		F[k] = CK_CLAMP; /* tasks left out of the order (a cycle) can never meet a deadline */
	for (size_t k = 0; k < n; k++) {
		size_t i = order[k];
		const struct pd_task *t = pd_dags_task(c->dags, i);
		__int128 best = 0;
		arg[i] = -1;
		for (size_t p = 0; p < t->n_preds; p++) {
			size_t q = t->preds[p];
			if (F[q] > best || arg[i] < 0) {
				best = F[q] > best ? F[q] : best;
				arg[i] = (long)q;
			}
		}
		__int128 f = best + (c->delay_ns[i] > 0 ? c->delay_ns[i] : 0);
		F[i] = f > CK_CLAMP ? CK_CLAMP : (int64_t)f;
		if (pd_dags_task_is_sink(t) && F[i] > worst)
			worst = F[i];
	}
	out->finish_ns = worst;
	out->relative_slack = d->deadline_ns > 0 ? (double)(d->deadline_ns - worst) / (double)d->deadline_ns : -1.0;
	if (out->relative_slack < c->r->min_relative_slack)
		c->r->min_relative_slack = out->relative_slack;
	for (size_t k = d->first_task; k < d->first_task + d->n_tasks; k++) {
		const struct pd_task *t = pd_dags_task(c->dags, k);
		if (!pd_dags_task_is_sink(t) || F[k] <= d->deadline_ns)
			continue;
		char path[160];
		path_text(c, arg, k, path, sizeof(path));
		ck_add(c, PD_CK_PATH, (double)F[k], (double)d->deadline_ns, "ns", "dag %s: %s", d->name, path);
	}
}

void ck_paths(struct ck *c)
{
	size_t nd = pd_dags_count(c->dags);
	c->r->dags = calloc(nd ? nd : 1, sizeof(*c->r->dags));
	int64_t *F = calloc(c->n_tasks + 1, sizeof(int64_t));
	long *arg = calloc(c->n_tasks + 1, sizeof(long));
	size_t *order = calloc(c->n_tasks + 1, sizeof(size_t));
	size_t *indeg = calloc(c->n_tasks + 1, sizeof(size_t));
	if (!c->r->dags || !F || !arg || !order || !indeg) {
		c->oom = true;
		goto out;
	}
	c->r->n_dags = nd;
	for (size_t g = 0; g < nd; g++)
		check_dag(c, g, order, indeg, F, arg);
out:
	free(order);
	free(indeg);
	free(F);
	free(arg);
}
