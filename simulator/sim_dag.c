/* SPDX-License-Identifier: MIT */
/*
 * sim_dag.c - DAG instances: periodic release of the sources, precedence (a job is ready when all
 * its predecessors of the same instance finished), and the streaming statistics.
 *
 * Each DAG keeps at most SIM_RING instances in flight in a ring indexed by instance number mod
 * SIM_RING; a release that finds the ring full is dropped and counted as a miss (the system is then
 * hopelessly overloaded). This bounds memory independently of the simulated duration.
 *
 * A CPU task is one thread that runs its jobs in instance order: job k+1 starts only after job k,
 * even when its predecessors finished earlier. Accelerated tasks are served in FIFO order of their
 * requests (sim_accel.c).
 *
 * Late-instance policy (docs/MODEL.md "Late instances", the same rules as agents/exec.c):
 *   queue  - every job runs, however late; a finished job always wakes its ready successors;
 *   resync - (1) a job is skipped (not executed, counted done for precedence) when its thread is
 *            about to start it and its instance is past its end-to-end deadline or already
 *            abandoned; (2) a job that completes after its instance's deadline, or is skipped, does
 *            not wake its successors (they skip it when they next wake); (3) a thread that finishes
 *            a job and finds its next job already ready (it fell behind: it would never sleep and
 *            would carry a stale reservation into that job) skips every job that is ready, then
 *            sleeps; (4) a CPU task whose job k ends after k T + F_i (the plan's latest finish) must
 *            not be woken before A = s_k + (1 + m_k) T - (d - Q) (s_k the job's first dispatch, m_k
 *            the periods its replenishments moved its reservation on, pd_plan_reanchor_until): a job
 *            of it that becomes ready before A abandons
 *            its instance, without waking it. A skipped instance counts as a miss.
 */
#include "simulator/sim_impl.h"

#include <math.h>

/* The work of a job: its WCET, uniform in [bcet, wcet], an overrun of the WCET, or what job seq of
 * the task took in a run (replay). */
static int64_t draw_exec_time(struct sim *s, const struct sim_task *t, uint64_t seq)
{
	switch (s->prm.exec) {
	case PD_SIM_EXEC_WCET:
		return t->wcet_ns;
	case PD_SIM_EXEC_REPLAY:
		if (t->kind == PD_PLACE_CPU) {
			int64_t x = sim_replay_work(s->prm.replay, (size_t)(t - s->tasks), seq);
			if (x >= 0)
				return x;
		}
		return t->wcet_ns; /* accelerated, or a task the run never executed: the plan's value */
	case PD_SIM_EXEC_OVERRUN:
		if (pd_rng_uniform(&s->rng) < s->prm.overrun_prob)
			return (int64_t)ceil((double)t->wcet_ns * s->prm.overrun_factor);
		/* fall through */
	case PD_SIM_EXEC_UNIFORM:
		break;
	}
	if (t->bcet_ns >= t->wcet_ns)
		return t->wcet_ns;
	return pd_rng_range(&s->rng, t->bcet_ns, t->wcet_ns);
}

/* What a job executes: its work (an injected overrun scales the work) plus the per-job overhead the
 * kernel charges on top (CPU tasks; 0 for accelerated ones), which does not vary with the execution
 * model. */
int64_t sim_exec_time(struct sim *s, const struct sim_task *t, uint64_t seq)
{
	int64_t x = draw_exec_time(s, t, seq);
	if (s->inject_task >= 0 && (size_t)s->inject_task == (size_t)(t - s->tasks) && seq == s->prm.inject.seq) {
		double y = ceil((double)x * s->prm.inject.factor); /* factor <= 1000, x <= 1 h: no overflow */
		x = y < 1 ? 1 : (int64_t)y;
	}
	return x + t->overhead_ns;
}

static size_t slot_of(uint64_t seq)
{
	return (size_t)(seq % SIM_RING);
}

bool sim_task_next_job(struct sim *s, struct sim_task *t)
{
	struct sim_dag *d = &s->dags[t->dag];
	uint64_t k = t->next_seq;
	if (t->has_job || k >= d->next_seq)
		return false; /* busy, or instance not released yet */
	size_t at = slot_of(k) * d->n_tasks + t->local;
	if (d->preds_left[at] != 0)
		return false;
	t->has_job = true;
	t->started = false;
	t->job_seq = k;
	t->job_ready = d->ready_at[at];
	t->remaining = sim_exec_time(s, t, k);
	t->job_charged = t->remaining; /* the sim charges exactly what the job executes */
	return true;
}

bool sim_instance_over(const struct sim *s, const struct sim_task *t, uint64_t seq)
{
	const struct sim_dag *d = &s->dags[t->dag];
	size_t sl = slot_of(seq);
	return d->late == PD_LATE_RESYNC && (d->skipped[sl] || s->now >= d->release[sl] + d->deadline);
}

