/* SPDX-License-Identifier: MIT */
/*
 * profile_steps.c - what `powerdag profile` measures and how it turns measurements into platform
 * values (docs/PROFILE.md):
 *
 *   spread    once, every CPU of the platform at once: builtin:spin jobs of 500 us after the
 *             executor's own calibration; dl.budget_margin = the 99th percentile of CPU time over
 *             the promised time, minus 1 (rounded up to 0.01, at most MARGIN_MAX): the work's CPU
 *             time varies with what the other CPUs do (SMT, caches, the host), which Q must cover.
 *   overhead  per island, at its lowest OPP (the longest charge): the agent's two SCHED_DEADLINE
 *             threads; job_overhead = the 99.9th percentile of the per-job charge beyond the work,
 *             rounded up to 1 us.
 *   power     per island and OPP: rails with the island idle, then with every core busy (a steady
 *             DL spinner each); idle per core = idle rail / n, busy per core = idle + (busy rail -
 *             idle rail) / (busy fraction obtained). The island's own rail only: the rest of the
 *             board (other rails) is not in it. Also the builtin:spin speed per core.
 *   accel     per GPU with a job interface (the board twin's) and OPP: latency of back-to-back jobs
 *             against pd_platform_latency_at, and the GPU rail idle/busy like an island.
 * Turning the measurements into the fitted platform and its provenance: profile_fit.c.
 */
#include "deployer/profile_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OV_PERIOD_US 2000
#define OV_WORK_US 100
#define SETTLE_MS 300
#define SPREAD_JOBS 1000
#define SPREAD_JOB_US 500

static int window_ms(const struct prof *c) { return c->o->window_ms > 0 ? c->o->window_ms : 500; }
static int ov_jobs(const struct prof *c) { return c->o->overhead_jobs > 0 ? c->o->overhead_jobs : 1000; }

