/* SPDX-License-Identifier: MIT */
/*
 * pd_agent.h - powerdag-agent, the on-board runtime: runs the DAGs of a plan under SCHED_DEADLINE
 * (partitioned EDF, one exclusive cpuset per CPU), samples power rails over IIO, drives GPIO markers
 * and streams everything into a run log (docs/RUNLOG.md; format, writer and reader: runlog/pd_runlog.h).
 *
 * Layers, each in its own file:
 *   spec.c      plan -> pd_agent_spec (the flat, resolved view the executor needs)
 *   sched.c     struct sched_attr + syscall, runtime conversion (arm frequency/capacity scaling)
 *   cpuset.c    exclusive cpusets (cgroup v1 cpu_exclusive, v2 partitions) or affinity pinning
 *   work.c      builtin:spin / builtin:busy / plugin work kinds
 *   accel.c     accelerator backends (emulated latency, twin, FPGA manager, recording double);
 *               xrt.c the XRT backend, compiled only when XRT is found
 *   exec.c      task threads: release, precedence, jobs, DAG instances (the hot loop)
 *   power.c     IIO power rails (local fast path, network with reconnect, gaps)
 *   sampler.c   the periodic sampling thread (POWER and GAP records, written through runlog/)
 *   gpio.c      GPIO markers (libgpiod 1.6 or a recording double)
 *   starve.c    optional starvation monitor (kernels without the fair deadline server)
 *   steal.c     host steal and busy time per CPU of the plan from /proc/stat (STEAL and BUSY records;
 *               sampled by run.c's main thread)
 *   foreign.c   other processes' SCHED_DEADLINE threads on the plan's CPUs: refused at the start,
 *               FOREIGN records while the run lasts (scanned by run.c's main thread)
 *   selftest.c  --self-test
 *   run.c       the whole run: set-up, all-or-nothing admission, start barrier, stop, tear-down
 *
 * No global mutable state except what signals force: the SIGXCPU handler finds the overrunning task
 * through a thread-local pointer set by that task's own thread (see exec.c).
 */
#ifndef PD_AGENT_H
#define PD_AGENT_H

#include "core/pd_core.h"
#include "plan/pd_plan.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* ---------------------------------------------------------------- the resolved task set */
enum pd_agent_work {
	PD_AW_SPIN = 0, /* calibrated loop: amount of work fixed at f_ref, stretched by a lower OPP */
	PD_AW_BUSY,     /* CPU time C_i(k,f) (CLOCK_THREAD_CPUTIME_ID): the twin's exact model */
	PD_AW_PLUGIN,   /* plugin:lib.so:symbol, see pd_agent_plugin_fn */
	PD_AW_ACCEL,    /* placed on a GPU or an FPGA slot: goes through a pd_accel backend */
};

/* Signature of a plugin work function: one job. budget_ns is the job's demand drawn by the agent
 * (between bcet and wcet at the task's OPP); return 0, or non-zero to flag the job as failed. */
typedef int (*pd_agent_plugin_fn)(uint64_t job_seq, int64_t budget_ns);

struct pd_agent_task {
	const char *name;     /* task name */
	const char *dag_name; /* its DAG's name */
	size_t dag;
	enum pd_agent_work work;
	const char *plugin_lib, *plugin_sym; /* PD_AW_PLUGIN: LIB as written in the plan, SYMBOL */
	const char *plugin_dir;              /* absolute directory of the plan (relative LIBs); NULL = cwd */
	int cpu;                             /* Linux CPU id; -1 for accelerated tasks */
	/* SCHED_DEADLINE triple as written in the plan (wall clock); exec converts runtime for the
	 * kernel's accounting on arm (sched.c). */
	int64_t runtime_ns, deadline_ns, period_ns;
	bool reclaim;
	/* The plan's latest finish F_i after the instance's release (pd_plan_finish_offsets) and the
	 * per-job overhead o the plan charged (0 when unrecorded): late-instance rule 4, re-anchoring
	 * (docs/MODEL.md "Late instances"). finish_ns 0 (a spec built by hand) turns rule 4 off. */
	int64_t finish_ns, overhead_ns;
	/* Work: C_i(k,f) at the plan's OPP (accel: latency at the OPP), and the reference-frequency
	 * figures it came from, for spin scaling and bcet..wcet variability. */
	int64_t wcet_ns, bcet_ns;                     /* at the OPP */
	int64_t wcet_ref_ns, wcet_fixed_ns, bcet_ref_ns; /* at f_ref, capacity 1 */
	int64_t opp_khz, ref_khz;
	double capacity;
	/* Accelerated tasks */
	size_t accel;          /* index into spec accels */
	int slot;              /* FPGA slot */
	const char *bitstream; /* FPGA bitstream, NULL for GPU */
	int64_t latency_top_ns; /* accel: the implementation's latency as written (GPU: at the top OPP) */
	int64_t accel_power_uw; /* accel: the implementation's busy power increment, -1 when not given */
	/* Precedence, global task indices */
	const size_t *preds, *succs;
	size_t n_preds, n_succs;
};

