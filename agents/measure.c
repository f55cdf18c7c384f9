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
 * The sampling thread is pinned to --sampler-cpu (the deployer picks a CPU outside LIST) so that
 * reading the rails does not load the island being measured.
 */
#include "agents/pd_agent.h"
#include "agents/work_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MEASURE_MAX_CPUS 64
#define MEASURE_MAX_RAILS 32

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
}

static int64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
}

static void sleep_until(int64_t abs_ns)
{
	struct timespec ts = {abs_ns / PD_NS_PER_S, abs_ns % PD_NS_PER_S};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int pin_to(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Quantile q of sorted v[n] (nearest rank, never interpolated down). */
static int64_t quantile(const int64_t *v, size_t n, double q)
{
	if (n == 0)
		return -1;
	size_t r = (size_t)ceil(q * (double)n);
	return v[r ? r - 1 : 0];
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "powerdag-agent measure: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return PD_EXIT_USAGE;
}

static int print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	if (!s)
		return PD_EXIT_ENV;
	printf("%s\n", s);
	free(s);
	return fflush(stdout) == 0 ? PD_EXIT_OK : PD_EXIT_ENV;
}

static int parse_ll(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
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
	int64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	work_busy_ns(ns);
	return clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
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
			while (mono_ns() < rel) {
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
		t->start_cpu[k] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		(void)mono_ns(); /* the executor's start stamp */
		t->work_cpu[k] = ov_work(o->work_ns);
		(void)mono_ns(); /* end stamp */
		if (t->index == 0) {
			atomic_fetch_add(&o->done, 1);
			atomic_fetch_add(&o->kick, 1);
			futex_wake(&o->kick);
		}
	}
	return NULL;
}

static int measure_overhead(int argc, char **argv)
{
	struct ov o = {.cpu = -1, .jobs = 1000, .period_ns = 2 * PD_NS_PER_MS, .work_ns = 100 * PD_NS_PER_US};
	for (int i = 1; i < argc; i += 2) { /* options come in OPTION VALUE pairs */
		long long v;
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (!val)
			return fail("overhead: option %s needs a value", a);
		if (!strcmp(a, "--cpu") && !parse_ll(val, 0, 4095, &v))
			o.cpu = (int)v;
		else if (!strcmp(a, "--jobs") && !parse_ll(val, 10, 1000000, &v))
			o.jobs = v;
		else if (!strcmp(a, "--period-us") && !parse_ll(val, 500, 1000000, &v))
			o.period_ns = v * PD_NS_PER_US;
		else if (!strcmp(a, "--work-us") && !parse_ll(val, 1, 100000, &v))
			o.work_ns = v * PD_NS_PER_US;
		else
			return fail("overhead: bad option or value: %s %s", a, val);
	}
	if (o.cpu < 0)
		return fail("overhead: --cpu N is required");
	/* two threads of W each plus their charge must fit the period and the admission cap */
	if (2 * o.work_ns * 3 > o.period_ns)
		return fail("overhead: --work-us too large for --period-us (2 x 3 x work <= period)");
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
	o.t0 = mono_ns() + 20 * PD_NS_PER_MS;
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
			qsort(ov, m, sizeof(*ov), cmp_i64);
			long double sum = 0;
			for (size_t i = 0; i < m; i++)
				sum += ov[i];
			json_t *j = json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "step", "overhead",
					      "cpu", o.cpu, "samples", (json_int_t)m, "period_ns", (json_int_t)o.period_ns,
					      "work_ns", (json_int_t)o.work_ns, "min_ns", (json_int_t)ov[0], "p50_ns",
					      (json_int_t)quantile(ov, m, 0.5), "p99_ns", (json_int_t)quantile(ov, m, 0.99),
					      "p999_ns", (json_int_t)quantile(ov, m, 0.999), "max_ns", (json_int_t)ov[m - 1],
					      "mean_ns", (json_int_t)(sum / (long double)m), "seconds",
					      (double)(n * (size_t)o.period_ns) / 1e9);
			rc = print_json(j);
		}
		free(ov);
	}
	for (int i = 0; i < 2; i++) {
		free(o.th[i].start_cpu);
		free(o.th[i].work_cpu);
	}
	return rc;
}

