/* SPDX-License-Identifier: MIT */
/*
 * apply.c - changing the board for a plan. Every change goes through board_set() / board_record()
 * (board.c), which records the old value first, so pd_deploy_board_restore() can undo any prefix of this
 * sequence. Steps, in order: freq (cpufreq per island), devfreq (GPU), cpuset (exclusive cpuset per
 * core), bandwidth (RT admission cap, fair server), fpga (images into FPGA slots).
 */
#include "deployer/board_impl.h"

#include <stdlib.h>
#include <string.h>

#define STEP_FAULT(b, step, e)                                \
	do {                                                  \
		int frc_ = board_fault(b, step, e);           \
		if (frc_)                                     \
			return frc_;                          \
	} while (0)

static int interrupted(pd_deploy_board *b, pd_err *e)
{
	if (b->interrupted && *b->interrupted)
		return pd_err_set(e, PD_EXIT_ENV, "interrupted");
	return 0;
}

/* Pins min = max = f keeping min <= max after every write (lowering: min first; raising: max first). */
static int pin_range(pd_deploy_board *b, const char *min_path, const char *max_path, long long f, pd_err *e)
{
	long long cur_min;
	int rc = board_read_ll(b, min_path, &cur_min, e);
	if (rc)
		return rc;
	if (f < cur_min) {
		rc = board_set_ll(b, min_path, f, e);
		return rc ? rc : board_set_ll(b, max_path, f, e);
	}
	rc = board_set_ll(b, max_path, f, e);
	return rc ? rc : board_set_ll(b, min_path, f, e);
}

static int apply_island(pd_deploy_board *b, const struct pd_island *isl, int64_t f_khz, pd_err *e)
{
	char dir[300], p[5][400];
	char defpol[32];
	snprintf(defpol, sizeof(defpol), "policy%d", isl->n_cpus ? isl->cpus[0] : 0);
	snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpufreq/%s", isl->policy ? isl->policy : defpol);
	snprintf(p[0], sizeof(p[0]), "%s/scaling_governor", dir);
	snprintf(p[1], sizeof(p[1]), "%s/scaling_min_freq", dir);
	snprintf(p[2], sizeof(p[2]), "%s/scaling_max_freq", dir);
	snprintf(p[3], sizeof(p[3]), "%s/scaling_setspeed", dir);
	snprintf(p[4], sizeof(p[4]), "%s/scaling_available_governors", dir);
	pd_buf govs, gov;
	pd_buf_init(&govs);
	pd_buf_init(&gov);
	int rc = board_read(b, p[4], &govs, e);
	if (rc == 0)
		rc = board_read(b, p[0], &gov, e);
	bool userspace = rc == 0 && board_word_in(govs.data, "userspace");
	if (rc == 0 && userspace) {
		/* userspace governor + setspeed; the request is clamped to [min, max], so widen first */
		long long mn = 0, mx = 0;
		rc = board_set(b, p[0], "userspace", e);
		if (rc == 0)
			rc = board_fault(b, "freq", e);
		if (rc == 0)
			rc = board_read_ll(b, p[1], &mn, e);
		if (rc == 0)
			rc = board_read_ll(b, p[2], &mx, e);
		if (rc == 0 && f_khz > mx)
			rc = board_set_ll(b, p[2], f_khz, e);
		if (rc == 0 && f_khz < mn)
			rc = board_set_ll(b, p[1], f_khz, e);
		if (rc == 0)
			rc = board_set_ll(b, p[3], f_khz, e);
	} else if (rc == 0) {
		rc = pin_range(b, p[1], p[2], f_khz, e);
		if (rc == 0)
			rc = board_fault(b, "freq", e);
		if (rc == 0)
			rc = board_set(b, p[0], "performance", e);
	}
	pd_buf_free(&govs);
	pd_buf_free(&gov);
	if (rc)
		return rc;
	/* the hardware may round or throttle: what runs is what counts (ZynqMP rounding, XU4 throttling) */
	char cur[400];
	snprintf(cur, sizeof(cur), "%s/cpuinfo_cur_freq", dir);
	long long now;
	pd_err ig = {0};
	if (board_read_ll(b, cur, &now, &ig) != 0) {
		snprintf(cur, sizeof(cur), "%s/scaling_cur_freq", dir);
		rc = board_read_ll(b, cur, &now, e);
		if (rc)
			return rc;
	}
	if (now != f_khz)
		return pd_err_set(e, PD_EXIT_ENV, "island %s: asked for %lld kHz, %s reads %lld kHz", isl->name,
				  (long long)f_khz, cur, now);
	return 0;
}

