/* SPDX-License-Identifier: MIT */
/*
 * The plan reader (layout: docs/FORMATS.md). It first builds the embedded DAG set and platform (the
 * plan is self-contained), then resolves every plan entry against them and records every structural
 * problem with its file:line:col: each task exactly once, placements that exist and fit the task's
 * implementations, OPP frequencies taken from the tables, FPGA slot contents consistent with the
 * tasks placed there, positive times. Schedulability is `check`'s business, not the reader's.
 */
#include "plan/plan_impl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rp {
	pd_plan *p;
	pd_diags *d;
	const pd_ynode **slot_lists; /* FPGA: listed bitstreams per (accel, slot), row offsets below */
	size_t *slot_base;
	const pd_ynode **task_node; /* per global task: the entry that placed it (duplicates) */
	const pd_ynode *accels;      /* the plan's accelerators list (where unlisted slots are reported) */
};

static size_t errors(const pd_diags *d)
{
	return d->n + d->dropped;
}

static const pd_ynode *get_kind(struct rp *r, const pd_ynode *map, const char *key, enum pd_yaml_kind k,
				bool required)
{
	const pd_ynode *v = pd_ymap_get(map, key);
	if (!v) {
		if (required)
			pd_diags_add(r->d, map->loc, "missing required key '%s'", key);
		return NULL;
	}
	return pd_ynode_expect(v, k, key, r->d) ? v : NULL;
}

/* ------------------------------------------------------------------ solver / predicted */

/* A plain number, also the YAML 1.2 specials .nan, .inf, -.inf that the writer produces for a
 * non-finite gap or slack (a solver may leave them undefined): the plan must still read back. */
static int get_real(struct rp *r, const pd_ynode *map, const char *key, double lo, double *out)
{
	const pd_ynode *v = pd_ymap_get(map, key);
	if (v && v->kind == PD_Y_SCALAR && !v->quoted) {
		if (strcmp(v->str, ".nan") == 0 || strcmp(v->str, ".inf") == 0 || strcmp(v->str, "-.inf") == 0) {
			*out = v->str[1] == 'n' ? NAN : v->str[0] == '-' ? -INFINITY : INFINITY;
			return 1;
		}
	}
	return pd_yget_double(map, key, true, lo, 1e308, out, r->d);
}

static const char *const solver_keys[] = {"status", "objective", "solver", "gap", "solve_time_s", "power_cap", NULL};
static const char *const predicted_keys[] = {"power", "lower_bound", "min_relative_slack", NULL};

static void parse_solver(struct rp *r, const pd_ynode *map, struct pd_plan_meta *m, pd_arena *arena)
{
	const pd_ynode *n = get_kind(r, map, "solver", PD_Y_MAP, true);
	const char *s = NULL;
	if (!n)
		return;
	pd_ymap_check_keys(n, solver_keys, "solver", r->d);
	if (pd_yget_str(n, "status", true, &s, r->d) == 1 && pd_plan_status_parse(s, &m->status) < 0)
		pd_diags_add(r->d, pd_ymap_get(n, "status")->loc,
			     "'status' must be optimal, feasible, infeasible or unknown, not '%.40s'", s);
	if (pd_yget_str(n, "objective", true, &s, r->d) == 1 && pd_plan_objective_parse(s, &m->objective) < 0)
		pd_diags_add(r->d, pd_ymap_get(n, "objective")->loc,
			     "'objective' must be power, slack or balanced, not '%.40s'", s);
	if (pd_yget_str(n, "solver", true, &s, r->d) == 1)
		m->solver = pd_arena_strdup(arena, s);
	get_real(r, n, "gap", -1e308, &m->gap);
	get_real(r, n, "solve_time_s", 0.0, &m->solve_time_s);
	m->power_cap_uw = -1;
	pd_yget_power(n, "power_cap", false, &m->power_cap_uw, r->d);
}

static void parse_predicted(struct rp *r, const pd_ynode *map, struct pd_plan_meta *m)
{
	const pd_ynode *n = get_kind(r, map, "predicted", PD_Y_MAP, true);
	if (!n)
		return;
	pd_ymap_check_keys(n, predicted_keys, "predicted", r->d);
	pd_yget_power(n, "power", true, &m->power_uw, r->d);
	m->lower_bound_uw = -1;
	pd_yget_power(n, "lower_bound", false, &m->lower_bound_uw, r->d);
	get_real(r, n, "min_relative_slack", -1e308, &m->min_relative_slack);
}

