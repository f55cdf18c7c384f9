/* SPDX-License-Identifier: MIT */
/*
 * preflight.c - every check that can be made before the board is touched. Reads only. All problems
 * are collected (not only the first), so that one run tells the user everything to fix.
 *
 * What is checked, and why it is only checked when the plan needs it (docs/DEPLOY.md: deploy changes only what
 * the plan asks for): an island with a single OPP needs no cpufreq; a GPU without tasks needs no
 * devfreq; a platform without dl.fair_server leaves the fair server alone.
 */
#include "deployer/board_impl.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROBLEM(...) pd_buf_printf(problems, __VA_ARGS__)

static void check_kernel(pd_deploy_board *b, pd_buf *problems)
{
	int major = 0, minor = 0;
	sscanf(b->info.kernel, "%d.%d", &major, &minor);
	if (major < 3 || (major == 3 && minor < 14))
		PROBLEM("kernel %s has no SCHED_DEADLINE (needs Linux >= 3.14)\n", b->info.kernel);
	if (!board_exists(b, "/proc/sys/kernel/sched_rt_runtime_us"))
		PROBLEM("/proc/sys/kernel/sched_rt_runtime_us missing: kernel built without real-time scheduling "
			"support\n");
}

/* root, or CAP_SYS_NICE (bit 23 of CapEff) for SCHED_DEADLINE; the sysfs writes need root anyway. */
static void check_privilege(pd_deploy_board *b, pd_buf *problems)
{
	if (b->info.is_root)
		return;
	const char *argv[] = {"cat", "/proc/self/status", NULL};
	struct pd_deploy_exec_result r;
	pd_err e = {0};
	unsigned long long cap = 0;
	if (pd_deploy_transport_exec(b->t, argv, &r, &e) == 0 && r.out.data) {
		const char *c = strstr(r.out.data, "CapEff:");
		if (c)
			cap = strtoull(c + 7, NULL, 16);
	}
	pd_deploy_exec_result_free(&r);
	if (!(cap & (1ull << 23)))
		PROBLEM("not root and no CAP_SYS_NICE on the board: SCHED_DEADLINE needs one of them (log in as "
			"root, or give the agent CAP_SYS_NICE)\n");
	else
		PROBLEM("not root on the board: cpufreq, cpuset and bandwidth settings need root\n");
}

static void check_islands(pd_deploy_board *b, const pd_plan *p, pd_buf *problems)
{
	const pd_platform *pl = pd_plan_platform(p);
	pd_buf v;
	pd_buf_init(&v);
	for (size_t k = 0; k < pd_platform_island_count(pl); k++) {
		const struct pd_island *isl = pd_platform_island(pl, k);
		if (isl->n_opps <= 1)
			continue; /* one OPP: nothing to pin */
		int64_t f = isl->opps[pd_plan_island_opp(p, k)].freq_khz;
		char dir[300], path[400];
		char defpol[32];
		snprintf(defpol, sizeof(defpol), "policy%d", isl->n_cpus ? isl->cpus[0] : 0);
		snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpufreq/%s", isl->policy ? isl->policy : defpol);
		pd_err e = {0};
		snprintf(path, sizeof(path), "%s/scaling_available_frequencies", dir);
		if (!board_exists(b, dir)) {
			PROBLEM("island %s: cpufreq policy %s missing (no cpufreq driver?)\n", isl->name, dir);
			continue;
		}
		char fs[32];
		snprintf(fs, sizeof(fs), "%lld", (long long)f);
		if (board_read(b, path, &v, &e))
			PROBLEM("island %s: cannot read %s: %s\n", isl->name, path, e.msg);
		else if (!board_word_in(v.data, fs))
			PROBLEM("island %s: %s kHz is not in %s (%s)\n", isl->name, fs, path, v.data);
		snprintf(path, sizeof(path), "%s/scaling_available_governors", dir);
		if (board_read(b, path, &v, &e) == 0 && !board_word_in(v.data, "userspace") && !board_word_in(v.data, "performance"))
			PROBLEM("island %s: neither the userspace nor the performance governor in %s (%s)\n",
				isl->name, path, v.data);
		snprintf(path, sizeof(path), "%s/related_cpus", dir);
		unsigned char set[1024];
		if (board_read(b, path, &v, &e) == 0) {
			/* related_cpus is a space-separated list ("4 5 6 7") */
			memset(set, 0, sizeof(set));
			char *q = v.data, *end;
			for (long c = strtol(q, &end, 10); end != q; q = end, c = strtol(q, &end, 10))
				if (c >= 0 && c < 1024)
					set[c] = 1;
			for (size_t c = 0; c < isl->n_cpus; c++)
				if (isl->cpus[c] < 0 || isl->cpus[c] >= 1024 || !set[isl->cpus[c]])
					PROBLEM("island %s: CPU %d is not in %s (%s)\n", isl->name, isl->cpus[c], path,
						v.data);
		}
	}
	pd_buf_free(&v);
}

