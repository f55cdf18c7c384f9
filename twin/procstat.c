/* SPDX-License-Identifier: MIT */
/*
 * The board's /proc/stat (LXCFS-style): what a real board's kernel would count, computed when read.
 *
 * Programs on the board (the agent, over the twin's sshd) read per-CPU busy time from /proc/stat. The
 * host's file counts every host process; the twin's rails count only the board's cpuacct cgroup
 * (proc.c, model.c). So that the agent's busy figures count what the rails count, the namespace twin
 * binds this file over /proc/stat (daemon.c):
 *
 *   cpuN  (each twin core = its host CPU id, ascending):
 *         user   = the board cgroup's CPU time on N (cpuacct.usage_percpu: the figure the rails use),
 *                  less its system share; system = that time x usage_percpu_sys / (user + sys) of
 *                  the cgroup (those two are tick-sampled and do not add up to usage_percpu, so they
 *                  give the split only); nice iowait irq softirq guest guest_nice = 0;
 *         steal  = the host's steal of N;
 *         idle   = the time since the host booted (CLOCK_MONOTONIC, the clock of the kernel's NO_HZ idle
 *                  counters) - user - system - steal, at least 0: the time the board did not run,
 *                  as exact as the board's CPU time (the host's own idle counter would also leave
 *                  out the time host processes ran, and its user..steal ticks alias with short
 *                  periodic jobs: agents/steal.c takes busy = elapsed - idle - iowait - steal);
 *   cpu   = the sum of the cpuN lines;
 *   every other line (intr, ctxt, btime, processes, procs_running, procs_blocked, softirq) = the host's.
 *
 * Units: USER_HZ ticks (sysconf(_SC_CLK_TCK)), as the kernel's. No counter ever goes back between two
 * reads (a reader takes differences): each is the largest value shown so far (each is truncated to
 * whole ticks on its own, so idle may be a tick short for a read and then stays where it was).
 */
#include "twin/model_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ns -> USER_HZ ticks without overflow (ns * hz would overflow past ~5.8 years of CPU time). */
static uint64_t ns_to_ticks(uint64_t ns, long hz)
{
	return ns / PD_NS_PER_S * (uint64_t)hz + ns % PD_NS_PER_S * (uint64_t)hz / PD_NS_PER_S;
}

void twin_procstat_split(uint64_t usage_ns, uint64_t user_part, uint64_t sys_part, uint64_t *user_ns,
			 uint64_t *sys_ns)
{
	uint64_t sum = user_part + sys_part;
	/* long double: usage (up to 2^64) x sys_part would overflow 64 bits */
	uint64_t sys = sum ? (uint64_t)((long double)usage_ns * (long double)sys_part / (long double)sum) : 0;
	if (sys > usage_ns)
		sys = usage_ns;
	*sys_ns = sys;
	*user_ns = usage_ns - sys;
}

/* The host's counter of one CPU line ("cpuN v1 v2 ...") that the board shows: steal. */
struct host_cpu {
	uint64_t steal;
};

/* Parses the host's cpuN lines into h[0..TWIN_MAX_CPUS-1] (a CPU offline on the host has no line:
 * its steal reads 0, so the board's steal stays where it was); 0, or -1 when the text has no cpu line. */
static int parse_host(const char *text, size_t len, struct host_cpu *h)
{
	memset(h, 0, TWIN_MAX_CPUS * sizeof(*h));
	bool any = false;
	for (const char *p = text, *end = text + len; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);
		char line[512];
		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), p);
		p += n + 1;
		unsigned cpu;
		unsigned long long v[8] = {0};
		if (strncmp(line, "cpu", 3) != 0)
			continue;
		any = true;
		if (line[3] < '0' || line[3] > '9')
			continue; /* the aggregate: ours is the sum of our own lines */
		int k = sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3],
			       &v[4], &v[5], &v[6], &v[7]);
		if (k < 5 || cpu >= TWIN_MAX_CPUS)
			continue; /* kernels before 2.6.11 had no steal: missing fields read 0 */
		h[cpu].steal = v[7];
	}
	return any ? 0 : -1;
}

/* Raises *shown to v when v is larger; returns the value to show. */
static uint64_t keep_max(uint64_t *shown, uint64_t v)
{
	if (v > *shown)
		*shown = v;
	return *shown;
}

static void put_line(pd_buf *out, const char *label, const uint64_t f[4])
{
	/* user nice system idle iowait irq softirq steal guest guest_nice */
	pd_buf_printf(out, "%s %llu 0 %llu %llu 0 0 0 %llu 0 0\n", label, (unsigned long long)f[0],
		      (unsigned long long)f[1], (unsigned long long)f[2], (unsigned long long)f[3]);
}

