/* SPDX-License-Identifier: MIT */
/* foreign_impl.h - other processes' SCHED_DEADLINE threads on the plan's CPUs (internal to agents/):
 * the start-up refusal and the FOREIGN records, docs/RUNLOG.md. */
#ifndef PD_AGENT_FOREIGN_IMPL_H
#define PD_AGENT_FOREIGN_IMPL_H

#include "core/pd_core.h"
#include "runlog/pd_runlog.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How often the agent's main thread scans for them while it waits for the end of the run. */
#define PD_AGENT_FOREIGN_PERIOD_NS (500 * PD_NS_PER_MS)
/* The most threads one scan reports (and the run keeps track of): beyond, they are counted only. */
#define PD_AGENT_FOREIGN_MAX 64

struct pd_foreign_thread {
	pid_t tid, pid;
	int cpu; /* the first of the plan's CPUs in its affinity */
	char comm[PD_RUNLOG_COMM_LEN];
	int64_t runtime_ns, deadline_ns, period_ns;
};

/* Scans proc ("/proc"; tests may pass another tree) for SCHED_DEADLINE threads of processes other
 * than self whose affinity includes one of cpus[n]. Threads with a zero runtime or the kernel's
 * SCHED_FLAG_SUGOV (schedutil's frequency workers: a special entity without bandwidth) are not
 * competitors and are left out. Fills out[0..max) and returns how many were found (more than max
 * when out was too small). A thread that exits during the scan is simply not found. */
size_t foreign_scan(const char *proc, pid_t self, const int *cpus, size_t n, struct pd_foreign_thread *out, size_t max);

/* One line per thread found (at most 8, then a count) appended to problems; returns how many. */
size_t foreign_problems(const char *proc, const int *cpus, size_t n, pd_buf *problems);
/* The start-up check: PD_EXIT_ENV naming the threads (tid, name, CPU, reservation) when any is found,
 * else 0. */
int foreign_refuse(const char *proc, const int *cpus, size_t n, pd_err *e);

/* The periodic scan of a run: one FOREIGN record per thread seen, per scan (its from_ns is the first
 * scan of this run that saw that tid). Call from one thread (the ring's producer). */
typedef struct pd_foreign pd_foreign;
pd_foreign *foreign_open(const char *proc, const int *cpus, size_t n);
size_t foreign_sample(pd_foreign *f, int64_t t_ns, struct pd_runlog_ring *ring);
void foreign_close(pd_foreign *f);

#endif
