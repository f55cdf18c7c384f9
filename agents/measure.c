/* SPDX-License-Identifier: MIT */
/*
 * powerdag-agent measure - the measurement steps of `powerdag profile` (docs/PROFILE.md), run on the
 * board as root. Each invocation measures one thing and prints one JSON object on stdout; the
 * deployer side pins frequencies (and restores them) between invocations.
 *
 *   measure overhead --cpu N [--jobs N] [--period-us P] [--work-us W]
 *       Two SCHED_DEADLINE threads on CPU N (an exclusive cpuset of their own), a source released
 *       every P and a successor woken by it, each doing W of CPU-time work per job through the same
 *       primitives as the executor (futex release timer, clock stamps, futex wake of the successor).
 *       What the kernel charges a job is the thread's CPU time (sum_exec_runtime, the quantity
 *       update_curr_dl() subtracts from the runtime) from one job's start to the next; the overhead
 *       of a job is that charge minus the CPU time of its work. Prints its quantiles and count.
 *
 *   measure power --rail URI,DEVICE,CHANNEL,SCALE... [--cpus LIST] [--accel NAME --latency-us L]
 *                 [--sampler-cpu N] [--settle-ms S] [--window-ms W] [--hz H]
 *       Phase idle: nothing of ours runs on LIST; the rails are averaged over W after S of settling.
 *       Phase busy: one spinner per CPU of LIST (SCHED_OTHER, pinned) or back-to-back jobs of the
 *       board twin's accelerator NAME; the rails are averaged again, and the spinners' CPU time over
 *       the window gives the busy fraction really obtained (other load on the board may take some),
 *       their iteration count per CPU-ns the builtin:spin speed at the current frequency.
 *
 *   measure spread --cpus LIST [--jobs N] [--job-us U]
 *       How much a builtin:spin job's CPU time exceeds what its calibration promised when every CPU of
 *       LIST is busy (SMT siblings, shared caches, a host that slows the vCPUs): one thread per CPU,
 *       pinned, calibrates exactly as an executor thread does (all at once, as at an agent's start),
 *       then runs N jobs of U us of calibrated work back to back; the ratio of each job's thread CPU
 *       time to U. Prints the ratio's quantiles and count (profile turns the 99.9th percentile into
 *       dl.budget_margin).
 *
 * One file per measurement: measure.c (this: the entry and the shared helpers, measure_impl.h, and
 * overhead), measure_power.c, measure_spread.c.
 *
 * The sampling thread is pinned to --sampler-cpu (the deployer picks a CPU outside LIST) so that
 * reading the rails does not load the island being measured.
 */
#include "agents/measure_impl.h"
#include "agents/foreign_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int64_t measure_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
}

int64_t measure_clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
}

void measure_sleep_until(int64_t abs_ns)
{
	struct timespec ts = {abs_ns / PD_NS_PER_S, abs_ns % PD_NS_PER_S};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int measure_pin_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int measure_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int64_t measure_quantile(const int64_t *v, size_t n, double q)
{
	if (n == 0)
		return -1;
	size_t r = (size_t)ceil(q * (double)n);
	return v[r ? r - 1 : 0];
}

int measure_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "powerdag-agent measure: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return PD_EXIT_USAGE;
}

int measure_alone_on(const int *cpus, size_t n)
{
	pd_err e = {0};
	if (!foreign_refuse("/proc", cpus, n, &e))
		return 0;
	fprintf(stderr, "powerdag-agent measure: %s\n", e.msg);
	return PD_EXIT_ENV;
}

int measure_print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	if (!s)
		return PD_EXIT_ENV;
	printf("%s\n", s);
	free(s);
	return fflush(stdout) == 0 ? PD_EXIT_OK : PD_EXIT_ENV;
}

int measure_parse_ll(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int measure_parse_cpus(const char *s, int *cpus, size_t *n)
{
	*n = 0;
	const char *p = s;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 0 || v > 4095 || *n >= MEASURE_MAX_CPUS)
			return -1;
		cpus[(*n)++] = (int)v;
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		p = end;
	}
	return 0;
}

/* ================================================================ overhead */

struct ov_thread {
	struct ov *o;
	int index;
	_Atomic int tid;
	_Atomic int ready; /* 0 starting, 1 in its cpuset, <0 -errno */
	int64_t *start_cpu, *work_cpu; /* per job: thread CPU at job start, CPU time of the work */
	pthread_t th;
};

