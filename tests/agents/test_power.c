/* SPDX-License-Identifier: MIT */
/*
 * Power sampler against a fake IIO tree bound over /sys/bus in a private mount namespace (each
 * libcheck test runs in its own forked process, so the namespace never leaks): raw*scale and input
 * channels, lookup by label and by name, updates, a lost sensor as a gap, and a whole agent run
 * streaming power samples and gap records into the run log.
 */
#include "helper_agents.h"
#include "pd_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct pd_agent_rail RAILS[] = {
	{"local:", "ina226-u76", "power2", "VCCINT", "cpu", 0.001}, /* by label, raw * scale (mW) */
	{"local:", "ina3221x", "power0", "GPU", "gpu0", 0.001},     /* by name, processed input (mW) */
	{"local:", "ina226-u99", "power2", "GONE", "ddr", 0.001},   /* not on this board */
	{"local:", "iio:device0", "current3", "I", "board", 1.0},  /* by id; mA * 1 = "W" */
};

START_TEST(reads_fake_tree)
{
	if (geteuid() != 0)
		return;
	char root[512];
	snprintf(root, sizeof(root), "%s", pd_test_tmpdir());
	pd_th_fake_iio(root);
	pd_th_enter_fake_sys(root);
	pd_power *p = pd_agent_power_open(RAILS, 4, NULL);
	ck_assert_ptr_nonnull(p);
	struct pd_agent_power_sample s[4];
	ck_assert_uint_eq(pd_agent_power_read(p, s), 3);
	ck_assert_int_eq(s[0].uw, 1337500); /* 107 * 12.5 mW */
	ck_assert_int_eq(s[1].uw, 2500000);
	ck_assert_int_eq(s[2].uw, INT64_MIN);
	ck_assert_int_eq(s[2].err, ENOENT);
	ck_assert_int_eq(s[3].uw, 1576000000); /* 3152 * 0.5 mA, scale 1 */
	ck_assert_ptr_nonnull(strstr(pd_agent_power_rail_state(p, 2), "not found"));
	/* values updated by rename are read fresh */
	pd_th_fake_set(root, "iio:device0", "in_power2_raw", "200");
	pd_th_fake_set(root, "iio:device1", "in_power0_input", "1234");
	pd_agent_power_read(p, s);
	ck_assert_int_eq(s[0].uw, 2500000);
	ck_assert_int_eq(s[1].uw, 1234000);
	/* many updates, each read fresh */
	for (int v = 1; v <= 50; v++) {
		char txt[16];
		snprintf(txt, sizeof(txt), "%d", v * 8);
		pd_th_fake_set(root, "iio:device0", "in_power2_raw", txt);
		pd_agent_power_read(p, s);
		ck_assert_int_eq(s[0].uw, v * 100000); /* v * 8 * 12.5 mW */
	}
	/* a sensor that disappears is a gap, and comes back */
	char f[700];
	snprintf(f, sizeof(f), "%s/bus/iio/devices/iio:device1/in_power0_input", root);
	ck_assert_int_eq(unlink(f), 0);
	ck_assert_uint_eq(pd_agent_power_read(p, s), 2);
	ck_assert_int_eq(s[1].uw, INT64_MIN);
	ck_assert_int_eq(s[1].err, ENOENT);
	ck_assert_uint_eq(pd_agent_power_read(p, s), 2);
	pd_th_fake_set(root, "iio:device1", "in_power0_input", "1234");
	ck_assert_uint_eq(pd_agent_power_read(p, s), 3);
	ck_assert_int_eq(s[1].uw, 1234000);
	pd_agent_power_close(p);
}
END_TEST

START_TEST(no_iio_at_all_is_gaps_not_a_crash)
{
	/* network URI with nothing listening: every read is a gap with the connect error */
	struct pd_agent_rail r = {"ip:127.0.0.1:1", "x", "power0", "R", "board", 0.001};
	pd_power *p = pd_agent_power_open(&r, 1, NULL);
	ck_assert_ptr_nonnull(p);
	struct pd_agent_power_sample s;
	ck_assert_uint_eq(pd_agent_power_read(p, &s), 0);
	ck_assert_int_eq(s.uw, INT64_MIN);
	ck_assert_int_ne(s.err, 0);
	ck_assert_ptr_nonnull(strstr(pd_agent_power_rail_state(p, 0), "no IIO context"));
	pd_agent_power_close(p);
}
END_TEST

