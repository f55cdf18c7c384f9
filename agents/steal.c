/* SPDX-License-Identifier: MIT */
/*
 * Host steal: the time a hypervisor kept a vCPU of the plan from running. It is outside the model
 * (docs/MODEL.md) and a reservation cannot prevent it, so the run log says how much there was and
 * when (STEAL records, docs/RUNLOG.md), and the report tells misses during steal from the others.
 *
 * Busy time, from the same read: the CPU time everything (the jobs, this agent's sampler and writer,
 * iiod, sshd, interrupts) ran on each CPU of the plan (BUSY records). A power rail measures all of it,
 * the JOB records only the jobs: the report needs both to tell a wrong power table from the board's
 * other software. Busy is what the CPU did not spend idle, waiting for I/O or stolen: the elapsed time
 * less idle + iowait + steal since the baseline. Why not user + system: those are sampled at the tick,
 * one whole tick to whatever runs at that instant, and periodic jobs shorter than a tick alias with
 * it (measured on the 2-CPU test VM, 0.5 ms of work every 2 ms for 5 s: user + system 10 ms for
 * 1283 ms of CPU time; 3 ms every 10 ms: 2000 ms for 1513 ms), while with NO_HZ the idle and iowait
 * counters are the exact time the CPU sat in the idle loop (get_cpu_idle_time_us): elapsed - idle
 * - iowait - steal read 1310 and 1530 ms there. Without NO_HZ idle is tick-sampled too, and the
 * difference is as good as user + system were. The counters are in whole ticks, so busy is kept as a
 * running figure since the baseline and a record carries what it grew beyond the largest value
 * recorded so far: the records sum to the true busy time within one tick per CPU, over any run
 * length, and none is negative.
 *
 * Source: the steal column of /proc/stat (the 8th value after "cpuN", USER_HZ ticks: 10 ms on most
 * kernels, so a steal shorter than a tick shows only once the counter crosses the next tick); busy: the
 * 4th and 5th values (idle, iowait) of the same line. No
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
/* not busy: idle + iowait (bit k-1: the k-th counter); steal is subtracted on its own */
#define IDLE_FIELDS ((1u << 3) | (1u << 4))

struct pd_steal {
	int fd;
	char *buf;
	size_t cap;
	int cpus[STEAL_MAX_CPU];
	size_t n;
	uint64_t *ticks, *cur;          /* steal counters: previous sample, this one */
	uint64_t *idle_cur;             /* idle + iowait counters: this sample */
	uint64_t *steal0, *idle0;       /* the baseline's counters */
	int64_t *recorded;              /* busy time recorded so far (BUSY records) */
	int64_t *since; /* time of each CPU's previous sample: a record (STEAL or BUSY) covers (since, t] */
	int64_t t0;     /* the baseline's time */
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

int steal_parse(const char *text, size_t len, const int *cpus, size_t n, uint64_t *ticks, uint64_t *idle)
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
				if (IDLE_FIELDS & (1u << k))
					b = add_sat(b, v);
				k++;
			}
			if (k < STEAL_FIELD) /* no steal column */
				return -1;
			ticks[slot[id]] = v;
			if (idle)
				idle[slot[id]] = b;
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
	return len < 0 ? -1 : steal_parse(s->buf, (size_t)len, s->cpus, s->n, s->cur, s->idle_cur);
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
	free(s->idle_cur);
	free(s->steal0);
	free(s->idle0);
	free(s->recorded);
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
	s->idle_cur = calloc(n, sizeof(uint64_t));
	s->steal0 = calloc(n, sizeof(uint64_t));
	s->idle0 = calloc(n, sizeof(uint64_t));
	s->recorded = calloc(n, sizeof(int64_t));
	s->since = calloc(n, sizeof(int64_t));
	s->hz = sysconf(_SC_CLK_TCK);
	memcpy(s->cpus, cpus, n * sizeof(int));
	s->n = n;
	if (s->fd < 0)
		pd_err_set(e, PD_EXIT_ENV, "cannot open %s: %s", proc_stat, strerror(errno));
	else if (!s->buf || !s->ticks || !s->cur || !s->idle_cur || !s->steal0 || !s->idle0 || !s->recorded || !s->since)
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

/* CPU i's busy time since the baseline, at t_ns: elapsed - (idle + iowait) - steal; it may dip below
 * what was recorded by up to a tick or two (whole-tick counters), never below 0 here. */
static int64_t busy_since_base(const pd_steal *s, size_t i, int64_t t_ns)
{
	uint64_t idle = s->idle_cur[i] > s->idle0[i] ? s->idle_cur[i] - s->idle0[i] : 0;
	uint64_t steal = s->cur[i] > s->steal0[i] ? s->cur[i] - s->steal0[i] : 0;
	int64_t b = (t_ns - s->t0) - ticks_ns(s, idle) - ticks_ns(s, steal);
	return b > 0 ? b : 0;
}

size_t steal_sample(pd_steal *s, int64_t t_ns, struct pd_runlog_ring *ring)
{
	if (read_ticks(s) != 0) /* a transient read error: this sample is skipped, nothing lost */
		return 0;
	if (!s->based) {
		memcpy(s->steal0, s->cur, s->n * sizeof(uint64_t));
		memcpy(s->idle0, s->idle_cur, s->n * sizeof(uint64_t));
		s->t0 = t_ns;
	}
	size_t queued = 0;
	for (size_t i = 0; i < s->n; i++) {
		uint64_t prev = s->ticks[i], now = s->cur[i];
		if (s->based && now > prev) {
			struct pd_runlog_steal_rec rec = {.from_ns = s->since[i], .t_ns = t_ns, .steal_ns = ticks_ns(s, now - prev),
							  .cpu = s->cpus[i]};
			queued += pd_runlog_put(ring, PD_RUNLOG_STEAL, &rec, sizeof(rec));
		}
		int64_t busy = busy_since_base(s, i, t_ns);
		if (s->based && busy > s->recorded[i]) {
			struct pd_runlog_busy_rec rec = {.from_ns = s->since[i], .t_ns = t_ns, .busy_ns = busy - s->recorded[i],
							 .cpu = s->cpus[i]};
			queued += pd_runlog_put(ring, PD_RUNLOG_BUSY, &rec, sizeof(rec));
			s->recorded[i] = busy; /* invariant: recorded = the largest busy figure seen, the records' sum */
		}
		/* a counter that went back (never on Linux) is a new baseline, not a negative delta */
		s->ticks[i] = now;
		s->since[i] = t_ns;
	}
	s->based = true;
	return queued;
}