struct ov {
	int cpu;
	long long jobs;
	int64_t period_ns, work_ns, t0;
	pd_agent_cpusets *cs;
	_Atomic uint32_t go, kick; /* go: 0 wait, 1 run, 2 abort; kick: source -> successor */
	_Atomic uint64_t done;     /* jobs completed by the source */
	struct ov_thread th[2];
};

static void futex_wait(_Atomic uint32_t *w, uint32_t val, int64_t abs_mono_ns)
{
	if (abs_mono_ns > 0) {
		struct timespec ts = {abs_mono_ns / PD_NS_PER_S, abs_mono_ns % PD_NS_PER_S};
		syscall(SYS_futex, w, FUTEX_WAIT_BITSET_PRIVATE, val, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
	} else {
		syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
	}
}

static void futex_wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* One job's work: W of this thread's CPU time, as builtin:busy burns it. */
static int64_t ov_work(int64_t ns)
{
	int64_t c0 = measure_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	work_busy_ns(ns);
	return measure_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
}

static void *ov_main(void *arg)
{
	struct ov_thread *t = arg;
	struct ov *o = t->o;
	atomic_store(&t->tid, (int)gettid());
	int rc = pd_agent_cpusets_enter(o->cs, o->cpu);
	atomic_store(&t->ready, rc ? rc : 1);
	futex_wake((_Atomic uint32_t *)&o->go);
	while (atomic_load(&o->go) == 0)
		futex_wait(&o->go, 0, 0);
	if (atomic_load(&o->go) != 1)
		return NULL;
	for (long long k = 0; k < o->jobs; k++) {
		if (t->index == 0) { /* source: released at t0 + k T, like await_job() */
			int64_t rel = o->t0 + k * o->period_ns;
			while (measure_mono_ns() < rel) {
				uint32_t g = atomic_load(&o->kick);
				futex_wait(&o->kick, g, rel);
			}
		} else { /* successor: woken by the source's completion */
			for (;;) {
				uint32_t g = atomic_load(&o->kick);
				if (atomic_load(&o->done) > (uint64_t)k)
					break;
				futex_wait(&o->kick, g, 0);
			}
		}
		t->start_cpu[k] = measure_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		(void)measure_mono_ns(); /* the executor's start stamp */
		t->work_cpu[k] = ov_work(o->work_ns);
		(void)measure_mono_ns(); /* end stamp */
		if (t->index == 0) {
			atomic_fetch_add(&o->done, 1);
			atomic_fetch_add(&o->kick, 1);
			futex_wake(&o->kick);
		}
	}
	return NULL;
}

int measure_overhead(int argc, char **argv)
{
	struct ov o = {.cpu = -1, .jobs = 1000, .period_ns = 2 * PD_NS_PER_MS, .work_ns = 100 * PD_NS_PER_US};
	for (int i = 1; i < argc; i += 2) { /* options come in OPTION VALUE pairs */
		long long v;
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!val)
			return measure_fail("overhead: option %s needs a value", a);
		if (!strcmp(a, "--cpu") && !measure_parse_ll(val, 0, 4095, &v))
			o.cpu = (int)v;
		else if (!strcmp(a, "--jobs") && !measure_parse_ll(val, 10, 1000000, &v))
			o.jobs = v;
		else if (!strcmp(a, "--period-us") && !measure_parse_ll(val, 500, 1000000, &v))
			o.period_ns = v * PD_NS_PER_US;
		else if (!strcmp(a, "--work-us") && !measure_parse_ll(val, 1, 100000, &v))
			o.work_ns = v * PD_NS_PER_US;
		else
			return measure_fail("overhead: bad option or value: %s %s", a, val);
	}
	if (o.cpu < 0)
		return measure_fail("overhead: --cpu N is required");
	/* two threads of W each plus their charge must fit the period and the admission cap */
	if (2 * o.work_ns * 3 > o.period_ns)
		return measure_fail("overhead: --work-us too large for --period-us (2 x 3 x work <= period)");
	int alone = measure_alone_on(&o.cpu, 1);
	if (alone)
		return alone;
	pd_err e = {0};
	o.cs = pd_agent_cpusets_prepare(NULL, NULL, &o.cpu, 1, &e);
	if (!o.cs) {
		fprintf(stderr, "powerdag-agent measure: %s\n", e.msg);
		return e.code ? e.code : PD_EXIT_ENV;
	}
	int rc = PD_EXIT_OK;
	size_t n = (size_t)o.jobs;
	for (int i = 0; i < 2; i++) {
		o.th[i].o = &o;
		o.th[i].index = i;
		o.th[i].start_cpu = calloc(n, sizeof(int64_t));
		o.th[i].work_cpu = calloc(n, sizeof(int64_t));
	}
	int started = 0;
	for (int i = 0; i < 2 && o.th[i].start_cpu && o.th[i].work_cpu; i++, started++)
		if (pthread_create(&o.th[i].th, NULL, ov_main, &o.th[i]) != 0)
			break;
	for (int i = 0; i < started; i++)
		while (atomic_load(&o.th[i].ready) == 0)
			usleep(1000);
	const char *why = NULL;
	int err = 0;
	if (started < 2) {
		why = "cannot create the measuring threads";
	} else {
		for (int i = 0; i < 2 && !why; i++)
			if (atomic_load(&o.th[i].ready) < 0)
				why = "cannot enter the CPU's cpuset", err = -atomic_load(&o.th[i].ready);
		/* a generous budget (3 W): the charge is measured, never throttled */
		int64_t runtime = pd_agent_runtime_for_kernel(3 * o.work_ns, o.cpu, false, "/sys");
		for (int i = 0; i < 2 && !why; i++) {
			struct pd_agent_sched_attr a = {.size = sizeof(a), .sched_policy = PD_SCHED_DEADLINE,
						  .sched_flags = PD_SCHED_FLAG_RESET_ON_FORK,
						  .sched_runtime = (uint64_t)runtime,
						  .sched_deadline = (uint64_t)o.period_ns,
						  .sched_period = (uint64_t)o.period_ns};
			int r = pd_agent_sched_setattr(atomic_load(&o.th[i].tid), &a);
			if (r)
				why = "SCHED_DEADLINE refused", err = -r;
		}
	}
	o.t0 = measure_mono_ns() + 20 * PD_NS_PER_MS;
	atomic_store(&o.go, why ? 2 : 1);
	futex_wake(&o.go);
	for (int i = 0; i < started; i++)
		pthread_join(o.th[i].th, NULL);
	pd_agent_cpusets_free(o.cs);
	if (why) {
		fprintf(stderr, "powerdag-agent measure: overhead on cpu%d: %s%s%s\n", o.cpu, why, err ? ": " : "",
			err ? strerror(err) : "");
		rc = PD_EXIT_ENV;
	} else {
		/* job k's charge: CPU time from its start to the start of job k+1, minus its work */
		int64_t *ov = calloc(2 * n, sizeof(int64_t));
		size_t m = 0;
		for (int i = 0; i < 2 && ov; i++)
			for (size_t k = 0; k + 1 < n; k++)
				ov[m++] = o.th[i].start_cpu[k + 1] - o.th[i].start_cpu[k] - o.th[i].work_cpu[k];
		if (!ov) {
			rc = PD_EXIT_ENV;
		} else {
			qsort(ov, m, sizeof(*ov), measure_cmp_i64);
			long double sum = 0;
			for (size_t i = 0; i < m; i++)
				sum += ov[i];
			json_t *j = json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "step", "overhead",
					      "cpu", o.cpu, "samples", (json_int_t)m, "period_ns", (json_int_t)o.period_ns,
					      "work_ns", (json_int_t)o.work_ns, "min_ns", (json_int_t)ov[0], "p50_ns",
					      (json_int_t)measure_quantile(ov, m, 0.5), "p99_ns", (json_int_t)measure_quantile(ov, m, 0.99),
					      "p999_ns", (json_int_t)measure_quantile(ov, m, 0.999), "max_ns", (json_int_t)ov[m - 1],
					      "mean_ns", (json_int_t)(sum / (long double)m), "seconds",
					      (double)(n * (size_t)o.period_ns) / 1e9);
			rc = measure_print_json(j);
		}
		free(ov);
	}
	for (int i = 0; i < 2; i++) {
		free(o.th[i].start_cpu);
		free(o.th[i].work_cpu);
	}
	return rc;
}

/* ================================================================ entry */

int pd_agent_measure_main(int argc, char **argv)
{
	/* libiio writes to sockets a dead iiod has closed */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		return measure_fail("usage: powerdag-agent measure overhead|power|spread [options] (docs/PROFILE.md)");
	if (!strcmp(argv[1], "overhead"))
		return measure_overhead(argc - 1, argv + 1);
	if (!strcmp(argv[1], "power"))
		return measure_power(argc - 1, argv + 1);
	if (!strcmp(argv[1], "spread"))
		return measure_spread(argc - 1, argv + 1);
	return measure_fail("unknown measurement '%s' (overhead, power, spread)", argv[1]);
}
