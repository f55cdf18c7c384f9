/* SPDX-License-Identifier: MIT */
/*
 * The executor under SCHED_DEADLINE on this machine (root, cgroup v1 cpusets): a plan that passes
 * check runs with zero misses and respects precedence and placement; an over-running task is
 * throttled and reported while the DAG sharing its CPU keeps its deadlines; admission refused gives
 * exit 3 naming the task and leaves nothing behind; plugins, GPIO markers and accelerators work.
 */
#include "helper_agents.h"
#include "pd_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SKIP_WITHOUT_DL()                                                         \
	do {                                                                      \
		if (!pd_th_can_dl()) {                                            \
			fprintf(stderr, "skipped: needs root and cgroup v1 cpusets\n"); \
			return;                                                   \
		}                                                                 \
	} while (0)

START_TEST(checked_plan_runs_without_misses)
{
	SKIP_WITHOUT_DL();
	const char *dir;
	pd_err e = {0};
	struct pd_agent_opts o;
	pd_agent_opts_init(&o);
	o.no_power = true;
	struct pd_th_verdict v;
	int rc = pd_th_run_steady(pd_test_src("tests/agents/plans/chain2.plan.yaml"), 1000, &o, &dir, &e, 2, NULL, NULL, &v);
	ck_assert_msg(rc == 0, "%s", e.msg);
	pd_runlog *r = pd_th_log(dir);
	int64_t max_resp;
	size_t n = pd_th_instances(r, "chain", NULL, &max_resp);
	ck_assert_uint_eq(n, 50); /* releases at 0, 20, ..., 980 ms */
	pd_th_assert_timing(&v);
	if (v.quiet)
		ck_assert_int_le(max_resp, 20 * PD_NS_PER_MS);
	ck_assert_int_ge(max_resp, 3 * PD_NS_PER_MS); /* a, then b||c, then d: at least 3 jobs of ~1 ms */
	ck_assert_ptr_nonnull(pd_runlog_end(r));
	ck_assert_uint_eq(pd_runlog_ring_drops(r), 0);
	ck_assert_ptr_nonnull(strstr(pd_runlog_header_json(r), "cgroup v1"));
	/* every job of every task, on its planned CPU, after its predecessors' job of the same instance */
	long a = pd_th_task(r, "chain", "a"), b = pd_th_task(r, "chain", "b"), c = pd_th_task(r, "chain", "c"),
	     d = pd_th_task(r, "chain", "d");
	int64_t end_of[4][50];
	int cpu_of[4] = {0, 1, 0, 1};
	size_t count[4] = {0};
	for (size_t i = 0; i < pd_runlog_job_count(r); i++) {
		const struct pd_runlog_job_rec *j = pd_runlog_job(r, i);
		ck_assert_uint_lt(j->seq, 50);
		ck_assert_int_eq(j->cpu, cpu_of[j->task]);
		ck_assert_int_eq(j->release_ns, (int64_t)j->seq * 20 * PD_NS_PER_MS);
		if (v.quiet) /* a stall the kernel charged to the thread is an overrun too */
			ck_assert_uint_eq(j->flags & PD_RUNLOG_JOB_OVERRUN, 0);
		end_of[j->task][j->seq] = j->end_ns;
		count[j->task]++;
	}
	for (int t = 0; t < 4; t++)
		ck_assert_uint_eq(count[t], 50);
	for (size_t i = 0; i < pd_runlog_job_count(r); i++) {
		const struct pd_runlog_job_rec *j = pd_runlog_job(r, i);
		if (j->flags & PD_RUNLOG_JOB_SKIPPED) /* a noisy run's abandoned instances: never executed */
			continue;
		if ((long)j->task == b || (long)j->task == c)
			ck_assert_int_ge(j->start_ns, end_of[a][j->seq]);
		if ((long)j->task == d) {
			ck_assert_int_ge(j->start_ns, end_of[b][j->seq]);
			ck_assert_int_ge(j->start_ns, end_of[c][j->seq]);
		}
		if ((long)j->task == a) /* a source starts at its release */
			ck_assert_int_ge(j->start_ns, j->release_ns);
		if ((long)j->task != c) /* builtin:busy: exactly its C_i(k,f) of CPU time */
			ck_assert_int_ge(j->cpu_ns, PD_NS_PER_MS);
	}
	pd_runlog_free(r);
	ck_assert_int_eq(pd_th_cpuset_leftovers(), 0);
	int bal = pd_th_root_balance_quiet(); /* restored (1 is the kernel's default) */
	ck_assert(bal == 1 || bal == PD_TH_BALANCE_PENDING);
}
END_TEST

