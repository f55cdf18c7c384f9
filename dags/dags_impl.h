/* SPDX-License-Identifier: MIT */
/*
 * dags_impl.h - private to dags/: the layout of a pd_dagset and the step shared by the parser and
 * the generator that turns filled-in dags/tasks/edges into a linked model (CSR adjacency, topological
 * order) after checking the graph rules (self-loops, duplicate edges, cycles).
 */
#ifndef PD_DAGS_IMPL_H
#define PD_DAGS_IMPL_H

#include "dags/pd_dags.h"

struct pd_dagset {
	pd_arena *arena;  /* owns everything below, strings included */
	struct pd_dag *dags;
	size_t n_dags;
	struct pd_task *tasks; /* flat; DAG g owns [dags[g].first_task, +n_tasks) */
	size_t n_tasks;
	size_t *topo;     /* n_tasks entries, DAG by DAG */
};

/* An empty set with room for n_dags DAGs and n_tasks tasks (zeroed), or NULL. */
pd_dagset *pd_dags__alloc(size_t n_dags, size_t n_tasks);

/* Checks self-loops, duplicate edges and cycles of every DAG (all reported in d), then builds the
 * CSR preds/succs and topo. Returns 0, or -1 when any rule is broken (the set is then unlinked and
 * must be freed). Edges must already hold valid global indices inside their DAG. */
int pd_dags__link(pd_dagset *s, pd_diags *d);

/* Name syntax of PD_DAGS_MAX_NAME / allowed characters; returns NULL or a static reason. */
const char *pd_dags__name_problem(const char *name);

#endif
