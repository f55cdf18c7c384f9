/* SPDX-License-Identifier: MIT */
/* Helpers shared by the agent tests. */
#ifndef PD_TEST_HELPER_AGENTS_H
#define PD_TEST_HELPER_AGENTS_H

#include "agents/pd_agent.h"
#include "agents/pd_runlog.h"

#include <stdbool.h>

/* Runs the agent library on a plan file for duration_ms into a fresh dir; returns the exit code and
 * the out dir (static buffer) in *out_dir. Extra options may be preset in o (NULL = defaults). */
int pd_th_run(const char *plan, int64_t duration_ms, struct pd_agent_opts *o, const char **out_dir, pd_err *e);
/* Opens DIR/run.pdlog (asserts success). */
pd_runlog *pd_th_log(const char *dir);
/* Whether this machine can run SCHED_DEADLINE tests (root and the cpuset controller). */
bool pd_th_can_dl(void);
/* Count instances / misses of DAG named dag. */
size_t pd_th_instances(const pd_runlog *r, const char *dag, size_t *misses, int64_t *max_response_ns);
/* Task index by name, or -1. */
long pd_th_task(const pd_runlog *r, const char *dag, const char *task);
/* CPU time stolen by the hypervisor so far, all CPUs, in ms (0 where the kernel does not say). The
 * test VMs' hosts can stall a vCPU for tens of ms; stolen time is charged to the reservations, so a
 * timing test that missed repeats once and prints this: a real executor bug misses in both runs. */
long long pd_th_steal_ms(void);
/* Prints every missed instance's jobs to stderr (start after release, wall time, CPU time): a
 * stalled host shows as wall time far above CPU time with no budget used up. */
void pd_th_describe_misses(const pd_runlog *r);
/* Deadline misses of every DAG in the log. */
size_t pd_th_all_misses(const pd_runlog *r);
/* pd_th_run for a test that asserts zero misses: a run that missed is repeated, up to `runs` runs
 * (see pd_th_steal_ms), after reset(arg) has cleared what the test's recorders collected (reset may
 * be NULL). Each missed run's misses, stolen time and missed instances are printed. out_dir and o
 * must not be NULL. */
int pd_th_run_steady(const char *plan, int64_t duration_ms, struct pd_agent_opts *o, const char **out_dir,
		     pd_err *e, int runs, void (*reset)(void *), void *arg);
/* Number of entries of a cpuset cgroup dir named powerdag-agent-* (leftovers). */
int pd_th_cpuset_leftovers(void);

/* Root cpuset's sched_load_balance, read while holding the agents' cpuset lock (no agent of this
 * machine is then between prepare and restore). */
#define PD_TH_BALANCE_PENDING (-2) /* a killed agent left it; the next agent restores it */
int pd_th_root_balance_quiet(void);
/* Waits until path exists (an agent's run.pdlog appears once every task is admitted). */
bool pd_th_wait_file(const char *path, int timeout_ms);

#endif

/* Fake IIO sysfs tree (iio.md 5.2) under root/bus: iio:device0 = INA226 "ina226" label "ina226-u76"
 * (in_power2_raw 107, scale 12.5 -> 1337.5 mW), iio:device1 = "ina3221x" (in_power0_input 2500 mW).
 * Values always end with a newline; updates go through root/bus/.staging + rename(). */
void pd_th_fake_iio(const char *root);
void pd_th_fake_set(const char *root, const char *dev, const char *file, const char *value);
/* In a fresh private mount namespace (the calling process only), bind root/bus over /sys/bus. */
void pd_th_enter_fake_sys(const char *root);
