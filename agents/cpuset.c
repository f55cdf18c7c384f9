/* SPDX-License-Identifier: MIT */
/*
 * Exclusive cpusets for partitioned EDF. A SCHED_DEADLINE task whose affinity is narrower than its
 * root domain is refused (EPERM), so each CPU gets its own root domain:
 *
 *   v1 (/sys/fs/cgroup/cpuset): parent powerdag-agent-<pid> with every CPU, cpu_exclusive = 1,
 *      sched_load_balance = 0; children cpuN with cpus = N, cpu_exclusive = 1; the root's
 *      sched_load_balance = 0 (saved and restored: a system-wide change while the run lasts).
 *   v2 (cgroup2 with the cpuset controller): parent (a partition root over the plan CPUs) with
 *      +cpuset in subtree_control, threaded children cpuN with cpuset.cpus = N. The process joins
 *      the parent (cgroup.procs), each task thread its child (cgroup.threads); pd_agent_cpusets_activate
 *      then moves the remaining threads into the first child and makes every child a partition
 *      root. The order is the kernel's (Linux 6.1, met on the VM twin): a process cannot join a
 *      cgroup whose CPUs all went to child partitions (ENOSPC), threads only move within their
 *      process' threaded domain (EOPNOTSUPP), and a partition cannot take every CPU of a parent
 *      that still holds tasks ("root invalid"): so the parent must be empty when they are made.
 *      Teardown moves the process back to the cgroup it came from before removing them (no cgroup
 *      with a thread in it can go), and takes +cpuset out of the mount's subtree_control again when
 *      it was us who put it there.
 *
 * Threads enter their set while still SCHED_OTHER (moving an already-DL task skips admission).
 * One agent at a time may own partitions: an flock on /run/powerdag-agent.cpuset.lock serialises
 * concurrent agents (e.g. parallel tests) instead of letting their exclusive sets collide.
 */
#include "agents/pd_agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Paths are bounded by PD_CG_PATH_MAX (checked in pd_agent_cpusets_prepare) while the buffers hold at least
 * 512 bytes, so snprintf never truncates; GCC cannot see the bound through the structs. */
#define PD_CG_PATH_MAX 256
#if defined(__GNUC__) && !defined(__clang__) /* clang has no such warning (and warns about the name) */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

enum cs_mode { CS_AFFINITY = 0, CS_V1, CS_V2 };

struct pd_agent_cpusets {
	enum cs_mode mode;
	bool owned;         /* we created dir and must remove it */
	char dir[512];      /* parent: children are dir/cpuN */
	char v1_root[512];  /* v1 mount, for sched_load_balance restore */
	char v2_home[600];  /* v2: the cgroup the process came from, where teardown moves it back */
	char v2_mnt[512];   /* v2: the mount whose subtree_control got +cpuset from us (v2_added) */
	bool v2_added;
	int root_balance;   /* saved root sched_load_balance (-1 untouched) */
	int lock_fd;
	int cpus[1024];
	size_t n;
	char desc[600];
};

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, s, strlen(s));
	int rc = w < 0 ? -errno : 0;
	close(fd);
	return rc;
}

