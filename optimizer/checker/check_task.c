/* SPDX-License-Identifier: MIT */
/*
 * check_task.c - per task: the WCET at the chosen OPP, its budget and the SCHED_DEADLINE triple.
 *
 * The WCET and the budget Q = ceil((C + o_k)(1 + m)) are recomputed from the embedded DAG set and
 * platform with the platform's laws (pd_platform_budget_at / pd_platform_latency_at) and every later rule uses the
 * recomputed values, so a plan that understates its wcet, overhead or runtime cannot make its cores
 * look lighter than they are.
 */
#include "optimizer/checker/check_impl.h"

#include <stdint.h>

/* A value no schedulable plan can reach, used when the placement itself is unusable. */
#define CK_HUGE_NS (INT64_MAX / 8)

static void check_triple(struct ck *c, size_t i, const struct pd_plan_task *pt, int64_t T, int64_t Q)
{
	char nm[160];
	ck_task_name(c, i, nm, sizeof(nm));
	if (pt->runtime_ns < CK_RUNTIME_MIN_NS)
		ck_add(c, PD_CK_RUNTIME_MIN, (double)pt->runtime_ns, (double)CK_RUNTIME_MIN_NS, "ns", "%s", nm);
	if (pt->runtime_ns > pt->deadline_ns)
		ck_add(c, PD_CK_RUNTIME_DEADLINE, (double)pt->runtime_ns, (double)pt->deadline_ns, "ns", "%s", nm);
	if (pt->deadline_ns > pt->period_ns)
		ck_add(c, PD_CK_DEADLINE_PERIOD, (double)pt->deadline_ns, (double)pt->period_ns, "ns", "%s", nm);
	/* The reservation period P: a job arrives at most once per T, so any P in [d, T] is a valid
	 * sporadic reservation for it (the optimizer writes P = d, implicit; older plans P = T). Above T
	 * the kernel would give the task less than Q per instance. */
	if (pt->period_ns > T)
		ck_add(c, PD_CK_PERIOD, (double)pt->period_ns, (double)T, "ns", "%s", nm);
	if (pt->period_ns < CK_PERIOD_MIN_NS)
		ck_add(c, PD_CK_PERIOD_RANGE, (double)pt->period_ns, (double)CK_PERIOD_MIN_NS, "ns", "%s", nm);
	else if (pt->period_ns > CK_PERIOD_MAX_NS)
		ck_add(c, PD_CK_PERIOD_RANGE, (double)pt->period_ns, (double)CK_PERIOD_MAX_NS, "ns", "%s", nm);
	if (pt->runtime_ns < Q)
		ck_add(c, PD_CK_RUNTIME_BUDGET, (double)pt->runtime_ns, (double)Q, "ns", "%s", nm);
	if (pt->deadline_ns < Q)
		ck_add(c, PD_CK_DEADLINE_BUDGET, (double)pt->deadline_ns, (double)Q, "ns", "%s", nm);
}

static void check_cpu_task(struct ck *c, size_t i, const struct pd_task *t, const struct pd_plan_task *pt)
{
	char nm[160];
	long k = pd_platform_island_of_cpu(c->plat, pt->place.cpu);
	if (k < 0) { /* the reader should have refused it; never trust, never crash */
		c->wcet_true[i] = c->budget_true[i] = CK_HUGE_NS;
		ck_add(c, PD_CK_WCET, (double)CK_HUGE_NS, (double)pt->wcet_ns, "ns", "%s: cpu %d is not on the platform",
		       ck_task_name(c, i, nm, sizeof(nm)), pt->place.cpu);
		return;
	}
	size_t opp = pd_plan_island_opp(c->plan, (size_t)k);
	struct pd_budget b;
	if (pd_platform_budget_at(c->plat, t, (size_t)k, opp, &b) != 0) /* OPP out of range: the reader should have refused it */
		b.wcet_ns = b.runtime_ns = CK_HUGE_NS;
	c->wcet_true[i] = b.wcet_ns;
	c->budget_true[i] = b.runtime_ns;
	ck_task_name(c, i, nm, sizeof(nm));
	if (pt->wcet_ns < b.wcet_ns)
		ck_add(c, PD_CK_WCET, (double)pt->wcet_ns, (double)b.wcet_ns, "ns", "%s", nm);
	/* A plan without the key predates the overhead: its runtime is judged against Q all the same. */
	if (pt->overhead_ns >= 0 && pt->overhead_ns != b.overhead_ns)
		ck_add(c, PD_CK_OVERHEAD, (double)pt->overhead_ns, (double)b.overhead_ns, "ns", "%s", nm);
	check_triple(c, i, pt, pd_dags_dag(c->dags, t->dag)->period_ns, b.runtime_ns);
	c->delay_ns[i] = pt->deadline_ns;
}

static void check_accel_task(struct ck *c, size_t i, const struct pd_task *t, const struct pd_plan_task *pt)
{
	char nm[160];
	size_t na = pd_platform_accel_count(c->plat);
	if (pt->place.accel >= na || pt->place.impl >= t->n_impls) {
		c->wcet_true[i] = c->budget_true[i] = CK_HUGE_NS;
		ck_add(c, PD_CK_WCET, (double)CK_HUGE_NS, (double)pt->wcet_ns, "ns",
		       "%s: placement names no implementation of the task", ck_task_name(c, i, nm, sizeof(nm)));
		c->delay_ns[i] = CK_HUGE_NS;
		return;
	}
	const struct pd_accelerator *a = pd_platform_accel(c->plat, pt->place.accel);
	const struct pd_impl *im = &t->impls[pt->place.impl];
	int64_t L = im->latency_ns;
	if (a->kind == PD_ACCEL_GPU && a->n_opps > 0)
		L = pd_platform_latency_at(a, im->latency_ns, pd_plan_accel_opp(c->plan, pt->place.accel));
	if (L < 0)
		L = CK_HUGE_NS;
	c->wcet_true[i] = c->budget_true[i] = L;
	if (pt->wcet_ns < L)
		ck_add(c, PD_CK_WCET, (double)pt->wcet_ns, (double)L, "ns", "%s", ck_task_name(c, i, nm, sizeof(nm)));
	c->delay_ns[i] = pt->response_ns; /* raised to the FIFO bound by ck_accels when it is larger */
}

void ck_tasks(struct ck *c)
{
	for (size_t i = 0; i < c->n_tasks; i++) {
		const struct pd_task *t = pd_dags_task(c->dags, i);
		const struct pd_plan_task *pt = pd_plan_task_c(c->plan, i);
		if (pt->place.kind == PD_PLACE_CPU)
			check_cpu_task(c, i, t, pt);
		else
			check_accel_task(c, i, t, pt);
	}
}
