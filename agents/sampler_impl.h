/* SPDX-License-Identifier: MIT */
/* sampler_impl.h - the periodic power-sampling thread (internal to agents/). */
#ifndef PD_AGENT_SAMPLER_IMPL_H
#define PD_AGENT_SAMPLER_IMPL_H

#include "agents/pd_agent.h"
#include "runlog/pd_runlog.h"

typedef struct pd_sampler pd_sampler;
#define PD_SAMPLER_MAX_THREADS 8
/* Samples every rail at hz from t0 (CLOCK_MONOTONIC) on, into ring: one thread per CPU of cpus (at
 * most PD_SAMPLER_MAX_THREADS), each entering that CPU's set of cs (pinned by affinity when cs is
 * NULL), the first awake taking each tick; one unpinned thread when there is one CPU. NULL when out of memory or no thread
 * could start (e says why). */
pd_sampler *sampler_start(pd_power *p, size_t n_rails, int hz, int64_t t0_ns, struct pd_runlog_ring *ring,
			  pd_agent_cpusets *cs, const int *cpus, size_t n_cpus, pd_err *e);
/* Stops, closes open gaps at the stop time; returns the threads' CPU time (ns). */
int64_t sampler_stop(pd_sampler *s);

#endif
