/* SPDX-License-Identifier: MIT */
/*
 * state.c - a read-only snapshot, as text, of every board value the deployer may change for a plan.
 * Tests and the fault-injection runs compare the snapshot taken before a deploy with the one taken
 * after it: equal text means the board is back where it was.
 */
#include "deployer/board_impl.h"

#include <stdlib.h>
#include <string.h>

static void line(pd_deploy_board *b, pd_buf *out, const char *abs)
{
	pd_buf v;
	pd_buf_init(&v);
	pd_err e = {0};
	if (!board_exists(b, abs))
		pd_buf_printf(out, "%s=<absent>\n", abs);
	else if (board_read(b, abs, &v, &e) == 0)
		pd_buf_printf(out, "%s=%s\n", abs, v.data);
	else
		pd_buf_printf(out, "%s=<unreadable>\n", abs);
	pd_buf_free(&v);
}

/* Names in a board directory, one line: lets the snapshot see created / removed cgroups and files. */
static void listing(pd_deploy_board *b, pd_buf *out, const char *abs, bool dirs_only)
{
	char **names;
	size_t n;
	pd_err e = {0};
	pd_buf_printf(out, "%s/=", abs);
	if (pd_deploy_transport_listdir(b->t, pd_deploy_board_path(b, abs), &names, &n, &e) == 0) {
		for (size_t i = 0; i < n; i++) {
			char p[1200];
			snprintf(p, sizeof(p), "%s/%s", abs, names[i]);
			struct pd_deploy_transport_stat st;
			if (!dirs_only || (pd_deploy_transport_stat(b->t, pd_deploy_board_path(b, p), &st, &e) == 0 && st.is_dir))
				pd_buf_printf(out, "%s ", names[i]);
			free(names[i]);
		}
		free(names);
	} else {
		pd_buf_printf(out, "<absent>");
	}
	pd_buf_printf(out, "\n");
}

static void cpufreq(pd_deploy_board *b, pd_buf *out)
{
	static const char *const attrs[] = {"scaling_governor", "scaling_min_freq", "scaling_max_freq",
					    "scaling_setspeed"};
	char **names;
	size_t n;
	pd_err e = {0};
	if (pd_deploy_transport_listdir(b->t, pd_deploy_board_path(b, "/sys/devices/system/cpu/cpufreq"), &names, &n, &e))
		return;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(names[i], "policy", 6))
			for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
				char p[600];
				snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpufreq/%s/%s", names[i], attrs[a]);
				line(b, out, p);
			}
		free(names[i]);
	}
	free(names);
}

int pd_deploy_board_state(pd_deploy_board *b, const pd_plan *p, pd_buf *out, pd_err *e)
{
	return pd_deploy_board_state_of(b, pd_plan_platform(p), out, e);
}

int pd_deploy_board_state_of(pd_deploy_board *b, const pd_platform *pl, pd_buf *out, pd_err *e)
{
	int rc = board_probe(b, e);
	if (rc)
		return rc;
	cpufreq(b, out);
	char path[600];
	for (size_t a = 0; a < pd_platform_accel_count(pl); a++) {
		const struct pd_accelerator *ac = pd_platform_accel(pl, a);
		if (ac->kind == PD_ACCEL_GPU && ac->devfreq) {
			static const char *const attrs[] = {"governor", "min_freq", "max_freq"};
			for (size_t i = 0; i < 3; i++) {
				snprintf(path, sizeof(path), "/sys/class/devfreq/%s/%s", ac->devfreq, attrs[i]);
				line(b, out, path);
			}
		} else if (ac->kind == PD_ACCEL_FPGA) {
			const char *m = ac->manager ? ac->manager : "fpga0";
			snprintf(path, sizeof(path), "/sys/class/fpga_manager/%s/flags", m);
			line(b, out, path);
			snprintf(path, sizeof(path), "/sys/class/fpga_manager/%s/state", m);
			line(b, out, path);
		}
	}
	if (board_exists(b, "/lib/firmware"))
		listing(b, out, "/lib/firmware", false);
	line(b, out, "/proc/sys/kernel/sched_rt_runtime_us");
	line(b, out, "/proc/sys/kernel/sched_rt_period_us");
	if (board_exists(b, "/sys/fs/cgroup/cpu/cpu.rt_runtime_us"))
		line(b, out, "/sys/fs/cgroup/cpu/cpu.rt_runtime_us");
	if (b->info.fair_server) {
		char **names;
		size_t n;
		pd_err ig = {0};
		const char *fs = "/sys/kernel/debug/sched/fair_server";
		if (pd_deploy_transport_listdir(b->t, pd_deploy_board_path(b, fs), &names, &n, &ig) == 0) {
			for (size_t i = 0; i < n; i++) {
				snprintf(path, sizeof(path), "%s/%s/runtime", fs, names[i]);
				line(b, out, path);
				snprintf(path, sizeof(path), "%s/%s/period", fs, names[i]);
				line(b, out, path);
				free(names[i]);
			}
			free(names);
		}
	}
	if (b->info.cgroup_version) {
		/* only the deployer's own directory: other cgroups on the board are not ours to watch */
		const char *cg = b->info.cgroup_root;
		snprintf(path, sizeof(path), "%s/%s", cg, b->cgname);
		if (board_exists(b, path))
			listing(b, out, path, true);
		else
			pd_buf_printf(out, "%s=<absent>\n", path);
		snprintf(path, sizeof(path), "%s/%s", cg, b->info.cgroup_version == 1 ? "cpuset.sched_load_balance"
										      : "cgroup.subtree_control");
		line(b, out, path);
	}
	return 0;
}