static int apply_freq(pd_deploy_board *b, const pd_plan *p, pd_err *e)
{
	const pd_platform *pl = pd_plan_platform(p);
	for (size_t k = 0; k < pd_platform_island_count(pl); k++) {
		const struct pd_island *isl = pd_platform_island(pl, k);
		if (isl->n_opps <= 1)
			continue;
		int rc = apply_island(b, isl, isl->opps[pd_plan_island_opp(p, k)].freq_khz, e);
		if (!rc)
			rc = interrupted(b, e);
		if (rc)
			return rc;
	}
	return 0;
}

static int apply_devfreq(pd_deploy_board *b, const pd_plan *p, pd_err *e)
{
	const pd_platform *pl = pd_plan_platform(p);
	for (size_t a = 0; a < pd_platform_accel_count(pl); a++) {
		const struct pd_accelerator *ac = pd_platform_accel(pl, a);
		/* pinned even with no task on it: the plan's power prediction counts the GPU's idle power at
		 * its planned OPP */
		if (ac->kind != PD_ACCEL_GPU || !ac->devfreq || ac->n_opps <= 1)
			continue;
		char mn[400], mx[400];
		snprintf(mn, sizeof(mn), "/sys/class/devfreq/%s/min_freq", ac->devfreq);
		snprintf(mx, sizeof(mx), "/sys/class/devfreq/%s/max_freq", ac->devfreq);
		int rc = pin_range(b, mn, mx, (long long)ac->opps[pd_plan_accel_opp(p, a)].freq_khz * 1000, e);
		if (!rc)
			rc = board_fault(b, "devfreq", e);
		if (rc)
			return rc;
	}
	return 0;
}

static int cg_mkdir(pd_deploy_board *b, const char *abs, pd_err *e)
{
	if (board_record(b, REC_MKDIR, abs, NULL, 0, NULL) < 0)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	int rc = pd_deploy_transport_mkdir(b->t, pd_deploy_board_path(b, abs), 0755, e);
	if (rc) /* nothing was created: nothing to undo */
		b->n_rec--, free(b->rec[b->n_rec].path);
	return rc;
}

/* cgroup v1: DIR (all plan CPUs, exclusive, not balanced) with one exclusive child per CPU, and the
 * root's sched_load_balance off, so that each child is its own root domain (P-EDF admission per CPU). */
static int cpuset_v1(pd_deploy_board *b, const int *cpus, size_t n, const char *dir, const char *cpulist, pd_err *e)
{
	const char *cg = b->info.cgroup_root;
	char path[900];
	pd_buf mems;
	pd_buf_init(&mems);
	snprintf(path, sizeof(path), "%s/cpuset.mems", cg);
	int rc = board_read(b, path, &mems, e);
	if (rc == 0)
		rc = cg_mkdir(b, dir, e);
#define W(fmt, arg, val)                                                                \
	do {                                                                            \
		if (rc == 0) {                                                          \
			snprintf(path, sizeof(path), fmt, arg);                         \
			rc = pd_deploy_transport_write(b->t, pd_deploy_board_path(b, path), val, strlen(val), e); \
		}                                                                       \
	} while (0)
	W("%s/cpuset.cpus", dir, cpulist);
	W("%s/cpuset.mems", dir, mems.data);
	W("%s/cpuset.cpu_exclusive", dir, "1");
	W("%s/cpuset.sched_load_balance", dir, "0");
	for (size_t i = 0; i < n && rc == 0; i++) {
		char child[800], num[16];
		snprintf(child, sizeof(child), "%s/cpu%d", dir, cpus[i]);
		snprintf(num, sizeof(num), "%d", cpus[i]);
		rc = cg_mkdir(b, child, e);
		W("%s/cpuset.cpus", child, num);
		W("%s/cpuset.mems", child, mems.data);
		W("%s/cpuset.cpu_exclusive", child, "1");
	}
	if (rc == 0) {
		snprintf(path, sizeof(path), "%s/cpuset.sched_load_balance", cg);
		rc = board_set(b, path, "0", e);
	}
	pd_buf_free(&mems);
	return rc;
}

