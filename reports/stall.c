/* SPDX-License-Identifier: MIT */
/*
 * CPU stalls seen in the jobs' own records (docs/REPORTS.md "CPU stalls"): time a job was ready and
 * waited for its CPU while no other job of the plan ran there.
 *
 * Under partitioned EDF a ready SCHED_DEADLINE job waits only for the plan's other jobs on its CPU
 * (and for other reservations, which the agent refuses at its start and records while it runs:
 * foreign.c). A wait beyond them means the CPU ran none of the plan: the host stopped the vCPU (a
 * guest without paravirtual steal time cannot say so: "host steal" reads 0), an SMI, an interrupt
 * storm. The replay cannot see that time: it takes each job's CPU time but starts the job when the
 * model would. A stall the kernel charged to a running job (its CPU time grows) is the replay's,
 * not counted here: that job's interval covers it, so the others' waits are busy time then.
 *
 * Per executed CPU job: ready = its instance's release for a source, else the latest end among its
 * predecessors' jobs of the same instance (all of them recorded, else the job is left out: a
 * predecessor skipped or lost). Its stall = the parts of [ready, start] that no other executed job's
 * [start, end] on the same CPU covers. A skipped job (late-instance policy resync) counts the same up
 * to when its thread decided to skip it, when its thread was woken for it at ready: a source (its own
 * timer), or a job whose predecessors all executed and ended before the instance's deadline (rule 2
 * wakes no one for a late instance); a CPU stopped for 85 ms showed only as such skips and a 9-ms
 * tail on the next executed job. A job counts when its stall is at least RPT_STALL_MIN_NS: far above
 * the 20-60 us a woken SCHED_DEADLINE thread takes to run, below the smallest stall that cost a miss
 * on the test VM (2-28 ms). The figure of a run is the union of its jobs' stall parts per CPU (jobs
 * waiting through the same stall each see it), the misses the ones whose window meets one.
 */
#include "reports/run_model_impl.h"

#include <stdint.h>
#include <stdlib.h>

/* The other jobs' intervals of one CPU, sorted by start; maxlen bounds how far before a window an
 * interval that still reaches into it can start. */
struct cpu_ivals {
	int cpu;
	size_t *idx; /* job indices, by start */
	size_t n;
	int64_t maxlen;
};

/* qsort_r comparators over indices into the jobs array (the context) */
static int by_start(const void *a, const void *b, void *ctx)
{
	const struct rpt_job *jobs = ctx;
	int64_t x = jobs[*(const size_t *)a].start_ns, y = jobs[*(const size_t *)b].start_ns;
	return (x > y) - (x < y);
}

static int by_task_inst(const void *a, const void *b, void *ctx)
{
	const struct rpt_job *jobs = ctx;
	const struct rpt_job *x = &jobs[*(const size_t *)a], *y = &jobs[*(const size_t *)b];
	if (x->task != y->task)
		return (x->task > y->task) - (x->task < y->task);
	return (x->inst > y->inst) - (x->inst < y->inst);
}

/* The job of (task, inst) through the (task, inst)-sorted index, or NULL. */
static const struct rpt_job *find_job(const struct rpt_job *jobs, const size_t *ti, size_t n, size_t task, uint64_t inst)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		const struct rpt_job *j = &jobs[ti[m]];
		if (j->task < task || (j->task == task && j->inst < inst))
			lo = m + 1;
		else
			hi = m;
	}
	return lo < n && jobs[ti[lo]].task == task && jobs[ti[lo]].inst == inst ? &jobs[ti[lo]] : NULL;
}

/* When job (task, inst) of an instance released at release became ready: the latest end of its
 * predecessors' jobs, or the release for a source; -1 when a predecessor's job is not recorded or
 * ended at or after before (a skipped job's thread is woken only by predecessors in time). */
static int64_t ready_at(const struct rpt_job *jobs, const size_t *ti, size_t n, const pd_dagset *ds, size_t task,
			uint64_t inst, int64_t release, int64_t before)
{
	const struct pd_task *t = pd_dags_task(ds, task);
	int64_t ready = release;
	for (size_t p = 0; p < t->n_preds; p++) {
		const struct rpt_job *pj = find_job(jobs, ti, n, t->preds[p], inst);
		if (!pj || pj->end_ns >= before)
			return -1;
		if (pj->end_ns > ready)
			ready = pj->end_ns;
	}
	return ready;
}

/* The stall intervals found so far (a growable array). */
struct gaps {
	struct rpt_steal *v;
	size_t n, cap;
};

