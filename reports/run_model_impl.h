/* SPDX-License-Identifier: MIT */
/*
 * run_model_impl.h - internal to reports/: the in-memory model of one run directory, and the statistics
 * computed from it. Every writer (text, JSON, CSV, HTML, Perfetto) reads only these two structures,
 * so the numbers are computed once (stats.c) and printed the same everywhere.
 *
 * Time: every *_ns below is relative to the run's start (t = 0 at the first record of the run log),
 * so that plots and tables start at zero whatever clock the board used.
 *
 * Ownership: a rpt_run owns its plan, its arena (strings) and its malloc'd vectors; rpt_run_free()
 * releases all of them. rpt_stats owns malloc'd arrays released by rpt_stats_free().
 */
#ifndef PD_REPORTS_RUN_MODEL_IMPL_H
#define PD_REPORTS_RUN_MODEL_IMPL_H

#include "core/pd_core.h"
#include "plan/pd_plan.h"
#include "runlog/pd_runlog.h"

#include <stdbool.h>
#include <stdint.h>

/* One power rail and its samples (time-ordered; the loader drops non-monotonic samples). */
struct rpt_rail {
	const char *name;     /* rail name, e.g. "VCCINT" */
	const char *measures; /* component from the platform's sensor list, or NULL */
	size_t n, cap;
	int64_t *t_ns;
	int64_t *uw;
};

/* One execution of one task (a job), as the agent logged it. */
struct rpt_job {
	size_t task;         /* global task index in the plan's DAG set */
	uint64_t inst;       /* sequence number of the DAG instance it belongs to */
	int cpu;             /* Linux CPU it ran on; -1 on an accelerator or unknown */
	int64_t release_ns;  /* its DAG instance's release */
	int64_t start_ns;    /* first instruction of the job body */
	int64_t end_ns;      /* completion */
	int64_t exec_ns;     /* thread CPU time of the job (end - start for accelerated jobs) */
	int64_t demand_ns;   /* the work the agent asked of it (JOB demand_ns; 0 unknown) */
	bool overrun;        /* it ran past its SCHED_DEADLINE runtime (flag or SIGXCPU) */
	bool failed;         /* plugin / accelerator error */
};

/* A job the late-instance policy skipped (JOB flag SKIPPED): never executed; at_ns is when its thread
 * decided so. Kept apart from the executed jobs, which every statistic reads. */
struct rpt_skip {
	size_t task;
	uint64_t inst;
	int cpu;
	int64_t release_ns, at_ns;
};

/* One DAG instance: all sources released at release_ns, done when every sink has finished. */
struct rpt_inst {
	size_t dag;
	uint64_t seq;
	int64_t release_ns;
	int64_t finish_ns; /* -1: never finished although release + D passed: a miss (runlog_import.c) */
};

/* A hole in power sampling reported by the agent (or found between two samples, see stats.c). */
struct rpt_gap {
	const char *rail; /* NULL: all rails */
	int64_t from_ns, to_ns;
	bool late; /* stats: no read failed, the sampler ticked late (else a GAP record: unreadable) */
};

/* CPU time the hypervisor stole from one vCPU within (from_ns, to_ns] (a STEAL record, docs/RUNLOG.md). */
struct rpt_steal {
	int cpu;
	int64_t from_ns, to_ns, steal_ns;
};

/* Another process' SCHED_DEADLINE thread that could run on a plan CPU (FOREIGN records of one tid,
 * docs/RUNLOG.md): seen by the agent's scans from from_ns to to_ns, so there from at most one scan
 * period before from_ns to at most one after to_ns. */
struct rpt_foreign {
	int cpu, tid;
	int64_t from_ns, to_ns, runtime_ns, period_ns;
	char comm[PD_RUNLOG_COMM_LEN + 1];
};

/* CPU time of everything that ran on one CPU within (from_ns, to_ns] (a BUSY record, docs/RUNLOG.md). */
struct rpt_busy {
	int cpu;
	int64_t from_ns, to_ns, busy_ns;
};

