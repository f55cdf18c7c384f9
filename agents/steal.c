/* SPDX-License-Identifier: MIT */
/*
 * Host steal: the time a hypervisor kept a vCPU of the plan from running. It is outside the model
 * (docs/MODEL.md) and a reservation cannot prevent it, so the run log says how much there was and
 * when (STEAL records, docs/RUNLOG.md), and the report tells misses during steal from the others.
 *
 * Busy time, from the same read: the CPU time everything (the jobs, this agent's sampler and writer,
 * iiod, sshd, interrupts) ran on each CPU of the plan, user + nice + system + irq + softirq (BUSY
 * records). A power rail measures all of it, the JOB records only the jobs: the report needs both to
 * tell a wrong power table from the board's other software.
 *
 * Source: the steal column of /proc/stat (the 8th value after "cpuN", USER_HZ ticks: 10 ms on most
 * kernels, so a steal shorter than a tick shows only once the counter crosses the next tick); busy: the
 * 1st, 2nd, 3rd, 6th and 7th values of the same line. No
 * thread of its own: the agent's main thread, which waits for the end of the run anyway (SCHED_OTHER,
 * below every reservation), samples every PD_AGENT_STEAL_PERIOD_NS (run.c), once at t0 (the
 * baseline) and once at the end. One sample is one lseek + read of /proc/stat and a parse of its cpu
 * lines; a record is queued only when a counter moved, so a host that steals nothing costs the log
 * nothing (and a CPU idle for a whole period writes no BUSY record).
 */
#include "agents/steal_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEAL_MAX_CPU 1024 /* the agent's own limit on CPU ids (run.c check_cpus) */
#define STEAL_FIELD 8      /* steal is the 8th counter: user nice system idle iowait irq softirq steal */
/* busy = user + nice + system + irq + softirq (bit k-1: the k-th counter); guest is inside user already,
 * idle and iowait are not busy, steal is not this CPU's work */
#define BUSY_FIELDS ((1u << 0) | (1u << 1) | (1u << 2) | (1u << 5) | (1u << 6))

struct pd_steal {
	int fd;
	char *buf;
	size_t cap;
	int cpus[STEAL_MAX_CPU];
	size_t n;
	uint64_t *ticks, *cur;          /* steal counters: previous sample, this one */
	uint64_t *busy, *busy_cur;      /* busy counters: previous sample, this one */
	int64_t *since; /* time of each CPU's previous sample: a record (STEAL or BUSY) covers (since, t] */
	bool based;     /* the baseline was read */
	int64_t hz; /* USER_HZ: ns = ticks * PD_NS_PER_S / hz */
};

