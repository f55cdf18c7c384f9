/* SPDX-License-Identifier: MIT */
/*
 * sim_cbs.c - the SCHED_DEADLINE rules for one entity, after kernel/sched/deadline.c.
 *
 * State of an entity (the GRUB diagram above task_non_contending() in the kernel):
 *
 *   ACTIVE contending --(block, 0-lag time in the future)--> ACTIVE non contending --(0-lag timer)--> INACTIVE
 *        ^                  |                                         |                                  |
 *        |                  +--(block, 0-lag time passed)-------------|--------------------------------->|
 *        +------------------(wake up: timer cancelled, or bandwidth added back)--------------------------+
 *
 * "ACTIVE" entities are counted in the core's running_bw. this_bw (all reservations of the core)
 * and extra_bw (U_max - this_bw, the unreserved room) are fixed for a run.
 *
 * Times are int64 ns; bandwidths are x 2^20 like the kernel's BW_SHIFT. The caller has synced the
 * core's accounting to s->now before calling any of these.
 */
#include "simulator/sim_impl.h"

int64_t sim_to_ratio(int64_t period, int64_t runtime)
{
	if (period <= 0)
		return 0;
	return (int64_t)(((__int128)runtime << SIM_BW_SHIFT) / period);
}

void sim_mark_dirty(struct sim *s, struct sim_core *c, struct sim_ent *e)
{
	if (e->task == SIM_NO_TASK)
		return;
	struct sim_task *t = &s->tasks[e->task];
	if (!t->dirty) {
		t->dirty = true;
		c->dirty[c->n_dirty++] = e->task;
	}
}

static void add_running_bw(struct sim_core *c, const struct sim_ent *e)
{
	c->running_bw += e->bw;
}

static void sub_running_bw(struct sim_core *c, const struct sim_ent *e)
{
	c->running_bw -= e->bw;
	if (c->running_bw < 0)
		c->running_bw = 0;
}

/* task_contending(): back in running_bw, or still there when its inactive timer was pending. */
static void contending(struct sim *s, struct sim_core *c, struct sim_ent *e)
{
	if (e->non_contending) {
		e->non_contending = false;
		sim_heap_cancel(&s->heap, e->inact_id);
		return;
	}
	if (!e->contending) {
		e->contending = true;
		add_running_bw(c, e);
	}
}

/* dl_entity_overflow(): runtime / (deadline - t) > dl_runtime / dl_deadline. The kernel compares
 * the cross products with the 10 low bits dropped; we compare them exactly. Note the kernel uses the
 * relative deadline (density), not the period: for implicit deadlines both coincide. */
static bool overflow(const struct sim_ent *e, int64_t t)
{
	return (__int128)(e->deadline - t) * e->dl_runtime < (__int128)e->runtime * e->dl_deadline;
}

static int64_t next_period(const struct sim_ent *e)
{
	return e->deadline - e->dl_deadline + e->dl_period; /* dl_next_period() */
}

void sim_cbs_wakeup(struct sim *s, struct sim_core *c, struct sim_ent *e)
{
	int64_t now = s->now;
	sim_mark_dirty(s, c, e);
	contending(s, c, e);
	e->runnable = true;
	if (e->throttled)
		return; /* its replenishment timer will make it eligible */
	bool constrained = e->dl_deadline < e->dl_period;
	if (constrained && e->deadline < now && now < next_period(e)) {
		/* dl_check_constrained_dl(): woken between its deadline and its next period: the
		 * reservation may not run before the next period starts. */
		if (e->runtime > 0)
			e->runtime = 0;
		e->throttled = true;
		sim_heap_set(&s->heap, e->timer_id, next_period(e));
		return;
	}
	/* update_dl_entity(): the CBS wake-up rule. */
	if (e->deadline < now || overflow(e, now)) {
		if (constrained && e->deadline >= now) {
			/* update_dl_revised_wakeup(): keep the deadline, runtime = density x laxity. */
			e->runtime = (int64_t)(((__int128)e->density * (e->deadline - now)) >> SIM_BW_SHIFT);
		} else {
			e->deadline = now + e->dl_deadline; /* replenish_dl_new_period() */
			e->runtime = e->dl_runtime;
		}
	}
}

