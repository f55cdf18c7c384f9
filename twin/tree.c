/* SPDX-License-Identifier: MIT */
/*
 * The twin's files: a flat table of nodes (path, mode, read and store handlers) built once from the
 * platform, laid out under the FUSE root as
 *
 *     /cpufreq/policyN/...                      -> /sys/devices/system/cpu/cpufreq
 *     /class/devfreq/DEV/...                    -> /sys/class/devfreq
 *     /class/fpga_manager/fpgaN/...             -> /sys/class/fpga_manager
 *     /bus/iio/devices/iio:deviceN/...          -> /sys/bus/iio
 *     /debug/sched/fair_server/cpuN/{runtime,period}  -> /sys/kernel/debug
 *     /twin/accel/NAME/run                      -> /sys/kernel/powerdag-twin
 *     /proc/stat                                -> /proc/stat (namespace twin with cpuacct; procstat.c)
 *
 * Stores are validated the way the kernel's store functions do (kstrtouint-style numbers, governor
 * names, setspeed only under userspace, fair-server bounds), returning the same errno values.
 *
 * One file (~620 lines): the node table and its read/store handlers are one table; a handler read
 * away from its node's row loses the sysfs file it emulates.
 */
#include "twin/model_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
	CF_AFFECTED, CF_RELATED, CF_INFO_MIN, CF_INFO_MAX, CF_INFO_CUR, CF_LATENCY, CF_AVAIL_FREQS, CF_AVAIL_GOVS,
	CF_DRIVER, CF_GOV, CF_CUR, CF_MIN, CF_MAX, CF_SETSPEED,
	DF_AVAIL_FREQS, DF_AVAIL_GOVS, DF_GOV, DF_CUR, DF_TARGET, DF_MIN, DF_MAX, DF_POLL, DF_SET,
	FM_NAME, FM_STATE, FM_FIRMWARE, FM_FLAGS,
	FS_RUNTIME, FS_PERIOD,
	IIO_NAME, IIO_LABEL, IIO_V0_RAW, IIO_V0_SCALE, IIO_V0_IT, IIO_V1_RAW, IIO_V1_SCALE, IIO_V1_IT, IIO_P_RAW,
	IIO_P_SCALE, IIO_C_RAW, IIO_C_SCALE, IIO_SF, IIO_OSR, IIO_ASYNC, IIO_SHUNT, IIO_IT_AVAIL,
	AC_RUN,
};

static const char *const cpufreq_govs[] = {"performance", "powersave", "userspace", NULL};
static const char *const devfreq_govs[] = {"performance", "powersave", "userspace", "simple_ondemand", NULL};
static const enum twin_gov gov_of[] = {TW_GOV_PERFORMANCE, TW_GOV_POWERSAVE, TW_GOV_USERSPACE,
				     TW_GOV_SIMPLE_ONDEMAND};
static const char *gov_name(enum twin_gov g)
{
	return devfreq_govs[g == TW_GOV_PERFORMANCE ? 0 : g == TW_GOV_POWERSAVE ? 1 : g == TW_GOV_USERSPACE ? 2 : 3];
}

/* ---------------------------------------------------------------- parsing like the kernel */

