/* SPDX-License-Identifier: MIT */
/*
 * The DAG-set handle: allocation, accessors, lookups, equality and the work-string syntax.
 */
#include "dags/dags_impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *pd_dags_late_name(enum pd_late l)
{
	return l == PD_LATE_QUEUE ? "queue" : "resync";
}

const char *pd_dags_accel_kind_name(enum pd_accel_kind k)
{
	return k == PD_ACCEL_FPGA ? "fpga" : "gpu";
}

pd_dagset *pd_dags__alloc(size_t n_dags, size_t n_tasks)
{
	pd_arena *a = pd_arena_new();
	if (!a)
		return NULL;
	pd_dagset *s = pd_arena_alloc(a, sizeof(*s));
	if (!s) {
		pd_arena_free(a);
		return NULL;
	}
	s->arena = a;
	s->dags = pd_arena_calloc(a, n_dags ? n_dags : 1, sizeof(*s->dags));
	s->tasks = pd_arena_calloc(a, n_tasks ? n_tasks : 1, sizeof(*s->tasks));
	s->topo = pd_arena_calloc(a, n_tasks ? n_tasks : 1, sizeof(*s->topo));
	if (!s->dags || !s->tasks || !s->topo) {
		pd_arena_free(a);
		return NULL;
	}
	s->n_dags = n_dags;
	s->n_tasks = n_tasks;
	return s;
}

void pd_dags_free(pd_dagset *s)
{
	if (s)
		pd_arena_free(s->arena); /* s itself lives in its arena */
}

size_t pd_dags_count(const pd_dagset *s) { return s->n_dags; }
size_t pd_dags_task_count(const pd_dagset *s) { return s->n_tasks; }
const struct pd_dag *pd_dags_dag(const pd_dagset *s, size_t g) { return g < s->n_dags ? &s->dags[g] : NULL; }
const struct pd_task *pd_dags_task(const pd_dagset *s, size_t i) { return i < s->n_tasks ? &s->tasks[i] : NULL; }
const size_t *pd_dags_topo(const pd_dagset *s) { return s->topo; }

long pd_dags_find_dag(const pd_dagset *s, const char *dag)
{
	for (size_t g = 0; g < s->n_dags; g++)
		if (dag && strcmp(s->dags[g].name, dag) == 0)
			return (long)g;
	return -1;
}

long pd_dags_find_task(const pd_dagset *s, const char *dag, const char *task)
{
	long g = pd_dags_find_dag(s, dag);
	if (g < 0 || !task)
		return -1;
	const struct pd_dag *G = &s->dags[g];
	for (size_t i = G->first_task; i < G->first_task + G->n_tasks; i++)
		if (strcmp(s->tasks[i].name, task) == 0)
			return (long)i;
	return -1;
}

double pd_dags_utilisation(const pd_dagset *s)
{
	double u = 0;
	for (size_t i = 0; i < s->n_tasks; i++)
		u += (double)s->tasks[i].wcet_ns / (double)s->dags[s->tasks[i].dag].period_ns;
	return u;
}

int pd_dags_set_wcet(pd_dagset *s, size_t i, int64_t wcet_ns, bool *bcet_lowered)
{
	if (bcet_lowered)
		*bcet_lowered = false;
	if (i >= s->n_tasks)
		return -1;
	struct pd_task *t = &s->tasks[i];
	if (wcet_ns < 1 || wcet_ns < t->wcet_fixed_ns || wcet_ns > PD_DAGS_MAX_DURATION_NS)
		return -1;
	t->wcet_ns = wcet_ns;
	/* bcet <= wcet is an invariant; bcet = wcet when the file gave none */
	if (!t->has_bcet || t->bcet_ns > wcet_ns) {
		if (bcet_lowered && t->has_bcet)
			*bcet_lowered = true;
		t->bcet_ns = wcet_ns;
	}
	return 0;
}

const char *pd_dags__name_problem(const char *name)
{
	size_t n = strlen(name);
	if (n == 0)
		return "must not be empty";
	if (n > PD_DAGS_MAX_NAME)
		return "is longer than 63 characters";
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
			return "may only hold letters, digits, '_', '-' and '.'";
	return NULL;
}

/* ---------------------------------------------------------------- equality */
static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool impl_eq(const struct pd_impl *a, const struct pd_impl *b)
{
	return a->kind == b->kind && a->latency_ns == b->latency_ns && str_eq(a->bitstream, b->bitstream) &&
	       a->power_uw == b->power_uw && str_eq(a->accel, b->accel);
}