struct pd_agent_dag {
	const char *name;
	int64_t period_ns, deadline_ns;
	size_t first_task, n_tasks;
	enum pd_late late; /* late-instance policy (docs/MODEL.md), PD_LATE_RESYNC by default */
};

struct pd_agent_rail {
	const char *uri, *device, *channel, *rail, *measures;
	double scale; /* extra multiplier to watts after raw*scale */
};

struct pd_agent_island {
	const char *name, *policy;
	int64_t opp_khz; /* planned */
	double capacity;
	const int *cpus;
	size_t n_cpus;
};

struct pd_agent_accel {
	const char *name;
	enum pd_accel_kind kind;
	const char *manager; /* FPGA manager name or NULL */
	const char *devfreq; /* GPU devfreq device or NULL */
	int64_t opp_khz;     /* GPU: planned OPP frequency; 0 unknown */
};

/* Everything owned by arena; a spec can be built from a plan or by hand (tests). */
struct pd_agent_spec {
	pd_arena *arena;
	const char *board;
	uint64_t plan_hash;
	int64_t ref_khz;
	struct pd_agent_task *tasks;
	size_t n_tasks;
	struct pd_agent_dag *dags;
	size_t n_dags;
	struct pd_agent_rail *rails;
	size_t n_rails;
	struct pd_agent_island *islands;
	size_t n_islands;
	struct pd_agent_accel *accels;
	size_t n_accels;
};

/* Resolves a loaded plan (work kinds parsed, OPP frequencies looked up, scaled bcet). Returns 0 or
 * PD_EXIT_USAGE with a message naming the task. s->arena is created here. */
int pd_agent_spec_from_plan(const pd_plan *p, struct pd_agent_spec *s, pd_err *e);
/* Loads a plan file and resolves it; diagnostics of the plan reader are printed to errf. */
int pd_agent_spec_load(const char *plan_path, struct pd_agent_spec *s, FILE *errf, pd_err *e);
void pd_agent_spec_free(struct pd_agent_spec *s);

/* ---------------------------------------------------------------- plugins (plugin_check.c) */
/* A plugin is code the root agent runs (docs/DEPLOY.md, trust model). Before anything is dlopen()ed,
 * LIB must pass: no ".." component; a relative LIB is relative to the plan's directory (dir; NULL =
 * the current one) and nothing else (no library search path); the file exists, is a regular file,
 * and it and every directory from / down to it (along the path as written and along the resolved
 * one) are owned by root or by this user and not writable by group or others. Returns 0 with the
 * resolved path in out, or -1 with the reason (one line, no newline) in why. */
int pd_agent_plugin_path(const char *lib, const char *dir, char *out, size_t n, pd_buf *why);
/* `powerdag-agent check-plugins PLAN`: every plugin task's LIB through pd_agent_plugin_path, then
 * dlopen(RTLD_NOW) and dlsym(SYMBOL). One line per problem in problems ("task 'd/t': plugin LIB:
 * why"); returns the number of problems. */
size_t pd_agent_check_plugins(const struct pd_agent_spec *s, pd_buf *problems);
/* The deployer's pre-flight of the board's other SCHED_DEADLINE threads (foreign.c): one problem line
 * per thread of another process whose reservation may run on a CPU of the plan; returns how many. */
size_t pd_agent_check_foreign(const struct pd_agent_spec *s, pd_buf *problems);

/* ---------------------------------------------------------------- SCHED_DEADLINE (sched.c) */
/* Our own copy of the uapi struct (glibc < 2.41 has no wrapper and the uapi header clashes with
 * <sched.h>): VER1, 56 bytes. */
struct pd_agent_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};
#define PD_SCHED_DEADLINE 6
#define PD_SCHED_FLAG_RESET_ON_FORK 0x01
#define PD_SCHED_FLAG_RECLAIM 0x02
#define PD_SCHED_FLAG_DL_OVERRUN 0x04

/* 0 or -errno. */
int pd_agent_sched_setattr(int tid, const struct pd_agent_sched_attr *a);
int pd_agent_sched_getattr(int tid, struct pd_agent_sched_attr *a);
/* Back to SCHED_OTHER nice 0 (used on abort and by the starvation monitor). */
int pd_agent_sched_set_other(int tid);

/*
 * Kernel runtime for a wall-clock budget on cpu. On arm/arm64 the kernel charges a non-RECLAIM DL
 * task wall x (f_cur/f_max) x (capacity/1024), so the budget shrinks by both factors there;
 * identity elsewhere (x86 charges wall time). sysfs_root is "/sys" (tests pass a fake tree).
 * Never returns less than the kernel's 1024 ns floor.
 */
