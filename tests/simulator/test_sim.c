/* SPDX-License-Identifier: MIT */
/*
 * The simulator against analytic results: exact average power, zero misses for a schedulable plan at
 * WCET, CBS isolation of overloaded / overrunning reservations, GRUB reclaiming, FIFO accelerator
 * bounds, immediate vs deferred fair server, the trace.
 */
#include "helper_plans.h"
#include "pd_test.h"
#include "simulator/pd_simulator.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000LL
#define S 1000000000LL

/* No per-job overhead: the CBS / GRUB tests below give budgets by hand; overhead_is_execution
 * covers the overhead. */
static const char cpu_platform[] = "platform:\n"
				   "  name: cpuonly\n"
				   "  reference_frequency: 1000MHz\n"
				   "  base_power: 1W\n"
				   "  dl: {max_util_per_cpu: 0.95, job_overhead: 0ns}\n"
				   "  islands:\n"
				   "    - name: big\n"
				   "      cpus: [0, 1]\n"
				   "      capacity: 1.0\n"
				   "      opps:\n"
				   "        - {freq: 500MHz, busy: 300mW, idle: 100mW}\n"
				   "        - {freq: 1000MHz, busy: 1W, idle: 200mW}\n";

static pd_sim_result *sim(const pd_plan *p, const struct pd_sim_params *prm)
{
	pd_err e = {0};
	pd_sim_result *r = pd_sim_run(p, prm, &e);
	ck_assert_msg(r != NULL, "%s", e.msg);
	return r;
}

static const struct pd_sim_dag_stats *dag(const pd_sim_result *r, const char *name)
{
	for (size_t g = 0; g < r->n_dags; g++)
		if (strcmp(r->dags[g].name, name) == 0)
			return &r->dags[g];
	ck_abort_msg("no dag %s", name);
	return NULL;
}

static bool rel_eq(double a, double b, double tol)
{
	return fabs(a - b) <= tol * fabs(b);
}

START_TEST(power_of_one_periodic_task)
{
	static const char y[] = "dags:\n  - name: g\n    period: 100ms\n    tasks: [{name: t, wcet: 10ms}]\n";
	for (int opp = 1; opp >= 0; opp--) {
		pd_plan *p = tp_plan(y, cpu_platform);
		pd_plan_set_island_opp(p, 0, (size_t)opp);
		int64_t C = opp ? 10 * MS : 20 * MS;
		tp_cpu(p, "g", "t", 0, C, 100 * MS, 100 * MS);
		struct pd_sim_params prm;
		pd_sim_defaults(&prm);
		prm.duration_ns = 10 * S;
		pd_sim_result *r = sim(p, &prm);
		/* base + n * P_idle + (P_busy - P_idle) * C / T */
		double want = opp ? 1.0 + 2 * 0.2 + (1.0 - 0.2) * 0.1 : 1.0 + 2 * 0.1 + (0.3 - 0.1) * 0.2;
		ck_assert_msg(rel_eq(r->power_w, want, 1e-9), "opp %d: %.12f W, want %.12f", opp, r->power_w, want);
		ck_assert_msg(rel_eq(r->energy_j, want * 10, 1e-9), "energy %.12f", r->energy_j);
		ck_assert_uint_eq(r->jobs, 100);
		ck_assert_uint_eq(r->misses, 0);
		ck_assert_int_eq(r->dags[0].max_response_ns, C);
		pd_sim_result_free(r);
		pd_plan_free(p);
	}
}
END_TEST

/* The per-job overhead is execution: with o = 250 us on the island, a job of C = 10 ms keeps the
 * core busy C + o, so power is base + n P_idle + (P_busy - P_idle)(C + o)/T and the response is
 * C + o, when the budget covers it (Q = C + o). With the budget the overhead was forgotten in
 * (Q = C) the core serves the task only Q per period while it needs C + o: every job is throttled,
 * the backlog grows by o each period and every instance misses (the chain on the board). */
