/* SPDX-License-Identifier: MIT */
/*
 * The sampling thread: absolute-time ticks at 1/hz, one POWER record per tick (split in chunks of
 * RAILS_PER_RECORD rails), a GAP record per interval during which a rail could not be read.
 * A sample is stamped with the time its reads began. When the thread is late by more than a period
 * (every CPU busy with SCHED_DEADLINE jobs, by design above the sampler), the missed ticks are
 * skipped, not caught up in a burst.
 * The thread runs SCHED_FIFO when allowed (see sampler_main).
 */
#include "agents/sampler_impl.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RAILS_PER_RECORD 60

struct pd_sampler {
	pd_power *p;
	size_t n;
	int64_t period_ns, t0_ns;
	struct pd_runlog_ring *ring;
	pthread_t th;
	_Atomic int stop;
	int64_t cpu_ns;
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

static void *sampler_main(void *arg)
{
	pd_sampler *s = arg;
	/* SCHED_FIFO (best effort): above the fair tasks that could delay ticks on a busy board,
	 * below every SCHED_DEADLINE task of the plan, so sampling never disturbs the DAGs */
	struct sched_param sp = {.sched_priority = 10};
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	int64_t next = s->t0_ns;
	while (!atomic_load(&s->stop)) {
		struct timespec ts = {next / PD_NS_PER_S, next % PD_NS_PER_S};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		if (atomic_load(&s->stop))
			break;
		tick(s, mono() - s->t0_ns);
		next += s->period_ns;
		int64_t now = mono();
		if (now > next) /* overrun: skip to the next tick on the grid */
			next += ((now - next) / s->period_ns + 1) * s->period_ns;
	}
	int64_t t = mono() - s->t0_ns;
	for (size_t i = 0; i < s->n; i++)
		if (s->gap_start[i] >= 0)
			close_gap(s, i, t);
	struct timespec c;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
	s->cpu_ns = (int64_t)c.tv_sec * PD_NS_PER_S + c.tv_nsec;
	return NULL;
}

pd_sampler *sampler_start(pd_power *p, size_t n_rails, int hz, int64_t t0_ns, struct pd_runlog_ring *ring, pd_err *e)
{
	pd_sampler *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->p = p;
	s->n = n_rails;
	s->period_ns = PD_NS_PER_S / (hz > 0 ? hz : 100);
	s->t0_ns = t0_ns;
	s->ring = ring;
	s->cur = calloc(n_rails + 1, sizeof(*s->cur));
	s->gap_start = calloc(n_rails + 1, sizeof(int64_t));
	s->gap_err = calloc(n_rails + 1, sizeof(int));
	for (size_t i = 0; i < n_rails; i++)
		s->gap_start[i] = -1;
	int rc = pthread_create(&s->th, NULL, sampler_main, s);
	if (rc) {
		pd_err_set(e, PD_EXIT_ENV, "cannot start the power sampler: %s", strerror(rc));
		free(s->cur);
		free(s->gap_start);
		free(s->gap_err);
		free(s);
		return NULL;
	}
	return s;
}

int64_t sampler_stop(pd_sampler *s)
{
	if (!s)
		return 0;
	atomic_store(&s->stop, 1);
	pthread_join(s->th, NULL);
	int64_t c = s->cpu_ns;
	free(s->cur);
	free(s->gap_start);
	free(s->gap_err);
	free(s);
	return c;
}
