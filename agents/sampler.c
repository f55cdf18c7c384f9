/* SPDX-License-Identifier: MIT */
/*
 * The sampling threads: absolute-time ticks at 1/hz, one POWER record per tick (split in chunks of
 * RAILS_PER_RECORD rails), a GAP record per interval during which a rail could not be read.
 * A sample is stamped with the time its reads began.
 *
 * Why SCHED_FIFO and not a reservation: sampling must never delay a job of the plan, so the threads
 * run below every SCHED_DEADLINE task (and above the fair tasks that could delay ticks on a busy
 * board). The price: a tick waits while its CPU runs jobs. Hence one thread per plan CPU (at most
 * PD_SAMPLER_MAX_THREADS), each pinned to its CPU, all waking at every tick: the first one to run
 * claims the tick (an atomic on the tick number) and reads the rails under the mutex, the others go
 * back to sleep at once. A tick is late only when every one of those CPUs is running jobs, or when
 * the thread that holds the rails was preempted by a job in the middle of a read (the others then
 * skip that tick rather than wait). Ticks fall half a period after the grid of t0 + k ms, where
 * plans put their releases (periods of whole milliseconds): a job released with the tick would
 * preempt its reader at once.
 * When every thread is late by more than a period, the missed ticks are skipped, not caught up in a
 * burst.
 *
 * Invariants: the state below the mutex (cur, gap_*, rec, the ring's producer side) is touched only
 * by the thread that claimed the current tick, with the mutex held, and by sampler_stop after every
 * thread was joined; claimed only grows, and only under the mutex, to the tick whose interval holds
 * the sample's stamp: stamps increase strictly and no two fall in one tick interval.
 */
#include "agents/sampler_impl.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RAILS_PER_RECORD 60

struct smp_thread {
	pd_sampler *s;
	pthread_t th;
	int cpu; /* -1: not pinned (one thread) */
	bool started;
};

struct pd_sampler {
	pd_power *p;
	size_t n;
	int64_t period_ns, t0_ns;
	int64_t phase_ns; /* ticks at t0 + phase + k period: half a period off the releases' grid */
	struct pd_runlog_ring *ring;
	pd_agent_cpusets *cs;
	struct smp_thread th[PD_SAMPLER_MAX_THREADS];
	size_t n_th;
	_Atomic int stop;
	_Atomic int64_t claimed; /* the last tick number taken; -1 before the first */
	_Atomic int64_t cpu_ns;  /* the threads' CPU time, added as each ends */
	pthread_mutex_t mu;
	struct pd_agent_power_sample *cur;
	int64_t *gap_start; /* -1 when the rail is fine */
	int *gap_err;
	unsigned char rec[16 + RAILS_PER_RECORD * 8];
};

static int64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
}

static void close_gap(pd_sampler *s, size_t i, int64_t t)
{
	struct pd_runlog_gap_rec g = {.rail = (uint32_t)i, .err = s->gap_err[i], .start_ns = s->gap_start[i], .end_ns = t};
	pd_runlog_put(s->ring, PD_RUNLOG_GAP, &g, sizeof(g));
	s->gap_start[i] = -1;
}

static void tick(pd_sampler *s, int64_t t)
{
	pd_agent_power_read(s->p, s->cur);
	for (size_t first = 0; first < s->n; first += RAILS_PER_RECORD) {
		size_t n = s->n - first < RAILS_PER_RECORD ? s->n - first : RAILS_PER_RECORD;
		struct pd_runlog_power_rec h = {.t_ns = t, .first_rail = (uint32_t)first, .n = (uint32_t)n};
		memcpy(s->rec, &h, sizeof(h));
		for (size_t k = 0; k < n; k++)
			memcpy(s->rec + sizeof(h) + k * 8, &s->cur[first + k].uw, 8);
		pd_runlog_put(s->ring, PD_RUNLOG_POWER, s->rec, (uint32_t)(sizeof(h) + n * 8));
	}
	for (size_t i = 0; i < s->n; i++) {
		bool bad = s->cur[i].uw == INT64_MIN;
		if (bad && s->gap_start[i] < 0) {
			s->gap_start[i] = t;
			s->gap_err[i] = s->cur[i].err;
		} else if (!bad && s->gap_start[i] >= 0) {
			close_gap(s, i, t);
		}
	}
}

/* The tick whose interval [t0 + phase + k period, t0 + phase + (k + 1) period) holds time t. */
static int64_t tick_at(const pd_sampler *s, int64_t t)
{
	return (t - s->t0_ns - s->phase_ns) / s->period_ns;
}