START_TEST(overhead_is_execution)
{
	/* late: queue keeps every job (resync would skip the ones found ready, docs/MODEL.md) */
	static const char y[] = "dags:\n  - name: g\n    period: 100ms\n    deadline: 20ms\n    late: queue\n    tasks: [{name: t, wcet: 10ms}]\n";
	char plat[1024];
	const char *at = strstr(cpu_platform, "job_overhead: 0ns");
	ck_assert_ptr_nonnull(at);
	snprintf(plat, sizeof(plat), "%.*sjob_overhead: 250us%s", (int)(at - cpu_platform), cpu_platform,
		 at + strlen("job_overhead: 0ns"));
	for (int covered = 1; covered >= 0; covered--) {
		pd_plan *p = tp_plan(y, plat);
		int64_t C = 10 * MS, o = 250000, Q = covered ? C + o : C;
		tp_cpu(p, "g", "t", 0, Q, 20 * MS, 100 * MS);
		pd_plan_task(p, 0)->wcet_ns = C;
		struct pd_sim_params prm;
		pd_sim_defaults(&prm);
		prm.duration_ns = 10 * S;
		pd_sim_result *r = sim(p, &prm);
		/* the core's DL busy time is 100 jobs x (C + o), or the budget's 100 x Q when that is less */
		ck_assert_int_eq(r->cores[0].dl_busy_ns, 100 * Q);
		double want = 1.0 + 2 * 0.2 + (1.0 - 0.2) * (double)Q / (double)(100 * MS);
		ck_assert_msg(rel_eq(r->power_w, want, 1e-9), "covered %d: %.12f W, want %.12f", covered, r->power_w, want);
		ck_assert_uint_eq(r->misses, covered ? 0 : 100);
		ck_assert_uint_eq(r->tasks[0].throttles, covered ? 0 : 100);
		if (covered)
			ck_assert_int_eq(r->dags[0].max_response_ns, C + o);
		else /* job 97 (released at 9.6 s) needs 97 (C + o) of service, delivered C per period: it
		      * ends 99 periods and 97 (C + o) - 99 C into the run, the last to finish in 10 s */
			ck_assert_int_eq(r->dags[0].max_response_ns, 99 * 100 * MS + (97 * (C + o) - 99 * C) - 96 * 100 * MS);
		pd_sim_result_free(r);
		pd_plan_free(p);
	}
}
END_TEST

/* The schedulable plan of tests/checker (check passes on it): chain a -> b -> c (T = D = 100 ms) and
 * other/x (T = D = 50 ms); b on the GPU, x on FPGA slot 0. */
static const char chain_yaml[] =
	"dags:\n"
	"  - name: chain\n"
	"    period: 100ms\n"
	"    tasks:\n"
	"      - {name: a, wcet: 10ms, bcet: 2ms}\n"
	"      - name: b\n"
	"        wcet: 20ms\n"
	"        bcet: 5ms\n"
	"        accel: [{kind: gpu, latency: 5ms}, {kind: fpga, latency: 4ms, bitstream: b.bin, power: 400mW}]\n"
	"      - {name: c, wcet: 10ms}\n"
	"      - {name: d, wcet: 15ms}\n"
	"    edges: [[a, b], [b, c], [a, d]]\n"
	"  - name: other\n"
	"    period: 50ms\n"
	"    tasks:\n"
	"      - name: x\n"
	"        wcet: 5ms\n"
	"        accel: [{kind: gpu, latency: 3ms}, {kind: fpga, latency: 3ms, bitstream: x.bin, power: 300mW}]\n"
	"      - {name: y, wcet: 12ms}\n"
	"    edges: [[x, y]]\n";

static pd_plan *good_plan(void)
{
	pd_plan *p = tp_plan(chain_yaml, tp_platform_yaml);
	tp_cpu(p, "chain", "a", 0, 10 * MS, 30 * MS, 100 * MS);
	tp_accel(p, "chain", "b", "gpu0", -1, 0, 5 * MS);
	tp_cpu(p, "chain", "c", 0, 10 * MS, 30 * MS, 100 * MS);
	tp_cpu(p, "chain", "d", 1, 15 * MS, 70 * MS, 100 * MS);
	tp_accel(p, "other", "x", "pl", 0, 1, 3 * MS);
	tp_cpu(p, "other", "y", 1, 12 * MS, 40 * MS, 50 * MS);
	return p;
}