/* ================================================================ power and spin speed */

struct spinner {
	int cpu;
	pthread_t th;
	clockid_t clk;
	pd_agent_cpusets *cs;
	_Atomic int tid;
	_Atomic uint64_t iters;
	_Atomic int state; /* 0 starting, 1 spinning, <0 -errno */
	_Atomic int *stop;
};

/* The spinners' reservation: a steady 85 % of each 10 ms (admitted under the default 95 % cap
 * minus a 5 % fair server). A SCHED_OTHER spinner would get whatever the rest of the board leaves
 * it, varying within the rails' averaging time, which the busy fraction then cannot follow. */
#define SPIN_RUNTIME_NS (8500 * PD_NS_PER_US)
#define SPIN_PERIOD_NS (10 * PD_NS_PER_MS)

static void *spin_main(void *arg)
{
	struct spinner *s = arg;
	atomic_store(&s->tid, (int)gettid());
	int rc = s->cs ? pd_agent_cpusets_enter(s->cs, s->cpu) : pin_to(s->cpu);
	if (rc == 0 && pthread_getcpuclockid(pthread_self(), &s->clk) != 0)
		rc = -EINVAL;
	atomic_store(&s->state, rc ? rc : 1);
	uint64_t x = 1;
	while (rc == 0 && !atomic_load_explicit(s->stop, memory_order_relaxed)) {
		x = work_spin(4096, x);
		atomic_fetch_add_explicit(&s->iters, 4096, memory_order_relaxed);
	}
	return NULL;
}

struct accel_job {
	char path[300];
	int64_t latency_ns;
	pthread_t th;
	_Atomic int *stop;
	_Atomic uint64_t jobs, busy_ns; /* completed jobs and their summed wall time */
	_Atomic int err;
};

static void *accel_main(void *arg)
{
	struct accel_job *a = arg;
	char msg[64];
	int len = snprintf(msg, sizeof(msg), "latency_ns=%lld", (long long)a->latency_ns);
	while (!atomic_load(a->stop)) {
		int fd = open(a->path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			atomic_store(&a->err, errno);
			return NULL;
		}
		int64_t t0 = mono_ns();
		ssize_t w = write(fd, msg, (size_t)len); /* blocks for the job's latency */
		int64_t t1 = mono_ns();
		close(fd);
		if (w != len) {
			atomic_store(&a->err, w < 0 ? errno : EIO);
			return NULL;
		}
		atomic_fetch_add(&a->busy_ns, (uint64_t)(t1 - t0));
		atomic_fetch_add(&a->jobs, 1);
	}
	return NULL;
}

/* The twin's device counters ("runs=N busy_ns=T" read from the run file): the device's own busy
 * time, like a GPU load counter; the client-side wall time also holds the request's path. */
static int accel_counters(const char *path, long long *runs, long long *busy_ns)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int n = fscanf(f, "runs=%lld busy_ns=%lld", runs, busy_ns);
	fclose(f);
	return n == 2 ? 0 : -1;
}

struct pw_opts {
	struct pd_agent_rail rails[MEASURE_MAX_RAILS];
	char *rail_text[MEASURE_MAX_RAILS];
	size_t n_rails;
	int cpus[MEASURE_MAX_CPUS];
	size_t n_cpus;
	int sampler_cpu;
	const char *accel;
	int64_t latency_ns;
	int64_t settle_ns, window_ns;
	int hz;
};

/* "URI,DEVICE,CHANNEL,SCALE" */
static int parse_rail(char *text, struct pd_agent_rail *r)
{
	char *f[4];
	int n = 0;
	for (char *p = text; n < 4; n++) {
		f[n] = p;
		char *c = strchr(p, ',');
		if (!c) {
			n++;
			break;
		}
		*c = '\0';
		p = c + 1;
	}
	char *end;
	if (n != 4 || !*f[1] || !*f[2])
		return -1;
	double scale = strtod(f[3], &end);
	if (*end || !(scale > 0) || scale > 1e6)
		return -1;
	r->uri = f[0];
	r->device = f[1];
	r->channel = f[2];
	r->rail = f[1];
	r->measures = "";
	r->scale = scale;
	return 0;
}