/* Tick k is this thread's when no thread took it or a later one yet. */
static bool claim(pd_sampler *s, int64_t k)
{
	int64_t c = atomic_load(&s->claimed);
	while (c < k)
		if (atomic_compare_exchange_weak(&s->claimed, &c, k))
			return true;
	return false;
}

static void *sampler_main(void *arg)
{
	struct smp_thread *me = arg;
	pd_sampler *s = me->s;
	if (me->cpu >= 0 && s->cs) /* best effort: unpinned, it still samples */
		pd_agent_cpusets_enter(s->cs, me->cpu);
	else if (me->cpu >= 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(me->cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	struct sched_param sp = {.sched_priority = 10};
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp); /* best effort, as above */
	int64_t next = s->t0_ns + s->phase_ns;
	while (!atomic_load(&s->stop)) {
		struct timespec ts = {next / PD_NS_PER_S, next % PD_NS_PER_S};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		if (atomic_load(&s->stop))
			break;
		int64_t k = tick_at(s, mono()); /* due now: missed ones are skipped */
		/* trylock: a holder preempted by a job (below every reservation, it can be) keeps the rails
		 * until that job ends; waiting for it would only stamp this tick late and then burst */
		if (atomic_load(&s->claimed) < k && pthread_mutex_trylock(&s->mu) == 0) {
			/* The stamp decides which tick this sample is: a thread preempted since it woke may
			 * stamp in the next tick's interval, and that tick must then not be taken twice */
			int64_t at = mono();
			k = tick_at(s, at);
			if (claim(s, k))
				tick(s, at - s->t0_ns);
			pthread_mutex_unlock(&s->mu);
		}
		next = s->t0_ns + s->phase_ns + (k + 1) * s->period_ns;
	}
	struct timespec c;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
	atomic_fetch_add(&s->cpu_ns, (int64_t)c.tv_sec * PD_NS_PER_S + c.tv_nsec);
	return NULL;
}

static void sampler_free(pd_sampler *s)
{
	pthread_mutex_destroy(&s->mu);
	free(s->cur);
	free(s->gap_start);
	free(s->gap_err);
	free(s);
}

pd_sampler *sampler_start(pd_power *p, size_t n_rails, int hz, int64_t t0_ns, struct pd_runlog_ring *ring,
			  pd_agent_cpusets *cs, const int *cpus, size_t n_cpus, pd_err *e)
{
	pd_sampler *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->p = p;
	s->n = n_rails;
	s->period_ns = PD_NS_PER_S / (hz > 0 ? hz : 100);
	s->phase_ns = s->period_ns / 2;
	s->t0_ns = t0_ns;
	s->ring = ring;
	s->cs = cs;
	atomic_store(&s->claimed, -1);
	pthread_mutex_init(&s->mu, NULL);
	s->cur = calloc(n_rails + 1, sizeof(*s->cur));
	s->gap_start = calloc(n_rails + 1, sizeof(int64_t));
	s->gap_err = calloc(n_rails + 1, sizeof(int));
	if (!s->cur || !s->gap_start || !s->gap_err) {
		sampler_free(s);
		return NULL;
	}
	for (size_t i = 0; i < n_rails; i++)
		s->gap_start[i] = -1;
	bool pin = n_cpus > 1; /* one CPU (or none known): one thread, where the process runs */
	s->n_th = pin ? (n_cpus < PD_SAMPLER_MAX_THREADS ? n_cpus : PD_SAMPLER_MAX_THREADS) : 1;
	for (size_t i = 0; i < s->n_th; i++) {
		s->th[i] = (struct smp_thread){.s = s, .cpu = pin ? cpus[i] : -1};
		int rc = pthread_create(&s->th[i].th, NULL, sampler_main, &s->th[i]);
		if (rc) {
			pd_err_set(e, PD_EXIT_ENV, "cannot start the power sampler: %s", strerror(rc));
			sampler_stop(s);
			return NULL;
		}
		s->th[i].started = true;
	}
	return s;
}

int64_t sampler_stop(pd_sampler *s)
{
	if (!s)
		return 0;
	atomic_store(&s->stop, 1);
	for (size_t i = 0; i < s->n_th; i++)
		if (s->th[i].started)
			pthread_join(s->th[i].th, NULL);
	int64_t t = mono() - s->t0_ns; /* every thread joined: the state is ours */
	for (size_t i = 0; i < s->n; i++)
		if (s->gap_start[i] >= 0)
			close_gap(s, i, t);
	int64_t c = atomic_load(&s->cpu_ns);
	sampler_free(s);
	return c;
}
