/* SPDX-License-Identifier: MIT */
/*
 * Generator: every set of 100 seeds validates through the parser and has the promised shape
 * (one source and one sink per DAG, periods from the list, D = T, clamped WCETs, critical path
 * within D); same seed -> same bytes; the utilisation sum matches the request when nothing is
 * clamped; accelerator ratio; bad parameters.
 */
#include "helper_dags.h"
#include "pd_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static pd_dagset *gen(uint64_t seed, double util, double accel, int64_t min_wcet)
{
	struct pd_gen_params p;
	pd_err e = {0};
	pd_dags_gen_defaults(&p);
	p.seed = seed;
	p.util = util;
	p.accel_ratio = accel;
	p.min_wcet_ns = min_wcet;
	pd_dagset *s = pd_dags_generate(&p, &e);
	ck_assert_msg(s != NULL, "seed %llu: %s", (unsigned long long)seed, e.msg);
	return s;
}

/* realistic: the critical path of every DAG within D/2 (else only within D) */
static void assert_shape(const pd_dagset *s, int64_t min_wcet, bool realistic)
{
	for (size_t g = 0; g < pd_dags_count(s); g++) {
		const struct pd_dag *G = pd_dags_dag(s, g);
		int64_t T = G->period_ns / PD_NS_PER_MS;
		ck_assert(T == 20 || T == 25 || T == 40 || T == 50 || T == 80 || T == 100);
		ck_assert_int_eq(G->period_ns % PD_NS_PER_MS, 0);
		ck_assert_int_eq(G->deadline_ns, G->period_ns);
		ck_assert(G->n_tasks >= 5 && G->n_tasks <= 10);
		int sources = 0, sinks = 0;
		int64_t *w = calloc(pd_dags_task_count(s), sizeof(int64_t));
		for (size_t i = G->first_task; i < G->first_task + G->n_tasks; i++) {
			const struct pd_task *t = pd_dags_task(s, i);
			sources += pd_dags_task_is_source(t);
			sinks += pd_dags_task_is_sink(t);
			ck_assert_int_ge(t->wcet_ns, min_wcet);
			ck_assert(t->bcet_ns > 0 && t->bcet_ns <= t->wcet_ns);
			ck_assert(t->wcet_fixed_ns >= 0 && t->wcet_fixed_ns <= t->wcet_ns);
			w[i] = t->wcet_ns;
		}
		ck_assert_int_eq(sources, 1);
		ck_assert_int_eq(sinks, 1);
		ck_assert(pd_dags_task_is_source(pd_dags_task(s, G->first_task)));
		ck_assert(pd_dags_task_is_sink(pd_dags_task(s, G->first_task + G->n_tasks - 1)));
		/* the path bound holds before rounding/clamping: allow their slack */
		int64_t lp = pd_dags_longest_path(s, g, w, NULL, NULL);
		int64_t bound = realistic ? G->deadline_ns / 2 : G->deadline_ns;
		ck_assert_int_le(lp, bound + (int64_t)G->n_tasks * (min_wcet + 1000));
		free(w);
	}
}

START_TEST(hundred_seeds_validate)
{
	for (uint64_t seed = 0; seed < 100; seed++) {
		double util = 0.5 + (double)(seed % 6) * 0.5;
		/* the 1.024-ms floor of up to 30 tasks alone can reach 1.54 (refused): a lower floor below */
		int64_t floor_ns = util < 1.6 ? 100000 : 1024000;
		pd_dagset *s = gen(seed, util, (double)(seed % 3) * 0.4, floor_ns);
		assert_shape(s, floor_ns, util <= 0.5);
		char *text = dt_format(s);
		pd_diags d;
		pd_diags_init(&d);
		pd_dagset *s2 = dt_parse_mem(text, strlen(text), &d); /* the full validator */
		if (!s2)
			pd_diags_print(&d, stderr);
		ck_assert_msg(s2 != NULL, "seed %llu does not validate", (unsigned long long)seed);
		ck_assert(pd_dags_equal(s, s2));
		free(text);
		pd_dags_free(s);
		pd_dags_free(s2);
		pd_diags_free(&d);
	}
}
END_TEST

START_TEST(same_seed_same_bytes)
{
	pd_dagset *a = gen(42, 1.5, 0.3, 1024000), *b = gen(42, 1.5, 0.3, 1024000), *c = gen(43, 1.5, 0.3, 1024000);
	char *ta = dt_format(a), *tb = dt_format(b), *tc = dt_format(c);
	ck_assert_str_eq(ta, tb);
	ck_assert_str_ne(ta, tc);
	free(ta);
	free(tb);
	free(tc);
	pd_dags_free(a);
	pd_dags_free(b);
	pd_dags_free(c);
}
END_TEST