bool sim_task_skip(struct sim *s, struct sim_core *c, struct sim_task *t)
{
	uint64_t seq = t->job_seq;
	sim_mark_dirty(s, c, &t->e);
	t->has_job = false;
	t->next_seq = seq + 1;
	sim_job_done(s, (uint32_t)(t - s->tasks), seq, true);
	if (sim_task_next_job(s, t))
		return true;
	sim_cbs_block(s, c, &t->e); /* nothing ready: the thread sleeps */
	return false;
}

static bool job_is_ready(const struct sim *s, const struct sim_task *t, uint64_t k)
{
	const struct sim_dag *d = &s->dags[t->dag];
	return k < d->next_seq && d->preds_left[slot_of(k) * d->n_tasks + t->local] == 0;
}

/* A sleeping thread whose next jobs became ready without a wake-up (resync) skips them when it next
 * wakes; their instances are abandoned or past their deadline, so that outcome is certain and is
 * booked now, without waking the thread (its reservation is untouched, as on the board). Booking it
 * late would hold the instances in the ring and could stall the DAG's releases. */
static void skip_asleep(struct sim *s, struct sim_task *t)
{
	while (job_is_ready(s, t, t->next_seq) && sim_instance_over(s, t, t->next_seq)) {
		uint64_t k = t->next_seq++;
		sim_job_done(s, (uint32_t)(t - s->tasks), k, true);
	}
}

void sim_task_check_late(struct sim *s, struct sim_task *t, uint64_t seq)
{
	struct sim_dag *d = &s->dags[t->dag];
	int64_t release = d->release[slot_of(seq)];
	if (d->late != PD_LATE_RESYNC || t->finish_ns <= 0 || s->now <= release + t->finish_ns)
		return;
	t->reanchor_until = pd_plan_reanchor_until(t->job_start, t->job_charged, t->job_throttles, t->e.dl_period,
						   t->e.dl_runtime, t->e.dl_deadline);
	/* The DAG part only for a constrained reservation (d < P): an implicit one (what `optimize` writes,
	 * P = d) wakes into a fresh period by the plain CBS rule once its deadline has passed, so a late
	 * start leaves no phase behind and abandoning the next release would only cost a miss. */
	bool started_late = t->job_start > release + t->finish_ns - t->e.dl_runtime;
	bool constrained = t->e.dl_deadline < t->e.dl_period;
	if (started_late && constrained && (int64_t)d->next_seq > d->reanchor_seq) /* next release abandoned */
		d->reanchor_seq = (int64_t)d->next_seq;
	t->st.reanchors++;
}

/* All predecessors of task ti in instance seq are done (or ti is a source): it may run. kick: the
 * last predecessor wakes the thread (false under resync when that predecessor was late or skipped). */
static void job_ready(struct sim *s, uint32_t ti, uint64_t seq, bool kick)
{
	struct sim_task *t = &s->tasks[ti];
	struct sim_dag *d = &s->dags[t->dag];
	d->ready_at[slot_of(seq) * d->n_tasks + t->local] = s->now;
	if (t->kind == PD_PLACE_CPU && kick && !t->has_job && s->now < t->reanchor_until) {
		d->skipped[slot_of(seq)] = true; /* rule 4: it must not be woken yet */
		kick = false;
	}
	if (t->kind != PD_PLACE_CPU) {
		/* an accelerated task's thread checks the instance when the request would be issued */
		if (!kick || sim_instance_over(s, t, seq)) {
			sim_job_done(s, ti, seq, true);
			return;
		}
		sim_accel_submit(s, ti, seq);
		return;
	}
	if (t->has_job)
		return; /* busy with an earlier instance: it picks this one up when done */
	if (!kick) {
		skip_asleep(s, t);
		return;
	}
	struct sim_core *c = &s->cores[t->core];
	sim_core_sync(s, c);
	if (sim_task_next_job(s, t))
		sim_cbs_wakeup(s, c, &t->e);
	sim_core_resched(s, c);
}

static void record_response(struct sim_dag *d, int64_t resp)
{
	d->st.instances++;
	if (resp > d->deadline)
		d->st.misses++;
	if (resp > d->st.max_response_ns)
		d->st.max_response_ns = resp;
	d->sum_response += resp;
	int64_t b = resp / d->bucket_ns;
	d->hist[b < SIM_HIST ? b : SIM_HIST]++;
}

