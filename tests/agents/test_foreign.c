/* SPDX-License-Identifier: MIT */
/* Other processes' SCHED_DEADLINE threads on the plan's CPUs (agents/foreign.c): the scan, the
 * refusal at the start of a run (nothing written), and the FOREIGN records of a thread that appears
 * while a run lasts. The rival is a child process that makes itself SCHED_DEADLINE (1 ms every
 * 10 ms, sleeping: it takes no CPU time from the machine's other tests) with the affinity it
 * inherits, i.e. every CPU, as a program started from a shell would. */
#include "agents/foreign_impl.h"
#include "agents/measure_impl.h"
#include "agents/pd_agent.h"
#include "helper_agents.h"
#include "pd_test.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RIVAL_RUNTIME_NS (1 * PD_NS_PER_MS)
#define RIVAL_PERIOD_NS (10 * PD_NS_PER_MS)

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* A child named "pd-rival" that waits delay_ms, becomes SCHED_DEADLINE, writes the result (0 or
 * -errno) to the pipe, then sleeps for hold_ms (0: until killed) and exits. Returns its pid and
 * asserts it became SCHED_DEADLINE (after delay_ms). */
static pid_t rival_start(int delay_ms, int hold_ms, int *ready_fd)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(p[0]);
		prctl(PR_SET_NAME, "pd-rival", 0, 0, 0);
		sleep_ms(delay_ms);
		struct pd_agent_sched_attr a = {.size = sizeof(a), .sched_policy = PD_SCHED_DEADLINE,
						.sched_runtime = RIVAL_RUNTIME_NS, .sched_deadline = RIVAL_PERIOD_NS,
						.sched_period = RIVAL_PERIOD_NS};
		int rc = pd_agent_sched_setattr(0, &a);
		if (write(p[1], &rc, sizeof(rc)) != sizeof(rc))
			_exit(1);
		if (hold_ms)
			sleep_ms(hold_ms);
		else
			for (;;)
				pause();
		_exit(0);
	}
	close(p[1]);
	*ready_fd = p[0];
	return pid;
}

static void rival_wait_ready(int fd)
{
	int rc = 1;
	ck_assert_int_eq(read(fd, &rc, sizeof(rc)), (ssize_t)sizeof(rc));
	close(fd);
	ck_assert_msg(rc == 0, "the rival could not become SCHED_DEADLINE: %s", strerror(-rc));
}

static void rival_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static bool found(const struct pd_foreign_thread *t, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n && i < PD_AGENT_FOREIGN_MAX; i++)
		if (t[i].tid == tid)
			return true;
	return false;
}