static int gap_add(struct gaps *g, int cpu, int64_t a, int64_t b)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		struct rpt_steal *v = realloc(g->v, cap * sizeof(*v));
		if (!v)
			return -1;
		g->v = v, g->cap = cap;
	}
	g->v[g->n++] = (struct rpt_steal){cpu, a, b, b - a};
	return 0;
}

/* Appends to g the parts of [a, b] that none of c's intervals (job self left out) covers: when the
 * CPU ran no other job of the plan. Returns their total, or -1 on out-of-memory. Intervals come in
 * start order, so one sweep with the end of the covered run so far finds the gaps. */
static int64_t idle_within(const struct rpt_job *jobs, const struct cpu_ivals *c, size_t self, int64_t a, int64_t b,
			   struct gaps *g)
{
	size_t lo = 0, hi = c->n; /* first interval starting at or after a - maxlen */
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (jobs[c->idx[m]].start_ns < a - c->maxlen)
			lo = m + 1;
		else
			hi = m;
	}
	int64_t covered = a, idle = 0; /* [a, covered) is accounted for */
	for (size_t i = lo; i < c->n && jobs[c->idx[i]].start_ns < b && covered < b; i++) {
		const struct rpt_job *o = &jobs[c->idx[i]];
		if (c->idx[i] == self || o->end_ns <= covered)
			continue;
		if (o->start_ns > covered) {
			if (gap_add(g, c->cpu, covered, o->start_ns) < 0)
				return -1;
			idle += o->start_ns - covered;
		}
		covered = o->end_ns < b ? o->end_ns : b;
	}
	if (covered < b) {
		if (gap_add(g, c->cpu, covered, b) < 0)
			return -1;
		idle += b - covered;
	}
	return idle;
}

/* One job's wait [ready, at] on CPU c: its idle gaps kept in g when they reach min_ns together
 * (then 1 is returned and *max_ns raised), dropped otherwise (0); -1 on out-of-memory. */
static int job_stall(const struct rpt_job *jobs, const struct cpu_ivals *c, int cpu, size_t self, int64_t ready,
		     int64_t at, int64_t min_ns, struct gaps *g, int64_t *max_ns)
{
	if (at - ready < min_ns)
		return 0;
	size_t n0 = g->n;
	int64_t idle = c ? idle_within(jobs, c, self, ready, at, g) : (gap_add(g, cpu, ready, at) < 0 ? -1 : at - ready);
	if (idle < 0)
		return -1;
	if (idle < min_ns) {
		g->n = n0;
		return 0;
	}
	if (idle > *max_ns)
		*max_ns = idle;
	return 1;
}

/* Per CPU the executed CPU jobs by start; returns the number of CPUs, or (size_t)-1 on OOM. */
static size_t build_cpus(const struct rpt_job *jobs, size_t n, struct cpu_ivals **out)
{
	struct cpu_ivals *c = calloc(n + 1, sizeof(*c));
	size_t nc = 0;
	if (!c)
		return (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		if (jobs[i].cpu < 0)
			continue;
		size_t k = 0;
		while (k < nc && c[k].cpu != jobs[i].cpu)
			k++;
		if (k == nc) {
			c[nc].cpu = jobs[i].cpu;
			if (!(c[nc++].idx = malloc((n + 1) * sizeof(size_t)))) {
				*out = c;
				return (size_t)-1;
			}
		}
		c[k].idx[c[k].n++] = i;
		if (jobs[i].end_ns - jobs[i].start_ns > c[k].maxlen)
			c[k].maxlen = jobs[i].end_ns - jobs[i].start_ns;
	}
	for (size_t k = 0; k < nc; k++)
		qsort_r(c[k].idx, c[k].n, sizeof(size_t), by_start, (void *)jobs);
	*out = c;
	return nc;
}

/* The CPU's intervals, or NULL when no executed job ran there. */
static const struct cpu_ivals *cpu_of(const struct cpu_ivals *c, size_t nc, int cpu)
{
	for (size_t k = 0; k < nc; k++)
		if (c[k].cpu == cpu)
			return &c[k];
	return NULL;
}