/* ------------------------------------------------------------------ frequencies */

static const char *const island_keys[] = {"name", "freq", NULL};

/* Index of the OPP with frequency khz, or -1 (diagnostic recorded at where). */
static long find_opp(struct rp *r, const struct pd_opp *o, size_t n, int64_t khz, const char *owner,
		     const pd_ynode *where)
{
	long j = pd_platform_opp_find(o, n, khz);
	if (j >= 0)
		return j;
	char buf[40];
	pd_diags_add(r->d, where->loc, "frequency %s is not an OPP of %s", pd_fmt_freq(khz, buf, sizeof(buf)), owner);
	return -1;
}

static void parse_islands(struct rp *r, const pd_ynode *map)
{
	const pd_platform *plat = r->p->plat;
	size_t nk = pd_platform_island_count(plat);
	const pd_ynode *seq = get_kind(r, map, "islands", PD_Y_SEQ, true);
	if (!seq)
		return;
	const pd_ynode **seen = calloc(nk ? nk : 1, sizeof(*seen));
	if (!seen) {
		pd_diags_add(r->d, seq->loc, "out of memory");
		return;
	}
	for (size_t i = 0; i < seq->n; i++) {
		const pd_ynode *n = seq->items[i];
		const char *name = NULL;
		int64_t khz = 0;
		if (!pd_ynode_expect(n, PD_Y_MAP, "islands item", r->d))
			continue;
		pd_ymap_check_keys(n, island_keys, "a plan island", r->d);
		bool ok = pd_yget_str(n, "name", true, &name, r->d) == 1;
		ok &= pd_yget_freq(n, "freq", true, &khz, r->d) == 1;
		if (!ok)
			continue;
		long k = pd_platform_find_island(plat, name);
		if (k < 0) {
			pd_diags_add(r->d, pd_ymap_get(n, "name")->loc, "unknown island '%.80s'", name);
			continue;
		}
		if (seen[k]) {
			pd_diags_add(r->d, n->loc, "island '%s' listed twice (first at line %d)", name, seen[k]->loc.line);
			continue;
		}
		seen[k] = n;
		const struct pd_island *isl = pd_platform_island(plat, (size_t)k);
		char owner[160];
		snprintf(owner, sizeof(owner), "island '%s'", isl->name);
		long j = find_opp(r, isl->opps, isl->n_opps, khz, owner, pd_ymap_get(n, "freq"));
		if (j >= 0)
			r->p->island_opp[k] = (size_t)j;
	}
	for (size_t k = 0; k < nk; k++)
		if (!seen[k])
			pd_diags_add(r->d, seq->loc, "island '%s' has no frequency in the plan",
				     pd_platform_island(plat, k)->name);
	free(seen);
}

/* ------------------------------------------------------------------ accelerators */

static const char *const gpu_keys[] = {"name", "freq", NULL};
static const char *const fpga_keys[] = {"name", "slots", NULL};
static const char *const slot_keys[] = {"slot", "bitstreams", NULL};

static void parse_fpga_slots(struct rp *r, const pd_ynode *n, size_t a, const struct pd_accelerator *acc)
{
	const pd_ynode *seq = get_kind(r, n, "slots", PD_Y_SEQ, true);
	if (!seq)
		return;
	for (size_t i = 0; i < seq->n; i++) {
		const pd_ynode *s = seq->items[i];
		int64_t slot;
		if (!pd_ynode_expect(s, PD_Y_MAP, "slots item", r->d))
			continue;
		pd_ymap_check_keys(s, slot_keys, "an FPGA slot", r->d);
		const pd_ynode *bits = get_kind(r, s, "bitstreams", PD_Y_SEQ, true);
		if (pd_yget_int(s, "slot", true, 0, acc->slots - 1, &slot, r->d) != 1 || !bits)
			continue;
		const pd_ynode **cell = &r->slot_lists[r->slot_base[a] + (size_t)slot];
		if (*cell) {
			pd_diags_add(r->d, s->loc, "slot %d of '%s' listed twice", (int)slot, acc->name);
			continue;
		}
		*cell = bits;
		for (size_t b = 0; b < bits->n; b++)
			pd_ynode_expect(bits->items[b], PD_Y_SCALAR, "bitstreams item", r->d);
	}
}

