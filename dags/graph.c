/* SPDX-License-Identifier: MIT */
/*
 * The precedence graph: rule checks (self-loops, duplicate edges, cycles), CSR adjacency, Kahn's
 * topological order, and longest paths over finish potentials.
 *
 * Invariant kept by pd_dags__link: topo[first_task .. first_task + n_tasks) of DAG g is a permutation
 * of g's tasks in which every task follows all its predecessors; the order is deterministic (sources
 * in index order, then FIFO in edge order).
 */
#include "dags/dags_impl.h"

#include <stdlib.h>
#include <string.h>

/* Sort key of an edge for duplicate detection; idx breaks ties so the first occurrence wins. */
struct ekey {
	size_t from, to, idx;
};

static int ekey_cmp(const void *pa, const void *pb)
{
	const struct ekey *a = pa, *b = pb;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	if (a->to != b->to)
		return a->to < b->to ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Flags self-loops and duplicates of DAG G in skip[] (indexed by edge) and reports them. */
static int check_edges(const pd_dagset *s, const struct pd_dag *G, bool *skip, pd_diags *d)
{
	int bad = 0;
	struct ekey *k = malloc((G->n_edges ? G->n_edges : 1) * sizeof(*k));
	if (!k)
		return -1;
	for (size_t e = 0; e < G->n_edges; e++) {
		const struct pd_edge *E = &G->edges[e];
		k[e] = (struct ekey){E->from, E->to, e};
		if (E->from == E->to) {
			pd_diags_add(d, E->loc, "self-loop on task '%s' in DAG '%s'", s->tasks[E->from].name, G->name);
			skip[e] = true;
			bad = 1;
		}
	}
	qsort(k, G->n_edges, sizeof(*k), ekey_cmp);
	for (size_t j = 1; j < G->n_edges; j++) {
		if (k[j].from != k[j - 1].from || k[j].to != k[j - 1].to || k[j].from == k[j].to)
			continue;
		size_t first = j - 1;
		while (first > 0 && k[first - 1].from == k[j].from && k[first - 1].to == k[j].to)
			first--;
		const struct pd_edge *E = &G->edges[k[j].idx];
		pd_diags_add(d, E->loc, "duplicate edge [%s, %s] in DAG '%s' (first at line %d)", s->tasks[E->from].name,
			     s->tasks[E->to].name, G->name, G->edges[k[first].idx].loc.line);
		skip[k[j].idx] = true;
		bad = 1;
	}
	free(k);
	return bad;
}

/* Builds CSR preds/succs of DAG G from its non-skipped edges (file order). */
static int build_csr(pd_dagset *s, const struct pd_dag *G, const bool *skip)
{
	size_t n_ok = 0;
	for (size_t e = 0; e < G->n_edges; e++)
		n_ok += !skip[e];
	size_t *pred = pd_arena_calloc(s->arena, n_ok ? n_ok : 1, sizeof(size_t));
	size_t *succ = pd_arena_calloc(s->arena, n_ok ? n_ok : 1, sizeof(size_t));
	if (!pred || !succ)
		return -1;
	struct pd_task *T = &s->tasks[G->first_task];
	for (size_t i = 0; i < G->n_tasks; i++)
		T[i].n_preds = T[i].n_succs = 0;
	for (size_t e = 0; e < G->n_edges; e++) {
		if (skip[e])
			continue;
		s->tasks[G->edges[e].from].n_succs++;
		s->tasks[G->edges[e].to].n_preds++;
	}
	size_t po = 0, so = 0;
	for (size_t i = 0; i < G->n_tasks; i++) { /* slices first, filled below with a running count */
		T[i].preds = pred + po;
		T[i].succs = succ + so;
		po += T[i].n_preds;
		so += T[i].n_succs;
		T[i].n_preds = T[i].n_succs = 0;
	}
	for (size_t e = 0; e < G->n_edges; e++) {
		if (skip[e])
			continue;
		struct pd_task *f = &s->tasks[G->edges[e].from], *t = &s->tasks[G->edges[e].to];
		((size_t *)f->succs)[f->n_succs++] = G->edges[e].to;
		((size_t *)t->preds)[t->n_preds++] = G->edges[e].from;
	}
	return 0;
}

/* Reports one cycle among the tasks Kahn could not order (indeg[] > 0): each of them has a pred that
 * is also left, so walking preds from the smallest one must revisit a task. */
static void report_cycle(const pd_dagset *s, const struct pd_dag *G, const size_t *indeg, pd_diags *d)
{
	size_t n = G->n_tasks, f = G->first_task, v = SIZE_MAX;
	int *seen = malloc(n * sizeof(int));
	size_t *walk = malloc(n * sizeof(size_t));
	if (!seen || !walk)
		goto out;
	for (size_t i = 0; i < n; i++) {
		seen[i] = -1;
		if (v == SIZE_MAX && indeg[i] > 0)
			v = i;
	}
	size_t len = 0;
	while (seen[v] < 0) {
		seen[v] = (int)len;
		walk[len++] = v;
		const struct pd_task *t = &s->tasks[f + v];
		for (size_t p = 0; p < t->n_preds; p++) {
			if (indeg[t->preds[p] - f] > 0) {
				v = t->preds[p] - f;
				break;
			}
		}
	}
	/* walk[start..len) is the cycle backwards: walk[j+1] -> walk[j] is an edge, and so is
	 * walk[start] -> walk[len-1]. Print it forwards from its smallest task, back to that task. */
	size_t start = (size_t)seen[v], best = start;
	for (size_t j = start; j < len; j++)
		if (walk[j] < walk[best])
			best = j;
	pd_buf b;
	pd_buf_init(&b);
	size_t clen = len - start;
	for (size_t k = 0; k <= clen; k++) {
		size_t j = start + (best - start + clen - k % clen) % clen;
		if (k > 8 && k < clen) {
			if (k == 9)
				pd_buf_printf(&b, " -> ...");
			continue;
		}
		pd_buf_printf(&b, "%s%s", k ? " -> " : "", s->tasks[f + walk[j]].name);
	}
	pd_diags_add(d, s->tasks[f + walk[best]].loc, "cycle in DAG '%s': %s", G->name, b.data ? b.data : "");
	pd_buf_free(&b);
out:
	free(seen);
	free(walk);
}

/* Kahn's algorithm over DAG G; writes topo[first_task...]. Returns 0, or 1 when a cycle remains. */
static int order(pd_dagset *s, const struct pd_dag *G, pd_diags *d)
{
	size_t n = G->n_tasks, f = G->first_task, head = 0, tail = 0;
	size_t *indeg = malloc((n ? n : 1) * sizeof(size_t));
	size_t *q = s->topo + f;
	if (!indeg)
		return -1;
	for (size_t i = 0; i < n; i++) {
		indeg[i] = s->tasks[f + i].n_preds;
		if (indeg[i] == 0)
			q[tail++] = f + i;
	}
	while (head < tail) {
		const struct pd_task *t = &s->tasks[q[head++]];
		for (size_t k = 0; k < t->n_succs; k++)
			if (--indeg[t->succs[k] - f] == 0)
				q[tail++] = t->succs[k];
	}
	int rc = 0;
	if (tail < n) {
		report_cycle(s, G, indeg, d);
		rc = 1;
	}
	free(indeg);
	return rc;
}

int pd_dags__link(pd_dagset *s, pd_diags *d)
{
	int bad = 0;
	for (size_t g = 0; g < s->n_dags; g++) {
		const struct pd_dag *G = &s->dags[g];
		bool *skip = calloc(G->n_edges ? G->n_edges : 1, sizeof(bool));
		if (!skip)
			return -1;
		int r = check_edges(s, G, skip, d);
		if (r >= 0 && build_csr(s, G, skip) == 0)
			r |= order(s, G, d);
		else
			r = -1;
		free(skip);
		if (r < 0)
			return -1;
		bad |= r;
	}
	return bad ? -1 : 0;
}

/* ---------------------------------------------------------------- longest paths */
static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

int64_t pd_dags_longest_path(const pd_dagset *s, size_t g, const int64_t *w, int64_t *finish, int64_t *tail)
{
	const struct pd_dag *G = &s->dags[g];
	const size_t *topo = s->topo + G->first_task;
	int64_t *F = malloc((G->n_tasks ? G->n_tasks : 1) * sizeof(int64_t));
	int64_t best = INT64_MIN;
	if (!F)
		return INT64_MIN;
	for (size_t k = 0; k < G->n_tasks; k++) { /* F_i = w_i + max over preds F_p */
		size_t i = topo[k];
		const struct pd_task *t = &s->tasks[i];
		int64_t m = 0;
		for (size_t p = 0; p < t->n_preds; p++) {
			int64_t fp = F[t->preds[p] - G->first_task];
			if (p == 0 || fp > m)
				m = fp;
		}
		F[i - G->first_task] = sat_add(w[i], m);
		if (pd_dags_task_is_sink(t) && F[i - G->first_task] > best)
			best = F[i - G->first_task];
		if (finish)
			finish[i] = F[i - G->first_task];
	}
	for (size_t k = G->n_tasks; tail && k-- > 0;) { /* tail_i = w_i + max over succs tail_s */
		size_t i = topo[k];
		const struct pd_task *t = &s->tasks[i];
		int64_t m = 0;
		for (size_t j = 0; j < t->n_succs; j++)
			if (j == 0 || tail[t->succs[j]] > m)
				m = tail[t->succs[j]];
		tail[i] = sat_add(w[i], m);
	}
	free(F);
	return best;
}

double pd_dags_longest_path_d(const pd_dagset *s, size_t g, const double *w, double *finish, double *tail)
{
	const struct pd_dag *G = &s->dags[g];
	const size_t *topo = s->topo + G->first_task;
	double *F = malloc((G->n_tasks ? G->n_tasks : 1) * sizeof(double));
	double best = -__builtin_inf();
	if (!F)
		return best;
	for (size_t k = 0; k < G->n_tasks; k++) {
		size_t i = topo[k];
		const struct pd_task *t = &s->tasks[i];
		double m = 0;
		for (size_t p = 0; p < t->n_preds; p++) {
			double fp = F[t->preds[p] - G->first_task];
			if (p == 0 || fp > m)
				m = fp;
		}
		F[i - G->first_task] = w[i] + m;
		if (pd_dags_task_is_sink(t) && F[i - G->first_task] > best)
			best = F[i - G->first_task];
		if (finish)
			finish[i] = F[i - G->first_task];
	}
	for (size_t k = G->n_tasks; tail && k-- > 0;) {
		size_t i = topo[k];
		const struct pd_task *t = &s->tasks[i];
		double m = 0;
		for (size_t j = 0; j < t->n_succs; j++)
			if (j == 0 || tail[t->succs[j]] > m)
				m = tail[t->succs[j]];
		tail[i] = w[i] + m;
	}
	free(F);
	return best;
}
