/* SPDX-License-Identifier: MIT */
/* Power model of docs/MODEL.md "Average power": exact WCET scaling (never optimistic), latency scaling, island power. */
#include "platforms/pd_platform.h"
#include "pd_test.h"

#include <math.h>
#include <string.h>

static const char *const PLAT = "platform:\n"
				"  name: pm\n"
				"  reference_frequency: 2000MHz\n"
				"  base_power: 2.1W\n"
				"  dl: {max_util_per_cpu: 0.95, fair_server: {runtime: 50ms, period: 1s}}\n"
				"  islands:\n"
				"    - {name: little, cpus: [0, 1, 2, 3], capacity: 0.3, opps: [{freq: 200MHz, busy: 24mW, idle: 10mW}, {freq: 1400MHz, busy: 297mW, idle: 95mW}]}\n"
				"    - {name: big, cpus: [4, 5, 6, 7], capacity: 1.0, opps: [{freq: 500MHz, busy: 236mW, idle: 53mW}, {freq: 2000MHz, busy: 1982mW, idle: 411mW}]}\n"
				"  accelerators:\n"
				"    - {name: gpu0, kind: gpu, opps: [{freq: 114750kHz, busy: 345mW, idle: 180mW}, {freq: 1377MHz, busy: 6W, idle: 0.5W}]}\n"
				"    - {name: pl, kind: fpga, slots: 1, reconfig_time: 22.664ms, idle_power: 812mW}\n";

static pd_platform *plat_text(const char *text)
{
	static char path[4096];
	pd_diags d;
	pd_diags_init(&d);
	snprintf(path, sizeof(path), "%s", pd_test_write(pd_test_tmpdir(), "p.yaml", text));
	pd_platform *p = pd_platform_load_file(path, &d);
	pd_diags_print(&d, stderr);
	pd_diags_free(&d);
	ck_assert_ptr_nonnull(p);
	return p;
}

static pd_platform *plat(void) { return plat_text(PLAT); }

/* The same board with a measured overhead (30 us), the big island's own (12.5 us) and a 5 % margin. */
static pd_platform *plat_overhead(const char *margin)
{
	static char text[4096];
	const char *dl = "  dl: {max_util_per_cpu: 0.95, fair_server: {runtime: 50ms, period: 1s}}\n";
	const char *at = strstr(PLAT, dl), *big = strstr(PLAT, "capacity: 1.0, ");
	ck_assert_ptr_nonnull(at);
	ck_assert_ptr_nonnull(big);
	snprintf(text, sizeof(text),
		 "%.*s  dl: {max_util_per_cpu: 0.95, fair_server: {runtime: 50ms, period: 1s}, job_overhead: 30us%s%s}\n"
		 "%.*sjob_overhead: 12.5us, %s",
		 (int)(at - PLAT), PLAT, margin ? ", budget_margin: " : "", margin ? margin : "",
		 (int)(big - (at + strlen(dl))), at + strlen(dl), big);
	return plat_text(text);
}

START_TEST(wcet_scale_exact_values)
{
	/* capacity 1, half the frequency: twice the time, exactly */
	ck_assert_int_eq(pd_platform_wcet_scale(10000000, 0, 2000000, 1.0, 1000000), 20000000);
	/* fixed part does not scale: 2 ms + 8 ms * 2000/500 */
	ck_assert_int_eq(pd_platform_wcet_scale(10000000, 2000000, 2000000, 1.0, 500000), 34000000);
	/* 10 ms * 2000 / (0.3 * 1400) = 47619047.619... ns, rounded up */
	ck_assert_int_eq(pd_platform_wcet_scale(10000000, 0, 2000000, 0.3, 1400000), 47619048);
	/* exact integer results are not bumped, fractions always are */
	ck_assert_int_eq(pd_platform_wcet_scale(3, 0, 1, 1.0, 3), 1);
	ck_assert_int_eq(pd_platform_wcet_scale(4, 0, 1, 1.0, 3), 2);
	ck_assert_int_eq(pd_platform_wcet_scale(1000, 0, 1000, 0.5, 1000), 2000);
	/* at the reference point the WCET is unchanged */
	ck_assert_int_eq(pd_platform_wcet_scale(123456789, 1000, 2000000, 1.0, 2000000), 123456789);
	/* all of it fixed: unchanged at any frequency */
	ck_assert_int_eq(pd_platform_wcet_scale(5000000, 5000000, 2000000, 0.3, 200000), 5000000);
	/* a capacity above 1 shortens (rounded up): 1 ms / 1.5 = 666666.67 */
	ck_assert_int_eq(pd_platform_wcet_scale(1000000, 0, 1000, 1.5, 1000), 666667);
}
END_TEST