static void parse_accel(struct rp *r, const pd_ynode *n, const pd_ynode **seen)
{
	const pd_platform *plat = r->p->plat;
	const char *name = NULL;
	if (!pd_ynode_expect(n, PD_Y_MAP, "accelerators item", r->d))
		return;
	if (pd_yget_str(n, "name", true, &name, r->d) != 1)
		return;
	long a = pd_platform_find_accel(plat, name);
	if (a < 0) {
		pd_diags_add(r->d, pd_ymap_get(n, "name")->loc, "unknown accelerator '%.80s'", name);
		return;
	}
	if (seen[a]) {
		pd_diags_add(r->d, n->loc, "accelerator '%s' listed twice (first at line %d)", name, seen[a]->loc.line);
		return;
	}
	seen[a] = n;
	const struct pd_accelerator *acc = pd_platform_accel(plat, (size_t)a);
	if (acc->kind == PD_ACCEL_FPGA) {
		pd_ymap_check_keys(n, fpga_keys, "a plan FPGA", r->d);
		parse_fpga_slots(r, n, (size_t)a, acc);
		return;
	}
	int64_t khz;
	pd_ymap_check_keys(n, gpu_keys, "a plan GPU", r->d);
	if (pd_yget_freq(n, "freq", true, &khz, r->d) != 1)
		return;
	char owner[160];
	snprintf(owner, sizeof(owner), "accelerator '%s'", acc->name);
	long j = find_opp(r, acc->opps, acc->n_opps, khz, owner, pd_ymap_get(n, "freq"));
	if (j >= 0)
		r->p->accel_opp[a] = (size_t)j;
}

static void parse_accels(struct rp *r, const pd_ynode *map)
{
	size_t na = pd_platform_accel_count(r->p->plat);
	const pd_ynode *seq = get_kind(r, map, "accelerators", PD_Y_SEQ, na > 0);
	if (!seq)
		return;
	r->accels = seq;
	const pd_ynode **seen = calloc(na ? na : 1, sizeof(*seen));
	if (!seen) {
		pd_diags_add(r->d, seq->loc, "out of memory");
		return;
	}
	for (size_t i = 0; i < seq->n; i++)
		parse_accel(r, seq->items[i], seen);
	for (size_t a = 0; a < na; a++)
		if (!seen[a])
			pd_diags_add(r->d, seq->loc, "accelerator '%s' missing from the plan",
				     pd_platform_accel(r->p->plat, a)->name);
	free(seen);
}

/* ------------------------------------------------------------------ tasks */

static const char *const task_keys[] = {"dag",	"task",	    "placement", "impl",    "wcet",	"overhead",
					"runtime", "deadline", "period",	   "response", "reclaim", NULL};
static const char *const cpu_only[] = {"overhead", "runtime", "deadline", "period", "reclaim", NULL};
static const char *const accel_only[] = {"impl", "response", NULL};

static bool parse_uint(const char *s, long max, long *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (*end || errno || v > max)
		return false;
	*out = v;
	return true;
}