static void skip(struct prof *c, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void skip(struct prof *c, const char *what, const char *fmt, ...)
{
	char why[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	json_array_append_new(c->skipped, json_pack("{s:s, s:s}", "step", what, "reason", why));
	profile_log(c, "skipped %s: %s", what, why);
}

void profile_flag(struct prof *c, const char *fmt, ...)
{
	char msg[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_array_append_new(c->flags, json_string(msg));
	profile_log(c, "flag: %s", msg);
}

/* ---------------------------------------------------------------- planning */

/* Whitespace-separated list (a sysfs "available frequencies" file) contains v. */
static bool list_has(const char *list, long long v)
{
	const char *p = list;
	while (p && *p) {
		char *end;
		long long x = strtoll(p, &end, 10);
		if (end == p)
			break;
		if (x == v)
			return true;
		p = end;
	}
	return false;
}

static bool read_board(struct prof *c, const char *abs, pd_buf *out)
{
	pd_err ig = {0};
	out->len = 0;
	return pd_deploy_transport_read(c->t, pd_deploy_board_path(c->b, abs), out, &ig) == 0;
}

static int add_step(struct prof *c, enum pkind k, size_t idx, long opp, double est, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
static int add_step(struct prof *c, enum pkind k, size_t idx, long opp, double est, const char *fmt, ...)
{
	struct pstep *n = realloc(c->steps, (c->n_steps + 1) * sizeof(*n));
	if (!n)
		return -1;
	c->steps = n;
	struct pstep *s = &n[c->n_steps];
	memset(s, 0, sizeof(*s));
	s->kind = k, s->idx = idx, s->opp = opp, s->est_s = est;
	char t[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t, sizeof(t), fmt, ap);
	va_end(ap);
	s->title = strdup(t);
	if (!s->title)
		return -1;
	c->n_steps++;
	c->est_total_s += est;
	return 0;
}

static long rail_of(const pd_platform *p, const char *name)
{
	for (size_t s = 0; s < pd_platform_sensor_count(p); s++)
		if (!strcmp(pd_platform_sensor(p, s)->measures, name))
			return (long)s;
	return -1;
}

/* A rail is handed to the agent as "URI,DEVICE,CHANNEL,SCALE": a comma in a field cannot be. */
static bool rails_passable(const pd_platform *p)
{
	for (size_t s = 0; s < pd_platform_sensor_count(p); s++) {
		const struct pd_sensor *x = pd_platform_sensor(p, s);
		if (strchr(x->uri, ',') || strchr(x->device, ',') || strchr(x->channel, ','))
			return false;
	}
	return true;
}

static double power_est(const struct prof *c) { return 2.0 * (SETTLE_MS + window_ms(c)) / 1000.0 + 0.4; }

static int plan_island(struct prof *c, size_t k, bool rails_ok)
{
	const struct pd_island *isl = pd_platform_island(c->nom, k);
	struct isl_res *r = &c->isl[k];
	r->opps = calloc(isl->n_opps + 1, sizeof(*r->opps));
	if (!r->opps)
		return -1;
	r->rail = rails_ok ? rail_of(c->nom, isl->name) : -1;
	char dir[300], path[400], what[200];
	snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpufreq/%s", isl->policy);
	snprintf(path, sizeof(path), "%s/scaling_available_frequencies", dir);
	pd_buf avail;
	pd_buf_init(&avail);
	r->cpufreq = read_board(c, path, &avail) && avail.data;
	double ov_est = (double)ov_jobs(c) * OV_PERIOD_US / 1e6 + 1.0;
	int rc = add_step(c, PK_OVERHEAD, k, r->cpufreq ? 0 : -1, ov_est, "island %s: per-job overhead (cpu%d, %d jobs x 2)",
			  isl->name, isl->cpus[0], ov_jobs(c));
	snprintf(what, sizeof(what), "power %s", isl->name);
	if (r->rail < 0 && pd_platform_sensor_count(c->nom))
		skip(c, what, "%s", !rails_ok ? "a sensor field contains ',' (cannot be handed to the agent)"
				     : "no sensor measures this island alone (sensor `measures` naming it): busy/idle power not fitted; "
				       "the builtin:spin speed is still measured");
	if (!r->cpufreq && isl->n_opps > 1) {
		skip(c, what, "no cpufreq policy %s on the board: the OPPs cannot be stepped; power not fitted, spin speed "
			      "measured at the current frequency only", isl->policy);
		r->rail = -1;
	}
	for (size_t j = 0; rc == 0 && j < isl->n_opps && r->cpufreq; j++) {
		char f[32];
		pd_fmt_freq(isl->opps[j].freq_khz, f, sizeof(f));
		if (!list_has(avail.data, isl->opps[j].freq_khz)) {
			char w2[250];
			snprintf(w2, sizeof(w2), "power %s at %s", isl->name, f);
			skip(c, w2, "%s is not in %s", f, path);
			continue;
		}
		rc = add_step(c, PK_POWER, k, (long)j, power_est(c), "island %s at %s: %s", isl->name, f,
			      r->rail >= 0 ? "idle and busy power, spin speed" : "spin speed");
	}
	if (rc == 0 && !r->cpufreq)
		rc = add_step(c, PK_POWER, k, -1, power_est(c), "island %s at the current frequency (no cpufreq): %s",
			      isl->name, r->rail >= 0 && isl->n_opps == 1 ? "idle and busy power, spin speed" : "spin speed");
	pd_buf_free(&avail);
	return rc;
}

static int plan_accel(struct prof *c, size_t a, bool rails_ok)
{
	const struct pd_accelerator *ac = pd_platform_accel(c->nom, a);
	struct isl_res *r = &c->acc[a];
	char what[200], path[400];
	snprintf(what, sizeof(what), "accelerator %s", ac->name);
	if (ac->kind == PD_ACCEL_FPGA) {
		skip(c, what, "an FPGA job needs its implementation's bitstream: latency and power are per implementation "
			      "(the DAG file), measured by deploy and compared by report");
		return 0;
	}
	snprintf(path, sizeof(path), "/sys/kernel/powerdag-twin/accel/%s/run", ac->name);
	struct pd_deploy_transport_stat st;
	pd_err ig = {0};
	if (pd_deploy_transport_stat(c->t, pd_deploy_board_path(c->b, path), &st, &ig) != 0 || !st.exists) {
		skip(c, what, "no generic job interface for this GPU on the board (only the board twin has one): latency "
			      "and power are per implementation, measured by deploy and compared by report");
		return 0;
	}
	r->opps = calloc(ac->n_opps + 1, sizeof(*r->opps));
	if (!r->opps)
		return -1;
	r->rail = rails_ok ? rail_of(c->nom, ac->name) : -1;
	pd_buf avail;
	pd_buf_init(&avail);
	if (ac->devfreq) {
		snprintf(path, sizeof(path), "/sys/class/devfreq/%s/available_frequencies", ac->devfreq);
		r->cpufreq = read_board(c, path, &avail) && avail.data;
	}
	int rc = 0;
	if (!r->cpufreq && ac->n_opps > 1)
		skip(c, what, "no devfreq device %s: the OPPs cannot be stepped; latency measured at the current frequency",
		     ac->devfreq ? ac->devfreq : "(none named)");
	for (size_t j = 0; rc == 0 && r->cpufreq && j < ac->n_opps; j++) {
		char f[32];
		pd_fmt_freq(ac->opps[j].freq_khz, f, sizeof(f));
		if (!list_has(avail.data, ac->opps[j].freq_khz * 1000)) {
			skip(c, what, "%s is not in %s", f, path);
			continue;
		}
		rc = add_step(c, PK_ACCEL, a, (long)j, power_est(c), "GPU %s at %s: job latency%s", ac->name, f,
			      r->rail >= 0 ? ", idle and busy power" : "");
	}
	if (rc == 0 && !r->cpufreq)
		rc = add_step(c, PK_ACCEL, a, -1, power_est(c), "GPU %s at the current frequency: job latency", ac->name);
	pd_buf_free(&avail);
	return rc;
}

int profile_plan_steps(struct prof *c, pd_err *e)
{
	size_t K = pd_platform_island_count(c->nom), A = pd_platform_accel_count(c->nom);
	c->isl = calloc(K + 1, sizeof(*c->isl));
	c->acc = calloc(A + 1, sizeof(*c->acc));
	if (!c->isl || !c->acc)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	if (add_step(c, PK_SPREAD, 0, -1, SPREAD_JOBS * SPREAD_JOB_US / 1e6 + 1.0,
		     "every CPU: builtin:spin execution-time spread (%d jobs of %d us per CPU)", SPREAD_JOBS, SPREAD_JOB_US))
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	bool rails_ok = rails_passable(c->nom);
	if (!pd_platform_sensor_count(c->nom))
		skip(c, "power", "the platform names no sensors (IIO rails): no power is measured, none is fitted");
	for (size_t k = 0; k < K; k++)
		if (plan_island(c, k, rails_ok))
			return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	for (size_t a = 0; a < A; a++)
		if (plan_accel(c, a, rails_ok))
			return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	return 0;
}

/* ---------------------------------------------------------------- measuring */

/* The rails (every sensor of the platform, in order) as agent arguments. */
static size_t rail_args(struct prof *c, const char **args, size_t n, char (*buf)[600], size_t max)
{
	size_t m = 0;
	for (size_t s = 0; s < pd_platform_sensor_count(c->nom) && m < max; s++) {
		const struct pd_sensor *x = pd_platform_sensor(c->nom, s);
		char sc[40];
		snprintf(buf[m], sizeof(buf[m]), "%s,%s,%s,%s", x->uri, x->device, x->channel,
			 pd_fmt_double(x->scale, sc, sizeof(sc)));
		args[n++] = "--rail";
		args[n++] = buf[m++];
	}
	return n;
}

/* A CPU outside island k for the sampling thread (-1: none, the island has every CPU). */
static int sampler_cpu(const struct prof *c, size_t k)
{
	for (size_t i = 0; i < pd_platform_island_count(c->nom); i++)
		if (i != k)
			return pd_platform_island(c->nom, i)->cpus[0];
	return -1;
}

static double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static int step_overhead(struct prof *c, struct pstep *s, pd_err *e)
{
	const struct pd_island *isl = pd_platform_island(c->nom, s->idx);
	char cpu[16], jobs[16], per[16], work[16];
	snprintf(cpu, sizeof(cpu), "%d", isl->cpus[0]);
	snprintf(jobs, sizeof(jobs), "%d", ov_jobs(c));
	snprintf(per, sizeof(per), "%d", OV_PERIOD_US);
	snprintf(work, sizeof(work), "%d", OV_WORK_US);
	const char *args[] = {"overhead", "--cpu", cpu, "--jobs", jobs, "--period-us", per, "--work-us", work, NULL};
	json_t *j;
	int rc = profile_measure(c, args, &j, e);
	if (rc)
		return rc;
	struct isl_res *r = &c->isl[s->idx];
	r->have_ov = true;
	r->ov_samples = (long)num(j, "samples");
	r->ov_p50_ns = (int64_t)num(j, "p50_ns");
	r->ov_p99_ns = (int64_t)num(j, "p99_ns");
	r->ov_max_ns = (int64_t)num(j, "max_ns");
	r->ov_mean_ns = (int64_t)num(j, "mean_ns");
	int64_t q = (int64_t)num(j, "p999_ns");
	r->ov_ns = (q + PD_NS_PER_US - 1) / PD_NS_PER_US * PD_NS_PER_US; /* whole us, rounded up */
	json_decref(j);
	if (r->ov_samples < 100 || q < 0)
		return pd_err_set(e, PD_EXIT_ENV, "island %s: overhead step returned %ld samples", isl->name, r->ov_samples);
	return 0;
}

/* Mean of the rail r in phase "idle"/"busy" of a power answer; n and sd alongside. */
static double rail_w(const json_t *j, const char *phase, long r, double *sd, long *n)
{
	const json_t *x = json_array_get(json_object_get(j, phase), (size_t)r);
	*sd = num(x, "sd");
	*n = (long)num(x, "n");
	return num(x, "w");
}

int profile_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int step_power(struct prof *c, struct pstep *s, pd_err *e)
{
	const struct pd_island *isl = pd_platform_island(c->nom, s->idx);
	struct isl_res *r = &c->isl[s->idx];
	int rc = s->opp >= 0 ? pd_deploy_board_set_island_freq(c->b, isl, isl->opps[s->opp].freq_khz, e) : 0;
	if (rc)
		return rc;
	const char *args[160];
	char rb[64][600], cpus[600] = "", smp[16], win[16], set[16];
	size_t n = 0;
	args[n++] = "power";
	n = rail_args(c, args, n, rb, 64);
	for (size_t i = 0; i < isl->n_cpus; i++)
		snprintf(cpus + strlen(cpus), sizeof(cpus) - strlen(cpus), "%s%d", i ? "," : "", isl->cpus[i]);
	snprintf(smp, sizeof(smp), "%d", sampler_cpu(c, s->idx));
	snprintf(win, sizeof(win), "%d", window_ms(c));
	snprintf(set, sizeof(set), "%d", SETTLE_MS);
	const char *tail[] = {"--cpus", cpus, "--sampler-cpu", smp, "--window-ms", win, "--settle-ms", set, NULL};
	for (size_t i = 0; tail[i]; i++)
		args[n++] = tail[i];
	args[n] = NULL;
	json_t *j;
	rc = profile_measure(c, args, &j, e);
	if (rc)
		return rc;
	struct opp_res *o = &r->opps[s->opp >= 0 ? (size_t)s->opp : isl->n_opps];
	const json_t *util = json_object_get(j, "util"), *rate = json_object_get(j, "spin_iters_per_ns");
	double U = 0, rates[64];
	size_t nr = 0;
	for (size_t i = 0; i < json_array_size(util); i++)
		U += json_number_value(json_array_get(util, i));
	for (size_t i = 0; i < json_array_size(rate) && nr < 64; i++)
		rates[nr++] = json_number_value(json_array_get(rate, i));
	qsort(rates, nr, sizeof(double), profile_cmp_double);
	o->busy_frac = U;
	if (nr) {
		o->have_rate = true;
		o->rate = rates[nr / 2];
	}
	/* power: only with the island's own rail, and only at a known OPP */
	long pw_opp = s->opp >= 0 ? s->opp : (isl->n_opps == 1 ? 0 : -1);
	if (r->rail >= 0 && pw_opp >= 0) {
		double sdi, sdb;
		double idle = rail_w(j, "idle", r->rail, &sdi, &o->n_idle), busy = rail_w(j, "busy", r->rail, &sdb, &o->n_busy);
		double nc = (double)isl->n_cpus;
		if (!(U > 0.1 * nc) || o->n_idle < 5 || o->n_busy < 5 || isnan(idle) || isnan(busy)) {
			json_decref(j);
			return pd_err_set(e, PD_EXIT_ENV, "island %s: the busy phase got a busy fraction of %.2f over %zu core(s) "
							 "and %ld/%ld rail samples: cannot fit its power", isl->name, U, isl->n_cpus,
					  o->n_idle, o->n_busy);
		}
		o->have_pw = true;
		o->idle_w = idle / nc;
		o->busy_w = o->idle_w + (busy - idle) / U;
		o->idle_sd = sdi / nc;
		o->busy_sd = sqrt(sdb * sdb + sdi * sdi) / U;
		if (s->opp < 0) { /* the one OPP of an island without cpufreq (its spin speed stays "current") */
			r->opps[0] = *o;
			r->opps[0].have_rate = false;
		}
	}
	json_decref(j);
	return 0;
}

static int step_accel(struct prof *c, struct pstep *s, pd_err *e)
{
	const struct pd_accelerator *ac = pd_platform_accel(c->nom, s->idx);
	struct isl_res *r = &c->acc[s->idx];
	int rc = s->opp >= 0 ? pd_deploy_board_set_gpu_freq(c->b, ac, ac->opps[s->opp].freq_khz, e) : 0;
	if (rc)
		return rc;
	const char *args[160];
	char rb[64][600], lat[16], win[16], set[16], smp[16];
	size_t n = 0;
	args[n++] = "power";
	n = rail_args(c, args, n, rb, 64);
	snprintf(lat, sizeof(lat), "%d", ACCEL_LATENCY_US);
	snprintf(win, sizeof(win), "%d", window_ms(c));
	snprintf(set, sizeof(set), "%d", SETTLE_MS);
	snprintf(smp, sizeof(smp), "%d", pd_platform_island(c->nom, 0)->cpus[0]);
	const char *tail[] = {"--accel", ac->name, "--latency-us", lat, "--sampler-cpu", smp, "--window-ms", win, "--settle-ms",
			      set, NULL};
	for (size_t i = 0; tail[i]; i++)
		args[n++] = tail[i];
	args[n] = NULL;
	json_t *j;
	rc = profile_measure(c, args, &j, e);
	if (rc)
		return rc;
	struct opp_res *o = &r->opps[s->opp >= 0 ? (size_t)s->opp : ac->n_opps];
	o->jobs = (long)num(j, "accel_jobs");
	o->latency_ns = num(j, "accel_latency_ns");
	o->latency_expect_ns = s->opp >= 0 ? (double)pd_platform_latency_at(ac, ACCEL_LATENCY_US * PD_NS_PER_US, (size_t)s->opp) : NAN;
	o->busy_frac = num(j, "accel_busy");
	if (!isnan(num(j, "device_busy"))) { /* the device's own counters, when it has them (the twin's) */
		o->busy_frac = num(j, "device_busy");
		o->latency_ns = num(j, "device_latency_ns");
	}
	if (r->rail >= 0 && s->opp >= 0 && o->busy_frac > 0.1) {
		double sdi, sdb;
		double idle = rail_w(j, "idle", r->rail, &sdi, &o->n_idle), busy = rail_w(j, "busy", r->rail, &sdb, &o->n_busy);
		if (!isnan(idle) && !isnan(busy) && o->n_idle >= 5 && o->n_busy >= 5) {
			o->have_pw = true;
			o->idle_w = idle;
			o->busy_w = idle + (busy - idle) / o->busy_frac;
			o->idle_sd = sdi;
			o->busy_sd = sqrt(sdb * sdb + sdi * sdi) / o->busy_frac;
		}
	}
	json_decref(j);
	return o->jobs > 0 ? 0 : pd_err_set(e, PD_EXIT_ENV, "GPU %s: no job completed in the busy window", ac->name);
}

/* Every CPU of the platform, as the agent's --cpus list. */
static void all_cpus(const struct prof *c, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < pd_platform_island_count(c->nom); k++) {
		const struct pd_island *isl = pd_platform_island(c->nom, k);
		for (size_t i = 0; i < isl->n_cpus && len + 8 < n; i++)
			len += (size_t)snprintf(buf + len, n - len, "%s%d", len ? "," : "", isl->cpus[i]);
	}
}

static int step_spread(struct prof *c, pd_err *e)
{
	char cpus[600], jobs[16], us[16];
	all_cpus(c, cpus, sizeof(cpus));
	snprintf(jobs, sizeof(jobs), "%d", SPREAD_JOBS);
	snprintf(us, sizeof(us), "%d", SPREAD_JOB_US);
	const char *args[] = {"spread", "--cpus", cpus, "--jobs", jobs, "--job-us", us, NULL};
	json_t *j;
	int rc = profile_measure(c, args, &j, e);
	if (rc)
		return rc;
	c->spread_jobs = (long)num(j, "jobs");
	c->spread_p50 = num(j, "ratio_p50");
	c->spread_p99 = num(j, "ratio_p99");
	c->spread_max = num(j, "ratio_max");
	json_decref(j);
	if (c->spread_jobs < 100 || !(c->spread_p99 > 0))
		return pd_err_set(e, PD_EXIT_ENV, "spread step returned %ld jobs", c->spread_jobs);
	c->have_spread = true;
	return 0;
}

int profile_step_run(struct prof *c, struct pstep *s, pd_err *e)
{
	if (s->kind == PK_SPREAD)
		return step_spread(c, e);
	if (s->kind == PK_OVERHEAD) {
		/* at the lowest OPP: the per-job work of the kernel and the agent takes longest there */
		const struct pd_island *isl = pd_platform_island(c->nom, s->idx);
		int rc = s->opp >= 0 ? pd_deploy_board_set_island_freq(c->b, isl, isl->opps[0].freq_khz, e) : 0;
		return rc ? rc : step_overhead(c, s, e);
	}
	return s->kind == PK_POWER ? step_power(c, s, e) : step_accel(c, s, e);
}
