/* SPDX-License-Identifier: MIT */
/*
 * check_core.c - per CPU: the partitioned-EDF density test and the kernel's admission test.
 *
 * Density (sufficient for EDF with constrained deadlines, the model's core rule):
 *     sum_{i on core} Q_i / d_i  <=  U_max - R_fair / P_fair
 * decided exactly by pd_check_sum_le. Q_i is the recomputed budget (WCET + per-job overhead,
 * margin: pd_platform_budget_at), d_i the plan's deadline.
 *
 * Reclaiming (GRUB, SCHED_FLAG_RECLAIM) is allowed on a core whose tasks all have implicit deadlines
 * (d_i = T_i), or all lie on one path of one DAG (pairwise ordered by precedence; one task alone
 * included): the kernel's GRUB accounts bandwidth as Q/T, which the density test above only matches
 * for implicit deadlines; with constrained deadlines a reclaiming task could take time the density
 * test gives to a neighbour, unless every neighbour is its own DAG's predecessor or successor
 * (docs/MODEL.md "Reclaiming").
 *
 * Admission (what sched_setattr() will accept on a one-CPU root domain, kernel fixed point):
 *     sum_i to_ratio(P_i, Q_i) + to_ratio(P_fair, R_fair)  <=  to_ratio(1 s, U_max * 1 s)
 * with to_ratio(p, r) = (r << 20) / p (BW_SHIFT = 20), the fair server counted in total_bw (>= 6.12).
 */
#include "optimizer/checker/check_impl.h"

#include <stdlib.h>

static int64_t to_ratio(int64_t period, int64_t runtime)
{
	if (period <= 0)
		return INT64_MAX / 4;
	return (int64_t)(((__int128)runtime << CK_BW_SHIFT) / period);
}

/* b is a descendant of a in the precedence graph (own depth-first search: shares no optimizer code). */
static bool ck_reaches(const pd_dagset *ds, size_t a, size_t b, size_t n)
{
	bool *seen = calloc(n ? n : 1, sizeof(*seen));
	size_t *stack = calloc(n ? n : 1, sizeof(*stack)), top = 0;
	bool found = false;
	if (seen && stack) {
		stack[top++] = a;
		seen[a] = true;
	}
	while (top && !found) {
		const struct pd_task *t = pd_dags_task(ds, stack[--top]);
		for (size_t s = 0; s < t->n_succs && !found; s++) {
			found = t->succs[s] == b;
			if (!seen[t->succs[s]]) {
				seen[t->succs[s]] = true;
				stack[top++] = t->succs[s];
			}
		}
	}
	free(seen);
	free(stack);
	return found;
}

/* Every pair of the core's CPU tasks (global indices in on[0..m)) in one DAG and ordered by precedence. */
static bool ck_one_path(const struct ck *c, const size_t *on, size_t m)
{
	for (size_t x = 0; x < m; x++)
		for (size_t y = x + 1; y < m; y++) {
			if (pd_dags_task(c->dags, on[x])->dag != pd_dags_task(c->dags, on[y])->dag)
				return false;
			if (!ck_reaches(c->dags, on[x], on[y], c->n_tasks) && !ck_reaches(c->dags, on[y], on[x], c->n_tasks))
				return false;
		}
	return true;
}

static void check_one_core(struct ck *c, struct pd_check_core *core, int64_t *num, int64_t *den, size_t *on)
{
	const pd_platform *p = c->plat;
	const struct pd_dl *dl = pd_platform_dl(p);
	size_t n = 0, n_reclaim = 0;
	bool all_implicit = true;
	int64_t total_bw = 0;
	long double dens = 0;
	for (size_t i = 0; i < c->n_tasks; i++) {
		const struct pd_plan_task *pt = pd_plan_task_c(c->plan, i);
		if (pt->place.kind != PD_PLACE_CPU || pt->place.cpu != core->cpu)
			continue;
		on[n] = i;
		num[n] = c->budget_true[i];
		den[n] = pt->deadline_ns > 0 ? pt->deadline_ns : 1;
		n_reclaim += pt->reclaim;
		all_implicit &= pt->deadline_ns == pt->period_ns;
		dens += (long double)num[n] / (long double)den[n];
		n++;
		total_bw += to_ratio(pt->period_ns, pt->runtime_ns > 0 ? pt->runtime_ns : 0);
	}
	int64_t cap_num, cap_den;
	ck_capacity(p, &cap_num, &cap_den);
	core->n_tasks = n;
	core->density = (double)dens;
	core->density_limit = (double)cap_num / (double)cap_den;
	if (!pd_check_sum_le(num, den, n, cap_num, cap_den))
		ck_add(c, PD_CK_DENSITY, core->density, core->density_limit, "density", "cpu:%d", core->cpu);

	if (dl->has_fair_server)
		total_bw += to_ratio(dl->fair_period_ns, dl->fair_runtime_ns);
	int64_t cap_bw = to_ratio(PD_NS_PER_S, ck_umax_ppm(p) * 1000);
	core->admission = (double)total_bw / (double)(1 << CK_BW_SHIFT);
	core->admission_limit = (double)cap_bw / (double)(1 << CK_BW_SHIFT);
	if (n > 0 && total_bw > cap_bw)
		ck_add(c, PD_CK_ADMISSION, core->admission, core->admission_limit, "utilization", "cpu:%d", core->cpu);

	core->reclaimable = total_bw < cap_bw ? (double)(cap_bw - total_bw) / (double)(1 << CK_BW_SHIFT) : 0.0;
	core->n_reclaim = n_reclaim;
	core->reclaim_allowed = all_implicit || ck_one_path(c, on, n);
	if (n_reclaim > 0 && !core->reclaim_allowed)
		ck_add(c, PD_CK_RECLAIM, (double)n_reclaim, 0.0, "tasks",
		       "cpu:%d (%zu tasks, constrained deadlines, not on one path of one DAG)", core->cpu, n);
}

void ck_cores(struct ck *c)
{
	const pd_platform *p = c->plat;
	size_t ncores = pd_platform_core_count(p);
	c->r->cores = calloc(ncores ? ncores : 1, sizeof(*c->r->cores));
	int64_t *num = calloc(c->n_tasks + 1, sizeof(int64_t));
	int64_t *den = calloc(c->n_tasks + 1, sizeof(int64_t));
	size_t *on = calloc(c->n_tasks + 1, sizeof(size_t));
	if (!c->r->cores || !num || !den || !on) {
		c->oom = true;
		goto out;
	}
	for (size_t k = 0; k < pd_platform_island_count(p); k++) {
		const struct pd_island *isl = pd_platform_island(p, k);
		for (size_t j = 0; j < isl->n_cpus && c->r->n_cores < ncores; j++) {
			struct pd_check_core *core = &c->r->cores[c->r->n_cores++];
			core->cpu = isl->cpus[j];
			core->island = k;
			check_one_core(c, core, num, den, on);
		}
	}
out:
	free(num);
	free(den);
	free(on);
}