static const char *sensor_plan(const char *dir)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "plan:\n  version: 1\n  solver: {status: feasible, objective: power, solver: heuristic, gap: 0, solve_time_s: 0}\n"
		 "  predicted: {power: 1W, min_relative_slack: 0.5}\n"
		 "  islands:\n  - {name: cpu, freq: 2000MHz}\n"
		 "  tasks:\n"
		 "  - {dag: d, task: t, placement: 'cpu:1', wcet: 1ms, runtime: 2ms, deadline: 10ms, period: 10ms, reclaim: false}\n"
		 "  dags:\n  - name: d\n    period: 10ms\n    tasks:\n    - {name: t, wcet: 1ms, work: builtin:busy}\n"
		 "  platform:\n    name: test-2cpu\n    reference_frequency: 2000MHz\n"
		 "    islands:\n    - name: cpu\n      cpus: [0, 1]\n      capacity: 1\n      opps:\n"
		 "      - {freq: 2000MHz, busy: 1W, idle: 100mW}\n"
		 "    sensors:\n"
		 "    - {device: ina226-u76, channel: power2, rail: VCCINT, measures: cpu}\n"
		 "    - {device: ina3221x, channel: power0, rail: GPU, measures: cpu}\n"
		 "    - {device: ina226-u99, channel: power2, rail: GONE, measures: board}\n");
	return pd_test_write(dir, "sensors.plan.yaml", text);
}

START_TEST(agent_streams_power_and_gaps)
{
	if (!pd_th_can_dl())
		return;
	char root[512];
	snprintf(root, sizeof(root), "%s", pd_test_tmpdir());
	pd_th_fake_iio(root);
	pd_th_enter_fake_sys(root);
	struct pd_agent_opts o;
	pd_agent_opts_init(&o);
	o.sample_hz = 200;
	const char *dir;
	pd_err e = {0};
	struct pd_th_verdict v; /* the sampler's test; the run's timing is judged like every timing test */
	int rc = pd_th_run_steady(sensor_plan(root), 500, &o, &dir, &e, 2, NULL, NULL, &v);
	ck_assert_msg(rc == 0, "%s", e.msg);
	pd_runlog *r = pd_th_log(dir);
	ck_assert_uint_eq(pd_runlog_rail_count(r), 3);
	ck_assert_str_eq(pd_runlog_rail(r, 0)->name, "VCCINT");
	ck_assert_int_eq(pd_runlog_sample_hz(r), 200);
	size_t n = pd_runlog_power_count(r);
	/* 100 ticks in 500 ms at 200 Hz, a late tick may be skipped, and one per 5 ms the host stole */
	long long lost = v.steal_ms / 5 < 90 ? v.steal_ms / 5 : 90;
	ck_assert_uint_ge(n, (size_t)(90 - lost));
	/* ticks at 0, 5, ..., 500 ms, plus at most two while a slow (sanitized) run is being stopped; a
	 * catch-up burst would show in the spacing check below */
	ck_assert_uint_le(n, 103);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(pd_runlog_power_uw(r, i, 0), 1337500);
		ck_assert_int_eq(pd_runlog_power_uw(r, i, 1), 2500000);
		ck_assert_int_eq(pd_runlog_power_uw(r, i, 2), PD_RUNLOG_NO_VALUE);
		if (i) /* stamped when read; ticks due at 2.5 + 5k ms: at most one stamp per tick interval
			* [2.5 + 5k, 7.5 + 5k) ms, in order (a late tick is stamped in its interval or counts as the
			* next; a catch-up burst, or two threads taking one tick, would put two in one) */
			ck_assert_int_gt((pd_runlog_power_t(r, i) - 5 * PD_NS_PER_MS / 2) / (5 * PD_NS_PER_MS),
					 (pd_runlog_power_t(r, i - 1) - 5 * PD_NS_PER_MS / 2) / (5 * PD_NS_PER_MS));
	}
	ck_assert_uint_eq(pd_runlog_gap_count(r), 1); /* the missing rail: one gap over the whole run */
	ck_assert_uint_eq(pd_runlog_gap(r, 0)->rail, 2);
	ck_assert_int_eq(pd_runlog_gap(r, 0)->err, ENOENT);
	ck_assert_int_lt(pd_runlog_gap(r, 0)->start_ns, 5 * PD_NS_PER_MS); /* from the first tick */
	ck_assert_int_ge(pd_runlog_gap(r, 0)->end_ns, 490 * PD_NS_PER_MS);
	ck_assert_uint_eq(pd_th_instances(r, "d", NULL, NULL), 50);
	pd_th_assert_timing(&v);
	pd_runlog_free(r);
}
END_TEST

