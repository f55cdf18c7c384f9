/* SPDX-License-Identifier: MIT */
/*
 * The emulated board's state and its power model. Locking: m->mu guards every field below; an
 * accelerator's run_lock serialises its users (non-preemptive FIFO device, FPGA loads included) and
 * is never taken while m->mu is held, so a blocking run never stalls sysfs reads.
 */
#include "twin/model_impl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t twin_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
}

static void init_policy(struct twin_policy *pol, const struct pd_island *isl)
{
	pol->isl = isl;
	pol->min_khz = isl->opps[0].freq_khz;
	pol->max_khz = isl->opps[isl->n_opps - 1].freq_khz;
	pol->set_khz = pol->max_khz;
	pol->gov = TW_GOV_PERFORMANCE; /* what most board kernels boot with when no governor is forced */
}

static void init_accel(struct twin_accel *ac, const struct pd_accelerator *a, size_t idx)
{
	ac->a = a;
	pthread_mutex_init(&ac->run_lock, NULL);
	if (a->kind == PD_ACCEL_GPU) {
		ac->min_hz = a->opps[0].freq_khz * 1000;
		ac->max_hz = a->opps[a->n_opps - 1].freq_khz * 1000;
		ac->set_hz = ac->max_hz;
		ac->gov = TW_GOV_SIMPLE_ONDEMAND;
	} else {
		snprintf(ac->state, sizeof(ac->state), "unknown"); /* nothing loaded since power-up */
		if (a->manager)
			snprintf(ac->manager, sizeof(ac->manager), "%s", a->manager);
		else
			snprintf(ac->manager, sizeof(ac->manager), "fpga%zu", idx);
	}
}