START_TEST(scan_and_refusal)
{
	if (!pd_th_can_dl())
		return;
	int cpu0[] = {0}, fd;
	struct pd_foreign_thread t[PD_AGENT_FOREIGN_MAX];
	pid_t pid = rival_start(0, 0, &fd);
	rival_wait_ready(fd);
	/* the rival: its reservation, its name, the first plan CPU it may run on */
	size_t n = foreign_scan("/proc", getpid(), cpu0, 1, t, PD_AGENT_FOREIGN_MAX);
	ck_assert(found(t, n, pid));
	for (size_t i = 0; i < n && i < PD_AGENT_FOREIGN_MAX; i++)
		if (t[i].tid == pid) {
			ck_assert_int_eq(t[i].pid, pid);
			ck_assert_int_eq(t[i].cpu, 0);
			ck_assert_int_eq(t[i].runtime_ns, RIVAL_RUNTIME_NS);
			ck_assert_int_eq(t[i].deadline_ns, RIVAL_PERIOD_NS);
			ck_assert_int_eq(t[i].period_ns, RIVAL_PERIOD_NS);
			ck_assert_str_eq(t[i].comm, "pd-rival");
		}
	/* the deployer's pre-flight (powerdag-agent check-foreign): one line naming it */
	struct pd_agent_spec spec = {0};
	pd_err le = {0};
	ck_assert_msg(pd_agent_spec_load(pd_test_src("tests/agents/plans/e2e.plan.yaml"), &spec, NULL, &le) == 0, "%s",
		      le.msg);
	pd_buf pb;
	pd_buf_init(&pb);
	ck_assert_uint_ge(pd_agent_check_foreign(&spec, &pb), 1);
	char line[64];
	snprintf(line, sizeof(line), "SCHED_DEADLINE thread %d 'pd-rival'", (int)pid);
	ck_assert_msg(pb.data && strstr(pb.data, line), "problems: %s", pb.data ? pb.data : "");
	pd_buf_free(&pb);
	pd_agent_spec_free(&spec);
	/* a process' own threads are not foreign to it */
	n = foreign_scan("/proc", pid, cpu0, 1, t, PD_AGENT_FOREIGN_MAX);
	ck_assert(!found(t, n, pid));
	/* the agent refuses to start: exit 3 naming the thread, and no run log */
	pd_err e = {0};
	const char *dir = NULL;
	int rc = pd_th_run(pd_test_src("tests/agents/plans/e2e.plan.yaml"), 1000, NULL, &dir, &e);
	ck_assert_int_eq(rc, PD_EXIT_ENV);
	char want[64];
	snprintf(want, sizeof(want), "thread %d 'pd-rival'", (int)pid);
	ck_assert_msg(strstr(e.msg, want) && strstr(e.msg, "SCHED_DEADLINE"), "message: %s", e.msg);
	struct stat st;
	ck_assert_msg(stat(dir, &st) != 0, "the refused run created %s", dir);
	/* profile's measurements (powerdag-agent measure) refuse as well: their figures would hold the
	 * rival's turns */
	ck_assert_int_eq(measure_alone_on(cpu0, 1), PD_EXIT_ENV);
	char *spread[] = {"spread", "--cpus", "0", "--jobs", "10", NULL};
	ck_assert_int_eq(measure_spread(5, spread), PD_EXIT_ENV);
	char *over[] = {"overhead", "--cpu", "0", NULL};
	ck_assert_int_eq(measure_overhead(3, over), PD_EXIT_ENV);
	rival_stop(pid);
	/* gone: not found any more, and a run may start */
	n = foreign_scan("/proc", getpid(), cpu0, 1, t, PD_AGENT_FOREIGN_MAX);
	ck_assert(!found(t, n, pid));
	ck_assert_int_eq(foreign_refuse("/proc", cpu0, 1, &e), 0);
	ck_assert_int_eq(measure_alone_on(cpu0, 1), 0);
}
END_TEST

/* A rival that appears 0.6 s into a 2.5-s run and leaves 1 s later: FOREIGN records of its tid, the
 * first from the first scan after it appeared, the last within a scan period of its end. */
START_TEST(a_rival_during_the_run_is_recorded)
{
	if (!pd_th_can_dl())
		return;
	int fd;
	pid_t pid = rival_start(600, 1000, &fd);
	pd_err e = {0};
	const char *dir = NULL;
	int rc = pd_th_run(pd_test_src("tests/agents/plans/e2e.plan.yaml"), 2500, NULL, &dir, &e);
	rival_wait_ready(fd);
	waitpid(pid, NULL, 0);
	ck_assert_msg(rc == 0, "run: %s", e.msg);
	pd_runlog *r = pd_th_log(dir);
	ck_assert_int_eq(pd_runlog_foreign_period_ns(r), PD_AGENT_FOREIGN_PERIOD_NS);
	int64_t first = -1, last = -1;
	size_t mine = 0;
	for (size_t i = 0; i < pd_runlog_foreign_count(r); i++) {
		const struct pd_runlog_foreign_rec *f = pd_runlog_foreign(r, i);
		if (f->tid != pid)
			continue;
		mine++;
		ck_assert_int_eq(f->runtime_ns, RIVAL_RUNTIME_NS);
		ck_assert_int_eq(f->period_ns, RIVAL_PERIOD_NS);
		ck_assert_int_eq(strncmp(f->comm, "pd-rival", PD_RUNLOG_COMM_LEN), 0);
		if (first < 0)
			first = f->from_ns;
		ck_assert_int_eq(f->from_ns, first); /* every record says when the run first saw it */
		last = f->t_ns;
	}
	/* it was there from 0.6 s (after t0, which is later than the fork) to 1.6 s: 1-3 scans of 0.5 s */
	ck_assert_msg(mine >= 1 && mine <= 3, "%zu records of the rival", mine);
	ck_assert_msg(last - first <= 1100 * PD_NS_PER_MS, "seen from %lld to %lld ns", (long long)first, (long long)last);
	ck_assert_msg(last <= 2000 * PD_NS_PER_MS, "seen until %lld ns, after it left", (long long)last);
	pd_runlog_free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agents_foreign");
	TCase *tc = tcase_create("foreign");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, scan_and_refusal);
	tcase_add_test(tc, a_rival_during_the_run_is_recorded);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