static void check_cpus(pd_deploy_board *b, const pd_plan *p, pd_buf *problems)
{
	pd_buf v;
	pd_buf_init(&v);
	pd_err e = {0};
	unsigned char online[1024];
	if (board_read(b, "/sys/devices/system/cpu/online", &v, &e) == 0 &&
	    pd_parse_cpulist(v.data, online, sizeof(online)) == 0) {
		int cpus[1024];
		size_t n = board_plan_cpus(p, cpus, 1024);
		for (size_t i = 0; i < n; i++)
			if (cpus[i] >= 1024 || !online[cpus[i]])
				PROBLEM("CPU %d of the plan is not online on the board (online: %s)\n", cpus[i], v.data);
	}
	pd_buf_free(&v);
}

/* The images in /lib/firmware are code loaded into the FPGA (and read by the kernel as root): the
 * directory and the ones above it must not be writable by group or others, or an image could be
 * swapped between the upload and the load. */
static void check_firmware_dirs(pd_deploy_board *b, const char *accel, pd_buf *problems)
{
	const char *dirs[] = {"/", "/lib", "/lib/firmware"};
	for (size_t i = 0; i < 3; i++) {
		struct pd_deploy_transport_stat st;
		pd_err e = {0};
		if (pd_deploy_transport_stat(b->t, pd_deploy_board_path(b, dirs[i]), &st, &e) == 0 && st.exists && (st.mode & 022))
			PROBLEM("FPGA %s: %s on the board is writable by %s (mode %04o): anyone there could replace "
				"a bitstream\n", accel, dirs[i], st.mode & 02 ? "others" : "its group", st.mode & 07777);
	}
}

/* A slot's first image is uploaded by the deployer; the others are loaded by the agent at run time
 * from the board's /lib/firmware, so they must be there already (a plain file, not writable by
 * group or others). Bitstream names are plain file names (docs/FORMATS.md): no path to escape. */
static void check_board_image(pd_deploy_board *b, const char *accel, int slot, const char *name, pd_buf *problems)
{
	char path[600];
	snprintf(path, sizeof(path), "/lib/firmware/%s", name);
	struct pd_deploy_transport_stat st;
	pd_err e = {0};
	if (pd_deploy_transport_stat(b->t, pd_deploy_board_path(b, path), &st, &e) || !st.exists || st.is_dir)
		PROBLEM("FPGA %s slot %d: bitstream %s is loaded by the agent from %s on the board, where it is "
			"missing (only each slot's first image is uploaded)\n", accel, slot, name, path);
	else if (st.mode & 022)
		PROBLEM("FPGA %s slot %d: %s on the board is writable by %s (mode %04o)\n", accel, slot, path,
			st.mode & 02 ? "others" : "its group", st.mode & 07777);
}

static void check_accels(pd_deploy_board *b, const pd_plan *p, const char *plan_dir, pd_buf *problems)
{
	const pd_platform *pl = pd_plan_platform(p);
	pd_buf v;
	pd_buf_init(&v);
	char path[600];
	for (size_t a = 0; a < pd_platform_accel_count(pl); a++) {
		const struct pd_accelerator *ac = pd_platform_accel(pl, a);
		if (ac->kind != PD_ACCEL_GPU && !board_plan_uses_accel(p, a)) /* a GPU's OPP is pinned in any case */
			continue;
		pd_err e = {0};
		if (ac->kind == PD_ACCEL_GPU && ac->devfreq && ac->n_opps > 1) {
			snprintf(path, sizeof(path), "/sys/class/devfreq/%s/available_frequencies", ac->devfreq);
			char hz[32];
			snprintf(hz, sizeof(hz), "%lld", (long long)ac->opps[pd_plan_accel_opp(p, a)].freq_khz * 1000);
			if (board_read(b, path, &v, &e))
				PROBLEM("GPU %s: devfreq device %s unavailable (%s)\n", ac->name, ac->devfreq, e.msg);
			else if (!board_word_in(v.data, hz))
				PROBLEM("GPU %s: %s Hz is not in %s (%s)\n", ac->name, hz, path, v.data);
		} else if (ac->kind == PD_ACCEL_FPGA) {
			const char *m = ac->manager ? ac->manager : "fpga0";
			snprintf(path, sizeof(path), "/sys/class/fpga_manager/%s/state", m);
			if (!board_exists(b, path))
				PROBLEM("FPGA %s: no FPGA manager %s on the board (%s)\n", ac->name, m, path);
			if (!board_exists(b, "/lib/firmware"))
				PROBLEM("FPGA %s: /lib/firmware missing on the board\n", ac->name);
			else
				check_firmware_dirs(b, ac->name, problems);
			for (int s = 0; s < ac->slots; s++) {
				const char *bits[16];
				size_t nb = pd_plan_slot_bitstreams(p, a, s, bits, 16);
				for (size_t i = 0; i < nb; i++) {
					char local[1200];
					snprintf(local, sizeof(local), "%s/%s", bits[i][0] == '/' ? "" : plan_dir, bits[i]);
					if (i == 0 && access(local, R_OK) != 0)
						PROBLEM("FPGA %s slot %d: bitstream %s not found here (%s)\n", ac->name, s,
							bits[i], local);
					else if (i > 0)
						check_board_image(b, ac->name, s, bits[i], problems);
				}
			}
		}
	}
	pd_buf_free(&v);
}