/* "cpu:N" | "gpu:NAME" | "fpga:NAME/SLOT" -> placement (impl resolved later). */
static bool parse_placement(struct rp *r, const pd_ynode *v, struct pd_placement *pl)
{
	const pd_platform *plat = r->p->plat;
	const char *s = v->str;
	char name[256];
	long x = 0;
	memset(pl, 0, sizeof(*pl));
	if (strncmp(s, "cpu:", 4) == 0 && parse_uint(s + 4, 1 << 20, &x)) {
		long k = pd_platform_island_of_cpu(plat, (int)x);
		if (k < 0) {
			pd_diags_add(r->d, v->loc, "placement '%.80s': CPU %ld is not in any island of the platform", s, x);
			return false;
		}
		*pl = (struct pd_placement){.kind = PD_PLACE_CPU, .cpu = (int)x, .island = (size_t)k};
		return true;
	}
	bool gpu = strncmp(s, "gpu:", 4) == 0, fpga = strncmp(s, "fpga:", 5) == 0;
	const char *rest = gpu ? s + 4 : fpga ? s + 5 : NULL;
	const char *slash = rest ? strrchr(rest, '/') : NULL;
	size_t len = rest ? (fpga && slash ? (size_t)(slash - rest) : strlen(rest)) : 0;
	if (!rest || len == 0 || len >= sizeof(name) || (fpga && (!slash || !parse_uint(slash + 1, 1 << 20, &x)))) {
		pd_diags_add(r->d, v->loc, "placement '%.80s' must be cpu:N, gpu:NAME or fpga:NAME/SLOT", s);
		return false;
	}
	memcpy(name, rest, len);
	name[len] = '\0';
	long a = pd_platform_find_accel(plat, name);
	const struct pd_accelerator *acc = a >= 0 ? pd_platform_accel(plat, (size_t)a) : NULL;
	if (!acc || acc->kind != (gpu ? PD_ACCEL_GPU : PD_ACCEL_FPGA)) {
		pd_diags_add(r->d, v->loc, "placement '%.80s': the platform has no %s named '%s'", s, gpu ? "GPU" : "FPGA",
			     name);
		return false;
	}
	if (fpga && x >= acc->slots) {
		pd_diags_add(r->d, v->loc, "placement '%.80s': slot %ld >= the %d slot(s) of '%s'", s, x, acc->slots,
			     acc->name);
		return false;
	}
	*pl = (struct pd_placement){.kind = gpu ? PD_PLACE_GPU : PD_PLACE_FPGA, .accel = (size_t)a, .slot = fpga ? (int)x : 0};
	return true;
}

static bool impl_fits(const struct pd_impl *im, const struct pd_accelerator *acc)
{
	return im->kind == acc->kind && (!im->accel || strcmp(im->accel, acc->name) == 0);
}

/* The implementation an accelerator placement runs: the given index, or the first that fits. */
static bool resolve_impl(struct rp *r, const pd_ynode *n, const struct pd_task *t, struct pd_placement *pl)
{
	const struct pd_accelerator *acc = pd_platform_accel(r->p->plat, pl->accel);
	int64_t idx;
	int got = pd_yget_int(n, "impl", false, 0, 1 << 20, &idx, r->d);
	if (got < 0)
		return false;
	if (got == 0) {
		for (idx = 0; (size_t)idx < t->n_impls && !impl_fits(&t->impls[idx], acc); idx++)
			;
	}
	if ((size_t)idx >= t->n_impls || !impl_fits(&t->impls[idx], acc)) {
		pd_diags_add(r->d, got ? pd_ymap_get(n, "impl")->loc : n->loc,
			     "task '%s' has no %s implementation for '%s'%s", t->name, acc->kind == PD_ACCEL_GPU ? "gpu" : "fpga",
			     acc->name, got ? " at this 'impl' index" : "");
		return false;
	}
	pl->impl = (size_t)idx;
	return true;
}

static void refuse(struct rp *r, const pd_ynode *n, const char *const *keys, const char *why)
{
	for (const char *const *k = keys; *k; k++) {
		const pd_ynode *v = pd_ymap_get(n, *k);
		if (v)
			pd_diags_add(r->d, v->loc, "'%s' does not apply to %s", *k, why);
	}
}

static void parse_task_times(struct rp *r, const pd_ynode *n, struct pd_plan_task *pt)
{
	pd_yget_duration(n, "wcet", true, false, &pt->wcet_ns, r->d);
	if (pt->place.kind == PD_PLACE_CPU) {
		refuse(r, n, accel_only, "a CPU placement");
		pt->overhead_ns = -1;
		if (pd_yget_duration(n, "overhead", false, true, &pt->overhead_ns, r->d) != 1)
			pt->overhead_ns = -1;
		pd_yget_duration(n, "runtime", true, false, &pt->runtime_ns, r->d);
		pd_yget_duration(n, "deadline", true, false, &pt->deadline_ns, r->d);
		pd_yget_duration(n, "period", true, false, &pt->period_ns, r->d);
		pd_yget_bool(n, "reclaim", false, &pt->reclaim, r->d);
		pt->response_ns = pt->deadline_ns;
	} else {
		refuse(r, n, cpu_only, "an accelerator placement");
		pd_yget_duration(n, "response", true, false, &pt->response_ns, r->d);
	}
}