int64_t pd_agent_runtime_for_kernel(int64_t wall_runtime_ns, int cpu, bool reclaim, const char *sysfs_root);
/* Same, with explicit factors (arch-independent, tested): cap1024 and f ratio. */
int64_t pd_agent_runtime_scale(int64_t wall_runtime_ns, int64_t f_cur_khz, int64_t f_max_khz, int64_t cap1024);

/* ---------------------------------------------------------------- cpusets (cpuset.c) */
typedef struct pd_agent_cpusets pd_agent_cpusets;
/*
 * Prepares one exclusive cpuset per CPU in cpus[]:
 *   root != NULL: the deployer's PATH with PATH/cpuN children (v1 or v2), only checked;
 *   else: a fresh /sys/fs/cgroup[/cpuset]/powerdag-agent-<pid> tree (v1: parent cpu_exclusive,
 *   parent and root sched_load_balance = 0; v2: threaded partition roots), removed by _free;
 *   when neither works (no privileges, no cpuset controller), *fallback is set and threads are
 *   pinned by affinity (admission will then refuse SCHED_DEADLINE unless sched_rt_runtime_us=-1).
 * cg_base names the cgroup mount (NULL = "/sys/fs/cgroup").
 */
pd_agent_cpusets *pd_agent_cpusets_prepare(const char *root, const char *cg_base, const int *cpus, size_t n, pd_err *e);
/* Moves the calling thread to CPU cpu's set (or pins it). 0 or -errno. */
int pd_agent_cpusets_enter(pd_agent_cpusets *c, int cpu);
/* After every task thread entered its set, before SCHED_DEADLINE: cgroup v2 only, the children
 * become partition roots (the agent's other threads move into the first). 0 or an error in e. */
int pd_agent_cpusets_activate(pd_agent_cpusets *c, pd_err *e);
bool pd_agent_cpusets_is_affinity_only(const pd_agent_cpusets *c);
const char *pd_agent_cpusets_describe(const pd_agent_cpusets *c); /* e.g. "cgroup v1 /sys/fs/cgroup/cpuset/..." */
/* Removes what prepare created (threads must have exited) and restores sched_load_balance. */
void pd_agent_cpusets_free(pd_agent_cpusets *c);

/* ---------------------------------------------------------------- accelerators (accel.c) */
/* One backend serves every accelerator of a run. run() blocks for one request (FIFO per
 * accelerator is the caller's job); returns 0 or -errno. */
struct pd_agent_accel_ops {
	const char *name;
	int (*load)(void *ctx, const struct pd_agent_accel *a, int slot, const char *bitstream);
	int (*run)(void *ctx, const struct pd_agent_accel *a, const struct pd_agent_task *t, uint64_t seq,
		   int64_t latency_ns);
	void *ctx;
};
/* Latency-sleep emulation (also the twin's accelerators until they have their own protocol). */
struct pd_agent_accel_ops pd_agent_accel_emulated(void);
/* FPGA manager (bitstream load through /sys/class/fpga_manager/NAME/firmware) + emulated run.
 * sysfs_root "/sys" normally. */
struct pd_agent_accel_ops pd_agent_accel_fpga_manager(const char *sysfs_root);
/* The board twin's emulated accelerators (docs/TWIN.md): a job is one blocking write of
 * "latency_ns=L [power_uw=P] [bitstream=B]" to SYSFS/kernel/powerdag-twin/accel/NAME/run (L at the
 * top OPP for GPUs: the twin scales it to its current devfreq OPP); loads through the FPGA manager. */
struct pd_agent_accel_ops pd_agent_accel_twin(const char *sysfs_root);
#ifdef PD_HAVE_XRT
/* XRT (embedded zocl): xclbin load per slot and kernel runs; only in builds that found XRT. */
struct pd_agent_accel_ops pd_agent_accel_xrt(void);
#endif
/* The backend run() uses by default: the twin's when SYSFS/kernel/powerdag-twin/accel exists, else
 * the FPGA manager when a plan FPGA names a manager present here, else emulated. */
struct pd_agent_accel_ops pd_agent_accel_default(const struct pd_agent_spec *s, const char *sysfs_root);
/* Recording double for tests: remembers each load/run (thread-safe, bounded). */
struct pd_agent_accel_rec_event {
	char kind; /* 'L' load, 'R' run */
	size_t accel, task;
	uint64_t seq;
	int64_t latency_ns;
};
struct pd_agent_accel_rec {
	_Atomic size_t n;
	size_t cap;
	struct pd_agent_accel_rec_event *ev;
	const struct pd_agent_task *tasks0; /* base of spec tasks, to turn pointers into indices */
};
struct pd_agent_accel_ops pd_agent_accel_recording(struct pd_agent_accel_rec *rec);