START_TEST(overrun_is_throttled_and_neighbours_keep_deadlines)
{
	SKIP_WITHOUT_DL();
	const char *dir;
	pd_err e = {0};
	pd_runlog *r = NULL;
	struct pd_th_verdict v;
	for (int attempt = 0; attempt < 3; attempt++) { /* good's verdict (pd_th_judge): a stalled run repeats */
		if (r)
			pd_runlog_free(r);
		long long steal0 = pd_th_steal_ms();
		int rc = pd_th_run(pd_test_src("tests/agents/plans/overrun.plan.yaml"), 1000, NULL, &dir, &e);
		ck_assert_msg(rc == 0, "%s", e.msg);
		r = pd_th_log(dir);
		pd_th_judge(r, "good", pd_th_steal_ms() - steal0, 1000, &v);
		if (v.ok)
			break;
	}
	size_t hog_miss;
	ck_assert_uint_eq(pd_th_instances(r, "good", NULL, NULL), 50);
	pd_th_assert_timing(&v);
	size_t hog_n = pd_th_instances(r, "hog", &hog_miss, NULL);
	ck_assert_uint_gt(hog_miss, 0);
	ck_assert_uint_eq(hog_miss, hog_n); /* 6 ms of work on a 1 ms / 20 ms budget: every one late */
	pd_th_describe_misses(r); /* the diagnostic the steady runs print: every job of a late instance */
	long h = pd_th_task(r, "hog", "h");
	size_t hog_jobs = 0, flagged = 0, sig = 0, skipped = 0;
	for (size_t i = 0; i < pd_runlog_job_count(r); i++) {
		const struct pd_runlog_job_rec *j = pd_runlog_job(r, i);
		if ((long)j->task != h) {
			if (v.quiet) /* a noisy run may abandon an instance of good (within its verdict) */
				ck_assert_uint_eq(j->flags & (PD_RUNLOG_JOB_OVERRUN | PD_RUNLOG_JOB_SKIPPED), 0);
			continue;
		}
		if (j->flags & PD_RUNLOG_JOB_SKIPPED) { /* late: resync (the default) abandons what piled up */
			ck_assert_int_eq(j->cpu_ns, 0);
			skipped++;
			continue;
		}
		hog_jobs++;
		flagged += (j->flags & PD_RUNLOG_JOB_OVERRUN) != 0;
		sig += j->sigxcpu;
		/* throttled: 6 ms of CPU at about 1 ms per 20 ms period spans 6 periods: more than 4 of wall
		 * time wherever in its first period the job starts (unthrottled it would take 6 ms) */
		ck_assert_int_gt(j->end_ns - j->start_ns, 4 * 20 * PD_NS_PER_MS);
	}
	ck_assert_uint_gt(hog_jobs, 3);
	ck_assert_uint_gt(skipped, 0); /* each 6-period job leaves the releases it overlapped to be skipped */
	ck_assert_uint_eq(flagged, hog_jobs);
	/* SCHED_FLAG_DL_OVERRUN's SIGXCPU is raised from the scheduler tick that finds the overrunning
	 * task current; a task that runs 1 ms per 20 ms is often not current at any tick, so the count
	 * depends on HZ and load. What must hold: every overrun is flagged (above) and any SIGXCPU that
	 * did arrive was handled without killing the run (rc == 0). */
	printf("hog: %zu jobs, %zu flagged, %zu SIGXCPU\n", hog_jobs, flagged, sig);
	pd_runlog_free(r);
}
END_TEST

START_TEST(admission_refused_exits_3_naming_the_task)
{
	SKIP_WITHOUT_DL();
	const char *dir;
	pd_err e = {0};
	int rc = pd_th_run(pd_test_src("tests/agents/plans/ebusy.plan.yaml"), 500, NULL, &dir, &e);
	ck_assert_int_eq(rc, PD_EXIT_ENV);
	ck_assert_ptr_nonnull(strstr(e.msg, "over/second"));
	ck_assert_ptr_nonnull(strstr(e.msg, "admission refused"));
	char p[600];
	snprintf(p, sizeof(p), "%s/run.pdlog", dir);
	ck_assert_int_ne(access(p, F_OK), 0); /* never a half-started run */
	ck_assert_int_eq(pd_th_cpuset_leftovers(), 0);
	int bal = pd_th_root_balance_quiet(); /* restored (1 is the kernel's default) */
	ck_assert(bal == 1 || bal == PD_TH_BALANCE_PENDING);
}
END_TEST