static bool task_eq(const struct pd_task *a, const struct pd_task *b)
{
	if (!str_eq(a->name, b->name) || a->dag != b->dag || a->wcet_ns != b->wcet_ns ||
	    a->wcet_fixed_ns != b->wcet_fixed_ns || a->bcet_ns != b->bcet_ns || a->has_bcet != b->has_bcet ||
	    !str_eq(a->work, b->work) || a->n_impls != b->n_impls)
		return false;
	for (size_t k = 0; k < a->n_impls; k++)
		if (!impl_eq(&a->impls[k], &b->impls[k]))
			return false;
	return true;
}

static bool dag_eq(const struct pd_dag *a, const struct pd_dag *b)
{
	if (!str_eq(a->name, b->name) || a->period_ns != b->period_ns || a->deadline_ns != b->deadline_ns ||
	    a->has_deadline != b->has_deadline || a->late != b->late || a->has_late != b->has_late || a->first_task != b->first_task || a->n_tasks != b->n_tasks ||
	    a->n_edges != b->n_edges)
		return false;
	for (size_t e = 0; e < a->n_edges; e++)
		if (a->edges[e].from != b->edges[e].from || a->edges[e].to != b->edges[e].to)
			return false;
	return true;
}

bool pd_dags_equal(const pd_dagset *a, const pd_dagset *b)
{
	if (!a || !b || a->n_dags != b->n_dags || a->n_tasks != b->n_tasks)
		return false;
	for (size_t g = 0; g < a->n_dags; g++)
		if (!dag_eq(&a->dags[g], &b->dags[g]))
			return false;
	for (size_t i = 0; i < a->n_tasks; i++)
		if (!task_eq(&a->tasks[i], &b->tasks[i]))
			return false;
	return true;
}

/* ---------------------------------------------------------------- work strings */
static bool is_identifier(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

int pd_dags_work_parse(const char *work, struct pd_work *out, const char **why)
{
	memset(out, 0, sizeof(*out));
	if (!work || strcmp(work, "builtin:spin") == 0)
		return 0;
	if (strcmp(work, "builtin:busy") == 0) {
		out->kind = PD_WORK_BUSY;
		return 0;
	}
	if (strncmp(work, "builtin:", 8) == 0) {
		*why = "unknown builtin (builtin:spin or builtin:busy)";
		return -1;
	}
	if (strncmp(work, "plugin:", 7) != 0) {
		*why = "must be builtin:spin, builtin:busy or plugin:LIB:SYMBOL";
		return -1;
	}
	const char *lib = work + 7, *colon = strrchr(lib, ':');
	if (!colon || colon == lib) {
		*why = "plugin needs a library and a symbol: plugin:LIB:SYMBOL";
		return -1;
	}
	size_t lib_len = (size_t)(colon - lib);
	if (lib_len >= sizeof(out->lib) || strlen(colon + 1) >= sizeof(out->symbol)) {
		*why = "plugin library or symbol name too long";
		return -1;
	}
	if (!is_identifier(colon + 1)) {
		*why = "plugin symbol must be a C identifier";
		return -1;
	}
	out->kind = PD_WORK_PLUGIN;
	memcpy(out->lib, lib, lib_len);
	strcpy(out->symbol, colon + 1);
	return 0;
}

int pd_dags_inject_parse(const char *spec, struct pd_inject *out, const char **why)
{
	memset(out, 0, sizeof(*out));
	const char *slash = strchr(spec, '/');
	const char *c1 = slash ? strchr(slash, ':') : NULL;
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!slash || !c1 || !c2) {
		*why = "expected DAG/TASK:N:F";
		return -1;
	}
	size_t ld = (size_t)(slash - spec), lt = (size_t)(c1 - slash - 1);
	if (ld == 0 || lt == 0 || ld > PD_DAGS_MAX_NAME || lt > PD_DAGS_MAX_NAME) {
		*why = "DAG and task names must be 1..63 characters";
		return -1;
	}
	memcpy(out->dag, spec, ld);
	memcpy(out->task, slash + 1, lt);
	char *end;
	errno = 0;
	if (!isdigit((unsigned char)c1[1])) {
		*why = "N must be a job number >= 0";
		return -1;
	}
	unsigned long long n = strtoull(c1 + 1, &end, 10);
	if (errno || end != c2 || n > (1ULL << 40)) {
		*why = "N must be a job number >= 0";
		return -1;
	}
	errno = 0;
	double f = strtod(c2 + 1, &end);
	if (errno || end == c2 + 1 || *end != '\0' || !(f > 0 && f <= 1000)) {
		*why = "F must be a factor in (0, 1000]";
		return -1;
	}
	out->seq = n;
	out->factor = f;
	return 0;
}

long pd_dags_inject_task(const pd_dagset *s, const struct pd_inject *in)
{
	return pd_dags_find_task(s, in->dag, in->task);
}
