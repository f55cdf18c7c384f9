/* SPDX-License-Identifier: MIT */
/*
 * The hand-written YAML plans of tests/checker/ read through the plan reader: plan_ok.yaml passes,
 * each tampered plan fails with the violation its header comment names, with its numbers.
 */
#include "optimizer/checker/pd_check.h"
#include "pd_test.h"

#define MS 1e6

static pd_check_report *load_check(const char *name, pd_plan **pp)
{
	pd_diags d;
	pd_diags_init(&d);
	char rel[256];
	snprintf(rel, sizeof(rel), "tests/checker/%s", name);
	pd_plan *p = pd_plan_load_file(pd_test_src(rel), &d);
	if (!p)
		pd_diags_print(&d, stderr);
	ck_assert_msg(p != NULL, "cannot load %s", name);
	pd_diags_free(&d);
	pd_err e = {0};
	pd_check_report *r = pd_check_plan(p, &e);
	ck_assert_ptr_nonnull(r);
	*pp = p;
	return r;
}

struct expect {
	const char *file;
	enum pd_check_kind kind;
	const char *where;
	double value, limit;
};

static const struct expect cases[] = {
	{"plan_density.yaml", PD_CK_DENSITY, "cpu:0", 4.0 / 3.0, 0.9},
	{"plan_path.yaml", PD_CK_PATH, "dag chain: a -> b -> c", 105 * MS, 100 * MS},
	{"plan_runtime_min.yaml", PD_CK_RUNTIME_MIN, "chain/a", 1000, 1024},
	{"plan_deadline_period.yaml", PD_CK_DEADLINE_PERIOD, "other/y", 60 * MS, 50 * MS},
	{"plan_fifo.yaml", PD_CK_FIFO, "chain/b on gpu:gpu0", 5 * MS, 8 * MS},
	{"plan_accel_overload.yaml", PD_CK_ACCEL_LOAD, "gpu:gpu0", 1.15, 1.0},
};

START_TEST(ok_plan_passes)
{
	pd_plan *p;
	pd_check_report *r = load_check("plan_ok.yaml", &p);
	ck_assert(r->schedulable);
	ck_assert_uint_eq(r->n_v, 0);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

START_TEST(tampered_plan_fails)
{
	const struct expect *x = &cases[_i];
	pd_plan *p;
	pd_check_report *r = load_check(x->file, &p);
	ck_assert_msg(!r->schedulable, "%s", x->file);
	const struct pd_check_violation *v = pd_check_find(r, x->kind);
	ck_assert_msg(v != NULL, "%s: no %s violation", x->file, pd_check_kind_name(x->kind));
	ck_assert_str_eq(v->where, x->where);
	ck_assert_double_eq_tol(v->value, x->value, 1e-9 * x->value);
	ck_assert_double_eq_tol(v->limit, x->limit, 1e-9 * x->limit);
	pd_check_report_free(r);
	pd_plan_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("checker fixtures");
	TCase *tc = tcase_create("fixtures");
	tcase_add_test(tc, ok_plan_passes);
	tcase_add_loop_test(tc, tampered_plan_fails, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
