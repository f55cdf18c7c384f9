/* SPDX-License-Identifier: MIT */
/*
 * Starvation monitor, for kernels without the fair deadline server (< 6.12; seed patch 006 and
 * stalld do the same): every threshold/4 it scans the threads of the system; a SCHED_OTHER thread
 * that is runnable (state R) on one of our CPUs and whose sum_exec_runtime (schedstat) has not moved
 * for longer than the threshold is starving behind RT work. It is then served by a short
 * SCHED_DEADLINE boost (BOOST_RUNTIME every BOOST_PERIOD, for BOOST_HOLD) and put back to
 * SCHED_OTHER. Every intervention, successful or refused (e.g. EBUSY when the CPU's bandwidth is
 * full), is a STARVE record. The monitor itself runs SCHED_FIFO 99 when allowed: below every DL task
 * but above the starving fair tasks.
 */
#include "agents/pd_agent.h"
#include "runlog/pd_runlog.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BOOST_RUNTIME_NS (50 * PD_NS_PER_US)
#define BOOST_PERIOD_NS (1 * PD_NS_PER_MS)
#define BOOST_HOLD_NS (3 * PD_NS_PER_S)
#define MAX_TRACKED 4096

struct tracked {
	int tid;
	int64_t exec_ns;    /* last sum_exec_runtime seen */
	int64_t since_ns;   /* when exec_ns last changed (or the thread was not runnable) */
	int64_t boosted_until; /* 0 = not boosted */
	bool seen;
};

struct pd_starve {
	int cpus[1024];
	size_t n_cpus;
	int64_t threshold_ns, t0_ns;
	struct pd_runlog_ring *ring;
	pthread_t th;
	_Atomic int stop;
	struct tracked *t;
	size_t n_t;
};

static int64_t mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
}

static bool watched(const pd_starve *s, int cpu)
{
	for (size_t i = 0; i < s->n_cpus; i++)
		if (s->cpus[i] == cpu)
			return true;
	return false;
}

