/* SPDX-License-Identifier: MIT */
/*
 * The powerdag-agent binary: exit codes of the contract (0 / 2 / 3), --self-test, --version, a clean
 * stop on SIGTERM, and kill -9 leaving a readable log (the next agent cleans the cpusets up).
 */
#include "helper_agents.h"
#include "pd_test.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *agent(void) { return pd_test_bin("agents/powerdag-agent"); }

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

START_TEST(version_and_self_test)
{
	char out[4096];
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s --version", agent()), 0);
	ck_assert_ptr_nonnull(strstr(out, "powerdag-agent " PD_VERSION));
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s --self-test", agent()), 0);
	ck_assert_ptr_nonnull(strstr(out, "clock:          ok"));
	ck_assert_ptr_nonnull(strstr(out, "sched_setattr:"));
	ck_assert_ptr_nonnull(strstr(out, "libiio:"));
	ck_assert_ptr_nonnull(strstr(out, "self-test passed"));
}
END_TEST

START_TEST(usage_errors_exit_2)
{
	char tmp[512]; /* pd_test_* return rotating buffers: keep a copy */
	snprintf(tmp, sizeof(tmp), "%s", pd_test_tmpdir());
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s 2>/dev/null", agent()), 2);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s run 2>/dev/null", agent()), 2);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s run %s 2>/dev/null", agent(),
				     pd_test_src("tests/agents/plans/chain2.plan.yaml")), 2); /* no --out */
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s run %s --out %s/o --sample-hz 5000 2>/dev/null", agent(),
				     pd_test_src("tests/agents/plans/chain2.plan.yaml"), tmp), 2);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s run %s --out %s/o --duration -1 2>/dev/null", agent(),
				     pd_test_src("tests/agents/plans/chain2.plan.yaml"), tmp), 2);
	char bad[600];
	snprintf(bad, sizeof(bad), "%s", pd_test_write(tmp, "bad.yaml", "plan:\n  version: 1\n"));
	char out[4096];
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s run %s --out %s/o 2>&1", agent(), bad, tmp), 2);
	ck_assert_ptr_nonnull(strstr(out, "bad.yaml:"));
	char p[600];
	snprintf(p, sizeof(p), "%s/o/run.pdlog", tmp);
	ck_assert_int_ne(access(p, F_OK), 0);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s dump %s 2>/dev/null", agent(), bad), 2);
	/* the test-only overrun injection: a malformed value or a task the plan lacks, exit 2, no log */
	const char *plan = pd_test_src("tests/agents/plans/late.plan.yaml");
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "PD_AGENT_INJECT_OVERRUN=chain/b %s run %s --out %s/o 2>&1", agent(),
				     plan, tmp), 2);
	ck_assert_ptr_nonnull(strstr(out, "PD_AGENT_INJECT_OVERRUN"));
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "PD_AGENT_INJECT_OVERRUN=chain/zz:3:2 %s run %s --out %s/o 2>&1",
				     agent(), plan, tmp), 2);
	ck_assert_ptr_nonnull(strstr(out, "chain/zz"));
	ck_assert_int_ne(access(p, F_OK), 0);
}
END_TEST

START_TEST(ebusy_exits_3_with_the_task_named)
{
	if (!pd_th_can_dl())
		return;
	char tmp[512];
	snprintf(tmp, sizeof(tmp), "%s", pd_test_tmpdir());
	char out[4096];
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s run %s --out %s/o --duration 1 2>&1", agent(),
				     pd_test_src("tests/agents/plans/ebusy.plan.yaml"), tmp),
			 3);
	ck_assert_ptr_nonnull(strstr(out, "task 'over/second' on cpu0"));
	ck_assert_ptr_nonnull(strstr(out, "powerdag check"));
}
END_TEST