static int parse_cpus(const char *s, int *cpus, size_t *n)
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

static int parse_power_opts(int argc, char **argv, struct pw_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sampler_cpu = -1;
	o->settle_ns = 300 * PD_NS_PER_MS;
	o->window_ns = 500 * PD_NS_PER_MS;
	o->hz = 100;
	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		long long v;
		if (!val)
			return fail("power: option %s needs a value", a);
		if (!strcmp(a, "--rail")) {
			if (o->n_rails >= MEASURE_MAX_RAILS)
				return fail("power: at most %d rails", MEASURE_MAX_RAILS);
			o->rail_text[o->n_rails] = strdup(val);
			if (!o->rail_text[o->n_rails] || parse_rail(o->rail_text[o->n_rails], &o->rails[o->n_rails]))
				return fail("power: --rail '%s': expected URI,DEVICE,CHANNEL,SCALE", val);
			o->n_rails++;
		} else if (!strcmp(a, "--cpus")) {
			if (parse_cpus(val, o->cpus, &o->n_cpus))
				return fail("power: --cpus '%s': expected a comma-separated list of CPU ids", val);
		} else if (!strcmp(a, "--sampler-cpu") && !parse_ll(val, -1, 4095, &v)) {
			o->sampler_cpu = (int)v;
		} else if (!strcmp(a, "--accel")) {
			if (!*val || strchr(val, '/') || val[0] == '.')
				return fail("power: --accel '%s': not an accelerator name", val);
			o->accel = val;
		} else if (!strcmp(a, "--latency-us") && !parse_ll(val, 10, 1000000, &v)) {
			o->latency_ns = v * PD_NS_PER_US;
		} else if (!strcmp(a, "--settle-ms") && !parse_ll(val, 0, 10000, &v)) {
			o->settle_ns = v * PD_NS_PER_MS;
		} else if (!strcmp(a, "--window-ms") && !parse_ll(val, 50, 60000, &v)) {
			o->window_ns = v * PD_NS_PER_MS;
		} else if (!strcmp(a, "--hz") && !parse_ll(val, 1, 1000, &v)) {
			o->hz = (int)v;
		} else {
			return fail("power: bad option or value: %s %s", a, val);
		}
	}
	if (o->accel && o->latency_ns <= 0)
		o->latency_ns = 2 * PD_NS_PER_MS;
	return 0;
}

/* Averages every rail over window_ns at hz; returns a JSON array of {w, sd, n}. */
static json_t *sample_rails(pd_power *pw, const struct pw_opts *o)
{
	double sum[MEASURE_MAX_RAILS] = {0}, sq[MEASURE_MAX_RAILS] = {0};
	long n[MEASURE_MAX_RAILS] = {0};
	struct pd_agent_power_sample s[MEASURE_MAX_RAILS];
	int64_t step = PD_NS_PER_S / o->hz, t = mono_ns(), end = t + o->window_ns;
	for (; t < end; t += step) {
		sleep_until(t);
		pd_agent_power_read(pw, s);
		for (size_t r = 0; r < o->n_rails; r++)
			if (s[r].uw != INT64_MIN) {
				double w = (double)s[r].uw / 1e6;
				sum[r] += w, sq[r] += w * w, n[r]++;
			}
	}
	json_t *a = json_array();
	for (size_t r = 0; r < o->n_rails; r++) {
		double mean = n[r] ? sum[r] / (double)n[r] : 0;
		double var = n[r] > 1 ? (sq[r] - (double)n[r] * mean * mean) / (double)(n[r] - 1) : 0;
		json_array_append_new(a, json_pack("{s:s, s:f, s:f, s:i, s:s}", "device", o->rails[r].device, "w", mean, "sd",
						   var > 0 ? sqrt(var) : 0.0, "n", (int)n[r], "state",
						   pd_agent_power_rail_state(pw, r)));
	}
	return a;
}

