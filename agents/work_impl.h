/* SPDX-License-Identifier: MIT */
/* work_impl.h - work kinds of one task (internal to agents/). */
#ifndef PD_AGENT_WORK_IMPL_H
#define PD_AGENT_WORK_IMPL_H

#include "agents/pd_agent.h"

/* Spin jobs whose rate the twin's spin keeps current (work.c, "Spin on an emulated board"). */
#define PD_SPIN_TRACK_JOBS 9
/* Shorter jobs say too little about the rate: two clock reads of ~1 us are 1 % of 200 us. */
#define PD_SPIN_TRACK_MIN_NS (200 * PD_NS_PER_US)

struct pd_xwork {
	enum pd_agent_work kind;
	pd_agent_plugin_fn fn;
	void *dl;
	double iters_per_ref_ns; /* spin: loop iterations per ns of scalable work at f_ref, capacity 1 */
	double ref_per_cur;      /* spin: f_ref / (capacity f_cur) read at calibration, 1 without cpufreq */
	bool track;              /* spin on the board twin: the rate follows the last jobs (work.c) */
	double rates[PD_SPIN_TRACK_JOBS]; /* their observed rates, scaled as iters_per_ref_ns */
	unsigned n_rates, next_rate;
	int64_t wcet_ref_ns, bcet_ref_ns, fixed_ref_ns;
	int64_t ref_khz, opp_khz;
	double capacity;
	int64_t wcet_ns, bcet_ns; /* at the OPP */
	pd_rng rng;               /* bcet..wcet variability, seeded per task */
};

/* Resolves the work (dlopen for plugins). 0 or PD_EXIT_USAGE/ENV with a message naming the task. */
int work_init(struct pd_xwork *w, const struct pd_agent_task *t, uint64_t seed, size_t index, pd_err *e);
/* spin: measures the loop rate on the calling thread's CPU (call it there, still SCHED_OTHER). On the
 * board twin (SYSFS_ROOT/kernel/powerdag-twin exists) the rate is then tracked job by job. */
void work_calibrate(struct pd_xwork *w, int cpu, const char *sysfs_root);
/* spin: one job's N iterations took DT ns of thread CPU time; with tracking on, the rate becomes the
 * median of the last PD_SPIN_TRACK_JOBS such observations of at least PD_SPIN_TRACK_MIN_NS. */
void work_spin_observe(struct pd_xwork *w, uint64_t n, int64_t dt);
/* Draws the next job's demand (ns at the OPP) and its reference-frequency counterpart. */
int64_t work_draw(struct pd_xwork *w, int64_t *ref_ns);
/* Executes one job; returns 0 or non-zero when the job failed (plugin). Thread CPU clock: busy work
 * stores its first and last readings in *cpu0_ns / *cpu1_ns; spin leaves *cpu0_ns (read by the caller
 * before) and stores its last reading in *cpu1_ns; plugins set *cpu1_ns = -1. */
int work_do(struct pd_xwork *w, uint64_t seq, int64_t demand_ns, int64_t ref_ns, int64_t *cpu0_ns, int64_t *cpu1_ns);
/* The builtin:spin body, n iterations (profile measures its speed: agents/measure.c). */
uint64_t work_spin(uint64_t n, uint64_t x);
/* Burns exactly ns of this thread's CPU time. */
void work_busy_ns(int64_t ns);
void work_fini(struct pd_xwork *w);

#endif