/* Frequency of an island or accelerator as the agent read it back (OPP records) vs the plan. */
struct rpt_freq {
	const char *name;
	bool accel;
	int64_t planned_khz;       /* the plan's OPP; 0 when the component has none (FPGA) */
	int64_t min_khz, max_khz;  /* over readable snapshots */
	size_t snapshots, unreadable; /* unreadable: no cpufreq / devfreq on the board */
};

/* What `powerdag simulate --json` predicted for one DAG. */
struct rpt_sim_dag {
	const char *name;
	int64_t instances, misses;
	double max_response_ms, p99_response_ms;
};

struct rpt_run {
	pd_arena *arena;
	pd_plan *plan;
	const char *rundir;
	const char *plan_path;

	/* deploy.json / run log header; NULL when unknown */
	const char *board, *kernel, *arch, *started, *ended, *restore, *agent_version;
	int64_t duration_ns;      /* run length covered by the log: t0 .. END record, else last record */
	int64_t verdict_ns;       /* truncated logs: instances with release + D <= verdict_ns and no record
				   * are inferred unfinished (runlog_import.c); END time for clean logs */
	int64_t sample_period_ns; /* nominal sampling period, 0 when unknown */
	bool power_sampled;       /* false when the agent ran with --no-power */
	bool has_log;             /* run.pdlog was read */
	uint64_t log_plan_hash;   /* the run log header's plan hash (when has_log) */

	struct rpt_rail *rails;
	size_t n_rails, cap_rails;
	struct rpt_job *jobs;
	size_t n_jobs, cap_jobs;
	struct rpt_skip *skips; /* skipped jobs (stall.c only) */
	size_t n_skips, cap_skips;
	struct rpt_inst *insts;
	size_t n_insts, cap_insts;
	struct rpt_gap *gaps; /* logged gaps */
	size_t n_gaps, cap_gaps;
	uint64_t *task_overruns; /* per global task index: overruns the agent counted (beyond jobs[]) */
	struct rpt_freq *freqs;  /* one per island / accelerator the log snapshotted */
	size_t n_freqs;
	size_t starvation_boosts; /* starvation-monitor interventions (agent --starvation-monitor) */
	int64_t steal_period_ns;  /* how often the agent sampled host steal; 0: not sampled (older agent) */
	struct rpt_steal *steals; /* every STEAL record, any CPU (stats.c keeps the plan's) */
	size_t n_steals;
	int64_t foreign_period_ns;    /* how often the agent scanned for other SCHED_DEADLINE threads; 0: not */
	struct rpt_foreign *foreigns; /* one per thread (tid), its FOREIGN records merged */
	size_t n_foreigns;
	int64_t busy_period_ns;   /* how often the agent sampled the CPUs' busy time; 0: not sampled (older agent) */
	struct rpt_busy *busys;   /* every BUSY record, any CPU (measured_model.c keeps the plan's) */
	size_t n_busys;
	int *busy_cpus;           /* header busy_cpus: the CPUs sampled; NULL: the plan's CPUs (an older agent) */
	size_t n_busy_cpus;

	/* simulate.json */
	bool has_sim;
	double sim_power_w, sim_energy_j, sim_duration_s;
	int64_t sim_jobs, sim_misses;
	struct rpt_sim_dag *sim_dags;
	size_t n_sim_dags;

	/* the measured jobs replayed through the simulator (replay.c); has_replay false when it could not run */
	bool has_replay;
	int64_t replay_misses, replay_instances, replay_jobs;

	/* a run that stopped early (truncated log, agent killed): reported, marked, not an error */
	bool incomplete;
	char incomplete_why[256];
	/* non-fatal problems met while loading (bad simulate.json, unknown records), for the text report */
	char *notes[16];
	size_t n_notes;
};

