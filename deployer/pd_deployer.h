/* SPDX-License-Identifier: MIT */
/*
 * pd_deployer.h - deploying a plan to a board: transport (SSH/SFTP or this machine), board
 * operations (pre-flight, snapshot, apply, restore) and the run (agent upload, start, log streaming,
 * stop, collection into RUNDIR). docs/DEPLOY.md explains the sequence and the guarantees.
 *
 * Layers, bottom up:
 *   pd_deploy_transport  an opaque connection to a board with one ops table per backend: "ssh" (libssh, strict
 *                 known_hosts verification, public-key auth, exec channels, SFTP) and "local" (fork/
 *                 execvp and plain file I/O on this machine). Commands are argument vectors; the only
 *                 place that turns an argument into shell text is pd_deploy_shell_quote().
 *   pd_deploy_board      the board files of docs/ARCHITECTURE.md under a root prefix (default "/"; tests use
 *                 a fake sysfs tree). Pre-flight reads only; apply records every value before it
 *                 changes it; restore writes the record back in reverse order.
 *   pd_deploy     the whole `powerdag deploy` sequence with restore on every exit path.
 *
 * Invariant kept by pd_deploy_board: after pd_deploy_board_restore() returns 0, pd_deploy_board_state() reads the same
 * text as before pd_deploy_board_apply() (snapshot after == snapshot before).
 */
#ifndef PD_DEPLOYER_H
#define PD_DEPLOYER_H

#include <signal.h>

#include "core/pd_core.h"
#include "plan/pd_plan.h"

/* ---------------------------------------------------------------- shell quoting */
/* Appends arg to out as ONE word for a POSIX shell: wrapped in single quotes, each ' written as
 * '\''. Every byte other than ' is literal inside single quotes ($, `, \, newline, spaces), so no
 * argument can become shell syntax. Returns 0 or -1 (out of memory). */
int pd_deploy_shell_quote(pd_buf *out, const char *arg);
/* The whole NULL-terminated vector, words separated by one space. */
int pd_deploy_shell_quote_argv(pd_buf *out, const char *const *argv);

/* ---------------------------------------------------------------- transport */
typedef struct pd_deploy_transport pd_deploy_transport;

struct pd_deploy_transport_opts {
	const char *identity;    /* ssh: private key file (default ~/.ssh/id_ed25519, then id_rsa) */
	const char *known_hosts; /* ssh: known_hosts file (default ~/.ssh/known_hosts) */
	long timeout_s;          /* ssh: connect / per-read timeout; 0 = 10 s */
};

/* uri: "local" or "ssh://[user@]host[:port]". Errors: bad URI → PD_EXIT_USAGE; unreachable, host key
 * unknown or changed (message holds the SHA256 fingerprint and the command that accepts it), auth
 * refused → PD_EXIT_ENV. */
int pd_deploy_transport_open(const char *uri, const struct pd_deploy_transport_opts *o, pd_deploy_transport **out, pd_err *e);
/* Only the URI check of pd_deploy_transport_open, without connecting: PD_EXIT_USAGE when it would refuse
 * the URI (so a command can refuse a bad --board before it writes anything). */
int pd_deploy_transport_check_uri(const char *uri, pd_err *e);
void pd_deploy_transport_close(pd_deploy_transport *t);
const char *pd_deploy_transport_uri(const pd_deploy_transport *t);
bool pd_deploy_transport_is_local(const pd_deploy_transport *t);
/* True once an operation failed because the connection is gone; pd_deploy_transport_reconnect() clears it. */
bool pd_deploy_transport_lost(const pd_deploy_transport *t);
int pd_deploy_transport_reconnect(pd_deploy_transport *t, pd_err *e);
/* Cuts the connection the way a network failure would (fault injection; no-op for local). */
void pd_deploy_transport_drop(pd_deploy_transport *t);

struct pd_deploy_exec_result {
	int status; /* exit status; 128+N when killed by signal N */
	pd_buf out, err;
};
void pd_deploy_exec_result_free(struct pd_deploy_exec_result *r);
/* Runs argv[0] with arguments argv[1..] (NULL-terminated) on the board and waits for it. A non-zero
 * exit status is not an error (it is in r->status); failing to run it at all is. */
