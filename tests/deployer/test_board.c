/* SPDX-License-Identifier: MIT */
/*
 * Board operations with the local transport against a fake sysfs tree: pre-flight (all problems
 * listed, nothing touched), apply (values written in the kernel's order), restore (state after ==
 * state before) after success, after a failed step and after an incomplete restore.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper_fakesys.h"
#include "pd_test.h"

static pd_deploy_transport *tp;
static const char *root;
static pd_plan *plan;
static char plan_dir[256];

static void setup(void)
{
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_transport_open("local", NULL, &tp, &e), 0);
	root = fakesys_make();
	plan = fakesys_plan(plan_dir, sizeof(plan_dir));
}

static void teardown(void)
{
	pd_plan_free(plan);
	pd_deploy_transport_close(tp);
}

static pd_deploy_board *board(void)
{
	struct pd_deploy_board_opts o = {.root = root, .plain_files = true};
	return pd_deploy_board_new(tp, &o);
}

static char *rd(const char *rel)
{
	static char buf[4][512];
	static int r;
	char *b = buf[r++ % 4];
	char path[1024];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	FILE *f = fopen(path, "r");
	if (!f)
		return strcpy(b, "<absent>");
	size_t n = fread(b, 1, 511, f);
	fclose(f);
	b[n] = '\0';
	b[strcspn(b, "\n")] = '\0';
	return b;
}

static void state(pd_deploy_board *b, pd_buf *out)
{
	pd_err e = {0};
	pd_buf_init(out);
	ck_assert_msg(pd_deploy_board_state(b, plan, out, &e) == 0, "%s", e.msg);
}

static void set_hw_freqs(void)
{
	fakesys_set_cur(root, "policy0", "800000");
	fakesys_set_cur(root, "policy2", "200000");
}

START_TEST(preflight_clean)
{
	pd_deploy_board *b = board();
	pd_buf pr;
	pd_buf_init(&pr);
	pd_err e = {0};
	int rc = pd_deploy_board_preflight(b, plan, plan_dir, &pr, &e);
	ck_assert_msg(rc == 0, "%s\n%s", e.msg, pr.data ? pr.data : "");
	ck_assert_uint_eq(pr.len, 0);
	const struct pd_deploy_board_info *in = pd_deploy_board_info(b);
	ck_assert_int_eq(in->cgroup_version, 1);
	ck_assert(in->fair_server);
	ck_assert(in->is_root);
	ck_assert_str_ne(in->kernel, "");
	pd_buf_free(&pr);
	pd_deploy_board_free(b);
}
END_TEST

START_TEST(preflight_lists_every_problem)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "cd %s && echo '200000 1400000' > sys/devices/system/cpu/cpufreq/policy0/scaling_available_frequencies"
		 " && echo 'ondemand' > sys/devices/system/cpu/cpufreq/policy2/scaling_available_governors"
		 " && rm -r sys/class/devfreq/gpu0 sys/class/fpga_manager/fpga0 sys/bus/iio/devices/iio:device0"
		 " && mkdir sys/fs/cgroup/cpuset/powerdag && echo 0-1 > sys/devices/system/cpu/online",
		 root);
	ck_assert_int_eq(system(cmd), 0);
	unlink(pd_test_write(plan_dir, "img.bin", "x")); /* bitstream missing here too */
	struct pd_plan_task *t = pd_plan_task(plan, 0);
	t->runtime_ns = 19000000; /* 0.95 > 0.9 - 0.04 */
	pd_deploy_board *b = board();
	pd_buf before, after, pr;
	state(b, &before);
	pd_buf_init(&pr);
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_board_preflight(b, plan, plan_dir, &pr, &e), PD_EXIT_ENV);
	const char *want[] = {"800000 kHz is not in", "neither the userspace nor the performance",
			      "devfreq device gpu0 unavailable", "no FPGA manager fpga0", "img.bin not found",
			      "IIO device ina226 not found", "CPU 1: SCHED_DEADLINE bandwidth 0.9500",
			      "powerdag already exists", "CPU 2 of the plan is not online"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(strstr(pr.data, want[i]) != NULL, "missing '%s' in:\n%s", want[i], pr.data);
	ck_assert_ptr_nonnull(strstr(e.msg, "9 problem(s)"));
	ck_assert_int_eq(pd_deploy_board_pending(b), 0);
	state(b, &after);
	ck_assert_str_eq(before.data, after.data);
	pd_buf_free(&before), pd_buf_free(&after), pd_buf_free(&pr);
	pd_deploy_board_free(b);
}
END_TEST

