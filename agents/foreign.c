/* SPDX-License-Identifier: MIT */
/*
 * Other processes' SCHED_DEADLINE threads on the plan's CPUs.
 *
 * The plan's analysis (optimize, check, simulate) gives each CPU's EDF scheduler the plan's
 * reservations and nothing else but the fair server. A SCHED_DEADLINE thread of another process that
 * may run on one of those CPUs breaks that premise: the kernel admits it if the CPU's root domain has
 * bandwidth left (95 % by default, while a plan may use less), and under EDF its jobs then take turns
 * with the plan's, so the plan can miss although every job fitted its budget. Exclusive cpusets do
 * not keep such a thread out: a thread of the root cpuset whose affinity includes the CPU is admitted
 * into that CPU's root domain (seen on the test VM: a second agent that could not make its own
 * cpusets ran its reservations next to a deploy's, and the deploy missed instances no replay of its
 * own jobs explained).
 *
 * So the agent refuses to start when such a thread exists (foreign_refuse) and, while it runs,
 * scans every PD_AGENT_FOREIGN_PERIOD_NS and records each one it sees (FOREIGN records), which the
 * report matches with the misses. Its own threads are not foreign (self), nor are schedutil's
 * frequency workers (SCHED_FLAG_SUGOV, no bandwidth of their own) or a zero runtime.
 *
 * A scan reads /proc/PID/task and asks the kernel for each thread's policy (sched_getattr) and
 * affinity (sched_getaffinity): a few us per thread, a millisecond for a thousand threads, on the
 * agent's main thread, which is SCHED_OTHER and has nothing else to do meanwhile.
 */
#include "agents/foreign_impl.h"
#include "agents/pd_agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The kernel's flag for schedutil's workers (include/uapi/linux/sched.h: SCHED_FLAG_SUGOV). */
#define SCHED_FLAG_SUGOV_ 0x10000000ULL

struct pd_foreign {
	char proc[256];
	int cpus[PD_RUNLOG_MAX_CPU];
	size_t n;
	struct seen {
		pid_t tid;
		int64_t first_ns;
	} seen[PD_AGENT_FOREIGN_MAX];
	size_t n_seen;
};

static bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* The first of cpus[n] that tid may run on, or -1. */
static int first_plan_cpu(pid_t tid, const int *cpus, size_t n)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(tid, sizeof(set), &set) != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE && CPU_ISSET(cpus[i], &set))
			return cpus[i];
	return -1;
}

static void read_comm(const char *proc, pid_t pid, pid_t tid, char comm[PD_RUNLOG_COMM_LEN])
{
	char path[512];
	memset(comm, 0, PD_RUNLOG_COMM_LEN);
	snprintf(path, sizeof(path), "%s/%d/task/%d/comm", proc, (int)pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t got = read(fd, comm, PD_RUNLOG_COMM_LEN - 1);
	close(fd);
	if (got > 0 && comm[got - 1] == '\n')
		comm[got - 1] = '\0';
}

/* Whether tid is a competing reservation on one of the plan's CPUs; fills t when it is. */
static bool foreign_thread(const char *proc, pid_t pid, pid_t tid, const int *cpus, size_t n, struct pd_foreign_thread *t)
{
	struct pd_agent_sched_attr a;
	memset(&a, 0, sizeof(a));
	if (pd_agent_sched_getattr(tid, &a) != 0 || a.sched_policy != PD_SCHED_DEADLINE || a.sched_runtime == 0 ||
	    (a.sched_flags & SCHED_FLAG_SUGOV_))
		return false;
	int cpu = first_plan_cpu(tid, cpus, n);
	if (cpu < 0)
		return false;
	t->tid = tid;
	t->pid = pid;
	t->cpu = cpu;
	/* the kernel keeps runtime <= deadline <= period; a period of 0 means "the deadline" */
	t->runtime_ns = (int64_t)(a.sched_runtime > (uint64_t)INT64_MAX ? INT64_MAX : a.sched_runtime);
	t->deadline_ns = (int64_t)(a.sched_deadline > (uint64_t)INT64_MAX ? INT64_MAX : a.sched_deadline);
	t->period_ns = a.sched_period ? (int64_t)(a.sched_period > (uint64_t)INT64_MAX ? INT64_MAX : a.sched_period)
				      : t->deadline_ns;
	read_comm(proc, pid, tid, t->comm);
	return true;
}

/* The threads of process pid: adds the foreign ones to out (counting beyond max). */
static void scan_process(const char *proc, pid_t pid, const int *cpus, size_t n, struct pd_foreign_thread *out,
			 size_t max, size_t *found)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%d/task", proc, (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return; /* gone meanwhile */
	struct dirent *te;
	while ((te = readdir(d))) {
		if (!is_number(te->d_name))
			continue;
		struct pd_foreign_thread t;
		if (!foreign_thread(proc, pid, (pid_t)atoi(te->d_name), cpus, n, &t))
			continue;
		if (*found < max)
			out[*found] = t;
		(*found)++;
	}
	closedir(d);
}