static int writef(const char *dir, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int writef(const char *dir, const char *file, const char *fmt, ...)
{
	char p[700], v[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return write_str(p, v);
}

static int read_int(const char *dir, const char *file)
{
	char p[700];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	FILE *f = fopen(p, "re");
	if (!f)
		return -1;
	int v = -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static bool exists(const char *dir, const char *file)
{
	char p[700];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return access(p, F_OK) == 0;
}

/* Removes cpuset dirs left by agents that died (kill -9): powerdag-agent-<pid> with no live pid. */
static void reap_stale(const char *base)
{
	DIR *d = opendir(base);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		int pid;
		if (sscanf(de->d_name, "powerdag-agent-%d", &pid) != 1 || pid == getpid())
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		char p[700], c[1000];
		snprintf(p, sizeof(p), "%s/%s", base, de->d_name);
		DIR *sub = opendir(p);
		if (sub) {
			struct dirent *se;
			while ((se = readdir(sub)))
				if (strncmp(se->d_name, "cpu", 3) == 0 && se->d_type == DT_DIR) {
					snprintf(c, sizeof(c), "%s/%s", p, se->d_name);
					rmdir(c);
				}
			closedir(sub);
		}
		rmdir(p);
	}
	closedir(d);
}

static void cpulist(const int *cpus, size_t n, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%d", i ? "," : "", cpus[i]);
}

/* The root's sched_load_balance before the first agent touched it, kept in a file so that an agent
 * killed with -9 does not leave the whole machine unbalanced: the next agent (holding the lock, so
 * no other agent is running) restores it. */
#define BALANCE_FILE "/run/powerdag-agent.cpuset.balance"

static void restore_stale_balance(const char *mnt)
{
	FILE *f = fopen(BALANCE_FILE, "re");
	if (!f)
		return;
	int v = -1;
	if (fscanf(f, "%d", &v) == 1 && v > 0)
		writef(mnt, "cpuset.sched_load_balance", "%d", v);
	fclose(f);
	unlink(BALANCE_FILE);
}

static void save_balance(int v)
{
	FILE *f = fopen(BALANCE_FILE, "we");
	if (f) {
		fprintf(f, "%d\n", v);
		fclose(f);
	}
}

static int prepare_v1(pd_agent_cpusets *c, const char *mnt)
{
	snprintf(c->v1_root, sizeof(c->v1_root), "%s", mnt);
	reap_stale(mnt);
	restore_stale_balance(mnt);
	snprintf(c->dir, sizeof(c->dir), "%s/powerdag-agent-%d", mnt, (int)getpid());
	if (mkdir(c->dir, 0755) < 0)
		return -errno;
	c->owned = true;
	char all[4096], mems[256] = "0";
	FILE *f = fopen(strcat(strcpy(all, mnt), "/cpuset.mems"), "re");
	if (f) {
		if (!fgets(mems, sizeof(mems), f))
			strcpy(mems, "0");
		mems[strcspn(mems, "\n")] = '\0';
		fclose(f);
	}
	cpulist(c->cpus, c->n, all, sizeof(all));
	int rc;
	if ((rc = writef(c->dir, "cpuset.cpus", "%s", all)) || (rc = writef(c->dir, "cpuset.mems", "%s", mems)) ||
	    (rc = writef(c->dir, "cpuset.cpu_exclusive", "1")) || (rc = writef(c->dir, "cpuset.sched_load_balance", "0")))
		return rc;
	for (size_t i = 0; i < c->n; i++) {
		char ch[600];
		snprintf(ch, sizeof(ch), "%s/cpu%d", c->dir, c->cpus[i]);
		if (mkdir(ch, 0755) < 0)
			return -errno;
		if ((rc = writef(ch, "cpuset.cpus", "%d", c->cpus[i])) || (rc = writef(ch, "cpuset.mems", "%s", mems)) ||
		    (rc = writef(ch, "cpuset.cpu_exclusive", "1")))
			return rc;
	}
	c->root_balance = read_int(mnt, "cpuset.sched_load_balance");
	if (c->root_balance > 0)
		save_balance(c->root_balance);
	if (c->root_balance != 0 && (rc = writef(mnt, "cpuset.sched_load_balance", "0")))
		return rc;
	c->mode = CS_V1;
	return 0;
}

/* The process' cgroup v2 path under mnt (from /proc/self/cgroup "0::/REL"), mnt itself when unknown. */
static void v2_home(const char *mnt, char *out, size_t n)
{
	char line[600], rel[560] = "";
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "0::", 3) == 0) {
				line[strcspn(line, "\n")] = 0;
				snprintf(rel, sizeof(rel), "%s", strcmp(line + 3, "/") ? line + 3 : "");
			}
		fclose(f);
	}
	snprintf(out, n, "%s%s", mnt, rel);
}

