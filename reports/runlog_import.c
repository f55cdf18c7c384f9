/* SPDX-License-Identifier: MIT */
/*
 * run.pdlog -> run model, through the run-log reader (runlog/pd_runlog.h, docs/RUNLOG.md).
 *
 * The log names its tasks, DAGs and rails in its header; they are matched to the plan by name (DAG,
 * DAG/task), so a report never trusts index order across two files. A log whose tasks are not the
 * plan's is refused (PD_EXIT_USAGE): its numbers would be attributed to the wrong tasks.
 *
 * Completeness: a log without an END record (agent killed, board lost) or with an END that says the
 * agent stopped on an error is reported as incomplete, and so is a torn tail.
 *
 * Unfinished instances: the agent logs an instance when it finishes and, at the end of a clean run,
 * one record with finish -1 for every released instance that never finished although its deadline
 * passed. A clean log is therefore taken as it is (verdict horizon = END). A truncated log lost that
 * final flush, so the report infers it: an instance k of DAG g with k T + D before the horizon and no
 * record at all is an unfinished miss. The horizon is the last time the executor itself logged (an
 * instance finish or a job end; not the power sampler, whose ring may have been drained further)
 * minus the writer's flush bound (1 s, docs/RUNLOG.md): a finished instance older than that would
 * have reached the file.
 */
#include "runlog/pd_runlog.h"
#include "reports/run_model_impl.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The run-log writer drains its rings to the file at least this often (runlog/pd_runlog.h). */
#define WRITER_FLUSH_BOUND_NS ((int64_t)PD_RUNLOG_MAX_FLUSH_MS * PD_NS_PER_MS)

struct import_maps {
	long *task; /* log task index -> plan global task index (-1 unknown) */
	long *dag;  /* log DAG index -> plan DAG index (-1 unknown) */
};

static int map_names(struct rpt_run *r, const pd_runlog *log, struct import_maps *m, pd_err *e)
{
	const pd_dagset *ds = pd_plan_dags(r->plan);
	size_t nt = pd_runlog_task_count(log), nd = pd_runlog_dag_count(log);
	m->task = malloc((nt + 1) * sizeof(long));
	m->dag = malloc((nd + 1) * sizeof(long));
	if (!m->task || !m->dag)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	for (size_t i = 0; i < nd; i++) {
		const struct pd_runlog_dag_info *d = pd_runlog_dag(log, i);
		m->dag[i] = d->name ? pd_dags_find_dag(ds, d->name) : -1;
		if (m->dag[i] < 0)
			return pd_err_set(e, PD_EXIT_USAGE, "run log DAG '%s' is not in %s: the log is not of this plan",
					  d->name ? d->name : "?", r->plan_path);
	}
	for (size_t i = 0; i < nt; i++) {
		const struct pd_runlog_task_info *t = pd_runlog_task(log, i);
		m->task[i] = t->dag && t->name ? pd_dags_find_task(ds, t->dag, t->name) : -1;
		if (m->task[i] < 0)
			return pd_err_set(e, PD_EXIT_USAGE, "run log task '%s/%s' is not in %s: the log is not of this plan",
					  t->dag ? t->dag : "?", t->name ? t->name : "?", r->plan_path);
	}
	if (nt != pd_dags_task_count(ds))
		rpt_run_note(r, "the run log has %zu tasks, the plan %zu", nt, pd_dags_task_count(ds));
	return 0;
}

