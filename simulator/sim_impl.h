/* SPDX-License-Identifier: MIT */
/*
 * sim_impl.h - private to simulator/: the state of one simulation run.
 *
 * Files: sim_build.c (plan -> state), sim_run.c (event loop), sim_cbs.c (SCHED_DEADLINE entity
 * rules: CBS, GRUB, constrained deadlines), sim_core.c (per-core dispatch: EDF, background, fair
 * server), sim_dag.c (releases, precedence, statistics), sim_accel.c (FIFO accelerators),
 * sim_trace.c (Chrome/Perfetto trace), sim_output.c (text / JSON), sim_params.c.
 */
#ifndef PD_SIM_IMPL_H
#define PD_SIM_IMPL_H

#include "simulator/pd_simulator.h"
#include "simulator/sim_heap_impl.h"

#define SIM_RING 16        /* instances of one DAG in flight at most; beyond, releases are dropped */
#define SIM_HIST 2048      /* response-time histogram buckets over [0, 2 D) per DAG */
#define SIM_BW_SHIFT 20    /* kernel bandwidth fixed point: utilisation x 2^20 */
#define SIM_RATIO_SHIFT 8  /* kernel bw_ratio fixed point: (1 / U_max) x 2^8 */
#define SIM_NEVER INT64_MAX
#define SIM_NO_TASK UINT32_MAX

/* A SCHED_DEADLINE entity (struct sched_dl_entity): a CPU task or a core's fair server. */
struct sim_ent {
	int64_t dl_runtime, dl_deadline, dl_period; /* parameters */
	int64_t runtime;  /* remaining budget, <= 0 when exhausted */
	int64_t deadline; /* absolute scheduling deadline */
	int64_t bw;       /* dl_runtime / dl_period x 2^20 */
	int64_t density;  /* dl_runtime / dl_deadline x 2^20 (revised wake-up) */
	uint32_t core;
	uint32_t task;       /* index of its task, SIM_NO_TASK for a fair server */
	uint32_t timer_id, inact_id; /* heap ids of the replenishment and the inactive (0-lag) timers */
	bool reclaim;        /* GRUB accounting */
	bool runnable;       /* has work: a job (task) or background backlog (server) */
	bool throttled;      /* budget exhausted / constrained-deadline throttle, timer pending */
	bool contending;     /* counted in the core's running_bw (GRUB "active") */
	bool non_contending; /* blocked but before its 0-lag time: still in running_bw, timer armed */
};

/* Queued for EDF: runnable and not throttled. */
static inline bool sim_ent_eligible(const struct sim_ent *e) { return e->runnable && !e->throttled; }

struct sim_task {
	struct sim_ent e;     /* CPU tasks only */
	enum pd_place_kind kind;
	uint32_t core;        /* CPU: core index */
	uint32_t server;      /* accel: server index */
	uint32_t dag, local;  /* DAG and index inside it */
	int64_t wcet_ns, bcet_ns; /* at the plan's OPP (CPU: C_i(k,f); accel: latency) */
	int64_t overhead_ns;  /* CPU: per-job overhead o_k, executed by every job after its work */
	int64_t rel_deadline_ns;  /* d_i (CPU) or R_i (accel), for job-level misses */
	int64_t finish_ns;    /* the plan's latest finish F_i after the release (pd_plan_finish_offsets) */
	int64_t power_uw;     /* FPGA implementation busy power */
	const char *bitstream;
	const char *name;
	/* the task thread: jobs run in instance order */
	uint64_t next_seq;    /* instance of the next job */
	bool has_job;
	bool started;         /* the job has been dispatched once (late-instance check done) */
	int64_t job_start;    /* when it was first dispatched */
	uint32_t job_throttles; /* times the job ran out of budget */
	int64_t job_charged;  /* what the job executes (work + overhead), charged to its reservation */
	int64_t reanchor_until; /* resync rule 4: a job ready before this abandons its instance */
	uint64_t job_seq;
	int64_t job_ready, remaining;
	int64_t accel_busy_ns;
	const size_t *succs;
	size_t n_succs, n_preds;
	int32_t ready_pos;    /* index in its core's ready[] or -1 */
	bool dirty;           /* in its core's dirty[]: eligibility may have changed */
	struct pd_sim_task_stats st;
};

