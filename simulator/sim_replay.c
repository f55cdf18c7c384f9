/* SPDX-License-Identifier: MIT */
/*
 * sim_replay.c - the execution model "replay" (`simulate --exec replay:RUNDIR`, docs/SIMULATOR.md):
 * every CPU job executes what the same job (task, instance k) really took on the board.
 *
 * Why: a run that missed deadlines leaves one question a user must answer before changing anything:
 * was the model wrong, or were its inputs (the WCETs) wrong? Replaying the measured execution times
 * through the one model answers it. If the simulator, fed what each job really consumed, predicts the
 * misses the board saw, the scheduling model is right and the WCETs (or the budget margin) are what
 * to fix (`refit`, `profile`); misses the replay does not predict come from outside the model
 * (a stalled vCPU, release latency, interference the kernel does not charge to the job).
 *
 * What a replayed job executes: its measured CPU time (the run log's cpu_ns, the thread's CPU time
 * over the job's work: what update_curr_dl() charged for it) plus the plan's per-job overhead o_k,
 * exactly the charge the agent itself assumes for the job in late-instance rule 4. A job the board
 * did not execute (abandoned by the late-instance policy, or past the end of the run) executes the
 * median of its task's measured jobs: the replay stays a replay of typical behaviour there, never a
 * WCET that the run did not show. Accelerated tasks keep the plan's latency (their wall time on the
 * board includes the queue, which the simulator models itself).
 *
 * Invariants: the table of a task is sorted by instance number with no duplicates (a run log holds
 * one JOB record per task and instance); every cpu_ns kept is within [0, PD_RUNLOG_MAX_ABS_NS] (the
 * reader guarantees it), so cpu_ns + overhead cannot overflow.
 */
#include "simulator/sim_impl.h"

#include "runlog/pd_runlog.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct replay_job {
	uint64_t seq;
	int64_t cpu_ns;
};

struct replay_task {
	struct replay_job *jobs; /* sorted by seq */
	size_t n;
	int64_t median_ns;       /* -1: no measured job (the execution model's value is used) */
};

struct pd_sim_replay {
	struct replay_task *tasks; /* indexed like the plan's tasks */
	size_t n_tasks;
	int64_t duration_ns;       /* length of the run */
	uint64_t plan_hash;
};

static int cmp_job(const void *a, const void *b)
{
	const struct replay_job *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* RUNDIR or a run log file: a directory means RUNDIR/run.pdlog. */
static pd_runlog *open_log(const char *path, pd_err *e)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return pd_err_set(e, PD_EXIT_USAGE, "replay: cannot read '%s': no such run directory or run log", path),
		       NULL;
	if (!S_ISDIR(st.st_mode))
		return pd_runlog_open(path, e);
	size_t n = strlen(path) + sizeof("/run.pdlog");
	char *p = malloc(n);
	if (!p)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory"), NULL;
	snprintf(p, n, "%s/run.pdlog", path);
	pd_runlog *r = pd_runlog_open(p, e);
	free(p);
	return r;
}

/* Log task index -> plan task index (-1 when the plan has no such task). */
static long plan_index(const pd_dagset *ds, const struct pd_runlog_task_info *ti)
{
	return ti->dag && ti->name ? pd_dags_find_task(ds, ti->dag, ti->name) : -1;
}

/* Collect the measured jobs of every plan task. A job record counts when the job executed on a CPU
 * (not skipped, not accelerated). */
static int collect(struct pd_sim_replay *rp, const pd_runlog *log, const pd_dagset *ds, pd_err *e)
{
	size_t nlt = pd_runlog_task_count(log);
	long *map = calloc(nlt ? nlt : 1, sizeof(*map));
	size_t *cap = calloc(rp->n_tasks ? rp->n_tasks : 1, sizeof(*cap));
	if (!map || !cap)
		goto oom;
	for (size_t i = 0; i < nlt; i++)
		map[i] = plan_index(ds, pd_runlog_task(log, i));
	for (size_t i = 0, n = pd_runlog_job_count(log); i < n; i++) {
		const struct pd_runlog_job_rec *j = pd_runlog_job(log, i);
		long t = map[j->task]; /* j->task < task_count: the reader's guarantee */
		if (t < 0 || (j->flags & PD_RUNLOG_JOB_SKIPPED) || j->cpu < 0 || j->cpu_ns < 0)
			continue;
		struct replay_task *rt = &rp->tasks[t];
		if (rt->n == cap[t]) {
			size_t nc = cap[t] ? 2 * cap[t] : 256;
			struct replay_job *nj = realloc(rt->jobs, nc * sizeof(*nj));
			if (!nj)
				goto oom;
			rt->jobs = nj;
			cap[t] = nc;
		}
		rt->jobs[rt->n++] = (struct replay_job){.seq = j->seq, .cpu_ns = j->cpu_ns};
	}
	free(map);
	free(cap);
	return 0;
oom:
	free(map);
	free(cap);
	return pd_err_set(e, PD_EXIT_ENV, "out of memory");
}

