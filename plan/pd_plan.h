/* SPDX-License-Identifier: MIT */
/*
 * pd_plan.h - the deployment plan (docs/FORMATS.md section 4): written by `optimize`, read by `check`, `simulate`,
 * `deploy`, `report`. Self-contained: it embeds the DAG set and the platform it was computed for.
 *
 * A plan holds, per island, the chosen OPP; per GPU its OPP; per task its placement (a CPU of an
 * island, a GPU, or a slot of an FPGA through one of the task's implementations) and, for CPU tasks,
 * the SCHED_DEADLINE triple (runtime, deadline, period), the scaled WCET and the per-job overhead the
 * runtime covers (pd_platform_budget_at, docs/MODEL.md); for accelerated tasks
 * the latency at the chosen OPP and the FIFO response bound. Solver metadata and predictions ride
 * along.
 *
 * Round trip: pd_plan_write_file(pd_plan_load_file(f)) reproduces the bytes of f when f was written by
 * pd_plan_write_file (the writer is canonical; the reader keeps every written field).
 *
 * Structural invariants checked on load (schedulability is `check`'s business, not the reader's):
 * every task of the embedded DAG set appears exactly once; a CPU placement names a CPU of the
 * platform; an accelerator placement names an accelerator of the right kind for which the task has an
 * implementation, and a slot < slots for FPGAs; every island / GPU OPP is in its table; CPU tasks have
 * positive wcet/runtime/deadline/period, accelerated tasks positive wcet/response; the FPGA slot lists
 * equal the bitstreams of the tasks placed there. The file layout is documented in docs/FORMATS.md.
 * Locations and strings of a loaded plan live in its own arenas (the YAML document may be freed);
 * diagnostics of a failed load point at the caller's path string.
 */
#ifndef PD_PLAN_H
#define PD_PLAN_H

#include "core/pd_core.h"
#include "dags/pd_dags.h"
#include "platforms/pd_platform.h"

enum pd_status { PD_STATUS_OPTIMAL = 0, PD_STATUS_FEASIBLE, PD_STATUS_INFEASIBLE, PD_STATUS_UNKNOWN };
enum pd_objective { PD_OBJ_POWER = 0, PD_OBJ_SLACK, PD_OBJ_BALANCED };
enum pd_place_kind { PD_PLACE_CPU = 0, PD_PLACE_GPU, PD_PLACE_FPGA };

const char *pd_plan_status_name(enum pd_status s);       /* "optimal" ... */
const char *pd_plan_objective_name(enum pd_objective o); /* "power" ... */
int pd_plan_objective_parse(const char *s, enum pd_objective *o);
int pd_plan_status_parse(const char *s, enum pd_status *st); /* 0, or -1 for an unknown name */

struct pd_placement {
	enum pd_place_kind kind;
	int cpu;       /* CPU: Linux CPU id */
	size_t island; /* CPU: island index (derived from cpu) */
	size_t accel;  /* GPU/FPGA: accelerator index */
	int slot;      /* FPGA: slot index */
	size_t impl;   /* GPU/FPGA: index into the task's impls */
};

struct pd_plan_task {
	struct pd_placement place;
	int64_t wcet_ns;     /* CPU: C_i(k, f) at the island's OPP; accel: latency at the OPP */
	int64_t overhead_ns; /* CPU: per-job overhead o_k the plan was computed with (demand = wcet +
			      * overhead); -1 when the file does not record it (plans before it existed) */
	int64_t runtime_ns;  /* CPU: SCHED_DEADLINE runtime Q = ceil((wcet + overhead)(1 + margin)) */
	int64_t deadline_ns; /* CPU: relative deadline d_i */
	int64_t period_ns;   /* CPU: = T of its DAG */
	int64_t response_ns; /* accel: FIFO response bound R_i; CPU: = deadline_ns */
	bool reclaim;        /* request GRUB reclaiming (SCHED_FLAG_RECLAIM) */
};

struct pd_plan_meta {
	enum pd_status status;
	enum pd_objective objective;
	const char *solver;     /* e.g. "exact/glpk", "heuristic" (arena-owned or static) */
	double gap;             /* (power - lower_bound) / power; 0 when optimal */
	double solve_time_s;
	int64_t power_uw;       /* predicted average power of this plan (docs/MODEL.md power model) */
	int64_t lower_bound_uw; /* proven lower bound (-1 unknown) */
	double min_relative_slack; /* min_g (D_g - F_sink,g) / D_g */
	int64_t power_cap_uw;   /* -1 when none */
};

typedef struct pd_plan pd_plan;

/* A fresh plan over a DAG set and a platform; takes ownership of both. Every task starts on the
 * first CPU of island 0 with zero triple; islands and GPUs at their top OPP; meta: status unknown,
 * objective power, solver "none", lower bound and power cap -1. NULL on allocation failure (both
 * inputs are freed then too). */