int pd_deploy_transport_exec(pd_deploy_transport *t, const char *const *argv, struct pd_deploy_exec_result *r, pd_err *e);

struct pd_deploy_transport_stat {
	bool exists, is_dir;
	uint64_t size;
	unsigned mode; /* permission bits */
};
/* A missing path is not an error: st->exists = false. */
int pd_deploy_transport_stat(pd_deploy_transport *t, const char *path, struct pd_deploy_transport_stat *st, pd_err *e);
/* Whole small file (sysfs attribute, log); out is reset first. */
int pd_deploy_transport_read(pd_deploy_transport *t, const char *path, pd_buf *out, pd_err *e);
/* Up to max bytes from offset off, appended to out (fewer at end of file). */
int pd_deploy_transport_read_at(pd_deploy_transport *t, const char *path, uint64_t off, size_t max, pd_buf *out, pd_err *e);
/* Opens for writing (create/truncate) and writes data with as few write() calls as possible, the
 * way `echo V > attr` does; the kernel's answer to the write (EINVAL, EBUSY) is the error. */
int pd_deploy_transport_write(pd_deploy_transport *t, const char *path, const void *data, size_t len, pd_err *e);
int pd_deploy_transport_mkdir(pd_deploy_transport *t, const char *path, unsigned mode, pd_err *e);
int pd_deploy_transport_rmdir(pd_deploy_transport *t, const char *path, pd_err *e);
int pd_deploy_transport_unlink(pd_deploy_transport *t, const char *path, pd_err *e);
int pd_deploy_transport_chmod(pd_deploy_transport *t, const char *path, unsigned mode, pd_err *e);
/* Names in a directory (no "." / ".."), sorted; caller frees each and the array. */
int pd_deploy_transport_listdir(pd_deploy_transport *t, const char *path, char ***names, size_t *n, pd_err *e);
int pd_deploy_transport_upload(pd_deploy_transport *t, const char *local, const char *remote, unsigned mode, pd_err *e);
int pd_deploy_transport_download(pd_deploy_transport *t, const char *remote, const char *local, pd_err *e);

/* ---------------------------------------------------------------- board */
typedef struct pd_deploy_board pd_deploy_board;

/* The cpuset directory a deploy makes under the board's cpuset root (one exclusive child per plan CPU);
 * `twin down` removes one left by a deploy killed with a namespace twin (twin/hostguard.c). */
#define PD_DEPLOY_CGROUP_DEFAULT "powerdag"
/* A cpuset directory name a user may give (--cgroup): 1..63 characters of [A-Za-z0-9._-], not
 * starting with '.', nor a name the kernel's cgroup files use (cpuN children are ours). */
int pd_deploy_cgroup_name_check(const char *name, pd_err *e);

struct pd_deploy_board_opts {
	const char *root;  /* prefix of every board file; NULL/"" = "/" */
	bool plain_files;  /* root is a plain directory standing in for sysfs (tests): rmdir of a cgroup
	                    * first removes the attribute files that writes created there */
	const char *cgroup_name; /* name of the cpuset directory the deployer creates; default PD_DEPLOY_CGROUP_DEFAULT */
};

struct pd_deploy_board_info {
	char kernel[128];   /* uname -r */
	char arch[64];      /* uname -m */
	bool is_root;
	bool fair_server;   /* fair-server debugfs present and readable */
	int cgroup_version; /* 1, 2, or 0 (no cpuset controller) */
	char cgroup_root[512];  /* board path of the cpuset hierarchy */
	char cgroup_dir[512];   /* board path given to the agent as --cgroup-root (after apply) */
};

pd_deploy_board *pd_deploy_board_new(pd_deploy_transport *t, const struct pd_deploy_board_opts *o);
void pd_deploy_board_free(pd_deploy_board *b);
const struct pd_deploy_board_info *pd_deploy_board_info(const pd_deploy_board *b);
/* Board path of a board file ("/sys/..." → root + "/sys/..."). Returned buffer lives for the next three
 * calls on b. A path longer than the buffer (1023 bytes) gives "", which every transport call refuses. */