/* kstrtou64: digits, one optional trailing newline, no sign, no overflow. */
static int parse_u64(const char *s, int base, uint64_t *out)
{
	size_t n = strlen(s);
	if (n && s[n - 1] == '\n')
		n--;
	if (n == 0)
		return -EINVAL;
	if (base == 16 && n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2, n -= 2;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		int d;
		char c = s[i];
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -ERANGE;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* sysfs_streq-style word match ("userspace\n" == "userspace"). */
static int match_word(const char *s, const char *const *words)
{
	size_t n = strlen(s);
	if (n && s[n - 1] == '\n')
		n--;
	for (int i = 0; words[i]; i++)
		if (strlen(words[i]) == n && strncmp(words[i], s, n) == 0)
			return i;
	return -1;
}

/* ---------------------------------------------------------------- cpufreq */

static int rd_cpufreq(twin_model *m, const struct twin_node *n, pd_buf *o)
{
	pthread_mutex_lock(&m->mu);
	const struct twin_policy *pol = &m->pol[n->idx];
	const struct pd_island *isl = pol->isl;
	int64_t cur = isl->opps[twin_policy_opp(pol)].freq_khz;
	switch (n->attr) {
	case CF_AFFECTED:
	case CF_RELATED:
		for (size_t c = 0; c < isl->n_cpus; c++)
			pd_buf_printf(o, "%s%d", c ? " " : "", isl->cpus[c]);
		pd_buf_printf(o, "\n");
		break;
	case CF_INFO_MIN: pd_buf_printf(o, "%lld\n", (long long)isl->opps[0].freq_khz); break;
	case CF_INFO_MAX: pd_buf_printf(o, "%lld\n", (long long)isl->opps[isl->n_opps - 1].freq_khz); break;
	case CF_INFO_CUR:
	case CF_CUR: pd_buf_printf(o, "%lld\n", (long long)cur); break;
	case CF_LATENCY: pd_buf_printf(o, "100000\n"); break;
	case CF_AVAIL_FREQS:
		for (size_t j = 0; j < isl->n_opps; j++)
			pd_buf_printf(o, "%lld ", (long long)isl->opps[j].freq_khz);
		pd_buf_printf(o, "\n"); /* the kernel leaves a trailing space too */
		break;
	case CF_AVAIL_GOVS:
		for (int g = 0; cpufreq_govs[g]; g++)
			pd_buf_printf(o, "%s ", cpufreq_govs[g]);
		pd_buf_printf(o, "\n");
		break;
	case CF_DRIVER: pd_buf_printf(o, "powerdag-twin\n"); break;
	case CF_GOV: pd_buf_printf(o, "%s\n", gov_name(pol->gov)); break;
	case CF_MIN: pd_buf_printf(o, "%lld\n", (long long)pol->min_khz); break;
	case CF_MAX: pd_buf_printf(o, "%lld\n", (long long)pol->max_khz); break;
	case CF_SETSPEED:
		if (pol->gov == TW_GOV_USERSPACE)
			pd_buf_printf(o, "%lld\n", (long long)pol->set_khz);
		else
			pd_buf_printf(o, "<unsupported>\n");
		break;
	}
	pthread_mutex_unlock(&m->mu);
	return 0;
}

static bool is_opp(const struct pd_opp *o, size_t n, int64_t khz)
{
	for (size_t j = 0; j < n; j++)
		if (o[j].freq_khz == khz)
			return true;
	return false;
}

static int wr_cpufreq(twin_model *m, const struct twin_node *n, const char *s)
{
	uint64_t v = 0;
	int rc = 0;
	pthread_mutex_lock(&m->mu);
	struct twin_policy *pol = &m->pol[n->idx];
	if (n->attr == CF_GOV) {
		int g = match_word(s, cpufreq_govs);
		if (g < 0) {
			rc = -EINVAL;
		} else {
			if (gov_of[g] == TW_GOV_USERSPACE && pol->gov != TW_GOV_USERSPACE)
				pol->set_khz = pol->isl->opps[twin_policy_opp(pol)].freq_khz; /* starts at cur */
			pol->gov = gov_of[g];
		}
	} else if ((rc = parse_u64(s, 10, &v)) != 0 || v > INT32_MAX) {
		rc = -EINVAL;
	} else if (n->attr == CF_SETSPEED) {
		/* Stricter than the kernel's RELATION_L rounding on purpose: a frequency the board does
		 * not offer is a deployer bug the twin must surface. */
		if (pol->gov != TW_GOV_USERSPACE || !is_opp(pol->isl->opps, pol->isl->n_opps, (int64_t)v))
			rc = -EINVAL;
		else
			pol->set_khz = (int64_t)v;
	} else if (n->attr == CF_MIN) {
		pol->min_khz = (int64_t)v; /* freq-QoS request: any value, resolved at use */
	} else {
		pol->max_khz = (int64_t)v;
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

/* ---------------------------------------------------------------- devfreq */

static int rd_devfreq(twin_model *m, const struct twin_node *n, pd_buf *o)
{
	pthread_mutex_lock(&m->mu);
	const struct twin_accel *ac = &m->acc[n->idx];
	int64_t cur_hz = ac->a->opps[twin_gpu_opp(ac)].freq_khz * 1000;
	switch (n->attr) {
	case DF_AVAIL_FREQS:
		for (size_t j = 0; j < ac->a->n_opps; j++)
			pd_buf_printf(o, "%s%lld", j ? " " : "", (long long)ac->a->opps[j].freq_khz * 1000);
		pd_buf_printf(o, "\n");
		break;
	case DF_AVAIL_GOVS:
		for (int g = 0; devfreq_govs[g]; g++)
			pd_buf_printf(o, "%s%s", g ? " " : "", devfreq_govs[g]);
		pd_buf_printf(o, "\n");
		break;
	case DF_GOV: pd_buf_printf(o, "%s\n", gov_name(ac->gov)); break;
	case DF_CUR:
	case DF_TARGET: pd_buf_printf(o, "%lld\n", (long long)cur_hz); break;
	case DF_MIN: pd_buf_printf(o, "%lld\n", (long long)ac->min_hz); break;
	case DF_MAX: pd_buf_printf(o, "%lld\n", (long long)ac->max_hz); break;
	case DF_POLL: pd_buf_printf(o, "50\n"); break;
	case DF_SET: pd_buf_printf(o, "%lld\n", (long long)ac->set_hz); break;
	}
	pthread_mutex_unlock(&m->mu);
	return 0;
}

static int wr_devfreq(twin_model *m, const struct twin_node *n, const char *s)
{
	uint64_t v = 0;
	int rc = 0;
	pthread_mutex_lock(&m->mu);
	struct twin_accel *ac = &m->acc[n->idx];
	if (n->attr == DF_GOV) {
		int g = match_word(s, devfreq_govs);
		if (g < 0)
			rc = -EINVAL;
		else
			ac->gov = gov_of[g];
	} else if (parse_u64(s, 10, &v) != 0 || v > (uint64_t)INT64_MAX / 2) {
		rc = -EINVAL;
	} else if (n->attr == DF_SET) {
		if (ac->gov != TW_GOV_USERSPACE)
			rc = -EINVAL;
		else
			ac->set_hz = (int64_t)v;
	} else if (n->attr == DF_MIN) {
		ac->min_hz = (int64_t)v; /* devfreq PM-QoS: any value, clamped to the OPPs at use */
	} else {
		/* 0 removes the max request, as in the kernel */
		ac->max_hz = v ? (int64_t)v : ac->a->opps[ac->a->n_opps - 1].freq_khz * 1000;
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

/* ---------------------------------------------------------------- FPGA manager */

static int rd_fpga(twin_model *m, const struct twin_node *n, pd_buf *o)
{
	pthread_mutex_lock(&m->mu);
	const struct twin_accel *ac = &m->acc[n->idx];
	if (n->attr == FM_NAME)
		pd_buf_printf(o, "powerdag-twin FPGA Manager\n");
	else if (n->attr == FM_STATE)
		pd_buf_printf(o, "%s\n", ac->state);
	else
		pd_buf_printf(o, "%lx\n", ac->flags);
	pthread_mutex_unlock(&m->mu);
	return 0;
}

static int wr_fpga(twin_model *m, const struct twin_node *n, const char *s)
{
	if (n->attr == FM_FLAGS) {
		uint64_t v;
		if (parse_u64(s, 16, &v) != 0)
			return -EINVAL;
		pthread_mutex_lock(&m->mu);
		m->acc[n->idx].flags = (unsigned long)v;
		pthread_mutex_unlock(&m->mu);
		return 0;
	}
	char name[128];
	size_t len = strcspn(s, "\n");
	if (len == 0 || len >= sizeof(name))
		return -EINVAL;
	memcpy(name, s, len);
	name[len] = 0;
	return twin_fpga_load(m, n->idx, name); /* blocks for the reconfiguration time */
}

/* ---------------------------------------------------------------- fair server */

static int rd_fair(twin_model *m, const struct twin_node *n, pd_buf *o)
{
	pthread_mutex_lock(&m->mu);
	int64_t v = n->attr == FS_RUNTIME ? m->fair_runtime_ns[n->idx] : m->fair_period_ns[n->idx];
	pthread_mutex_unlock(&m->mu);
	pd_buf_printf(o, "%lld\n", (long long)v);
	return 0;
}

static int wr_fair(twin_model *m, const struct twin_node *n, const char *s)
{
	uint64_t v;
	if (parse_u64(s, 10, &v) != 0 || v > (uint64_t)INT64_MAX)
		return -EINVAL;
	int rc = 0;
	pthread_mutex_lock(&m->mu);
	int64_t rt = m->fair_runtime_ns[n->idx], per = m->fair_period_ns[n->idx];
	if (n->attr == FS_RUNTIME)
		rt = (int64_t)v;
	else
		per = (int64_t)v;
	/* sched_fair_server_write(): runtime <= period, 100us <= period <= 2^22 us */
	if (rt > per || per < 100 * PD_NS_PER_US || per > (1LL << 22) * PD_NS_PER_US)
		rc = -EINVAL;
	else
		m->fair_runtime_ns[n->idx] = rt, m->fair_period_ns[n->idx] = per;
	pthread_mutex_unlock(&m->mu);
	return rc;
}

/* ---------------------------------------------------------------- IIO power rails (ina226) */

static const char *const it_avail[] = {"0.000140", "0.000204", "0.000332", "0.000588", "0.001100",
				       "0.002116", "0.004156", "0.008244", NULL};

static int rd_iio(twin_model *m, const struct twin_node *n, pd_buf *o)
{
	struct twin_rail *rl = &m->rails[n->idx];
	struct twin_ina226 v;
	twin_ina226_from_w(twin_model_rail_w(m, n->idx), rl->shunt_uohm, &v);
	switch (n->attr) {
	case IIO_NAME: pd_buf_printf(o, "ina226\n"); break;
	case IIO_LABEL: pd_buf_printf(o, "ina226-%s\n", rl->name); break;
	case IIO_V0_RAW: pd_buf_printf(o, "%ld\n", v.shunt_raw); break;
	case IIO_V0_SCALE: pd_buf_printf(o, "0.002500000\n"); break;
	case IIO_V1_RAW: pd_buf_printf(o, "%ld\n", v.bus_raw); break;
	case IIO_V1_SCALE: pd_buf_printf(o, "1.250000000\n"); break;
	case IIO_V0_IT:
	case IIO_V1_IT: pd_buf_printf(o, "0.001100\n"); break;
	case IIO_P_RAW: pd_buf_printf(o, "%ld\n", v.power_raw); break;
	case IIO_P_SCALE: pd_buf_printf(o, "%.9f\n", v.power_scale); break;
	case IIO_C_RAW: pd_buf_printf(o, "%ld\n", v.current_raw); break;
	case IIO_C_SCALE: pd_buf_printf(o, "%.9f\n", v.current_scale); break;
	case IIO_SF: pd_buf_printf(o, "%d\n", (int)(1e6 / (2 * 1100.0 * rl->oversampling))); break;
	case IIO_OSR: pd_buf_printf(o, "%d\n", rl->oversampling); break;
	case IIO_ASYNC: pd_buf_printf(o, "%d\n", rl->async); break;
	case IIO_SHUNT: pd_buf_printf(o, "%.9f\n", (double)rl->shunt_uohm / 1e6); break;
	case IIO_IT_AVAIL:
		for (int i = 0; it_avail[i]; i++)
			pd_buf_printf(o, "%s%s", i ? " " : "", it_avail[i]);
		pd_buf_printf(o, "\n");
		break;
	}
	return 0;
}

static int wr_iio(twin_model *m, const struct twin_node *n, const char *s)
{
	struct twin_rail *rl = &m->rails[n->idx];
	uint64_t v;
	if (n->attr == IIO_V0_IT || n->attr == IIO_V1_IT) /* only the hardware's conversion time */
		return match_word(s, it_avail) == 4 ? 0 : -EINVAL;
	if (parse_u64(s, 10, &v) != 0)
		return -EINVAL;
	pthread_mutex_lock(&m->mu);
	int rc = 0;
	if (n->attr == IIO_ASYNC && v <= 1)
		rl->async = (int)v;
	else if (n->attr == IIO_OSR && (v == 1 || v == 4 || v == 16 || v == 64 || v == 128 || v == 256 || v == 512 ||
					 v == 1024))
		rl->oversampling = (int)v;
	else
		rc = -EINVAL;
	pthread_mutex_unlock(&m->mu);
	return rc;
}

/* ---------------------------------------------------------------- accelerator runs */

static int rd_accel(twin_model *m, const struct twin_node *n, pd_buf *o)
{
	pthread_mutex_lock(&m->mu);
	const struct twin_accel *ac = &m->acc[n->idx];
	pd_buf_printf(o, "runs=%llu busy_ns=%lld\n", (unsigned long long)ac->runs, (long long)ac->busy_ns);
	pthread_mutex_unlock(&m->mu);
	return 0;
}

/* "latency_ns=N [power_uw=P] [bitstream=NAME]" (docs/TWIN.md). */
static int wr_accel(twin_model *m, const struct twin_node *n, const char *s)
{
	int64_t lat = -1, pw = 0;
	char bits[128] = "";
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", s);
	char *save = NULL;
	for (char *t = strtok_r(buf, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
		uint64_t v;
		if (strncmp(t, "latency_ns=", 11) == 0 && parse_u64(t + 11, 10, &v) == 0 && v <= 60 * PD_NS_PER_S)
			lat = (int64_t)v;
		else if (strncmp(t, "power_uw=", 9) == 0 && parse_u64(t + 9, 10, &v) == 0 && v <= 1000 * 1000000LL)
			pw = (int64_t)v;
		else if (strncmp(t, "bitstream=", 10) == 0 && strlen(t + 10) < sizeof(bits))
			snprintf(bits, sizeof(bits), "%s", t + 10);
		else
			return -EINVAL;
	}
	if (lat < 0)
		return -EINVAL;
	return twin_accel_run(m, n->idx, lat, pw, bits[0] ? bits : NULL);
}

/* ---------------------------------------------------------------- /proc/stat */

static int rd_procstat(twin_model *m, const struct twin_node *n, pd_buf *o)
{
	return twin_model_read_proc_stat(m, o);
}

/* ---------------------------------------------------------------- the table */

static struct twin_node *find(twin_model *m, const char *path)
{
	for (size_t i = 0; i < m->n_nodes; i++)
		if (strcmp(m->nodes[i].path, path) == 0)
			return &m->nodes[i];
	return NULL;
}

static int add(twin_model *m, const char *path, unsigned mode, twin_read_fn rd, twin_write_fn wr, size_t idx, int attr);

static int add_dirs(twin_model *m, const char *path)
{
	char d[TWIN_PATH];
	snprintf(d, sizeof(d), "%s", path);
	char *slash = strrchr(d, '/');
	if (!slash || slash == d)
		return 0;
	*slash = 0;
	if (find(m, d))
		return 0;
	return add(m, d, 0755, NULL, NULL, 0, -1);
}

static int add(twin_model *m, const char *path, unsigned mode, twin_read_fn rd, twin_write_fn wr, size_t idx, int attr)
{
	if (strlen(path) >= TWIN_PATH || add_dirs(m, path) != 0)
		return -1;
	if (m->n_nodes == m->cap_nodes) {
		size_t cap = m->cap_nodes ? 2 * m->cap_nodes : 256;
		struct twin_node *v = realloc(m->nodes, cap * sizeof(*v));
		if (!v)
			return -1;
		m->nodes = v, m->cap_nodes = cap;
	}
	struct twin_node *n = &m->nodes[m->n_nodes++];
	memset(n, 0, sizeof(*n));
	snprintf(n->path, sizeof(n->path), "%s", path);
	n->kind = attr < 0 ? TWIN_DIR : TWIN_FILE;
	n->mode = mode, n->rd = rd, n->wr = wr, n->idx = idx, n->attr = attr;
	return 0;
}

struct attr_def {
	const char *name;
	unsigned mode;
	int attr;
};

static int add_group(twin_model *m, const char *dir, const struct attr_def *defs, twin_read_fn rd, twin_write_fn wr,
		     size_t idx)
{
	char p[TWIN_PATH * 2];
	for (const struct attr_def *d = defs; d->name; d++) {
		snprintf(p, sizeof(p), "%s/%s", dir, d->name);
		if (add(m, p, d->mode, d->mode & 0444 ? rd : NULL, d->mode & 0222 ? wr : NULL, idx, d->attr) != 0)
			return -1;
	}
	return 0;
}

static const struct attr_def cpufreq_attrs[] = {
	{"affected_cpus", 0444, CF_AFFECTED}, {"related_cpus", 0444, CF_RELATED},
	{"cpuinfo_min_freq", 0444, CF_INFO_MIN}, {"cpuinfo_max_freq", 0444, CF_INFO_MAX},
	{"cpuinfo_cur_freq", 0400, CF_INFO_CUR}, {"cpuinfo_transition_latency", 0444, CF_LATENCY},
	{"scaling_available_frequencies", 0444, CF_AVAIL_FREQS},
	{"scaling_available_governors", 0444, CF_AVAIL_GOVS}, {"scaling_driver", 0444, CF_DRIVER},
	{"scaling_governor", 0644, CF_GOV}, {"scaling_cur_freq", 0444, CF_CUR}, {"scaling_min_freq", 0644, CF_MIN},
	{"scaling_max_freq", 0644, CF_MAX}, {"scaling_setspeed", 0644, CF_SETSPEED}, {NULL, 0, 0},
};
static const struct attr_def devfreq_attrs[] = {
	{"available_frequencies", 0444, DF_AVAIL_FREQS}, {"available_governors", 0444, DF_AVAIL_GOVS},
	{"governor", 0644, DF_GOV}, {"cur_freq", 0444, DF_CUR}, {"target_freq", 0444, DF_TARGET},
	{"min_freq", 0644, DF_MIN}, {"max_freq", 0644, DF_MAX}, {"polling_interval", 0444, DF_POLL},
	{"userspace/set_freq", 0644, DF_SET}, {NULL, 0, 0},
};
static const struct attr_def fpga_attrs[] = {
	{"name", 0444, FM_NAME}, {"state", 0444, FM_STATE}, {"firmware", 0200, FM_FIRMWARE},
	{"flags", 0644, FM_FLAGS}, {NULL, 0, 0},
};
static const struct attr_def fair_attrs[] = {{"runtime", 0644, FS_RUNTIME}, {"period", 0644, FS_PERIOD}, {NULL, 0, 0}};
static const struct attr_def iio_attrs[] = {
	{"name", 0444, IIO_NAME}, {"label", 0444, IIO_LABEL}, {"in_voltage0_raw", 0444, IIO_V0_RAW},
	{"in_voltage0_scale", 0444, IIO_V0_SCALE}, {"in_voltage0_integration_time", 0644, IIO_V0_IT},
	{"in_voltage1_raw", 0444, IIO_V1_RAW}, {"in_voltage1_scale", 0444, IIO_V1_SCALE},
	{"in_voltage1_integration_time", 0644, IIO_V1_IT}, {"in_power2_raw", 0444, IIO_P_RAW},
	{"in_power2_scale", 0444, IIO_P_SCALE}, {"in_current3_raw", 0444, IIO_C_RAW},
	{"in_current3_scale", 0444, IIO_C_SCALE}, {"in_sampling_frequency", 0444, IIO_SF},
	{"in_oversampling_ratio", 0644, IIO_OSR}, {"in_allow_async_readout", 0644, IIO_ASYNC},
	{"in_shunt_resistor", 0444, IIO_SHUNT}, {"integration_time_available", 0444, IIO_IT_AVAIL}, {NULL, 0, 0},
};
static const struct attr_def accel_attrs[] = {{"run", 0644, AC_RUN}, {NULL, 0, 0}};

static double rail_max_w(const twin_model *m, const struct twin_rail *r)
{
	if (r->kind == TW_RAIL_ISLAND) {
		const struct pd_island *isl = m->pol[r->idx].isl;
		return (double)isl->n_cpus * (double)isl->opps[isl->n_opps - 1].busy_uw / 1e6;
	}
	if (r->kind == TW_RAIL_ACCEL) {
		const struct pd_accelerator *a = m->acc[r->idx].a;
		if (a->kind == PD_ACCEL_GPU)
			return (double)a->opps[a->n_opps - 1].busy_uw / 1e6;
		return (double)a->idle_uw / 1e6 + 5.0; /* bitstream power is per task: leave room */
	}
	return (double)pd_platform_base_uw(m->p) / 1e6;
}

static int build_rails(twin_model *m)
{
	m->n_rails = m->n_pol + m->n_acc + 1;
	m->rails = calloc(m->n_rails, sizeof(*m->rails));
	if (!m->rails)
		return -1;
	for (size_t r = 0; r < m->n_rails; r++) {
		struct twin_rail *rl = &m->rails[r];
		if (r < m->n_pol)
			rl->kind = TW_RAIL_ISLAND, rl->idx = r, rl->name = m->pol[r].isl->name;
		else if (r < m->n_pol + m->n_acc)
			rl->kind = TW_RAIL_ACCEL, rl->idx = r - m->n_pol, rl->name = m->acc[r - m->n_pol].a->name;
		else
			rl->kind = TW_RAIL_BOARD, rl->name = "board";
		rl->shunt_uohm = twin_shunt_for(rail_max_w(m, rl));
		rl->oversampling = 4;
	}
	return 0;
}

int twin_tree_build(twin_model *m, pd_err *e)
{
	char dir[TWIN_PATH];
	int rc = build_rails(m);
	for (size_t k = 0; rc == 0 && k < m->n_pol; k++) {
		snprintf(dir, sizeof(dir), "/cpufreq/%s", m->pol[k].isl->policy);
		rc = add_group(m, dir, cpufreq_attrs, rd_cpufreq, wr_cpufreq, k);
	}
	for (size_t a = 0; rc == 0 && a < m->n_acc; a++) {
		const struct twin_accel *ac = &m->acc[a];
		if (ac->a->kind == PD_ACCEL_GPU && ac->a->devfreq) {
			snprintf(dir, sizeof(dir), "/class/devfreq/%s", ac->a->devfreq);
			rc = add_group(m, dir, devfreq_attrs, rd_devfreq, wr_devfreq, a);
		} else if (ac->a->kind == PD_ACCEL_FPGA) {
			snprintf(dir, sizeof(dir), "/class/fpga_manager/%s", ac->manager);
			rc = add_group(m, dir, fpga_attrs, rd_fpga, wr_fpga, a);
		}
		snprintf(dir, sizeof(dir), "/twin/accel/%s", ac->a->name);
		if (rc == 0)
			rc = add_group(m, dir, accel_attrs, rd_accel, wr_accel, a);
	}
	for (int c = 0; rc == 0 && c < m->n_cpus; c++) {
		snprintf(dir, sizeof(dir), "/debug/sched/fair_server/cpu%d", c);
		rc = add_group(m, dir, fair_attrs, rd_fair, wr_fair, (size_t)c);
	}
	for (size_t r = 0; rc == 0 && r < m->n_rails; r++) {
		snprintf(dir, sizeof(dir), "/bus/iio/devices/iio:device%zu", r);
		rc = add_group(m, dir, iio_attrs, rd_iio, wr_iio, r);
	}
	if (rc == 0)
		rc = add(m, "/proc/stat", 0444, rd_procstat, NULL, 0, 0);
	/* the mount points exist even when empty (no GPU / no FPGA) */
	const char *const always[] = {"/class/devfreq", "/class/fpga_manager", "/twin/accel", "/bus/iio/devices"};
	for (size_t i = 0; rc == 0 && i < sizeof(always) / sizeof(always[0]); i++)
		if (!find(m, always[i]))
			rc = add(m, always[i], 0755, NULL, NULL, 0, -1);
	if (rc != 0)
		return pd_err_set(e, PD_EXIT_ENV, "twin: cannot build the file tree (out of memory or name too long)");
	return 0;
}

/* ---------------------------------------------------------------- file API */

int twin_model_stat(twin_model *m, const char *path, struct twin_stat *st)
{
	if (strcmp(path, "/") == 0) {
		st->kind = TWIN_DIR, st->mode = 0755;
		return 0;
	}
	const struct twin_node *n = find(m, path);
	if (!n)
		return -ENOENT;
	st->kind = n->kind, st->mode = n->mode;
	return 0;
}

int twin_model_list(twin_model *m, const char *dir, void (*fn)(const char *name, void *arg), void *arg)
{
	struct twin_stat st;
	if (twin_model_stat(m, dir, &st) != 0)
		return -ENOENT;
	if (st.kind != TWIN_DIR)
		return -ENOTDIR;
	size_t dl = strcmp(dir, "/") == 0 ? 0 : strlen(dir);
	for (size_t i = 0; i < m->n_nodes; i++) {
		const char *p = m->nodes[i].path;
		if (strncmp(p, dir, dl) == 0 && p[dl] == '/' && !strchr(p + dl + 1, '/'))
			fn(p + dl + 1, arg);
	}
	return 0;
}

int twin_model_read(twin_model *m, const char *path, pd_buf *out)
{
	const struct twin_node *n = find(m, path);
	if (!n)
		return -ENOENT;
	if (n->kind == TWIN_DIR)
		return -EISDIR;
	if (!n->rd)
		return -EACCES;
	return n->rd(m, n, out);
}

int twin_model_write(twin_model *m, const char *path, const char *data, size_t len)
{
	const struct twin_node *n = find(m, path);
	if (!n)
		return -ENOENT;
	if (n->kind == TWIN_DIR)
		return -EISDIR;
	if (!n->wr)
		return -EACCES;
	if (len >= 4096)
		return -EINVAL; /* a sysfs store is at most one page */
	char s[4096];
	memcpy(s, data, len);
	s[len] = 0;
	if (strlen(s) != len)
		return -EINVAL;
	return n->wr(m, n, s);
}