/* cgroup v2: cpuset enabled in the root's subtree, DIR a partition root over the plan CPUs, one
 * threaded child per CPU. The agent (agents/cpuset.c) moves its process into DIR, its threads into
 * the children, and only then makes each child a partition root: on Linux 6.1 a process cannot join
 * a cgroup whose CPUs all went to child partitions (ENOSPC), and threads can only move between the
 * threaded children of the domain their process is in (EOPNOTSUPP) - found on the VM twin. */
static int cpuset_v2(pd_deploy_board *b, const int *cpus, size_t n, const char *dir, const char *cpulist, pd_err *e)
{
	const char *cg = b->info.cgroup_root;
	char path[900];
	pd_buf sub;
	pd_buf_init(&sub);
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", cg);
	int rc = board_read(b, path, &sub, e);
	if (rc == 0 && !board_word_in(sub.data, "cpuset")) {
		/* recorded with "-cpuset" as the value that undoes it */
		board_record(b, REC_VALUE, path, "-cpuset", 7, "+cpuset");
		rc = pd_deploy_transport_write(b->t, pd_deploy_board_path(b, path), "+cpuset", 7, e);
	}
	pd_buf_free(&sub);
	if (rc == 0)
		rc = cg_mkdir(b, dir, e);
	W("%s/cpuset.cpus", dir, cpulist);
	W("%s/cgroup.subtree_control", dir, "+cpuset");
	W("%s/cpuset.cpus.partition", dir, "root");
	for (size_t i = 0; i < n && rc == 0; i++) {
		char child[800], num[16];
		snprintf(child, sizeof(child), "%s/cpu%d", dir, cpus[i]);
		snprintf(num, sizeof(num), "%d", cpus[i]);
		rc = cg_mkdir(b, child, e);
		W("%s/cgroup.type", child, "threaded");
		W("%s/cpuset.cpus", child, num);
	}
#undef W
	return rc;
}

static int apply_cpuset(pd_deploy_board *b, const pd_plan *p, pd_err *e)
{
	int cpus[1024];
	size_t n = board_plan_cpus(p, cpus, 1024);
	if (n == 0)
		return 0;
	char dir[700];
	pd_buf list;
	pd_buf_init(&list);
	for (size_t i = 0; i < n; i++)
		pd_buf_printf(&list, "%s%d", i ? "," : "", cpus[i]);
	snprintf(dir, sizeof(dir), "%s/%s", b->info.cgroup_root, b->cgname);
	int rc = b->info.cgroup_version == 2 ? cpuset_v2(b, cpus, n, dir, list.data, e)
					     : cpuset_v1(b, cpus, n, dir, list.data, e);
	pd_buf_free(&list);
	if (rc && !pd_deploy_transport_lost(b->t))
		snprintf(e->msg + strlen(e->msg), sizeof(e->msg) - strlen(e->msg),
			 "; is another exclusive cpuset under %s using these CPUs (another deploy or agent)?",
			 b->info.cgroup_root);
	if (rc == 0)
		rc = board_fault(b, "cpuset", e);
	if (rc == 0)
		snprintf(b->info.cgroup_dir, sizeof(b->info.cgroup_dir), "%s", pd_deploy_board_path(b, dir));
	return rc;
}

