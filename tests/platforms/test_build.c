/* SPDX-License-Identifier: MIT */
/* Platforms built in code (pd_platform_draft_*): a draft becomes a platform with the figures it was
 * given, written by the canonical writer; a draft that breaks an invariant of pd_platform.h is
 * refused with the parser's diagnostic, as the same figures in a file would be. */
#include "platforms/pd_platform.h"
#include "pd_test.h"

#include <string.h>

static const struct pd_opp OPPS[] = {{1000000, 500000, 100000, {0}}, {2000000, 2000000, 400000, {0}}};

static pd_platform_draft *tiny(void)
{
	struct pd_dl dl = {.max_util_per_cpu = 0.9, .has_fair_server = true, .fair_runtime_ns = 50 * PD_NS_PER_MS,
			   .fair_period_ns = PD_NS_PER_S};
	pd_platform_draft *dr = pd_platform_draft_new("tiny", 2000000, 1500000, &dl);
	ck_assert_ptr_nonnull(dr);
	int cpus[] = {2, 3};
	struct pd_island k = {.name = "big", .cpus = cpus, .n_cpus = 2, .capacity = 1.0, .opps = (struct pd_opp *)OPPS,
			      .n_opps = 2, .policy = "policy2"};
	ck_assert_int_eq(pd_platform_draft_add_island(dr, &k), 0);
	cpus[0] = 9; /* the draft holds its own copy */
	struct pd_accelerator pl = {.name = "pl", .kind = PD_ACCEL_FPGA, .slots = 2, .reconfig_ns = 22664000,
				    .idle_uw = 812000, .manager = "fpga0"};
	ck_assert_int_eq(pd_platform_draft_add_accel(dr, &pl), 0);
	struct pd_sensor s = {.uri = "ip:10.0.0.2", .device = "ina226-big", .channel = "power2", .rail = "VDD_BIG",
			      .measures = "big", .scale = 0.001};
	ck_assert_int_eq(pd_platform_draft_add_sensor(dr, &s), 0);
	return dr;
}

START_TEST(draft_becomes_platform)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = pd_platform_draft_finish(tiny(), "<tiny>", &d);
	pd_diags_print(&d, stderr);
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(pd_platform_name(p), "tiny");
	ck_assert_int_eq(pd_platform_base_uw(p), 1500000);
	ck_assert_uint_eq(pd_platform_island_count(p), 1);
	const struct pd_island *k = pd_platform_island(p, 0);
	ck_assert_int_eq(k->cpus[0], 2);
	ck_assert_str_eq(k->policy, "policy2");
	ck_assert_int_eq(k->opps[1].busy_uw, 2000000);
	ck_assert_int_eq(pd_platform_accel(p, 0)->slots, 2);
	ck_assert_str_eq(pd_platform_sensor(p, 0)->rail, "VDD_BIG");
	ck_assert_int_eq(pd_platform_dl(p)->fair_runtime_ns, 50 * PD_NS_PER_MS);
	/* the built platform is written like any other (canonical form) */
	pd_buf b;
	pd_buf_init(&b);
	pd_err e = {0};
	ck_assert_int_eq(pd_platform_emit_doc(p, &b, &e), 0);
	ck_assert_ptr_nonnull(strstr(b.data, "reconfig_time: 22.664ms"));
	ck_assert_ptr_nonnull(strstr(b.data, "cpus: [2, 3]"));
	pd_buf_free(&b);
	pd_platform_free(p);
	pd_diags_free(&d);
}
END_TEST

START_TEST(bad_draft_refused)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_platform_draft *dr = tiny();
	/* a second island on CPU 3 with unsorted OPPs: two invariants broken */
	struct pd_opp down[] = {OPPS[1], OPPS[0]};
	int cpu3 = 3;
	struct pd_island k = {.name = "little", .cpus = &cpu3, .n_cpus = 1, .capacity = 0.3, .opps = down, .n_opps = 2,
			      .policy = "policy3"};
	pd_platform_draft_add_island(dr, &k);
	ck_assert_ptr_null(pd_platform_draft_finish(dr, "<bad>", &d));
	bool twice = false, order = false;
	for (size_t i = 0; i < d.n; i++) {
		ck_assert_str_eq(d.v[i].loc.file, "<bad>");
		twice |= strstr(d.v[i].msg, "CPU 3 listed twice") != NULL;
		order |= strstr(d.v[i].msg, "strictly increasing") != NULL;
	}
	ck_assert_msg(twice && order, "diagnostics: %zu, first: %s", d.n, d.n ? d.v[0].msg : "-");
	pd_diags_free(&d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("platforms_build");
	TCase *tc = tcase_create("build");
	tcase_add_test(tc, draft_becomes_platform);
	tcase_add_test(tc, bad_draft_refused);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