static const char *skip_spaces(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* Unsigned decimal at p; NULL when there is none (end of line or a non-digit). */
static const char *parse_u64(const char *p, const char *end, uint64_t *v)
{
	p = skip_spaces(p, end);
	if (p == end || *p < '0' || *p > '9')
		return NULL;
	uint64_t x = 0;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		x = x > (UINT64_MAX - 9) / 10 ? UINT64_MAX : x * 10 + (uint64_t)(*p - '0'); /* saturate, never wrap */
	*v = x;
	return p;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int steal_parse(const char *text, size_t len, const int *cpus, size_t n, uint64_t *ticks, uint64_t *busy)
{
	short slot[STEAL_MAX_CPU];
	memset(slot, 0xff, sizeof(slot)); /* -1: not watched */
	for (size_t i = 0; i < n; i++) {
		if (cpus[i] < 0 || cpus[i] >= STEAL_MAX_CPU)
			return -1;
		slot[cpus[i]] = (short)i;
	}
	size_t found = 0;
	const char *p = text, *end = text + len;
	/* the cpu lines come first ("cpu" aggregate, then cpuN of each online CPU): stop after them */
	while (p < end && found < n) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if (eol - p < 4 || memcmp(p, "cpu", 3) != 0)
			break;
		uint64_t id, v = 0, b = 0;
		const char *q = p[3] >= '0' && p[3] <= '9' ? parse_u64(p + 3, eol, &id) : NULL;
		if (q && id < STEAL_MAX_CPU && slot[id] >= 0) {
			int k = 0;
			while (k < STEAL_FIELD && (q = parse_u64(q, eol, &v)) != NULL) {
				if (BUSY_FIELDS & (1u << k))
					b = add_sat(b, v);
				k++;
			}
			if (k < STEAL_FIELD) /* no steal column */
				return -1;
			ticks[slot[id]] = v;
			if (busy)
				busy[slot[id]] = b;
			slot[id] = -1; /* a CPU listed twice counts once */
			found++;
		}
		p = eol + 1;
	}
	return found == n ? 0 : -1;
}

/* Reads the whole file from its start (a seq_file: lseek to 0 regenerates it). -1 on error. */
static ssize_t read_stat(pd_steal *s)
{
	if (lseek(s->fd, 0, SEEK_SET) < 0)
		return -1;
	size_t got = 0;
	while (got < s->cap) {
		ssize_t r = read(s->fd, s->buf + got, s->cap - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	/* a full buffer still holds every cpu line: cap leaves 256 bytes per possible CPU */
	return (ssize_t)got;
}

/* One read, one parse: the steal and busy counters of every watched CPU, of the same instant. */
static int read_ticks(pd_steal *s)
{
	ssize_t len = read_stat(s);
	return len < 0 ? -1 : steal_parse(s->buf, (size_t)len, s->cpus, s->n, s->cur, s->busy_cur);
}

/* Ticks moved since the previous sample, in ns (USER_HZ); the delta, not the counter, is scaled: it
 * stays far below the int64_t limit. */
static int64_t ticks_ns(const pd_steal *s, uint64_t d)
{
	return d > (uint64_t)(PD_RUNLOG_MAX_ABS_NS / PD_NS_PER_S) ? PD_RUNLOG_MAX_ABS_NS : (int64_t)d * PD_NS_PER_S / s->hz;
}

void steal_close(pd_steal *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	free(s->ticks);
	free(s->cur);
	free(s->busy);
	free(s->busy_cur);
	free(s->since);
	free(s);
}

pd_steal *steal_open(const char *proc_stat, const int *cpus, size_t n, pd_err *e)
{
	if (n == 0 || n > STEAL_MAX_CPU) {
		pd_err_set(e, PD_EXIT_USAGE, "steal: %zu CPUs to watch (1..%d)", n, STEAL_MAX_CPU);
		return NULL;
	}
	pd_steal *s = calloc(1, sizeof(*s));
	if (!s) {
		pd_err_set(e, PD_EXIT_ENV, "out of memory");
		return NULL;
	}
	s->fd = open(proc_stat, O_RDONLY | O_CLOEXEC);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	s->cap = 4096 + 256 * (size_t)((ncpu > 0 && ncpu < STEAL_MAX_CPU ? ncpu : STEAL_MAX_CPU) + 1);
	s->buf = malloc(s->cap);
	s->ticks = calloc(n, sizeof(uint64_t));
	s->cur = calloc(n, sizeof(uint64_t));
	s->busy = calloc(n, sizeof(uint64_t));
	s->busy_cur = calloc(n, sizeof(uint64_t));
	s->since = calloc(n, sizeof(int64_t));
	s->hz = sysconf(_SC_CLK_TCK);
	memcpy(s->cpus, cpus, n * sizeof(int));
	s->n = n;
	if (s->fd < 0)
		pd_err_set(e, PD_EXIT_ENV, "cannot open %s: %s", proc_stat, strerror(errno));
	else if (!s->buf || !s->ticks || !s->cur || !s->busy || !s->busy_cur || !s->since)
		pd_err_set(e, PD_EXIT_ENV, "out of memory");
	else if (s->hz <= 0)
		pd_err_set(e, PD_EXIT_ENV, "sysconf(_SC_CLK_TCK) failed");
	else if (read_ticks(s) != 0) /* the probe: the format is known before the header says so */
		pd_err_set(e, PD_EXIT_ENV, "%s has no steal counter for every CPU of the plan", proc_stat);
	else
		return s;
	steal_close(s);
	return NULL;
}

size_t steal_sample(pd_steal *s, int64_t t_ns, struct pd_runlog_ring *ring)
{
	if (read_ticks(s) != 0) /* a transient read error: this sample is skipped, nothing lost */
		return 0;
	size_t queued = 0;
	for (size_t i = 0; i < s->n; i++) {
		uint64_t prev = s->ticks[i], now = s->cur[i];
		if (s->based && now > prev) {
			struct pd_runlog_steal_rec rec = {.from_ns = s->since[i], .t_ns = t_ns, .steal_ns = ticks_ns(s, now - prev),
							  .cpu = s->cpus[i]};
			queued += pd_runlog_put(ring, PD_RUNLOG_STEAL, &rec, sizeof(rec));
		}
		if (s->based && s->busy_cur[i] > s->busy[i]) {
			struct pd_runlog_busy_rec rec = {.from_ns = s->since[i], .t_ns = t_ns,
							 .busy_ns = ticks_ns(s, s->busy_cur[i] - s->busy[i]), .cpu = s->cpus[i]};
			queued += pd_runlog_put(ring, PD_RUNLOG_BUSY, &rec, sizeof(rec));
		}
		/* a counter that went back (never on Linux) is a new baseline, not a negative delta */
		s->ticks[i] = now;
		s->busy[i] = s->busy_cur[i];
		s->since[i] = t_ns;
	}
	s->based = true;
	return queued;
}
