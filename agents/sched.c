/* SPDX-License-Identifier: MIT */
/*
 * SCHED_DEADLINE through syscall(SYS_sched_setattr) with our own struct sched_attr (see pd_agent.h),
 * and the runtime conversion for kernels that charge runtime scaled by frequency and capacity.
 */
#include "agents/pd_agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int pd_agent_sched_setattr(int tid, const struct pd_agent_sched_attr *a)
{
	struct pd_agent_sched_attr c = *a;
	c.size = sizeof(c);
	return syscall(SYS_sched_setattr, tid, &c, 0) == 0 ? 0 : -errno;
}

int pd_agent_sched_getattr(int tid, struct pd_agent_sched_attr *a)
{
	memset(a, 0, sizeof(*a));
	return syscall(SYS_sched_getattr, tid, a, sizeof(*a), 0) == 0 ? 0 : -errno;
}

int pd_agent_sched_set_other(int tid)
{
	struct pd_agent_sched_attr a = {.size = sizeof(a), .sched_policy = 0};
	return pd_agent_sched_setattr(tid, &a);
}

int64_t pd_agent_runtime_scale(int64_t wall_runtime_ns, int64_t f_cur_khz, int64_t f_max_khz, int64_t cap1024)
{
	/* charged = wall * (f_cur/f_max) * (cap/1024): a budget of R wall ns costs that much kernel
	 * runtime. Rounded up so that the job is never throttled early by rounding. */
	if (f_cur_khz <= 0 || f_max_khz <= 0 || f_cur_khz > f_max_khz)
		f_cur_khz = f_max_khz = 1;
	if (cap1024 <= 0 || cap1024 > 1024)
		cap1024 = 1024;
	int64_t r = pd_muldiv_ceil((uint64_t)(wall_runtime_ns > 0 ? wall_runtime_ns : 0), (uint64_t)f_cur_khz,
				   (uint64_t)cap1024, (uint64_t)f_max_khz, 1024);
	return r < 1024 ? 1024 : r;
}

static int64_t read_i64(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long long v = -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

int64_t pd_agent_runtime_for_kernel(int64_t wall_runtime_ns, int cpu, bool reclaim, const char *sysfs_root)
{
#if defined(__arm__) || defined(__aarch64__)
	const bool scaled_arch = true;
#else
	const bool scaled_arch = getenv("PD_AGENT_FORCE_RUNTIME_SCALING") != NULL; /* tests on x86 */
#endif
	/* RECLAIM tasks are charged by GRUB-PA instead (docs/MODEL.md "Reclaiming"): no scaling. */
	if (!scaled_arch || reclaim)
		return wall_runtime_ns < 1024 ? 1024 : wall_runtime_ns;
	char p[512];
	snprintf(p, sizeof(p), "%s/devices/system/cpu/cpu%d/cpu_capacity", sysfs_root, cpu);
	int64_t cap = read_i64(p);
	snprintf(p, sizeof(p), "%s/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", sysfs_root, cpu);
	int64_t cur = read_i64(p);
	snprintf(p, sizeof(p), "%s/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", sysfs_root, cpu);
	int64_t max = read_i64(p);
	return pd_agent_runtime_scale(wall_runtime_ns, cur, max, cap);
}
