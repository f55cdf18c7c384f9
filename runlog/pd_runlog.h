/* SPDX-License-Identifier: MIT */
/*
 * pd_runlog.h - the run log (RUNDIR/run.pdlog), format version 1, documented in docs/RUNLOG.md: the
 * contract between the agent, which writes it on the board, and reports, which read it on the host.
 * This module holds the format, the writer (pd_runlog_writer_*, its rings pd_runlog_ring), the
 * reader (pd_runlog_*; the records are struct pd_runlog_*_rec) and its text views, and depends only
 * on core and jansson, so that the host binary reads logs without linking the
 * agent's board libraries (libiio, libgpiod, XRT).
 *
 * Layout: one JSON header line (metadata: plan hash, kernel, board, tasks, DAGs, rails, t0), then
 * append-only binary records, each framed as
 *
 *     u32 len | u16 type | u16 zero | payload[len] | u32 crc32(len..payload)      (little endian)
 *
 * All times are ns since t0 (the theoretical release of instance 0 of every DAG, CLOCK_MONOTONIC;
 * the header holds t0 on both clocks). Payload structs below are the on-disk layout (naturally
 * aligned, no padding holes, little endian). A reader skips record types it does not know (new
 * types may be added within version 1; a layout change bumps the version).
 *
 * The reader tolerates a truncated or torn tail (kill -9, power loss): it stops at the first record
 * whose frame is incomplete or whose CRC fails, and reports the bytes it dropped.
 */
#ifndef PD_RUNLOG_H
#define PD_RUNLOG_H

#include "core/pd_core.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PD_RUNLOG_FORMAT "powerdag-runlog"
#define PD_RUNLOG_VERSION 1
#define PD_RUNLOG_NO_VALUE INT64_MIN /* a rail with no value in a power sample (gap) */
#define PD_RUNLOG_MAX_PAYLOAD 4096
/* Limits of the reader (docs/RUNLOG.md "Reading hostile logs"): a record outside them is not kept. Times
 * within +-2^60 ns (36 years) keep every difference and sum of two of them within int64_t; power within
 * +-PD_MAX_POWER_UW (1 MW, the limit of every power in powerdag) and at most 4096 rails keep the sum of
 * one sample tick within int64_t. */
#define PD_RUNLOG_MAX_ABS_NS (INT64_C(1) << 60)
#define PD_RUNLOG_MAX_ABS_UW PD_MAX_POWER_UW
#define PD_RUNLOG_MAX_RAILS 4096

enum pd_runlog_rec_type {
	PD_RUNLOG_INSTANCE = 1, /* one DAG instance finished */
	PD_RUNLOG_JOB = 2,      /* one job of one task */
	PD_RUNLOG_POWER = 3,    /* one power sample of a range of rails */
	PD_RUNLOG_GAP = 4,      /* a rail unreadable from start to end */
	PD_RUNLOG_OPP = 5,      /* frequency snapshot of an island or accelerator */
	PD_RUNLOG_STARVE = 6,   /* starvation-monitor intervention */
	PD_RUNLOG_END = 7,      /* clean end of run (absent after kill -9) */
	PD_RUNLOG_DROP = 8,     /* records lost because a producer's ring was full */
	PD_RUNLOG_STEAL = 9,    /* CPU time the hypervisor stole from a vCPU of the plan */
	PD_RUNLOG_BUSY = 10,    /* CPU time anything (jobs, agent, daemons, interrupts) ran on a CPU of the plan */
	PD_RUNLOG_FOREIGN = 11, /* another process' SCHED_DEADLINE thread that may run on a CPU of the plan */
};

/* An instance abandoned by the late-instance policy resync (some job skipped, docs/MODEL.md) is
 * recorded with miss = 1 and finish_ns = response_ns = -1, like one that never finished; its
 * skipped jobs are JOB records flagged PD_RUNLOG_JOB_SKIPPED. */
struct pd_runlog_instance_rec {
	uint32_t dag;
	uint32_t miss; /* 1 when response_ns > the DAG's deadline, or the instance never finished */
	uint64_t seq;  /* instance number k; release = k * period */
	int64_t release_ns, finish_ns, response_ns;
};

#define PD_RUNLOG_JOB_OVERRUN 0x1 /* cpu time above the SCHED_DEADLINE runtime */
#define PD_RUNLOG_JOB_FAILED 0x2  /* plugin or accelerator returned an error */
#define PD_RUNLOG_JOB_SKIPPED 0x4 /* not executed (late-instance policy resync): start = end = the decision,
			       * cpu_ns = demand_ns = 0; absent from logs written before the policy */
#define PD_RUNLOG_JOB_LATE 0x8    /* ended after the plan's latest finish F_i: the thread re-anchors its
			       * reservation (resync rule 4, docs/MODEL.md) */