/* The header's t0 on the realtime clock, as ISO 8601 UTC, when deploy.json did not say when. */
static const char *started_from_t0(struct rpt_run *r, const pd_runlog *log)
{
	json_t *h = json_loads(pd_runlog_header_json(log), 0, NULL);
	const json_t *t0 = json_object_get(h, "t0_realtime_ns");
	const char *out = NULL;
	if (json_is_integer(t0) && json_integer_value(t0) > 0) {
		time_t sec = (time_t)(json_integer_value(t0) / PD_NS_PER_S);
		struct tm tm;
		char buf[64];
		if (gmtime_r(&sec, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
			out = pd_arena_strdup(r->arena, buf);
	}
	json_decref(h);
	return out;
}

static void import_meta(struct rpt_run *r, const pd_runlog *log)
{
	static const char *const keys[] = {"board", "kernel", "machine", "arch", "agent_version"};
	const char **dst[] = {&r->board, &r->kernel, &r->arch, &r->arch, &r->agent_version};
	for (size_t i = 0; i < 5; i++) {
		const char *v = pd_runlog_meta(log, keys[i]);
		if (!*dst[i] && v) /* deploy.json, read first, knows the board as the user named it */
			*dst[i] = pd_arena_strdup(r->arena, v);
	}
	if (!r->started)
		r->started = started_from_t0(r, log);
	int64_t hz = pd_runlog_sample_hz(log);
	r->sample_period_ns = hz > 0 ? PD_NS_PER_S / hz : 0;
	r->has_log = true;
	r->log_plan_hash = pd_runlog_plan_hash(log);
	if (pd_runlog_plan_hash(log) != pd_plan_hash(r->plan))
		rpt_run_note(r, "the run log's plan hash %016llx differs from plan.yaml's %016llx",
			     (unsigned long long)pd_runlog_plan_hash(log), (unsigned long long)pd_plan_hash(r->plan));
}

static int import_power(struct rpt_run *r, const pd_runlog *log, int64_t *last_t)
{
	size_t nr = pd_runlog_rail_count(log), ns = pd_runlog_power_count(log);
	r->power_sampled = nr > 0;
	struct rpt_rail **rails = calloc(nr + 1, sizeof(*rails));
	if (!rails)
		return -1;
	for (size_t k = 0; k < nr; k++) {
		const struct pd_runlog_rail_info *ri = pd_runlog_rail(log, k);
		if (!(rails[k] = rpt_run_rail(r, ri->name ? ri->name : "?")))
			goto oom;
		if (ri->measures) /* the agent's copy of the sensor list wins: it is what was sampled */
			rails[k]->measures = pd_arena_strdup(r->arena, ri->measures);
	}
	for (size_t i = 0; i < ns; i++) {
		int64_t t = pd_runlog_power_t(log, i);
		for (size_t k = 0; k < nr; k++) {
			int64_t uw = pd_runlog_power_uw(log, i, k);
			if (uw != PD_RUNLOG_NO_VALUE && rpt_rail_add(rails[k], t, uw) < 0)
				goto oom;
		}
		if (t > *last_t)
			*last_t = t;
	}
	for (size_t g = 0; g < pd_runlog_gap_count(log); g++) {
		const struct pd_runlog_gap_rec *lg = pd_runlog_gap(log, g);
		struct rpt_gap gap = {lg->rail < nr ? rails[lg->rail]->name : NULL, lg->start_ns, lg->end_ns, false};
		if (rpt_run_add_gap(r, &gap) < 0)
			goto oom;
	}
	free(rails);
	return 0;
oom:
	free(rails);
	return -1;
}

/* STEAL records as they are: which CPUs count is the statistics' choice (steal.c). */
static int import_steal(struct rpt_run *r, const pd_runlog *log)
{
	r->steal_period_ns = pd_runlog_steal_period_ns(log);
	size_t n = pd_runlog_steal_count(log);
	r->steals = malloc((n + 1) * sizeof(*r->steals));
	if (!r->steals)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct pd_runlog_steal_rec *x = pd_runlog_steal(log, i);
		r->steals[i] = (struct rpt_steal){x->cpu, x->from_ns, x->t_ns, x->steal_ns};
	}
	r->n_steals = n;
	if (n && r->steal_period_ns <= 0)
		rpt_run_note(r, "%zu STEAL records in a log whose header does not say it sampled steal: ignored", n);
	return 0;
}

/* FOREIGN records, one entry per thread: the first from_ns and the last t_ns of its tid (a scan sees
 * a thread with its affinity's first plan CPU; a thread whose affinity changed keeps the first). */
static int import_foreign(struct rpt_run *r, const pd_runlog *log)
{
	r->foreign_period_ns = pd_runlog_foreign_period_ns(log);
	size_t n = pd_runlog_foreign_count(log);
	r->foreigns = malloc((n + 1) * sizeof(*r->foreigns));
	if (!r->foreigns)
		return -1;
	r->n_foreigns = 0;
	for (size_t i = 0; i < n; i++) {
		const struct pd_runlog_foreign_rec *x = pd_runlog_foreign(log, i);
		struct rpt_foreign *f = NULL;
		for (size_t j = 0; j < r->n_foreigns && !f; j++)
			if (r->foreigns[j].tid == x->tid)
				f = &r->foreigns[j];
		if (!f) {
			f = &r->foreigns[r->n_foreigns++];
			*f = (struct rpt_foreign){x->cpu, x->tid, x->from_ns, x->t_ns, x->runtime_ns, x->period_ns, {0}};
			memcpy(f->comm, x->comm, PD_RUNLOG_COMM_LEN);
		}
		if (x->from_ns < f->from_ns)
			f->from_ns = x->from_ns;
		if (x->t_ns > f->to_ns)
			f->to_ns = x->t_ns;
	}
	if (n && r->foreign_period_ns <= 0)
		rpt_run_note(r, "%zu FOREIGN records in a log whose header does not say it scanned: ignored", n);
	return 0;
}

/* BUSY records as they are: which CPUs count is the model's choice (measured_model.c). */
static int import_busy(struct rpt_run *r, const pd_runlog *log)
{
	r->busy_period_ns = pd_runlog_busy_period_ns(log);
	size_t n = pd_runlog_busy_count(log);
	r->busys = malloc((n + 1) * sizeof(*r->busys));
	if (!r->busys)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct pd_runlog_busy_rec *x = pd_runlog_busy(log, i);
		r->busys[i] = (struct rpt_busy){x->cpu, x->from_ns, x->t_ns, x->busy_ns};
	}
	r->n_busys = n;
	size_t nc;
	const int *bc = pd_runlog_busy_cpus(log, &nc);
	if (nc) {
		if (!(r->busy_cpus = malloc(nc * sizeof(int))))
			return -1;
		memcpy(r->busy_cpus, bc, nc * sizeof(int));
		r->n_busy_cpus = nc;
	}
	if (n && r->busy_period_ns <= 0)
		rpt_run_note(r, "%zu BUSY records in a log whose header does not say it sampled busy time: ignored", n);
	return 0;
}