/* Stalled jobs among the executed (then the skipped) ones, their gaps into g; -1 on out-of-memory. */
static long count_stalls(const struct rpt_job *jobs, const size_t *ti, size_t n, const struct rpt_skip *skips,
			 size_t n_skips, const pd_dagset *ds, const struct cpu_ivals *c, size_t nc, int64_t min_ns,
			 struct gaps *g, int64_t *max_ns)
{
	long stalled = 0;
	for (size_t k = 0; k < nc; k++)
		for (size_t i = 0; i < c[k].n; i++) {
			const struct rpt_job *j = &jobs[c[k].idx[i]];
			int64_t ready = j->task < pd_dags_task_count(ds)
						? ready_at(jobs, ti, n, ds, j->task, j->inst, j->release_ns, INT64_MAX)
						: -1;
			int r = ready < 0 ? 0 : job_stall(jobs, &c[k], j->cpu, c[k].idx[i], ready, j->start_ns, min_ns, g, max_ns);
			if (r < 0)
				return -1;
			stalled += r;
		}
	for (size_t i = 0; i < n_skips; i++) {
		const struct rpt_skip *k = &skips[i];
		int64_t ready = -1;
		if (k->cpu >= 0 && k->task < pd_dags_task_count(ds)) /* woken only before the instance's deadline */
			ready = ready_at(jobs, ti, n, ds, k->task, k->inst, k->release_ns,
					 k->release_ns + pd_dags_dag(ds, pd_dags_task(ds, k->task)->dag)->deadline_ns);
		int r = ready < 0 ? 0 : job_stall(jobs, cpu_of(c, nc, k->cpu), k->cpu, SIZE_MAX, ready, k->at_ns, min_ns, g, max_ns);
		if (r < 0)
			return -1;
		stalled += r;
	}
	return stalled;
}

long rpt_stalls(const struct rpt_job *jobs, size_t n, const struct rpt_skip *skips, size_t n_skips, const pd_dagset *ds,
		int64_t min_ns, struct rpt_steal **gaps, size_t *n_gaps, int64_t *max_ns)
{
	size_t *ti = malloc((n + 1) * sizeof(size_t));
	struct cpu_ivals *c = NULL;
	struct gaps g = {0};
	long stalled = -1;
	*max_ns = 0;
	size_t nc = ti ? build_cpus(jobs, n, &c) : (size_t)-1;
	if (nc != (size_t)-1) {
		for (size_t i = 0; i < n; i++)
			ti[i] = i;
		qsort_r(ti, n, sizeof(size_t), by_task_inst, (void *)jobs);
		stalled = count_stalls(jobs, ti, n, skips, n_skips, ds, c, nc, min_ns, &g, max_ns);
	}
	for (size_t k = 0; c && k < n + 1 && c[k].idx; k++)
		free(c[k].idx);
	free(c);
	free(ti);
	if (stalled < 0) {
		free(g.v);
		g.v = NULL, g.n = 0;
	}
	*gaps = g.v;
	*n_gaps = g.n;
	return stalled;
}

static int by_cpu_from(const void *a, const void *b)
{
	const struct rpt_steal *x = a, *y = b;
	if (x->cpu != y->cpu)
		return (x->cpu > y->cpu) - (x->cpu < y->cpu);
	return (x->from_ns > y->from_ns) - (x->from_ns < y->from_ns);
}

/* The measure of the union of the intervals v[n] per CPU, summed over the CPUs (v is sorted here):
 * jobs waiting through the same stall each report it. */
int64_t rpt_union_ns(struct rpt_steal *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), by_cpu_from);
	int64_t sum = 0;
	for (size_t i = 0; i < n;) {
		int64_t a = v[i].from_ns, b = v[i].to_ns;
		size_t j = i + 1;
		for (; j < n && v[j].cpu == v[i].cpu && v[j].from_ns <= b; j++)
			if (v[j].to_ns > b)
				b = v[j].to_ns;
		sum += b - a;
		i = j;
	}
	return sum;
}

int rpt_stall_stats(const struct rpt_run *r, struct rpt_stats *s, struct rpt_steal **v, size_t *n)
{
	s->stall_jobs = 0;
	s->stall_total_ns = s->stall_max_ns = 0;
	s->misses_with_stall = 0;
	*v = NULL;
	*n = 0;
	if (!r->plan || !r->n_jobs)
		return 0;
	long k = rpt_stalls(r->jobs, r->n_jobs, r->skips, r->n_skips, pd_plan_dags(r->plan), RPT_STALL_MIN_NS, v, n,
			    &s->stall_max_ns);
	if (k < 0)
		return -1;
	int64_t summed = 0;
	s->stall_jobs = (size_t)k;
	if (rpt_misses_meeting(r, *v, *n, &s->misses_with_stall, &summed) < 0)
		return -1;
	s->stall_total_ns = rpt_union_ns(*v, *n);
	return 0;
}