/* Values where binary floating point would give a result one ns too small. */
START_TEST(wcet_scale_never_optimistic)
{
	/* 2^53 + 1 is not a double: a double computation loses the last ns */
	ck_assert_int_eq(pd_platform_wcet_scale(9007199254740993LL, 0, 1000, 1.0, 1000), 9007199254740993LL);
	/* 0.1 as a double is 0.1000000000000000055..., above 0.1: a double division would give
	 * 9999999999999999.4 -> ...999 + 1; the exact decimal law gives exactly 10^16 */
	ck_assert_int_eq(pd_platform_wcet_scale(1000000000000000LL, 0, 1000, 0.1, 1000), 10000000000000000LL);
	/* kappa = 0.7 (double below 0.7): 7 s / 0.7 = 10 s exactly, not 10 s + 1 ns */
	ck_assert_int_eq(pd_platform_wcet_scale(7000000000LL, 0, 1000, 0.7, 1000), 10000000000LL);
	/* a computed capacity with more than 6 decimals rounds down to millionths: 1/3 -> 0.333333 */
	ck_assert_int_eq(pd_platform_wcet_scale(1000000, 0, 1000, 1.0 / 3.0, 1000), 3000004);
	/* the result is >= the real-number law for a sweep of values */
	for (int64_t c = 1; c < 200000; c += 997) {
		for (int64_t f = 100000; f <= 2000000; f += 100000) {
			int64_t w = pd_platform_wcet_scale(c, c / 7, 2000000, 0.3, f);
			long double exact = (long double)(c / 7) + (long double)(c - c / 7) * 2000000.0L / (0.3L * (long double)f);
			ck_assert(w >= exact - 1e-9L && w < exact + 1.0L + 1e-9L);
		}
	}
}
END_TEST

START_TEST(wcet_scale_invalid_and_saturated)
{
	ck_assert_int_eq(pd_platform_wcet_scale(1000, 0, 1000, 1.0, 0), -1);
	ck_assert_int_eq(pd_platform_wcet_scale(1000, 0, 0, 1.0, 1000), -1);
	ck_assert_int_eq(pd_platform_wcet_scale(1000, 2000, 1000, 1.0, 1000), -1);
	ck_assert_int_eq(pd_platform_wcet_scale(-1, 0, 1000, 1.0, 1000), -1);
	ck_assert_int_eq(pd_platform_wcet_scale(1000, 0, 1000, 0.0, 1000), -1);
	ck_assert_int_eq(pd_platform_wcet_scale(1000, 0, 1000, NAN, 1000), -1);
	ck_assert_int_eq(pd_platform_wcet_scale(INT64_MAX, 0, INT64_MAX, 0.000001, 1), INT64_MAX);
	ck_assert_int_eq(pd_platform_wcet_scale(INT64_MAX, 10, 2, 1.0, 1), INT64_MAX);
}
END_TEST

