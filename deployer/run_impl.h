/* SPDX-License-Identifier: MIT */
/* run_impl.h - state of one deploy, shared by deploy.c and run.c (private). */
#ifndef PD_RUN_IMPL_H
#define PD_RUN_IMPL_H

#include <jansson.h>

#include "deployer/pd_deployer.h"

struct dctx {
	const struct pd_deploy_opts *o;
	struct pd_deploy_result *r;
	pd_deploy_transport *t;
	pd_deploy_board *b;
	pd_plan *plan;
	char plan_dir[1024];
	int out_fd;             /* RUNDIR, opened by pd_dir_open_private: every file is created under it */
	struct pd_deploy_fault fault;
	int64_t duration_ns;
	double reconnect_s;     /* give up reconnecting after this long */
	char start_iso[32];
	char agent[1024];       /* local agent binary */
	char remote_dir[256];   /* board work directory (agent, plan, out/, stderr, pid, exit) */
	bool remote_cleaned;    /* remote_dir removed */
	long agent_pid;
	pd_err err;             /* first error */
	int restore_rc;
	bool state_equal;
	double stop_s, restore_s;
	pd_buf problems, state_before, left;
	json_t *changes;
	double t_start;         /* monotonic seconds at the start of pd_deploy_run */
	char rbuf[6][600];      /* rotating scratch for board paths in the work directory */
	int rrot;
};

void dlog(struct dctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int dctx_reconnect(struct dctx *c);
int dctx_fault(struct dctx *c, const char *step, pd_err *e);
/* The board's private work directory (0700) with the agent and the plan: before pre-flight, which
 * runs the agent's check-plugins there. */
int run_upload(struct dctx *c, pd_err *e);
/* Start, stream, stop, fetch, remove the work directory. */
int run_agent(struct dctx *c, pd_err *e);
/* rm -rf of the work directory (once; every exit path after run_upload). */
void run_cleanup_remote(struct dctx *c);
/* kill -SIG agent_pid on the board; 0 when sent. */
int agent_signal(struct dctx *c, const char *sig);

#endif
