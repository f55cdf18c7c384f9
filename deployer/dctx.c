/* SPDX-License-Identifier: MIT */
/* dctx.c - the deploy context's services shared by deploy.c, run.c and fault.c (dctx_impl.h): the
 * clock, the log, reconnection, the work directory's paths and signals to the agent. */
#include "deployer/dctx_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double dctx_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool dctx_interrupted(const struct dctx *c) { return c->o->interrupted && *c->o->interrupted; }

void dctx_log(struct dctx *c, const char *fmt, ...)
{
	if (!c->o->log)
		return;
	/* lines quote the board's answers: escaped (core/escape.c) */
	char line[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(c->o->log, "deploy: ");
	pd_esc_fputs(line, c->o->log);
	fputc('\n', c->o->log);
	fflush(c->o->log);
}

int dctx_reconnect(struct dctx *c)
{
	if (!pd_deploy_transport_lost(c->t))
		return 0;
	double until = dctx_now_s() + c->reconnect_s;
	pd_err e = {0};
	dctx_log(c, "connection to %s lost; reconnecting", pd_deploy_transport_uri(c->t));
	while (dctx_now_s() < until) {
		if (pd_deploy_transport_reconnect(c->t, &e) == 0) {
			c->r->reconnects++;
			dctx_log(c, "reconnected");
			return 0;
		}
		usleep(500000);
	}
	dctx_log(c, "could not reconnect: %s", e.msg);
	return PD_EXIT_ENV;
}

void dctx_set_remote_dir(struct dctx *c, const char *dir)
{
	/* remote_dir (256) plus the longest name (15) fits every rp field (320): nothing is cut */
	snprintf(c->remote_dir, sizeof(c->remote_dir), "%s", dir);
	struct dctx_remote *p = &c->rp;
	snprintf(p->agent, sizeof(p->agent), "%s/powerdag-agent", c->remote_dir);
	snprintf(p->plan, sizeof(p->plan), "%s/plan.yaml", c->remote_dir);
	snprintf(p->out, sizeof(p->out), "%s/out", c->remote_dir);
	snprintf(p->log, sizeof(p->log), "%s/out/run.pdlog", c->remote_dir);
	snprintf(p->pid, sizeof(p->pid), "%s/agent.pid", c->remote_dir);
	snprintf(p->exit, sizeof(p->exit), "%s/agent.exit", c->remote_dir);
	snprintf(p->err, sizeof(p->err), "%s/agent.stderr", c->remote_dir);
}

int dctx_agent_signal(struct dctx *c, const char *sig)
{
	if (c->agent_pid <= 0)
		return -1;
	char s[16], pid[32];
	snprintf(s, sizeof(s), "-%s", sig);
	snprintf(pid, sizeof(pid), "%ld", c->agent_pid);
	const char *argv[] = {"kill", s, pid, NULL};
	struct pd_deploy_exec_result r;
	pd_err e = {0};
	int rc;
	WITH_RECONNECT(c, rc, pd_deploy_transport_exec(c->t, argv, &r, &e));
	pd_deploy_exec_result_free(&r);
	return rc;
}