/* whole_wcet (the demo's generated set): no bcet, every job does its WCET; the rest of the set is
 * the one the same seed gives without it (bcet is still drawn, then dropped). */
START_TEST(whole_wcet_drops_only_bcet)
{
	struct pd_gen_params p;
	pd_err e = {0};
	pd_dags_gen_defaults(&p);
	p.seed = 7;
	p.accel_ratio = 0.3;
	pd_dagset *a = pd_dags_generate(&p, &e);
	p.whole_wcet = true;
	pd_dagset *b = pd_dags_generate(&p, &e);
	ck_assert_msg(a && b, "%s", e.msg);
	ck_assert_uint_eq(pd_dags_task_count(a), pd_dags_task_count(b));
	size_t differed = 0;
	for (size_t i = 0; i < pd_dags_task_count(a); i++) {
		const struct pd_task *x = pd_dags_task(a, i), *y = pd_dags_task(b, i);
		ck_assert(x->has_bcet && !y->has_bcet);
		ck_assert_int_eq(y->bcet_ns, y->wcet_ns);
		ck_assert_int_eq(x->wcet_ns, y->wcet_ns);
		ck_assert_int_eq(x->wcet_fixed_ns, y->wcet_fixed_ns);
		ck_assert_uint_eq(x->n_impls, y->n_impls);
		differed += x->bcet_ns < x->wcet_ns;
	}
	ck_assert_uint_ge(differed, 1); /* the default really draws a smaller bcet */
	char *tb = dt_format(b);
	ck_assert_msg(!strstr(tb, "bcet"), "%s", tb);
	free(tb);
	pd_dags_free(a);
	pd_dags_free(b);
}
END_TEST

START_TEST(utilisation_matches_without_clamping)
{
	static const double U[] = {0.3, 1.0, 2.5};
	for (size_t k = 0; k < 3; k++) {
		for (uint64_t seed = 1; seed <= 20; seed++) {
			pd_dagset *s = gen(seed, U[k], 0, 0); /* no clamping: min_wcet 0 */
			/* C rounded to 1 us: each task adds at most 0.5us / 20ms = 2.5e-5 */
			ck_assert_msg(fabs(pd_dags_utilisation(s) - U[k]) < 1e-3, "U=%g seed %llu: sum %g", U[k],
				      (unsigned long long)seed, pd_dags_utilisation(s));
			pd_dags_free(s);
		}
	}
}
END_TEST

/* Issue 13 item 4 (gen --util ignored): with the 1.024-ms floor, tasks below it were raised and the
 * sum grew (the README's 0.8 gave 1.023; 0.02 and 1.5 on 200 x 10 tasks both gave 52.1). Now the sum is
 * the request within 1 % on 20 seeds, every WCET at or above the floor, or the request is refused with
 * the reason. */
START_TEST(utilisation_honoured_with_floor)
{
	static const struct {
		unsigned dags, tmin, tmax;
		double util;
		int64_t min_wcet;
	} C[] = {{3, 5, 8, 1.2, 1024000}, {3, 5, 10, 1.6, 1024000}, {4, 7, 8, 2.0, 1024000}, {2, 4, 6, 0.8, 1024000},
		 {3, 5, 10, 3.5, 1024000}, {3, 5, 8, 0.3, 100000}, {1, 3, 3, 0.05, 100000}};
	for (size_t k = 0; k < sizeof(C) / sizeof(C[0]); k++) {
		for (uint64_t seed = 1; seed <= 20; seed++) {
			struct pd_gen_params p;
			pd_err e = {0};
			pd_dags_gen_defaults(&p);
			p.seed = seed;
			p.n_dags = C[k].dags;
			p.min_tasks = C[k].tmin;
			p.max_tasks = C[k].tmax;
			p.util = C[k].util;
			p.min_wcet_ns = C[k].min_wcet;
			pd_dagset *s = pd_dags_generate(&p, &e);
			ck_assert_msg(s, "U=%g seed %llu: %s", p.util, (unsigned long long)seed, e.msg);
			double u = pd_dags_utilisation(s);
			ck_assert_msg(fabs(u - p.util) <= 0.01 * p.util, "U=%g seed %llu: sum %g", p.util,
				      (unsigned long long)seed, u);
			for (size_t i = 0; i < pd_dags_task_count(s); i++)
				ck_assert_int_ge(pd_dags_task(s, i)->wcet_ns, p.min_wcet_ns);
			pd_dags_free(s);
		}
	}
	/* 200 DAGs x 10 tasks: the floor alone makes ~52, so 0.02 and 1.5 are refused with the reason */
	static const double low[] = {0.02, 1.5};
	for (size_t k = 0; k < 2; k++) {
		for (uint64_t seed = 1; seed <= 20; seed++) {
			struct pd_gen_params p;
			pd_err e = {0};
			pd_dags_gen_defaults(&p);
			p.seed = seed;
			p.n_dags = 200;
			p.min_tasks = p.max_tasks = 10;
			p.util = low[k];
			ck_assert_ptr_null(pd_dags_generate(&p, &e));
			ck_assert_int_eq(e.code, PD_EXIT_USAGE);
			ck_assert_msg(strstr(e.msg, "cannot be met: 2000 tasks at the minimum WCET of 1.024ms already make"),
				      "%s", e.msg);
		}
	}
}
END_TEST

