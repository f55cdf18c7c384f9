/* SPDX-License-Identifier: MIT */
/*
 * helper_rundir.h - a synthetic run directory for the report tests: a two-DAG plan on a two-CPU
 * platform with a GPU (one task runs there) and three power rails (CPU island, GPU, an unmodelled SoC
 * rail), and a run log written byte by byte in the documented format
 * (docs/RUNLOG.md: JSON header line, then framed little-endian records with CRC-32), NOT with the
 * agent's writer, so that the report is checked against the format rather than against the agent.
 *
 * The run lasts 3 s; cam #20 never finishes (its sink is stuck), which the log shows, like the
 * agent's, as an INSTANCE record with finish -1 written at the end of the run.
 *
 * The raw data the log was written from is kept in struct syn_run, so that a test recomputes every
 * number of the report independently and compares.
 */
#ifndef PD_TEST_HELPER_RUNDIR_H
#define PD_TEST_HELPER_RUNDIR_H

#include "runlog/pd_runlog.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYN_RAILS 3
#define SYN_MAX_SAMPLES 512
#define SYN_MAX_INST 512
#define SYN_MAX_JOBS 1024

struct syn_inst {
	uint32_t dag;
	uint64_t seq;
	int64_t release_ns, finish_ns;
	bool finished; /* false: never finished; logged at the END with finish -1, as the agent does */
};

struct syn_job {
	uint32_t task;
	uint64_t seq;
	int64_t release_ns, start_ns, end_ns, cpu_ns;
	int64_t demand_ns; /* the work asked for; 0 = cpu_ns (a job that took exactly its work) */
	int32_t cpu; /* -1: on the GPU */
	bool overrun;
};

struct syn_steal {
	int32_t cpu;
	int64_t from_ns, t_ns, steal_ns;
};

struct syn_busy {
	int32_t cpu;
	int64_t from_ns, t_ns, busy_ns;
};

struct syn_run {
	const char *dir;
	/* Busy time of the CPUs: set by pick_busy (when not NULL), called after pick_steal; busy_sampled puts
	 * busy_period_ns = 100 ms in the header, busy[] are written as BUSY records after the STEAL ones.
	 * pick_busy may also rewrite the power rows. Without it the log is one of an agent older than BUSY. */
	void (*pick_busy)(struct syn_run *s);
	bool busy_sampled;
	int busy_cpus[8]; /* header busy_cpus when n_busy_cpus > 0 (else absent: an agent before the list) */
	size_t n_busy_cpus;
	size_t n_busy;
	struct syn_busy busy[64];
	/* Host steal: set by pick_steal (when not NULL), called once the instances exist and before the log
	 * is written; steal_sampled puts steal_period_ns = 100 ms in the header, steal[] are written as
	 * STEAL records before the END record. Without it the log is one of an agent older than STEAL. */
	void (*pick_steal)(struct syn_run *s);
	bool steal_sampled;
	size_t n_steal;
	struct syn_steal steal[8];
	/* Other SCHED_DEADLINE threads: set by pick_foreign (when not NULL), called after pick_busy;
	 * foreign_period_ns > 0 puts it in the header, foreign[] are written as FOREIGN records after the
	 * BUSY ones. Without it the log is one of an agent older than FOREIGN. */
	void (*pick_foreign)(struct syn_run *s);
	/* Called after pick_foreign (when not NULL): may set jobs' demand_ns below their CPU time
	 * (stretched spin jobs, docs/REPORTS.md). */
	void (*pick_stretch)(struct syn_run *s);
	int64_t foreign_period_ns;
	size_t n_foreign;
	struct pd_runlog_foreign_rec foreign[8];
	/* power: one row per tick; has[k] false = PD_RUNLOG_NO_VALUE for rail k */
	size_t n_samples;
	int64_t t_ns[SYN_MAX_SAMPLES];
	int64_t uw[SYN_MAX_SAMPLES][SYN_RAILS];
	bool has[SYN_MAX_SAMPLES][SYN_RAILS];
	int64_t gap_from_ns, gap_to_ns; /* the logged GAP record (rail 1) */
	size_t n_inst;
	struct syn_inst inst[SYN_MAX_INST];
	size_t n_jobs;
	struct syn_job jobs[SYN_MAX_JOBS]; /* executed jobs */
	size_t n_skipped;                  /* JOB records flagged SKIPPED (not in jobs[]) */
	int64_t end_ns;           /* END record time */
	int64_t deadline_ns[2], period_ns[2];
	int64_t plan_power_uw;
	size_t log_bytes;          /* size of run.pdlog as written */
	size_t header_bytes;       /* the header line, newline included */
	size_t end_record_offset;  /* byte offset of the END record */
	size_t unfinished_offset;  /* byte offset of the unfinished-instance records flushed at the end */
};

/* Writes plan.yaml, run.pdlog, deploy.json, simulate.json, agent.stderr into a fresh directory. */
void syn_write(struct syn_run *s);
/* Truncates run.pdlog to len bytes. */
void syn_truncate(const struct syn_run *s, size_t len);

#endif