START_TEST(power_with_accelerators_matches_spec_model)
{
	/* docs/MODEL.md "Average power" at WCET: base 1 + 2 cores x 0.2 idle + 0.8 x (35/100 + 12/50) busy
	 * + GPU 0.5 + 4.5 x 5/100 + FPGA 0.8 + 0.3 x 3/50 = 3.415 W */
	pd_plan *p = good_plan();
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = 10 * S;
	pd_sim_result *r = sim(p, &prm);
	ck_assert_msg(rel_eq(r->power_w, 3.415, 1e-9), "%.12f W", r->power_w);
	ck_assert_msg(rel_eq(r->accel_w, 0.725 + 0.818, 1e-9), "accelerators %.12f W", r->accel_w);
	ck_assert_msg(rel_eq(r->cpu_w, 0.4 + 0.472, 1e-9), "cpus %.12f W", r->cpu_w);
	pd_sim_result_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(schedulable_plan_never_misses)
{
	pd_plan *p = good_plan();
	const char *models[] = {"wcet", "uniform"};
	for (int m = 0; m < 2; m++) {
		struct pd_sim_params prm;
		pd_sim_defaults(&prm);
		pd_err e = {0};
		ck_assert_int_eq(pd_sim_parse_exec(models[m], &prm, &e), 0);
		prm.duration_ns = 1000 * S + 1; /* 10 000 instances of chain, 20 000 of other */
		prm.release_jitter_ns = m ? 7 * MS : 0;
		prm.seed = 42;
		pd_sim_result *r = sim(p, &prm);
		ck_assert_uint_ge(dag(r, "chain")->instances, 10000);
		ck_assert_uint_ge(dag(r, "other")->instances, 19999);
		ck_assert_uint_eq(r->misses, 0);
		ck_assert_uint_eq(r->job_misses, 0);
		ck_assert_int_le(dag(r, "chain")->max_response_ns, 100 * MS);
		ck_assert_int_le(dag(r, "chain")->p99_response_ns, dag(r, "chain")->max_response_ns);
		ck_assert_int_gt(dag(r, "chain")->p99_response_ns, 0);
		if (m == 0) /* at WCET: a (10) -> b on the GPU (5) -> c (10) and a -> d (15), d alone-ish on cpu1 */
			ck_assert_int_ge(dag(r, "chain")->max_response_ns, 25 * MS);
		pd_sim_result_free(r);
	}
	pd_plan_free(p);
}
END_TEST

START_TEST(overload_misses_and_cbs_isolates_other_cores)
{
	/* cpu0: two 6 ms / 10 ms reservations (U = 1.2); cpu1: a 5 ms / 10 ms task */
	static const char y[] = "dags:\n"
				"  - {name: h1, period: 10ms, late: queue, tasks: [{name: t, wcet: 6ms}]}\n"
				"  - {name: h2, period: 10ms, late: queue, tasks: [{name: t, wcet: 6ms}]}\n"
				"  - {name: ok, period: 10ms, tasks: [{name: t, wcet: 5ms}]}\n";
	pd_plan *p = tp_plan(y, cpu_platform);
	tp_cpu(p, "h1", "t", 0, 6 * MS, 10 * MS, 10 * MS);
	tp_cpu(p, "h2", "t", 0, 6 * MS, 10 * MS, 10 * MS);
	tp_cpu(p, "ok", "t", 1, 5 * MS, 10 * MS, 10 * MS);
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = 10 * S;
	pd_sim_result *r = sim(p, &prm);
	ck_assert_uint_gt(dag(r, "h1")->misses + dag(r, "h2")->misses, 100);
	ck_assert_uint_eq(dag(r, "ok")->misses, 0);
	ck_assert_uint_eq(dag(r, "ok")->instances, 1000);
	ck_assert_int_eq(dag(r, "ok")->max_response_ns, 5 * MS);
	/* cpu0 is saturated */
	ck_assert(rel_eq((double)r->cores[0].busy_ns, 10.0 * S, 1e-3));
	pd_sim_result_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(overrunning_task_is_throttled_neighbours_meet_deadlines)
{
	/* hog needs 8 ms per job but its reservation is 2 ms / 20 ms; n is 5 ms / 10 ms on the same core */
	static const char y[] = "dags:\n"
				"  - {name: hog, period: 20ms, late: queue, tasks: [{name: t, wcet: 8ms}]}\n"
				"  - {name: n, period: 10ms, tasks: [{name: t, wcet: 5ms}]}\n";
	pd_plan *p = tp_plan(y, cpu_platform);
	tp_cpu(p, "hog", "t", 0, 2 * MS, 20 * MS, 20 * MS);
	tp_cpu(p, "n", "t", 0, 5 * MS, 10 * MS, 10 * MS);
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = 10 * S;
	pd_sim_result *r = sim(p, &prm);
	ck_assert_uint_eq(dag(r, "n")->misses, 0);
	ck_assert_uint_eq(dag(r, "n")->instances, 1000);
	ck_assert_uint_gt(dag(r, "hog")->misses, 0);
	ck_assert_uint_gt(r->tasks[0].throttles, 100);
	ck_assert_uint_eq(r->tasks[1].throttles, 0);
	/* the hog gets exactly its reservation: 2 ms per 20 ms */
	ck_assert(rel_eq((double)(r->cores[0].dl_busy_ns - 5 * MS * 1000), 0.1 * 10 * S, 1e-3));
	pd_sim_result_free(r);
	pd_plan_free(p);
}
END_TEST

static double lone_task_share(bool reclaim)
{
	/* a 10 ms / 100 ms reservation whose job needs 990 ms every second: always backlogged */
	static const char y[] = "dags:\n  - {name: g, period: 1s, late: queue, tasks: [{name: t, wcet: 990ms}]}\n";
	pd_plan *p = tp_plan(y, cpu_platform);
	tp_cpu(p, "g", "t", 0, 10 * MS, 100 * MS, 100 * MS);
	tp_task(p, "g", "t")->reclaim = reclaim;
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = 20 * S;
	pd_sim_result *r = sim(p, &prm);
	double share = (double)r->cores[0].busy_ns / (double)r->duration_ns;
	pd_sim_result_free(r);
	pd_plan_free(p);
	return share;
}

START_TEST(grub_lets_a_lone_task_reach_umax)
{
	double plain = lone_task_share(false), grub = lone_task_share(true);
	ck_assert_msg(fabs(plain - 0.1) < 1e-3, "without reclaiming: %f", plain);
	/* GRUB: dq = -(max{u, Umax - Uinact - Uextra} / Umax) dt -> the task runs Umax of the CPU
	 * (0.9517 with the kernel's 8-bit bw_ratio) */
	ck_assert_msg(grub > 0.945 && grub < 0.955, "with reclaiming: %f", grub);
}
END_TEST

START_TEST(grub_hog_does_not_break_a_neighbour)
{
	/* a reclaiming 10 ms / 100 ms reservation that always wants more, next to a plain 5 ms / 10 ms task */
	static const char y[] = "dags:\n"
				"  - {name: hog, period: 1s, late: queue, tasks: [{name: t, wcet: 990ms}]}\n"
				"  - {name: n, period: 10ms, tasks: [{name: t, wcet: 5ms}]}\n";
	pd_plan *p = tp_plan(y, cpu_platform);
	tp_cpu(p, "hog", "t", 0, 10 * MS, 100 * MS, 100 * MS);
	tp_cpu(p, "n", "t", 0, 5 * MS, 10 * MS, 10 * MS);
	tp_task(p, "hog", "t")->reclaim = true;
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = 20 * S;
	pd_sim_result *r = sim(p, &prm);
	ck_assert_uint_eq(dag(r, "n")->misses, 0);
	ck_assert_uint_eq(dag(r, "n")->instances, 2000);
	double hog = (double)(r->cores[0].dl_busy_ns - 2000 * 5 * MS) / (double)r->duration_ns;
	/* more than its 0.1 reservation, never more than U_max in total */
	ck_assert_msg(hog > 0.15, "hog share %f", hog);
	ck_assert_msg((double)r->cores[0].busy_ns <= 0.9501 * (double)r->duration_ns, "busy %lld",
		      (long long)r->cores[0].busy_ns);
	pd_sim_result_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(grub_two_hogs_share_umax)
{
	/* two reclaiming 10 ms / 100 ms reservations, both always backlogged: each is charged
	 * max{0.1, 0.95 - 0 - 0.75} / 0.95 = 0.21 per ns, so each runs 0.475 and together U_max */
	static const char y[] = "dags:\n"
				"  - {name: h1, period: 1s, late: queue, tasks: [{name: t, wcet: 990ms}]}\n"
				"  - {name: h2, period: 1s, late: queue, tasks: [{name: t, wcet: 990ms}]}\n";
	pd_plan *p = tp_plan(y, cpu_platform);
	tp_cpu(p, "h1", "t", 0, 10 * MS, 100 * MS, 100 * MS);
	tp_cpu(p, "h2", "t", 0, 10 * MS, 100 * MS, 100 * MS);
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = 20 * S;
	prm.reclaim_all = true;
	pd_sim_result *r = sim(p, &prm);
	double busy = (double)r->cores[0].busy_ns / (double)r->duration_ns;
	ck_assert_msg(busy > 0.945 && busy < 0.955, "busy %f", busy);
	pd_sim_result_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(grub_reclaims_after_the_zero_lag_time)
{
	/* n reserves 5 ms / 10 ms but needs 1 ms: it blocks with 4 ms left, so its 0-lag time is
	 * d - 4 * 10 / 5 = release + 2 ms; from then on its bandwidth is inactive. In each 10 ms the hog
	 * runs 1 ms charged at (0.95 - 0.35) / 0.95 = 0.632 (n active) and 8 ms at 0.1 / 0.95 = 0.105
	 * (n inactive): 1.474 ms of budget per 9 ms of work, so its 10 ms budget lasts ~61 ms of each
	 * 100 ms period: share ~0.61. Dropping n's bandwidth at once when it blocks (no 0-lag timer)
	 * gives 0.83 (measured by disabling the timer), never dropping it ~0.16
	 * (grub_hog_does_not_break_a_neighbour). */
	static const char y[] = "dags:\n"
				"  - {name: hog, period: 1s, late: queue, tasks: [{name: t, wcet: 990ms}]}\n"
				"  - {name: n, period: 10ms, tasks: [{name: t, wcet: 1ms}]}\n";
	pd_plan *p = tp_plan(y, cpu_platform);
	tp_cpu(p, "hog", "t", 0, 10 * MS, 100 * MS, 100 * MS);
	tp_cpu(p, "n", "t", 0, 5 * MS, 10 * MS, 10 * MS);
	tp_task(p, "hog", "t")->reclaim = true;
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = 20 * S;
	pd_sim_result *r = sim(p, &prm);
	ck_assert_uint_eq(dag(r, "n")->misses, 0);
	double hog = (double)(r->cores[0].dl_busy_ns - 2000 * 1 * MS) / (double)r->duration_ns;
	ck_assert_msg(hog > 0.58 && hog < 0.63, "hog share %f", hog);
	pd_sim_result_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(fifo_accelerator_response_within_bound)
{
	pd_plan *p = good_plan();
	/* b and x share FPGA slot 0 with different bitstreams: bound (4 + 10) + (3 + 10) = 27 ms */
	tp_accel(p, "chain", "b", "pl", 0, 1, 27 * MS);
	tp_accel(p, "other", "x", "pl", 0, 1, 27 * MS);
	tp_task(p, "chain", "c")->deadline_ns = 20 * MS;
	tp_task(p, "chain", "a")->deadline_ns = 20 * MS;
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	pd_err e = {0};
	pd_sim_parse_exec("uniform", &prm, &e);
	prm.duration_ns = 200 * S;
	prm.release_jitter_ns = 9 * MS;
	pd_sim_result *r = sim(p, &prm);
	const struct pd_sim_server_stats *slot0 = NULL;
	for (size_t v = 0; v < r->n_servers; v++)
		if (r->servers[v].slot == 0)
			slot0 = &r->servers[v];
	ck_assert_ptr_nonnull(slot0);
	ck_assert_uint_gt(slot0->requests, 5000);
	ck_assert_uint_gt(slot0->reconfigs, 1000);
	ck_assert_int_le(slot0->max_response_ns, 27 * MS);
	ck_assert_int_gt(slot0->max_response_ns, 14 * MS); /* it did have to wait behind a reconfiguration */
	ck_assert_uint_eq(r->misses, 0);
	pd_sim_result_free(r);
	pd_plan_free(p);
}
END_TEST

/* One task of wcet = runtime (5 or 10 ms) every 10 ms on cpu0, background bg on every core. */
static pd_sim_result *fair_run(enum pd_sim_fair mode, int64_t runtime, double bg)
{
	static const char y5[] = "dags:\n  - {name: g, period: 10ms, tasks: [{name: t, wcet: 5ms}]}\n";
	static const char y10[] = "dags:\n  - {name: g, period: 10ms, tasks: [{name: t, wcet: 10ms}]}\n";
	pd_plan *p = tp_plan(runtime == 5 * MS ? y5 : y10, tp_platform_yaml); /* fair server 50 ms / 1 s */
	tp_cpu(p, "g", "t", 0, runtime, 10 * MS, 10 * MS);
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = 10 * S;
	prm.fair = mode;
	prm.background_util = bg;
	pd_sim_result *r = sim(p, &prm);
	pd_plan_free(p);
	return r;
}

START_TEST(immediate_vs_deferred_fair_server)
{
	/* DL load 0.5, background 0.3: plenty of idle time. The immediate server runs fair work at DL
	 * priority and spends its 50 ms every second; the deferred one never needs to. */
	pd_sim_result *im = fair_run(PD_SIM_FAIR_IMMEDIATE, 5 * MS, 0.3);
	pd_sim_result *de = fair_run(PD_SIM_FAIR_DEFERRED, 5 * MS, 0.3);
	ck_assert(rel_eq((double)im->cores[0].bg_demand_ns, 3.0 * S, 1e-2));
	ck_assert_int_ge(im->cores[0].bg_server_ns, 9 * 50 * MS);
	ck_assert_int_le(im->cores[0].bg_server_ns, 11 * 50 * MS);
	ck_assert_int_eq(de->cores[0].bg_server_ns, 0);
	ck_assert(rel_eq((double)de->cores[0].bg_served_ns, (double)de->cores[0].bg_demand_ns, 2e-2));
	ck_assert_uint_eq(im->misses, 0);
	ck_assert_uint_eq(de->misses, 0);
	pd_sim_result_free(im);
	pd_sim_result_free(de);

	/* A reservation that uses the whole CPU (10 ms / 10 ms, more than admission allows) starves fair
	 * work: the deferred server reaches its zero-laxity time, enters EDF with the deadline of its
	 * period and, as the task's jobs have deadlines no later than it, runs its 50 ms right after that
	 * deadline: at 1 s, 2 s, ... 9 s -> 9 x 50 ms in 10 s. Without a server fair work gets nothing. */
	de = fair_run(PD_SIM_FAIR_DEFERRED, 10 * MS, 1.0);
	pd_sim_result *off = fair_run(PD_SIM_FAIR_OFF, 10 * MS, 1.0);
	ck_assert_int_eq(de->cores[0].bg_server_ns, 9 * 50 * MS);
	ck_assert_int_eq(de->cores[0].bg_served_ns, 9 * 50 * MS);
	ck_assert_int_lt(off->cores[0].bg_served_ns, 5 * MS);
	pd_sim_result_free(de);
	pd_sim_result_free(off);
}
END_TEST

START_TEST(trace_window)
{
	pd_plan *p = good_plan();
	const char *dir = pd_test_tmpdir();
	char path[4200];
	snprintf(path, sizeof(path), "%s/trace.json", dir);
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = 2 * S;
	prm.trace_path = path;
	prm.trace_from_ns = 100 * MS;
	prm.trace_to_ns = 300 * MS;
	pd_sim_result *r = sim(p, &prm);
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	ck_assert_msg(root != NULL, "%s", je.text);
	json_t *ev = json_object_get(root, "traceEvents");
	size_t i, slices = 0;
	json_t *x;
	json_array_foreach(ev, i, x)
	{
		if (strcmp(json_string_value(json_object_get(x, "ph")), "X") != 0)
			continue;
		double ts = json_real_value(json_object_get(x, "ts")), dur = json_real_value(json_object_get(x, "dur"));
		ck_assert(ts >= 100000.0 && ts + dur <= 300000.0 + 1e-6);
		slices++;
	}
	/* 2 chain and 4 other instances in the window, 4 CPU jobs + 2 accelerator jobs each at least */
	ck_assert_uint_ge(slices, 2 * 4 + 4 * 2);
	json_decref(root);
	pd_sim_result_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(json_has_spec_fields)
{
	pd_plan *p = good_plan();
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	prm.duration_ns = 1 * S;
	pd_sim_result *r = sim(p, &prm);
	char *text = pd_sim_result_json(r, p);
	json_t *j = json_loads(text, 0, NULL);
	ck_assert_ptr_nonnull(j);
	const char *keys[] = {"power_w", "energy_j", "duration_s", "jobs", "misses", "dags", "background"};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		ck_assert_msg(json_object_get(j, keys[k]) != NULL, "missing %s", keys[k]);
	json_t *d0 = json_array_get(json_object_get(j, "dags"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(d0, "name")), "chain");
	ck_assert_int_eq(json_integer_value(json_object_get(d0, "instances")), 10);
	ck_assert(json_object_get(d0, "p99_response_ms") && json_object_get(d0, "max_response_ms"));
	ck_assert_double_eq_tol(json_real_value(json_object_get(j, "duration_s")), 1.0, 1e-12);
	json_decref(j);
	free(text);
	pd_sim_result_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(bad_parameters)
{
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	pd_err e = {0};
	ck_assert_int_ne(pd_sim_parse_exec("overrun:2:1", &prm, &e), 0);
	ck_assert_int_ne(pd_sim_parse_exec("overrun:0.1", &prm, &e), 0);
	ck_assert_int_ne(pd_sim_parse_exec("gauss", &prm, &e), 0);
	ck_assert_int_eq(pd_sim_parse_exec("overrun:0.1:1.5", &prm, &e), 0);
	ck_assert_int_eq(prm.exec, PD_SIM_EXEC_OVERRUN);
	ck_assert_double_eq(prm.overrun_factor, 1.5);
	pd_plan *p = good_plan();
	pd_sim_defaults(&prm);
	prm.release_jitter_ns = 50 * MS; /* >= the 50 ms period of "other" */
	ck_assert_ptr_null(pd_sim_run(p, &prm, &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	pd_sim_defaults(&prm);
	tp_task(p, "chain", "a")->runtime_ns = 0;
	ck_assert_ptr_null(pd_sim_run(p, &prm, &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	pd_plan_free(p);
}
END_TEST

START_TEST(deterministic_per_seed)
{
	pd_plan *p = good_plan();
	struct pd_sim_params prm;
	pd_sim_defaults(&prm);
	pd_err e = {0};
	pd_sim_parse_exec("overrun:0.05:1.5", &prm, &e);
	prm.duration_ns = 20 * S;
	prm.seed = 7;
	pd_sim_result *a = sim(p, &prm), *b = sim(p, &prm);
	ck_assert_uint_eq(a->events, b->events);
	ck_assert_double_eq(a->energy_j, b->energy_j);
	ck_assert_int_eq(a->dags[0].max_response_ns, b->dags[0].max_response_ns);
	prm.seed = 8;
	pd_sim_result *c = sim(p, &prm);
	ck_assert(c->energy_j != a->energy_j);
	pd_sim_result_free(a);
	pd_sim_result_free(b);
	pd_sim_result_free(c);
	pd_plan_free(p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("simulator");
	TCase *tc = tcase_create("sim");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, power_of_one_periodic_task);
	tcase_add_test(tc, overhead_is_execution);
	tcase_add_test(tc, power_with_accelerators_matches_spec_model);
	tcase_add_test(tc, schedulable_plan_never_misses);
	tcase_add_test(tc, overload_misses_and_cbs_isolates_other_cores);
	tcase_add_test(tc, overrunning_task_is_throttled_neighbours_meet_deadlines);
	tcase_add_test(tc, grub_lets_a_lone_task_reach_umax);
	tcase_add_test(tc, grub_hog_does_not_break_a_neighbour);
	tcase_add_test(tc, grub_two_hogs_share_umax);
	tcase_add_test(tc, grub_reclaims_after_the_zero_lag_time);
	tcase_add_test(tc, fifo_accelerator_response_within_bound);
	tcase_add_test(tc, immediate_vs_deferred_fair_server);
	tcase_add_test(tc, trace_window);
	tcase_add_test(tc, json_has_spec_fields);
	tcase_add_test(tc, bad_parameters);
	tcase_add_test(tc, deterministic_per_seed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return pd_test_main(suite());
}