/* cgroup v2 (the VM twin's 6.1 kernel): a partition root left over CPUs of the plan (an agent killed,
 * or one from before its teardown moved its threads out) is named by pre-flight; it made the deploy's
 * own partition over those CPUs invalid ("Parent is an invalid partition root") at apply time. */
START_TEST(preflight_names_a_v2_partition_over_plan_cpus)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "cd %s && rm -r sys/fs/cgroup/cpuset && echo 'cpuset cpu memory' > sys/fs/cgroup/cgroup.controllers"
		 " && echo '' > sys/fs/cgroup/cgroup.subtree_control"
		 " && mkdir sys/fs/cgroup/powerdag-agent-999 sys/fs/cgroup/user.slice"
		 " && echo root > sys/fs/cgroup/powerdag-agent-999/cpuset.cpus.partition"
		 " && echo 1-2 > sys/fs/cgroup/powerdag-agent-999/cpuset.cpus"
		 " && echo member > sys/fs/cgroup/user.slice/cpuset.cpus.partition"
		 " && echo 0-3 > sys/fs/cgroup/user.slice/cpuset.cpus",
		 root);
	ck_assert_int_eq(system(cmd), 0);
	pd_deploy_board *b = board();
	pd_buf pr;
	pd_buf_init(&pr);
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_board_preflight(b, plan, plan_dir, &pr, &e), PD_EXIT_ENV);
	ck_assert_int_eq(pd_deploy_board_info(b)->cgroup_version, 2);
	ck_assert_msg(strstr(pr.data, "cpuset partition /sys/fs/cgroup/powerdag-agent-999 holds CPU") != NULL, "%s",
		      pr.data);
	ck_assert_msg(strstr(pr.data, "user.slice") == NULL, "a member cgroup named: %s", pr.data);
	ck_assert_ptr_nonnull(strstr(e.msg, "1 problem(s)"));
	pd_buf_free(&pr);
	pd_deploy_board_free(b);
}
END_TEST

START_TEST(single_opp_island_needs_no_cpufreq)
{
	/* the VM case: no cpufreq at all, islands with one OPP, no fair server in the platform */
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -r %s/sys/devices/system/cpu/cpufreq", root);
	ck_assert_int_eq(system(cmd), 0);
	const char *pf = pd_test_write(plan_dir, "vm.yaml",
				       "platform:\n  name: vm\n  reference_frequency: 1GHz\n  islands:\n"
				       "    - {name: c, cpus: [0, 1, 2, 3], opps: [{freq: 1GHz, busy: 1W, idle: 0.1W}]}\n");
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *pl = pd_platform_load_file(pf, &d);
	pd_dagset *s = pd_dags_load_file(pd_test_write(plan_dir, "d.yaml",
				"dags:\n  - name: g\n    period: 10ms\n    tasks: [{name: a, wcet: 1ms}]\n"), &d);
	ck_assert_ptr_nonnull(pl);
	ck_assert_ptr_nonnull(s);
	pd_plan *p = pd_plan_new(s, pl);
	pd_plan_task(p, 0)->runtime_ns = 1000000;
	pd_plan_task(p, 0)->period_ns = 10000000;
	pd_plan_task(p, 0)->deadline_ns = 10000000;
	pd_deploy_board *b = board();
	pd_buf pr, before, after;
	pd_buf_init(&pr);
	pd_err e = {0};
	ck_assert_msg(pd_deploy_board_preflight(b, p, plan_dir, &pr, &e) == 0, "%s", pr.data);
	pd_buf_init(&before);
	pd_deploy_board_state(b, p, &before, &e);
	ck_assert_msg(pd_deploy_board_apply(b, p, plan_dir, &e) == 0, "%s", e.msg);
	/* fair server untouched (platform has none), RT cap 0.95 = board's: only the cpuset changed */
	ck_assert_str_eq(rd("/sys/kernel/debug/sched/fair_server/cpu0/runtime"), "50000000");
	ck_assert_str_eq(rd("/proc/sys/kernel/sched_rt_runtime_us"), "950000");
	ck_assert_str_eq(rd("/sys/fs/cgroup/cpuset/powerdag/cpu0/cpuset.cpus"), "0");
	ck_assert_int_eq(pd_deploy_board_restore(b, NULL, &e), 0);
	pd_buf_init(&after);
	pd_deploy_board_state(b, p, &after, &e);
	ck_assert_str_eq(before.data, after.data);
	pd_buf_free(&before), pd_buf_free(&after), pd_buf_free(&pr);
	pd_diags_free(&d);
	pd_deploy_board_free(b);
	pd_plan_free(p);
}
END_TEST

