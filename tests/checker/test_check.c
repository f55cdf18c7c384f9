/* SPDX-License-Identifier: MIT */
/*
 * The independent checker: hand-built plans that are schedulable pass with no violation; each
 * tampered plan fails with the right violation kind and the right numbers.
 */
#include "helper_plans.h"
#include "optimizer/checker/pd_check.h"
#include "pd_test.h"

#include <math.h>
#include <string.h>

#define MS 1000000LL

/* chain a -> b -> c, T = D = 100 ms; b has a GPU and an FPGA implementation. A second DAG "other"
 * with one task x that also has accelerator versions. */
static const char chain_yaml[] =
	"dags:\n"
	"  - name: chain\n"
	"    period: 100ms\n"
	"    tasks:\n"
	"      - {name: a, wcet: 10ms}\n"
	"      - name: b\n"
	"        wcet: 20ms\n"
	"        accel: [{kind: gpu, latency: 5ms}, {kind: fpga, latency: 4ms, bitstream: b.bin, power: 400mW}]\n"
	"      - {name: c, wcet: 10ms}\n"
	"    edges: [[a, b], [b, c]]\n"
	"  - name: other\n"
	"    period: 50ms\n"
	"    tasks:\n"
	"      - name: x\n"
	"        wcet: 5ms\n"
	"        accel: [{kind: gpu, latency: 3ms}, {kind: fpga, latency: 3ms, bitstream: x.bin}]\n";

/* A schedulable deployment: a, c on cpu0 (d = 30 ms), b on cpu1 (d = 40 ms), x on cpu1 (d = 50 ms). */
static pd_plan *good_plan(void)
{
	pd_plan *p = tp_plan(chain_yaml, tp_platform_yaml);
	tp_cpu(p, "chain", "a", 0, 10 * MS, 30 * MS, 100 * MS);
	tp_cpu(p, "chain", "b", 1, 20 * MS, 40 * MS, 100 * MS);
	tp_cpu(p, "chain", "c", 0, 10 * MS, 30 * MS, 100 * MS);
	tp_cpu(p, "other", "x", 1, 5 * MS, 50 * MS, 50 * MS);
	return p;
}

static pd_check_report *check(const pd_plan *p)
{
	pd_err e = {0};
	pd_check_report *r = pd_check_plan(p, &e);
	ck_assert_msg(r != NULL, "%s", e.msg);
	return r;
}

static const struct pd_check_violation *only(const pd_check_report *r, enum pd_check_kind k)
{
	ck_assert_msg(!r->schedulable, "expected a violation of kind %s", pd_check_kind_name(k));
	const struct pd_check_violation *v = pd_check_find(r, k);
	ck_assert_msg(v != NULL, "no %s violation among %zu", pd_check_kind_name(k), r->n_v);
	return v;
}