void sim_cbs_block(struct sim *s, struct sim_core *c, struct sim_ent *e)
{
	sim_mark_dirty(s, c, e);
	e->runnable = false;
	if (!e->contending || e->non_contending)
		return;
	/* task_non_contending(): the 0-lag time, when the reserved bandwidth would have been used.
	 * running_bw only matters to GRUB: without a reclaiming entity on the core the timer is skipped. */
	int64_t zl = e->deadline - (int64_t)((__int128)e->runtime * e->dl_period / e->dl_runtime);
	if (zl <= s->now || !c->grub) {
		e->contending = false;
		sub_running_bw(c, e);
		return;
	}
	e->non_contending = true;
	sim_heap_set(&s->heap, e->inact_id, zl);
}

void sim_cbs_inactive(struct sim *s, struct sim_core *c, struct sim_ent *e)
{
	(void)s;
	if (!e->non_contending)
		return;
	e->non_contending = false;
	e->contending = false;
	sub_running_bw(c, e);
}

void sim_cbs_replenish(struct sim *s, struct sim_ent *e)
{
	/* replenish_dl_entity(): postpone the deadline by whole periods until the runtime is
	 * positive; a deadline left in the past starts a fresh period. */
	sim_mark_dirty(s, &s->cores[e->core], e);
	while (e->runtime <= 0) {
		e->deadline += e->dl_period;
		e->runtime += e->dl_runtime;
	}
	if (e->deadline < s->now) {
		e->deadline = s->now + e->dl_deadline;
		e->runtime = e->dl_runtime;
	}
	e->throttled = false;
}

bool sim_cbs_throttle(struct sim *s, struct sim_core *c, struct sim_ent *e)
{
	sim_mark_dirty(s, c, e);
	e->throttled = true;
	int64_t t = next_period(e);
	if (t <= s->now) { /* start_dl_timer() fails in the past: replenish at once */
		sim_cbs_replenish(s, e);
		return false;
	}
	sim_heap_set(&s->heap, e->timer_id, t);
	return true;
}

/* grub_reclaim() of mainline (since the 2023 fix "sched/deadline: Fix reclaim inaccuracy with SMP"):
 *     dq = -(max{u, U_max - U_inact - U_extra} / U_max) dt
 * (seed 011 wrote max{u / U_max, 1 - U_inact - U_extra}, which lets a lone task run only
 * u + (1 - U_max) of the CPU; the later fix gives it U_max, as measured on 6.18: 0.949). */
static int64_t grub_u_act(const struct sim_core *c, const struct sim_ent *e)
{
	int64_t u_inact = c->this_bw - c->running_bw;
	if (u_inact < 0)
		u_inact = 0;
	int64_t u_act;
	if (u_inact + c->extra_bw > c->max_bw - e->bw)
		u_act = e->bw;
	else
		u_act = c->max_bw - u_inact - c->extra_bw;
	u_act = (int64_t)(((__int128)u_act * c->bw_ratio) >> SIM_RATIO_SHIFT);
	return u_act > 0 ? u_act : 1;
}

int64_t sim_cbs_charge(const struct sim_core *c, const struct sim_ent *e, int64_t dt)
{
	if (!e->reclaim)
		return dt;
	return (int64_t)(((__int128)dt * grub_u_act(c, e)) >> SIM_BW_SHIFT);
}

int64_t sim_cbs_time_left(const struct sim_core *c, const struct sim_ent *e)
{
	if (e->runtime <= 0)
		return 0;
	if (!e->reclaim)
		return e->runtime;
	int64_t u = grub_u_act(c, e);
	__int128 num = (__int128)e->runtime << SIM_BW_SHIFT;
	__int128 t = (num + u - 1) / u;
	return t > INT64_MAX / 4 ? INT64_MAX / 4 : (int64_t)t;
}
