/* SPDX-License-Identifier: MIT */
/* exec_impl.h - the DAG executor (internal to agents/): one thread per task. */
#ifndef PD_AGENT_EXEC_IMPL_H
#define PD_AGENT_EXEC_IMPL_H

#include "agents/pd_agent.h"
#include "runlog/pd_runlog.h"
#include "agents/work_impl.h"

#include <pthread.h>

#define PD_XSLOTS 64 /* DAG instances that may be in flight at once (sinks lagging sources) */

struct pd_xdag {
	const struct pd_agent_dag *d;
	_Atomic int64_t k_stop; /* sources release instances [0, k_stop) */
	uint32_t n_sinks;
	size_t marker_task;     /* task whose release raises the GPIO marker (first source) */
	/* Instance completion: the last sink of instance k (fetch_add reaching n_sinks) records it.
	 * Slot k % PD_XSLOTS is reset by that sink before instance k + PD_XSLOTS can finish. */
	_Atomic uint32_t done[PD_XSLOTS];
	_Atomic int64_t finish[PD_XSLOTS];
	/* Late-instance policy resync: k + 1 in slot k % PD_XSLOTS once a job of instance k was skipped
	 * (the instance number makes a stale slot harmless; never reset). */
	_Atomic uint64_t skipped[PD_XSLOTS];
	/* Resync rule 4: the sources abandon every instance up to this one without waking (the DAG
	 * re-anchors every reservation's phase); only grows. -1: none. */
	_Atomic int64_t reanchor_seq;
	bool resync;
};

struct pd_exec;

struct pd_xtask {
	const struct pd_agent_task *t;
	size_t index;
	struct pd_exec *x;
	struct pd_xdag *dag;
	struct pd_xtask **preds, **succs;
	_Atomic uint64_t completed; /* jobs finished: instance k done <=> completed > k */
	_Atomic uint32_t wake;      /* futex word: bumped by predecessors and by stop */
	_Atomic uint32_t sigxcpu;   /* bumped by the SIGXCPU handler running in this thread */
	_Atomic int tid;
	_Atomic int state;          /* 0 starting, 1 ready, < 0 -errno of the set-up failure */
	/* Resync rule 4: until this CLOCK_MONOTONIC time the thread must not be woken (its reservation's
	 * next period may not have come); a job that becomes ready before it is abandoned by whoever
	 * makes it ready. Written only by the task's own thread, read by its predecessors. 0: none. */
	_Atomic int64_t reanchor_until;
	struct pd_xwork work;
	uint64_t inject_seq;   /* test-only injected overrun: this job, UINT64_MAX none */
	double inject_factor;
	struct pd_runlog_ring *ring;
	pthread_t th;
	bool started;
};

/*
 * The start barrier and the stop word, as agents/run.c drives them:
 *
 *   exec_spawn          each thread: place itself (cpuset), calibrate its work, state = 1 (or
 *        |                 -errno), ready++ and futex-wake; then it sleeps on go
 *        v
 *   exec_wait_ready     all ready ---> exec_admit (all tasks SCHED_DEADLINE, or none: revert)
 *        |                 a state < 0 or admission refused ---> exec_abort: go = 2, join
 *        v
 *   exec_go(t0)         go = 1: sources release instance k at t0 + k T; successors wait on wake
 *        |
 *   exec_stop_at(stop)  k_stop = first instance released at or after stop: sources stop releasing,
 *        |                 in-flight instances drain (successors still run them)
 *        v
 *   exec_join(limit)    threads that have not drained by the limit: abort_all = 1, every wait
 *                          returns; exec_flush_unfinished records what never finished
 *
 * go only moves 0 -> 1 or 0 -> 2; k_stop only decreases; after abort_all no job starts.
 */
struct pd_exec {
	struct pd_xtask *tasks;
	size_t n_tasks;
	struct pd_xdag *dags;
	size_t n_dags;
	_Atomic uint32_t go;     /* 0 wait, 1 run, 2 abort */
	_Atomic uint32_t ready;  /* threads past set-up (futex word) */
	_Atomic int abort_all;   /* drain timeout: every wait returns */
	int64_t t0_ns;           /* CLOCK_MONOTONIC of instance 0's release */
	pd_agent_cpusets *cs;
	const struct pd_agent_gpio_ops *gpio;
	const struct pd_agent_accel_ops *accel;
	pthread_mutex_t *accel_locks; /* one per accelerator: requests are served one at a time */
	const struct pd_agent_spec *spec;
	const char *sysfs_root;
};

/* SCHED_DEADLINE runtime given to the kernel for a task: exactly the plan's runtime, converted for
 * frequency/capacity-scaled accounting where the kernel scales (arm, arm64). The agent's own per-job
 * work that the kernel charges (wake-up, clock reads, record, successor wake-ups) is the platform's
 * job_overhead, already inside the plan's runtime (docs/MODEL.md "Overhead and margin"). */
int64_t exec_kernel_runtime(const struct pd_agent_task *t, const char *sysfs_root);

int exec_init(struct pd_exec *x, const struct pd_agent_spec *s, uint64_t seed, pd_err *e);
/* Test only: job inj->seq of the task inj names runs inj->factor x its demand. PD_EXIT_USAGE when the
 * spec has no such task. */
int exec_test_inject_overrun(struct pd_exec *x, const struct pd_inject *inj, pd_err *e);
/* Creates every thread; they place themselves and calibrate, then wait on go. */
int exec_spawn(struct pd_exec *x, pd_runlog_writer *w, pd_err *e);
/* Waits until every thread is ready; returns the first failing task index or -1. */
long exec_wait_ready(struct pd_exec *x);
/* All-or-nothing admission: SCHED_DEADLINE for every CPU task, or none (reverted). */
int exec_admit(struct pd_exec *x, pd_err *e);
void exec_go(struct pd_exec *x, int64_t t0_ns);
/* Releases no instance at or after stop_ns (relative to t0); wakes every waiting thread. */
void exec_stop_at(struct pd_exec *x, int64_t stop_ns);
/* Joins every thread, waiting at most drain_ns before making every wait return. */
void exec_join(struct pd_exec *x, int64_t drain_ns);
void exec_abort(struct pd_exec *x);
/* After join: an INSTANCE record (miss, finish_ns = response_ns = -1) for every released instance
 * that never finished although its deadline had passed by end_ns. */
void exec_flush_unfinished(struct pd_exec *x, struct pd_runlog_ring *ring, int64_t end_ns);
void exec_fini(struct pd_exec *x);
void exec_install_sigxcpu(void);

int64_t exec_mono_ns(void);
/* The longest reservation period of the SCHED_DEADLINE threads (CPU tasks); 0 when there is none. */
int64_t exec_longest_period(const struct pd_exec *x);

#endif