static pid_t spawn(const char *plan, const char *out_dir, const char *extra)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		freopen("/dev/null", "w", stderr);
		execl(agent(), "powerdag-agent", "run", plan, "--out", out_dir, "--no-power", extra, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* A run stopped by SIGTERM after ~1 s; judges its chain's timing (the other checks assert). */
static void sigterm_once(const char *dir, struct pd_th_verdict *v)
{
	long long steal0 = pd_th_steal_ms();
	pid_t pid = spawn(pd_test_src("tests/agents/plans/chain2.plan.yaml"), dir, "--seed=7");
	char log[700];
	snprintf(log, sizeof(log), "%s/run.pdlog", dir);
	ck_assert(pd_th_wait_file(log, 15000)); /* running (another agent may hold the cpusets first) */
	sleep_ms(1000);
	kill(pid, SIGTERM);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	pd_runlog *r = pd_th_log(dir);
	ck_assert_ptr_nonnull(pd_runlog_end(r));
	ck_assert_uint_eq(pd_runlog_end(r)->reason, 1);
	size_t n = pd_th_instances(r, "chain", NULL, NULL);
	ck_assert_uint_ge(n, 30);
	pd_th_judge(r, "chain", pd_th_steal_ms() - steal0, pd_runlog_end(r)->t_ns / PD_NS_PER_MS, v);
	pd_runlog_free(r);
	ck_assert_int_eq(pd_th_cpuset_leftovers(), 0);
}

START_TEST(sigterm_stops_cleanly)
{
	if (!pd_th_can_dl())
		return;
	struct pd_th_verdict v = {0};
	for (int attempt = 0; attempt < 2 && !v.ok; attempt++) { /* pd_th_judge: a stalled host, once more */
		char dir[600];
		snprintf(dir, sizeof(dir), "%s/o%d", pd_test_tmpdir(), attempt);
		sigterm_once(dir, &v);
	}
	pd_th_assert_timing(&v);
}
END_TEST

/* A run killed with SIGKILL after ~1.5 s: its log is readable and complete up to the last flush.
 * Judges the chain's timing; *pid_out the killed agent. */
static void kill9_once(const char *dir, pid_t *pid_out, struct pd_th_verdict *v)
{
	long long steal0 = pd_th_steal_ms();
	pid_t pid = spawn(pd_test_src("tests/agents/plans/chain2.plan.yaml"), dir, "--duration=30");
	char log[700];
	snprintf(log, sizeof(log), "%s/run.pdlog", dir);
	ck_assert(pd_th_wait_file(log, 15000));
	sleep_ms(1500);
	/* what is on disk just before the kill must all survive it */
	pd_runlog *before = pd_th_log(dir);
	size_t n_before = pd_th_instances(before, "chain", NULL, NULL);
	pd_runlog_free(before);
	kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
	*pid_out = pid;
	pd_runlog *r = pd_th_log(dir);
	ck_assert_ptr_null(pd_runlog_end(r));
	/* ~1.5 s of releases at 20 ms after the log appeared (75); the rings are flushed every 250 ms,
	 * by a thread that is not real-time: on a loaded 2-CPU host the last flush can come ~0.3 s
	 * late (CI saw 59). At most the last fraction of a second is lost: at least 1 s of releases. */
	size_t n = pd_th_instances(r, "chain", NULL, NULL);
	ck_assert_uint_ge(n, n_before);
	ck_assert_uint_ge(n, 50);
	ck_assert_uint_le(n, 80);
	ck_assert_uint_lt(pd_runlog_dropped_bytes(r), 4096);
	for (size_t i = 0; i < n; i++) /* complete, in order */
		ck_assert_uint_eq(pd_runlog_instance(r, i)->seq, i);
	pd_th_judge(r, "chain", pd_th_steal_ms() - steal0, (int64_t)n * 20, v);
	pd_runlog_free(r);
}

START_TEST(kill_9_leaves_a_readable_log)
{
	if (!pd_th_can_dl())
		return;
	struct pd_th_verdict v = {0};
	pid_t pid = 0;
	for (int attempt = 0; attempt < 2 && !v.ok; attempt++) { /* pd_th_judge: a stalled host, once more */
		char dir[600];
		snprintf(dir, sizeof(dir), "%s/o%d", pd_test_tmpdir(), attempt);
		kill9_once(dir, &pid, &v);
	}
	pd_th_assert_timing(&v);
	/* the killed agent left its cpusets and an unbalanced root; the next agent (this test's, or one
	 * of a test running in parallel) repairs both */
	char path[600];
	snprintf(path, sizeof(path), "/sys/fs/cgroup/cpuset/powerdag-agent-%d", (int)pid);
	char dir2[600];
	snprintf(dir2, sizeof(dir2), "%s/o2", pd_test_tmpdir());
	pid_t p2 = spawn(pd_test_src("tests/agents/plans/chain2.plan.yaml"), dir2, "--duration=0.2");
	int st;
	waitpid(p2, &st, 0);
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_int_ne(access(path, F_OK), 0);
	int bal = pd_th_root_balance_quiet();
	ck_assert(bal == 1 || bal == PD_TH_BALANCE_PENDING); /* pending: yet another agent was killed */
}
END_TEST

START_TEST(dump_views)
{
	if (!pd_th_can_dl())
		return;
	char dir[600];
	snprintf(dir, sizeof(dir), "%s/o", pd_test_tmpdir());
	char out[1 << 15];
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s run %s --out %s --duration 0.3 --no-power 2>/dev/null", agent(),
				     pd_test_src("tests/agents/plans/chain2.plan.yaml"), dir),
			 0);
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s dump %s/run.pdlog", agent(), dir), 0);
	/* the summary agrees with the log reader (misses not asserted zero: a stalled host may cause one) */
	pd_runlog *r = pd_th_log(dir);
	size_t misses;
	ck_assert_uint_eq(pd_th_instances(r, "chain", &misses, NULL), 15);
	pd_runlog_free(r);
	char want[64];
	snprintf(want, sizeof(want), "dag chain: instances 15 misses %zu unfinished", misses);
	ck_assert_msg(strstr(out, want) != NULL, "no '%s' in:\n%s", want, out);
	ck_assert_ptr_nonnull(strstr(out, "end: duration"));
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s dump %s/run.pdlog instances | wc -l", agent(), dir), 0);
	ck_assert_int_eq(atoi(out), 16);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s dump %s/run.pdlog nope 2>/dev/null", agent(), dir), 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agents_cli");
	TCase *tc = tcase_create("cli");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, version_and_self_test);
	tcase_add_test(tc, usage_errors_exit_2);
	tcase_add_test(tc, ebusy_exits_3_with_the_task_named);
	tcase_add_test(tc, sigterm_stops_cleanly);
	tcase_add_test(tc, kill_9_leaves_a_readable_log);
	tcase_add_test(tc, dump_views);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