struct sim_dag {
	const char *name;
	int64_t period, deadline;
	size_t first_task, n_tasks;
	uint64_t next_seq;    /* next instance to release */
	uint64_t oldest_seq;  /* oldest instance not yet completed */
	int64_t next_base;    /* k * T of the next release */
	int64_t release[SIM_RING];
	uint32_t left[SIM_RING];  /* tasks of the instance not finished */
	bool skipped[SIM_RING];   /* a job of the instance was skipped (late-instance policy) */
	int64_t reanchor_seq;     /* resync rule 4: instances up to this one are abandoned at release (-1 none) */
	enum pd_late late;
	uint32_t *preds_left;     /* [SIM_RING][n_tasks] */
	int64_t *ready_at;        /* [SIM_RING][n_tasks] */
	uint32_t *hist;           /* SIM_HIST + 1 (overflow) */
	int64_t bucket_ns;
	long double sum_response;
	struct pd_sim_dag_stats st;
};

enum sim_run_kind { RUN_IDLE = 0, RUN_TASK, RUN_SERVER, RUN_BG };
/*
 * The fair server's states on a core (deferred mode, mainline >= 6.12; sim_core.c):
 *
 *              fair work arrives                   zero-laxity timer fires,
 *              (fresh period: d = now + D,         runtime left and fair work waiting
 *               runtime = R)
 *   FS_STOPPED ----------------------> FS_ARMED ------------------------------> FS_DL
 *        ^                              |    ^                                   |
 *        |   fair work gone             |    |  runtime used up: throttled,      |
 *        +------------------------------+    +--- replenished at period end -----+
 *        |   (dl_server_stop: timer          |
 *        |    cancelled)                     +-- fair work used R while ARMED:
 *        |                                       postponed one period (stays ARMED)
 *        +--------------- fair work gone (from FS_DL) ---------------------------+
 *
 * FS_DL: the server competes in EDF with the CPU tasks. In immediate mode (6.8 RFC) fair work
 * puts the server straight into FS_DL.
 */
enum sim_fs_state { FS_STOPPED = 0, FS_ARMED, FS_DL };

struct sim_core {
	int cpu;
	size_t island;
	uint32_t *tasks;      /* CPU tasks placed here */
	uint32_t n_tasks;
	/* EDF candidates: ready[] holds exactly the eligible tasks once the tasks listed in dirty[]
	 * (state changed since the last dispatch) are re-examined; a dispatch scans ready[] only. */
	uint32_t *ready, *dirty;
	uint32_t n_ready, n_dirty;
	bool grub;            /* some entity reclaims: running_bw must be tracked (0-lag timers) */
	int64_t busy_uw, idle_uw;
	enum sim_run_kind run;
	uint32_t run_task;
	int64_t last;         /* time accounted up to */
	int64_t seg_start;    /* trace: start of the current segment */
	/* GRUB (per one-CPU root domain): all x 2^20 */
	int64_t this_bw, running_bw, extra_bw, max_bw, bw_ratio;
	/* fair server */
	bool fair_on;
	enum sim_fs_state fs;
	struct sim_ent fair;
	int64_t bg_backlog, bg_chunk;
	struct pd_sim_core_stats st;
};

struct sim_req {
	uint32_t task;
	uint64_t seq;
	int64_t arrival;
};

struct sim_server {
	size_t accel;
	int slot;
	bool gpu;
	int64_t reconfig_ns;
	const char *loaded;   /* FPGA: bitstream in the slot */
	int64_t busy_uw, idle_uw; /* GPU at its OPP */
	struct sim_req *q;
	size_t cap, head, n;
	bool busy;
	struct sim_req cur;
	int64_t start, exec_start; /* exec_start: after the reconfiguration */
	struct pd_sim_server_stats st;
};

struct sim_seg { /* one trace slice */
	int64_t start, end;
	int32_t track;  /* core index, or n_cores + server index */
	int32_t what;   /* task index, -1 background, -2 fair server, -3 reconfiguration */
	uint64_t seq;
};

struct sim {
	struct pd_sim_params prm;
	const pd_plan *plan;
	const pd_dagset *ds;
	const pd_platform *plat;
	pd_rng rng;
	int64_t now;
	uint64_t events;
	struct sim_task *tasks;
	size_t n_tasks;
	struct sim_dag *dags;
	size_t n_dags;
	struct sim_core *cores;
	size_t n_cores;
	struct sim_server *servers;
	size_t n_servers;
	struct sim_heap heap;
	/* heap id layout (smaller ids win ties): cores, servers, task timers, task inactive timers,
	 * fair timers, fair inactive timers, background arrivals, DAG releases */
	uint32_t id_server, id_timer, id_inact, id_ftimer, id_finact, id_bg, id_rel, n_ids;
	enum pd_sim_fair fair_mode;
	long inject_task;     /* global task index of the injected overrun, -1 none */
	int64_t fair_runtime_ns, fair_period_ns;
	/* trace */
	struct sim_seg *segs;
	size_t n_segs, cap_segs;
	bool trace_truncated;
	bool oom;
};

