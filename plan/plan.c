/* SPDX-License-Identifier: MIT */
/* The plan model: construction, accessors, derived FPGA slot contents, placement text, hash. */
#include "plan/plan_impl.h"

#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {"optimal", "feasible", "infeasible", "unknown"};
static const char *const objective_names[] = {"power", "slack", "balanced"};

const char *pd_plan_status_name(enum pd_status s)
{
	return (unsigned)s < 4 ? status_names[s] : "unknown";
}

const char *pd_plan_objective_name(enum pd_objective o)
{
	return (unsigned)o < 3 ? objective_names[o] : "power";
}

int pd_plan_objective_parse(const char *s, enum pd_objective *o)
{
	for (int i = 0; i < 3; i++)
		if (s && strcmp(s, objective_names[i]) == 0) {
			*o = (enum pd_objective)i;
			return 0;
		}
	return -1;
}

int pd_plan_status_parse(const char *s, enum pd_status *st)
{
	for (int i = 0; i < 4; i++)
		if (s && strcmp(s, status_names[i]) == 0) {
			*st = (enum pd_status)i;
			return 0;
		}
	return -1;
}

pd_plan *pd_plan__alloc(pd_dagset *dags, pd_platform *plat)
{
	pd_plan *p = calloc(1, sizeof(*p));
	if (!p || !dags || !plat || !(p->arena = pd_arena_new()))
		goto fail;
	p->dags = dags;
	p->plat = plat;
	p->n_tasks = pd_dags_task_count(dags);
	size_t nk = pd_platform_island_count(plat), na = pd_platform_accel_count(plat);
	p->island_opp = pd_arena_calloc(p->arena, nk ? nk : 1, sizeof(size_t));
	p->accel_opp = pd_arena_calloc(p->arena, na ? na : 1, sizeof(size_t));
	p->tasks = pd_arena_calloc(p->arena, p->n_tasks ? p->n_tasks : 1, sizeof(struct pd_plan_task));
	if (!p->island_opp || !p->accel_opp || !p->tasks)
		goto fail;
	for (size_t k = 0; k < nk; k++)
		p->island_opp[k] = pd_platform_island(plat, k)->n_opps - 1;
	for (size_t a = 0; a < na; a++) {
		const struct pd_accelerator *acc = pd_platform_accel(plat, a);
		p->accel_opp[a] = acc->n_opps ? acc->n_opps - 1 : 0;
	}
	int cpu0 = pd_platform_island(plat, 0)->cpus[0];
	for (size_t i = 0; i < p->n_tasks; i++) {
		p->tasks[i].place = (struct pd_placement){.kind = PD_PLACE_CPU, .cpu = cpu0, .island = 0};
		p->tasks[i].overhead_ns = -1;
	}
	p->meta = (struct pd_plan_meta){.status = PD_STATUS_UNKNOWN,
					.objective = PD_OBJ_POWER,
					.solver = "none",
					.lower_bound_uw = -1,
					.power_cap_uw = -1};
	return p;
fail:
	if (p)
		pd_arena_free(p->arena);
	free(p);
	pd_dags_free(dags);
	pd_platform_free(plat);
	return NULL;
}

pd_plan *pd_plan_new(pd_dagset *dags, pd_platform *plat)
{
	return pd_plan__alloc(dags, plat);
}

void pd_plan_free(pd_plan *p)
{
	if (!p)
		return;
	pd_dags_free(p->dags);
	pd_platform_free(p->plat);
	pd_arena_free(p->arena);
	free(p);
}

const pd_dagset *pd_plan_dags(const pd_plan *p) { return p->dags; }
const pd_platform *pd_plan_platform(const pd_plan *p) { return p->plat; }
struct pd_plan_meta *pd_plan_meta(pd_plan *p) { return &p->meta; }
const struct pd_plan_meta *pd_plan_meta_c(const pd_plan *p) { return &p->meta; }
size_t pd_plan_island_opp(const pd_plan *p, size_t island) { return p->island_opp[island]; }
void pd_plan_set_island_opp(pd_plan *p, size_t island, size_t opp) { p->island_opp[island] = opp; }
size_t pd_plan_accel_opp(const pd_plan *p, size_t accel) { return p->accel_opp[accel]; }
void pd_plan_set_accel_opp(pd_plan *p, size_t accel, size_t opp) { p->accel_opp[accel] = opp; }

struct pd_plan_task *pd_plan_task(pd_plan *p, size_t i)
{
	return i < p->n_tasks ? &p->tasks[i] : NULL;
}

const struct pd_plan_task *pd_plan_task_c(const pd_plan *p, size_t i)
{
	return i < p->n_tasks ? &p->tasks[i] : NULL;
}

int64_t pd_plan_task_delta(const pd_plan *p, size_t i)
{
	const struct pd_plan_task *t = &p->tasks[i];
	if (t->place.kind == PD_PLACE_CPU)
		return t->deadline_ns;
	return t->response_ns > 0 ? t->response_ns : t->wcet_ns;
}