START_TEST(wcet_at_islands)
{
	pd_platform *p = plat();
	struct pd_task t;
	memset(&t, 0, sizeof(t));
	t.wcet_ns = 10000000;
	t.wcet_fixed_ns = 1000000;
	/* little @1400: 1 ms + 9 ms * 2000 / (0.3 * 1400) = 1 ms + 42857142.857 -> 43857143 */
	ck_assert_int_eq(pd_platform_wcet_at(p, &t, 0, 1), 43857143);
	/* little @200: 1 ms + 9 ms * 2000 / 60 = 1 ms + 300 ms */
	ck_assert_int_eq(pd_platform_wcet_at(p, &t, 0, 0), 301000000);
	/* big @2000 = reference */
	ck_assert_int_eq(pd_platform_wcet_at(p, &t, 1, 1), 10000000);
	/* big @500: 1 ms + 36 ms */
	ck_assert_int_eq(pd_platform_wcet_at(p, &t, 1, 0), 37000000);
	ck_assert_int_eq(pd_platform_wcet_at(p, &t, 2, 0), -1);
	ck_assert_int_eq(pd_platform_wcet_at(p, &t, 1, 2), -1);
	pd_platform_free(p);
}
END_TEST

START_TEST(latency_scaling)
{
	pd_platform *p = plat();
	const struct pd_accelerator *g = pd_platform_accel(p, 0), *pl = pd_platform_accel(p, 1);
	ck_assert_int_eq(pd_platform_latency_at(g, 800000, 1), 800000);  /* top OPP */
	ck_assert_int_eq(pd_platform_latency_at(g, 800000, 0), 9600000); /* 1377 / 114.75 = 12 */
	ck_assert_int_eq(pd_platform_latency_at(g, 1000, 0), 12000);
	ck_assert_int_eq(pd_platform_latency_at(g, 1001, 0), 12012);
	ck_assert_int_eq(pd_platform_latency_at(g, 800000, 99), 800000); /* past the table: top */
	ck_assert_int_eq(pd_platform_latency_at(pl, 500000, 0), 500000);  /* FPGA: fixed clocks */
	ck_assert_int_eq(pd_platform_latency_at(g, -5, 0), -1);
	pd_platform_free(p);
}
END_TEST

START_TEST(island_power)
{
	pd_platform *p = plat();
	const struct pd_island *little = pd_platform_island(p, 0), *big = pd_platform_island(p, 1);
	/* n * idle + (busy - idle) * U: 4 * 0.411 + 1.571 * 0.5 */
	ck_assert_double_eq_tol(pd_platform_island_power_w(big, 1, 0.5), 2.4295, 1e-12);
	ck_assert_double_eq_tol(pd_platform_island_power_w(big, 1, 0.0), 1.644, 1e-12);
	/* 4 * 0.010 + 0.014 * 2.0 */
	ck_assert_double_eq_tol(pd_platform_island_power_w(little, 0, 2.0), 0.068, 1e-12);
	ck_assert_double_eq_tol(pd_platform_island_power_w(little, 1, 4.0), 4 * 0.095 + 0.202 * 4, 1e-12);
	/* GPU: idle + (busy - idle) * U at its OPP; FPGA: its idle power */
	const struct pd_accelerator *g = pd_platform_accel(p, 0), *pl = pd_platform_accel(p, 1);
	ck_assert_double_eq_tol(pd_platform_accel_power_w(g, 1, 0.25), 0.5 + 5.5 * 0.25, 1e-12);
	ck_assert_double_eq_tol(pd_platform_accel_power_w(g, 0, 0.0), 0.18, 1e-12);
	ck_assert_double_eq_tol(pd_platform_accel_power_w(pl, 0, 0.9), 0.812, 1e-12);
	ck_assert_int_eq(pd_platform_opp_find(g->opps, g->n_opps, 114750), 0);
	ck_assert_int_eq(pd_platform_opp_find(g->opps, g->n_opps, 1377000), 1);
	ck_assert_int_eq(pd_platform_opp_find(g->opps, g->n_opps, 1377001), -1);
	/* usable density per core: 0.95 - 50/1000 */
	ck_assert_double_eq_tol(pd_platform_core_capacity(p), 0.90, 1e-12);
	pd_platform_free(p);
}
END_TEST

/* D = C + o_k, Q = ceil(D (1 + m)): the default when nothing is measured, the island override, the
 * margin rounded up to whole ns and exact on decimals (0.07 is not a double). */