int twin_procstat_render(const struct twin_procstat_in *in, struct twin_procstat_mono *mono, pd_buf *out)
{
	struct host_cpu *h = calloc(TWIN_MAX_CPUS, sizeof(*h));
	if (!h)
		return -ENOMEM;
	if (in->hz <= 0 || parse_host(in->host, in->host_len, h) != 0) {
		free(h);
		return -EIO;
	}
	uint64_t lines[TWIN_MAX_CPUS][4], sum[4] = {0};
	size_t n = 0;
	for (int c = 0; c < TWIN_MAX_CPUS; c++) {
		if (!in->core[c])
			continue;
		uint64_t user_ns = (size_t)c < in->n_acct ? in->user_ns[c] : 0;
		uint64_t sys_ns = (size_t)c < in->n_acct ? in->sys_ns[c] : 0;
		uint64_t sys = ns_to_ticks(sys_ns, in->hz), user = ns_to_ticks(user_ns + sys_ns, in->hz) - sys;
		uint64_t steal = h[c].steal, used = user + sys + steal, up = ns_to_ticks(in->now_ns, in->hz);
		uint64_t idle = up > used ? up - used : 0;
		uint64_t *f = lines[n++];
		f[0] = keep_max(&mono->user[c], user);
		f[1] = keep_max(&mono->sys[c], sys);
		f[2] = keep_max(&mono->idle[c], idle);
		f[3] = keep_max(&mono->steal[c], steal);
		for (int i = 0; i < 4; i++)
			sum[i] += f[i];
	}
	put_line(out, "cpu ", sum); /* the kernel's aggregate label is "cpu" and two spaces */
	n = 0;
	for (int c = 0; c < TWIN_MAX_CPUS; c++) {
		char label[16];
		if (!in->core[c])
			continue;
		snprintf(label, sizeof(label), "cpu%d", c);
		put_line(out, label, lines[n++]);
	}
	/* the host's other lines, as they are and in their order */
	for (const char *p = in->host, *end = in->host + in->host_len; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t len = eol ? (size_t)(eol - p) : (size_t)(end - p);
		if (len && !(len >= 3 && memcmp(p, "cpu", 3) == 0)) {
			pd_buf_append(out, p, len);
			pd_buf_append(out, "\n", 1);
		}
		p += len + 1;
	}
	free(h);
	return 0;
}

/* ---------------------------------------------------------------- the daemon's sources */

void twin_model_serve_proc_stat(twin_model *m, int host_fd, const char *acct_dir)
{
	pthread_mutex_lock(&m->stat_mu);
	m->stat_fd = host_fd;
	snprintf(m->stat_acct, sizeof(m->stat_acct), "%s", acct_dir);
	pthread_mutex_unlock(&m->stat_mu);
}

/* The whole host file through fd: pread from offset 0 makes /proc/stat's seq_file regenerate it. */
static int read_host(int fd, pd_buf *b)
{
	char chunk[8192];
	for (off_t off = 0;;) {
		ssize_t r = pread(fd, chunk, sizeof(chunk), off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -EIO;
		if (r == 0)
			return 0;
		if (pd_buf_append(b, chunk, (size_t)r) != 0)
			return -ENOMEM;
		off += r;
	}
}

int twin_model_read_proc_stat(twin_model *m, pd_buf *out)
{
	uint64_t usage[TWIN_MAX_CPUS], upart[TWIN_MAX_CPUS], spart[TWIN_MAX_CPUS];
	uint64_t user[TWIN_MAX_CPUS], sys[TWIN_MAX_CPUS];
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	struct twin_procstat_in in = {.user_ns = user, .sys_ns = sys, .n_acct = TWIN_MAX_CPUS,
				      .hz = sysconf(_SC_CLK_TCK),
				      .now_ns = (uint64_t)now.tv_sec * PD_NS_PER_S + (uint64_t)now.tv_nsec};
	for (size_t k = 0; k < m->n_pol; k++)
		for (size_t c = 0; c < m->pol[k].isl->n_cpus; c++)
			in.core[m->pol[k].isl->cpus[c]] = true; /* < TWIN_MAX_CPUS: twin_model_new checks */
	pd_buf host;
	pd_buf_init(&host);
	/* one reader at a time: the monotonic state, and one fd whose file position pread leaves alone */
	pthread_mutex_lock(&m->stat_mu);
	int rc = m->stat_fd < 0 ? -ENODEV : 0; /* the daemon serves it only with the board's cgroup */
	if (rc == 0 && (twin_acct_read_ns(m->stat_acct, "cpuacct.usage_percpu", usage, TWIN_MAX_CPUS) != 0))
		rc = -EIO;
	/* without the user/system split (older kernels) all of it is user time */
	bool split = rc == 0 && twin_acct_read_ns(m->stat_acct, "cpuacct.usage_percpu_user", upart, TWIN_MAX_CPUS) == 0 &&
		     twin_acct_read_ns(m->stat_acct, "cpuacct.usage_percpu_sys", spart, TWIN_MAX_CPUS) == 0;
	for (size_t c = 0; rc == 0 && c < TWIN_MAX_CPUS; c++)
		twin_procstat_split(usage[c], split ? upart[c] : 1, split ? spart[c] : 0, &user[c], &sys[c]);
	if (rc == 0)
		rc = read_host(m->stat_fd, &host);
	if (rc == 0) {
		in.host = host.data, in.host_len = host.len;
		rc = twin_procstat_render(&in, &m->stat_mono, out);
	}
	pthread_mutex_unlock(&m->stat_mu);
	pd_buf_free(&host);
	return rc;
}