struct pd_runlog_job_rec {
	uint32_t task;
	uint32_t sigxcpu; /* SIGXCPU (SCHED_FLAG_DL_OVERRUN) received during this job */
	uint64_t seq;
	int64_t release_ns; /* theoretical release of its DAG instance */
	int64_t start_ns, end_ns;
	int64_t cpu_ns;    /* thread CPU time of the job */
	int64_t demand_ns; /* work asked for (drawn between bcet and wcet) */
	int32_t cpu;       /* CPU it ended on (-1 accelerated) */
	uint32_t flags;
};

struct pd_runlog_power_rec { /* followed by n int64_t microwatt values, rails first..first+n-1 */
	int64_t t_ns;
	uint32_t first_rail, n;
};

struct pd_runlog_gap_rec {
	uint32_t rail;
	int32_t err; /* errno of the first failure */
	int64_t start_ns, end_ns;
};

enum pd_runlog_opp_kind { PD_RUNLOG_OPP_ISLAND = 0, PD_RUNLOG_OPP_ACCEL = 1 };
struct pd_runlog_opp_rec {
	uint32_t kind, index;
	int64_t t_ns;
	int64_t freq_khz; /* -1 when unreadable (no cpufreq/devfreq) */
};

struct pd_runlog_starve_rec {
	int32_t tid, cpu;
	int64_t t_ns, waited_ns, boost_runtime_ns, boost_period_ns;
	int32_t result; /* 0 boosted, else errno of the failed boost */
	uint32_t zero;
};

struct pd_runlog_end_rec {
	int64_t t_ns;
	uint64_t dropped_records;
	int64_t sampler_cpu_ns, writer_cpu_ns, process_cpu_ns;
	uint32_t reason; /* 0 duration elapsed, 1 signal, 2 error */
	uint32_t zero;
};

struct pd_runlog_drop_rec {
	uint32_t ring, zero;
	uint64_t count;
};

/* Steal is a delta, not the cumulative counter: each record says on its own how much was stolen and
 * when, so the run's total is a sum and a miss is matched against one record (reports), and a lost
 * record (DROP) loses only its own share. The agent samples /proc/stat (USER_HZ resolution, 10 ms
 * on most kernels) and writes a record only when the counter moved: a host that steals nothing
 * (bare metal) writes none. */
struct pd_runlog_steal_rec {
	int64_t from_ns;  /* the previous sample of this CPU: the steal happened within (from_ns, t_ns] */
	int64_t t_ns;     /* this sample */
	int64_t steal_ns; /* stolen from this CPU within (from_ns, t_ns]; > 0 */
	int32_t cpu;      /* Linux CPU id (the guest's vCPU) */
	uint32_t zero;
};

/* Busy is what a power rail sees that the JOB records do not: the CPU time of everything that ran on a
 * CPU of the plan (the jobs, the agent's own threads, iiod, sshd, interrupts), from the same /proc/stat
 * read as steal: user + nice + system + irq + softirq (guest time is inside user; idle, iowait and
 * steal are not busy). A delta like steal, written only when the counter moved. */
/* CPU ids the header's busy_cpus may name (the agent's own limit). */
#define PD_RUNLOG_MAX_CPU 1024

struct pd_runlog_busy_rec {
	int64_t from_ns; /* the previous sample of this CPU: the busy time lies within (from_ns, t_ns] */
	int64_t t_ns;    /* this sample */
	int64_t busy_ns; /* busy within (from_ns, t_ns]; > 0 */
	int32_t cpu;     /* Linux CPU id */
	uint32_t zero;
};

/* A SCHED_DEADLINE thread of another process whose affinity includes a CPU of the plan, seen by the
 * agent's periodic scan while the run lasted. Its reservation competes with the plan's on that CPU
 * under EDF, and neither plan's analysis knows the other: a miss next to it is outside the model
 * (docs/MODEL.md "Outside the model: other SCHED_DEADLINE threads"). One record per scan that saw
 * the thread: from_ns is the first scan that saw it (of this run), so the last record of a tid spans
 * all of them; the thread may have been there up to one scan period (header foreign_period_ns)
 * before from_ns and after the last t_ns. */
#define PD_RUNLOG_COMM_LEN 16
struct pd_runlog_foreign_rec {
	int64_t from_ns;    /* the first scan that saw it */
	int64_t t_ns;       /* this scan; it was seen at every scan within [from_ns, t_ns] */
	int64_t runtime_ns; /* its reservation (sched_getattr): runtime <= deadline <= period, > 0 */
	int64_t deadline_ns;
	int64_t period_ns;
	int32_t tid;                    /* > 0 */
	int32_t cpu;                    /* the first CPU of the plan in its affinity */
	char comm[PD_RUNLOG_COMM_LEN]; /* /proc/TID/comm, NUL-padded; any bytes (escape before printing) */
};

