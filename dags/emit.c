/* SPDX-License-Identifier: MIT */
/*
 * Canonical YAML of a DAG set. The layout is fixed (key order of docs/FORMATS.md section 2, block style for DAGs and
 * tasks, flow style for accel entries and edges) and every value is written in its canonical unit
 * form, so emit(parse(emit(s))) == emit(s) byte for byte: the plan file's round trip relies on it.
 * Optional keys appear exactly when the model says they were given (has_deadline, has_bcet, work) or
 * carry a non-default value (wcet_fixed > 0, power >= 0, accel != NULL).
 */
#include "dags/dags_impl.h"

#include <stdlib.h>

static void emit_impl(pd_yemit *y, const struct pd_impl *m)
{
	pd_yemit_map_begin(y, true);
	pd_yemit_kv_str(y, "kind", pd_dags_accel_kind_name(m->kind));
	pd_yemit_kv_duration(y, "latency", m->latency_ns);
	if (m->bitstream)
		pd_yemit_kv_str(y, "bitstream", m->bitstream);
	if (m->power_uw >= 0)
		pd_yemit_kv_power(y, "power", m->power_uw);
	if (m->accel)
		pd_yemit_kv_str(y, "accel", m->accel);
	pd_yemit_map_end(y);
}

static void emit_task(pd_yemit *y, const struct pd_task *t)
{
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "name", t->name);
	pd_yemit_kv_duration(y, "wcet", t->wcet_ns);
	if (t->wcet_fixed_ns > 0)
		pd_yemit_kv_duration(y, "wcet_fixed", t->wcet_fixed_ns);
	if (t->has_bcet)
		pd_yemit_kv_duration(y, "bcet", t->bcet_ns);
	if (t->n_impls) {
		pd_yemit_key(y, "accel");
		pd_yemit_seq_begin(y, false);
		for (size_t k = 0; k < t->n_impls; k++)
			emit_impl(y, &t->impls[k]);
		pd_yemit_seq_end(y);
	}
	if (t->work)
		pd_yemit_kv_str(y, "work", t->work);
	pd_yemit_map_end(y);
}

static void emit_dag(pd_yemit *y, const pd_dagset *s, const struct pd_dag *G)
{
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "name", G->name);
	pd_yemit_kv_duration(y, "period", G->period_ns);
	if (G->has_deadline)
		pd_yemit_kv_duration(y, "deadline", G->deadline_ns);
	if (G->has_late)
		pd_yemit_kv_str(y, "late", pd_dags_late_name(G->late));
	pd_yemit_key(y, "tasks");
	pd_yemit_seq_begin(y, false);
	for (size_t i = 0; i < G->n_tasks; i++)
		emit_task(y, &s->tasks[G->first_task + i]);
	pd_yemit_seq_end(y);
	if (G->n_edges) {
		pd_yemit_key(y, "edges");
		pd_yemit_seq_begin(y, false);
		for (size_t e = 0; e < G->n_edges; e++) {
			pd_yemit_seq_begin(y, true);
			pd_yemit_str(y, s->tasks[G->edges[e].from].name);
			pd_yemit_str(y, s->tasks[G->edges[e].to].name);
			pd_yemit_seq_end(y);
		}
		pd_yemit_seq_end(y);
	}
	pd_yemit_map_end(y);
}

void pd_dags_emit(const pd_dagset *s, pd_yemit *y)
{
	pd_yemit_seq_begin(y, false);
	for (size_t g = 0; g < s->n_dags; g++)
		emit_dag(y, s, &s->dags[g]);
	pd_yemit_seq_end(y);
}

int pd_dags_format(const pd_dagset *s, pd_buf *out, pd_err *e)
{
	pd_yemit *y = pd_yemit_new(out);
	if (!y)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	pd_yemit_map_begin(y, false);
	pd_yemit_key(y, "dags");
	pd_dags_emit(s, y);
	pd_yemit_map_end(y);
	return pd_yemit_finish(y, e);
}

int pd_dags_write_file(const pd_dagset *s, const char *path, pd_err *e)
{
	pd_buf b;
	pd_buf_init(&b);
	int rc = pd_dags_format(s, &b, e);
	if (rc == 0)
		rc = pd_write_file_atomic(path, b.data ? b.data : "", b.len, e);
	pd_buf_free(&b);
	return rc;
}
