/* SPDX-License-Identifier: MIT */
/*
 * pd_dags.h - the DAG-set model (docs/FORMATS.md section 2): DAGs of tasks with a period T, an end-to-end deadline
 * D <= T, per-task WCET C at the platform reference frequency on a capacity-1.0 core, an optional
 * non-scalable part C_fixed <= C, an optional best case bcet <= C, optional accelerator
 * implementations, and precedence edges.
 *
 * Storage: a pd_dagset is an opaque handle owning everything (one arena). Tasks are stored flat
 * across the whole set, so a task has one global index 0..n_tasks-1 used by every later module
 * (optimizer variables, plan entries, agent threads); DAG g owns tasks [first_task, first_task +
 * n_tasks). Edges hold global indices. Adjacency is precomputed in CSR form.
 *
 * Invariants after a successful parse/validate (pd_dags_validate keeps them):
 *   - names unique (DAG names in the set, task names in their DAG); edge ends known and in the DAG;
 *   - the precedence graph of each DAG is acyclic; topo[] lists every task of the set so that each
 *     task comes after all its predecessors, DAG by DAG;
 *   - 0 < wcet_fixed <= wcet (fixed part optional: 0), 0 < bcet <= wcet (bcet optional: = wcet),
 *     0 < deadline <= period; every accel entry has a kind and latency > 0, an fpga entry a bitstream;
 *   - every duration is at most PD_DAGS_MAX_DURATION_NS, so sums over a DAG never overflow int64;
 *   - names hold only letters, digits, '_', '-', '.' (they become thread names, DOT ids, CSV columns);
 *   - work is NULL, "builtin:spin", "builtin:busy" or "plugin:LIB:SYMBOL" (see pd_dags_work_parse).
 *
 * Every string and location of a set lives in the set's arena: a set outlives the YAML document it
 * was parsed from.
 */
#ifndef PD_DAGS_H
#define PD_DAGS_H

#include "core/pd_core.h"

enum pd_accel_kind { PD_ACCEL_GPU = 0, PD_ACCEL_FPGA = 1 };

/* Sanity bound on every duration of a DAG file (1 hour): far above any real-time period, and small
 * enough that a sum over millions of tasks stays inside int64 nanoseconds. */
#define PD_DAGS_MAX_DURATION_NS (3600LL * PD_NS_PER_S)
/* Longest DAG or task name. */
#define PD_DAGS_MAX_NAME 63

const char *pd_dags_accel_kind_name(enum pd_accel_kind k); /* "gpu" / "fpga" */

/* One alternative implementation of a task on an accelerator. */
struct pd_impl {
	enum pd_accel_kind kind;
	int64_t latency_ns;  /* at the accelerator's top OPP (GPU) or its fixed clock (FPGA) */
	const char *bitstream; /* FPGA: bitstream file name (required for fpga); NULL for GPU */
	int64_t power_uw;    /* busy power increment while executing; -1 when not given */
	const char *accel;   /* optional: name of the platform accelerator it is for; NULL = any of kind */
	struct pd_loc loc;
};

struct pd_task {
	const char *name;
	size_t dag;               /* index of its DAG */
	int64_t wcet_ns;          /* C */
	int64_t wcet_fixed_ns;    /* C_fixed (0 when absent) */
	int64_t bcet_ns;          /* best case (= wcet when absent) */
	bool has_bcet;            /* bcet given in the file (kept for exact round trip) */
	const char *work;         /* "builtin:spin" (default when NULL), "builtin:busy", "plugin:lib.so:sym" */
	struct pd_impl *impls;
	size_t n_impls;
	/* CSR adjacency, global task indices */
	const size_t *preds;
	size_t n_preds;
	const size_t *succs;
	size_t n_succs;
	struct pd_loc loc;
};

struct pd_edge {
	size_t from, to; /* global task indices */
	struct pd_loc loc;
};

/* What the runtime (agent and simulator alike) does with an instance that is already late
 * (docs/MODEL.md "Late instances"). */
enum pd_late {
	PD_LATE_RESYNC = 0, /* default: skip jobs of instances that are past their deadline (or that a thread
			     * that fell behind finds already ready), so the reservations resynchronise */
	PD_LATE_QUEUE,      /* every instance runs, back to back, however late */
};
const char *pd_dags_late_name(enum pd_late l); /* "resync" / "queue" */

