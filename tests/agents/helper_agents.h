/* SPDX-License-Identifier: MIT */
/* Helpers shared by the agent tests. */
#ifndef PD_TEST_HELPER_AGENTS_H
#define PD_TEST_HELPER_AGENTS_H

#include "agents/pd_agent.h"
#include "runlog/pd_runlog.h"

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
/* The timing verdict on one run of a checked plan (docs/MODEL.md "Late instances"). The property is
 * zero misses; it can only be asked of a run the machine did not disturb. A run is *quiet* when the
 * hypervisor stole at most 0.5 % of its duration (all CPUs; /proc/stat, 10-ms resolution) and no
 * builtin:busy job was charged more than 200 us of CPU time beyond its demand (its loop reads the
 * thread clock every ~1 us: a larger excess is a vCPU stall the kernel charged to the thread, which
 * /proc/stat does not always count as stolen): a quiet run must not miss. A noisy run (this 2-CPU
 * VM's host has stolen 10-45 % for minutes) must show what the late-instance policy promises after
 * transients: at most 10 % of the instances missed, plus twice the share of the CPUs' time the host
 * stole, and no streak of more than PD_TH_MAX_STREAK consecutive missed instances of one DAG (a
 * reservation phase that never comes back, the failure rule 4 removes, misses every later one), plus
 * the periods the kernel keeps a thread throttled to pay back a stall charged beyond its runtime (a
 * 30-ms vCPU stall on a 3.5-ms/10-ms reservation holds it 9 periods, whatever the agent does). */
#define PD_TH_MAX_STREAK 5
struct pd_th_verdict {
	size_t instances, misses, streak; /* streak: longest run of consecutive missed instances */
	size_t stalls;                    /* busy jobs charged > 200 us beyond their demand */
	size_t debt_periods;              /* the most periods a stall's debt keeps a thread throttled */
	long long steal_ms;
	int64_t run_ms;
	bool quiet, ok;
};
/* dag: judge that DAG's instances only (NULL: every DAG); stalls are counted over every job. */
void pd_th_judge(const pd_runlog *r, const char *dag, long long steal_ms, int64_t run_ms, struct pd_th_verdict *v);
/* ck_assert on a verdict, with its figures in the message. */
#define pd_th_assert_timing(v)                                                                                   \
	ck_assert_msg((v)->ok,                                                                                   \
		      "%s run: %zu of %zu instances missed, longest streak %zu, %lld ms stolen in %lld ms, %zu stalls " \
		      "(longest throttles %zu periods)",                                                         \
		      (v)->quiet ? "quiet" : "noisy", (v)->misses, (v)->instances, (v)->streak, (v)->steal_ms,       \
		      (long long)(v)->run_ms, (v)->stalls, (v)->debt_periods)
/* pd_th_run for a test that asserts the timing verdict: a run whose verdict is not ok is repeated, up
 * to `runs` runs, after reset(arg) has cleared what the test's recorders collected (reset may be
 * NULL). Each run that missed is described (verdict, stolen time, missed instances). v receives the
 * last run's verdict. out_dir, o and v must not be NULL. */
int pd_th_run_steady(const char *plan, int64_t duration_ms, struct pd_agent_opts *o, const char **out_dir,
		     pd_err *e, int runs, void (*reset)(void *), void *arg, struct pd_th_verdict *v);
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