/* sim_build.c */
int sim_build(struct sim *s, const pd_plan *p, const struct pd_sim_params *prm, pd_err *e);
void sim_destroy(struct sim *s);

/* sim_cbs.c: the kernel's rules for one entity (the core must be synced to s->now first) */
void sim_mark_dirty(struct sim *s, struct sim_core *c, struct sim_ent *e);
int64_t sim_to_ratio(int64_t period, int64_t runtime);
void sim_cbs_wakeup(struct sim *s, struct sim_core *c, struct sim_ent *e);   /* enqueue_dl_entity(WAKEUP) */
void sim_cbs_block(struct sim *s, struct sim_core *c, struct sim_ent *e);    /* dequeue on sleep */
/* Runtime exhausted: throttled until the next period (true), or replenished at once when that is
 * already due (false: e.g. a wake-up exactly at the deadline with no runtime left). */
bool sim_cbs_throttle(struct sim *s, struct sim_core *c, struct sim_ent *e);
void sim_cbs_replenish(struct sim *s, struct sim_ent *e);                    /* replenish_dl_entity */
void sim_cbs_inactive(struct sim *s, struct sim_core *c, struct sim_ent *e); /* 0-lag timer fired */
/* Budget consumed by running dt: dt, or the GRUB rate for reclaiming entities. */
int64_t sim_cbs_charge(const struct sim_core *c, const struct sim_ent *e, int64_t dt);
/* Wall time until the budget is exhausted when running from now. */
int64_t sim_cbs_time_left(const struct sim_core *c, const struct sim_ent *e);

/* sim_core.c */
void sim_core_sync(struct sim *s, struct sim_core *c);
void sim_core_resched(struct sim *s, struct sim_core *c);
void sim_core_event(struct sim *s, struct sim_core *c);
void sim_core_timer(struct sim *s, struct sim_core *c, struct sim_ent *e);  /* replenishment timer */
void sim_fair_timer(struct sim *s, struct sim_core *c);
void sim_bg_arrival(struct sim *s, struct sim_core *c);

/* sim_dag.c */
void sim_dag_release(struct sim *s, struct sim_dag *d);
/* Job seq of task finished (executed, or skipped by the late-instance policy): precedence and
 * statistics. The successors whose job becomes ready are woken unless the policy says not to
 * (sim_job_done_late). */
void sim_job_done(struct sim *s, uint32_t task, uint64_t seq, bool skipped);
int64_t sim_exec_time(struct sim *s, const struct sim_task *t, uint64_t seq);
/* Replay (sim_replay.c): the measured work of job seq of plan task `task`, the median of the task's
 * measured jobs when that job did not execute on the board, -1 when the task has no measured job. */
int64_t sim_replay_work(const pd_sim_replay *rp, size_t task, uint64_t seq);
/* CPU task: start its next job if it is ready (returns true), at s->now. */
bool sim_task_next_job(struct sim *s, struct sim_task *t);
/* Late-instance policy resync (docs/MODEL.md): instance seq of t's DAG is past its deadline. */
bool sim_instance_over(const struct sim *s, const struct sim_task *t, uint64_t seq);
/* Resync: skips t's pending job (not executed), then every further job that is already ready when
 * after_run; returns true when t has a ready (unstarted) job left, false when its thread sleeps. */
bool sim_task_skip(struct sim *s, struct sim_core *c, struct sim_task *t);
/* Resync rule 4 after job seq of CPU task t finished now: sets t->reanchor_until when it was late. */
void sim_task_check_late(struct sim *s, struct sim_task *t, uint64_t seq);
void sim_dag_finish(struct sim *s);

/* sim_accel.c */
void sim_accel_submit(struct sim *s, uint32_t task, uint64_t seq);
void sim_accel_done(struct sim *s, struct sim_server *v);

/* sim_trace.c */
void sim_trace_seg(struct sim *s, int32_t track, int32_t what, uint64_t seq, int64_t start, int64_t end);
int sim_trace_write(const struct sim *s, const char *path, pd_err *e);

#endif