size_t foreign_scan(const char *proc, pid_t self, const int *cpus, size_t n, struct pd_foreign_thread *out, size_t max)
{
	DIR *d = opendir(proc);
	if (!d)
		return 0;
	size_t found = 0;
	struct dirent *pe;
	while ((pe = readdir(d))) {
		if (!is_number(pe->d_name))
			continue;
		pid_t pid = (pid_t)atoi(pe->d_name);
		if (pid != self)
			scan_process(proc, pid, cpus, n, out, max, &found);
	}
	closedir(d);
	return found;
}

size_t foreign_problems(const char *proc, const int *cpus, size_t n, pd_buf *problems)
{
	struct pd_foreign_thread t[8];
	size_t k = foreign_scan(proc, getpid(), cpus, n, t, 8);
	for (size_t i = 0; i < k && i < 8; i++) {
		char comm[PD_RUNLOG_COMM_LEN + 1], esc[80];
		memcpy(comm, t[i].comm, PD_RUNLOG_COMM_LEN);
		comm[PD_RUNLOG_COMM_LEN] = '\0';
		pd_buf_printf(problems,
			      "SCHED_DEADLINE thread %d '%s' (process %d) may run on the plan's CPU %d with %.3f ms every "
			      "%.3f ms: its reservation would take turns with the plan's, outside the plan's analysis\n",
			      (int)t[i].tid, pd_esc(comm, esc, sizeof(esc)), (int)t[i].pid, t[i].cpu,
			      (double)t[i].runtime_ns / 1e6, (double)t[i].period_ns / 1e6);
	}
	if (k > 8)
		pd_buf_printf(problems, "%zu more SCHED_DEADLINE threads of other processes on the plan's CPUs\n", k - 8);
	return k;
}

int foreign_refuse(const char *proc, const int *cpus, size_t n, pd_err *e)
{
	pd_buf b;
	pd_buf_init(&b);
	size_t k = foreign_problems(proc, cpus, n, &b);
	int rc = 0;
	if (k) {
		/* one line: the problems' line feeds become "; " */
		while (b.len && b.data[b.len - 1] == '\n')
			b.data[--b.len] = '\0';
		for (char *c = b.data; *c; c++)
			if (*c == '\n')
				*c = ';';
		rc = pd_err_set(e, PD_EXIT_ENV, "%zu SCHED_DEADLINE thread%s of other processes on the plan's CPUs: %s. Stop "
				"them, or place the plan on other CPUs",
				k, k == 1 ? "" : "s", b.data);
	}
	pd_buf_free(&b);
	return rc;
}

size_t pd_agent_check_foreign(const struct pd_agent_spec *s, pd_buf *problems)
{
	int cpus[PD_RUNLOG_MAX_CPU];
	size_t n = 0;
	for (size_t i = 0; i < s->n_tasks; i++) {
		int c = s->tasks[i].cpu;
		bool dup = c < 0;
		for (size_t j = 0; j < n && !dup; j++)
			dup = cpus[j] == c;
		if (!dup && n < PD_RUNLOG_MAX_CPU)
			cpus[n++] = c;
	}
	return n ? foreign_problems("/proc", cpus, n, problems) : 0;
}

pd_foreign *foreign_open(const char *proc, const int *cpus, size_t n)
{
	if (n > PD_RUNLOG_MAX_CPU || strlen(proc) >= sizeof(((pd_foreign *)0)->proc))
		return NULL;
	pd_foreign *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	snprintf(f->proc, sizeof(f->proc), "%s", proc);
	memcpy(f->cpus, cpus, n * sizeof(int));
	f->n = n;
	return f;
}

/* When tid was first seen in this run (remembered from now on when new and there is room). */
static int64_t first_seen(pd_foreign *f, pid_t tid, int64_t t_ns)
{
	for (size_t i = 0; i < f->n_seen; i++)
		if (f->seen[i].tid == tid)
			return f->seen[i].first_ns;
	if (f->n_seen < PD_AGENT_FOREIGN_MAX)
		f->seen[f->n_seen++] = (struct seen){tid, t_ns};
	return t_ns;
}

size_t foreign_sample(pd_foreign *f, int64_t t_ns, struct pd_runlog_ring *ring)
{
	struct pd_foreign_thread t[PD_AGENT_FOREIGN_MAX];
	size_t k = foreign_scan(f->proc, getpid(), f->cpus, f->n, t, PD_AGENT_FOREIGN_MAX);
	size_t queued = 0;
	for (size_t i = 0; i < k && i < PD_AGENT_FOREIGN_MAX; i++) {
		struct pd_runlog_foreign_rec rec = {.from_ns = first_seen(f, t[i].tid, t_ns),
						    .t_ns = t_ns,
						    .runtime_ns = t[i].runtime_ns,
						    .deadline_ns = t[i].deadline_ns,
						    .period_ns = t[i].period_ns,
						    .tid = t[i].tid,
						    .cpu = t[i].cpu};
		memcpy(rec.comm, t[i].comm, PD_RUNLOG_COMM_LEN);
		queued += pd_runlog_put(ring, PD_RUNLOG_FOREIGN, &rec, sizeof(rec));
	}
	return queued;
}

void foreign_close(pd_foreign *f) { free(f); }