/* ---------------------------------------------------------------- GPIO markers (gpio.c) */
struct pd_agent_gpio_ops {
	const char *name;
	int (*set)(void *ctx, int value); /* called from RT threads: must not block for long */
	void (*close)(void *ctx);
	void *ctx;
};
/* "CHIP:LINE" (e.g. "gpiochip0:12"). Needs libgpiod (PD_HAVE_GPIOD); else PD_EXIT_ENV. */
int pd_agent_gpio_open_gpiod(const char *spec, struct pd_agent_gpio_ops *out, pd_err *e);
struct pd_agent_gpio_rec {
	_Atomic size_t n;
	size_t cap;
	struct { int64_t t_mono_ns; int value; } *ev;
};
struct pd_agent_gpio_ops pd_agent_gpio_recording(struct pd_agent_gpio_rec *rec);

/* ---------------------------------------------------------------- power sampler (power.c) */
typedef struct pd_power pd_power;
struct pd_agent_power_sample {
	int64_t uw;  /* INT64_MIN when the rail could not be read */
	int err;     /* 0 or errno of the failed read */
};
/* Opens every rail: uri_override replaces each rail's URI when non-NULL. Callers must block or
 * ignore SIGPIPE (libiio writes to sockets a dead iiod has closed; pd_agent_run blocks it). A rail that cannot be
 * found is not an error here: it reads as a gap. Returns NULL only on out-of-memory. */
pd_power *pd_agent_power_open(const struct pd_agent_rail *rails, size_t n, const char *uri_override);
/* Reads all rails once into out[n]; returns how many were read successfully. Reconnects network
 * contexts after any error (a libiio network context is unusable after one). */
size_t pd_agent_power_read(pd_power *p, struct pd_agent_power_sample *out);
/* Human-readable state of rail i ("local fast path", "ip:... via libiio", "not found: ..."). */
const char *pd_agent_power_rail_state(const pd_power *p, size_t i);
void pd_agent_power_close(pd_power *p);

/* ---------------------------------------------------------------- measurements (measure.c) */
/* `powerdag-agent measure overhead|power ...` (argv[0] = "measure"): one measurement of `powerdag
 * profile`, printed as one JSON object on stdout (docs/PROFILE.md). Exit 0, 2 (usage), 3 (environment). */
int pd_agent_measure_main(int argc, char **argv);

/* ---------------------------------------------------------------- the run (run.c) */
struct pd_agent_opts {
	const char *plan_path;   /* used when spec == NULL */
	const struct pd_agent_spec *spec; /* optional pre-built spec (tests) */
	const char *out_dir;     /* run.pdlog goes here */
	int64_t duration_ns;     /* 0 = until SIGTERM/SIGINT */
	const char *cgroup_root; /* --cgroup-root */
	const char *cgroup_base; /* cgroup mount, NULL = /sys/fs/cgroup */
	const char *iio_uri;     /* --iio */
	int sample_hz;           /* default 100, 1..1000 */
	bool no_power;
	const char *gpio;        /* --gpio CHIP:LINE */
	uint64_t seed;
	bool starvation_monitor;
	int64_t starve_threshold_ns; /* default 1 s, like stalld */
	/* Test only: one injected overrun (job inject->seq of that task runs inject->factor x its drawn
	 * demand); NULL = none. The agent's main fills it from PD_AGENT_INJECT_OVERRUN (docs/DEPLOY.md). */
	const struct pd_inject *inject;
	/* Test hooks: override backends (NULL = real ones). */
	const struct pd_agent_gpio_ops *gpio_ops;
	const struct pd_agent_accel_ops *accel_ops;
	FILE *log;               /* progress and errors (stderr) */
};
void pd_agent_opts_init(struct pd_agent_opts *o);

/* Runs to completion. Returns PD_EXIT_OK (run finished; misses are in the log, not an error),
 * PD_EXIT_USAGE (bad plan/options, nothing written) or PD_EXIT_ENV (admission refused, missing
 * privilege or kernel feature: e->msg names the task and the fix; no task was released).
 * SIGTERM/SIGINT stop it cleanly: the caller must have them blocked in every thread (main does). */
int pd_agent_run(const struct pd_agent_opts *o, pd_err *e);

/* --self-test: prints a summary to out; returns 0 when the binary works. */
int pd_agent_self_test(FILE *out);

/* Starvation monitor (starve.c); used by run.c */
typedef struct pd_starve pd_starve;
struct pd_runlog_ring;
pd_starve *pd_agent_starve_start(const int *cpus, size_t n, int64_t threshold_ns, int64_t t0_mono_ns,
			   struct pd_runlog_ring *ring, pd_err *e);
void pd_agent_starve_stop(pd_starve *s);

#endif /* PD_AGENT_H */