struct pd_dag {
	const char *name;
	int64_t period_ns;   /* T */
	int64_t deadline_ns; /* D <= T */
	bool has_deadline;   /* deadline given in the file (kept for exact round trip) */
	enum pd_late late;   /* late-instance policy (PD_LATE_RESYNC when absent) */
	bool has_late;       /* 'late' given in the file (kept for exact round trip) */
	size_t first_task, n_tasks;
	struct pd_edge *edges;
	size_t n_edges;
	struct pd_loc loc;
};

typedef struct pd_dagset pd_dagset;

/* Parse a whole file (top-level key "dags"). Every problem is recorded in d; returns NULL when any
 * error was found (nothing half-built is returned). */
pd_dagset *pd_dags_load_file(const char *path, pd_diags *d);
/* Parse from an already-loaded YAML node: the value of the "dags" key (a sequence). Used by the plan
 * reader, whose file embeds a DAG set. Diagnostics carry the node locations (the caller's document
 * must outlive d's use); the returned set copies everything it keeps. */
pd_dagset *pd_dags_from_node(const pd_ynode *dags_seq, pd_diags *d);
/* From a loaded document whose root must be a mapping holding only "dags" (what load_file does
 * after reading; also the fuzz target's entry). */
pd_dagset *pd_dags_from_doc(const pd_ydoc *doc, pd_diags *d);
void pd_dags_free(pd_dagset *s);

size_t pd_dags_count(const pd_dagset *s);
size_t pd_dags_task_count(const pd_dagset *s);
const struct pd_dag *pd_dags_dag(const pd_dagset *s, size_t g);
const struct pd_task *pd_dags_task(const pd_dagset *s, size_t i);
/* Global index of dag/task names, or -1. */
long pd_dags_find_dag(const pd_dagset *s, const char *dag);
long pd_dags_find_task(const pd_dagset *s, const char *dag, const char *task);
/* Topological order of all tasks (DAG by DAG). */
const size_t *pd_dags_topo(const pd_dagset *s);
/* Sources have no predecessors, sinks no successors. */
static inline bool pd_dags_task_is_source(const struct pd_task *t) { return t->n_preds == 0; }
static inline bool pd_dags_task_is_sink(const struct pd_task *t) { return t->n_succs == 0; }

/*
 * Longest path through the precedence graph of DAG g with per-task weights w[i] (indexed by global
 * task index; entries outside the DAG are ignored and left untouched in the outputs). Returns the
 * maximum over sinks of the finish potential F_i = w_i + max_{p in preds} F_p. When finish != NULL,
 * stores F_i per task of the DAG (the longest weight of a path ending *before* i is F_i - w_i).
 * Longest path from i to a sink (including i) goes to tail[i] when tail != NULL.
 * The int64 version saturates at INT64_MAX / INT64_MIN instead of overflowing.
 */
int64_t pd_dags_longest_path(const pd_dagset *s, size_t g, const int64_t *w, int64_t *finish, int64_t *tail);
double pd_dags_longest_path_d(const pd_dagset *s, size_t g, const double *w, double *finish, double *tail);

/* Emits only the sequence value of the "dags" key (the caller has written the key: the plan writer
 * embeds a set this way). Canonical and deterministic: parse(emit(s)) equals s (pd_dags_equal) and
 * emit(parse(emit(s))) == emit(s) byte for byte. Optional fields are written only when they were
 * given (deadline, late, bcet, work), or are non-default (wcet_fixed > 0, power >= 0, accel). */
void pd_dags_emit(const pd_dagset *s, pd_yemit *y);
/* The whole "dags:" document into out (appended). */
int pd_dags_format(const pd_dagset *s, pd_buf *out, pd_err *e);
/* The whole document to path, atomically ("-" = stdout). */
int pd_dags_write_file(const pd_dagset *s, const char *path, pd_err *e);
/* Deep equality of the models (names, timing, impls, work, edges in order; not source locations). */
bool pd_dags_equal(const pd_dagset *a, const pd_dagset *b);
/* Total utilisation sum C_i / T_g(i) at f_ref on capacity-1.0 cores. */
double pd_dags_utilisation(const pd_dagset *s);
/* Replaces task i's WCET C (at f_ref, capacity 1.0; `powerdag refit`), keeping the set's invariants:
 * refused (-1) when i is out of range or wcet_ns is not in [max(1, wcet_fixed), PD_DAGS_MAX_DURATION_NS];
 * a best case above the new WCET is lowered to it (*bcet_lowered, may be NULL, says so). */
