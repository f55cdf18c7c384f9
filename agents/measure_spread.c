/* SPDX-License-Identifier: MIT */
/*
 * measure_spread.c - `powerdag-agent measure spread` (docs/PROFILE.md): how much a builtin:spin job's
 * CPU time exceeds what its calibration promised when every CPU of LIST is busy.
 */
#include "agents/measure_impl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	s->rc = measure_pin_to(s->cpu);
	if (s->rc)
		return NULL;
	struct pd_xwork w = {.kind = PD_AW_SPIN, .capacity = 1.0, .iters_per_ref_ns = 1.0};
	while (!atomic_load(s->go)) /* every thread calibrates at once, as the executor's do */
		;
	work_calibrate(&w, s->cpu, "/nonexistent"); /* no frequency scaling: the rate as measured */
	/* on the board twin the executor's spin follows its last jobs' rate (work.c): so does this one,
	 * so that the margin measured is the one the jobs will need */
	w.track = access("/sys/kernel/powerdag-twin", F_OK) == 0;
	uint64_t x = 1;
	for (int j = 0; j < s->jobs; j++) {
		uint64_t n = (uint64_t)((double)s->job_ns * w.iters_per_ref_ns);
		int64_t c0 = measure_clock_ns(CLOCK_THREAD_CPUTIME_ID);
		x = work_spin(n, x);
		int64_t dt = measure_clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		work_spin_observe(&w, n, dt);
		s->ratio_ppm[j] = (int64_t)((double)dt * 1e6 / (double)s->job_ns);
	}
	__asm__ volatile("" : : "r"(x));
	return NULL;
}

int measure_spread(int argc, char **argv)
{
	int cpus[MEASURE_MAX_CPUS];
	size_t n_cpus = 0;
	long long jobs = 1000, job_us = 500;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			return measure_fail("spread: %s needs a value", argv[i]);
		if (!strcmp(argv[i], "--cpus")) {
			if (measure_parse_cpus(v, cpus, &n_cpus))
				return measure_fail("spread: bad --cpus '%s'", v);
		} else if (!strcmp(argv[i], "--jobs")) {
			if (measure_parse_ll(v, 10, 100000, &jobs))
				return measure_fail("spread: --jobs must be 10..100000");
		} else if (!strcmp(argv[i], "--job-us")) {
			if (measure_parse_ll(v, 50, 100000, &job_us))
				return measure_fail("spread: --job-us must be 50..100000");
		} else {
			return measure_fail("spread: unknown option '%s'", argv[i]);
		}
		i++;
	}
	if (!n_cpus)
		return measure_fail("spread: --cpus is required");
	int alone = measure_alone_on(cpus, n_cpus);
	if (alone)
		return alone;
	int64_t *all = calloc(n_cpus * (size_t)jobs, sizeof(*all));
	struct spreader *sp = calloc(n_cpus, sizeof(*sp));
	if (!all || !sp) {
		free(all);
		free(sp);
		return measure_fail("spread: out of memory");
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
	int rc = started < n_cpus ? measure_fail("spread: cannot create a thread") : 0;
	for (size_t i = 0; i < started; i++) {
		pthread_join(sp[i].th, NULL);
		if (!rc && sp[i].rc)
			rc = measure_fail("spread: cannot pin a thread to cpu%d", sp[i].cpu);
	}
	if (!rc) {
		size_t n = n_cpus * (size_t)jobs;
		qsort(all, n, sizeof(*all), measure_cmp_i64);
		rc = measure_print_json(json_pack("{s:I, s:I, s:f, s:f, s:f, s:f}", "jobs", (json_int_t)n, "job_us",
					  (json_int_t)job_us, "ratio_p50", (double)measure_quantile(all, n, 0.5) / 1e6, "ratio_p99",
					  (double)measure_quantile(all, n, 0.99) / 1e6, "ratio_p999",
					  (double)measure_quantile(all, n, 0.999) / 1e6, "ratio_max", (double)all[n - 1] / 1e6));
	}
	free(all);
	free(sp);
	return rc;
}