void sim_dag_release(struct sim *s, struct sim_dag *d)
{
	uint64_t k = d->next_seq;
	if (k - d->oldest_seq >= SIM_RING) {
		d->st.dropped++;
		d->st.instances++;
		d->st.misses++;
	} else {
		size_t sl = slot_of(k);
		d->release[sl] = s->now;
		d->skipped[sl] = false;
		d->left[sl] = (uint32_t)d->n_tasks;
		for (size_t j = 0; j < d->n_tasks; j++)
			d->preds_left[sl * d->n_tasks + j] = (uint32_t)s->tasks[d->first_task + j].n_preds;
		d->next_seq = k + 1;
		/* rule 4: an instance the DAG abandoned to re-anchor wakes none of its sources */
		bool abandon = d->late == PD_LATE_RESYNC && (int64_t)k <= d->reanchor_seq;
		d->skipped[sl] = abandon;
		for (size_t j = 0; j < d->n_tasks; j++)
			if (s->tasks[d->first_task + j].n_preds == 0)
				job_ready(s, (uint32_t)(d->first_task + j), k, !abandon);
	}
	d->next_base += d->period;
	int64_t jit = s->prm.release_jitter_ns > 0 ? pd_rng_range(&s->rng, 0, s->prm.release_jitter_ns) : 0;
	sim_heap_set(&s->heap, s->id_rel + (uint32_t)(d - s->dags), d->next_base + jit);
}

void sim_job_done(struct sim *s, uint32_t ti, uint64_t seq, bool skipped)
{
	struct sim_task *t = &s->tasks[ti];
	struct sim_dag *d = &s->dags[t->dag];
	size_t sl = slot_of(seq);
	if (skipped) {
		t->st.skipped++;
		d->skipped[sl] = true;
	} else {
		int64_t resp = s->now - d->ready_at[sl * d->n_tasks + t->local];
		t->st.jobs++;
		if (resp > t->rel_deadline_ns)
			t->st.job_misses++;
		if (resp > t->st.max_response_ns)
			t->st.max_response_ns = resp;
	}
	bool kick = !sim_instance_over(s, t, seq); /* always true under queue */
	for (size_t j = 0; kick && j < t->n_succs; j++) { /* rule 4: one successor must not be woken yet */
		const struct sim_task *su = &s->tasks[t->succs[j]];
		size_t at = sl * d->n_tasks + (t->succs[j] - d->first_task);
		if (d->preds_left[at] == 1 && su->kind == PD_PLACE_CPU && !su->has_job && s->now < su->reanchor_until) {
			d->skipped[sl] = true; /* the instance is abandoned, nobody is woken for it */
			kick = false;
		}
	}
	for (size_t j = 0; j < t->n_succs; j++) {
		size_t su = t->succs[j];
		size_t at = sl * d->n_tasks + (su - d->first_task);
		if (--d->preds_left[at] == 0)
			job_ready(s, (uint32_t)su, seq, kick);
	}
	if (--d->left[sl] > 0)
		return;
	if (d->skipped[sl]) { /* abandoned: a miss with no response time */
		d->st.instances++;
		d->st.misses++;
		d->st.skipped++;
		d->skipped[sl] = false;
	} else {
		record_response(d, s->now - d->release[sl]);
	}
	while (d->oldest_seq < d->next_seq && d->left[slot_of(d->oldest_seq)] == 0)
		d->oldest_seq++;
}

static int64_t p99(const struct sim_dag *d)
{
	uint64_t n = 0;
	for (size_t b = 0; b <= SIM_HIST; b++)
		n += d->hist[b];
	if (n == 0)
		return 0;
	uint64_t rank = (n * 99 + 99) / 100; /* ceil(0.99 n) */
	uint64_t acc = 0;
	for (size_t b = 0; b < SIM_HIST; b++) {
		acc += d->hist[b];
		if (acc >= rank) {
			int64_t edge = (int64_t)(b + 1) * d->bucket_ns;
			return edge < d->st.max_response_ns ? edge : d->st.max_response_ns;
		}
	}
	return d->st.max_response_ns;
}

void sim_dag_finish(struct sim *s)
{
	for (size_t g = 0; g < s->n_dags; g++) {
		struct sim_dag *d = &s->dags[g];
		uint64_t done = d->st.instances - d->st.dropped - d->st.skipped;
		/* unfinished instances whose deadline has passed are misses */
		for (uint64_t k = d->oldest_seq; k < d->next_seq; k++) {
			size_t sl = slot_of(k);
			if (d->left[sl] > 0 && (d->release[sl] + d->deadline < s->now || d->skipped[sl])) {
				d->st.instances++;
				d->st.misses++;
				d->st.skipped += d->skipped[sl];
			}
		}
		d->st.p99_response_ns = p99(d);
		d->st.mean_response_ns = done ? (double)(d->sum_response / (long double)done) : 0.0;
	}
}