static const char *mix_plan(const char *dir, const char *sym)
{
	char text[8192];
	snprintf(text, sizeof(text),
		 "plan:\n  version: 1\n  solver: {status: feasible, objective: power, solver: heuristic, gap: 0, solve_time_s: 0}\n"
		 "  predicted: {power: 1W, min_relative_slack: 0.5}\n"
		 "  islands:\n  - {name: cpu, freq: 2000MHz}\n"
		 "  accelerators:\n  - {name: gpu0, freq: 1000MHz}\n"
		 "  tasks:\n"
		 "  - {dag: mix, task: src, placement: 'cpu:0', wcet: 1ms, runtime: 3ms, deadline: 5ms, period: 20ms, reclaim: false}\n"
		 "  - {dag: mix, task: acc, placement: 'gpu:gpu0', impl: 0, wcet: 2ms, response: 2ms}\n"
		 "  - {dag: mix, task: sink, placement: 'cpu:1', wcet: 1ms, runtime: 3ms, deadline: 5ms, period: 20ms, reclaim: false}\n"
		 "  dags:\n  - name: mix\n    period: 20ms\n    tasks:\n"
		 "    - {name: src, wcet: 1ms, work: 'plugin:%s:%s'}\n"
		 "    - name: acc\n      wcet: 10ms\n      accel:\n      - {kind: gpu, latency: 2ms}\n"
		 "    - {name: sink, wcet: 1ms, work: builtin:busy}\n"
		 "    edges:\n    - [src, acc]\n    - [acc, sink]\n"
		 "  platform:\n    name: test-2cpu-gpu\n    reference_frequency: 2000MHz\n"
		 "    islands:\n    - name: cpu\n      cpus: [0, 1]\n      capacity: 1\n      opps:\n"
		 "      - {freq: 2000MHz, busy: 1W, idle: 100mW}\n"
		 "    accelerators:\n    - name: gpu0\n      kind: gpu\n      opps:\n      - {freq: 1000MHz, busy: 2W, idle: 200mW}\n",
		 pd_test_bin("agents/pd_agent_test_plugin.so"), sym);
	return pd_test_write(dir, "mix.plan.yaml", text);
}

/* What a repeated run (pd_th_run_steady) must start without: the recorded GPIO and accelerator
 * events and the plugin's job lines. */
struct recorders {
	struct pd_agent_gpio_rec *g;
	struct pd_agent_accel_rec *a;
	const char *count;
};

static void clear_recorders(void *arg)
{
	struct recorders *rs = arg;
	atomic_store(&rs->g->n, 0);
	atomic_store(&rs->a->n, 0);
	FILE *f = fopen(rs->count, "w");
	if (f)
		fclose(f);
}