static int measure_power(int argc, char **argv)
{
	struct pw_opts o;
	int rc = parse_power_opts(argc, argv, &o);
	if (rc)
		goto out;
	if (o.sampler_cpu >= 0 && pin_to(o.sampler_cpu) != 0) {
		rc = fail("power: cannot pin the sampler to cpu%d: %s", o.sampler_cpu, strerror(errno));
		goto out;
	}
	pd_power *pw = pd_agent_power_open(o.rails, o.n_rails, NULL); /* no rails: spin speed only */
	if (!pw) {
		rc = PD_EXIT_ENV;
		goto out;
	}
	/* idle phase */
	sleep_until(mono_ns() + o.settle_ns);
	json_t *idle = sample_rails(pw, &o);
	/* busy phase */
	_Atomic int stop = 0;
	struct spinner sp[MEASURE_MAX_CPUS];
	struct accel_job aj;
	memset(sp, 0, sizeof(sp));
	memset(&aj, 0, sizeof(aj));
	size_t started = 0;
	const char *why = NULL;
	pd_err ce = {0};
	pd_agent_cpusets *cs = o.n_cpus ? pd_agent_cpusets_prepare(NULL, NULL, o.cpus, o.n_cpus, &ce) : NULL;
	if (cs && pd_agent_cpusets_is_affinity_only(cs))
		pd_agent_cpusets_free(cs), cs = NULL;
	for (; started < o.n_cpus; started++) {
		sp[started].cpu = o.cpus[started];
		sp[started].cs = cs;
		sp[started].stop = &stop;
		if (pthread_create(&sp[started].th, NULL, spin_main, &sp[started]) != 0) {
			why = "cannot create a spinner";
			break;
		}
	}
	for (size_t i = 0; i < started; i++) {
		while (atomic_load(&sp[i].state) == 0)
			usleep(1000);
		if (atomic_load(&sp[i].state) < 0)
			why = "cannot pin a spinner to its CPU";
	}
	const char *policy = "other";
	if (!why && cs) {
		bool dl = true;
		for (size_t i = 0; i < started && dl; i++) {
			struct pd_agent_sched_attr a = {.size = sizeof(a), .sched_policy = PD_SCHED_DEADLINE,
						  .sched_flags = PD_SCHED_FLAG_RESET_ON_FORK,
						  .sched_runtime = (uint64_t)pd_agent_runtime_for_kernel(SPIN_RUNTIME_NS, sp[i].cpu, false, "/sys"),
						  .sched_deadline = SPIN_PERIOD_NS,
						  .sched_period = SPIN_PERIOD_NS};
			dl = pd_agent_sched_setattr(atomic_load(&sp[i].tid), &a) == 0;
		}
		if (!dl) /* fall back to SCHED_OTHER for all: the busy fraction is measured either way */
			for (size_t i = 0; i < started; i++)
				pd_agent_sched_set_other(atomic_load(&sp[i].tid));
		policy = dl ? "deadline" : "other";
	}
	bool accel_started = false;
	if (!why && o.accel) {
		snprintf(aj.path, sizeof(aj.path), "/sys/kernel/powerdag-twin/accel/%s/run", o.accel);
		aj.latency_ns = o.latency_ns;
		aj.stop = &stop;
		if (pthread_create(&aj.th, NULL, accel_main, &aj) != 0)
			why = "cannot create the accelerator client";
		else
			accel_started = true;
	}
	json_t *busy = NULL, *util = json_array(), *rate = json_array();
	int64_t acc_jobs0 = 0, acc_busy0 = 0, dev_window = 0;
	long long dev_runs0 = 0, dev_busy0 = 0, dev_runs1 = 0, dev_busy1 = 0;
	bool dev_ok = false;
	if (!why) {
		sleep_until(mono_ns() + o.settle_ns);
		int64_t c0[MEASURE_MAX_CPUS], c1[MEASURE_MAX_CPUS];
		uint64_t i0[MEASURE_MAX_CPUS], i1[MEASURE_MAX_CPUS];
		acc_jobs0 = (int64_t)atomic_load(&aj.jobs);
		acc_busy0 = (int64_t)atomic_load(&aj.busy_ns);
		if (o.accel)
			dev_ok = accel_counters(aj.path, &dev_runs0, &dev_busy0) == 0;
		int64_t w0 = mono_ns();
		for (size_t i = 0; i < started; i++)
			c0[i] = clock_ns(sp[i].clk), i0[i] = atomic_load(&sp[i].iters);
		busy = sample_rails(pw, &o);
		int64_t w1 = mono_ns();
		if (dev_ok)
			dev_ok = accel_counters(aj.path, &dev_runs1, &dev_busy1) == 0;
		dev_window = w1 - w0;
		for (size_t i = 0; i < started; i++)
			c1[i] = clock_ns(sp[i].clk), i1[i] = atomic_load(&sp[i].iters);
		for (size_t i = 0; i < started; i++) {
			json_array_append_new(util, json_real((double)(c1[i] - c0[i]) / (double)(w1 - w0)));
			json_array_append_new(rate, json_real(c1[i] > c0[i] ? (double)(i1[i] - i0[i]) / (double)(c1[i] - c0[i]) : 0));
		}
	}
	atomic_store(&stop, 1);
	for (size_t i = 0; i < started; i++)
		pthread_join(sp[i].th, NULL);
	pd_agent_cpusets_free(cs);
	if (accel_started)
		pthread_join(aj.th, NULL); /* ends after its current job */
	pd_agent_power_close(pw);
	if (why || atomic_load(&aj.err)) {
		fprintf(stderr, "powerdag-agent measure: power: %s%s%s\n", why ? why : "accelerator job failed: ",
			why ? "" : strerror(atomic_load(&aj.err)), why ? "" : "");
		json_decref(idle), json_decref(busy), json_decref(util), json_decref(rate);
		rc = PD_EXIT_ENV;
		goto out;
	}
	json_t *j = json_pack("{s:s, s:o, s:o, s:o, s:o, s:f, s:s}", "step", "power", "idle", idle, "busy", busy, "util", util,
			      "spin_iters_per_ns", rate, "window_s", (double)o.window_ns / 1e9, "policy", policy);
	if (o.accel) {
		int64_t jobs = (int64_t)atomic_load(&aj.jobs) - acc_jobs0, bns = (int64_t)atomic_load(&aj.busy_ns) - acc_busy0;
		json_object_set_new(j, "accel_jobs", json_integer(jobs));
		json_object_set_new(j, "accel_latency_ns", json_integer(jobs ? bns / jobs : -1));
		json_object_set_new(j, "accel_requested_ns", json_integer(o.latency_ns));
		json_object_set_new(j, "accel_busy", json_real((double)bns / (double)o.window_ns));
		if (dev_ok && dev_runs1 > dev_runs0 && dev_window > 0) {
			json_object_set_new(j, "device_busy", json_real((double)(dev_busy1 - dev_busy0) / (double)dev_window));
			json_object_set_new(j, "device_latency_ns", json_integer((dev_busy1 - dev_busy0) / (dev_runs1 - dev_runs0)));
		}
	}
	rc = print_json(j);
out:
	for (size_t r = 0; r < o.n_rails; r++)
		free(o.rail_text[r]);
	return rc;
}

