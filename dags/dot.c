/* SPDX-License-Identifier: MIT */
/*
 * Graphviz DOT of a DAG set: one cluster per DAG, node ids "dag/task" (unique across the set),
 * optional fill colours and notes per task (placement, from the plan) and an optional legend.
 * Every string is written as a DOT quoted string with '"' and '\' escaped, so a name can never
 * break out of its attribute.
 */
#include "dags/dags_impl.h"

static void q(pd_buf *b, const char *s)
{
	pd_buf_append(b, "\"", 1);
	for (; s && *s; s++) {
		if (*s == '\n')
			pd_buf_append(b, "\\n", 2); /* DOT's own line break inside a label */
		if (*s == '"' || *s == '\\')
			pd_buf_append(b, "\\", 1);
		if ((unsigned char)*s >= ' ')
			pd_buf_append(b, s, 1);
	}
	pd_buf_append(b, "\"", 1);
}

static void node_id(pd_buf *b, const pd_dagset *s, size_t i)
{
	char id[2 * PD_DAGS_MAX_NAME + 2];
	snprintf(id, sizeof(id), "%s/%s", s->dags[s->tasks[i].dag].name, s->tasks[i].name);
	q(b, id);
}

static void emit_node(pd_buf *b, const pd_dagset *s, size_t i, const struct pd_dot_style *st)
{
	const struct pd_task *t = &s->tasks[i];
	char c[32], label[256];
	int n = snprintf(label, sizeof(label), "%s\nC=%s", t->name, pd_fmt_duration(t->wcet_ns, c, sizeof(c)));
	for (size_t k = 0; k < t->n_impls && n > 0 && (size_t)n < sizeof(label); k++)
		n += snprintf(label + n, sizeof(label) - (size_t)n, "%s%s", k ? "," : "\n", pd_dags_accel_kind_name(t->impls[k].kind));
	if (st && st[i].note && n > 0 && (size_t)n < sizeof(label))
		snprintf(label + n, sizeof(label) - (size_t)n, "\n%s", st[i].note);
	pd_buf_printf(b, "    ");
	node_id(b, s, i);
	pd_buf_printf(b, " [label=");
	q(b, label);
	if (st && st[i].fill) {
		pd_buf_printf(b, ", fillcolor=");
		q(b, st[i].fill);
	}
	if (pd_dags_task_is_source(t) || pd_dags_task_is_sink(t))
		pd_buf_printf(b, ", penwidth=2");
	pd_buf_printf(b, "];\n");
}

static void emit_legend(pd_buf *b, const char *const *legend)
{
	pd_buf_printf(b, "  subgraph \"cluster_legend\" {\n    label=\"placement\";\n");
	for (size_t k = 0; legend[k] && legend[k + 1]; k += 2) {
		char id[32];
		snprintf(id, sizeof(id), "legend%zu", k / 2);
		pd_buf_printf(b, "    %s [label=", id);
		q(b, legend[k + 1]);
		pd_buf_printf(b, ", fillcolor=");
		q(b, legend[k]);
		pd_buf_printf(b, "];\n");
	}
	pd_buf_printf(b, "  }\n");
}

int pd_dags_to_dot(const pd_dagset *s, const struct pd_dot_style *style, const char *const *legend, pd_buf *out)
{
	char t1[32], t2[32], lbl[3 * PD_DAGS_MAX_NAME];
	size_t before = out->len;
	pd_buf_printf(out, "digraph powerdag {\n  rankdir=LR;\n  compound=true;\n"
			   "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"Helvetica\"];\n");
	for (size_t g = 0; g < s->n_dags; g++) {
		const struct pd_dag *G = &s->dags[g];
		char cl[PD_DAGS_MAX_NAME + 16];
		snprintf(cl, sizeof(cl), "cluster_%s", G->name);
		snprintf(lbl, sizeof(lbl), "%s  T=%s D=%s", G->name, pd_fmt_duration(G->period_ns, t1, sizeof(t1)),
			 pd_fmt_duration(G->deadline_ns, t2, sizeof(t2)));
		pd_buf_printf(out, "  subgraph ");
		q(out, cl);
		pd_buf_printf(out, " {\n    label=");
		q(out, lbl);
		pd_buf_printf(out, ";\n");
		for (size_t i = G->first_task; i < G->first_task + G->n_tasks; i++)
			emit_node(out, s, i, style);
		for (size_t e = 0; e < G->n_edges; e++) {
			pd_buf_printf(out, "    ");
			node_id(out, s, G->edges[e].from);
			pd_buf_printf(out, " -> ");
			node_id(out, s, G->edges[e].to);
			pd_buf_printf(out, ";\n");
		}
		pd_buf_printf(out, "  }\n");
	}
	if (legend)
		emit_legend(out, legend);
	pd_buf_printf(out, "}\n");
	return out->len > before && out->data ? 0 : -1;
}