static void parse_task(struct rp *r, const pd_ynode *n)
{
	const pd_dagset *dags = r->p->dags;
	const char *dag = NULL, *task = NULL;
	if (!pd_ynode_expect(n, PD_Y_MAP, "tasks item", r->d))
		return;
	pd_ymap_check_keys(n, task_keys, "a plan task", r->d);
	bool ok = pd_yget_str(n, "dag", true, &dag, r->d) == 1;
	ok &= pd_yget_str(n, "task", true, &task, r->d) == 1;
	const pd_ynode *place = pd_ymap_get(n, "placement");
	if (!place)
		pd_diags_add(r->d, n->loc, "missing required key 'placement'");
	else if (!pd_ynode_expect(place, PD_Y_SCALAR, "placement", r->d))
		place = NULL;
	if (!ok)
		return;
	long i = pd_dags_find_task(dags, dag, task);
	if (i < 0) {
		pd_diags_add(r->d, n->loc, "task '%.80s/%.80s' is not in the plan's DAG set", dag, task);
		return;
	}
	if (r->task_node[i]) {
		pd_diags_add(r->d, n->loc, "task '%s/%s' listed twice (first at line %d)", dag, task,
			     r->task_node[i]->loc.line);
		return;
	}
	r->task_node[i] = n;
	struct pd_plan_task *pt = &r->p->tasks[i];
	if (!place || !parse_placement(r, place, &pt->place))
		return;
	if (pt->place.kind != PD_PLACE_CPU && !resolve_impl(r, n, pd_dags_task(dags, (size_t)i), &pt->place))
		return;
	parse_task_times(r, n, pt);
}

static void parse_tasks(struct rp *r, const pd_ynode *map)
{
	const pd_ynode *seq = get_kind(r, map, "tasks", PD_Y_SEQ, true);
	if (!seq)
		return;
	for (size_t i = 0; i < seq->n; i++)
		parse_task(r, seq->items[i]);
	for (size_t i = 0; i < r->p->n_tasks; i++)
		if (!r->task_node[i]) {
			const struct pd_task *t = pd_dags_task(r->p->dags, i);
			pd_diags_add(r->d, seq->loc, "task '%s/%s' has no entry in 'tasks'",
				     pd_dags_dag(r->p->dags, t->dag)->name, t->name);
		}
}

/* The listed slot contents are derived data: they must say what the tasks placed there need. */
static void check_slots(struct rp *r)
{
	const pd_platform *plat = r->p->plat;
	for (size_t a = 0; a < pd_platform_accel_count(plat); a++) {
		const struct pd_accelerator *acc = pd_platform_accel(plat, a);
		for (int s = 0; acc->kind == PD_ACCEL_FPGA && s < acc->slots; s++) {
			size_t n = pd_plan_slot_bitstreams(r->p, a, s, NULL, 0);
			const char **bits = calloc(n ? n : 1, sizeof(*bits));
			const pd_ynode *listed = r->slot_lists[r->slot_base[a] + (size_t)s];
			size_t nl = listed ? listed->n : 0;
			bool same = bits && n == nl;
			if (bits)
				pd_plan_slot_bitstreams(r->p, a, s, bits, n);
			for (size_t i = 0; same && i < n; i++) {
				bool found = false;
				for (size_t j = 0; j < nl && !found; j++)
					found = listed->items[j]->kind == PD_Y_SCALAR && strcmp(listed->items[j]->str, bits[i]) == 0;
				same = found;
			}
			if (!same)
				pd_diags_add(r->d, listed ? listed->loc : r->accels ? r->accels->loc : (struct pd_loc){0},
					     "slot %d of '%s': listed bitstreams differ from those of the tasks placed there "
					     "(%zu needed)",
					     s, acc->name, n);
			free(bits);
		}
	}
}

/* ------------------------------------------------------------------ entry points */

