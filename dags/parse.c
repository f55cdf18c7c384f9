/* SPDX-License-Identifier: MIT */
/*
 * DAG-set parser (docs/FORMATS.md section 2) over core's YAML tree. One pass records every problem it can see
 * (unknown/missing keys, types, units, value rules, names, edges), then, only when the file is
 * otherwise clean, pd_dags__link checks the graph rules (self-loops, duplicate edges, cycles).
 * Nothing half-built escapes: any diagnostic means NULL.
 *
 * Two passes over the tree: the first counts tasks so that the flat task array (global indices) is
 * allocated once; the second fills it. Both use the same shape test (count_tasks / tasks_seq).
 */
#include "dags/dags_impl.h"

#include <stdlib.h>
#include <string.h>

struct parser {
	pd_dagset *s;
	pd_diags *d;
	const char *file; /* the source name, copied into s->arena: stored locations use it */
};

/* A name and where it was written, for duplicate detection and lookups in O(n log n). */
struct nref {
	const char *name;
	size_t idx;
	struct pd_loc loc;
};

static int nref_cmp(const void *pa, const void *pb)
{
	const struct nref *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->idx < b->idx ? -1 : a->idx > b->idx);
}

static size_t errors(const pd_diags *d)
{
	return d->n + d->dropped;
}

static struct pd_loc own_loc(const struct parser *p, struct pd_loc l)
{
	l.file = p->file;
	return l;
}

static const pd_ynode *tasks_seq(const pd_ynode *dag)
{
	const pd_ynode *t = dag && dag->kind == PD_Y_MAP ? pd_ymap_get(dag, "tasks") : NULL;
	return t && t->kind == PD_Y_SEQ ? t : NULL;
}

/* Reads a duration that must be > 0 and within PD_DAGS_MAX_DURATION_NS. */
static int get_dur(struct parser *p, const pd_ynode *map, const char *key, bool required, int64_t *out)
{
	int r = pd_yget_duration(map, key, required, false, out, p->d);
	if (r == 1 && *out > PD_DAGS_MAX_DURATION_NS) {
		/* the limit in a unit the parser reads (it has no 'h'), the value as the user wrote it */
		const pd_ynode *n = pd_ymap_get(map, key);
		char lim[32];
		pd_diags_add(p->d, n->loc, "'%s' is %.40s: must be at most %s", key, n->str,
			     pd_fmt_duration(PD_DAGS_MAX_DURATION_NS, lim, sizeof(lim)));
		return -1;
	}
	return r;
}

/* Reads a "name"-like key, checks its syntax and copies it into the set. */
static int get_name(struct parser *p, const pd_ynode *map, const char *key, bool required, const char *what,
		    const char **out)
{
	const char *v = NULL;
	int r = pd_yget_str(map, key, required, &v, p->d);
	if (r != 1)
		return r;
	const char *why = pd_dags__name_problem(v);
	if (why) {
		pd_diags_add(p->d, pd_ymap_get(map, key)->loc, "%s '%.80s' %s", what, v, why);
		return -1;
	}
	*out = pd_arena_strdup(p->s->arena, v);
	return *out ? 1 : -1;
}