static int import_jobs(struct rpt_run *r, const pd_runlog *log, const struct import_maps *m, int64_t *exec_t)
{
	size_t skipped = 0;
	for (size_t i = 0; i < pd_runlog_job_count(log); i++) {
		const struct pd_runlog_job_rec *j = pd_runlog_job(log, i);
		if (j->task >= pd_runlog_task_count(log))
			continue;
		if (j->flags & PD_RUNLOG_JOB_SKIPPED) { /* never executed: no execution time to report */
			struct rpt_skip k = {(size_t)m->task[j->task], j->seq, j->cpu, j->release_ns, j->start_ns};
			if (rpt_run_add_skip(r, &k) < 0)
				return -1;
			skipped++;
			continue;
		}
		struct rpt_job jb = {
			.task = (size_t)m->task[j->task],
			.inst = j->seq,
			.cpu = j->cpu,
			.release_ns = j->release_ns,
			.start_ns = j->start_ns,
			.end_ns = j->end_ns,
			.exec_ns = j->cpu >= 0 && j->cpu_ns > 0 ? j->cpu_ns : j->end_ns - j->start_ns,
			.demand_ns = j->demand_ns > 0 ? j->demand_ns : 0,
			.overrun = (j->flags & PD_RUNLOG_JOB_OVERRUN) || j->sigxcpu,
			.failed = (j->flags & PD_RUNLOG_JOB_FAILED) != 0,
		};
		if (rpt_run_add_job(r, &jb) < 0)
			return -1;
		if (j->end_ns > *exec_t)
			*exec_t = j->end_ns;
	}
	if (skipped)
		rpt_run_note(r, "%zu jobs were skipped by the late-instance policy (resync); their instances count as misses",
			     skipped);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Instances with k T + D <= horizon and no record at all are added as never finished (misses). */
static int add_unfinished(struct rpt_run *r, size_t g, uint64_t *seqs, size_t n)
{
	const struct pd_dag *dag = pd_dags_dag(pd_plan_dags(r->plan), g);
	if (r->verdict_ns < dag->deadline_ns)
		return 0;
	uint64_t due = (uint64_t)((r->verdict_ns - dag->deadline_ns) / dag->period_ns) + 1; /* k = 0..due-1 */
	/* a horizon far beyond what was logged means a broken clock, not millions of lost instances */
	if (due > (uint64_t)n + 100000) {
		rpt_run_note(r, "%s: the log's end lies %llu periods after its last instance; unfinished instances "
				"are not inferred", dag->name, (unsigned long long)(due - n));
		return 0;
	}
	qsort(seqs, n, sizeof(uint64_t), cmp_u64);
	size_t p = 0;
	for (uint64_t k = 0; k < due; k++) {
		while (p < n && seqs[p] < k)
			p++;
		if (p < n && seqs[p] == k)
			continue;
		struct rpt_inst in = {g, k, (int64_t)k * dag->period_ns, -1};
		if (rpt_run_add_inst(r, &in) < 0)
			return -1;
	}
	return 0;
}

static int import_instances(struct rpt_run *r, const pd_runlog *log, const struct import_maps *m, int64_t *exec_t)
{
	size_t n = pd_runlog_instance_count(log);
	for (size_t i = 0; i < n; i++) {
		const struct pd_runlog_instance_rec *li = pd_runlog_instance(log, i);
		if (li->dag >= pd_runlog_dag_count(log))
			continue;
		struct rpt_inst in = {(size_t)m->dag[li->dag], li->seq, li->release_ns, li->finish_ns};
		if (rpt_run_add_inst(r, &in) < 0)
			return -1;
		if (li->finish_ns > *exec_t)
			*exec_t = li->finish_ns;
	}
	return 0;
}

static int infer_unfinished(struct rpt_run *r)
{
	size_t nd = pd_dags_count(pd_plan_dags(r->plan)), n = r->n_insts;
	uint64_t *seqs = malloc((n + 1) * sizeof(uint64_t));
	if (!seqs)
		return -1;
	for (size_t g = 0; g < nd; g++) {
		size_t c = 0;
		for (size_t i = 0; i < n; i++)
			if (r->insts[i].dag == g)
				seqs[c++] = r->insts[i].seq;
		if (add_unfinished(r, g, seqs, c) < 0) {
			free(seqs);
			return -1;
		}
	}
	free(seqs);
	return 0;
}

static void import_end(struct rpt_run *r, const pd_runlog *log, const char *path, int64_t last_t, int64_t exec_t)
{
	const struct pd_runlog_end_rec *end = pd_runlog_end(log);
	size_t torn = pd_runlog_dropped_bytes(log);
	if (end) {
		r->duration_ns = end->t_ns;
		r->verdict_ns = end->t_ns;
		if (end->reason == 2)
			rpt_run_mark_incomplete(r, "the agent stopped on an error after %.3f s (see agent.stderr)",
						(double)end->t_ns / 1e9);
	} else {
		r->duration_ns = last_t > exec_t ? last_t : exec_t;
		r->verdict_ns = exec_t > WRITER_FLUSH_BOUND_NS ? exec_t - WRITER_FLUSH_BOUND_NS : 0;
		rpt_run_mark_incomplete(r, "%s has no END record: the agent was stopped after %.3f s (killed, or "
					   "the board was lost); the report covers what was logged",
					path, (double)r->duration_ns / 1e9);
	}
	if (torn)
		rpt_run_mark_incomplete(r, "%s ends with %zu damaged or torn bytes after %zu good records", path, torn,
					pd_runlog_records(log));
	uint64_t drops = pd_runlog_ring_drops(log), end_drops = end ? end->dropped_records : 0;
	if (drops || end_drops) /* both come from the board: saturate rather than wrap to a small count */
		rpt_run_note(r, "the agent dropped %llu records (full rings): counts are lower bounds",
			     (unsigned long long)(drops > UINT64_MAX - end_drops ? UINT64_MAX : drops + end_drops));
	if (pd_runlog_unknown_records(log))
		rpt_run_note(r, "%zu records of types this reader does not know were skipped",
			     pd_runlog_unknown_records(log));
	if (pd_runlog_invalid_records(log))
		rpt_run_note(r, "%zu records with an index or a value out of range were skipped (docs/RUNLOG.md)",
			     pd_runlog_invalid_records(log));
}

int rpt_import_runlog(struct rpt_run *r, const char *path, pd_err *e)
{
	pd_runlog *log = pd_runlog_open(path, e);
	if (!log)
		return e ? (e->code ? e->code : PD_EXIT_USAGE) : PD_EXIT_USAGE;
	struct import_maps m = {0};
	int64_t last_t = 0, exec_t = 0;
	int rc = map_names(r, log, &m, e);
	if (rc == 0) {
		import_meta(r, log);
		if (import_power(r, log, &last_t) < 0 || import_jobs(r, log, &m, &exec_t) < 0 ||
		    import_instances(r, log, &m, &exec_t) < 0 || rpt_import_freqs(r, log) < 0 || import_steal(r, log) < 0 ||
		    import_foreign(r, log) < 0 || import_busy(r, log) < 0)
			rc = pd_err_set(e, PD_EXIT_ENV, "out of memory reading %s", path);
	}
	if (rc == 0) {
		import_end(r, log, path, last_t, exec_t);
		if (!pd_runlog_end(log) && infer_unfinished(r) < 0)
			rc = pd_err_set(e, PD_EXIT_ENV, "out of memory reading %s", path);
	}
	free(m.task);
	free(m.dag);
	pd_runlog_free(log);
	return rc;
}