const char *pd_deploy_board_path(pd_deploy_board *b, const char *abs);

/* Every check of docs/DEPLOY.md §pre-flight. Reads only. Each problem is one line appended to
 * problems; returns 0 when there is none, PD_EXIT_ENV otherwise (e holds a summary). A transport
 * failure is returned as such. */
int pd_deploy_board_preflight(pd_deploy_board *b, const pd_plan *p, const char *plan_dir, pd_buf *problems, pd_err *e);

/* Records, then changes, everything the plan needs (cpufreq, devfreq, cpusets, RT/fair-server
 * bandwidth, FPGA images). On failure the changes made so far stay recorded for pd_deploy_board_restore(). */
int pd_deploy_board_apply(pd_deploy_board *b, const pd_plan *p, const char *plan_dir, pd_err *e);
/* Writes every recorded value back, newest first, and removes what apply created. Entries that could
 * not be restored are listed, one per line, in left_changed (when non-NULL); returns PD_EXIT_ENV then.
 * Entries restored are dropped from the record, so a later call retries only what is left. */
int pd_deploy_board_restore(pd_deploy_board *b, pd_buf *left_changed, pd_err *e);
/* Number of recorded changes not yet restored. */
size_t pd_deploy_board_pending(const pd_deploy_board *b);
/* The record as JSON-ready lines "path\told\tnew" (for deploy.json). */
void pd_deploy_board_record_text(const pd_deploy_board *b, pd_buf *out);

/* A read-only snapshot, as text, of every board value the deployer may touch for this plan (all
 * cpufreq policies, the plan's devfreq devices, RT and fair-server bandwidth, the cpuset hierarchy's
 * children and root balance flag, FPGA managers and /lib/firmware entries of the plan). */
int pd_deploy_board_state(pd_deploy_board *b, const pd_plan *p, pd_buf *out, pd_err *e);
/* The same snapshot for a platform's devices (what `profile` may touch). */
int pd_deploy_board_state_of(pd_deploy_board *b, const pd_platform *pl, pd_buf *out, pd_err *e);
/* Recorded, restorable frequency pinning outside a plan (`profile` steps the OPPs): an island's
 * cpufreq policy to f (userspace or performance min = max, read back like apply), a GPU's devfreq
 * to f (min = max). */
int pd_deploy_board_set_island_freq(pd_deploy_board *b, const struct pd_island *isl, int64_t f_khz, pd_err *e);
int pd_deploy_board_set_gpu_freq(pd_deploy_board *b, const struct pd_accelerator *a, int64_t f_khz, pd_err *e);

/* ---------------------------------------------------------------- fault injection (tests only) */
/* POWERDAG_FAULT=STEP:KIND (docs/DEPLOY.md): at STEP, KIND happens. Steps: preflight, snapshot, freq,
 * devfreq, cpuset, bandwidth, fpga, upload, start, stream, stop, fetch. Kinds: fail (the step's
 * operation fails), drop (the SSH connection is cut), kill-agent (SIGKILL to the agent), sigint (as if
 * Ctrl-C was pressed), admission (the agent is started with a bandwidth it cannot be admitted with). */
struct pd_deploy_fault {
	char step[32];
	char kind[32];
	bool fired;
};
/* spec NULL or "" → no fault. Bad spec → PD_EXIT_USAGE. */
int pd_deploy_fault_parse(const char *spec, struct pd_deploy_fault *f, pd_err *e);
/* Gives the board layer the fault to fire at its steps and the flag that interrupts it (either NULL). */
void pd_deploy_board_set_hooks(pd_deploy_board *b, struct pd_deploy_fault *f, volatile sig_atomic_t *interrupted);