START_TEST(accelerator_ratio)
{
	pd_dagset *none = gen(3, 1.0, 0, 1024000), *all = gen(3, 1.0, 1, 1024000);
	size_t fpga = 0, gpu = 0;
	for (size_t i = 0; i < pd_dags_task_count(none); i++)
		ck_assert_uint_eq(pd_dags_task(none, i)->n_impls, 0);
	for (size_t i = 0; i < pd_dags_task_count(all); i++) {
		const struct pd_task *t = pd_dags_task(all, i);
		ck_assert(t->n_impls >= 1 && t->n_impls <= 2);
		for (size_t k = 0; k < t->n_impls; k++) {
			const struct pd_impl *m = &t->impls[k];
			ck_assert(m->latency_ns > 0 && m->latency_ns < t->wcet_ns);
			ck_assert_int_ge(m->power_uw, 0);
			if (m->kind == PD_ACCEL_FPGA) {
				char want[160];
				snprintf(want, sizeof(want), "%s_%s.bin", pd_dags_dag(all, t->dag)->name, t->name);
				ck_assert_str_eq(m->bitstream, want);
				fpga++;
			} else {
				ck_assert_ptr_null(m->bitstream);
				gpu++;
			}
		}
	}
	ck_assert(fpga > 0 && gpu > 0);
	pd_dags_free(none);
	pd_dags_free(all);
}
END_TEST

START_TEST(bad_parameters)
{
	struct pd_gen_params p;
	pd_err e = {0};
	pd_dags_gen_defaults(&p);
	p.n_dags = 0;
	ck_assert_ptr_null(pd_dags_generate(&p, &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	pd_dags_gen_defaults(&p);
	p.min_tasks = 6;
	p.max_tasks = 5;
	ck_assert_ptr_null(pd_dags_generate(&p, &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	pd_dags_gen_defaults(&p);
	p.util = -1;
	ck_assert_ptr_null(pd_dags_generate(&p, &e));
	p.util = NAN;
	ck_assert_ptr_null(pd_dags_generate(&p, &e));
	pd_dags_gen_defaults(&p);
	p.accel_ratio = 1.5;
	ck_assert_ptr_null(pd_dags_generate(&p, &e));
	pd_dags_gen_defaults(&p);
	p.edge_prob = -0.1;
	ck_assert_ptr_null(pd_dags_generate(&p, &e));
	pd_dags_gen_defaults(&p);
	p.layers_min = 1;
	ck_assert_ptr_null(pd_dags_generate(&p, &e));
	/* a chain cannot carry utilisation 1 per DAG on its critical path: refused, not faked */
	pd_dags_gen_defaults(&p);
	p.n_dags = 1;
	p.min_tasks = p.max_tasks = 3;
	p.layers_min = p.layers_max = 3;
	p.util = 1.5;
	ck_assert_ptr_null(pd_dags_generate(&p, &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "critical path"));
}
END_TEST

START_TEST(single_task_dags)
{
	struct pd_gen_params p;
	pd_err e = {0};
	pd_dags_gen_defaults(&p);
	p.min_tasks = p.max_tasks = 1;
	p.n_dags = 5;
	p.util = 2;
	pd_dagset *s = pd_dags_generate(&p, &e);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(pd_dags_task_count(s), 5);
	for (size_t g = 0; g < 5; g++)
		ck_assert_uint_eq(pd_dags_dag(s, g)->n_edges, 0);
	pd_dags_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dags_gen");
	TCase *tc = tcase_create("gen");
	tcase_add_test(tc, hundred_seeds_validate);
	tcase_add_test(tc, same_seed_same_bytes);
	tcase_add_test(tc, whole_wcet_drops_only_bcet);
	tcase_add_test(tc, utilisation_matches_without_clamping);
	tcase_add_test(tc, utilisation_honoured_with_floor);
	tcase_add_test(tc, accelerator_ratio);
	tcase_add_test(tc, bad_parameters);
	tcase_add_test(tc, single_task_dags);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
