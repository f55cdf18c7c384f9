/* SPDX-License-Identifier: MIT */
/*
 * Host steal in the report (docs/REPORTS.md "Host steal"): the CPU time the hypervisor took from the
 * vCPUs the plan's tasks run on, and which misses it can explain. Steal is outside the model
 * (docs/MODEL.md): a miss that coincides with it may be a host stall, not a planning error.
 *
 *   host_steal      the sum of the STEAL records on CPUs where the plan places a task (the agent
 *                   writes only those; a record on another CPU is left out);
 *   miss with steal a missed instance of DAG g whose window [release, release + D] overlaps the
 *                   interval (from, t] of a STEAL record on a CPU where one of g's tasks is placed.
 *
 * The records say only that the counter moved within (from, t] (the agent's sampling period, 100 ms),
 * not when within it, so the rule may count a miss whose instance ran next to, not during, the stolen
 * time. The counter's resolution is USER_HZ (10 ms): a steal that does not complete a tick shows in
 * the interval where the counter crosses it, which may be a later one.
 */
#include "reports/run_model_impl.h"

#include <stdlib.h>

static int cmp_steal(const void *a, const void *b)
{
	const struct rpt_steal *x = a, *y = b;
	if (x->cpu != y->cpu)
		return (x->cpu > y->cpu) - (x->cpu < y->cpu);
	return (x->from_ns > y->from_ns) - (x->from_ns < y->from_ns);
}

static bool has_cpu(const int *v, size_t n, int c)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == c)
			return true;
	return false;
}

/* Distinct CPUs of the plan's CPU tasks (dag < 0: every DAG) into out (room for every task). */
static size_t plan_cpus(const pd_plan *p, long dag, int *out)
{
	const pd_dagset *ds = pd_plan_dags(p);
	size_t n = 0;
	for (size_t i = 0; i < pd_dags_task_count(ds); i++) {
		const struct pd_plan_task *pt = pd_plan_task_c(p, i);
		if (pt->place.kind != PD_PLACE_CPU || (dag >= 0 && pd_dags_task(ds, i)->dag != (size_t)dag))
			continue;
		if (!has_cpu(out, n, pt->place.cpu))
			out[n++] = pt->place.cpu;
	}
	return n;
}

/* The plan CPUs' records sorted by (cpu, from); maxto[i] = the largest to_ns of the records of the
 * same CPU up to i. Invariant used by overlaps(): within one CPU, from is ascending. */
struct steal_index {
	struct rpt_steal *v;
	int64_t *maxto;
	size_t n;
};

/* Whether a record of cpu has from < b and to >= a, i.e. (from, to] meets [a, b]. */
static bool overlaps(const struct steal_index *ix, int cpu, int64_t a, int64_t b)
{
	/* first record of cpu, then the first of cpu whose from >= b: binary searches */
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (ix->v[m].cpu < cpu)
			lo = m + 1;
		else
			hi = m;
	}
	size_t first = lo;
	hi = ix->n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (ix->v[m].cpu == cpu && ix->v[m].from_ns < b)
			lo = m + 1;
		else
			hi = m;
	}
	return lo > first && ix->maxto[lo - 1] >= a;
}

static int64_t add_sat(int64_t a, int64_t b)
{
	return b > INT64_MAX - a ? INT64_MAX : a + b;
}

static void count_misses(const struct rpt_run *r, const struct steal_index *ix, int *cpus, struct rpt_stats *s)
{
	const pd_dagset *ds = pd_plan_dags(r->plan);
	for (size_t g = 0; g < pd_dags_count(ds); g++) {
		int64_t d = pd_dags_dag(ds, g)->deadline_ns;
		size_t nc = plan_cpus(r->plan, (long)g, cpus);
		for (size_t i = 0; i < r->n_insts && nc; i++) {
			const struct rpt_inst *in = &r->insts[i];
			if (in->dag != g || !rpt_inst_missed(in, d))
				continue;
			bool hit = false;
			for (size_t c = 0; c < nc && !hit; c++)
				hit = overlaps(ix, cpus[c], in->release_ns, add_sat(in->release_ns, d));
			s->misses_with_steal += hit;
		}
	}
}

int rpt_steal_stats(const struct rpt_run *r, struct rpt_stats *s)
{
	s->steal_sampled = r->steal_period_ns > 0;
	s->host_steal_ns = s->steal_sampled ? 0 : -1;
	s->misses_with_steal = 0;
	if (!s->steal_sampled || !r->plan)
		return 0;
	size_t nt = pd_dags_task_count(pd_plan_dags(r->plan));
	int *cpus = malloc((nt + 1) * sizeof(int));
	struct steal_index ix = {malloc((r->n_steals + 1) * sizeof(*ix.v)), malloc((r->n_steals + 1) * sizeof(int64_t)), 0};
	if (!cpus || !ix.v || !ix.maxto) {
		free(cpus);
		free(ix.v);
		free(ix.maxto);
		return -1;
	}
	size_t nc = plan_cpus(r->plan, -1, cpus);
	for (size_t i = 0; i < r->n_steals; i++)
		if (has_cpu(cpus, nc, r->steals[i].cpu)) {
			ix.v[ix.n++] = r->steals[i];
			s->host_steal_ns = add_sat(s->host_steal_ns, r->steals[i].steal_ns); /* each <= 2^60 (reader) */
		}
	qsort(ix.v, ix.n, sizeof(*ix.v), cmp_steal);
	for (size_t i = 0; i < ix.n; i++)
		ix.maxto[i] = i && ix.v[i - 1].cpu == ix.v[i].cpu && ix.maxto[i - 1] > ix.v[i].to_ns ? ix.maxto[i - 1]
												      : ix.v[i].to_ns;
	count_misses(r, &ix, cpus, s);
	free(cpus);
	free(ix.v);
	free(ix.maxto);
	return 0;
}
