/* SPDX-License-Identifier: MIT */
/*
 * Starvation monitor (label e2e;slow: it hogs CPU 1 with a SCHED_FIFO loop for ~3.5 s): a
 * SCHED_OTHER thread pinned to CPU 1 behind a FIFO hog runs only when the fair server (or RT
 * throttling) lets it, about 50 ms per second; with a 300 ms threshold the monitor must notice it
 * and record an intervention naming that thread.
 */
#include "helper_agents.h"
#include "pd_test.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pid_t spin_child(int fifo)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid)
		return pid;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	sched_setaffinity(0, sizeof(set), &set);
	if (fifo) {
		struct sched_param sp = {.sched_priority = 1};
		sched_setscheduler(0, SCHED_FIFO, &sp);
	}
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do /* bounded: never outlives the test even if the parent dies */
		clock_gettime(CLOCK_MONOTONIC, &t);
	while (t.tv_sec - t0.tv_sec < 4);
	_exit(0);
}

/* One 3-s run with a fresh hog and victim; asserts the detection and judges the chain's timing. */
static void starve_once(struct pd_th_verdict *v)
{
	long long steal0 = pd_th_steal_ms();
	pid_t victim = spin_child(0);
	pid_t hog = spin_child(1);
	struct pd_agent_opts o;
	pd_agent_opts_init(&o);
	o.no_power = true;
	o.starvation_monitor = true;
	o.starve_threshold_ns = 300 * PD_NS_PER_MS;
	const char *dir;
	pd_err e = {0};
	int rc = pd_th_run(pd_test_src("tests/agents/plans/chain2.plan.yaml"), 3000, &o, &dir, &e);
	kill(hog, SIGKILL);
	kill(victim, SIGKILL);
	waitpid(hog, NULL, 0);
	waitpid(victim, NULL, 0);
	ck_assert_msg(rc == 0, "%s", e.msg);
	pd_runlog *r = pd_th_log(dir);
	size_t found = 0;
	for (size_t i = 0; i < pd_runlog_starve_count(r); i++) {
		const struct pd_runlog_starve_rec *s = pd_runlog_starve(r, i);
		ck_assert_int_ne(s->tid, hog); /* never the RT hog itself */
		if (s->tid == victim) {
			found++;
			ck_assert_int_eq(s->cpu, 1);
			ck_assert_int_ge(s->waited_ns, 300 * PD_NS_PER_MS);
			fprintf(stderr, "starve: tid %d waited %lld ms, boost result %d\n", s->tid,
				(long long)(s->waited_ns / PD_NS_PER_MS), s->result);
		}
	}
	ck_assert_uint_ge(found, 1);
	ck_assert_uint_eq(pd_th_instances(r, "chain", NULL, NULL), 150);
	pd_th_judge(r, "chain", pd_th_steal_ms() - steal0, 3000, v);
	pd_th_describe_misses(r);
	pd_runlog_free(r);
}

START_TEST(starving_fair_thread_is_detected)
{
	if (!pd_th_can_dl())
		return;
	/* The plan's DL tasks are above the hog and the 5 % boost, so the chain never misses on a quiet
	 * machine; a host that stalls the vCPU for a whole 20-ms period makes one miss anyway (seen in
	 * CI: 2 of 150): the run is judged by pd_th_judge (quiet: no miss; noisy: short episodes) and
	 * repeated, up to three runs, when it falls short. */
	struct pd_th_verdict v;
	for (int attempt = 0; attempt < 3; attempt++) {
		starve_once(&v);
		fprintf(stderr, "attempt %d (%s): %zu misses, %lld ms of stolen CPU time, %zu stalls\n", attempt + 1,
			v.quiet ? "quiet" : "noisy", v.misses, v.steal_ms, v.stalls);
		if (v.ok)
			break;
	}
	pd_th_assert_timing(&v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agents_starve_e2e");
	TCase *tc = tcase_create("starve");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, starving_fair_thread_is_detected);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