pd_plan *pd_plan_new(pd_dagset *dags, pd_platform *plat);
pd_plan *pd_plan_load_file(const char *path, pd_diags *d);
/* From the value of the top-level "plan" key. */
pd_plan *pd_plan_from_node(const pd_ynode *map, pd_diags *d);
void pd_plan_free(pd_plan *p);

const pd_dagset *pd_plan_dags(const pd_plan *p);
const pd_platform *pd_plan_platform(const pd_plan *p);
struct pd_plan_meta *pd_plan_meta(pd_plan *p);
const struct pd_plan_meta *pd_plan_meta_c(const pd_plan *p);
/* Chosen OPP index per island / per accelerator (GPU; ignored for FPGA). */
size_t pd_plan_island_opp(const pd_plan *p, size_t island);
void pd_plan_set_island_opp(pd_plan *p, size_t island, size_t opp);
size_t pd_plan_accel_opp(const pd_plan *p, size_t accel);
void pd_plan_set_accel_opp(pd_plan *p, size_t accel, size_t opp);
struct pd_plan_task *pd_plan_task(pd_plan *p, size_t i);
const struct pd_plan_task *pd_plan_task_c(const pd_plan *p, size_t i);
/* delta_i of the end-to-end model (docs/MODEL.md): d_i for a CPU task, R_i for an accelerated one. */
int64_t pd_plan_task_delta(const pd_plan *p, size_t i);
/* The plan's latest finish of every task relative to its instance's release (docs/MODEL.md "End to
 * end"): F_i = delta_i + max over predecessors F_p. F has one entry per task. A task whose job ends
 * later has left the window the plan gave it (the late-instance rule 4 acts on that). */
void pd_plan_finish_offsets(const pd_plan *p, int64_t *F);
/* The reservation period P_i the optimizer gives a CPU task of deadline d in a DAG of period T
 * (docs/MODEL.md "The reservation"): P = d, so that the kernel's bandwidth Q/P (admission, GRUB
 * reclaiming) is the density Q/d of the model's test and every reservation has an implicit deadline;
 * raised to the kernel's minimum period (sched_deadline_period_min_us, 100 us) when d is shorter, and
 * never above T. */
#define PD_PLAN_PERIOD_MIN_NS 100000LL
int64_t pd_plan_reservation_period(int64_t deadline, int64_t dag_period);
/* Late-instance rule 4 (docs/MODEL.md "Late instances"): a CPU task whose job started at `start`, was
 * charged `charged` of CPU time (work + per-job overhead) on a reservation (runtime, deadline,
 * period) and was throttled `throttles` times, ended after its latest finish. The time before which
 * its thread must not be woken: the latest its reservation's next period can be,
 * start + (1 + m) T with m the periods the replenishments moved it on, less its laxity d - Q (a
 * wake-up that much early is throttled by at most what the job can spare). The agent and the
 * simulator both call this. */
int64_t pd_plan_reanchor_until(int64_t start, int64_t charged, uint32_t throttles, int64_t period, int64_t runtime,
			       int64_t deadline);
/* Bitstreams held by an FPGA slot, derived from the tasks placed there, in task order: returns the
 * number of distinct ones and stores up to max of them (out may be NULL with max 0 to count). */
size_t pd_plan_slot_bitstreams(const pd_plan *p, size_t accel, int slot, const char **out, size_t max);
/* Placement as text: "cpu:4", "gpu:gpu0", "fpga:pl/1". */
const char *pd_plan_placement_fmt(const pd_plan *p, const struct pd_placement *pl, char *buf, size_t n);

/* The same plan on a board that reaches the platform's cores under other CPU ids (`deploy
 * --cpu-map`, plan_remap.c): a new plan whose platform is pd_platform_remap_cpus(board, n) and
 * whose CPU tasks sit on the core at the same position of the same island; every figure unchanged.
 * NULL with diagnostics naming `file` (which must outlive d) when the map does not fit. */
pd_plan *pd_plan_remap_cpus(const pd_plan *p, const int *board, size_t n, const char *file, pd_diags *d);

void pd_plan_emit(const pd_plan *p, pd_yemit *y); /* a whole "plan:" document */
int pd_plan_write_file(const pd_plan *p, const char *path, pd_err *e);
/* The canonical text of the plan (what pd_plan_write_file writes) appended to out. */
int pd_plan_format(const pd_plan *p, pd_buf *out, pd_err *e);
/* Stable 64-bit hash of the canonical text (identifies a plan in run logs). */
uint64_t pd_plan_hash(const pd_plan *p);

/* ---------------------------------------------------------------- file kind detection */
enum pd_file_kind { PD_FILE_UNKNOWN = 0, PD_FILE_DAGS, PD_FILE_PLATFORM, PD_FILE_PLAN };
/* From the top-level key of a loaded document; records a diagnostic when unknown. */
enum pd_file_kind pd_plan_file_kind_of(const pd_ydoc *doc, pd_diags *d);

#endif /* PD_PLAN_H */
