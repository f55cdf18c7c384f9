/* SPDX-License-Identifier: MIT */
/*
 * fault.c - the test seam: fault injection (POWERDAG_FAULT=STEP:KIND, docs/DEPLOY.md). The board
 * layer calls pd_deploy_fault_fire() at each of its steps, the deploy fault_at_step() and
 * fault_admission_plan() (dctx_impl.h); the fault fires once, at the first matching step. All the
 * fault logic is here: the production steps only name the point where a fault may fire.
 */
#include "deployer/board_impl.h"
#include "deployer/dctx_impl.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const steps[] = {"preflight", "snapshot", "freq", "devfreq", "cpuset", "bandwidth",
				    "fpga", "upload", "start", "stream", "stop", "fetch", NULL};
static const char *const kinds[] = {"fail", "drop", "kill-agent", "sigint", "admission", NULL};

static bool in(const char *const *v, const char *s)
{
	for (; *v; v++)
		if (!strcmp(*v, s))
			return true;
	return false;
}

int pd_deploy_fault_parse(const char *spec, struct pd_deploy_fault *f, pd_err *e)
{
	memset(f, 0, sizeof(*f));
	if (!spec || !*spec)
		return 0;
	const char *colon = strchr(spec, ':');
	if (!colon || (size_t)(colon - spec) >= sizeof(f->step) || strlen(colon + 1) >= sizeof(f->kind))
		return pd_err_set(e, PD_EXIT_USAGE, "POWERDAG_FAULT='%s': expected STEP:KIND", spec);
	memcpy(f->step, spec, (size_t)(colon - spec));
	snprintf(f->kind, sizeof(f->kind), "%s", colon + 1);
	if (!in(steps, f->step) || !in(kinds, f->kind))
		return pd_err_set(e, PD_EXIT_USAGE,
				  "POWERDAG_FAULT='%s': unknown step or kind (steps: preflight snapshot freq devfreq "
				  "cpuset bandwidth fpga upload start stream stop fetch; kinds: fail drop kill-agent "
				  "sigint admission)", spec);
	return 0;
}

/* kill-agent and admission are handled by the run (it knows the agent); here: fail, drop, sigint. */
int pd_deploy_fault_fire(struct pd_deploy_fault *f, const char *step, pd_deploy_transport *t, volatile sig_atomic_t *interrupted,
		  pd_err *e)
{
	if (!f || f->fired || !f->step[0] || strcmp(f->step, step))
		return 0;
	if (!strcmp(f->kind, "fail")) {
		f->fired = true;
		return pd_err_set(e, PD_EXIT_ENV, "injected fault: step %s failed (POWERDAG_FAULT)", step);
	}
	if (!strcmp(f->kind, "drop")) {
		f->fired = true;
		pd_deploy_transport_drop(t);
	} else if (!strcmp(f->kind, "sigint") && interrupted) {
		f->fired = true;
		*interrupted = 1;
	}
	return 0;
}

static bool wanted(const struct dctx *c, const char *step, const char *kind)
{
	return !c->fault.fired && !strcmp(c->fault.step, step) && !strcmp(c->fault.kind, kind);
}

int fault_at_step(struct dctx *c, const char *step, pd_err *e)
{
	int rc = pd_deploy_fault_fire(&c->fault, step, c->t, c->o->interrupted, e);
	if (rc)
		return rc;
	if (wanted(c, step, "kill-agent") && c->agent_pid > 0) {
		c->fault.fired = true;
		dctx_agent_signal(c, "KILL");
	}
	return 0;
}

int fault_admission_plan(struct dctx *c, char *path, size_t n, pd_err *e)
{
	path[0] = '\0';
	if (!wanted(c, "start", "admission"))
		return 0;
	/* every CPU task asks for its whole period: beyond the DL admission cap, so the kernel refuses
	 * the agent (EBUSY) exactly as it would a plan that does not fit */
	c->fault.fired = true;
	size_t nt = pd_dags_task_count(pd_plan_dags(c->plan));
	int64_t *keep = calloc(2 * nt + 1, sizeof(int64_t));
	if (!keep)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	for (size_t i = 0; i < nt; i++) {
		struct pd_plan_task *t = pd_plan_task(c->plan, i);
		keep[2 * i] = t->runtime_ns, keep[2 * i + 1] = t->deadline_ns;
		if (t->place.kind == PD_PLACE_CPU)
			t->runtime_ns = t->deadline_ns = t->period_ns;
	}
	snprintf(path, n, "/tmp/powerdag-admission.XXXXXX");
	int fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	int rc = pd_plan_write_file(c->plan, path, e);
	/* only the uploaded copy asks too much: pre-flight and apply see the real plan */
	for (size_t i = 0; i < nt; i++) {
		struct pd_plan_task *t = pd_plan_task(c->plan, i);
		t->runtime_ns = keep[2 * i], t->deadline_ns = keep[2 * i + 1];
	}
	free(keep);
	return rc;
}