/* IIO sensors read by the agent with the "local:" context must show up in sysfs on the board. Network
 * contexts (ip:HOST) are reached by the agent itself; they are not checked here. */
static void check_sensors(pd_deploy_board *b, const pd_plan *p, pd_buf *problems)
{
	const pd_platform *pl = pd_plan_platform(p);
	char **names = NULL;
	size_t n = 0;
	bool listed = false;
	for (size_t s = 0; s < pd_platform_sensor_count(pl); s++) {
		const struct pd_sensor *se = pd_platform_sensor(pl, s);
		if (se->uri && strcmp(se->uri, "local:") && strcmp(se->uri, ""))
			continue;
		pd_err e = {0};
		if (!listed) {
			listed = true;
			pd_deploy_transport_listdir(b->t, pd_deploy_board_path(b, "/sys/bus/iio/devices"), &names, &n, &e);
		}
		bool found = false;
		pd_buf v;
		pd_buf_init(&v);
		for (size_t i = 0; i < n && !found; i++) {
			char path[600];
			snprintf(path, sizeof(path), "/sys/bus/iio/devices/%s/name", names[i]);
			if (board_read(b, path, &v, &e) == 0 && !strcmp(v.data, se->device))
				found = true;
			snprintf(path, sizeof(path), "/sys/bus/iio/devices/%s/label", names[i]);
			if (!found && board_read(b, path, &v, &e) == 0 && !strcmp(v.data, se->device))
				found = true;
		}
		pd_buf_free(&v);
		if (!found)
			PROBLEM("sensor %s: IIO device %s not found under /sys/bus/iio/devices\n", se->rail, se->device);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Per-CPU and total SCHED_DEADLINE bandwidth with the settings the deploy will leave in place. */
static void check_bandwidth(pd_deploy_board *b, const pd_plan *p, pd_buf *problems)
{
	const pd_platform *pl = pd_plan_platform(p);
	const struct pd_dl *dl = pd_platform_dl(pl);
	int64_t frt = 0, fper = 1;
	int fs = board_fair_server(b, &frt, &fper);
	/* A declared fair server is configured by the deploy (debugfs), unless the board's unreadable one
	 * is assumed at the kernel's default and the platform declares exactly that (what `profile`
	 * writes for such a board): nothing to configure then. */
	if (dl->has_fair_server && !b->info.fair_server &&
	    !(fs == 2 && dl->fair_runtime_ns == frt && dl->fair_period_ns == fper))
		PROBLEM("the platform declares dl.fair_server but the board has no readable "
			"/sys/kernel/debug/sched/fair_server (kernel < 6.12, debugfs not mounted, or lockdown)\n");
	double fair = 0;
	const char *fair_src = "fair server";
	if (dl->has_fair_server) {
		fair = (double)dl->fair_runtime_ns / (double)dl->fair_period_ns;
	} else if (fs) { /* left alone, but it still takes its share */
		fair = (double)frt / (double)fper;
		if (fs == 2)
			fair_src = "fair server (kernel >= 6.12, debugfs unreadable: its default 50ms/1s assumed)";
	}
	double cap = dl->max_util_per_cpu - fair;
	int cpus[1024];
	size_t ncpu = board_plan_cpus(p, cpus, 1024);
	size_t nt = pd_dags_task_count(pd_plan_dags(p));
	double total = 0;
	for (size_t c = 0; c < ncpu; c++) {
		double u = 0;
		for (size_t i = 0; i < nt; i++) {
			const struct pd_plan_task *t = pd_plan_task_c(p, i);
			if (t->place.kind == PD_PLACE_CPU && t->place.cpu == cpus[c] && t->period_ns > 0)
				u += (double)t->runtime_ns / (double)t->period_ns;
		}
		total += u;
		if (u > cap + 1e-9)
			PROBLEM("CPU %d: SCHED_DEADLINE bandwidth %.4f exceeds the %.4f available (%.2f cap minus %.4f "
				"%s); declare dl.fair_server in the platform (powerdag profile does) or lower the load\n", cpus[c], u,
				cap, dl->max_util_per_cpu, fair, fair_src);
	}
	if (total > cap * (double)ncpu + 1e-9)
		PROBLEM("total SCHED_DEADLINE bandwidth %.4f exceeds %.4f\n", total, cap * (double)ncpu);
}

/* v1: an exclusive cpuset of someone else (another deploy, an agent's own) on the plan's CPUs makes
 * ours impossible: the kernel would refuse cpuset.cpus with EINVAL half-way through apply. */
static void check_exclusive_siblings(pd_deploy_board *b, const pd_plan *p, pd_buf *problems)
{
	int cpus[1024];
	size_t n = board_plan_cpus(p, cpus, 1024);
	char **names;
	size_t nn;
	pd_err e = {0};
	if (pd_deploy_transport_listdir(b->t, pd_deploy_board_path(b, b->info.cgroup_root), &names, &nn, &e))
		return;
	pd_buf v;
	pd_buf_init(&v);
	/* v1: cpu_exclusive siblings; v2: partition roots (a member cgroup's CPUs are not taken) */
	bool v2 = b->info.cgroup_version == 2;
	for (size_t i = 0; i < nn; i++) {
		char ex[800], cp[800];
		snprintf(ex, sizeof(ex), "%s/%s/%s", b->info.cgroup_root, names[i],
			 v2 ? "cpuset.cpus.partition" : "cpuset.cpu_exclusive");
		snprintf(cp, sizeof(cp), "%s/%s/cpuset.cpus", b->info.cgroup_root, names[i]);
		unsigned char set[1024];
		if (strcmp(names[i], b->cgname) && board_read(b, ex, &v, &e) == 0 &&
		    (v2 ? strncmp(v.data, "root", 4) == 0 || strncmp(v.data, "isolated", 8) == 0 : !strcmp(v.data, "1")) &&
		    board_read(b, cp, &v, &e) == 0 && pd_parse_cpulist(v.data, set, sizeof(set)) == 0) {
			for (size_t c = 0; c < n; c++)
				if (cpus[c] < 1024 && set[cpus[c]]) {
					PROBLEM("%s %s/%s holds CPU %d of the plan (CPUs %s): another deploy or agent is "
						"running there, or one was killed (remove its cpuN children, then it)\n",
						v2 ? "cpuset partition" : "exclusive cpuset", b->info.cgroup_root,
						names[i], cpus[c], v.data);
					break;
				}
		}
		free(names[i]);
	}
	free(names);
	pd_buf_free(&v);
}

static void check_cgroup(pd_deploy_board *b, const pd_plan *p, pd_buf *problems)
{
	int cpus[4];
	if (board_plan_cpus(p, cpus, 4) == 0)
		return;
	if (!b->info.cgroup_version) {
		PROBLEM("no cpuset cgroup controller on the board (neither /sys/fs/cgroup with cpuset (v2) nor "
			"/sys/fs/cgroup/cpuset (v1)): partitioned EDF needs exclusive cpusets\n");
		return;
	}
	char path[700];
	check_exclusive_siblings(b, p, problems);
	snprintf(path, sizeof(path), "%s/%s", b->info.cgroup_root, b->cgname);
	if (board_exists(b, path))
		PROBLEM("%s already exists: another deploy is running, or a previous one was killed before it "
			"could restore (remove its cpuN children, then it)\n", path);
}

int pd_deploy_board_preflight(pd_deploy_board *b, const pd_plan *p, const char *plan_dir, pd_buf *problems, pd_err *e)
{
	int rc = board_probe(b, e);
	if (rc)
		return rc;
	size_t before = problems->len;
	check_kernel(b, problems);
	check_privilege(b, problems);
	check_cpus(b, p, problems);
	check_islands(b, p, problems);
	check_accels(b, p, plan_dir ? plan_dir : ".", problems);
	check_sensors(b, p, problems);
	check_bandwidth(b, p, problems);
	check_cgroup(b, p, problems);
	if (pd_deploy_transport_lost(b->t))
		return pd_err_set(e, PD_EXIT_ENV, "pre-flight: connection to %s lost", pd_deploy_transport_uri(b->t));
	if (problems->len > before) {
		size_t lines = 0;
		for (size_t i = before; i < problems->len; i++)
			lines += problems->data[i] == '\n';
		return pd_err_set(e, PD_EXIT_ENV, "pre-flight found %zu problem(s) on %s; the board was not touched",
				  lines, pd_deploy_transport_uri(b->t));
	}
	return 0;
}
