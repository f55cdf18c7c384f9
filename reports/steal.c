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
 * The same matching serves other processes' SCHED_DEADLINE threads (FOREIGN records): a miss whose
 * window meets the time such a thread may have been on a CPU of its DAG.
 *
 * The records say only that the counter moved within (from, t] (the agent's sampling period, 100 ms),
 * not when within it, so the rule may count a miss whose instance ran next to, not during, the stolen
 * time. The counter's resolution is USER_HZ (10 ms): a steal that does not complete a tick shows in
 * the interval where the counter crosses it, which may be a later one.
 */
#include "reports/run_model_impl.h"

#include <stdlib.h>
#include <string.h>

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

int64_t rpt_add_sat(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

/* The misses whose window [release, release + D] meets a record of ix on a CPU of their DAG. */
static uint64_t count_misses(const struct rpt_run *r, const struct steal_index *ix, int *cpus)
{
	const pd_dagset *ds = pd_plan_dags(r->plan);
	uint64_t hits = 0;
	for (size_t g = 0; g < pd_dags_count(ds); g++) {
		int64_t d = pd_dags_dag(ds, g)->deadline_ns;
		size_t nc = plan_cpus(r->plan, (long)g, cpus);
		for (size_t i = 0; i < r->n_insts && nc; i++) {
			const struct rpt_inst *in = &r->insts[i];
			if (in->dag != g || !rpt_inst_missed(in, d))
				continue;
			bool hit = false;
			for (size_t c = 0; c < nc && !hit; c++)
				hit = overlaps(ix, cpus[c], in->release_ns, rpt_add_sat(in->release_ns, d));
			hits += hit;
		}
	}
	return hits;
}

/* ix over the records v[n] on the plan's CPUs (cpus[nc]); the sum of their steal_ns into *sum. */
static int index_build(struct steal_index *ix, const struct rpt_steal *v, size_t n, const int *cpus, size_t nc,
		       int64_t *sum)
{
	ix->v = malloc((n + 1) * sizeof(*ix->v));
	ix->maxto = malloc((n + 1) * sizeof(int64_t));
	ix->n = 0;
	if (!ix->v || !ix->maxto)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (has_cpu(cpus, nc, v[i].cpu)) {
			ix->v[ix->n++] = v[i];
			*sum = rpt_add_sat(*sum, v[i].steal_ns); /* each <= 2^60 (reader) */
		}
	qsort(ix->v, ix->n, sizeof(*ix->v), cmp_steal);
	for (size_t i = 0; i < ix->n; i++)
		ix->maxto[i] = i && ix->v[i - 1].cpu == ix->v[i].cpu && ix->maxto[i - 1] > ix->v[i].to_ns ? ix->maxto[i - 1]
													    : ix->v[i].to_ns;
	return 0;
}

int rpt_misses_meeting(const struct rpt_run *r, const struct rpt_steal *v, size_t n, uint64_t *misses, int64_t *sum)
{
	size_t nt = pd_dags_task_count(pd_plan_dags(r->plan));
	int *cpus = malloc((nt + 1) * sizeof(int));
	struct steal_index ix = {0};
	int rc = -1;
	if (cpus && index_build(&ix, v, n, cpus, plan_cpus(r->plan, -1, cpus), sum) == 0) {
		*misses = count_misses(r, &ix, cpus);
		rc = 0;
	}
	free(cpus);
	free(ix.v);
	free(ix.maxto);
	return rc;
}

int rpt_steal_stats(const struct rpt_run *r, struct rpt_stats *s)
{
	s->steal_sampled = r->steal_period_ns > 0;
	s->host_steal_ns = s->steal_sampled ? 0 : -1;
	s->misses_with_steal = 0;
	if (!s->steal_sampled || !r->plan)
		return 0;
	return rpt_misses_meeting(r, r->steals, r->n_steals, &s->misses_with_steal, &s->host_steal_ns);
}

/* A thread seen from from_ns to to_ns may have been there one scan period before and after: the
 * interval a miss is matched with is widened by that much on each side. NULL on out-of-memory. */
static struct rpt_steal *foreign_intervals(const struct rpt_run *r)
{
	struct rpt_steal *v = malloc((r->n_foreigns + 1) * sizeof(*v));
	if (!v)
		return NULL;
	int64_t p = r->foreign_period_ns;
	for (size_t i = 0; i < r->n_foreigns; i++) {
		const struct rpt_foreign *f = &r->foreigns[i];
		v[i] = (struct rpt_steal){f->cpu, f->from_ns - p, rpt_add_sat(f->to_ns, p), 0}; /* |t|, p <= 2^60 */
	}
	return v;
}

int rpt_foreign_stats(const struct rpt_run *r, struct rpt_stats *s)
{
	s->foreign_scanned = r->foreign_period_ns > 0;
	s->misses_with_foreign = 0;
	if (!s->foreign_scanned || !r->plan)
		return 0;
	struct rpt_steal *v = foreign_intervals(r);
	if (!v)
		return -1;
	int64_t unused = 0;
	int rc = rpt_misses_meeting(r, v, r->n_foreigns, &s->misses_with_foreign, &unused);
	free(v);
	return rc;
}

/* Extends each interval of v[n] on a CPU of the plan by the largest deadline of a DAG with a task on
 * that CPU: how long the late-instance policy may take to recover from a cause there. -1 on
 * out-of-memory. */
static int extend_by_recovery(const pd_plan *p, struct rpt_steal *v, size_t n)
{
	const pd_dagset *ds = pd_plan_dags(p);
	size_t nt = pd_dags_task_count(ds);
	int *pc = malloc((nt + 1) * sizeof(int)), *dag_cpus = malloc((nt + 1) * sizeof(int));
	int64_t *d = calloc(nt + 1, sizeof(int64_t));
	int rc = pc && dag_cpus && d ? 0 : -1;
	size_t npc = rc ? 0 : plan_cpus(p, -1, pc);
	for (size_t g = 0; g < pd_dags_count(ds) && npc; g++) {
		size_t k = plan_cpus(p, (long)g, dag_cpus);
		for (size_t c = 0; c < npc; c++)
			if (has_cpu(dag_cpus, k, pc[c]) && pd_dags_dag(ds, g)->deadline_ns > d[c])
				d[c] = pd_dags_dag(ds, g)->deadline_ns;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < npc; c++)
			if (pc[c] == v[i].cpu)
				v[i].to_ns = rpt_add_sat(v[i].to_ns, d[c]); /* |to| <= 2^60 */
	free(pc);
	free(dag_cpus);
	free(d);
	return rc;
}

/* One miss may meet a stall, stolen time and another reservation at once: the count of misses with
 * any cause outside the plan is taken over the kinds of intervals together, not summed. A cause also
 * owns the misses it leaves behind: an instance released up to one deadline after it ends may still
 * be skipped (resync) or late because its predecessors' instance was (docs/MODEL.md rule 3), so each
 * interval is extended by the largest deadline of a DAG on its CPU. */
int rpt_outside_stats(const struct rpt_run *r, struct rpt_stats *s, const struct rpt_steal *own, size_t n_own)
{
	s->misses_outside = 0;
	if (!r->plan)
		return 0;
	size_t ns = s->steal_sampled ? r->n_steals : 0, nf = s->foreign_scanned ? r->n_foreigns : 0;
	struct rpt_steal *v = malloc((n_own + ns + nf + 1) * sizeof(*v));
	struct rpt_steal *f = nf ? foreign_intervals(r) : NULL;
	int rc = -1;
	if (v && (f || !nf)) {
		if (n_own) /* memcpy from NULL is undefined even for 0 bytes */
			memcpy(v, own, n_own * sizeof(*v));
		if (ns)
			memcpy(v + n_own, r->steals, ns * sizeof(*v));
		if (nf)
			memcpy(v + n_own + ns, f, nf * sizeof(*v));
		int64_t unused = 0;
		if (extend_by_recovery(r->plan, v, n_own + ns + nf) == 0)
			rc = rpt_misses_meeting(r, v, n_own + ns + nf, &s->misses_outside, &unused);
	}
	free(v);
	free(f);
	return rc;
}

int rpt_causes_stats(const struct rpt_run *r, struct rpt_stats *s)
{
	struct rpt_steal *st = NULL, *sj = NULL, *all = NULL;
	size_t nst = 0, nsj = 0;
	int rc = -1;
	if (rpt_stall_stats(r, s, &st, &nst) == 0 && rpt_stretch_stats(r, s, &sj, &nsj) == 0 &&
	    (all = malloc((nst + nsj + 1) * sizeof(*all)))) {
		if (nst)
			memcpy(all, st, nst * sizeof(*all));
		if (nsj)
			memcpy(all + nst, sj, nsj * sizeof(*all));
		rc = rpt_outside_stats(r, s, all, nst + nsj);
	}
	free(st);
	free(sj);
	free(all);
	return rc;
}