/* A chain a -> b, a on cpu0 then b on cpu1, 3 ms of busy work each every 10 ms: each CPU runs a job
 * 30 % of the time, never both at once. One sampler thread below the reservations would wait out
 * the jobs of its CPU and lose about 30 % of the 1-kHz ticks (800 of 1000 taken here with one thread); one per plan CPU (the first awake takes
 * the tick) loses none but what the host steals (1000 of 1000). */
static const char *alternating_plan(const char *dir)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "plan:\n  version: 1\n  solver: {status: feasible, objective: power, solver: heuristic, gap: 0, solve_time_s: 0}\n"
		 "  predicted: {power: 1W, min_relative_slack: 0.1}\n"
		 "  islands:\n  - {name: cpu, freq: 2000MHz}\n"
		 "  tasks:\n"
		 "  - {dag: d, task: a, placement: 'cpu:0', wcet: 3ms, runtime: 3500us, deadline: 5ms, period: 10ms, reclaim: false}\n"
		 "  - {dag: d, task: b, placement: 'cpu:1', wcet: 3ms, runtime: 3500us, deadline: 5ms, period: 10ms, reclaim: false}\n"
		 "  dags:\n  - name: d\n    period: 10ms\n    tasks:\n"
		 "    - {name: a, wcet: 3ms, work: builtin:busy}\n    - {name: b, wcet: 3ms, work: builtin:busy}\n"
		 "    edges: [[a, b]]\n"
		 "  platform:\n    name: test-2cpu\n    reference_frequency: 2000MHz\n"
		 "    islands:\n    - name: cpu\n      cpus: [0, 1]\n      capacity: 1\n      opps:\n"
		 "      - {freq: 2000MHz, busy: 1W, idle: 100mW}\n"
		 "    sensors:\n"
		 "    - {device: ina226-u76, channel: power2, rail: VCCINT, measures: cpu}\n");
	return pd_test_write(dir, "alternating.plan.yaml", text);
}

