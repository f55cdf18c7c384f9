/* SPDX-License-Identifier: MIT */
#include "helper_fakesys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pd_test.h"

static void put(const char *root, const char *rel, const char *text)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

void fakesys_set_cur(const char *root, const char *policy, const char *khz)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpufreq/%s/cpuinfo_cur_freq", policy);
	put(root, rel, khz);
}

const char *fakesys_make(void)
{
	static char root[256];
	snprintf(root, sizeof(root), "%s", pd_test_tmpdir());
	put(root, "/sys/devices/system/cpu/online", "0-3\n");
	const char *cf = "/sys/devices/system/cpu/cpufreq/";
	char rel[300];
#define P(pol, attr, v) (snprintf(rel, sizeof(rel), "%s%s/%s", cf, pol, attr), put(root, rel, v))
	P("policy0", "scaling_available_frequencies", "200000 800000 1400000 \n");
	P("policy0", "scaling_available_governors", "performance userspace schedutil\n");
	P("policy0", "scaling_governor", "schedutil\n");
	P("policy0", "scaling_min_freq", "200000\n");
	P("policy0", "scaling_max_freq", "1400000\n");
	P("policy0", "scaling_setspeed", "<unsupported>\n");
	P("policy0", "cpuinfo_cur_freq", "1400000\n");
	P("policy0", "related_cpus", "0 1\n");
	P("policy2", "scaling_available_frequencies", "200000 800000 1400000\n");
	P("policy2", "scaling_available_governors", "performance schedutil\n");
	P("policy2", "scaling_governor", "schedutil\n");
	P("policy2", "scaling_min_freq", "800000\n");
	P("policy2", "scaling_max_freq", "1400000\n");
	P("policy2", "scaling_setspeed", "<unsupported>\n");
	P("policy2", "cpuinfo_cur_freq", "1400000\n");
	P("policy2", "related_cpus", "2 3\n");
#undef P
	put(root, "/sys/class/devfreq/gpu0/available_frequencies", "114750000 1377000000\n");
	put(root, "/sys/class/devfreq/gpu0/governor", "simple_ondemand\n");
	put(root, "/sys/class/devfreq/gpu0/min_freq", "114750000\n");
	put(root, "/sys/class/devfreq/gpu0/max_freq", "1377000000\n");
	put(root, "/proc/sys/kernel/sched_rt_runtime_us", "950000\n");
	put(root, "/proc/sys/kernel/sched_rt_period_us", "1000000\n");
	for (int c = 0; c < 4; c++) {
		snprintf(rel, sizeof(rel), "/sys/kernel/debug/sched/fair_server/cpu%d/runtime", c);
		put(root, rel, "50000000\n");
		snprintf(rel, sizeof(rel), "/sys/kernel/debug/sched/fair_server/cpu%d/period", c);
		put(root, rel, "1000000000\n");
	}
	put(root, "/sys/fs/cgroup/cpuset/cpuset.cpus", "0-3\n");
	put(root, "/sys/fs/cgroup/cpuset/cpuset.mems", "0\n");
	put(root, "/sys/fs/cgroup/cpuset/cpuset.sched_load_balance", "1\n");
	put(root, "/sys/fs/cgroup/cpuset/tasks", "1\n");
	put(root, "/sys/class/fpga_manager/fpga0/name", "Xilinx ZynqMP FPGA Manager\n");
	put(root, "/sys/class/fpga_manager/fpga0/state", "operating\n");
	put(root, "/sys/class/fpga_manager/fpga0/flags", "0\n");
	put(root, "/sys/class/fpga_manager/fpga0/firmware", "");
	put(root, "/lib/firmware/other.bin", "keep me");
	put(root, "/sys/bus/iio/devices/iio:device0/name", "ina226\n");
	return root;
}