/* Sort, drop duplicate instances (a damaged log; the first record wins), take the median. */
static int finish_task(struct replay_task *rt, pd_err *e)
{
	rt->median_ns = -1;
	if (rt->n == 0)
		return 0;
	qsort(rt->jobs, rt->n, sizeof(*rt->jobs), cmp_job);
	size_t w = 1;
	for (size_t r = 1; r < rt->n; r++)
		if (rt->jobs[r].seq != rt->jobs[w - 1].seq)
			rt->jobs[w++] = rt->jobs[r];
	rt->n = w;
	int64_t *v = malloc(rt->n * sizeof(*v));
	if (!v)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	for (size_t i = 0; i < rt->n; i++)
		v[i] = rt->jobs[i].cpu_ns;
	qsort(v, rt->n, sizeof(*v), cmp_i64);
	rt->median_ns = v[rt->n / 2];
	free(v);
	return 0;
}

/* The run's length: its END record, else the latest job end or instance release seen. */
static int64_t run_length(const pd_runlog *log)
{
	const struct pd_runlog_end_rec *end = pd_runlog_end(log);
	if (end && end->t_ns > 0)
		return end->t_ns;
	int64_t t = 0;
	for (size_t i = 0, n = pd_runlog_job_count(log); i < n; i++)
		if (pd_runlog_job(log, i)->end_ns > t)
			t = pd_runlog_job(log, i)->end_ns;
	return t;
}

pd_sim_replay *pd_sim_replay_load(const char *path, const pd_plan *plan, pd_err *e)
{
	pd_runlog *log = open_log(path, e);
	if (!log)
		return NULL;
	if (pd_runlog_plan_hash(log) != pd_plan_hash(plan)) {
		pd_err_set(e, PD_EXIT_USAGE, "replay: the run '%s' was made from another plan (plan hash %016llx, this plan %016llx)",
			   path, (unsigned long long)pd_runlog_plan_hash(log), (unsigned long long)pd_plan_hash(plan));
		pd_runlog_free(log);
		return NULL;
	}
	const pd_dagset *ds = pd_plan_dags(plan);
	struct pd_sim_replay *rp = calloc(1, sizeof(*rp));
	if (rp) {
		rp->n_tasks = pd_dags_task_count(ds);
		rp->tasks = calloc(rp->n_tasks ? rp->n_tasks : 1, sizeof(*rp->tasks));
	}
	int rc = !rp || !rp->tasks ? pd_err_set(e, PD_EXIT_ENV, "out of memory") : collect(rp, log, ds, e);
	for (size_t t = 0; rc == 0 && t < rp->n_tasks; t++)
		rc = finish_task(&rp->tasks[t], e);
	if (rc == 0) {
		rp->duration_ns = run_length(log);
		rp->plan_hash = pd_runlog_plan_hash(log);
	}
	pd_runlog_free(log);
	if (rc) {
		pd_sim_replay_free(rp);
		return NULL;
	}
	return rp;
}

void pd_sim_replay_free(pd_sim_replay *rp)
{
	if (!rp)
		return;
	for (size_t t = 0; rp->tasks && t < rp->n_tasks; t++)
		free(rp->tasks[t].jobs);
	free(rp->tasks);
	free(rp);
}

int64_t pd_sim_replay_duration(const pd_sim_replay *rp)
{
	return rp->duration_ns;
}

size_t pd_sim_replay_jobs(const pd_sim_replay *rp)
{
	size_t n = 0;
	for (size_t t = 0; t < rp->n_tasks; t++)
		n += rp->tasks[t].n;
	return n;
}

int64_t sim_replay_work(const pd_sim_replay *rp, size_t task, uint64_t seq)
{
	if (task >= rp->n_tasks)
		return -1;
	const struct replay_task *rt = &rp->tasks[task];
	size_t lo = 0, hi = rt->n;
	while (lo < hi) { /* first job with seq >= the one asked for */
		size_t mid = lo + (hi - lo) / 2;
		if (rt->jobs[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < rt->n && rt->jobs[lo].seq == seq)
		return rt->jobs[lo].cpu_ns;
	return rt->median_ns;
}
