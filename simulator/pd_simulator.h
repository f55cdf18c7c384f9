/* SPDX-License-Identifier: MIT */
/*
 * pd_simulator.h - discrete-event simulation of a deployment plan on its platform
 * (`powerdag simulate`): predicted power, energy, deadline misses and response times.
 *
 * What is simulated (docs/SIMULATOR.md has the rules and their kernel sources):
 *   - per core, SCHED_DEADLINE as the kernel does it: a CBS per task (runtime budget, absolute
 *     scheduling deadline, throttling at exhaustion, replenishment at the next period, the wake-up
 *     rule, the constrained-deadline rules), EDF among the reservations of the core;
 *   - GRUB reclaiming for tasks with the reclaim flag (active/inactive utilisation, 0-lag timer);
 *   - the fair deadline server serving a background (SCHED_OTHER) load, immediate or deferred;
 *   - accelerators as non-preemptive FIFO servers, FPGA reconfiguration when a slot changes bitstream;
 *   - DAG precedence (a job is released when its predecessors of the same instance finished),
 *     periodic sources with optional release jitter;
 *   - execution times: always WCET, uniform in [bcet, wcet], or uniform with random overruns; one
 *     injected overrun of a chosen job;
 *   - the late-instance policy of each DAG (resync or queue) exactly as the agent applies it;
 *   - power integrated over time from the platform's power model.
 * Memory does not depend on the simulated duration: statistics are streamed (a fixed histogram per
 * DAG for the p99), instances in flight are kept in a bounded ring.
 */
#ifndef PD_SIMULATOR_H
#define PD_SIMULATOR_H

#include "core/pd_core.h"
#include "plan/pd_plan.h"

enum pd_sim_exec {
	PD_SIM_EXEC_WCET = 0, /* every job runs exactly its WCET */
	PD_SIM_EXEC_UNIFORM,  /* uniform in [bcet, wcet] */
	PD_SIM_EXEC_OVERRUN,  /* uniform, and with probability overrun_prob the job needs wcet * overrun_factor */
	PD_SIM_EXEC_REPLAY,   /* CPU jobs execute what the same job took in a run (sim_replay.c) */
};

/* The measured execution times of a run, matched to a plan (sim_replay.c, docs/SIMULATOR.md). */
typedef struct pd_sim_replay pd_sim_replay;

enum pd_sim_fair {
	PD_SIM_FAIR_AUTO = 0,  /* deferred when the platform has dl.fair_server (mainline >= 6.12), else off */
	PD_SIM_FAIR_OFF,
	PD_SIM_FAIR_IMMEDIATE, /* the server competes in EDF as soon as fair work is runnable (6.8 RFC) */
	PD_SIM_FAIR_DEFERRED,  /* runs only when fair work starved until its zero-laxity time (6.12) */
};

struct pd_sim_params {
	int64_t duration_ns;          /* simulated time, default 10 s */
	uint64_t seed;                /* default 1 */
	enum pd_sim_exec exec;
	double overrun_prob;          /* PD_SIM_EXEC_OVERRUN */
	double overrun_factor;        /* > 1 */
	int64_t release_jitter_ns;    /* sources released at k*T + U[0, jitter] */
	double background_util;       /* fair (SCHED_OTHER) work offered per core, fraction of a CPU */
	int64_t background_period_ns; /* the work arrives in chunks of background_util * this, default 10 ms */
	enum pd_sim_fair fair;
	bool reclaim_all;             /* treat every CPU task as SCHED_FLAG_RECLAIM (what-if) */
	const char *trace_path;       /* Chrome/Perfetto JSON trace, NULL = none */
	int64_t trace_from_ns, trace_to_ns;
	size_t trace_max_events;      /* default 2 000 000 */
	/* One injected overrun (tests, what-if): job inject.seq of inject.task executes inject.factor x
	 * the demand the execution model drew for it. */
	bool has_inject;
	struct pd_inject inject;
	/* PD_SIM_EXEC_REPLAY: the run named by replay_path (borrowed, set by pd_sim_parse_exec), loaded by
	 * the caller with pd_sim_replay_load into replay (borrowed; pd_sim_run refuses REPLAY without it). */
	const char *replay_path;
	const pd_sim_replay *replay;
};

void pd_sim_defaults(struct pd_sim_params *p);
/* "wcet", "uniform", "overrun:P:F" (P probability in [0,1], F factor >= 1), "replay:RUN" (a run
 * directory or run log). */