int pd_dags_set_wcet(pd_dagset *s, size_t i, int64_t wcet_ns, bool *bcet_lowered);

/* ---------------------------------------------------------------- work strings */
enum pd_work_kind { PD_WORK_SPIN = 0, PD_WORK_BUSY, PD_WORK_PLUGIN };
struct pd_work {
	enum pd_work_kind kind;
	char lib[256];    /* PLUGIN: shared object path or name (may itself contain ':') */
	char symbol[128]; /* PLUGIN: a C identifier */
};
/* Splits a task's work string (NULL = builtin:spin). "plugin:LIB:SYMBOL" splits at the last ':'.
 * Returns 0, or -1 with a static reason in why. */
int pd_dags_work_parse(const char *work, struct pd_work *out, const char **why);

/* ---------------------------------------------------------------- overrun injection (tests) */
/* "DAG/TASK:N:F": job N (instance N, from 0) of task TASK of DAG DAG executes F times the demand it
 * would have had, once. Used by `simulate --inject-overrun` and by the agent's test-only environment
 * variable PD_AGENT_INJECT_OVERRUN (docs/SIMULATOR.md, docs/DEPLOY.md); 0 < F <= 1000. */
struct pd_inject {
	char dag[PD_DAGS_MAX_NAME + 1], task[PD_DAGS_MAX_NAME + 1];
	uint64_t seq;
	double factor;
};
/* Returns 0, or -1 with a static reason in why. */
int pd_dags_inject_parse(const char *spec, struct pd_inject *out, const char **why);
/* Global task index of the injection in s, or -1 when its DAG/task does not exist. */
long pd_dags_inject_task(const pd_dagset *s, const struct pd_inject *in);

/* ---------------------------------------------------------------- Graphviz */
/* Optional per-task decoration of the DOT output (indexed by global task index). */
struct pd_dot_style {
	const char *fill; /* node fill colour (X11 or #rrggbb); NULL = white */
	const char *note; /* extra label line, e.g. "cpu:4"; NULL = none */
};
/* Appends a "digraph" with one cluster per DAG (label: name, T, D), one node per task (label: name,
 * C) and the edges. style may be NULL; legend (NULL-terminated pairs "colour", "meaning") adds a
 * legend cluster when non-NULL. Returns 0 or -1 on allocation failure. */
int pd_dags_to_dot(const pd_dagset *s, const struct pd_dot_style *style, const char *const *legend, pd_buf *out);

/* ---------------------------------------------------------------- generator (powerdag gen) */
struct pd_gen_params {
	unsigned n_dags;          /* default 3 */
	unsigned min_tasks, max_tasks; /* per DAG, default 5:10 */
	double util;              /* total utilisation sum C/T over the set at f_ref, capacity 1; default 1.6;
				   * honoured within 1 % (gen.c) or refused */
	double accel_ratio;       /* fraction of tasks with an accelerator implementation, default 0 */
	uint64_t seed;            /* default 1 */
	unsigned layers_min, layers_max; /* default 3:5 */
	double edge_prob;         /* probability of an edge to each node of the previous layer, 0.4 */
	int64_t min_wcet_ns;      /* smallest WCET (kernel floor margin); 1.024 ms; others shrink to keep util */
	bool whole_wcet;          /* no bcet: every job does its whole WCET (the demo: work and model agree);
				   * default false, bcet drawn in [C/2, C] */
};
void pd_dags_gen_defaults(struct pd_gen_params *p);
/* Builds a random set: layered DAGs with exactly one source and one sink each, periods from
 * {20, 25, 40, 50, 80, 100} ms, D = T, UUniFast utilisations per DAG. Reproducible per seed.
 * Bad parameters -> NULL with e->code = PD_EXIT_USAGE. Details in dags/gen.c. */
pd_dagset *pd_dags_generate(const struct pd_gen_params *p, pd_err *e);

#endif /* PD_DAGS_H */
