/* SPDX-License-Identifier: MIT */
/*
 * Work kinds. builtin:spin is a fixed amount of work: iterations calibrated at start-up and expressed
 * at the reference frequency on a capacity-1 core, so that a lower OPP or a LITTLE core stretches it
 * exactly as the model's C_i(k,f) says (on a real board). builtin:busy burns exactly C_i(k,f) of
 * thread CPU time (the twin, whose CPUs do not really change speed). Both honour wcet_fixed (spent as
 * CPU time, frequency-independent) and draw each job's demand uniformly in [bcet, wcet].
 *
 * Spin on an emulated board. On a real board the loop's rate at a pinned OPP is a property of the
 * core, and one calibration at start-up holds for the run. On the board twin the twin's cpufreq is
 * emulated and the loop runs at whatever speed the host gives the twin's CPUs at that moment: in
 * ten-second demos the jobs' CPU time ran 3-7 % under or over the plan's C(k, f) for the whole run
 * (a calibration taken while every thread calibrates at once) or drifted by +-5 % within it, and the
 * rails, which follow the busy time, followed. That is the host's speed, not the emulated board's.
 * So on the twin (its sysfs has kernel/powerdag-twin) each spin job's own rate, n iterations over its
 * thread CPU time, scaled to f_ref as the calibration is, is kept for the last 9 jobs of at least
 * 200 us, and the median of those is the rate of the next job: the emulated CPU keeps the speed the
 * plan gives it, while one job stretched by a stopped vCPU (its CPU time grows, the rate falls) does
 * not move a median of 9. The amount of work per job still follows the emulated OPP (ref_per_cur).
 * On any other board the calibrated rate stays: a slower core must show as longer jobs there.
 */
#include "agents/work_impl.h"

#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static inline int64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
}

/* The spin body: a dependent multiply-add chain the compiler cannot fold or vectorise. */
static uint64_t spin_loop(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* Busy for ns of this thread's CPU time; *cpu0 and the return value are the first and last clock
 * readings, which the executor uses as the job's CPU time (each reading is a syscall taking the
 * run-queue lock: the job costs no extra one). */
static int64_t busy_for(int64_t ns, int64_t *cpu0)
{
	int64_t now = thread_cpu_ns();
	int64_t end = now + ns;
	*cpu0 = now;
	uint64_t x = 1;
	while (now < end) {
		x = spin_loop(256, x);
		now = thread_cpu_ns();
	}
	__asm__ volatile("" : : "r"(x));
	return now;
}

uint64_t work_spin(uint64_t n, uint64_t x)
{
	return spin_loop(n, x);
}

void work_busy_ns(int64_t ns)
{
	int64_t c0;
	busy_for(ns, &c0);
}

int work_init(struct pd_xwork *w, const struct pd_agent_task *t, uint64_t seed, size_t index, pd_err *e)
{
	memset(w, 0, sizeof(*w));
	w->kind = t->work;
	w->wcet_ref_ns = t->wcet_ref_ns;
	w->bcet_ref_ns = t->bcet_ref_ns > 0 && t->bcet_ref_ns <= t->wcet_ref_ns ? t->bcet_ref_ns : t->wcet_ref_ns;
	w->fixed_ref_ns = t->wcet_fixed_ns;
	w->ref_khz = t->ref_khz;
	w->opp_khz = t->opp_khz;
	w->capacity = t->capacity > 0 ? t->capacity : 1.0;
	w->wcet_ns = t->wcet_ns;
	w->bcet_ns = t->bcet_ns > 0 && t->bcet_ns <= t->wcet_ns ? t->bcet_ns : t->wcet_ns;
	w->iters_per_ref_ns = 1.0;
	pd_rng_seed(&w->rng, seed * 0x9E3779B97F4A7C15ULL + index + 1);
	if (w->kind == PD_AW_PLUGIN) {
		/* the same rules as `check-plugins` (plugin_check.c), right before the dlopen */
		char real[PATH_MAX];
		pd_buf why;
		pd_buf_init(&why);
		if (pd_agent_plugin_path(t->plugin_lib, t->plugin_dir, real, sizeof(real), &why)) {
			int rc = pd_err_set(e, PD_EXIT_USAGE, "task '%s/%s': plugin %s refused: %s", t->dag_name, t->name,
					    t->plugin_lib, why.data ? why.data : "");
			pd_buf_free(&why);
			return rc;
		}
		pd_buf_free(&why);
		w->dl = dlopen(real, RTLD_NOW | RTLD_LOCAL);
		if (!w->dl)
			return pd_err_set(e, PD_EXIT_USAGE, "task '%s/%s': cannot load plugin %s: %s", t->dag_name, t->name,
					  t->plugin_lib, dlerror());
		void *sym = dlsym(w->dl, t->plugin_sym);
		if (!sym)
			return pd_err_set(e, PD_EXIT_USAGE, "task '%s/%s': plugin %s has no symbol '%s'", t->dag_name,
					  t->name, t->plugin_lib, t->plugin_sym);
		memcpy(&w->fn, &sym, sizeof(w->fn)); /* object -> function pointer, POSIX-sanctioned */
	}
	return 0;
}