START_TEST(budget_overhead_and_margin)
{
	struct pd_task t = {.name = "t", .wcet_ns = 10000000, .wcet_fixed_ns = 1000000};
	struct pd_budget b;
	pd_platform *p = plat();
	/* no job_overhead anywhere: the documented default, no margin */
	ck_assert_int_eq(pd_platform_job_overhead_ns(p, 0), PD_JOB_OVERHEAD_DEFAULT_NS);
	ck_assert_int_eq(pd_platform_job_overhead_ns(p, 1), PD_JOB_OVERHEAD_DEFAULT_NS);
	ck_assert_int_eq(pd_platform_budget_at(p, &t, 1, 1, &b), 0);
	ck_assert_int_eq(b.wcet_ns, 10000000);
	ck_assert_int_eq(b.overhead_ns, PD_JOB_OVERHEAD_DEFAULT_NS);
	ck_assert_int_eq(b.demand_ns, 10000000 + PD_JOB_OVERHEAD_DEFAULT_NS);
	ck_assert_int_eq(b.runtime_ns, b.demand_ns);
	ck_assert_int_eq(pd_platform_job_overhead_ns(p, 2), -1);
	ck_assert_int_eq(pd_platform_budget_at(p, &t, 2, 0, &b), -1);
	ck_assert_int_eq(b.runtime_ns, 0);
	ck_assert_int_eq(pd_platform_budget_of(p, 0, -1, &b), -1);
	pd_platform_free(p);

	p = plat_overhead(NULL);
	ck_assert_int_eq(pd_platform_job_overhead_ns(p, 0), 30000); /* platform-wide */
	ck_assert_int_eq(pd_platform_job_overhead_ns(p, 1), 12500); /* the island's own */
	/* little @200 MHz: C = 301 ms (see wcet_at_islands), D = C + 30 us */
	ck_assert_int_eq(pd_platform_budget_at(p, &t, 0, 0, &b), 0);
	ck_assert_int_eq(b.wcet_ns, 301000000);
	ck_assert_int_eq(b.demand_ns, 301030000);
	ck_assert_int_eq(b.runtime_ns, 301030000);
	ck_assert_int_eq(pd_platform_budget_at(p, &t, 1, 0, &b), 0);
	ck_assert_int_eq(b.demand_ns, 37012500);
	pd_platform_free(p);

	p = plat_overhead("0.05");
	ck_assert_int_eq(pd_platform_budget_at(p, &t, 1, 1, &b), 0);
	ck_assert_int_eq(b.demand_ns, 10012500);
	ck_assert_int_eq(b.runtime_ns, 10513125); /* 10012500 * 1.05 exactly */
	/* rounded up: 1001 * 1.05 = 1051.05 -> 1052 */
	ck_assert_int_eq(pd_platform_budget_runtime(1001, 0.05), 1052);
	pd_platform_free(p);
	/* 0.07 as a double is 0.07000000000000000666: 100 * 1.07 must be exactly 107, not 108 */
	ck_assert_int_eq(pd_platform_budget_runtime(100, 0.07), 107);
	ck_assert_int_eq(pd_platform_budget_runtime(100, 0.0), 100);
	ck_assert_int_eq(pd_platform_budget_runtime(0, 0.5), 0);
	ck_assert_int_eq(pd_platform_budget_runtime(-1, 0.5), -1);
	ck_assert_int_eq(pd_platform_budget_runtime(INT64_MAX - 5, 0.5), INT64_MAX);
	/* a computed margin that is not a 6-place decimal is rounded up: 1e6 * 0.0000015 -> 2 */
	ck_assert_int_eq(pd_platform_budget_runtime(1000000, 0.0000015), 1000002);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("platforms_power");
	TCase *tc = tcase_create("power");
	tcase_add_test(tc, wcet_scale_exact_values);
	tcase_add_test(tc, wcet_scale_never_optimistic);
	tcase_add_test(tc, wcet_scale_invalid_and_saturated);
	tcase_add_test(tc, wcet_at_islands);
	tcase_add_test(tc, latency_scaling);
	tcase_add_test(tc, island_power);
	tcase_add_test(tc, budget_overhead_and_margin);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
