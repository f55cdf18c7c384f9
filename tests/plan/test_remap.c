/* SPDX-License-Identifier: MIT */
/* A plan renumbered onto a board's CPU ids (pd_plan_remap_cpus, `deploy --cpu-map`): the tasks keep
 * their core's position in its island, islands their cores and policies follow, every figure stays,
 * the file's own ids give the original bytes back, and a map that does not fit makes no plan. */
#include "plan/pd_plan.h"
#include "pd_test.h"

#include <stdlib.h>
#include <string.h>

static pd_plan *load_xu4(void)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *p = pd_plan_load_file(pd_test_src("tests/plan/twin-xu4.plan.yaml"), &d);
	ck_assert_msg(p, "twin-xu4.plan.yaml does not load");
	pd_diags_free(&d);
	return p;
}

static char *text_of(const pd_plan *p)
{
	pd_buf b;
	pd_buf_init(&b);
	pd_err e = {0};
	ck_assert_int_eq(pd_plan_format(p, &b, &e), 0);
	return b.data; /* the caller frees */
}

/* XU4 with its clusters numbered the other way round: big 0-3, LITTLE 4-7 */
static const int SWAP[8] = {4, 5, 6, 7, 0, 1, 2, 3};

START_TEST(clusters_swapped)
{
	pd_plan *p = load_xu4();
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *q = pd_plan_remap_cpus(p, SWAP, 8, "map", &d);
	ck_assert_msg(q, "remap failed: %s", d.n ? d.v[0].msg : "");
	const pd_platform *pp = pd_plan_platform(p), *qp = pd_plan_platform(q);
	const struct pd_island *little = pd_platform_island(qp, 0), *big = pd_platform_island(qp, 1);
	ck_assert_int_eq(little->cpus[0], 4);
	ck_assert_int_eq(little->cpus[3], 7);
	ck_assert_int_eq(big->cpus[0], 0);
	/* the file's policies were the default names: they follow the first core */
	ck_assert_str_eq(little->policy, "policy4");
	ck_assert_str_eq(big->policy, "policy0");
	ck_assert_int_eq(pd_platform_island_of_cpu(qp, 5), 0);
	/* sense, compute, act on cpu 0, 1, 2 of the LITTLE island: now 4, 5, 6 */
	static const int want[3] = {4, 5, 6};
	for (size_t i = 0; i < 3; i++) {
		const struct pd_plan_task *a = pd_plan_task_c(p, i), *b = pd_plan_task_c(q, i);
		ck_assert_int_eq(b->place.cpu, want[i]);
		ck_assert_uint_eq(b->place.island, a->place.island);
		ck_assert_int_eq(b->runtime_ns, a->runtime_ns);
		ck_assert_int_eq(b->wcet_ns, a->wcet_ns);
		ck_assert_int_eq(b->deadline_ns, a->deadline_ns);
	}
	ck_assert_int_eq(pd_plan_meta_c(q)->power_uw, pd_plan_meta_c(p)->power_uw);
	ck_assert_uint_eq(pd_plan_island_opp(q, 1), pd_plan_island_opp(p, 1));
	ck_assert_int_eq(pd_platform_island(qp, 1)->opps[0].busy_uw, pd_platform_island(pp, 1)->opps[0].busy_uw);
	ck_assert(pd_plan_hash(q) != pd_plan_hash(p));
	/* the map is positional (the i-th core of the file), not id to id: the same map again changes
	 * nothing, and the file's own ids give the original plan back, byte for byte */
	pd_plan *same = pd_plan_remap_cpus(q, SWAP, 8, "map", &d);
	ck_assert(same);
	ck_assert(pd_plan_hash(same) == pd_plan_hash(q));
	pd_plan_free(same);
	static const int ID[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	pd_plan *r = pd_plan_remap_cpus(q, ID, 8, "map", &d);
	ck_assert(r);
	char *a = text_of(p), *b = text_of(r);
	size_t at = 0;
	while (a[at] && a[at] == b[at])
		at++;
	ck_assert_msg(a[at] == b[at], "the inverse map differs from the original at byte %zu: '%.60s'", at, b + at);
	free(a);
	free(b);
	pd_plan_free(r);
	pd_plan_free(q);
	pd_plan_free(p);
	pd_diags_free(&d);
}
END_TEST

/* One core of a one-island board on host CPU 3 (a twin of `--host-cpus 3`); a policy the file names
 * itself is the board's and stays. */
START_TEST(named_policy_stays)
{
	static const char *const doc =
		"platform:\n"
		"  name: one\n"
		"  reference_frequency: 1GHz\n"
		"  islands:\n"
		"    - {name: c, cpus: [0], policy: cluster-a, opps: [{freq: 1GHz, busy: 1W, idle: 0.1W}]}\n";
	const char *f = pd_test_write(pd_test_tmpdir(), "one.yaml", doc);
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = pd_platform_load_file(f, &d);
	ck_assert(p);
	static const int to3[1] = {3};
	pd_platform *q = pd_platform_remap_cpus(p, to3, 1, "map", &d);
	ck_assert(q);
	ck_assert_int_eq(pd_platform_island(q, 0)->cpus[0], 3);
	ck_assert_str_eq(pd_platform_island(q, 0)->policy, "cluster-a");
	pd_platform_free(q);
	pd_platform_free(p);
	pd_diags_free(&d);
}
END_TEST

static const struct {
	int map[9];
	size_t n;
	const char *msg;
} bad[] = {
	{{1, 2, 3}, 3, "a CPU map of 3 CPUs for a platform of 8 cores"},
	{{0, 1, 2, 3, 4, 5, 6, 7, 8}, 9, "a CPU map of 9 CPUs"},
	{{0, 1, 2, 3, 4, 5, 6, 4096}, 8, "not a Linux CPU id"},
	{{0, 1, 2, 3, 4, 5, 6, -1}, 8, "not a Linux CPU id"},
	{{0, 1, 2, 3, 4, 5, 6, 0}, 8, "CPU 0 listed twice"}, /* in both islands: the parser's rule */
};

START_TEST(maps_that_do_not_fit)
{
	pd_plan *p = load_xu4();
	pd_diags d;
	pd_diags_init(&d);
	ck_assert_ptr_null(pd_plan_remap_cpus(p, bad[_i].map, bad[_i].n, "map", &d));
	ck_assert_msg(d.n > 0, "no diagnostic");
	char all[2048] = "";
	for (size_t k = 0; k < d.n; k++)
		strncat(all, d.v[k].msg, sizeof(all) - strlen(all) - 2);
	ck_assert_msg(strcasestr(all, bad[_i].msg), "map %d: '%s' not in '%s'", _i, bad[_i].msg, all);
	pd_diags_free(&d);
	pd_plan_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plan_remap");
	TCase *tc = tcase_create("remap");
	tcase_add_test(tc, clusters_swapped);
	tcase_add_test(tc, named_policy_stays);
	tcase_add_loop_test(tc, maps_that_do_not_fit, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