/* sched_rt_runtime_us from dl.max_util_per_cpu; with CONFIG_RT_GROUP_SCHED (v1 cpu controller) the
 * root group's cpu.rt_runtime_us must not exceed it, so it is lowered first (restore raises in reverse). */
static int apply_rt_cap(pd_deploy_board *b, const struct pd_dl *dl, pd_err *e)
{
	long long per, cur;
	int rc = board_read_ll(b, "/proc/sys/kernel/sched_rt_period_us", &per, e);
	if (!rc)
		rc = board_read_ll(b, "/proc/sys/kernel/sched_rt_runtime_us", &cur, e);
	if (rc)
		return rc;
	long long want = (long long)(dl->max_util_per_cpu * (double)per + 0.5);
	if (want >= per) /* U = 1.0: no cap */
		want = -1;
	if (cur == want)
		return 0;
	const char *grp = "/sys/fs/cgroup/cpu/cpu.rt_runtime_us";
	long long g;
	pd_err ig = {0};
	if (want >= 0 && (cur < 0 || want < cur) && board_read_ll(b, grp, &g, &ig) == 0 && g > want) {
		rc = board_set_ll(b, grp, want, e);
		if (rc)
			return rc;
	}
	return board_set_ll(b, "/proc/sys/kernel/sched_rt_runtime_us", want, e);
}

/* Fair server per plan CPU to dl.fair_server, keeping runtime <= period after every write. */
static int apply_fair(pd_deploy_board *b, const pd_plan *p, const struct pd_dl *dl, pd_err *e)
{
	int cpus[1024];
	size_t n = board_plan_cpus(p, cpus, 1024);
	for (size_t i = 0; i < n; i++) {
		char rt[200], per[200];
		snprintf(rt, sizeof(rt), "/sys/kernel/debug/sched/fair_server/cpu%d/runtime", cpus[i]);
		snprintf(per, sizeof(per), "/sys/kernel/debug/sched/fair_server/cpu%d/period", cpus[i]);
		long long cur_rt;
		int rc = board_read_ll(b, rt, &cur_rt, e);
		if (rc)
			return rc;
		if (dl->fair_period_ns < cur_rt) { /* shrinking the period below the runtime: runtime first */
			rc = board_set_ll(b, rt, dl->fair_runtime_ns, e);
			if (!rc)
				rc = board_set_ll(b, per, dl->fair_period_ns, e);
		} else {
			rc = board_set_ll(b, per, dl->fair_period_ns, e);
			if (!rc)
				rc = board_set_ll(b, rt, dl->fair_runtime_ns, e);
		}
		if (rc)
			return rc;
	}
	return 0;
}

static int apply_bandwidth(pd_deploy_board *b, const pd_plan *p, pd_err *e)
{
	const struct pd_dl *dl = pd_platform_dl(pd_plan_platform(p));
	int rc = apply_rt_cap(b, dl, e);
	if (rc == 0 && dl->has_fair_server && b->info.fair_server)
		rc = apply_fair(b, p, dl, e);
	if (rc == 0)
		rc = board_fault(b, "bandwidth", e);
	return rc;
}

/* Uploads an image into /lib/firmware, recording what was there. */
static int upload_image(pd_deploy_board *b, const char *local, const char *name, pd_err *e)
{
	char abs[600];
	snprintf(abs, sizeof(abs), "/lib/firmware/%s", name);
	struct pd_deploy_transport_stat st;
	int rc = pd_deploy_transport_stat(b->t, pd_deploy_board_path(b, abs), &st, e);
	if (rc)
		return rc;
	if (st.exists) {
		pd_buf old;
		pd_buf_init(&old);
		rc = pd_deploy_transport_read(b->t, pd_deploy_board_path(b, abs), &old, e);
		if (rc == 0)
			board_record(b, REC_FILE_REPL, abs, old.data ? old.data : "", old.len, NULL);
		pd_buf_free(&old);
	} else {
		board_record(b, REC_FILE_NEW, abs, NULL, 0, NULL);
	}
	return rc ? rc : pd_deploy_transport_upload(b->t, local, pd_deploy_board_path(b, abs), 0644, e);
}