static int64_t read_khz(const char *sysfs_root, int cpu)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", sysfs_root, cpu);
	FILE *f = fopen(p, "re");
	long long v = -1;
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

void work_calibrate(struct pd_xwork *w, int cpu, const char *sysfs_root)
{
	if (w->kind != PD_AW_SPIN)
		return;
	/* median of 5 runs of ~0.5 ms: the best would be optimistic (a job would then overshoot its
	 * WCET whenever the CPU is slightly slower than during calibration), the mean is skewed by
	 * preemptions */
	double rates[5];
	uint64_t x = 7;
	for (int r = 0; r < 5; r++) {
		const uint64_t n = 400000;
		int64_t t0 = thread_cpu_ns();
		x = spin_loop(n, x);
		int64_t dt = thread_cpu_ns() - t0;
		rates[r] = dt > 0 ? (double)n / (double)dt : 0;
	}
	__asm__ volatile("" : : "r"(x));
	for (int i = 1; i < 5; i++) /* insertion sort of 5 */
		for (int j = i; j > 0 && rates[j] < rates[j - 1]; j--) {
			double t = rates[j];
			rates[j] = rates[j - 1];
			rates[j - 1] = t;
		}
	double best = rates[2];
	/* rate measured at f_cur on a core of capacity kappa; at f_ref on capacity 1 it would be
	 * rate * f_ref / (kappa * f_cur). Without cpufreq (VMs) the CPU is taken to run at the reference
	 * speed: the calibration then simply reproduces wcet_ref. */
	int64_t cur = read_khz(sysfs_root, cpu);
	w->ref_per_cur = cur > 0 && w->ref_khz > 0 ? (double)w->ref_khz / (w->capacity * (double)cur) : 1.0;
	best *= w->ref_per_cur;
	w->iters_per_ref_ns = best > 0 ? best : 1.0;
	char p[256];
	struct stat st;
	snprintf(p, sizeof(p), "%s/kernel/powerdag-twin", sysfs_root);
	w->track = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static double median_of(const double *v, unsigned n)
{
	double s[PD_SPIN_TRACK_JOBS];
	for (unsigned i = 0; i < n; i++) { /* insertion sort of at most 9 */
		unsigned j = i;
		for (; j > 0 && s[j - 1] > v[i]; j--)
			s[j] = s[j - 1];
		s[j] = v[i];
	}
	return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

void work_spin_observe(struct pd_xwork *w, uint64_t n, int64_t dt)
{
	if (!w->track || dt < PD_SPIN_TRACK_MIN_NS || n == 0)
		return;
	w->rates[w->next_rate] = (double)n / (double)dt * w->ref_per_cur;
	w->next_rate = (w->next_rate + 1) % PD_SPIN_TRACK_JOBS;
	if (w->n_rates < PD_SPIN_TRACK_JOBS)
		w->n_rates++;
	/* invariant: with fewer than 3 jobs seen a single stretched one would be the rate; keep the
	 * calibration until a median can outvote it */
	if (w->n_rates >= 3)
		w->iters_per_ref_ns = median_of(w->rates, w->n_rates);
}

int64_t work_draw(struct pd_xwork *w, int64_t *ref_ns)
{
	int64_t ref = w->wcet_ref_ns;
	if (w->bcet_ref_ns < w->wcet_ref_ns)
		ref = pd_rng_range(&w->rng, w->bcet_ref_ns, w->wcet_ref_ns);
	*ref_ns = ref;
	if (ref == w->wcet_ref_ns || w->wcet_ref_ns <= 0)
		return w->wcet_ns;
	/* the OPP demand interpolates linearly between bcet and wcet at the OPP */
	double x = (double)(ref - w->bcet_ref_ns) / (double)(w->wcet_ref_ns - w->bcet_ref_ns);
	return w->bcet_ns + (int64_t)(x * (double)(w->wcet_ns - w->bcet_ns));
}

int work_do(struct pd_xwork *w, uint64_t seq, int64_t demand_ns, int64_t ref_ns, int64_t *cpu0_ns, int64_t *cpu1_ns)
{
	*cpu1_ns = -1;
	switch (w->kind) {
	case PD_AW_BUSY:
		*cpu1_ns = busy_for(demand_ns, cpu0_ns);
		return 0;
	case PD_AW_SPIN: {
		int64_t fixed = w->fixed_ref_ns < ref_ns ? w->fixed_ref_ns : 0;
		int64_t c0 = *cpu0_ns, fixed0;
		if (fixed)
			c0 = busy_for(fixed, &fixed0); /* the loop's own time starts after the fixed part */
		uint64_t n = (uint64_t)((double)(ref_ns - fixed) * w->iters_per_ref_ns);
		uint64_t x = spin_loop(n, seq);
		__asm__ volatile("" : : "r"(x));
		*cpu1_ns = thread_cpu_ns(); /* the read the caller would take: no extra clock read */
		work_spin_observe(w, n, *cpu1_ns - c0);
		return 0;
	}
	case PD_AW_PLUGIN:
		return w->fn(seq, demand_ns);
	default:
		return 0;
	}
}

void work_fini(struct pd_xwork *w)
{
	if (w->dl)
		dlclose(w->dl);
	w->dl = NULL;
}