START_TEST(plugin_gpio_and_accelerator)
{
	SKIP_WITHOUT_DL();
	char tmp[512];
	snprintf(tmp, sizeof(tmp), "%s", pd_test_tmpdir());
	char count[600];
	snprintf(count, sizeof(count), "%s/plugin.txt", tmp);
	setenv("PD_TEST_PLUGIN_COUNT", count, 1);
	const char *plan = mix_plan(tmp, "pd_test_policy");
	struct pd_agent_gpio_rec grec = {.cap = 1024};
	grec.ev = calloc(grec.cap, sizeof(*grec.ev));
	struct pd_agent_gpio_ops gops = pd_agent_gpio_recording(&grec);
	struct pd_agent_accel_rec arec = {.cap = 1024};
	arec.ev = calloc(arec.cap, sizeof(*arec.ev));
	struct pd_agent_accel_ops aops = pd_agent_accel_recording(&arec);
	struct pd_agent_opts o;
	pd_agent_opts_init(&o);
	o.no_power = true;
	o.gpio_ops = &gops;
	o.accel_ops = &aops;
	const char *dir;
	pd_err e = {0};
	struct recorders rs = {&grec, &arec, count};
	struct pd_th_verdict v;
	/* up to three runs: the accelerator's client thread is SCHED_OTHER (only CPU tasks get a
	 * reservation), so CPU-heavy tests running beside this one can delay its requests by tens of ms,
	 * which neither the stolen time nor the stall count sees */
	int rc = pd_th_run_steady(plan, 500, &o, &dir, &e, 3, clear_recorders, &rs, &v);
	ck_assert_msg(rc == 0, "%s", e.msg);
	pd_runlog *r = pd_th_log(dir);
	ck_assert_uint_eq(pd_th_instances(r, "mix", NULL, NULL), 25);
	pd_th_assert_timing(&v);
	/* jobs a noisy run abandoned (late-instance policy) are not run: count them per task */
	size_t skipped[8] = {0};
	for (size_t i = 0; i < pd_runlog_job_count(r); i++)
		if (pd_runlog_job(r, i)->flags & PD_RUNLOG_JOB_SKIPPED && pd_runlog_job(r, i)->task < 8)
			skipped[pd_runlog_job(r, i)->task]++;
	long acc = pd_th_task(r, "mix", "acc"), plug = pd_th_task(r, "mix", "src");
	ck_assert(acc >= 0 && plug >= 0);
	/* accelerator: one run per instance, at the latency of the OPP */
	size_t runs = 0;
	for (size_t i = 0; i < atomic_load(&arec.n); i++)
		if (arec.ev[i].kind == 'R') {
			ck_assert_int_eq(arec.ev[i].latency_ns, 2 * PD_NS_PER_MS);
			runs++;
		}
	ck_assert_uint_eq(runs + skipped[acc], 25);
	/* GPIO: high at each release, low at each completion, alternating */
	size_t ng = atomic_load(&grec.n);
	if (v.quiet) {
		ck_assert_uint_eq(ng, 50);
		for (size_t i = 0; i < 50; i++)
			ck_assert_int_eq(grec.ev[i].value, i % 2 == 0);
	} else { /* an abandoned instance may lower a marker its skipped source never raised */
		ck_assert_uint_le(ng, 50);
		ck_assert_uint_ge(ng, 2 * (25 - v.misses));
	}
	/* the plugin ran every job under SCHED_DEADLINE on cpu0 */
	FILE *f = fopen(count, "r");
	ck_assert_ptr_nonnull(f);
	unsigned long long seq;
	int pol, cpu, lines = 0;
	while (fscanf(f, "%llu %d %d", &seq, &pol, &cpu) == 3) {
		ck_assert_int_eq(pol & ~0x40000000, 6); /* SCHED_RESET_ON_FORK | SCHED_DEADLINE */
		ck_assert_int_eq(cpu, 0);
		lines++;
	}
	fclose(f);
	ck_assert_int_eq(lines + (int)skipped[plug], 25);
	pd_runlog_free(r);
	free(grec.ev);
	free(arec.ev);
}
END_TEST

START_TEST(bad_plugin_is_a_usage_error)
{
	char tmp[512];
	snprintf(tmp, sizeof(tmp), "%s", pd_test_tmpdir());
	const char *plan = mix_plan(tmp, "no_such_symbol");
	const char *dir;
	pd_err e = {0};
	ck_assert_int_eq(pd_th_run(plan, 200, NULL, &dir, &e), PD_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "mix/src"));
	ck_assert_ptr_nonnull(strstr(e.msg, "no_such_symbol"));
	char p[600];
	snprintf(p, sizeof(p), "%s/run.pdlog", dir);
	ck_assert_int_ne(access(p, F_OK), 0);
}
END_TEST

/* This kernel has the fair deadline server, so with the monitor on nothing starves: the run is
 * undisturbed and no thread is boosted (a boost here would be a false positive). */
START_TEST(starvation_monitor_stays_quiet_with_a_fair_server)
{
	SKIP_WITHOUT_DL();
	struct pd_agent_opts o;
	pd_agent_opts_init(&o);
	o.no_power = true;
	o.starvation_monitor = true;
	o.starve_threshold_ns = 100 * PD_NS_PER_MS;
	const char *dir;
	pd_err e = {0};
	struct pd_th_verdict v;
	int rc = pd_th_run_steady(pd_test_src("tests/agents/plans/chain2.plan.yaml"), 600, &o, &dir, &e, 3, NULL, NULL, &v);
	ck_assert_msg(rc == 0, "%s", e.msg);
	pd_runlog *r = pd_th_log(dir);
	ck_assert_ptr_nonnull(strstr(pd_runlog_header_json(r), "\"starvation_monitor\":true"));
	ck_assert_uint_eq(pd_runlog_starve_count(r), 0);
	ck_assert_uint_eq(pd_th_instances(r, "chain", NULL, NULL), 30);
	pd_th_assert_timing(&v);
	pd_runlog_free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agents_exec");
	TCase *tc = tcase_create("exec");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, checked_plan_runs_without_misses);
	tcase_add_test(tc, overrun_is_throttled_and_neighbours_keep_deadlines);
	tcase_add_test(tc, admission_refused_exits_3_naming_the_task);
	tcase_add_test(tc, plugin_gpio_and_accelerator);
	tcase_add_test(tc, bad_plugin_is_a_usage_error);
	tcase_add_test(tc, starvation_monitor_stays_quiet_with_a_fair_server);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
