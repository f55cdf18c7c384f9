/* SPDX-License-Identifier: MIT */
/*
 * dctx_impl.h - the context of one `powerdag deploy` (private to deployer/): its state, its log,
 * reconnection, and the agent's process on the board. The files that use it call down, never across:
 *
 *   deploy.c (the sequence, restore, deploy.json) --> run.c (the agent's run) --> dctx.c
 *        |                                              |
 *        +---------------> fault.c (test seam) <--------+   fault.c --> dctx.c
 */
#ifndef PD_DCTX_IMPL_H
#define PD_DCTX_IMPL_H

#include <jansson.h>

#include "deployer/pd_deployer.h"

/* Board paths in the work directory. Filled once by dctx_set_remote_dir() (fixed names under a
 * fixed directory), so they live as long as the context: no scratch buffer, no lifetime rule. */
struct dctx_remote {
	char agent[320]; /* DIR/powerdag-agent */
	char plan[320];  /* DIR/plan.yaml */
	char out[320];   /* DIR/out, the agent's --out */
	char log[320];   /* DIR/out/run.pdlog */
	char pid[320];   /* DIR/agent.pid, written by the launcher */
	char exit[320];  /* DIR/agent.exit, written by the launcher when the agent ends */
	char err[320];   /* DIR/agent.stderr */
};

struct dctx {
	const struct pd_deploy_opts *o;
	struct pd_deploy_result *r;
	pd_deploy_transport *t;
	pd_deploy_board *b;
	pd_plan *plan;          /* the plan the board runs: --cpu-map's copy when there is a map */
	uint64_t given_hash;    /* pd_plan_hash of the plan file as given (before a CPU map) */
	int *given_cpus;        /* --cpu-map: the file's CPU ids, core by core (n_cpu_map of them) */
	char plan_file[1100];   /* local file of `plan`: the given one, or RUNDIR/plan.yaml when remapped */
	char plan_dir[1024];
	int out_fd;             /* RUNDIR, opened by pd_dir_open_private: every file is created under it */
	struct pd_deploy_fault fault;
	int64_t duration_ns;
	double reconnect_s;     /* give up reconnecting after this long */
	char start_iso[32];
	char agent[1024];       /* local agent binary */
	char remote_dir[256];   /* board work directory (agent, plan, out/, stderr, pid, exit) */
	struct dctx_remote rp;  /* paths in remote_dir */
	bool remote_cleaned;    /* remote_dir removed */
	long agent_pid;
	pd_err err;             /* first error */
	int restore_rc;
	bool state_equal;
	double stop_s, restore_s;
	pd_buf problems, state_before, left, meanwhile;
	json_t *changes;
	double t_start;         /* monotonic seconds at the start of pd_deploy_run */
};

/* ---------------------------------------------------------------- dctx.c */
double dctx_now_s(void);
bool dctx_interrupted(const struct dctx *c);
void dctx_log(struct dctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0 when connected (again); PD_EXIT_ENV after reconnect_s without success. */
int dctx_reconnect(struct dctx *c);
/* Sets remote_dir and every path of rp under it. */
void dctx_set_remote_dir(struct dctx *c, const char *dir);
/* kill -SIG agent_pid on the board; 0 when sent. */
int dctx_agent_signal(struct dctx *c, const char *sig);

/* Runs call until it succeeds or the connection cannot be restored (3 tries). */
#define WITH_RECONNECT(c, rc, call)                                         \
	do {                                                                \
		for (int try_ = 0; try_ < 3; try_++) {                      \
			rc = (call);                                        \
			if (rc == 0 || !pd_deploy_transport_lost((c)->t))   \
				break;                                      \
			if (dctx_reconnect(c))                              \
				break;                                      \
		}                                                           \
	} while (0)

/* ---------------------------------------------------------------- run.c */
/* The board's private work directory (0700) with the agent and the plan: before pre-flight, which
 * runs the agent's check-plugins there. */
int run_upload(struct dctx *c, pd_err *e);
/* Start, stream, stop, fetch, remove the work directory. */
int run_agent(struct dctx *c, pd_err *e);
/* rm -rf of the work directory (once; every exit path after run_upload). */
void run_cleanup_remote(struct dctx *c);

/* ---------------------------------------------------------------- fault.c: test seam
 * POWERDAG_FAULT=STEP:KIND (tests only, docs/DEPLOY.md). Both are no-ops unless that fault was asked
 * for; production code calls them at its steps and has no other fault logic. */
/* At a step of the deploy: fail, drop, sigint (pd_deploy_fault_fire) or kill-agent (SIGKILL to the
 * running agent). */
int fault_at_step(struct dctx *c, const char *step, pd_err *e);
/* start:admission: writes into path (a fresh temporary file name of n bytes) a copy of the plan whose
 * CPU tasks ask for their whole period, for upload instead of the plan; returns 0 with path[0] == '\0'
 * when that fault was not asked for. The caller unlinks path. */
int fault_admission_plan(struct dctx *c, char *path, size_t n, pd_err *e);

#endif