static const char *platform_yaml =
	"platform:\n"
	"  name: fake\n"
	"  reference_frequency: 1400MHz\n"
	"  base_power: 1W\n"
	"  dl: {max_util_per_cpu: 0.9, fair_server: {runtime: 40ms, period: 1s}}\n"
	"  islands:\n"
	"    - name: little\n"
	"      cpus: [0, 1]\n"
	"      opps: [{freq: 800MHz, busy: 0.5W, idle: 0.1W}, {freq: 1400MHz, busy: 1W, idle: 0.2W}]\n"
	"    - name: big\n"
	"      cpus: [2, 3]\n"
	"      opps: [{freq: 200MHz, busy: 0.2W, idle: 0.1W}, {freq: 1400MHz, busy: 2W, idle: 0.3W}]\n"
	"  accelerators:\n"
	"    - {name: gpu, kind: gpu, devfreq: gpu0, opps: [{freq: 114750kHz, busy: 1W, idle: 0.1W}, "
	"{freq: 1377MHz, busy: 5W, idle: 0.5W}]}\n"
	"    - {name: pl, kind: fpga, slots: 1, reconfig_time: 10ms, idle_power: 0.5W, manager: fpga0}\n"
	"  sensors:\n"
	"    - {uri: \"local:\", device: ina226, channel: power0, rail: VDD, measures: board}\n";

static const char *dags_yaml =
	"dags:\n"
	"  - name: g\n"
	"    period: 20ms\n"
	"    tasks:\n"
	"      - {name: a, wcet: 2ms}\n"
	"      - {name: b, wcet: 2ms}\n"
	"      - {name: c, wcet: 2ms, accel: [{kind: gpu, latency: 1ms}]}\n"
	"      - {name: d, wcet: 2ms, accel: [{kind: fpga, latency: 1ms, bitstream: img.bin}]}\n"
	"    edges: [[a, b], [b, c], [c, d]]\n";

pd_plan *fakesys_plan(char *dir, size_t n)
{
	snprintf(dir, n, "%s", pd_test_tmpdir());
	const char *pf = pd_test_write(dir, "platform.yaml", platform_yaml);
	char pfp[512];
	snprintf(pfp, sizeof(pfp), "%s", pf);
	const char *df = pd_test_write(dir, "dags.yaml", dags_yaml);
	pd_test_write(dir, "img.bin", "BITSTREAM-BYTES");
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = pd_dags_load_file(df, &d);
	pd_platform *pl = pd_platform_load_file(pfp, &d);
	if (!s || !pl) {
		pd_diags_print(&d, stderr);
		abort();
	}
	pd_diags_free(&d);
	pd_plan *p = pd_plan_new(s, pl);
	pd_plan_set_island_opp(p, 0, 0);
	pd_plan_set_island_opp(p, 1, 0);
	pd_plan_set_accel_opp(p, 0, 0);
	struct pd_plan_task *t = pd_plan_task(p, 0);
	t->place = (struct pd_placement){.kind = PD_PLACE_CPU, .cpu = 1, .island = 0};
	t->runtime_ns = 4000000, t->deadline_ns = 10000000, t->period_ns = 20000000;
	t->wcet_ns = t->response_ns = 4000000;
	t = pd_plan_task(p, 1);
	t->place = (struct pd_placement){.kind = PD_PLACE_CPU, .cpu = 2, .island = 1};
	t->runtime_ns = 4000000, t->deadline_ns = 10000000, t->period_ns = 20000000;
	t->wcet_ns = t->response_ns = 4000000;
	t = pd_plan_task(p, 2);
	t->place = (struct pd_placement){.kind = PD_PLACE_GPU, .accel = 0, .impl = 0};
	t->wcet_ns = t->response_ns = 2000000;
	t = pd_plan_task(p, 3);
	t->place = (struct pd_placement){.kind = PD_PLACE_FPGA, .accel = 1, .slot = 0, .impl = 0};
	t->wcet_ns = t->response_ns = 1000000;
	return p;
}
