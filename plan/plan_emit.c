/* SPDX-License-Identifier: MIT */
/*
 * The canonical plan writer (layout: docs/FORMATS.md). One fixed key order, every field written,
 * canonical unit forms and shortest round-trip doubles, so that write(read(write(x))) == write(x)
 * byte for byte and pd_plan_hash identifies a plan across machines.
 */
#include "plan/plan_impl.h"

#include <stdlib.h>

static void emit_meta(const pd_plan *p, pd_yemit *y)
{
	const struct pd_plan_meta *m = &p->meta;
	pd_yemit_key(y, "solver");
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "status", pd_plan_status_name(m->status));
	pd_yemit_kv_str(y, "objective", pd_plan_objective_name(m->objective));
	pd_yemit_kv_str(y, "solver", m->solver ? m->solver : "none");
	pd_yemit_kv_double(y, "gap", m->gap);
	pd_yemit_kv_double(y, "solve_time_s", m->solve_time_s);
	if (m->power_cap_uw >= 0)
		pd_yemit_kv_power(y, "power_cap", m->power_cap_uw);
	pd_yemit_map_end(y);
	pd_yemit_key(y, "predicted");
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_power(y, "power", m->power_uw);
	if (m->lower_bound_uw >= 0)
		pd_yemit_kv_power(y, "lower_bound", m->lower_bound_uw);
	pd_yemit_kv_double(y, "min_relative_slack", m->min_relative_slack);
	pd_yemit_map_end(y);
}

static void emit_islands(const pd_plan *p, pd_yemit *y)
{
	pd_yemit_key(y, "islands");
	pd_yemit_seq_begin(y, false);
	for (size_t k = 0; k < pd_platform_island_count(p->plat); k++) {
		const struct pd_island *isl = pd_platform_island(p->plat, k);
		pd_yemit_map_begin(y, true);
		pd_yemit_kv_str(y, "name", isl->name);
		pd_yemit_kv_freq(y, "freq", isl->opps[p->island_opp[k]].freq_khz);
		pd_yemit_map_end(y);
	}
	pd_yemit_seq_end(y);
}

static void emit_fpga_slots(const pd_plan *p, size_t a, const struct pd_accelerator *acc, pd_yemit *y)
{
	pd_yemit_key(y, "slots");
	pd_yemit_seq_begin(y, false);
	for (int s = 0; s < acc->slots; s++) {
		size_t n = pd_plan_slot_bitstreams(p, a, s, NULL, 0);
		const char **bits = calloc(n ? n : 1, sizeof(*bits));
		if (bits)
			pd_plan_slot_bitstreams(p, a, s, bits, n);
		pd_yemit_map_begin(y, true);
		pd_yemit_kv_int(y, "slot", s);
		pd_yemit_key(y, "bitstreams");
		pd_yemit_seq_begin(y, true);
		/* out of memory: an empty list, which the reader then rejects (never a silent success) */
		for (size_t b = 0; bits && b < n; b++)
			pd_yemit_str(y, bits[b]);
		pd_yemit_seq_end(y);
		pd_yemit_map_end(y);
		free(bits);
	}
	pd_yemit_seq_end(y);
}

static void emit_accels(const pd_plan *p, pd_yemit *y)
{
	size_t na = pd_platform_accel_count(p->plat);
	if (!na)
		return;
	pd_yemit_key(y, "accelerators");
	pd_yemit_seq_begin(y, false);
	for (size_t a = 0; a < na; a++) {
		const struct pd_accelerator *acc = pd_platform_accel(p->plat, a);
		pd_yemit_map_begin(y, false);
		pd_yemit_kv_str(y, "name", acc->name);
		if (acc->kind == PD_ACCEL_GPU)
			pd_yemit_kv_freq(y, "freq", acc->opps[p->accel_opp[a]].freq_khz);
		else
			emit_fpga_slots(p, a, acc, y);
		pd_yemit_map_end(y);
	}
	pd_yemit_seq_end(y);
}

static void emit_task(const pd_plan *p, size_t i, pd_yemit *y)
{
	const struct pd_task *t = pd_dags_task(p->dags, i);
	const struct pd_plan_task *pt = &p->tasks[i];
	char buf[160];
	pd_yemit_map_begin(y, true);
	pd_yemit_kv_str(y, "dag", pd_dags_dag(p->dags, t->dag)->name);
	pd_yemit_kv_str(y, "task", t->name);
	pd_yemit_kv_str(y, "placement", pd_plan_placement_fmt(p, &pt->place, buf, sizeof(buf)));
	if (pt->place.kind == PD_PLACE_CPU) {
		pd_yemit_kv_duration(y, "wcet", pt->wcet_ns);
		if (pt->overhead_ns >= 0) /* absent in plans written before the overhead existed */
			pd_yemit_kv_duration(y, "overhead", pt->overhead_ns);
		pd_yemit_kv_duration(y, "runtime", pt->runtime_ns);
		pd_yemit_kv_duration(y, "deadline", pt->deadline_ns);
		pd_yemit_kv_duration(y, "period", pt->period_ns);
		pd_yemit_kv_bool(y, "reclaim", pt->reclaim);
	} else {
		pd_yemit_kv_int(y, "impl", (int64_t)pt->place.impl);
		pd_yemit_kv_duration(y, "wcet", pt->wcet_ns);
		pd_yemit_kv_duration(y, "response", pt->response_ns);
	}
	pd_yemit_map_end(y);
}

void pd_plan_emit(const pd_plan *p, pd_yemit *y)
{
	pd_yemit_map_begin(y, false);
	pd_yemit_key(y, "plan");
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_int(y, "version", PD_PLAN_VERSION);
	emit_meta(p, y);
	emit_islands(p, y);
	emit_accels(p, y);
	pd_yemit_key(y, "tasks");
	pd_yemit_seq_begin(y, false);
	for (size_t i = 0; i < p->n_tasks; i++)
		emit_task(p, i, y);
	pd_yemit_seq_end(y);
	pd_yemit_key(y, "dags");
	pd_dags_emit(p->dags, y);
	pd_yemit_key(y, "platform");
	pd_platform_emit(p->plat, y);
	pd_yemit_map_end(y);
	pd_yemit_map_end(y);
}

int pd_plan_format(const pd_plan *p, pd_buf *out, pd_err *e)
{
	pd_yemit *y = pd_yemit_new(out);
	if (!y)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	pd_plan_emit(p, y);
	return pd_yemit_finish(y, e);
}

int pd_plan_write_file(const pd_plan *p, const char *path, pd_err *e)
{
	pd_buf b;
	pd_buf_init(&b);
	int rc = pd_plan_format(p, &b, e);
	if (rc == 0)
		rc = pd_write_file_atomic(path, b.data ? b.data : "", b.len, e);
	pd_buf_free(&b);
	return rc;
}