void pd_plan_finish_offsets(const pd_plan *p, int64_t *F)
{
	const size_t *topo = pd_dags_topo(p->dags);
	for (size_t k = 0; k < p->n_tasks; k++) {
		size_t i = topo[k];
		const struct pd_task *t = pd_dags_task(p->dags, i);
		int64_t start = 0;
		for (size_t q = 0; q < t->n_preds; q++)
			if (F[t->preds[q]] > start)
				start = F[t->preds[q]];
		int64_t d = pd_plan_task_delta(p, i);
		/* clamped far above any deadline: a corrupt delta cannot overflow the sum */
		F[i] = d > INT64_MAX / 4 - start ? INT64_MAX / 4 : start + d;
	}
}

int64_t pd_plan_reservation_period(int64_t deadline, int64_t dag_period)
{
	int64_t p = deadline < PD_PLAN_PERIOD_MIN_NS ? PD_PLAN_PERIOD_MIN_NS : deadline;
	return p > dag_period ? dag_period : p;
}

int64_t pd_plan_reanchor_until(int64_t start, int64_t charged, uint32_t throttles, int64_t period, int64_t runtime,
			       int64_t deadline)
{
	/* periods the replenishment moved the reservation on: runtime += Q, deadline += T until the
	 * runtime is positive, so a job charged X on a budget Q ends ceil(X / Q) - 1 periods later
	 * (at least once per throttle seen) */
	int64_t m = runtime > 0 && charged > runtime ? (charged + runtime - 1) / runtime - 1 : 0;
	if ((int64_t)throttles > m)
		m = throttles;
	if (m > (1 << 20)) /* beyond any run's length: keeps (1 + m) T far from overflow */
		m = 1 << 20;
	int64_t lax = deadline > runtime ? deadline - runtime : 0;
	return start + (1 + m) * period - lax;
}

/* Bitstream of an FPGA-placed task (NULL when the placement or impl index is inconsistent). */
static const char *task_bitstream(const pd_plan *p, size_t i)
{
	const struct pd_task *t = pd_dags_task(p->dags, i);
	const struct pd_placement *pl = &p->tasks[i].place;
	if (pl->kind != PD_PLACE_FPGA || pl->impl >= t->n_impls)
		return NULL;
	return t->impls[pl->impl].bitstream;
}

size_t pd_plan_slot_bitstreams(const pd_plan *p, size_t accel, int slot, const char **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n_tasks; i++) {
		const struct pd_placement *pl = &p->tasks[i].place;
		const char *b = task_bitstream(p, i);
		if (!b || pl->accel != accel || pl->slot != slot)
			continue;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++) {
			const struct pd_placement *q = &p->tasks[j].place;
			const char *c = task_bitstream(p, j);
			seen = c && q->accel == accel && q->slot == slot && strcmp(c, b) == 0;
		}
		if (seen)
			continue;
		if (n < max)
			out[n] = b;
		n++;
	}
	return n;
}

const char *pd_plan_placement_fmt(const pd_plan *p, const struct pd_placement *pl, char *buf, size_t n)
{
	const struct pd_accelerator *a = pd_platform_accel(p->plat, pl->accel);
	switch (pl->kind) {
	case PD_PLACE_CPU:
		snprintf(buf, n, "cpu:%d", pl->cpu);
		break;
	case PD_PLACE_GPU:
		snprintf(buf, n, "gpu:%s", a ? a->name : "?");
		break;
	case PD_PLACE_FPGA:
		snprintf(buf, n, "fpga:%s/%d", a ? a->name : "?", pl->slot);
		break;
	}
	return buf;
}

uint64_t pd_plan_hash(const pd_plan *p)
{
	pd_buf b;
	pd_err e = {0};
	pd_buf_init(&b);
	uint64_t h = 0;
	if (pd_plan_format(p, &b, &e) == 0)
		h = pd_hash64(b.data, b.len);
	pd_buf_free(&b);
	return h;
}

enum pd_file_kind pd_plan_file_kind_of(const pd_ydoc *doc, pd_diags *d)
{
	static const char *const keys[] = {"dags", "platform", "plan"};
	static const enum pd_file_kind kinds[] = {PD_FILE_DAGS, PD_FILE_PLATFORM, PD_FILE_PLAN};
	struct pd_loc where = {doc ? doc->file : NULL, 1, 1};
	enum pd_file_kind kind = PD_FILE_UNKNOWN;
	if (!doc || !doc->root) {
		pd_diags_add(d, where, "empty document: expected a top-level key 'dags', 'platform' or 'plan'");
		return PD_FILE_UNKNOWN;
	}
	if (doc->root->kind != PD_Y_MAP) {
		pd_diags_add(d, doc->root->loc, "expected a mapping with a top-level key 'dags', 'platform' or 'plan'");
		return PD_FILE_UNKNOWN;
	}
	for (size_t i = 0; i < doc->root->n; i++) {
		const pd_ynode *k = doc->root->items[2 * i];
		for (int j = 0; j < 3; j++) {
			if (strcmp(k->str, keys[j]) != 0)
				continue;
			if (kind != PD_FILE_UNKNOWN) {
				pd_diags_add(d, k->loc, "a file holds one of 'dags', 'platform' or 'plan', not several");
				return PD_FILE_UNKNOWN;
			}
			kind = kinds[j];
		}
	}
	if (kind == PD_FILE_UNKNOWN)
		pd_diags_add(d, doc->root->loc, "unknown file kind: expected a top-level key 'dags', 'platform' or 'plan'");
	return kind;
}
