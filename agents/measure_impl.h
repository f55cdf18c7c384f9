/* SPDX-License-Identifier: MIT */
/* measure_impl.h - the helpers the `powerdag-agent measure` steps share (internal to agents/):
 * clocks, pinning, quantiles, the one-line error and the one JSON object on stdout. */
#ifndef PD_AGENT_MEASURE_IMPL_H
#define PD_AGENT_MEASURE_IMPL_H

#include "agents/pd_agent.h"
#include "agents/work_impl.h"

#include <jansson.h>
#include <time.h>

#define MEASURE_MAX_CPUS 64
#define MEASURE_MAX_RAILS 32

int64_t measure_mono_ns(void);
int64_t measure_clock_ns(clockid_t c);
void measure_sleep_until(int64_t abs_ns);
int measure_pin_to(int cpu); /* sched_setaffinity to one CPU; 0 or -1 */
int measure_cmp_i64(const void *a, const void *b);
/* Quantile q of sorted v[n] (nearest rank, never interpolated down). */
int64_t measure_quantile(const int64_t *v, size_t n, double q);
/* "powerdag-agent measure: ..." on stderr; returns PD_EXIT_USAGE. */
int measure_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints j (stolen) as one line on stdout; 0 or PD_EXIT_ENV. */
int measure_print_json(json_t *j);
/* A decimal in [lo, hi]; 0 or -1. */
int measure_parse_ll(const char *s, long long lo, long long hi, long long *out);
/* "0,1,4" into cpus (at most MEASURE_MAX_CPUS); 0 or -1. */
int measure_parse_cpus(const char *s, int *cpus, size_t *n);

/* 0 when no other process' SCHED_DEADLINE thread may run on cpus[n]; else the refusal on stderr
 * (foreign.c's message) and PD_EXIT_ENV: a measurement next to such a reservation would fit its turns
 * into the board's figures (docs/PROFILE.md). */
int measure_alone_on(const int *cpus, size_t n);

int measure_overhead(int argc, char **argv);
int measure_power(int argc, char **argv);
int measure_spread(int argc, char **argv);

#endif
