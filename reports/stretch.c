/* SPDX-License-Identifier: MIT */
/*
 * Stretched jobs (docs/REPORTS.md "Stretched jobs"): builtin:spin and builtin:busy jobs whose thread
 * was charged far more CPU time than their work takes.
 *
 * A spin job is a fixed number of iterations of a register-only loop, sized from the agent's
 * calibration (on the twin, from its last jobs: agents/work.c) so that it takes its demand at the
 * job's OPP. Its CPU time can exceed that by the loop's own jitter (a few per cent, more on a VM whose
 * host shares the core) and by the time the thread was charged without running its instructions: a
 * vCPU the host stopped while it was current (the guest's clock jumps and the kernel charges the jump
 * to it), an interrupt storm, an SMI. Neither is in the plan. The replay runs such a job's CPU time as
 * work, which is what the kernel charged, but not how: update_curr_dl() charges a jump in one step at
 * the reclaiming rate of that moment (GRUB), the simulator at the rate of each instant, so after a stop
 * the kernel may throttle a job the replay runs through (the closed-loop bench's miss of 2026-12-05,
 * plan 8290: a job charged 18.9 ms for 5.8 ms of work; docs/MODEL.md).
 *
 * Invariant: a job counts only when both its excess >= RPT_STRETCH_MIN_NS (far above the 20-60 us of
 * per-job overhead the kernel charges, which the plan holds) and excess >= RPT_STRETCH_MIN_FRAC of its
 * demand (above the loop's jitter: on the 2-CPU test VM the 99th percentile of CPU time over demand
 * was 1.26 under load, mostly jobs under 1 ms). builtin:busy reads its thread's CPU clock every few
 * hundred iterations until it reaches its demand, so its excess is only the part of a jump that
 * lands past the demand (a stop earlier in the job shortens the work instead): the same rule finds
 * fewer of them. Plugins do what they do with their demand: left out.
 */
#include "reports/run_model_impl.h"

#include <stdlib.h>

/* Per task of ds, whether its work is the agent's own, builtin:spin or builtin:busy (NULL is spin,
 * docs/FORMATS.md): work whose CPU time the demand sets. Computed once per report, not per job.
 * NULL on out-of-memory. */
static bool *builtin_tasks(const pd_dagset *ds)
{
	size_t n = pd_dags_task_count(ds);
	bool *b = calloc(n + 1, sizeof(*b));
	for (size_t i = 0; b && i < n; i++) {
		struct pd_work w;
		const char *why = NULL;
		b[i] = pd_dags_work_parse(pd_dags_task(ds, i)->work, &w, &why) == 0 && w.kind != PD_WORK_PLUGIN;
	}
	return b;
}

/* The excess of job j over its work when it counts as stretched, else 0; *known set when j is a
 * builtin job (builtin[nt]) with a recorded demand. */
static int64_t stretch_of(const bool *builtin, size_t nt, const struct rpt_job *j, bool *known)
{
	if (j->cpu < 0 || j->failed || j->demand_ns <= 0 || j->task >= nt || !builtin[j->task])
		return 0;
	*known = true;
	if (j->exec_ns <= j->demand_ns) /* also keeps the difference below from overflowing (any log) */
		return 0;
	int64_t x = j->exec_ns - j->demand_ns;
	if (x < RPT_STRETCH_MIN_NS || (double)x < RPT_STRETCH_MIN_FRAC * (double)j->demand_ns)
		return 0;
	return x;
}

int rpt_stretch_stats(const struct rpt_run *r, struct rpt_stats *s, struct rpt_steal **v, size_t *n)
{
	s->stretch_known = false;
	s->stretch_jobs = 0;
	s->stretch_total_ns = s->stretch_max_ns = 0;
	s->misses_with_stretch = 0;
	*n = 0;
	*v = malloc((r->n_jobs + 1) * sizeof(**v));
	if (!*v)
		return -1;
	if (!r->plan)
		return 0;
	const pd_dagset *ds = pd_plan_dags(r->plan);
	bool *builtin = builtin_tasks(ds);
	if (!builtin)
		return -1;
	for (size_t i = 0; i < r->n_jobs; i++) {
		const struct rpt_job *j = &r->jobs[i];
		int64_t x = stretch_of(builtin, pd_dags_task_count(ds), j, &s->stretch_known);
		if (!x)
			continue;
		(*v)[(*n)++] = (struct rpt_steal){j->cpu, j->start_ns, j->end_ns, x};
		s->stretch_total_ns = rpt_add_sat(s->stretch_total_ns, x);
		if (x > s->stretch_max_ns)
			s->stretch_max_ns = x;
	}
	free(builtin);
	s->stretch_jobs = *n;
	int64_t unused = 0;
	return rpt_misses_meeting(r, *v, *n, &s->misses_with_stretch, &unused);
}