/* A bitstream is a file name under the board's firmware directory: never a path. */
static bool plain_file_name(const char *s)
{
	if (s[0] == '.' || strlen(s) > 255)
		return false;
	for (; *s; s++)
		if (*s == '/' || (unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

static void parse_impl(struct parser *p, const pd_ynode *n, struct pd_impl *m)
{
	static const char *const keys[] = {"kind", "latency", "bitstream", "power", "accel", NULL};
	const char *kind = NULL, *bits = NULL;
	m->loc = own_loc(p, n->loc);
	m->power_uw = -1;
	if (!pd_ynode_expect(n, PD_Y_MAP, "accel entry", p->d))
		return;
	pd_ymap_check_keys(n, keys, "accel entry", p->d);
	int kr = pd_yget_str(n, "kind", true, &kind, p->d);
	if (kr == 1 && strcmp(kind, "gpu") == 0)
		m->kind = PD_ACCEL_GPU;
	else if (kr == 1 && strcmp(kind, "fpga") == 0)
		m->kind = PD_ACCEL_FPGA;
	else if (kr == 1) {
		pd_diags_add(p->d, pd_ymap_get(n, "kind")->loc, "'kind' must be gpu or fpga, not '%.40s'", kind);
		kr = -1;
	}
	get_dur(p, n, "latency", true, &m->latency_ns);
	int br = pd_yget_str(n, "bitstream", false, &bits, p->d);
	if (br == 1 && !plain_file_name(bits)) {
		pd_diags_add(p->d, pd_ymap_get(n, "bitstream")->loc,
			     "'bitstream' must be a plain file name (no '/', spaces or leading '.'), not '%.80s'", bits);
	} else if (br == 1 && kr == 1 && m->kind == PD_ACCEL_GPU) {
		pd_diags_add(p->d, pd_ymap_get(n, "bitstream")->loc, "'bitstream' is only for fpga implementations");
	} else if (br == 0 && kr == 1 && m->kind == PD_ACCEL_FPGA) {
		pd_diags_add(p->d, n->loc, "fpga implementation needs a 'bitstream'");
	} else if (br == 1) {
		m->bitstream = pd_arena_strdup(p->s->arena, bits);
	}
	pd_yget_power(n, "power", false, &m->power_uw, p->d);
	get_name(p, n, "accel", false, "accelerator name", &m->accel);
}

static void parse_accel(struct parser *p, const pd_ynode *map, struct pd_task *t)
{
	const pd_ynode *a = pd_ymap_get(map, "accel");
	if (!a || !pd_ynode_expect(a, PD_Y_SEQ, "accel", p->d))
		return;
	t->impls = pd_arena_calloc(p->s->arena, a->n ? a->n : 1, sizeof(*t->impls));
	if (!t->impls) {
		pd_diags_add(p->d, a->loc, "out of memory");
		return;
	}
	t->n_impls = a->n;
	for (size_t k = 0; k < a->n; k++)
		parse_impl(p, a->items[k], &t->impls[k]);
}

static void parse_work(struct parser *p, const pd_ynode *map, struct pd_task *t)
{
	const char *w = NULL, *why = NULL;
	struct pd_work parsed;
	if (pd_yget_str(map, "work", false, &w, p->d) != 1)
		return;
	if (pd_dags_work_parse(w, &parsed, &why) < 0) {
		pd_diags_add(p->d, pd_ymap_get(map, "work")->loc, "'work' '%.80s' %s", w, why);
		return;
	}
	t->work = pd_arena_strdup(p->s->arena, w);
}

static void parse_task(struct parser *p, const pd_ynode *n, struct pd_task *t, size_t g)
{
	static const char *const keys[] = {"name", "wcet", "wcet_fixed", "bcet", "accel", "work", NULL};
	char b1[32], b2[32];
	t->dag = g;
	t->loc = own_loc(p, n->loc);
	if (!pd_ynode_expect(n, PD_Y_MAP, "task", p->d))
		return;
	pd_ymap_check_keys(n, keys, "task", p->d);
	get_name(p, n, "name", true, "task name", &t->name);
	int wr = get_dur(p, n, "wcet", true, &t->wcet_ns);
	int fr = get_dur(p, n, "wcet_fixed", false, &t->wcet_fixed_ns);
	int br = get_dur(p, n, "bcet", false, &t->bcet_ns);
	t->has_bcet = br != 0;
	if (wr == 1 && fr == 1 && t->wcet_fixed_ns > t->wcet_ns)
		pd_diags_add(p->d, pd_ymap_get(n, "wcet_fixed")->loc, "'wcet_fixed' %s exceeds 'wcet' %s",
			     pd_fmt_duration(t->wcet_fixed_ns, b1, sizeof(b1)), pd_fmt_duration(t->wcet_ns, b2, sizeof(b2)));
	if (wr == 1 && br == 1 && t->bcet_ns > t->wcet_ns)
		pd_diags_add(p->d, pd_ymap_get(n, "bcet")->loc, "'bcet' %s exceeds 'wcet' %s",
			     pd_fmt_duration(t->bcet_ns, b1, sizeof(b1)), pd_fmt_duration(t->wcet_ns, b2, sizeof(b2)));
	if (br == 0)
		t->bcet_ns = t->wcet_ns;
	parse_accel(p, n, t);
	parse_work(p, n, t);
}

/* Sorted (name, index) table of the named entries; duplicates reported as "what 'x'... (first at
 * line N)". Returns the table (caller frees) and its length in *n_out. */
static struct nref *name_table(struct parser *p, const char *const *names, const struct pd_loc *locs, size_t stride,
			       size_t n, const char *what, const char *scope, size_t *n_out)
{
	struct nref *v = malloc((n ? n : 1) * sizeof(*v));
	size_t m = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *name = *(const char *const *)((const char *)names + i * stride);
		if (name)
			v[m++] = (struct nref){name, i, *(const struct pd_loc *)((const char *)locs + i * stride)};
	}
	qsort(v, m, sizeof(*v), nref_cmp);
	for (size_t j = 1, first = 0; j < m; j++) {
		if (strcmp(v[j].name, v[first].name) != 0) {
			first = j;
			continue;
		}
		pd_diags_add(p->d, v[j].loc, "duplicate %s '%s'%s (first at line %d)", what, v[j].name, scope,
			     v[first].loc.line);
	}
	*n_out = m;
	return v;
}

/* Index of name in a sorted name table (the first of equal names), or -1. */
static long lookup(const struct nref *v, size_t n, const char *name)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && strcmp(v[lo].name, name) == 0 ? (long)v[lo].idx : -1;
}

static void parse_edges(struct parser *p, const pd_ynode *map, struct pd_dag *G, const struct nref *names,
			size_t n_names)
{
	const pd_ynode *e = pd_ymap_get(map, "edges");
	if (!e || !pd_ynode_expect(e, PD_Y_SEQ, "edges", p->d))
		return;
	G->edges = pd_arena_calloc(p->s->arena, e->n ? e->n : 1, sizeof(*G->edges));
	if (!G->edges) {
		pd_diags_add(p->d, e->loc, "out of memory");
		return;
	}
	for (size_t k = 0; k < e->n; k++) {
		const pd_ynode *it = e->items[k];
		long end[2] = {-1, -1};
		if (!pd_ynode_expect(it, PD_Y_SEQ, "edge", p->d))
			continue;
		if (it->n != 2) {
			pd_diags_add(p->d, it->loc, "an edge must be a pair [from, to], not %zu items", it->n);
			continue;
		}
		for (int j = 0; j < 2; j++) {
			if (!pd_ynode_expect(it->items[j], PD_Y_SCALAR, j ? "edge target" : "edge source", p->d))
				continue;
			end[j] = lookup(names, n_names, it->items[j]->str);
			if (end[j] < 0)
				pd_diags_add(p->d, it->items[j]->loc, "edge %s unknown task '%.80s' in DAG '%s'",
					     j ? "to" : "from", it->items[j]->str, G->name ? G->name : "?");
		}
		if (end[0] >= 0 && end[1] >= 0)
			G->edges[G->n_edges++] = (struct pd_edge){G->first_task + (size_t)end[0],
								  G->first_task + (size_t)end[1], own_loc(p, it->loc)};
	}
}

/* Optional 'late: resync | queue' (docs/FORMATS.md); absent = resync, not written back. */
static void parse_late(struct parser *p, const pd_ynode *n, struct pd_dag *G)
{
	const char *v = NULL;
	G->late = PD_LATE_RESYNC;
	if (pd_yget_str(n, "late", false, &v, p->d) != 1)
		return;
	if (strcmp(v, "resync") == 0)
		G->late = PD_LATE_RESYNC;
	else if (strcmp(v, "queue") == 0)
		G->late = PD_LATE_QUEUE;
	else {
		pd_diags_add(p->d, pd_ymap_get(n, "late")->loc, "'late' must be resync or queue, not '%.40s'", v);
		return;
	}
	G->has_late = true;
}

static void parse_dag(struct parser *p, const pd_ynode *n, size_t g, size_t *next_task)
{
	static const char *const keys[] = {"name", "period", "deadline", "late", "tasks", "edges", NULL};
	struct pd_dag *G = &p->s->dags[g];
	char b1[32], b2[32];
	G->loc = own_loc(p, n->loc);
	G->first_task = *next_task;
	if (!pd_ynode_expect(n, PD_Y_MAP, "DAG", p->d))
		return;
	pd_ymap_check_keys(n, keys, "DAG", p->d);
	get_name(p, n, "name", true, "DAG name", &G->name);
	int pr = get_dur(p, n, "period", true, &G->period_ns);
	int dr = get_dur(p, n, "deadline", false, &G->deadline_ns);
	G->has_deadline = dr != 0;
	if (dr == 0)
		G->deadline_ns = G->period_ns;
	if (pr == 1 && dr == 1 && G->deadline_ns > G->period_ns)
		pd_diags_add(p->d, pd_ymap_get(n, "deadline")->loc, "'deadline' %s exceeds 'period' %s (D <= T)",
			     pd_fmt_duration(G->deadline_ns, b1, sizeof(b1)), pd_fmt_duration(G->period_ns, b2, sizeof(b2)));
	parse_late(p, n, G);

	const pd_ynode *ts = pd_ymap_get(n, "tasks");
	if (!ts)
		pd_diags_add(p->d, n->loc, "missing required key 'tasks'");
	else if (pd_ynode_expect(ts, PD_Y_SEQ, "tasks", p->d) && ts->n == 0)
		pd_diags_add(p->d, ts->loc, "'tasks' must not be empty");
	ts = tasks_seq(n);
	if (!ts)
		return;
	G->n_tasks = ts->n;
	*next_task += ts->n;
	for (size_t k = 0; k < ts->n; k++)
		parse_task(p, ts->items[k], &p->s->tasks[G->first_task + k], g);

	size_t m = 0;
	struct pd_task *T = &p->s->tasks[G->first_task];
	char scope[PD_DAGS_MAX_NAME + 16];
	snprintf(scope, sizeof(scope), " in DAG '%s'", G->name ? G->name : "?");
	struct nref *names = name_table(p, &T[0].name, &T[0].loc, sizeof(*T), G->n_tasks, "task name", scope, &m);
	if (!names) {
		pd_diags_add(p->d, n->loc, "out of memory");
		return;
	}
	parse_edges(p, n, G, names, m);
	free(names);
}

static size_t count_tasks(const pd_ynode *seq)
{
	size_t n = 0;
	for (size_t g = 0; g < seq->n; g++) {
		const pd_ynode *ts = tasks_seq(seq->items[g]);
		n += ts ? ts->n : 0;
	}
	return n;
}

pd_dagset *pd_dags_from_node(const pd_ynode *seq, pd_diags *d)
{
	size_t before = errors(d), first = d->n;
	struct pd_loc nowhere = {0};
	if (!seq) {
		pd_diags_add(d, nowhere, "missing required key 'dags'");
		return NULL;
	}
	if (!pd_ynode_expect(seq, PD_Y_SEQ, "dags", d))
		return NULL;
	if (seq->n == 0) {
		pd_diags_add(d, seq->loc, "'dags' must not be empty");
		return NULL;
	}
	struct parser p = {pd_dags__alloc(seq->n, count_tasks(seq)), d, NULL};
	if (!p.s || !(p.file = pd_arena_strdup(p.s->arena, seq->loc.file ? seq->loc.file : "<input>"))) {
		pd_diags_add(d, seq->loc, "out of memory");
		pd_dags_free(p.s);
		return NULL;
	}
	size_t next = 0;
	for (size_t g = 0; g < seq->n; g++)
		parse_dag(&p, seq->items[g], g, &next);
	size_t m;
	free(name_table(&p, &p.s->dags[0].name, &p.s->dags[0].loc, sizeof(struct pd_dag), p.s->n_dags, "DAG name", "",
			&m));
	bool bad = errors(d) != before || pd_dags__link(p.s, d) < 0 || errors(d) != before;
	/* diagnostics made from stored locations name the set's copy of the file: point them back at
	 * the document's, which the caller keeps, before the set (maybe) goes */
	pd_diags_rebase(d, first, p.file, seq->loc.file);
	if (bad) {
		pd_dags_free(p.s);
		return NULL;
	}
	return p.s;
}

pd_dagset *pd_dags_from_doc(const pd_ydoc *doc, pd_diags *d)
{
	static const char *const keys[] = {"dags", NULL};
	struct pd_loc top = {doc->file, 1, 1};
	size_t before = errors(d);
	pd_dagset *s = NULL;
	if (!doc->root || doc->root->kind != PD_Y_MAP) {
		pd_diags_add(d, doc->root ? doc->root->loc : top, "a DAG file is a mapping with the key 'dags'");
		return NULL;
	}
	pd_ymap_check_keys(doc->root, keys, "DAG file", d);
	if (!pd_ymap_get(doc->root, "dags"))
		pd_diags_add(d, doc->root->loc, "missing required key 'dags'");
	else
		s = pd_dags_from_node(pd_ymap_get(doc->root, "dags"), d);
	if (s && errors(d) != before) { /* unknown top-level keys */
		pd_dags_free(s);
		s = NULL;
	}
	return s;
}

pd_dagset *pd_dags_load_file(const char *path, pd_diags *d)
{
	pd_ydoc doc;
	pd_dagset *s = NULL;
	size_t first = d->n;
	if (pd_yaml_load_file(&doc, path, d) == 0)
		s = pd_dags_from_doc(&doc, d);
	pd_diags_rebase(d, first, doc.file, path);
	pd_yaml_free(&doc);
	return s;
}