static int apply_fpga(pd_deploy_board *b, const pd_plan *p, const char *plan_dir, pd_err *e)
{
	const pd_platform *pl = pd_plan_platform(p);
	for (size_t a = 0; a < pd_platform_accel_count(pl); a++) {
		const struct pd_accelerator *ac = pd_platform_accel(pl, a);
		if (ac->kind != PD_ACCEL_FPGA || !board_plan_uses_accel(p, a))
			continue;
		const char *m = ac->manager ? ac->manager : "fpga0";
		char flags[300], fw[300], state[300];
		snprintf(flags, sizeof(flags), "/sys/class/fpga_manager/%s/flags", m);
		snprintf(fw, sizeof(fw), "/sys/class/fpga_manager/%s/firmware", m);
		snprintf(state, sizeof(state), "/sys/class/fpga_manager/%s/state", m);
		for (int s = 0; s < ac->slots; s++) {
			const char *bits[16];
			/* a slot shared by several images is reconfigured by the agent at run time; the first
			 * one is loaded now so the slot starts programmed */
			if (pd_plan_slot_bitstreams(p, a, s, bits, 16) == 0)
				continue;
			char local[1200];
			snprintf(local, sizeof(local), "%s/%s", bits[0][0] == '/' ? "" : plan_dir, bits[0]);
			const char *base = strrchr(bits[0], '/') ? strrchr(bits[0], '/') + 1 : bits[0];
			int rc = upload_image(b, local, base, e);
			if (!rc && board_exists(b, flags))
				rc = board_set(b, flags, ac->slots > 1 ? "1" : "0", e);
			if (!rc)
				rc = board_fault(b, "fpga", e);
			if (!rc) /* the write blocks until the PL is programmed and returns its error */
				rc = pd_deploy_transport_write(b->t, pd_deploy_board_path(b, fw), base, strlen(base), e);
			pd_buf st;
			pd_buf_init(&st);
			if (!rc)
				rc = board_read(b, state, &st, e);
			if (!rc && strcmp(st.data, "operating"))
				rc = pd_err_set(e, PD_EXIT_ENV, "FPGA %s: loading %s left %s in state '%s'", ac->name,
						base, m, st.data);
			pd_buf_free(&st);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int pd_deploy_board_set_island_freq(pd_deploy_board *b, const struct pd_island *isl, int64_t f_khz, pd_err *e)
{
	int rc = board_probe(b, e);
	return rc ? rc : apply_island(b, isl, f_khz, e);
}

int pd_deploy_board_set_gpu_freq(pd_deploy_board *b, const struct pd_accelerator *a, int64_t f_khz, pd_err *e)
{
	if (a->kind != PD_ACCEL_GPU || !a->devfreq)
		return pd_err_set(e, PD_EXIT_USAGE, "accelerator %s: not a GPU with a devfreq device", a->name);
	char mn[400], mx[400];
	snprintf(mn, sizeof(mn), "/sys/class/devfreq/%s/min_freq", a->devfreq);
	snprintf(mx, sizeof(mx), "/sys/class/devfreq/%s/max_freq", a->devfreq);
	int rc = board_probe(b, e);
	return rc ? rc : pin_range(b, mn, mx, (long long)f_khz * 1000, e);
}

int pd_deploy_board_apply(pd_deploy_board *b, const pd_plan *p, const char *plan_dir, pd_err *e)
{
	int rc = board_probe(b, e);
	if (!rc)
		rc = apply_freq(b, p, e);
	if (!rc)
		rc = interrupted(b, e);
	if (!rc)
		rc = apply_devfreq(b, p, e);
	if (!rc)
		rc = apply_cpuset(b, p, e);
	if (!rc)
		rc = interrupted(b, e);
	if (!rc)
		rc = apply_bandwidth(b, p, e);
	if (!rc)
		rc = apply_fpga(b, p, plan_dir ? plan_dir : ".", e);
	if (!rc)
		rc = interrupted(b, e);
	return rc;
}