/* state, processor and policy from /proc/PID/task/TID/stat (comm may hold spaces and parens) */
static bool read_stat(int pid, int tid, char *state, int *cpu, int *policy)
{
	char p[96], buf[1024];
	snprintf(p, sizeof(p), "/proc/%d/task/%d/stat", pid, tid);
	FILE *f = fopen(p, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *c = strrchr(buf, ')');
	if (!c)
		return false;
	*state = c[2];
	/* after ')': field 3 is state; processor is field 39, policy 41 */
	int field = 3;
	char *tok = c + 2;
	*cpu = *policy = -1;
	while (tok && *tok) {
		if (field == 39)
			*cpu = atoi(tok);
		if (field == 41) {
			*policy = atoi(tok);
			break;
		}
		tok = strchr(tok, ' ');
		if (tok)
			tok++;
		field++;
	}
	return *cpu >= 0 && *policy >= 0;
}

static int64_t read_exec(int pid, int tid)
{
	char p[96];
	snprintf(p, sizeof(p), "/proc/%d/task/%d/schedstat", pid, tid);
	FILE *f = fopen(p, "re");
	long long v = -1;
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static struct tracked *track(pd_starve *s, int tid)
{
	for (size_t i = 0; i < s->n_t; i++)
		if (s->t[i].tid == tid)
			return &s->t[i];
	if (s->n_t == MAX_TRACKED)
		return NULL;
	struct tracked *t = &s->t[s->n_t++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->exec_ns = -1;
	return t;
}

static void boost(pd_starve *s, struct tracked *t, int cpu, int64_t now)
{
	struct pd_agent_sched_attr a = {.size = sizeof(a), .sched_policy = PD_SCHED_DEADLINE,
				  .sched_flags = PD_SCHED_FLAG_RESET_ON_FORK, .sched_runtime = BOOST_RUNTIME_NS,
				  .sched_deadline = BOOST_PERIOD_NS, .sched_period = BOOST_PERIOD_NS};
	int rc = pd_agent_sched_setattr(t->tid, &a);
	struct pd_runlog_starve_rec r = {.tid = t->tid, .cpu = cpu, .t_ns = now - s->t0_ns, .waited_ns = now - t->since_ns,
				 .boost_runtime_ns = BOOST_RUNTIME_NS, .boost_period_ns = BOOST_PERIOD_NS, .result = -rc};
	pd_runlog_put(s->ring, PD_RUNLOG_STARVE, &r, sizeof(r));
	t->boosted_until = now + BOOST_HOLD_NS;
	t->since_ns = now;
}

static void scan(pd_starve *s)
{
	int64_t now = mono();
	for (size_t i = 0; i < s->n_t; i++)
		s->t[i].seen = false;
	DIR *proc = opendir("/proc");
	if (!proc)
		return;
	struct dirent *pe;
	while ((pe = readdir(proc))) {
		int pid = atoi(pe->d_name);
		if (pid <= 0 || pid == getpid())
			continue;
		char p[64];
		snprintf(p, sizeof(p), "/proc/%d/task", pid);
		DIR *td = opendir(p);
		if (!td)
			continue;
		struct dirent *te;
		while ((te = readdir(td))) {
			int tid = atoi(te->d_name);
			char st;
			int cpu, pol;
			if (tid <= 0 || !read_stat(pid, tid, &st, &cpu, &pol))
				continue;
			struct tracked *t = track(s, tid);
			if (!t)
				continue;
			t->seen = true;
			int64_t ex = read_exec(pid, tid);
			bool candidate = st == 'R' && (pol == SCHED_OTHER || pol == SCHED_BATCH || pol == SCHED_IDLE) &&
					 watched(s, cpu);
			if (!candidate || ex != t->exec_ns) {
				t->exec_ns = ex;
				t->since_ns = now;
				continue;
			}
			if (!t->boosted_until && now - t->since_ns > s->threshold_ns)
				boost(s, t, cpu, now);
		}
		closedir(td);
	}
	closedir(proc);
	for (size_t i = 0; i < s->n_t; i++) {
		struct tracked *t = &s->t[i];
		if (t->boosted_until && now >= t->boosted_until) {
			pd_agent_sched_set_other(t->tid);
			t->boosted_until = 0;
		}
	}
	/* forget threads that are gone */
	size_t o = 0;
	for (size_t i = 0; i < s->n_t; i++)
		if (s->t[i].seen || s->t[i].boosted_until)
			s->t[o++] = s->t[i];
	s->n_t = o;
}

static void *starve_main(void *arg)
{
	pd_starve *s = arg;
	struct sched_param sp = {.sched_priority = 99};
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp); /* best effort */
	int64_t period = s->threshold_ns / 4;
	while (!atomic_load(&s->stop)) {
		struct timespec ts = {period / PD_NS_PER_S, period % PD_NS_PER_S};
		nanosleep(&ts, NULL);
		scan(s);
	}
	for (size_t i = 0; i < s->n_t; i++)
		if (s->t[i].boosted_until)
			pd_agent_sched_set_other(s->t[i].tid);
	return NULL;
}

pd_starve *pd_agent_starve_start(const int *cpus, size_t n, int64_t threshold_ns, int64_t t0_mono_ns,
			   struct pd_runlog_ring *ring, pd_err *e)
{
	pd_starve *s = calloc(1, sizeof(*s));
	if (!s || n > 1024 || !(s->t = calloc(MAX_TRACKED, sizeof(*s->t)))) {
		if (s)
			free(s->t);
		free(s);
		pd_err_set(e, PD_EXIT_ENV, "out of memory");
		return NULL;
	}
	memcpy(s->cpus, cpus, n * sizeof(int));
	s->n_cpus = n;
	s->threshold_ns = threshold_ns > 4 * PD_NS_PER_MS ? threshold_ns : PD_NS_PER_S;
	s->t0_ns = t0_mono_ns;
	s->ring = ring;
	int rc = pthread_create(&s->th, NULL, starve_main, s);
	if (rc) {
		pd_err_set(e, PD_EXIT_ENV, "cannot start the starvation monitor: %s", strerror(rc));
		free(s->t);
		free(s);
		return NULL;
	}
	return s;
}

void pd_agent_starve_stop(pd_starve *s)
{
	if (!s)
		return;
	atomic_store(&s->stop, 1);
	pthread_join(s->th, NULL);
	free(s->t);
	free(s);
}
