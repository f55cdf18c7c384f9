/* SPDX-License-Identifier: MIT */
/*
 * sim_core.c - one core: accounting of the running entity, EDF dispatch among the reservations,
 * background (SCHED_OTHER) work below them, and the fair deadline server.
 *
 * Invariant: c->last is the time up to which the running entity has been charged; every handler that
 * changes anything on a core calls sim_core_sync() first and sim_core_resched() last, so the running
 * entity, its budget rate (GRUB depends on the other entities) and the core's next event are always
 * consistent with the state.
 *
 * Fair server (docs/SIMULATOR.md):
 *   immediate - a CBS (Rf, Pf, Pf) that is woken when background work arrives and competes in EDF;
 *   deferred  - armed when background work arrives: background running in idle time is charged to
 *               it; only when it reaches its zero-laxity time (deadline - runtime) with work still
 *               pending does it enter EDF (FS_DL) and run its remaining runtime; after its period it
 *               is armed again.
 */
#include "simulator/sim_impl.h"

static bool deferred(const struct sim *s)
{
	return s->fair_mode == PD_SIM_FAIR_DEFERRED;
}

void sim_core_sync(struct sim *s, struct sim_core *c)
{
	int64_t dt = s->now - c->last;
	c->last = s->now;
	if (dt <= 0)
		return;
	switch (c->run) {
	case RUN_TASK: {
		struct sim_task *t = &s->tasks[c->run_task];
		t->remaining -= dt;
		t->e.runtime -= sim_cbs_charge(c, &t->e, dt);
		c->st.busy_ns += dt;
		c->st.dl_busy_ns += dt;
		break;
	}
	case RUN_SERVER:
		c->bg_backlog -= dt;
		c->st.bg_served_ns += dt;
		c->st.bg_server_ns += dt;
		c->fair.runtime -= dt;
		c->st.busy_ns += dt;
		break;
	case RUN_BG:
		c->bg_backlog -= dt;
		c->st.bg_served_ns += dt;
		c->st.busy_ns += dt;
		/* a deferred server is charged for fair work that runs without it */
		if (c->fair_on && deferred(s) && c->fs == FS_ARMED)
			c->fair.runtime -= dt;
		break;
	case RUN_IDLE:
		break;
	}
}

/* Re-examines the tasks whose state changed: ready[] = the eligible tasks of the core. */
static void refresh_ready(struct sim *s, struct sim_core *c)
{
	for (uint32_t j = 0; j < c->n_dirty; j++) {
		struct sim_task *t = &s->tasks[c->dirty[j]];
		t->dirty = false;
		bool in = t->ready_pos >= 0, want = sim_ent_eligible(&t->e);
		if (want && !in) {
			t->ready_pos = (int32_t)c->n_ready;
			c->ready[c->n_ready++] = c->dirty[j];
		} else if (!want && in) {
			uint32_t last = c->ready[--c->n_ready];
			c->ready[t->ready_pos] = last;
			s->tasks[last].ready_pos = t->ready_pos;
			t->ready_pos = -1;
		}
	}
	c->n_dirty = 0;
}

/* EDF among eligible entities of the core (on equal deadlines the lower task index, then tasks
 * before the fair server). */