/* ---------------------------------------------------------------- reader */
struct pd_runlog_task_info {
	const char *name, *dag, *work;
	int cpu; /* -1 accelerated */
	int64_t runtime_ns, deadline_ns, period_ns, wcet_ns;
	size_t n_preds; /* 0 for a source (released by the clock) */
};
struct pd_runlog_dag_info {
	const char *name;
	int64_t period_ns, deadline_ns;
};
struct pd_runlog_rail_info {
	const char *name, *measures;
};

typedef struct pd_runlog pd_runlog;

/* Reads and decodes a whole run log. Fails (NULL, PD_EXIT_USAGE) only when the header line is
 * missing or invalid (or lists more than PD_RUNLOG_MAX_RAILS rails) or the version is newer than this
 * reader; a damaged tail is not an error. Guarantee to every caller: each index in a record returned
 * below is within the header's arrays (task < task_count, dag < dag_count, rail < rail_count), each
 * time within +-PD_RUNLOG_MAX_ABS_NS and each power value within +-PD_RUNLOG_MAX_ABS_UW (or
 * PD_RUNLOG_NO_VALUE); records that are not are skipped and counted (pd_runlog_invalid_records). */
pd_runlog *pd_runlog_open(const char *path, pd_err *e);
/* Same from memory (the bytes are copied). */
pd_runlog *pd_runlog_from_bytes(const void *data, size_t len, const char *name, pd_err *e);
void pd_runlog_free(pd_runlog *r);

const char *pd_runlog_header_json(const pd_runlog *r); /* the header line (no newline) */
int pd_runlog_version(const pd_runlog *r);
uint64_t pd_runlog_plan_hash(const pd_runlog *r);
const char *pd_runlog_meta(const pd_runlog *r, const char *key); /* string fields: kernel, board... */
int64_t pd_runlog_sample_hz(const pd_runlog *r);

size_t pd_runlog_task_count(const pd_runlog *r);
const struct pd_runlog_task_info *pd_runlog_task(const pd_runlog *r, size_t i);
size_t pd_runlog_dag_count(const pd_runlog *r);
const struct pd_runlog_dag_info *pd_runlog_dag(const pd_runlog *r, size_t i);
size_t pd_runlog_rail_count(const pd_runlog *r);
const struct pd_runlog_rail_info *pd_runlog_rail(const pd_runlog *r, size_t i);

size_t pd_runlog_instance_count(const pd_runlog *r);
const struct pd_runlog_instance_rec *pd_runlog_instance(const pd_runlog *r, size_t i);
size_t pd_runlog_job_count(const pd_runlog *r);
const struct pd_runlog_job_rec *pd_runlog_job(const pd_runlog *r, size_t i);
/* Power samples: t_ns[i] and rail values (PD_RUNLOG_NO_VALUE when missing), one row per sample
 * tick; rows[i * rail_count + rail]. */
size_t pd_runlog_power_count(const pd_runlog *r);
int64_t pd_runlog_power_t(const pd_runlog *r, size_t i);
int64_t pd_runlog_power_uw(const pd_runlog *r, size_t i, size_t rail);
size_t pd_runlog_gap_count(const pd_runlog *r);
const struct pd_runlog_gap_rec *pd_runlog_gap(const pd_runlog *r, size_t i);
size_t pd_runlog_opp_count(const pd_runlog *r);
const struct pd_runlog_opp_rec *pd_runlog_opp(const pd_runlog *r, size_t i);
size_t pd_runlog_starve_count(const pd_runlog *r);
const struct pd_runlog_starve_rec *pd_runlog_starve(const pd_runlog *r, size_t i);
/* STEAL records in log order (one producer: per CPU, in time order). */
size_t pd_runlog_steal_count(const pd_runlog *r);
const struct pd_runlog_steal_rec *pd_runlog_steal(const pd_runlog *r, size_t i);
/* The header's steal_period_ns: how often the agent sampled steal; 0 when it did not (an agent older
 * than the STEAL record, a kernel without the steal column, a plan without CPU tasks): then the log
 * cannot tell a host that stole nothing from one that was not watched. */
int64_t pd_runlog_steal_period_ns(const pd_runlog *r);
/* BUSY records in log order (per CPU, in time order), and the header's busy_period_ns: 0 when the
 * agent did not sample busy time (an agent older than the BUSY record): then a CPU without records
 * is unknown, not idle. */