twin_model *twin_model_new(const pd_platform *p, const char *fw_dir, pd_err *e)
{
	twin_model *m = calloc(1, sizeof(*m));
	if (!m) {
		pd_err_set(e, PD_EXIT_ENV, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&m->mu, NULL);
	pthread_mutex_init(&m->stat_mu, NULL);
	m->stat_fd = -1;
	m->p = p;
	snprintf(m->fw_dir, sizeof(m->fw_dir), "%s", fw_dir ? fw_dir : "/lib/firmware");
	m->n_pol = pd_platform_island_count(p);
	m->n_acc = pd_platform_accel_count(p);
	m->pol = calloc(m->n_pol ? m->n_pol : 1, sizeof(*m->pol));
	m->acc = calloc(m->n_acc ? m->n_acc : 1, sizeof(*m->acc));
	if (!m->pol || !m->acc) {
		twin_model_free(m);
		pd_err_set(e, PD_EXIT_ENV, "out of memory");
		return NULL;
	}
	for (size_t k = 0; k < m->n_pol; k++) {
		init_policy(&m->pol[k], pd_platform_island(p, k));
		const struct pd_island *isl = m->pol[k].isl;
		for (size_t c = 0; c < isl->n_cpus; c++) {
			if (isl->cpus[c] < 0 || isl->cpus[c] >= TWIN_MAX_CPUS) {
				twin_model_free(m);
				pd_err_set(e, PD_EXIT_USAGE, "island '%s': cpu %d outside 0..%d", isl->name, isl->cpus[c],
					   TWIN_MAX_CPUS - 1);
				return NULL;
			}
			if (isl->cpus[c] + 1 > m->n_cpus)
				m->n_cpus = isl->cpus[c] + 1;
		}
	}
	for (size_t a = 0; a < m->n_acc; a++)
		init_accel(&m->acc[a], pd_platform_accel(p, a), a);
	for (int c = 0; c < m->n_cpus; c++) {
		m->fair_runtime_ns[c] = 50 * PD_NS_PER_MS; /* kernel defaults (6.12+) */
		m->fair_period_ns[c] = PD_NS_PER_S;
	}
	if (twin_tree_build(m, e) != 0) {
		twin_model_free(m);
		return NULL;
	}
	return m;
}

void twin_model_free(twin_model *m)
{
	if (!m)
		return;
	for (size_t a = 0; a < m->n_acc && m->acc; a++)
		pthread_mutex_destroy(&m->acc[a].run_lock);
	free(m->pol);
	free(m->acc);
	free(m->nodes);
	free(m->rails);
	pthread_mutex_destroy(&m->mu);
	pthread_mutex_destroy(&m->stat_mu);
	free(m);
}

/* ---------------------------------------------------------------- frequency resolution */

/* Index of the OPP the policy runs at, as cpufreq resolves it: limits rounded inward to OPPs (min up,
 * max down; max wins when they cross), then the governor's target, userspace requests rounded up to
 * the next OPP (CPUFREQ_RELATION_L) and clamped. */
static size_t resolve(const struct pd_opp *o, size_t n, int64_t min, int64_t max, int64_t set, enum twin_gov gov)
{
	size_t lo = n - 1, hi = 0;
	for (size_t j = 0; j < n; j++)
		if (o[j].freq_khz >= min) {
			lo = j;
			break;
		}
	for (size_t j = n; j-- > 0;)
		if (o[j].freq_khz <= max) {
			hi = j;
			break;
		}
	if (lo > hi)
		lo = hi;
	if (gov == TW_GOV_POWERSAVE)
		return lo;
	if (gov != TW_GOV_USERSPACE)
		return hi; /* performance; simple_ondemand is modelled as performance (docs/TWIN.md) */
	size_t j = hi;
	for (size_t i = lo; i <= hi; i++)
		if (o[i].freq_khz >= set) {
			j = i;
			break;
		}
	return j;
}

size_t twin_policy_opp(const struct twin_policy *pol)
{
	return resolve(pol->isl->opps, pol->isl->n_opps, pol->min_khz, pol->max_khz, pol->set_khz, pol->gov);
}

size_t twin_gpu_opp(const struct twin_accel *ac)
{
	/* devfreq limits are in Hz; OPPs in kHz (whole kHz by the platform's invariants). */
	return resolve(ac->a->opps, ac->a->n_opps, (ac->min_hz + 999) / 1000, ac->max_hz / 1000, (ac->set_hz + 999) / 1000,
		       ac->gov);
}

int64_t twin_model_island_khz(twin_model *m, size_t k)
{
	pthread_mutex_lock(&m->mu);
	int64_t f = m->pol[k].isl->opps[twin_policy_opp(&m->pol[k])].freq_khz;
	pthread_mutex_unlock(&m->mu);
	return f;
}

/* ---------------------------------------------------------------- sampling and rails */

static double accel_energy_now(const struct twin_accel *ac, int64_t now)
{
	double e = ac->energy_uwns;
	if (ac->running)
		e += (double)(now - ac->run_start_ns) * (double)ac->run_extra_uw;
	return e;
}

void twin_model_tick(twin_model *m, int64_t now_ns, const uint64_t *busy, const uint64_t *total, size_t n)
{
	pthread_mutex_lock(&m->mu);
	struct twin_sample *s = &m->ring[m->head];
	s->t_ns = now_ns;
	for (size_t c = 0; c < TWIN_MAX_CPUS; c++) {
		s->busy[c] = c < n ? busy[c] : 0;
		s->total[c] = c < n ? total[c] : 0;
	}
	for (size_t a = 0; a < m->n_acc && a < TWIN_MAX_ACCELS; a++)
		s->energy[a] = accel_energy_now(&m->acc[a], now_ns);
	m->head = (m->head + 1) % (TWIN_WINDOW + 1);
	if (m->n_samples < TWIN_WINDOW + 1)
		m->n_samples++;
	pthread_mutex_unlock(&m->mu);
}

/* Oldest and newest samples of the window (NULL when fewer than two). Caller holds m->mu. */
static int window(const twin_model *m, const struct twin_sample **old, const struct twin_sample **new)
{
	if (m->n_samples < 2)
		return -1;
	size_t newest = (m->head + TWIN_WINDOW) % (TWIN_WINDOW + 1);
	size_t oldest = m->n_samples == TWIN_WINDOW + 1 ? m->head : 0;
	*old = &m->ring[oldest];
	*new = &m->ring[newest];
	return 0;
}

static double cpu_util(const twin_model *m, int cpu)
{
	const struct twin_sample *o, *n;
	if (window(m, &o, &n) != 0 || n->total[cpu] <= o->total[cpu])
		return 0;
	double u = (double)(n->busy[cpu] - o->busy[cpu]) / (double)(n->total[cpu] - o->total[cpu]);
	return u < 0 ? 0 : u > 1 ? 1 : u;
}

static double accel_extra_uw(const twin_model *m, size_t a)
{
	const struct twin_sample *o, *n;
	if (a >= TWIN_MAX_ACCELS || window(m, &o, &n) != 0 || n->t_ns <= o->t_ns)
		return 0;
	return (n->energy[a] - o->energy[a]) / (double)(n->t_ns - o->t_ns);
}

size_t twin_model_rail_count(const twin_model *m) { return m->n_rails; }

const char *twin_model_rail_name(const twin_model *m, size_t r) { return m->rails[r].name; }

double twin_model_rail_w(twin_model *m, size_t r)
{
	const struct twin_rail *rl = &m->rails[r];
	double w = 0;
	pthread_mutex_lock(&m->mu);
	if (rl->kind == TW_RAIL_ISLAND) {
		const struct twin_policy *pol = &m->pol[rl->idx];
		double util = 0;
		for (size_t c = 0; c < pol->isl->n_cpus; c++)
			util += cpu_util(m, pol->isl->cpus[c]);
		w = pd_platform_island_power_w(pol->isl, twin_policy_opp(pol), util);
	} else if (rl->kind == TW_RAIL_ACCEL) {
		const struct twin_accel *ac = &m->acc[rl->idx];
		double idle_uw = ac->a->kind == PD_ACCEL_GPU ? (double)ac->a->opps[twin_gpu_opp(ac)].idle_uw
							      : (double)ac->a->idle_uw;
		w = (idle_uw + accel_extra_uw(m, rl->idx)) / 1e6;
	} else {
		w = (double)pd_platform_base_uw(m->p) / 1e6;
	}
	pthread_mutex_unlock(&m->mu);
	return w;
}

/* ---------------------------------------------------------------- INA226 */

int64_t twin_shunt_for(double max_w)
{
	static const int64_t shunts_uohm[] = {100000, 50000, 20000, 10000, 5000, 2000, 1000};
	double amps = max_w / (TWIN_BUS_MV / 1000.0);
	for (size_t i = 0; i < sizeof(shunts_uohm) / sizeof(shunts_uohm[0]); i++) {
		/* full scale 81.92 mV; keep 1.5x headroom */
		if (amps * (double)shunts_uohm[i] / 1e6 * 1.5 <= 0.08192)
			return shunts_uohm[i];
	}
	return 1000;
}

void twin_ina226_from_w(double watts, int64_t shunt_uohm, struct twin_ina226 *out)
{
	/* ina2xx-adc: current LSB = 2500/R[uOhm] mA, power LSB = 25 x current LSB mW, bus LSB 1.25 mV,
	 * shunt LSB 2.5 uV (with calibration 2048, shunt_raw == current_raw). */
	out->current_scale = 2500.0 / (double)shunt_uohm;
	out->power_scale = 25.0 * out->current_scale;
	double mw = watts * 1000.0, ma = mw / (TWIN_BUS_MV / 1000.0);
	out->bus_raw = lround(TWIN_BUS_MV / 1.25);
	out->current_raw = lround(ma / out->current_scale);
	out->shunt_raw = out->current_raw;
	out->power_raw = lround(mw / out->power_scale);
	if (out->current_raw > 32767)
		out->current_raw = out->shunt_raw = 32767;
	if (out->power_raw > 65535)
		out->power_raw = 65535;
}

/* ---------------------------------------------------------------- accelerator runs */

int twin_accel_run(twin_model *m, size_t a, int64_t latency_ns, int64_t power_uw, const char *bitstream)
{
	struct twin_accel *ac = &m->acc[a];
	pthread_mutex_lock(&ac->run_lock); /* FIFO, non-preemptive: one job at a time */
	pthread_mutex_lock(&m->mu);
	int rc = 0;
	int64_t lat = latency_ns, extra = power_uw;
	if (ac->a->kind == PD_ACCEL_GPU) {
		size_t j = twin_gpu_opp(ac);
		lat = pd_platform_latency_at(ac->a, latency_ns, j);
		extra = ac->a->opps[j].busy_uw - ac->a->opps[j].idle_uw;
	} else if (strcmp(ac->state, "operating") != 0 || ac->n_loaded == 0) {
		rc = -EIO; /* no bitstream in the fabric */
	} else if (bitstream) {
		rc = -ENOEXEC;
		for (int s = 0; s < ac->n_loaded; s++)
			if (strcmp(ac->loaded[s], bitstream) == 0)
				rc = 0;
	}
	if (rc == 0) {
		ac->running = true;
		ac->run_start_ns = twin_now_ns();
		ac->run_extra_uw = extra;
	}
	pthread_mutex_unlock(&m->mu);
	if (rc == 0) {
		struct timespec ts = {lat / PD_NS_PER_S, lat % PD_NS_PER_S};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		pthread_mutex_lock(&m->mu);
		int64_t now = twin_now_ns();
		ac->energy_uwns += (double)(now - ac->run_start_ns) * (double)ac->run_extra_uw;
		ac->busy_ns += now - ac->run_start_ns;
		ac->runs++;
		ac->running = false;
		pthread_mutex_unlock(&m->mu);
	}
	pthread_mutex_unlock(&ac->run_lock);
	return rc;
}

int twin_fpga_load(twin_model *m, size_t a, const char *name)
{
	struct twin_accel *ac = &m->acc[a];
	char path[600];
	struct stat st;
	bool ok = name[0] && !strstr(name, "..");
	snprintf(path, sizeof(path), "%s/%s", m->fw_dir, name);
	pthread_mutex_lock(&ac->run_lock); /* the PCAP is busy during a load */
	pthread_mutex_lock(&m->mu);
	int rc = 0;
	if (!ok || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(ac->state, sizeof(ac->state), "firmware request error");
		rc = -ENOENT;
	} else if (st.st_size == 0) {
		snprintf(ac->state, sizeof(ac->state), "write error");
		rc = -EINVAL;
	} else {
		snprintf(ac->state, sizeof(ac->state), "write");
	}
	pthread_mutex_unlock(&m->mu);
	if (rc == 0) {
		int64_t ns = ac->a->reconfig_ns;
		struct timespec ts = {ns / PD_NS_PER_S, ns % PD_NS_PER_S};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		pthread_mutex_lock(&m->mu);
		/* PARTIAL_RECONFIG (0x1) loads into the next slot, round robin; a full load replaces all. */
		int slot = 0;
		if (ac->flags & 0x1) {
			slot = ac->next_slot;
			ac->next_slot = (ac->next_slot + 1) % ac->a->slots;
			if (ac->n_loaded < ac->a->slots)
				ac->n_loaded++;
		} else {
			ac->n_loaded = 1;
			ac->next_slot = ac->a->slots > 1 ? 1 : 0;
		}
		snprintf(ac->loaded[slot], sizeof(ac->loaded[slot]), "%s", name);
		snprintf(ac->state, sizeof(ac->state), "operating");
		ac->loads++;
		pthread_mutex_unlock(&m->mu);
	}
	pthread_mutex_unlock(&ac->run_lock);
	return rc;
}
