/* SPDX-License-Identifier: MIT */
/*
 * hostguard.c - the host state a deploy to a namespace twin changes, put back when the twin goes down.
 *
 * A namespace twin is not a board in one respect: its cgroup tree and /proc/sys are this machine's.
 * The deployer changes three things there (deployer/apply.c): it creates the cpuset directory
 * (PD_DEPLOY_CGROUP_DEFAULT, or the twin's own powerdag-NETNS with --host-cpus: twin.json "cgroup")
 * with one exclusive child per plan CPU, sets the root cpuset's
 * sched_load_balance to 0 (v1), and caps sched_rt_runtime_us (and the v1 cpu controller's
 * cpu.rt_runtime_us). It records the old values and restores them over SSH at the end; a twin killed in
 * the middle of a deploy takes that SSH session with it, so the restore cannot reach the "board". A
 * real board's reboot would clear all three; here they would stay, and every later deploy on this
 * machine would be refused by pre-flight ("already exists").
 *
 * So `twin up` takes the host values (twin_host_take, kept in twin.json) and `twin down`, once every
 * process of the twin is dead, removes a deploy cpuset that no task uses any more and then puts the
 * host values back (twin_host_clean).
 *
 * Invariants:
 *  - A cpuset with a task in it (in the directory or any child) belongs to a live deploy, on another
 *    twin of this machine or on `local`: it is never touched, and neither are the host values it
 *    relies on. Two deploys cannot share the directory (pre-flight refuses the second), so "no task"
 *    means its deploy is dead, except in the instant between the deployer's mkdir and its agent's
 *    start on another twin: that deploy then fails cleanly (its agent finds no cpuset) and restores.
 *  - Host values are put back only after such a directory was removed: a twin taken down after clean
 *    deploys never rewrites anything the user may have changed meanwhile.
 *  - The v2 root's cgroup.subtree_control (+cpuset) is left as it is: other cgroups may need it.
 *  - Twins on disjoint CPUs (--host-cpus) deploy at the same time, each into its own directory. The
 *    root's sched_load_balance and the RT cap are one per kernel: each deploy records what it found
 *    and restores only what it changed, so the last one to end leaves the host as the first found it
 *    (the first sets balance 0 and records 1; a second finds 0 and records nothing). The values one
 *    twin took at `up` are put back only after its own directory was removed as an orphan.
 */
#include "twin/twin_impl.h"
#include "deployer/pd_deployer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define V1_ROOT "/sys/fs/cgroup/cpuset"
#define V2_ROOT "/sys/fs/cgroup"
#define RT_RUNTIME "/proc/sys/kernel/sched_rt_runtime_us"
#define GRP_RT_RUNTIME "/sys/fs/cgroup/cpu/cpu.rt_runtime_us"

static bool read_ll(const char *path, long long *v)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fscanf(f, "%lld", v) == 1;
	fclose(f);
	return ok;
}

static int write_ll(const char *path, long long v)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char s[32];
	int n = snprintf(s, sizeof(s), "%lld", v);
	int rc = write(fd, s, (size_t)n) == n ? 0 : -errno;
	close(fd);
	return rc;
}

static bool v1(void)
{
	return twin_file_exists(V1_ROOT "/cpuset.cpu_exclusive");
}

void twin_host_take(struct twin_host *h)
{
	memset(h, 0, sizeof(*h));
	h->taken = read_ll(RT_RUNTIME, &h->rt_runtime);
	h->has_balance = v1() && read_ll(V1_ROOT "/cpuset.sched_load_balance", &h->balance);
	h->has_grp_rt = read_ll(GRP_RT_RUNTIME, &h->grp_rt_runtime);
}

json_t *twin_host_json(const struct twin_host *h)
{
	json_t *j = json_object();
	if (!j || !h->taken)
		return j;
	json_object_set_new(j, "sched_rt_runtime_us", json_integer(h->rt_runtime));
	if (h->has_balance)
		json_object_set_new(j, "cpuset_sched_load_balance", json_integer(h->balance));
	if (h->has_grp_rt)
		json_object_set_new(j, "cpu_rt_runtime_us", json_integer(h->grp_rt_runtime));
	return j;
}