static enum sim_run_kind pick(struct sim *s, struct sim_core *c, uint32_t *task)
{
	const struct sim_ent *best = NULL;
	enum sim_run_kind k = RUN_IDLE;
	refresh_ready(s, c);
	for (uint32_t j = 0; j < c->n_ready; j++) {
		uint32_t ti = c->ready[j];
		const struct sim_ent *e = &s->tasks[ti].e;
		if (!best || e->deadline < best->deadline || (e->deadline == best->deadline && ti < *task)) {
			best = e;
			k = RUN_TASK;
			*task = ti;
		}
	}
	if (c->fair_on && c->fs == FS_DL && sim_ent_eligible(&c->fair) && (!best || c->fair.deadline < best->deadline))
		k = RUN_SERVER;
	if (k == RUN_IDLE && c->bg_backlog > 0)
		k = RUN_BG;
	return k;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

void sim_core_resched(struct sim *s, struct sim_core *c)
{
	uint32_t task = 0;
	enum sim_run_kind k = pick(s, c, &task);
	/* The thread checks a job when it first runs for it (late-instance policy resync): a job of
	 * an instance past its deadline or abandoned is skipped in no time, then the next one. */
	while (k == RUN_TASK && !s->tasks[task].started) {
		struct sim_task *t = &s->tasks[task];
		if (!sim_instance_over(s, t, t->job_seq)) {
			t->started = true;
			t->job_start = s->now;
			t->job_throttles = 0;
			break;
		}
		sim_task_skip(s, c, t);
		k = pick(s, c, &task);
	}
	uint32_t idx = (uint32_t)(c - s->cores);
	if (k != c->run || (k == RUN_TASK && task != c->run_task)) {
		if (c->run != RUN_IDLE && s->prm.trace_path) {
			int32_t what = c->run == RUN_TASK ? (int32_t)c->run_task : c->run == RUN_SERVER ? -2 : -1;
			uint64_t seq = c->run == RUN_TASK ? s->tasks[c->run_task].job_seq : 0;
			sim_trace_seg(s, (int32_t)idx, what, seq, c->seg_start, s->now);
		}
		c->seg_start = s->now;
		c->run = k;
		c->run_task = task;
	}
	int64_t dt = SIM_NEVER;
	switch (k) {
	case RUN_TASK: {
		const struct sim_task *t = &s->tasks[task];
		dt = min64(t->remaining, sim_cbs_time_left(c, &t->e));
		break;
	}
	case RUN_SERVER:
		dt = min64(c->bg_backlog, sim_cbs_time_left(c, &c->fair));
		break;
	case RUN_BG:
		dt = c->bg_backlog;
		if (c->fair_on && deferred(s) && c->fs == FS_ARMED)
			dt = min64(dt, c->fair.runtime > 0 ? c->fair.runtime : 0);
		break;
	case RUN_IDLE:
		break;
	}
	if (dt == SIM_NEVER)
		sim_heap_cancel(&s->heap, idx);
	else
		sim_heap_set(&s->heap, idx, s->now + (dt > 0 ? dt : 0));
	if (c->fair_on && deferred(s) && c->fs == FS_ARMED) {
		int64_t zl = c->fair.deadline - (c->fair.runtime > 0 ? c->fair.runtime : 0);
		sim_heap_set(&s->heap, c->fair.timer_id, zl > s->now ? zl : s->now);
	}
}

/* ---------------------------------------------------------------- fair server */

static void fair_start(struct sim *s, struct sim_core *c)
{
	struct sim_ent *f = &c->fair;
	if (!deferred(s)) {
		c->fs = FS_DL;
		sim_cbs_wakeup(s, c, f);
		return;
	}
	if (c->fs == FS_STOPPED) {
		/* dl_server_start() with dl_defer: a fresh period, armed at its zero-laxity time */
		f->deadline = s->now + f->dl_deadline;
		f->runtime = f->dl_runtime;
		f->throttled = false;
		c->fs = FS_ARMED;
	}
	f->runnable = true;
	if (f->non_contending) {
		f->non_contending = false;
		sim_heap_cancel(&s->heap, f->inact_id);
	} else if (!f->contending) {
		f->contending = true;
		c->running_bw += f->bw;
	}
}

static void fair_stop(struct sim *s, struct sim_core *c)
{
	struct sim_ent *f = &c->fair;
	if (!f->runnable)
		return;
	sim_cbs_block(s, c, f);
	if (deferred(s)) { /* dl_server_stop(): disarmed, timer cancelled */
		sim_heap_cancel(&s->heap, f->timer_id);
		f->throttled = false;
		c->fs = FS_STOPPED;
	}
}

void sim_fair_timer(struct sim *s, struct sim_core *c)
{
	struct sim_ent *f = &c->fair;
	sim_core_sync(s, c);
	if (deferred(s) && c->fs == FS_ARMED) {
		/* zero-laxity: fair work starved for (period - runtime); run it at DL priority */
		if (f->runnable && f->runtime > 0)
			c->fs = FS_DL;
		else if (f->runtime <= 0)
			sim_cbs_replenish(s, f);
	} else {
		sim_cbs_replenish(s, f); /* end of the throttled period */
		if (deferred(s))
			c->fs = FS_ARMED;
	}
	sim_core_resched(s, c);
}

void sim_bg_arrival(struct sim *s, struct sim_core *c)
{
	sim_core_sync(s, c);
	bool was_empty = c->bg_backlog <= 0;
	c->bg_backlog += c->bg_chunk;
	c->st.bg_demand_ns += c->bg_chunk;
	if (was_empty && c->fair_on)
		fair_start(s, c);
	sim_heap_set(&s->heap, s->id_bg + (uint32_t)(c - s->cores), s->now + s->prm.background_period_ns);
	sim_core_resched(s, c);
}

/* ---------------------------------------------------------------- core events */

static void cpu_job_finished(struct sim *s, struct sim_core *c, struct sim_task *t)
{
	uint32_t ti = (uint32_t)(t - s->tasks);
	uint64_t seq = t->job_seq;
	if (s->prm.trace_path && c->run == RUN_TASK && c->run_task == ti) { /* one slice per job */
		sim_trace_seg(s, (int32_t)(c - s->cores), (int32_t)ti, seq, c->seg_start, s->now);
		c->seg_start = s->now;
	}
	sim_mark_dirty(s, c, &t->e);
	t->has_job = false;
	t->e.runnable = false; /* not eligible while its successors are released */
	t->next_seq = seq + 1;
	sim_task_check_late(s, t, seq); /* rule 4, before its successors are made ready */
	sim_job_done(s, ti, seq, false);
	if (!t->has_job && sim_task_next_job(s, t)) {
		if (s->dags[t->dag].late == PD_LATE_RESYNC) {
			/* behind: never sleeping, it would carry its stale reservation (budget left over,
			 * deadline and period of the late job) into the next job; abandon what is ready */
			while (sim_task_skip(s, c, t))
				;
			return;
		}
		t->e.runnable = true; /* the thread finds its next job ready: it never sleeps */
		sim_mark_dirty(s, c, &t->e);
	} else {
		sim_cbs_block(s, c, &t->e); /* the thread sleeps until its next job is ready */
	}
}

void sim_core_event(struct sim *s, struct sim_core *c)
{
	sim_core_sync(s, c);
	switch (c->run) {
	case RUN_TASK: {
		struct sim_task *t = &s->tasks[c->run_task];
		if (t->remaining <= 0)
			cpu_job_finished(s, c, t);
		if (t->e.runnable && !t->e.throttled && t->e.runtime <= 0 && sim_cbs_throttle(s, c, &t->e)) {
			t->st.throttles++;
			t->job_throttles++;
			c->st.throttles++;
		}
		break;
	}
	case RUN_SERVER:
		if (c->bg_backlog <= 0)
			fair_stop(s, c);
		else if (c->fair.runtime <= 0 && !sim_cbs_throttle(s, c, &c->fair) && deferred(s))
			c->fs = FS_ARMED; /* replenished at once (deadline already due): deferred again */
		break;
	case RUN_BG:
		if (c->fair_on && deferred(s) && c->fs == FS_ARMED && c->fair.runtime <= 0)
			sim_cbs_replenish(s, &c->fair); /* fair work got its share: postpone one period */
		if (c->bg_backlog <= 0 && c->fair_on)
			fair_stop(s, c);
		break;
	case RUN_IDLE:
		break;
	}
	sim_core_resched(s, c);
}

void sim_core_timer(struct sim *s, struct sim_core *c, struct sim_ent *e)
{
	sim_core_sync(s, c);
	sim_cbs_replenish(s, e);
	sim_core_resched(s, c);
}