static int prepare_v2(pd_agent_cpusets *c, const char *mnt)
{
	reap_stale(mnt);
	v2_home(mnt, c->v2_home, sizeof(c->v2_home));
	snprintf(c->dir, sizeof(c->dir), "%s/powerdag-agent-%d", mnt, (int)getpid());
	char p[600], ctl[512] = "";
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", mnt);
	FILE *f = fopen(p, "re");
	if (f) {
		if (!fgets(ctl, sizeof(ctl), f))
			ctl[0] = 0;
		fclose(f);
	}
	bool had = false;
	for (char *t = strtok(ctl, " \n"); t; t = strtok(NULL, " \n"))
		had |= strcmp(t, "cpuset") == 0;
	int rc = writef(mnt, "cgroup.subtree_control", "+cpuset");
	if (rc)
		return rc;
	/* the board as we found it: teardown takes the controller away again when we enabled it */
	c->v2_added = !had;
	snprintf(c->v2_mnt, sizeof(c->v2_mnt), "%s", mnt);
	if (mkdir(c->dir, 0755) < 0)
		return -errno;
	c->owned = true;
	char all[4096];
	cpulist(c->cpus, c->n, all, sizeof(all));
	if ((rc = writef(c->dir, "cpuset.cpus", "%s", all)) || (rc = writef(c->dir, "cgroup.subtree_control", "+cpuset")))
		return rc;
	for (size_t i = 0; i < c->n; i++) {
		char ch[600];
		snprintf(ch, sizeof(ch), "%s/cpu%d", c->dir, c->cpus[i]);
		if (mkdir(ch, 0755) < 0)
			return -errno;
		if ((rc = writef(ch, "cgroup.type", "threaded")) || (rc = writef(ch, "cpuset.cpus", "%d", c->cpus[i])))
			return rc;
	}
	if ((rc = writef(c->dir, "cpuset.cpus.partition", "root")) || (rc = writef(c->dir, "cgroup.procs", "%d", (int)getpid())))
		return rc;
	c->mode = CS_V2;
	return 0;
}

/* A joined thread may still be leaving its cgroup (pthread_join returns at mm release, before
 * cgroup_exit): rmdir answers EBUSY for a moment, so retry briefly. */