/* ---------------------------------------------------------------- model building (model.c) */
struct rpt_run *rpt_run_new(void);
void rpt_run_free(struct rpt_run *r);
/* Rail by name, created (with measures from the plan's platform) when absent; NULL on OOM. */
struct rpt_rail *rpt_run_rail(struct rpt_run *r, const char *name);
int rpt_rail_add(struct rpt_rail *rail, int64_t t_ns, int64_t uw);
int rpt_run_add_job(struct rpt_run *r, const struct rpt_job *j);
int rpt_run_add_skip(struct rpt_run *r, const struct rpt_skip *k);
int rpt_run_add_inst(struct rpt_run *r, const struct rpt_inst *in);
int rpt_run_add_gap(struct rpt_run *r, const struct rpt_gap *g);
void rpt_run_note(struct rpt_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rpt_run_mark_incomplete(struct rpt_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---------------------------------------------------------------- statistics (stats.c) */
struct rpt_rail_stats {
	const char *name;
	const char *measures; /* the rail's component (rpt_rail), or NULL */
	size_t samples;
	double avg_w;    /* time-weighted: energy / covered time (trapezoids between samples) */
	double peak_w;   /* largest sample */
	double energy_j; /* integral of the samples (trapezoids), gaps included as straight lines */
	double predicted_w; /* model power of the component the rail measures; NAN when unknown */
	/* the same model at what the board did (measured_model.c): busy fractions planned (sum C/T) and
	 * measured over the rail's samples, the model power at the measured busy fraction and OPP, and
	 * the measured average's error against it; NAN when unknown */
	double planned_busy, measured_busy;
	double model_at_measured_w, model_error_pct;
	/* an island's busy fraction from the BUSY records (everything that ran on the plan's CPUs of the
	 * island: jobs, agent, daemons, interrupts) over the same window, the part that was not the jobs
	 * (measured_busy_all - measured_busy) and the plan CPUs it covers; NAN / 0 when the log has no busy
	 * time or the plan no CPU there. model_at_measured_w is evaluated at measured_busy_all when it is
	 * known (model_at_busy_all), else at measured_busy. */
	double measured_busy_all, other_busy;
	size_t busy_cpus;
	bool model_at_busy_all;
	/* the island's background_util in the plan's platform (cores' worth): the part of other_busy the
	 * prediction includes; NAN for a rail of no island */
	double plan_background;
};
/* Writers put the other software's share of an island into words above this fraction of its plan
 * CPUs' time (1 percentage point): below it, it barely moves the island's rail. */
#define RPT_OTHER_BUSY_NOTE 0.01

struct rpt_dag_stats {
	const char *name;
	int64_t deadline_ns, period_ns;
	uint64_t instances; /* instances with a verdict: finished, or unfinished past their deadline */
	uint64_t misses;    /* finished after release + D, or never finished */
	uint64_t unfinished;
	double miss_ratio;  /* misses / instances (0 when none) */
	/* response times of finished instances, nearest-rank percentiles; -1 when none finished */
	int64_t p50_ns, p99_ns, max_ns;
	double worst_slack; /* min over finished instances of (D - R) / D; NAN when none finished */
	int64_t *responses_ns; /* sorted responses of the finished instances (the CDF) */
	size_t n_responses;
	/* prediction (simulate.json, by name); -1 / NAN when absent */
	int64_t sim_instances, sim_misses;
	double sim_p99_ms, sim_max_ms;
};

struct rpt_task_stats {
	const char *dag, *name;
	char place[48];     /* "cpu:4", "gpu:gpu0", "fpga:pl/1" */
	uint64_t jobs;      /* completed jobs */
	uint64_t overruns;  /* logged overruns (job flags + agent counters) */
	int64_t budget_ns;  /* SCHED_DEADLINE runtime (CPU) or latency (accelerator) from the plan */
	int64_t max_exec_ns; /* max exec_ns over jobs; -1 when none */
	uint64_t failed;     /* jobs whose work reported an error */
	double mean_exec_ns;
};

struct rpt_stats {
	struct rpt_rail_stats *rails;
	size_t n_rails;
	/* total: the rail that measures the whole board ("board"/"total"/"system") if any, else the sum
	 * of the rails (sample-and-hold on the union of their timestamps) */
	const char *total_from; /* rail name, or "sum of rails" */
	double power_w, peak_w, energy_j;
	bool has_power;

	struct rpt_dag_stats *dags;
	size_t n_dags;
	uint64_t instances, misses;

	struct rpt_task_stats *tasks;
	size_t n_tasks;
	uint64_t overruns;

	/* sampling gaps: logged ones plus intervals > 2 x nominal period between two samples of a rail */
	struct rpt_gap *gaps;
	size_t n_gaps, n_late_gaps; /* gaps[]: the logged (unreadable) ones first, then the late ones */
	int64_t gap_total_ns, late_total_ns;

	/* predictions */
	double plan_power_w;   /* the plan's model power; NAN when the plan has none */
	double power_error_pct; /* (measured - plan) / plan * 100; NAN when either is unknown */
	double sim_power_error_pct; /* against simulate.json; NAN when absent */
	/* the whole model at the measured busy fractions and OPPs over the sampled span, and the measured
	 * total's error against it (measured_model.c); NAN when unknown */
	double model_at_measured_w, model_error_pct;
	int64_t predicted_misses; /* simulator's misses when present, else 0 (a sound plan misses none) */

	/* host steal (steal.c): stolen CPU time on the CPUs the plan places tasks on, and the misses
	 * whose window [release, release + D] overlaps a STEAL record on a CPU of their DAG; both
	 * meaningless (-1 / false) when the agent did not sample steal */
	bool steal_sampled;
	int64_t host_steal_ns;
	uint64_t misses_with_steal;
	/* the log has busy time of the plan's CPUs (BUSY records; header busy_period_ns > 0) */
	bool busy_sampled;
	/* other processes' SCHED_DEADLINE threads on the plan's CPUs (steal.c): the misses whose window
	 * overlaps the time one of them may have been there, on a CPU of their DAG; meaningless when the
	 * agent did not scan (foreign_scanned false) */
	bool foreign_scanned;
	uint64_t misses_with_foreign;
	/* CPU stalls (stall.c): jobs that waited >= RPT_STALL_MIN_NS for a CPU on which no other job of
	 * the plan ran, their total and largest wait there, and the misses whose window meets one */
	size_t stall_jobs;
	int64_t stall_total_ns, stall_max_ns;
	uint64_t misses_with_stall;
	/* stretched jobs (stretch.c): builtin:spin/busy jobs charged at least RPT_STRETCH_MIN_NS and
	 * RPT_STRETCH_MIN_FRAC of their work more CPU time than their work, the sum and largest of those
	 * excesses, and the misses whose window meets one; stretch_known false when no builtin job
	 * recorded its demand (an agent before the field, or only plugin work) */
	bool stretch_known;
	size_t stretch_jobs;
	int64_t stretch_total_ns, stretch_max_ns;
	uint64_t misses_with_stretch;
	/* the misses whose window meets any of the four above (a stall, a stretched job, stolen time,
	 * another reservation): causes outside the plan's analysis, counted once per miss (steal.c) */
	uint64_t misses_outside;
};

/* The sum of the rails held at their last sample, on the union of their timestamps (from the first
 * time every rail has a sample). Caller frees *t_ns and *uw (also on failure). */
int rpt_total_series(const struct rpt_run *r, int64_t **t_ns, int64_t **uw, size_t *n);
int rpt_stats_compute(const struct rpt_run *r, struct rpt_stats *s, pd_err *e);
void rpt_stats_free(struct rpt_stats *s);
/* Nearest-rank percentile of a sorted array: sorted[ceil(p * n) - 1], p in (0, 1]. */
int64_t rpt_percentile(const int64_t *sorted, size_t n, double p);
/* Response time of an instance, or -1 when unfinished. */
static inline int64_t rpt_inst_response_ns(const struct rpt_inst *in)
{
	return in->finish_ns < 0 ? -1 : in->finish_ns - in->release_ns;
}
/* The one definition of a miss (docs/REPORTS.md): late, or never finished. */
static inline bool rpt_inst_missed(const struct rpt_inst *in, int64_t deadline_ns)
{
	int64_t resp = rpt_inst_response_ns(in);
	return resp < 0 || resp > deadline_ns;
}
/* a + b saturated at the int64 range, for either sign (steal.c; a record's time may be negative:
 * the reader keeps times within +-2^60, and intervals are widened by scan periods and deadlines). */
int64_t rpt_add_sat(int64_t a, int64_t b);
/* Host steal figures of s (steal.c): -1 on out-of-memory. */
int rpt_steal_stats(const struct rpt_run *r, struct rpt_stats *s);
/* Other SCHED_DEADLINE threads' figures of s (steal.c): -1 on out-of-memory. */
int rpt_foreign_stats(const struct rpt_run *r, struct rpt_stats *s);
/* s->misses_outside from the intervals own[n_own] (CPU stalls and stretched jobs) and the run's steal
 * and foreign records, after the steal and foreign figures of s: -1 on out-of-memory. */
int rpt_outside_stats(const struct rpt_run *r, struct rpt_stats *s, const struct rpt_steal *own, size_t n_own);
/* The misses whose window [release, release + D] meets one of the intervals v[n] on a CPU of their
 * DAG (only intervals on CPUs of the plan count), and the sum of those intervals' values (steal_ns)
 * added to *sum: -1 on out-of-memory (steal.c). */
int rpt_misses_meeting(const struct rpt_run *r, const struct rpt_steal *v, size_t n, uint64_t *misses, int64_t *sum);

/* ---------------------------------------------------------------- CPU stalls (stall.c) */
/* The wait a ready job spent beyond the plan's other jobs on its CPU from which it counts as a stall. */
#define RPT_STALL_MIN_NS (1 * PD_NS_PER_MS)
/* The stalls of jobs[n] and skips[n_skips] (docs/REPORTS.md "CPU stalls"): every job whose wait for
 * its CPU holds at least min_ns during which the CPU ran no other job of the plan. Those idle parts
 * go into *gaps (malloc'ed, the caller frees; {cpu, from, to, value = to - from}), the longest
 * job's total into *max_ns. Returns the number of such jobs, or -1 on out-of-memory. */
long rpt_stalls(const struct rpt_job *jobs, size_t n, const struct rpt_skip *skips, size_t n_skips, const pd_dagset *ds,
		int64_t min_ns, struct rpt_steal **gaps, size_t *n_gaps, int64_t *max_ns);
/* The measure of the union of the intervals v[n] per CPU, summed over the CPUs (sorts v). */
int64_t rpt_union_ns(struct rpt_steal *v, size_t n);
/* Stall figures of s; the stall intervals go to *v[*n] (malloc'ed, the caller frees): -1 on
 * out-of-memory. */
int rpt_stall_stats(const struct rpt_run *r, struct rpt_stats *s, struct rpt_steal **v, size_t *n);

/* ---------------------------------------------------------------- stretched jobs (stretch.c) */
/* A builtin job is stretched when its CPU time exceeds its work by at least both of these. */
#define RPT_STRETCH_MIN_NS (1 * PD_NS_PER_MS)
#define RPT_STRETCH_MIN_FRAC 0.25
/* Stretched-job figures of s; the jobs' [start, end] go to *v[*n] (malloc'ed, the caller frees;
 * value = the excess): -1 on out-of-memory. */
int rpt_stretch_stats(const struct rpt_run *r, struct rpt_stats *s, struct rpt_steal **v, size_t *n);
/* The figures of the causes outside the plan that the jobs' own records show (CPU stalls, stretched
 * jobs), then s->misses_outside over those and the run's steal and foreign records (after
 * rpt_steal_stats and rpt_foreign_stats): -1 on out-of-memory. */
int rpt_causes_stats(const struct rpt_run *r, struct rpt_stats *s);

/* ---------------------------------------------------------------- model at the measured utilisation
 * (measured_model.c) */
/* Busy fraction (cores' worth) of island idx (accel false) or accelerator idx over [from, to), from
 * the job records; NAN for an empty window. */
double rpt_busy_fraction(const struct rpt_run *r, bool accel, size_t idx, int64_t from, int64_t to);
/* OPP the component ran at: the read-back frequency when one and in the table, else the plan's. */
size_t rpt_measured_opp(const struct rpt_run *r, bool accel, size_t idx, bool *read_back);
/* Busy fraction (cores' worth) of island k over [from, to) from the BUSY records of the CPUs where the
 * plan places a task on k, each record prorated by the part of (from_ns, to_ns] inside the window:
 * everything that ran there, not only the jobs. NAN when the log has no busy time (busy_period_ns 0),
 * the plan has no CPU on k, or the window is empty; *n_cpus (when not NULL) = those CPUs. */
double rpt_busy_all_fraction(const struct rpt_run *r, size_t k, int64_t from, int64_t to, size_t *n_cpus);
/* What island k's model term is evaluated at over [from, to): rpt_busy_all_fraction when the log has
 * BUSY records, else rpt_busy_fraction (the report's model@meas and refit --what power alike). */
double rpt_island_model_busy(const struct rpt_run *r, size_t k, int64_t from, int64_t to);
/* The busy fractions behind rpt_model_at_measured_w: the jobs' (rpt_busy_fraction), everything's on an
 * island (rpt_busy_all_fraction) with its CPUs, and which of the two the model was evaluated at. */
struct rpt_busy_meas {
	double jobs, all; /* NAN when the component has none / unknown */
	size_t cpus;
	bool used_all;
};
/* Model power of the component a rail measures at its measured busy fraction and OPP over [from,
 * to): an island at everything's busy fraction when the log has it, else at the jobs'. NAN when
 * unknown; b (may be NULL) receives the busy fractions. */
double rpt_model_at_measured_w(const struct rpt_run *r, const char *measures, int64_t from, int64_t to,
			       struct rpt_busy_meas *b);
/* The whole model (base + islands + accelerators) at the measured busy fractions (islands: as
 * rpt_model_at_measured_w) and OPPs. */
double rpt_model_total_at_measured_w(const struct rpt_run *r, int64_t from, int64_t to);
/* Sum C/T of the tasks the plan places on the component; NAN when it is no island / accelerator. */
double rpt_planned_busy(const struct rpt_run *r, const char *measures);

/* ---------------------------------------------------------------- the report handle (report.c) */
struct pd_report {
	struct rpt_run *run;
	struct rpt_stats st;
};

/* Fills r from RUNDIR/run.pdlog (runlog_import.c). A truncated log marks r incomplete and returns 0;
 * a file that is not a run log, or the log of another plan, returns PD_EXIT_USAGE. */
int rpt_import_runlog(struct rpt_run *r, const char *path, pd_err *e);

/* The measured jobs replayed through the simulator (replay.c): fills has_replay and replay_*, or adds
 * a note saying why not. Needs the plan and the imported log. */
void rpt_replay(struct rpt_run *r);

/* Fills r->freqs from the OPP records and the header (freq_import.c); -1 on out-of-memory. */
struct pd_runlog;
int rpt_import_freqs(struct rpt_run *r, const struct pd_runlog *log);

/* 1 when every readable snapshot equals the planned frequency, 0 when one differs, -1 when unknown
 * (nothing planned, or nothing readable). */
static inline int rpt_freq_matches(const struct rpt_freq *f)
{
	if (f->planned_khz <= 0 || f->max_khz < 0)
		return -1;
	return f->min_khz == f->planned_khz && f->max_khz == f->planned_khz;
}

/* Small formatting helpers shared by the writers (format.c). */
const char *rpt_fmt_ms(int64_t ns, char *buf, size_t n); /* "12.345" ms, or "-" when ns < 0 */
const char *rpt_fmt_w(double w, char *buf, size_t n);    /* "1.234" W, or "-" when NAN */
const char *rpt_fmt_pct(double p, char *buf, size_t n);  /* "+3.2%", or "-" when NAN */

#endif
