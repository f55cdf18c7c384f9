/* SPDX-License-Identifier: MIT */
/* sampler_impl.h - the periodic power-sampling thread (internal to agents/). */
#ifndef PD_AGENT_SAMPLER_IMPL_H
#define PD_AGENT_SAMPLER_IMPL_H

#include "agents/pd_agent.h"
#include "runlog/pd_runlog.h"

typedef struct pd_sampler pd_sampler;
/* Samples every rail at hz from t0 (CLOCK_MONOTONIC) on, into ring. */
pd_sampler *sampler_start(pd_power *p, size_t n_rails, int hz, int64_t t0_ns, struct pd_runlog_ring *ring, pd_err *e);
/* Stops, closes open gaps at the stop time; returns the thread's CPU time (ns). */
int64_t sampler_stop(pd_sampler *s);

#endif