/* ================================================================ spread */
struct spreader {
	int cpu, jobs;
	int64_t job_ns;
	int64_t *ratio_ppm; /* jobs entries: cpu time / job_ns, parts per million */
	_Atomic uint32_t *go;
	pthread_t th;
	int rc;
};

static void *spread_main(void *arg)
{
	struct spreader *s = arg;
	s->rc = pin_to(s->cpu);
	if (s->rc)
		return NULL;
	struct pd_xwork w = {.kind = PD_AW_SPIN, .capacity = 1.0, .iters_per_ref_ns = 1.0};
	while (!atomic_load(s->go)) /* every thread calibrates at once, as the executor's do */
		;
	work_calibrate(&w, s->cpu, "/nonexistent"); /* no frequency scaling: the rate as measured */
	uint64_t n = (uint64_t)((double)s->job_ns * w.iters_per_ref_ns), x = 1;
	for (int j = 0; j < s->jobs; j++) {
		int64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		x = work_spin(n, x);
		int64_t dt = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		s->ratio_ppm[j] = (int64_t)((double)dt * 1e6 / (double)s->job_ns);
	}
	__asm__ volatile("" : : "r"(x));
	return NULL;
}

static int measure_spread(int argc, char **argv)
{
	int cpus[MEASURE_MAX_CPUS];
	size_t n_cpus = 0;
	long long jobs = 1000, job_us = 500;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			return fail("spread: %s needs a value", argv[i]);
		if (!strcmp(argv[i], "--cpus")) {
			if (parse_cpus(v, cpus, &n_cpus))
				return fail("spread: bad --cpus '%s'", v);
		} else if (!strcmp(argv[i], "--jobs")) {
			if (parse_ll(v, 10, 100000, &jobs))
				return fail("spread: --jobs must be 10..100000");
		} else if (!strcmp(argv[i], "--job-us")) {
			if (parse_ll(v, 50, 100000, &job_us))
				return fail("spread: --job-us must be 50..100000");
		} else {
			return fail("spread: unknown option '%s'", argv[i]);
		}
		i++;
	}
	if (!n_cpus)
		return fail("spread: --cpus is required");
	int64_t *all = calloc(n_cpus * (size_t)jobs, sizeof(*all));
	struct spreader *sp = calloc(n_cpus, sizeof(*sp));
	if (!all || !sp) {
		free(all);
		free(sp);
		return fail("spread: out of memory");
	}
	_Atomic uint32_t go = 0;
	size_t started = 0;
	for (; started < n_cpus; started++) {
		sp[started] = (struct spreader){cpus[started], (int)jobs, job_us * PD_NS_PER_US, all + started * (size_t)jobs,
						&go, 0, 0};
		if (pthread_create(&sp[started].th, NULL, spread_main, &sp[started]) != 0)
			break;
	}
	atomic_store(&go, 1);
	int rc = started < n_cpus ? fail("spread: cannot create a thread") : 0;
	for (size_t i = 0; i < started; i++) {
		pthread_join(sp[i].th, NULL);
		if (!rc && sp[i].rc)
			rc = fail("spread: cannot pin a thread to cpu%d", sp[i].cpu);
	}
	if (!rc) {
		size_t n = n_cpus * (size_t)jobs;
		qsort(all, n, sizeof(*all), cmp_i64);
		rc = print_json(json_pack("{s:I, s:I, s:f, s:f, s:f, s:f}", "jobs", (json_int_t)n, "job_us",
					  (json_int_t)job_us, "ratio_p50", (double)quantile(all, n, 0.5) / 1e6, "ratio_p99",
					  (double)quantile(all, n, 0.99) / 1e6, "ratio_p999",
					  (double)quantile(all, n, 0.999) / 1e6, "ratio_max", (double)all[n - 1] / 1e6));
	}
	free(all);
	free(sp);
	return rc;
}

/* ================================================================ entry */

int pd_agent_measure_main(int argc, char **argv)
{
	/* libiio writes to sockets a dead iiod has closed */
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2)
		return fail("usage: powerdag-agent measure overhead|power|spread [options] (docs/PROFILE.md)");
	if (!strcmp(argv[1], "overhead"))
		return measure_overhead(argc - 1, argv + 1);
	if (!strcmp(argv[1], "power"))
		return measure_power(argc - 1, argv + 1);
	if (!strcmp(argv[1], "spread"))
		return measure_spread(argc - 1, argv + 1);
	return fail("unknown measurement '%s' (overhead, power, spread)", argv[1]);
}