int pd_sim_parse_exec(const char *s, struct pd_sim_params *p, pd_err *e);
/* "DAG/TASK:N:F" (pd_dags_inject_parse); the names are resolved against the plan by pd_sim_run. */
int pd_sim_parse_inject(const char *s, struct pd_sim_params *p, pd_err *e);
/* "immediate", "deferred", "off", "auto". */
int pd_sim_parse_fair(const char *s, enum pd_sim_fair *f, pd_err *e);

struct pd_sim_dag_stats {
	const char *name;          /* borrowed from the plan */
	uint64_t instances;        /* completed, plus unfinished ones whose deadline passed */
	uint64_t misses;           /* response > D (or unfinished at D, or dropped) */
	uint64_t dropped;          /* releases skipped because too many instances were in flight */
	uint64_t skipped;          /* instances abandoned by the late-instance policy (resync); also misses */
	int64_t max_response_ns;
	int64_t p99_response_ns;   /* upper edge of the histogram bucket: never below the true p99 */
	double mean_response_ns;
};

struct pd_sim_task_stats {
	uint64_t jobs;
	uint64_t skipped;          /* jobs not executed (late-instance policy resync) */
	uint64_t job_misses;       /* CPU: finished after ready + d_i; accel: after ready + R_i */
	uint64_t throttles;        /* CPU: budget exhaustions */
	uint64_t reanchors;        /* CPU, resync: jobs that ended after the plan's latest finish F_i (rule 4) */
	int64_t max_response_ns;   /* ready (predecessors done) -> finished */
};

struct pd_sim_core_stats {
	int cpu;
	int64_t busy_ns;           /* DL tasks + background */
	int64_t dl_busy_ns;
	int64_t bg_demand_ns, bg_served_ns, bg_server_ns; /* background offered / served / served by the server */
	uint64_t throttles;
};

struct pd_sim_server_stats {
	const char *name;          /* accelerator name (borrowed) */
	int slot;                  /* FPGA slot, -1 for a GPU */
	int64_t busy_ns;
	uint64_t requests, reconfigs;
	int64_t max_response_ns;   /* request arrival -> completion */
};

typedef struct pd_sim_result {
	int64_t duration_ns;
	double energy_j, power_w;
	double base_w, cpu_w, accel_w; /* average power by component */
	uint64_t jobs, misses, job_misses, events;
	uint64_t reanchors; /* resync rule 4: late jobs whose thread re-anchored its reservation */
	int64_t bg_demand_ns, bg_served_ns, bg_server_ns;
	enum pd_sim_fair fair_mode;    /* resolved (never AUTO) */
	double wall_s;
	size_t n_dags, n_tasks, n_cores, n_servers;
	struct pd_sim_dag_stats *dags;
	struct pd_sim_task_stats *tasks;
	struct pd_sim_core_stats *cores;
	struct pd_sim_server_stats *servers;
	bool trace_truncated;
} pd_sim_result;

/* Runs the simulation; NULL with e set on bad parameters (PD_EXIT_USAGE) or when the trace cannot be
 * written (PD_EXIT_ENV). */
/* The run log of RUN (a run directory or the run.pdlog itself) made from plan (the plan hash must
 * match: exit 2 otherwise), with every executed CPU job's measured CPU time. NULL and e set on error. */
pd_sim_replay *pd_sim_replay_load(const char *run, const pd_plan *plan, pd_err *e);
void pd_sim_replay_free(pd_sim_replay *rp);
int64_t pd_sim_replay_duration(const pd_sim_replay *rp); /* length of the run, ns */
size_t pd_sim_replay_jobs(const pd_sim_replay *rp);      /* measured CPU jobs matched to the plan */

pd_sim_result *pd_sim_run(const pd_plan *p, const struct pd_sim_params *params, pd_err *e);
void pd_sim_result_free(pd_sim_result *r);

/* The `simulate --json` object (docs/SIMULATOR.md) as text (malloc'd), or NULL on out-of-memory. */
char *pd_sim_result_json(const pd_sim_result *r, const pd_plan *p);
void pd_sim_result_print(const pd_sim_result *r, const pd_plan *p, FILE *out);
const char *pd_sim_fair_name(enum pd_sim_fair f);

#endif /* PD_SIMULATOR_H */
