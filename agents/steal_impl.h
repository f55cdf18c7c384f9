/* SPDX-License-Identifier: MIT */
/* steal_impl.h - host steal and busy-time sampling of the plan's CPUs (internal to agents/): STEAL and
 * BUSY records, docs/RUNLOG.md. */
#ifndef PD_AGENT_STEAL_IMPL_H
#define PD_AGENT_STEAL_IMPL_H

#include "core/pd_core.h"
#include "runlog/pd_runlog.h"

#include <stddef.h>
#include <stdint.h>

/* How often the agent's main thread samples steal and busy time while it waits for the end of the run. */
#define PD_AGENT_STEAL_PERIOD_NS (100 * PD_NS_PER_MS)

typedef struct pd_steal pd_steal;

/* Watches the steal counters of cpus[n] in proc_stat ("/proc/stat"; tests pass a file of their own).
 * NULL with a reason in e when the file cannot be read, lacks a watched CPU's line or has no steal
 * column (kernels before 2.6.11): the run goes on without STEAL records (header steal_period_ns 0). */
pd_steal *steal_open(const char *proc_stat, const int *cpus, size_t n, pd_err *e);
/* Reads every watched CPU's counters at t_ns (ns since t0) and queues one STEAL record for each CPU
 * whose steal counter moved since its previous sample and one BUSY record for each whose busy time
 * since the baseline (elapsed - idle - iowait - steal) grew beyond what its records hold; the first
 * call only sets the baseline. Call from one thread (the ring's producer). Returns the
 * records queued. */
size_t steal_sample(pd_steal *s, int64_t t_ns, struct pd_runlog_ring *ring);
void steal_close(pd_steal *s);

/* Parses the text of /proc/stat: the steal counter (USER_HZ ticks, the 8th value after the "cpuN"
 * label) of each of cpus[n] into ticks[n] and, when idle is not NULL, its idle + iowait (the 4th and
 * 5th values, saturating) into idle[n]. Returns 0, or -1 when a CPU's line is missing or short. */
int steal_parse(const char *text, size_t len, const int *cpus, size_t n, uint64_t *ticks, uint64_t *idle);

#endif
