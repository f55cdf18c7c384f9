/* SPDX-License-Identifier: MIT */
/*
 * fault.c - test-only fault injection (POWERDAG_FAULT=STEP:KIND, docs/DEPLOY.md). The deployer calls
 * pd_deploy_fault_fire() at each step; the fault fires once, at the first matching step.
 */
#include "deployer/board_impl.h"

#include <string.h>

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