START_TEST(apply_then_restore)
{
	set_hw_freqs();
	pd_deploy_board *b = board();
	pd_buf before, after;
	state(b, &before);
	pd_err e = {0};
	ck_assert_msg(pd_deploy_board_apply(b, plan, plan_dir, &e) == 0, "%s", e.msg);
	/* userspace governor where available, else performance with min = max */
	ck_assert_str_eq(rd("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"), "userspace");
	ck_assert_str_eq(rd("/sys/devices/system/cpu/cpufreq/policy0/scaling_setspeed"), "800000");
	ck_assert_str_eq(rd("/sys/devices/system/cpu/cpufreq/policy2/scaling_governor"), "performance");
	ck_assert_str_eq(rd("/sys/devices/system/cpu/cpufreq/policy2/scaling_min_freq"), "200000");
	ck_assert_str_eq(rd("/sys/devices/system/cpu/cpufreq/policy2/scaling_max_freq"), "200000");
	ck_assert_str_eq(rd("/sys/class/devfreq/gpu0/min_freq"), "114750000");
	ck_assert_str_eq(rd("/sys/class/devfreq/gpu0/max_freq"), "114750000");
	ck_assert_str_eq(rd("/sys/fs/cgroup/cpuset/powerdag/cpuset.cpus"), "1,2");
	ck_assert_str_eq(rd("/sys/fs/cgroup/cpuset/powerdag/cpuset.cpu_exclusive"), "1");
	ck_assert_str_eq(rd("/sys/fs/cgroup/cpuset/powerdag/cpu1/cpuset.cpus"), "1");
	ck_assert_str_eq(rd("/sys/fs/cgroup/cpuset/powerdag/cpu2/cpuset.cpu_exclusive"), "1");
	ck_assert_str_eq(rd("/sys/fs/cgroup/cpuset/powerdag/cpu2/cpuset.mems"), "0");
	ck_assert_str_eq(rd("/sys/fs/cgroup/cpuset/cpuset.sched_load_balance"), "0");
	ck_assert_str_eq(rd("/proc/sys/kernel/sched_rt_runtime_us"), "900000");
	ck_assert_str_eq(rd("/sys/kernel/debug/sched/fair_server/cpu1/runtime"), "40000000");
	ck_assert_str_eq(rd("/sys/kernel/debug/sched/fair_server/cpu0/runtime"), "50000000");
	ck_assert_str_eq(rd("/lib/firmware/img.bin"), "BITSTREAM-BYTES");
	ck_assert_str_eq(rd("/sys/class/fpga_manager/fpga0/firmware"), "img.bin");
	char cg[600];
	snprintf(cg, sizeof(cg), "%s/sys/fs/cgroup/cpuset/powerdag", root);
	ck_assert_str_eq(pd_deploy_board_info(b)->cgroup_dir, cg);
	ck_assert_uint_gt(pd_deploy_board_pending(b), 10);
	pd_buf rec;
	pd_buf_init(&rec);
	pd_deploy_board_record_text(b, &rec);
	ck_assert_ptr_nonnull(strstr(rec.data, "value\t/sys/devices/system/cpu/cpufreq/policy0/scaling_governor\t"
					       "schedutil\tuserspace"));
	pd_buf_free(&rec);
	pd_buf left;
	pd_buf_init(&left);
	ck_assert_msg(pd_deploy_board_restore(b, &left, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(left.len, 0);
	ck_assert_int_eq(pd_deploy_board_pending(b), 0);
	state(b, &after);
	ck_assert_str_eq(before.data, after.data);
	ck_assert_str_eq(rd("/lib/firmware/other.bin"), "keep me");
	ck_assert_str_eq(rd("/lib/firmware/img.bin"), "<absent>");
	pd_buf_free(&before), pd_buf_free(&after), pd_buf_free(&left);
	pd_deploy_board_free(b);
}
END_TEST

START_TEST(frequency_readback_mismatch)
{
	/* the fake "hardware" stays at 1.4 GHz: the deploy must notice, fail, and restore cleanly */
	pd_deploy_board *b = board();
	pd_buf before, after;
	state(b, &before);
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_board_apply(b, plan, plan_dir, &e), PD_EXIT_ENV);
	ck_assert_msg(strstr(e.msg, "asked for 800000 kHz") && strstr(e.msg, "1400000"), "%s", e.msg);
	ck_assert_int_eq(pd_deploy_board_restore(b, NULL, &e), 0);
	state(b, &after);
	ck_assert_str_eq(before.data, after.data);
	pd_buf_free(&before), pd_buf_free(&after);
	pd_deploy_board_free(b);
}
END_TEST

static const char *const fault_steps[] = {"freq", "devfreq", "cpuset", "bandwidth", "fpga"};

START_TEST(fault_at_each_step_restores)
{
	set_hw_freqs();
	pd_deploy_board *b = board();
	pd_buf before, after;
	state(b, &before);
	struct pd_deploy_fault f;
	pd_err e = {0};
	char spec[64];
	snprintf(spec, sizeof(spec), "%s:fail", fault_steps[_i]);
	ck_assert_int_eq(pd_deploy_fault_parse(spec, &f, &e), 0);
	/* the board layer takes the fault through the deployer's private hook */
	pd_deploy_board_set_hooks(b, &f, NULL);
	ck_assert_int_eq(pd_deploy_board_apply(b, plan, plan_dir, &e), PD_EXIT_ENV);
	ck_assert_msg(strstr(e.msg, "injected fault") != NULL, "%s", e.msg);
	ck_assert_uint_gt(pd_deploy_board_pending(b), 0);
	ck_assert_int_eq(pd_deploy_board_restore(b, NULL, &e), 0);
	state(b, &after);
	ck_assert_str_eq(before.data, after.data);
	pd_buf_free(&before), pd_buf_free(&after);
	pd_deploy_board_free(b);
}
END_TEST

START_TEST(incomplete_restore_says_what_is_left)
{
	set_hw_freqs();
	pd_deploy_board *b = board();
	pd_buf before, after;
	state(b, &before);
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_board_apply(b, plan, plan_dir, &e), 0);
	/* the governor attribute becomes unwritable (a directory stands where the file was) */
	char p[700];
	snprintf(p, sizeof(p), "%s/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", root);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	pd_buf left;
	pd_buf_init(&left);
	ck_assert_int_eq(pd_deploy_board_restore(b, &left, &e), PD_EXIT_ENV);
	ck_assert_ptr_nonnull(strstr(e.msg, "1 change(s) left"));
	ck_assert_msg(strstr(left.data, "policy0/scaling_governor is 'userspace', was 'schedutil'") != NULL, "%s",
		      left.data);
	ck_assert_int_eq(pd_deploy_board_pending(b), 1);
	/* once the attribute is back, a second restore finishes the job */
	ck_assert_int_eq(rmdir(p), 0);
	FILE *f = fopen(p, "w");
	fputs("userspace\n", f);
	fclose(f);
	ck_assert_int_eq(pd_deploy_board_restore(b, NULL, &e), 0);
	state(b, &after);
	ck_assert_str_eq(before.data, after.data);
	pd_buf_free(&before), pd_buf_free(&after), pd_buf_free(&left);
	pd_deploy_board_free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("deployer_board");
	TCase *tc = tcase_create("board");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, preflight_clean);
	tcase_add_test(tc, preflight_lists_every_problem);
	tcase_add_test(tc, preflight_names_a_v2_partition_over_plan_cpus);
	tcase_add_test(tc, single_opp_island_needs_no_cpufreq);
	tcase_add_test(tc, apply_then_restore);
	tcase_add_test(tc, frequency_readback_mismatch);
	tcase_add_loop_test(tc, fault_at_each_step_restores, 0, 5);
	tcase_add_test(tc, incomplete_restore_says_what_is_left);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