START_TEST(good_plan_passes)
{
	pd_plan *p = good_plan();
	pd_check_report *r = check(p);
	for (size_t i = 0; i < r->n_v; i++)
		fprintf(stderr, "unexpected: %s %s %g %g\n", pd_check_kind_name(r->v[i].kind), r->v[i].where, r->v[i].value,
			r->v[i].limit);
	ck_assert(r->schedulable);
	ck_assert_uint_eq(r->n_v, 0);
	/* cpu0: 10/30 + 10/30; cpu1: 20/40 + 5/50 */
	ck_assert_double_eq_tol(r->cores[0].density, 2.0 / 3.0, 1e-12);
	ck_assert_double_eq_tol(r->cores[1].density, 0.6, 1e-12);
	ck_assert_double_eq_tol(r->cores[0].density_limit, 0.9, 1e-15);
	ck_assert_int_eq(r->dags[0].finish_ns, 100 * MS);
	ck_assert_int_eq(r->dags[1].finish_ns, 50 * MS);
	ck_assert_double_eq_tol(r->min_relative_slack, 0.0, 1e-15);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(density_exact_boundary)
{
	/* cap = 0.95 - 50ms/1s = 0.9 exactly: C/d = 9/10 is accepted, 9 ms + 1 ns is not. */
	static const char y[] = "dags:\n  - name: g\n    period: 10ms\n    tasks: [{name: t, wcet: 9ms}]\n";
	pd_plan *p = tp_plan(y, tp_platform_yaml);
	tp_cpu(p, "g", "t", 0, 9 * MS, 10 * MS, 10 * MS);
	pd_check_report *r = check(p);
	ck_assert_msg(r->schedulable, "0.9 <= 0.9 must pass (%zu violations)", r->n_v);
	pd_check_report_free(r);
	pd_plan_free(p);

	static const char y2[] = "dags:\n  - name: g\n    period: 10ms\n    tasks: [{name: t, wcet: 9000001ns}]\n";
	p = tp_plan(y2, tp_platform_yaml);
	tp_cpu(p, "g", "t", 0, 9 * MS + 1, 10 * MS, 10 * MS);
	r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_DENSITY);
	ck_assert_str_eq(v->where, "cpu:0");
	ck_assert_double_eq_tol(v->value, 0.9000001, 1e-12);
	ck_assert_double_eq_tol(v->limit, 0.9, 1e-15);
	ck_assert_uint_eq(pd_check_count(r, PD_CK_DENSITY), 1);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(density_at_lower_opp)
{
	/* At 500 MHz every WCET doubles: cpu0 holds 20/30 + 20/30 = 1.333 > 0.9, and the plan that
	 * still claims the 1 GHz WCETs is caught by the wcet rule as well. */
	pd_plan *p = good_plan();
	pd_plan_set_island_opp(p, 0, 0);
	pd_check_report *r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_DENSITY);
	ck_assert_str_eq(v->where, "cpu:0");
	ck_assert_double_eq_tol(v->value, 4.0 / 3.0, 1e-12);
	v = pd_check_find(r, PD_CK_WCET);
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(v->where, "chain/a");
	ck_assert_double_eq(v->value, 10.0 * MS);
	ck_assert_double_eq(v->limit, 20.0 * MS);
	ck_assert_uint_eq(pd_check_count(r, PD_CK_WCET), 4);
	ck_assert(pd_check_count(r, PD_CK_RUNTIME_BUDGET) == 4);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(path_too_long)
{
	pd_plan *p = good_plan();
	tp_task(p, "chain", "c")->deadline_ns = 40 * MS; /* 30 + 40 + 40 = 110 > 100 */
	pd_check_report *r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_PATH);
	ck_assert_double_eq(v->value, 110.0 * MS);
	ck_assert_double_eq(v->limit, 100.0 * MS);
	ck_assert_msg(strstr(v->where, "chain") && strstr(v->where, "a -> b -> c"), "where = %s", v->where);
	ck_assert_uint_eq(r->n_v, 1);
	ck_assert_double_eq_tol(r->min_relative_slack, -0.1, 1e-12);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(runtime_below_kernel_floor)
{
	static const char y[] = "dags:\n  - name: g\n    period: 10ms\n    tasks: [{name: t, wcet: 1000ns}]\n";
	pd_plan *p = tp_plan(y, tp_platform_yaml);
	tp_cpu(p, "g", "t", 0, 1000, 10 * MS, 10 * MS);
	pd_check_report *r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_RUNTIME_MIN);
	ck_assert_double_eq(v->value, 1000.0);
	ck_assert_double_eq(v->limit, 1024.0);
	ck_assert_str_eq(v->where, "g/t");
	ck_assert_uint_eq(r->n_v, 1);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(deadline_beyond_period)
{
	pd_plan *p = good_plan();
	tp_task(p, "other", "x")->deadline_ns = 60 * MS;
	pd_check_report *r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_DEADLINE_PERIOD);
	ck_assert_double_eq(v->value, 60.0 * MS);
	ck_assert_double_eq(v->limit, 50.0 * MS);
	ck_assert_str_eq(v->where, "other/x");
	/* the 60 ms path of "other" breaks its 50 ms deadline too */
	ck_assert_double_eq(pd_check_find(r, PD_CK_PATH)->value, 60.0 * MS);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(triple_rules)
{
	pd_plan *p = good_plan();
	struct pd_plan_task *t = tp_task(p, "chain", "a");
	t->runtime_ns = 35 * MS; /* > deadline 30 ms */
	tp_task(p, "chain", "c")->period_ns = 110 * MS; /* > T: less than Q per instance */
	tp_task(p, "chain", "a")->period_ns = 90 * MS;  /* within [d, T]: a valid sporadic reservation */
	tp_task(p, "chain", "b")->runtime_ns = 19 * MS; /* < wcet 20 ms */
	pd_check_report *r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_RUNTIME_DEADLINE);
	ck_assert_double_eq(v->value, 35.0 * MS);
	ck_assert_double_eq(v->limit, 30.0 * MS);
	v = only(r, PD_CK_PERIOD);
	ck_assert_str_eq(v->where, "chain/c");
	ck_assert_double_eq(v->value, 110.0 * MS);
	ck_assert_double_eq(v->limit, 100.0 * MS);
	v = only(r, PD_CK_RUNTIME_BUDGET);
	ck_assert_str_eq(v->where, "chain/b");
	ck_assert_double_eq(v->value, 19.0 * MS);
	ck_assert_double_eq(v->limit, 20.0 * MS);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(admission_counts_runtime_and_fair_server)
{
	/* density 5/10 = 0.5 is fine, but runtime/period = 10/10 + 0.05 > 0.95 is refused by the kernel */
	static const char y[] = "dags:\n  - name: g\n    period: 10ms\n    tasks: [{name: t, wcet: 5ms}]\n";
	pd_plan *p = tp_plan(y, tp_platform_yaml);
	tp_cpu(p, "g", "t", 1, 10 * MS, 10 * MS, 10 * MS);
	pd_check_report *r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_ADMISSION);
	ck_assert_str_eq(v->where, "cpu:1");
	ck_assert_double_eq_tol(v->value, 1.0 + 52428.0 / 1048576.0, 1e-12);
	ck_assert_double_eq_tol(v->limit, 996147.0 / 1048576.0, 1e-12);
	ck_assert_ptr_null(pd_check_find(r, PD_CK_DENSITY));
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(accelerator_overload)
{
	/* two 6 ms GPU requests every 10 ms: load 1.2 */
	static const char y[] = "dags:\n  - name: g\n    period: 10ms\n    tasks:\n"
				"      - {name: u, wcet: 8ms, accel: [{kind: gpu, latency: 6ms}]}\n"
				"      - {name: v, wcet: 8ms, accel: [{kind: gpu, latency: 6ms}]}\n";
	pd_plan *p = tp_plan(y, tp_platform_yaml);
	tp_accel(p, "g", "u", "gpu0", -1, 0, 12 * MS);
	tp_accel(p, "g", "v", "gpu0", -1, 0, 12 * MS);
	pd_check_report *r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_ACCEL_LOAD);
	ck_assert_str_eq(v->where, "gpu:gpu0");
	ck_assert_double_eq_tol(v->value, 1.2, 1e-12);
	ck_assert_double_eq(v->limit, 1.0);
	/* the FIFO bound 12 ms holds, the 12 ms responses break the 10 ms DAG deadline */
	ck_assert_ptr_null(pd_check_find(r, PD_CK_FIFO));
	ck_assert_double_eq(pd_check_find(r, PD_CK_PATH)->value, 12.0 * MS);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(fifo_bound_gpu_and_fpga)
{
	pd_plan *p = good_plan();
	/* b and x on the GPU: bound 5 + 3 = 8 ms; b claims 5 ms */
	tp_accel(p, "chain", "b", "gpu0", -1, 0, 5 * MS);
	tp_accel(p, "other", "x", "gpu0", -1, 0, 8 * MS);
	pd_check_report *r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_FIFO);
	ck_assert_msg(strstr(v->where, "chain/b") && strstr(v->where, "gpu:gpu0"), "%s", v->where);
	ck_assert_double_eq(v->value, 5.0 * MS);
	ck_assert_double_eq(v->limit, 8.0 * MS);
	ck_assert_uint_eq(pd_check_count(r, PD_CK_FIFO), 1);
	pd_check_report_free(r);

	/* both on FPGA slot 0 with different bitstreams: a reconfiguration per request,
	 * bound = (4 + 10) + (3 + 10) = 27 ms */
	tp_accel(p, "chain", "b", "pl", 0, 1, 27 * MS);
	tp_accel(p, "other", "x", "pl", 0, 1, 20 * MS);
	r = check(p);
	v = only(r, PD_CK_FIFO);
	ck_assert_msg(strstr(v->where, "other/x") && strstr(v->where, "fpga:pl/0"), "%s", v->where);
	ck_assert_double_eq(v->limit, 27.0 * MS);
	ck_assert_uint_eq(pd_check_count(r, PD_CK_FIFO), 1);
	pd_check_report_free(r);

	/* one bitstream per slot: no reconfiguration, bound = own latency */
	tp_accel(p, "chain", "b", "pl", 0, 1, 4 * MS);
	tp_accel(p, "other", "x", "pl", 1, 1, 3 * MS);
	r = check(p);
	ck_assert_ptr_null(pd_check_find(r, PD_CK_FIFO));
	ck_assert_msg(r->schedulable, "%zu violations, first %s", r->n_v, r->n_v ? r->v[0].where : "");
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(reconfiguration_counts_in_slot_load)
{
	/* two 1 ms kernels with different bitstreams share slot 0 every 20 ms: sum L/T = 0.1, but with a
	 * 10 ms reconfiguration before each request the slot is busy (11 + 11) / 20 = 1.1 */
	static const char y[] = "dags:\n  - name: g\n    period: 20ms\n    tasks:\n"
				"      - {name: u, wcet: 8ms, accel: [{kind: fpga, latency: 1ms, bitstream: u.bin}]}\n"
				"      - {name: v, wcet: 8ms, accel: [{kind: fpga, latency: 1ms, bitstream: v.bin}]}\n";
	pd_plan *p = tp_plan(y, tp_platform_yaml);
	tp_accel(p, "g", "u", "pl", 0, 0, 22 * MS);
	tp_accel(p, "g", "v", "pl", 0, 0, 22 * MS);
	pd_check_report *r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_ACCEL_LOAD);
	ck_assert_str_eq(v->where, "fpga:pl/0");
	ck_assert_double_eq_tol(v->value, 1.1, 1e-12);
	ck_assert_ptr_null(pd_check_find(r, PD_CK_FIFO)); /* 22 ms = (1 + 10) + (1 + 10) */
	pd_check_report_free(r);
	/* on two slots: no reconfiguration, load 0.05 each, bound 1 ms */
	tp_accel(p, "g", "v", "pl", 1, 0, 1 * MS);
	tp_accel(p, "g", "u", "pl", 0, 0, 1 * MS);
	r = check(p);
	ck_assert_msg(r->schedulable, "%zu violations", r->n_v);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(fpga_slot_out_of_range)
{
	pd_plan *p = good_plan();
	tp_accel(p, "chain", "b", "pl", 2, 1, 4 * MS);
	pd_check_report *r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_SLOTS);
	ck_assert_double_eq(v->value, 3.0);
	ck_assert_double_eq(v->limit, 2.0);
	ck_assert_msg(strstr(v->where, "fpga:pl/2"), "%s", v->where);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(understated_wcet)
{
	pd_plan *p = good_plan();
	tp_task(p, "chain", "a")->wcet_ns = 9 * MS;
	pd_check_report *r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_WCET);
	ck_assert_double_eq(v->value, 9.0 * MS);
	ck_assert_double_eq(v->limit, 10.0 * MS);
	ck_assert_uint_eq(r->n_v, 1);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(exact_sums)
{
	int64_t n3[] = {1, 1, 1}, d3[] = {3, 3, 3};
	ck_assert(pd_check_sum_le(n3, d3, 3, 1, 1));
	ck_assert(!pd_check_sum_le(n3, d3, 3, 999999999999LL, 1000000000000LL));
	int64_t n2[] = {1, 2}, d2[] = {3, 3};
	ck_assert(pd_check_sum_le(n2, d2, 2, 1, 1));
	/* 0.95 - 0.05 as the checker writes it, against densities summing to exactly 0.9 */
	int64_t a[] = {3, 6}, b[] = {10, 10};
	ck_assert(pd_check_sum_le(a, b, 2, 950000LL * 1000000000LL - 1000000LL * 50000000LL, 1000000LL * 1000000000LL));
	int64_t c[] = {3, 6000000001LL}, dd[] = {10, 10000000000LL};
	ck_assert(!pd_check_sum_le(c, dd, 2, 9, 10));
	ck_assert(pd_check_sum_le(NULL, NULL, 0, 0, 1));
}
END_TEST

/* The budget law: on a platform with job_overhead 50 us and budget_margin 0.1 a task's runtime must
 * be at least Q = ceil((C + 50 us) x 1.1); runtime = C (the plan) is refused with Q as the
 * limit, runtime = Q passes, Q - 1 ns is refused; a recorded overhead that is not the platform's is
 * named; the density uses Q: cpu0 holds 2 x 11.055 / 30. */
START_TEST(runtime_below_budget)
{
	char plat[2048];
	const char *at = strstr(tp_platform_yaml, "job_overhead: 0ns");
	ck_assert_ptr_nonnull(at);
	snprintf(plat, sizeof(plat), "%.*sjob_overhead: 50us, budget_margin: 0.1%s", (int)(at - tp_platform_yaml),
		 tp_platform_yaml, at + strlen("job_overhead: 0ns"));
	const int64_t Qa = (10 * MS + 50000) * 11 / 10, Qb = (20 * MS + 50000) * 11 / 10; /* exact: 11055000, 22055000 */
	pd_plan *p = tp_plan(chain_yaml, plat);
	tp_cpu(p, "chain", "a", 0, 10 * MS, 30 * MS, 100 * MS);
	tp_cpu(p, "chain", "b", 1, Qb, 40 * MS, 100 * MS);
	tp_cpu(p, "chain", "c", 0, Qa - 1, 30 * MS, 100 * MS);
	tp_cpu(p, "other", "x", 1, (5 * MS + 50000) * 11 / 10, 50 * MS, 50 * MS);
	tp_task(p, "chain", "b")->overhead_ns = 50000;
	tp_task(p, "other", "x")->overhead_ns = 30000;
	pd_check_report *r = check(p);
	ck_assert_uint_eq(pd_check_count(r, PD_CK_RUNTIME_BUDGET), 2);
	const struct pd_check_violation *v = &r->v[0];
	ck_assert_int_eq(v->kind, PD_CK_RUNTIME_BUDGET);
	ck_assert_str_eq(v->where, "chain/a");
	ck_assert_double_eq(v->value, 10.0 * MS);
	ck_assert_double_eq(v->limit, (double)Qa);
	v = &r->v[1];
	ck_assert_str_eq(v->where, "chain/c");
	ck_assert_double_eq(v->value, (double)(Qa - 1));
	v = only(r, PD_CK_OVERHEAD);
	ck_assert_str_eq(v->where, "other/x");
	ck_assert_double_eq(v->value, 30000.0);
	ck_assert_double_eq(v->limit, 50000.0);
	ck_assert_uint_eq(pd_check_count(r, PD_CK_OVERHEAD), 1);
	ck_assert_uint_eq(r->n_v, 3);
	ck_assert_double_eq_tol(r->cores[0].density, 2.0 * (double)Qa / (30.0 * MS), 1e-12);
	pd_check_report_free(r);
	/* covered: schedulable */
	tp_task(p, "chain", "a")->runtime_ns = Qa;
	tp_task(p, "chain", "c")->runtime_ns = Qa;
	tp_task(p, "other", "x")->overhead_ns = -1; /* not recorded: nothing to compare */
	r = check(p);
	ck_assert_msg(r->schedulable, "%zu violations, first %s", r->n_v, r->n_v ? pd_check_kind_name(r->v[0].kind) : "");
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

/* GRUB reclaiming is allowed on a core whose tasks lie on one path of one DAG (cpu0: a and c of the
 * chain) and refused where two DAGs with constrained deadlines share a core (cpu1: b and x, with
 * b's d = 40 ms < T); implicit deadlines everywhere make it allowed again. The reclaimable share is
 * U_max - admission. */
START_TEST(reclaim_rule)
{
	pd_plan *p = good_plan();
	for (size_t i = 0; i < 4; i++)
		pd_plan_task(p, i)->reclaim = true;
	pd_check_report *r = check(p);
	const struct pd_check_violation *v = only(r, PD_CK_RECLAIM);
	ck_assert_msg(strncmp(v->where, "cpu:1 ", 6) == 0, "where = %s", v->where);
	ck_assert_double_eq(v->value, 2.0);
	ck_assert_uint_eq(r->n_v, 1);
	ck_assert(r->cores[0].reclaim_allowed);
	ck_assert(!r->cores[1].reclaim_allowed);
	ck_assert_uint_eq(r->cores[0].n_reclaim, 2);
	/* admission 2 x 10/100 + 0.05 (fair server) in 2^-20 units; reclaimable = 0.95 - that */
	ck_assert_double_eq_tol(r->cores[0].reclaimable, r->cores[0].admission_limit - r->cores[0].admission, 1e-12);
	ck_assert_double_eq_tol(r->cores[0].reclaimable, 0.95 - 0.25, 1e-5);
	pd_check_report_free(r);
	tp_task(p, "chain", "b")->deadline_ns = 100 * MS;
	r = check(p);
	ck_assert(r->cores[1].reclaim_allowed);
	ck_assert_uint_eq(pd_check_count(r, PD_CK_RECLAIM), 0);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("checker");
	TCase *tc = tcase_create("check");
	tcase_add_test(tc, good_plan_passes);
	tcase_add_test(tc, density_exact_boundary);
	tcase_add_test(tc, density_at_lower_opp);
	tcase_add_test(tc, path_too_long);
	tcase_add_test(tc, runtime_below_kernel_floor);
	tcase_add_test(tc, deadline_beyond_period);
	tcase_add_test(tc, triple_rules);
	tcase_add_test(tc, admission_counts_runtime_and_fair_server);
	tcase_add_test(tc, accelerator_overload);
	tcase_add_test(tc, fifo_bound_gpu_and_fpga);
	tcase_add_test(tc, reconfiguration_counts_in_slot_load);
	tcase_add_test(tc, fpga_slot_out_of_range);
	tcase_add_test(tc, understated_wcet);
	tcase_add_test(tc, exact_sums);
	tcase_add_test(tc, runtime_below_budget);
	tcase_add_test(tc, reclaim_rule);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return pd_test_main(suite());
}