START_TEST(a_tick_waits_only_when_every_plan_cpu_runs_jobs)
{
	if (!pd_th_can_dl() || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	char root[512];
	snprintf(root, sizeof(root), "%s", pd_test_tmpdir());
	pd_th_fake_iio(root);
	pd_th_enter_fake_sys(root);
	struct pd_agent_opts o;
	pd_agent_opts_init(&o);
	o.sample_hz = 1000;
	const char *dir;
	pd_err e = {0};
	struct pd_th_verdict v;
	/* The promise holds on a quiet run (helper_agents.h): a vCPU stall the kernel charges to a job,
	 * which /proc/stat may not count as stolen, also delays the sampler threads (CI, ASan: 876 of
	 * 1000 ticks in a run with one such stall and 0 ms counted stolen). A noisy run is repeated, up
	 * to three runs; when none is quiet only the ordering below is asserted, and the test says so. */
	pd_runlog *r = NULL;
	size_t n = 0;
	const struct pd_agent_opts o0 = o; /* a run fills in paths: each attempt starts anew */
	for (int attempt = 0; attempt < 3; attempt++) {
		pd_runlog_free(r);
		o = o0;
		int rc = pd_th_run_steady(alternating_plan(root), 1000, &o, &dir, &e, 3, NULL, NULL, &v);
		ck_assert_msg(rc == 0, "%s", e.msg);
		r = pd_th_log(dir);
		ck_assert_uint_eq(pd_th_instances(r, "d", NULL, NULL), 100);
		n = pd_runlog_power_count(r);
		if (v.quiet)
			break;
		fprintf(stderr, "noisy run %d: %zu of 1000 ticks, %zu stalls, %lld ms stolen%s\n", attempt + 1, n,
			v.stalls, v.steal_ms, attempt < 2 ? ": repeating" : ": the tick count is not judged");
	}
	/* 1000 ticks; a late one may be skipped around a job's start and end, and one per ms stolen */
	long long lost = v.steal_ms < 800 ? v.steal_ms : 800;
	if (v.quiet)
		ck_assert_msg(n >= (size_t)(900 - lost), "%zu of 1000 ticks (%lld ms stolen)", n, v.steal_ms);
	/* at most one sample per tick interval up to the END record: the sampler stops after the jobs
	 * are joined, a few ms after the 1000th tick (4 ms under ASan on a loaded VM), so the bound is
	 * the logged span, not 1000 */
	const struct pd_runlog_end_rec *end = pd_runlog_end(r);
	ck_assert_ptr_nonnull(end);
	ck_assert_msg(n <= (size_t)(end->t_ns / PD_NS_PER_MS) + 1, "%zu samples in %lld ms", n, (long long)end->t_ns);
	for (size_t i = 1; i < n; i++) /* ticks due at 0.5 + k ms: one stamp per tick interval, in order,
					* whichever thread took it */
		ck_assert_int_gt((pd_runlog_power_t(r, i) - PD_NS_PER_MS / 2) / PD_NS_PER_MS,
				 (pd_runlog_power_t(r, i - 1) - PD_NS_PER_MS / 2) / PD_NS_PER_MS);
	pd_th_assert_timing(&v);
	pd_runlog_free(r);
}
END_TEST

/* iiod serving the fake tree inside this test process's own network namespace */
static pid_t start_iiod(const char *root)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char cmd[1024];
		snprintf(cmd, sizeof(cmd), "mount --bind '%s/bus' /sys/bus && exec iiod", root);
		freopen("/dev/null", "w", stderr);
		freopen("/dev/null", "w", stdout);
		execlp("unshare", "unshare", "-m", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	/* wait until it accepts connections */
	for (int i = 0; i < 100; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(30431), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		int ok = connect(s, (struct sockaddr *)&a, sizeof(a)) == 0;
		close(s);
		if (ok)
			return pid;
		usleep(50000);
	}
	ck_abort_msg("iiod did not start");
	return -1;
}

START_TEST(network_reconnects_after_errors)
{
	if (geteuid() != 0 || access("/usr/sbin/iiod", X_OK) != 0)
		return;
	char root[512];
	snprintf(root, sizeof(root), "%s", pd_test_tmpdir());
	pd_th_fake_iio(root);
	signal(SIGPIPE, SIG_IGN); /* libiio writes to a dead socket; the agent blocks SIGPIPE in all its threads */
	ck_assert_int_eq(unshare(CLONE_NEWNET), 0); /* iiod binds every interface: keep it private */
	ck_assert_int_eq(system("ip link set lo up"), 0);
	pid_t iiod = start_iiod(root);
	struct pd_agent_rail rails[2] = {{"ip:127.0.0.1", "ina226-u76", "power2", "VCCINT", "cpu", 0.001},
					 {"ip:127.0.0.1", "ina3221x", "power0", "GPU", "gpu0", 0.001}};
	pd_power *p = pd_agent_power_open(rails, 2, NULL);
	struct pd_agent_power_sample s[2];
	ck_assert_uint_eq(pd_agent_power_read(p, s), 2);
	ck_assert_int_eq(s[0].uw, 1337500);
	ck_assert_int_eq(s[1].uw, 2500000);
	/* the board's iiod dies: gaps, never a crash, the context is dropped */
	kill(iiod, SIGKILL);
	waitpid(iiod, NULL, 0);
	ck_assert_uint_eq(pd_agent_power_read(p, s), 0);
	ck_assert_int_eq(s[0].uw, INT64_MIN);
	ck_assert_int_ne(s[0].err, 0);
	ck_assert_uint_eq(pd_agent_power_read(p, s), 0);
	/* it comes back with new values: the sampler reconnects (at most once a second) */
	pd_th_fake_set(root, "iio:device0", "in_power2_raw", "80");
	iiod = start_iiod(root);
	size_t ok = 0;
	for (int i = 0; i < 40 && ok < 2; i++) {
		usleep(100000);
		ok = pd_agent_power_read(p, s);
	}
	ck_assert_uint_eq(ok, 2);
	ck_assert_int_eq(s[0].uw, 1000000); /* 80 * 12.5 mW */
	ck_assert_ptr_nonnull(strstr(pd_agent_power_rail_state(p, 0), "via libiio"));
	pd_agent_power_close(p);
	kill(iiod, SIGKILL);
	waitpid(iiod, NULL, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agents_power");
	TCase *tc = tcase_create("power");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, reads_fake_tree);
	tcase_add_test(tc, no_iio_at_all_is_gaps_not_a_crash);
	tcase_add_test(tc, agent_streams_power_and_gaps);
	tcase_add_test(tc, a_tick_waits_only_when_every_plan_cpu_runs_jobs);
	tcase_add_test(tc, network_reconnects_after_errors);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