/* ---------------------------------------------------------------- deploy */
struct pd_deploy_opts {
	const char *plan_path;
	const char *board_uri;
	int64_t duration_ns;         /* run length; 0 = 10 s */
	const char *out_dir;         /* RUNDIR: created here; an existing one must be empty, ours, and not
	                              * writable by group/others (pd_dir_open_private) */
	bool out_dir_ready;          /* the caller made out_dir itself (pd_dir_open_private) and wrote into
	                              * it: it may hold files (powerdag demo) */
	bool no_restore;
	struct pd_deploy_transport_opts tp;
	const char *agent_path;      /* --agent; NULL: search (docs/DEPLOY.md) */
	const char *self_exe;        /* the powerdag binary, for the agent search; NULL = /proc/self/exe */
	const char *simulate_json;   /* copied to RUNDIR/simulate.json when non-NULL */
	struct pd_deploy_board_opts board;
	/* --cpu-map (docs/DEPLOY.md "CPU map"): the board's CPU id of every core of the plan's platform,
	 * in file order (island by island); n_cpu_map 0 = the plan's ids are the board's. The deploy
	 * runs pd_plan_remap_cpus' plan: RUNDIR/plan.yaml, the board and the run log see board ids. */
	const int *cpu_map;
	size_t n_cpu_map;
	const char *fault;           /* POWERDAG_FAULT value (tests only) */
	volatile sig_atomic_t *interrupted; /* set by the caller's SIGINT/SIGTERM handler */
	FILE *log;                   /* progress lines; NULL = silent */
};

struct pd_deploy_result {
	int agent_status;       /* agent exit status, -1 when it never ran */
	bool restored;          /* the board is back to its snapshot (or --no-restore) */
	double setup_s;         /* connect + pre-flight + apply + upload + start (excludes the run) */
	double teardown_s;      /* stop + fetch + restore */
	uint64_t log_bytes;     /* run.pdlog bytes collected */
	int reconnects;
};

/* The deploy sequence. Returns 0, or PD_EXIT_USAGE (bad plan/option; nothing touched), PD_EXIT_ENV
 * (board problem, pre-flight, agent refused / crashed, incomplete restore) with e set. RUNDIR holds
 * whatever was collected, and deploy.json, on every path after the plan was read. */
int pd_deploy_run(const struct pd_deploy_opts *o, struct pd_deploy_result *r, pd_err *e);

/* ---------------------------------------------------------------- profile (docs/PROFILE.md) */
struct pd_deploy_profile_opts {
	const char *board_uri;      /* ssh://..., local (the CLI resolves "twin") */
	const char *platform_path;  /* NOMINAL */
	const char *out_path;       /* FITTED, written atomically after a complete, restored run */
	struct pd_deploy_transport_opts tp;
	const char *agent_path, *self_exe;
	struct pd_deploy_board_opts board;
	int overhead_jobs;          /* jobs per thread of the overhead step; 0 = 1000 */
	int window_ms;              /* rail averaging window per phase; 0 = 500 */
	volatile sig_atomic_t *interrupted;
	FILE *log;                  /* progress (step i/N, time left); NULL = silent */
};
/* Measures the board and writes FITTED (the nominal platform with measured job_overhead, OPP
 * powers and a provenance block). Returns 0, PD_EXIT_USAGE (bad NOMINAL / -o / URI: nothing
 * touched or written) or PD_EXIT_ENV (board, agent, a failed step, interrupted, incomplete
 * restore: FITTED not written). *summary_json (caller frees; may be NULL) describes the steps,
 * their durations, the values, what was skipped and why, and the flags. */
int pd_deploy_profile_run(const struct pd_deploy_profile_opts *o, char **summary_json, pd_err *e);

/* The powerdag-agent binary for a board architecture (uname -m): --agent PATH when given (checked),
 * else next to self_exe, in the build tree (../agents/), or self_exe's dir/powerdag-agent-ARCH.
 * Writes the path into out. PD_EXIT_ENV with the list of places searched when none matches. */
int pd_deploy_find_agent(const char *explicit_path, const char *self_exe, const char *arch, char *out, size_t n,
		  pd_err *e);

#endif /* PD_DEPLOYER_H */