void twin_host_from_json(const json_t *j, struct twin_host *h)
{
	memset(h, 0, sizeof(*h));
	const json_t *v;
	if ((v = json_object_get(j, "sched_rt_runtime_us")) && json_is_integer(v))
		h->taken = true, h->rt_runtime = json_integer_value(v);
	if ((v = json_object_get(j, "cpuset_sched_load_balance")) && json_is_integer(v))
		h->has_balance = true, h->balance = json_integer_value(v);
	if ((v = json_object_get(j, "cpu_rt_runtime_us")) && json_is_integer(v))
		h->has_grp_rt = true, h->grp_rt_runtime = json_integer_value(v);
}

/* Does a cgroup's task list (v1 "tasks", v2 "cgroup.procs" and "cgroup.threads") name anyone? */
static bool has_tasks(const char *dir)
{
	static const char *const lists[] = {"tasks", "cgroup.procs", "cgroup.threads"};
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		char p[1024];
		int n = snprintf(p, sizeof(p), "%s/%s", dir, lists[i]);
		if (n < 0 || (size_t)n >= sizeof(p))
			return true; /* a path this long cannot be checked: taken as in use, left alone */
		FILE *f = fopen(p, "re");
		if (!f)
			continue;
		int c = fgetc(f);
		fclose(f);
		if (c != EOF)
			return true;
	}
	return false;
}

/* The child cgroups of dir (one level: the deployer makes cpuN there and nothing deeper). Calls
 * fn(child path) for each; returns true when fn said true for one (or a child's path was too long
 * to build). */
static bool each_child(const char *dir, bool (*fn)(const char *))
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool any = false;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			char p[1024];
			int n = snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			/* a truncated path would name another directory: counted as fn's true (in use,
			 * or not removed), the answer that leaves the host alone */
			any |= n < 0 || (size_t)n >= sizeof(p) || fn(p);
		}
	closedir(d);
	return any;
}

static bool rmdir_failed(const char *p)
{
	return rmdir(p) != 0;
}

/* Removes the deploy cpuset DIR when no task uses it; 1 removed, 0 in use or absent, -1 failed. */
static int remove_orphan(const char *dir, pd_buf *said)
{
	if (!twin_file_exists(dir))
		return 0;
	if (has_tasks(dir) || each_child(dir, has_tasks)) {
		pd_buf_printf(said, "left %s: tasks run in it (a live deploy)\n", dir);
		return 0;
	}
	if (each_child(dir, rmdir_failed) || rmdir(dir) != 0) {
		pd_buf_printf(said, "could not remove %s: %s (rmdir its cpuN children, then it)\n", dir,
			      strerror(errno));
		return -1;
	}
	pd_buf_printf(said, "removed %s, left by a deploy killed with the twin\n", dir);
	return 1;
}

static void put_back(const char *path, long long want, pd_buf *said)
{
	long long cur;
	if (!read_ll(path, &cur) || cur == want)
		return;
	int rc = write_ll(path, want);
	if (rc)
		pd_buf_printf(said, "could not put back %s = %lld (now %lld): %s\n", path, want, cur, strerror(-rc));
	else
		pd_buf_printf(said, "put back %s = %lld (was %lld)\n", path, want, cur);
}

int twin_host_clean(const struct twin_host *h, const char *cgname, pd_buf *said)
{
	char dir[300];
	snprintf(dir, sizeof(dir), "%s/%s", v1() ? V1_ROOT : V2_ROOT, cgname);
	int rc = remove_orphan(dir, said);
	if (rc <= 0 || !h->taken)
		return rc < 0 ? -1 : 0;
	/* the reverse of apply_rt_cap's order: the global cap first (raising it), then the group's */
	put_back(RT_RUNTIME, h->rt_runtime, said);
	if (h->has_grp_rt)
		put_back(GRP_RT_RUNTIME, h->grp_rt_runtime, said);
	if (h->has_balance)
		put_back(V1_ROOT "/cpuset.sched_load_balance", h->balance, said);
	return 0;
}
