/* SPDX-License-Identifier: MIT */
/*
 * measure_power.c - `powerdag-agent measure power` (docs/PROFILE.md): the rails with nothing of ours
 * running on the CPUs of LIST, then with one steady SCHED_DEADLINE spinner per CPU (or the twin's
 * accelerator busy); the busy fraction obtained and the builtin:spin speed alongside.
 */
#include "agents/measure_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	int rc = s->cs ? pd_agent_cpusets_enter(s->cs, s->cpu) : measure_pin_to(s->cpu);
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
		int64_t t0 = measure_mono_ns();
		ssize_t w = write(fd, msg, (size_t)len); /* blocks for the job's latency */
		int64_t t1 = measure_mono_ns();
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
			return measure_fail("power: option %s needs a value", a);
		if (!strcmp(a, "--rail")) {
			if (o->n_rails >= MEASURE_MAX_RAILS)
				return measure_fail("power: at most %d rails", MEASURE_MAX_RAILS);
			o->rail_text[o->n_rails] = strdup(val);
			if (!o->rail_text[o->n_rails] || parse_rail(o->rail_text[o->n_rails], &o->rails[o->n_rails]))
				return measure_fail("power: --rail '%s': expected URI,DEVICE,CHANNEL,SCALE", val);
			o->n_rails++;
		} else if (!strcmp(a, "--cpus")) {
			if (measure_parse_cpus(val, o->cpus, &o->n_cpus))
				return measure_fail("power: --cpus '%s': expected a comma-separated list of CPU ids", val);
		} else if (!strcmp(a, "--sampler-cpu") && !measure_parse_ll(val, -1, 4095, &v)) {
			o->sampler_cpu = (int)v;
		} else if (!strcmp(a, "--accel")) {
			if (!*val || strchr(val, '/') || val[0] == '.')
				return measure_fail("power: --accel '%s': not an accelerator name", val);
			o->accel = val;
		} else if (!strcmp(a, "--latency-us") && !measure_parse_ll(val, 10, 1000000, &v)) {
			o->latency_ns = v * PD_NS_PER_US;
		} else if (!strcmp(a, "--settle-ms") && !measure_parse_ll(val, 0, 10000, &v)) {
			o->settle_ns = v * PD_NS_PER_MS;
		} else if (!strcmp(a, "--window-ms") && !measure_parse_ll(val, 50, 60000, &v)) {
			o->window_ns = v * PD_NS_PER_MS;
		} else if (!strcmp(a, "--hz") && !measure_parse_ll(val, 1, 1000, &v)) {
			o->hz = (int)v;
		} else {
			return measure_fail("power: bad option or value: %s %s", a, val);
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
	int64_t step = PD_NS_PER_S / o->hz, t = measure_mono_ns(), end = t + o->window_ns;
	for (; t < end; t += step) {
		measure_sleep_until(t);
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

int measure_power(int argc, char **argv)
{
	struct pw_opts o;
	int rc = parse_power_opts(argc, argv, &o);
	if (!rc)
		rc = measure_alone_on(o.cpus, o.n_cpus);
	if (rc)
		goto out;
	if (o.sampler_cpu >= 0 && measure_pin_to(o.sampler_cpu) != 0) {
		rc = measure_fail("power: cannot pin the sampler to cpu%d: %s", o.sampler_cpu, strerror(errno));
		goto out;
	}
	pd_power *pw = pd_agent_power_open(o.rails, o.n_rails, NULL); /* no rails: spin speed only */
	if (!pw) {
		rc = PD_EXIT_ENV;
		goto out;
	}
	/* idle phase */
	measure_sleep_until(measure_mono_ns() + o.settle_ns);
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
		measure_sleep_until(measure_mono_ns() + o.settle_ns);
		int64_t c0[MEASURE_MAX_CPUS], c1[MEASURE_MAX_CPUS];
		uint64_t i0[MEASURE_MAX_CPUS], i1[MEASURE_MAX_CPUS];
		acc_jobs0 = (int64_t)atomic_load(&aj.jobs);
		acc_busy0 = (int64_t)atomic_load(&aj.busy_ns);
		if (o.accel)
			dev_ok = accel_counters(aj.path, &dev_runs0, &dev_busy0) == 0;
		int64_t w0 = measure_mono_ns();
		for (size_t i = 0; i < started; i++)
			c0[i] = measure_clock_ns(sp[i].clk), i0[i] = atomic_load(&sp[i].iters);
		busy = sample_rails(pw, &o);
		int64_t w1 = measure_mono_ns();
		if (dev_ok)
			dev_ok = accel_counters(aj.path, &dev_runs1, &dev_busy1) == 0;
		dev_window = w1 - w0;
		for (size_t i = 0; i < started; i++)
			c1[i] = measure_clock_ns(sp[i].clk), i1[i] = atomic_load(&sp[i].iters);
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
	rc = measure_print_json(j);
out:
	for (size_t r = 0; r < o.n_rails; r++)
		free(o.rail_text[r]);
	return rc;
}