static void rmdir_retry(const char *p)
{
	for (int i = 0; i < 100 && rmdir(p) < 0 && errno == EBUSY; i++) {
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

static void teardown(pd_agent_cpusets *c)
{
	/* v2: activate moved every thread of the process, main thread included, into the children; a
	 * cgroup with a thread in it cannot be removed, so the whole process goes back where it came
	 * from first (cgroup.procs of a domain cgroup takes all its threads at once). Without this the
	 * partitions stayed, and the next deploy's partition over the same CPUs was made invalid. */
	if (c->owned && c->mode == CS_V2 && c->v2_home[0])
		writef(c->v2_home, "cgroup.procs", "%d", (int)getpid());
	if (c->owned) {
		for (size_t i = 0; i < c->n; i++) {
			char ch[600];
			snprintf(ch, sizeof(ch), "%s/cpu%d", c->dir, c->cpus[i]);
			rmdir_retry(ch);
		}
		rmdir_retry(c->dir);
		c->owned = false;
	}
	if (c->v2_added) { /* refused (EBUSY) while another cgroup uses the controller: then it stays */
		writef(c->v2_mnt, "cgroup.subtree_control", "-cpuset");
		c->v2_added = false;
	}
	if (c->mode == CS_V1 && c->root_balance > 0) {
		writef(c->v1_root, "cpuset.sched_load_balance", "%d", c->root_balance);
		unlink(BALANCE_FILE);
	}
	c->root_balance = -1;
}

pd_agent_cpusets *pd_agent_cpusets_prepare(const char *root, const char *cg_base, const int *cpus, size_t n, pd_err *e)
{
	pd_agent_cpusets *c = calloc(1, sizeof(*c));
	if (!c || n > 1024) {
		free(c);
		pd_err_set(e, PD_EXIT_ENV, "out of memory");
		return NULL;
	}
	c->root_balance = -1;
	c->lock_fd = -1;
	c->n = n;
	memcpy(c->cpus, cpus, n * sizeof(int));
	const char *base = cg_base ? cg_base : "/sys/fs/cgroup";
	/* Every path below is built from base or root plus a short suffix: bounding them here makes
	 * truncation in the fixed path buffers impossible. */
	if (strlen(base) > PD_CG_PATH_MAX || (root && strlen(root) > PD_CG_PATH_MAX)) {
		free(c);
		pd_err_set(e, PD_EXIT_USAGE, "cgroup path longer than %d bytes", PD_CG_PATH_MAX);
		return NULL;
	}
	if (root) { /* the deployer's tree: check, never modify */
		snprintf(c->dir, sizeof(c->dir), "%s", root);
		for (size_t i = 0; i < n; i++) {
			char ch[600];
			snprintf(ch, sizeof(ch), "%s/cpu%d", root, cpus[i]);
			if (access(ch, F_OK) != 0) {
				pd_err_set(e, PD_EXIT_ENV,
					   "--cgroup-root %s has no child cpu%d: prepare one exclusive cpuset per CPU "
					   "(v1 cpu_exclusive or v2 partition root)",
					   root, cpus[i]);
				free(c);
				return NULL;
			}
		}
		char ch[600];
		snprintf(ch, sizeof(ch), "%s/cpu%d", root, cpus[0]);
		c->mode = exists(ch, "tasks") ? CS_V1 : CS_V2;
		int rc = c->mode == CS_V2 ? writef(root, "cgroup.procs", "%d", (int)getpid()) : 0;
		if (rc) {
			pd_err_set(e, PD_EXIT_ENV, "cannot join the deployer's cgroup v2 %s: %s", root, strerror(-rc));
			free(c);
			return NULL;
		}
		snprintf(c->desc, sizeof(c->desc), "deployer cpusets %s (cgroup %s)", root, c->mode == CS_V1 ? "v1" : "v2");
		return c;
	}
	c->lock_fd = open("/run/powerdag-agent.cpuset.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (c->lock_fd >= 0)
		flock(c->lock_fd, LOCK_EX);
	char v1[560];
	snprintf(v1, sizeof(v1), "%s/cpuset", base);
	int rc = -ENOENT;
	/* Another tool's exclusive cpuset over the same CPUs (a deployer's partitions, a test) makes ours
	 * fail with EINVAL/EBUSY: it may be gone a moment later, so retry for up to 5 s. */
	for (int attempt = 0; attempt < 50; attempt++) {
		if (exists(v1, "cpuset.cpu_exclusive"))
			rc = prepare_v1(c, v1);
		else if (exists(base, "cgroup.controllers"))
			rc = prepare_v2(c, base);
		if (rc != -EINVAL && rc != -EBUSY)
			break;
		teardown(c);
		struct timespec ts = {0, 100 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	if (rc == 0) {
		snprintf(c->desc, sizeof(c->desc), "cgroup %s %s", c->mode == CS_V1 ? "v1" : "v2", c->dir);
		return c;
	}
	teardown(c);
	/* Still refused after 5 s: another exclusive cpuset (a deploy's partitions, another tool) owns
	 * these CPUs. Falling back to plain affinity would work (each of those CPUs is a root domain of
	 * its own then) and would put our reservations next to the owner's on the same CPU: both plans'
	 * analyses assume the CPU is theirs alone, so both could miss. Refuse instead. */
	if (rc == -EINVAL || rc == -EBUSY) {
		pd_err_set(e, PD_EXIT_ENV,
			   "the plan's CPUs are held by another exclusive cpuset (another deploy or agent?): "
			   "refusing to share them (cpuset: %s)",
			   strerror(-rc));
		pd_agent_cpusets_free(c);
		return NULL;
	}
	c->mode = CS_AFFINITY;
	snprintf(c->desc, sizeof(c->desc), "affinity only (no exclusive cpuset: %s)", strerror(-rc));
	return c;
}

int pd_agent_cpusets_enter(pd_agent_cpusets *c, int cpu)
{
	char ch[600];
	snprintf(ch, sizeof(ch), "%s/cpu%d", c->dir, cpu);
	switch (c->mode) {
	case CS_V1:
		return writef(ch, "tasks", "%d", (int)gettid());
	case CS_V2:
		return writef(ch, "cgroup.threads", "%d", (int)gettid());
	default: {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		return sched_setaffinity(0, sizeof(set), &set) == 0 ? 0 : -errno;
	}
	}
}

/* The cgroup (relative to the v2 mount) a thread of ours is in, from /proc/self/task/TID/cgroup. */
static bool thread_in(int tid, const char *rel)
{
	char p[64], line[700];
	snprintf(p, sizeof(p), "/proc/self/task/%d/cgroup", tid);
	FILE *f = fopen(p, "re");
	bool in = false;
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "0::", 3) == 0) {
				line[strcspn(line, "\n")] = 0;
				in = strcmp(line + 3, rel) == 0;
			}
		fclose(f);
	}
	return in;
}

int pd_agent_cpusets_activate(pd_agent_cpusets *c, pd_err *e)
{
	if (c->mode != CS_V2 || c->n == 0)
		return 0;
	/* DIR relative to the cgroup2 mount: what /proc/.../cgroup shows of it */
	char rel[600] = "";
	const char *mnt = strstr(c->dir, "/sys/fs/cgroup");
	snprintf(rel, sizeof(rel), "%s", mnt ? c->dir + strlen("/sys/fs/cgroup") : c->dir);
	char first[600];
	snprintf(first, sizeof(first), "%s/cpu%d", c->dir, c->cpus[0]);
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return pd_err_set(e, PD_EXIT_ENV, "/proc/self/task: %s", strerror(errno));
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (de = readdir(d))) {
		int tid = atoi(de->d_name);
		if (tid > 0 && thread_in(tid, rel) && (rc = writef(first, "cgroup.threads", "%d", tid)) != 0)
			pd_err_set(e, PD_EXIT_ENV, "moving thread %d into %s: %s", tid, first, strerror(-rc));
	}
	closedir(d);
	for (size_t i = 0; rc == 0 && i < c->n; i++) {
		char ch[600], st[200] = "";
		snprintf(ch, sizeof(ch), "%s/cpu%d", c->dir, c->cpus[i]);
		rc = writef(ch, "cpuset.cpus.partition", "root");
		char p[700];
		snprintf(p, sizeof(p), "%s/cpuset.cpus.partition", ch);
		FILE *f = fopen(p, "re");
		if (f && !fgets(st, sizeof(st), f))
			st[0] = 0;
		if (f)
			fclose(f);
		st[strcspn(st, "\n")] = 0;
		if (rc)
			pd_err_set(e, PD_EXIT_ENV, "%s: cpuset.cpus.partition = root refused: %s", ch, strerror(-rc));
		else if (strcmp(st, "root") != 0)
			rc = pd_err_set(e, PD_EXIT_ENV, "%s: the kernel made it '%s', not a partition root", ch, st);
	}
	return rc;
}

bool pd_agent_cpusets_is_affinity_only(const pd_agent_cpusets *c) { return c->mode == CS_AFFINITY; }
const char *pd_agent_cpusets_describe(const pd_agent_cpusets *c) { return c->desc; }

void pd_agent_cpusets_free(pd_agent_cpusets *c)
{
	if (!c)
		return;
	teardown(c);
	if (c->lock_fd >= 0)
		close(c->lock_fd);
	free(c);
}