size_t pd_runlog_busy_count(const pd_runlog *r);
const struct pd_runlog_busy_rec *pd_runlog_busy(const pd_runlog *r, size_t i);
int64_t pd_runlog_busy_period_ns(const pd_runlog *r);
/* FOREIGN records in log order (one producer, scans in time order), and the header's
 * foreign_period_ns: 0 when the agent did not scan (an agent older than the record, a plan without
 * CPU tasks): then the log cannot tell "no other SCHED_DEADLINE thread" from "not watched". */
size_t pd_runlog_foreign_count(const pd_runlog *r);
const struct pd_runlog_foreign_rec *pd_runlog_foreign(const pd_runlog *r, size_t i);
int64_t pd_runlog_foreign_period_ns(const pd_runlog *r);
/* The header's busy_cpus: the CPUs whose busy time the agent sampled (the plan's and every online CPU
 * of the platform's islands); NULL with *n = 0 when the header does not list them (an agent before
 * the list: it sampled the plan's CPUs). A CPU without BUSY records was idle. */
const int *pd_runlog_busy_cpus(const pd_runlog *r, size_t *n);
/* The END record, or NULL when the run did not end cleanly. */
const struct pd_runlog_end_rec *pd_runlog_end(const pd_runlog *r);
/* Sum of DROP records (ring overflows while running). */
uint64_t pd_runlog_ring_drops(const pd_runlog *r);

/* Damage report: records decoded, bytes after the last good record, and unknown types skipped. */
size_t pd_runlog_records(const pd_runlog *r);
size_t pd_runlog_dropped_bytes(const pd_runlog *r);
size_t pd_runlog_unknown_records(const pd_runlog *r);
/* Records with a good CRC but an index or a value outside the limits above: skipped. */
size_t pd_runlog_invalid_records(const pd_runlog *r);

/* Human/tool output (powerdag-agent dump): what = "summary" (key: value lines: instances, misses,
 * per-DAG max response, overruns, release latency p50/p99/max of source jobs, rail means, gaps, host
 * steal, busy time of the plan's CPUs, CPU cost of sampler/writer/process, damage), or CSV of
 * "instances", "jobs", "power", "gaps", "steal", "busy", "foreign". Returns 0,
 * -1 for an unknown view, -2 when out of memory. */
int pd_runlog_dump(const pd_runlog *r, FILE *out, const char *what);

/* CRC-32 (IEEE 802.3, as zlib) used by the framing. */
uint32_t pd_runlog_crc32(uint32_t crc, const void *p, size_t n);

/* ---------------------------------------------------------------- writer */
/* Per-producer lock-free single-producer / single-consumer rings drained by one writer thread that
 * frames records and write()s them every flush period, so a kill -9 loses at most what the rings
 * held (< 1 s). A full ring never blocks its producer: the record is counted and a DROP record
 * reports the count at the end. The ring invariant is stated in write.c, next to the code. */
struct pd_runlog_ring; /* one producer thread's ring (opaque) */
typedef struct pd_runlog_writer pd_runlog_writer;

/* Producer side: copies one record into the ring; false (and counted) when full or too big. */
bool pd_runlog_put(struct pd_runlog_ring *r, uint16_t type, const void *payload, uint32_t len);

/* A writer with no file yet: rings can be registered before the header (which needs t0) is known. */
pd_runlog_writer *pd_runlog_writer_new(void);
/* Creates path (O_EXCL: a run never overwrites a log) and writes the header line at once. */
int pd_runlog_writer_open(pd_runlog_writer *w, const char *path, const char *header_json, pd_err *e);
/* Adds a ring before pd_runlog_writer_start (not thread-safe). n_slots rounded up to a power of two. */
struct pd_runlog_ring *pd_runlog_add_ring(pd_runlog_writer *w, uint32_t slot_size, uint32_t n_slots);
/* Starts the writer thread, draining every flush_ms with one write(); flush_ms <= 0 means 50 and
 * flush_ms is at most PD_RUNLOG_MAX_FLUSH_MS: a record reaches the file within that bound, which
 * readers of a live or killed run rely on (reports/runlog_import.c). */
#define PD_RUNLOG_MAX_FLUSH_MS 1000
int pd_runlog_writer_start(pd_runlog_writer *w, int flush_ms, pd_err *e);
/* Stops the writer, drains every ring, writes DROP records and end (when non-NULL; its
 * dropped_records and writer_cpu_ns are filled here), fsyncs and closes (when a file was opened). Frees w. */
int pd_runlog_writer_close(pd_runlog_writer *w, struct pd_runlog_end_rec *end, pd_err *e);
/* Without a writer thread (tests, tools): drain now. */
int pd_runlog_writer_drain(pd_runlog_writer *w);

#endif /* PD_RUNLOG_H */