static const char *const plan_keys[] = {"version", "solver", "predicted", "islands", "accelerators",
					"tasks",   "dags",   "platform",  NULL};

static bool alloc_state(struct rp *r)
{
	const pd_platform *plat = r->p->plat;
	size_t na = pd_platform_accel_count(plat), total = 0;
	r->slot_base = calloc(na ? na : 1, sizeof(size_t));
	for (size_t a = 0; r->slot_base && a < na; a++) {
		r->slot_base[a] = total;
		total += (size_t)pd_platform_accel(plat, a)->slots;
	}
	r->slot_lists = calloc(total ? total : 1, sizeof(*r->slot_lists));
	r->task_node = calloc(r->p->n_tasks ? r->p->n_tasks : 1, sizeof(*r->task_node));
	return r->slot_base && r->slot_lists && r->task_node;
}

pd_plan *pd_plan_from_node(const pd_ynode *map, pd_diags *d)
{
	size_t before = errors(d);
	struct rp r = {NULL, d, NULL, NULL, NULL, NULL};
	struct pd_plan_meta meta = {0};
	int64_t version = 0;
	if (!map) {
		pd_diags_add(d, (struct pd_loc){0}, "missing plan");
		return NULL;
	}
	if (!pd_ynode_expect(map, PD_Y_MAP, "plan", d))
		return NULL;
	pd_arena *meta_arena = pd_arena_new();
	pd_ymap_check_keys(map, plan_keys, "plan", d);
	if (pd_yget_int(map, "version", true, 0, INT32_MAX, &version, d) == 1 && version != PD_PLAN_VERSION)
		pd_diags_add(d, pd_ymap_get(map, "version")->loc, "unsupported plan version %lld (this powerdag reads %d)",
			     (long long)version, PD_PLAN_VERSION);
	parse_solver(&r, map, &meta, meta_arena);
	parse_predicted(&r, map, &meta);
	const pd_ynode *dn = get_kind(&r, map, "dags", PD_Y_SEQ, true);
	const pd_ynode *pn = get_kind(&r, map, "platform", PD_Y_MAP, true);
	pd_dagset *dags = dn ? pd_dags_from_node(dn, d) : NULL;
	pd_platform *plat = pn ? pd_platform_from_node(pn, d) : NULL;
	if (!dags || !plat) {
		pd_dags_free(dags);
		pd_platform_free(plat);
		pd_arena_free(meta_arena);
		return NULL;
	}
	r.p = pd_plan__alloc(dags, plat);
	if (!r.p || !alloc_state(&r)) {
		pd_diags_add(d, map->loc, "out of memory");
	} else {
		r.p->meta = meta;
		/* the solver name was read into a scratch arena: the plan keeps its own copy */
		if (meta.solver)
			r.p->meta.solver = pd_arena_strdup(r.p->arena, meta.solver);
		parse_islands(&r, map);
		parse_accels(&r, map);
		parse_tasks(&r, map);
		if (errors(d) == before)
			check_slots(&r);
	}
	free(r.slot_base);
	free(r.slot_lists);
	free(r.task_node);
	pd_arena_free(meta_arena);
	if (errors(d) != before) {
		pd_plan_free(r.p);
		return NULL;
	}
	return r.p;
}

pd_plan *pd_plan_load_file(const char *path, pd_diags *d)
{
	static const char *const keys[] = {"plan", NULL};
	pd_ydoc doc;
	size_t first = d->n, before = errors(d);
	pd_plan *p = NULL;
	if (pd_yaml_load_file(&doc, path, d) == 0) {
		if (doc.root->kind != PD_Y_MAP || !pd_ymap_get(doc.root, "plan"))
			pd_diags_add(d, doc.root->loc, "not a plan file: expected a top-level 'plan:' key");
		else if (pd_ymap_check_keys(doc.root, keys, "a plan file", d) == 0)
			p = pd_plan_from_node(pd_ymap_get(doc.root, "plan"), d);
	}
	if (p && errors(d) != before) {
		pd_plan_free(p);
		p = NULL;
	}
	pd_diags_rebase(d, first, doc.file, path);
	pd_yaml_free(&doc);
	return p;
}
