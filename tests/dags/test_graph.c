/* SPDX-License-Identifier: MIT */
/* Topological order, CSR adjacency and longest paths (finish potentials and tails). */
#include "helper_dags.h"
#include "pd_test.h"

#include <stdlib.h>
#include <string.h>

/*   a(1) -> b(2) -> d(1)
 *   a(1) -> c(5) -> d(1)      longest a-c-d = 7 ms
 * second DAG: two sources x(4), y(1), two sinks: x -> z(2), y -> z, y -> w(10): longest y-w = 11 */
static const char *const DIAMOND = "dags:\n"
				   "  - name: g\n"
				   "    period: 40ms\n"
				   "    tasks:\n"
				   "      - {name: d, wcet: 1ms}\n"
				   "      - {name: c, wcet: 5ms}\n"
				   "      - {name: b, wcet: 2ms}\n"
				   "      - {name: a, wcet: 1ms}\n"
				   "    edges: [[a, b], [a, c], [b, d], [c, d]]\n"
				   "  - name: h\n"
				   "    period: 20ms\n"
				   "    tasks:\n"
				   "      - {name: x, wcet: 4ms}\n"
				   "      - {name: y, wcet: 1ms}\n"
				   "      - {name: z, wcet: 2ms}\n"
				   "      - {name: w, wcet: 10ms}\n"
				   "    edges: [[x, z], [y, z], [y, w]]\n";

static pd_dagset *diamond(void)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = dt_load_text(DIAMOND, &d, NULL);
	ck_assert_ptr_nonnull(s);
	pd_diags_free(&d);
	return s;
}

static size_t T(const pd_dagset *s, const char *dag, const char *task)
{
	long i = pd_dags_find_task(s, dag, task);
	ck_assert_int_ge(i, 0);
	return (size_t)i;
}

/* Every edge goes forward in topo[], and topo[] is a permutation kept DAG by DAG. */
static void assert_topo(const pd_dagset *s)
{
	size_t n = pd_dags_task_count(s);
	size_t *pos = malloc(n * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		pos[i] = SIZE_MAX;
	for (size_t k = 0; k < n; k++) {
		size_t i = pd_dags_topo(s)[k];
		ck_assert_uint_lt(i, n);
		ck_assert_uint_eq(pos[i], SIZE_MAX);
		pos[i] = k;
		const struct pd_dag *G = pd_dags_dag(s, pd_dags_task(s, i)->dag);
		ck_assert(k >= G->first_task && k < G->first_task + G->n_tasks);
	}
	for (size_t g = 0; g < pd_dags_count(s); g++) {
		const struct pd_dag *G = pd_dags_dag(s, g);
		for (size_t e = 0; e < G->n_edges; e++)
			ck_assert_uint_lt(pos[G->edges[e].from], pos[G->edges[e].to]);
	}
	free(pos);
}

START_TEST(topo_and_csr)
{
	pd_dagset *s = diamond();
	assert_topo(s);
	const size_t *topo = pd_dags_topo(s);
	ck_assert_uint_eq(topo[0], T(s, "g", "a")); /* the only source comes first */
	ck_assert_uint_eq(topo[3], T(s, "g", "d"));
	const struct pd_task *d = pd_dags_task(s, T(s, "g", "d"));
	ck_assert_uint_eq(d->n_preds, 2);
	ck_assert_uint_eq(d->preds[0], T(s, "g", "b")); /* file order of the edges */
	ck_assert_uint_eq(d->preds[1], T(s, "g", "c"));
	const struct pd_task *y = pd_dags_task(s, T(s, "h", "y"));
	ck_assert_uint_eq(y->n_succs, 2);
	ck_assert_uint_eq(y->succs[0], T(s, "h", "z"));
	ck_assert_uint_eq(y->succs[1], T(s, "h", "w"));
	ck_assert(pd_dags_task_is_source(y));
	ck_assert(pd_dags_task_is_sink(pd_dags_task(s, T(s, "h", "w"))));
	pd_dags_free(s);
}
END_TEST

START_TEST(longest_path_int)
{
	pd_dagset *s = diamond();
	size_t n = pd_dags_task_count(s);
	int64_t *w = calloc(n, sizeof(int64_t)), *F = calloc(n, sizeof(int64_t)), *tail = calloc(n, sizeof(int64_t));
	for (size_t i = 0; i < n; i++)
		w[i] = pd_dags_task(s, i)->wcet_ns;
	ck_assert_int_eq(pd_dags_longest_path(s, 0, w, F, tail), 7 * PD_NS_PER_MS);
	ck_assert_int_eq(F[T(s, "g", "a")], 1 * PD_NS_PER_MS);
	ck_assert_int_eq(F[T(s, "g", "b")], 3 * PD_NS_PER_MS);
	ck_assert_int_eq(F[T(s, "g", "c")], 6 * PD_NS_PER_MS);
	ck_assert_int_eq(F[T(s, "g", "d")], 7 * PD_NS_PER_MS);
	ck_assert_int_eq(tail[T(s, "g", "a")], 7 * PD_NS_PER_MS);
	ck_assert_int_eq(tail[T(s, "g", "b")], 3 * PD_NS_PER_MS);
	ck_assert_int_eq(tail[T(s, "g", "c")], 6 * PD_NS_PER_MS);
	ck_assert_int_eq(tail[T(s, "g", "d")], 1 * PD_NS_PER_MS);
	/* DAG h: several sources and sinks; entries of DAG g are left untouched */
	int64_t before = F[T(s, "g", "d")];
	ck_assert_int_eq(pd_dags_longest_path(s, 1, w, F, NULL), 11 * PD_NS_PER_MS);
	ck_assert_int_eq(F[T(s, "h", "z")], 6 * PD_NS_PER_MS);
	ck_assert_int_eq(F[T(s, "h", "w")], 11 * PD_NS_PER_MS);
	ck_assert_int_eq(F[T(s, "g", "d")], before);
	/* other weights: make b heavy, the path through b wins */
	w[T(s, "g", "b")] = 9 * PD_NS_PER_MS;
	ck_assert_int_eq(pd_dags_longest_path(s, 0, w, NULL, NULL), 11 * PD_NS_PER_MS);
	/* saturation instead of overflow */
	for (size_t i = 0; i < n; i++)
		w[i] = INT64_MAX / 2;
	ck_assert_int_eq(pd_dags_longest_path(s, 0, w, F, tail), INT64_MAX);
	ck_assert_int_eq(tail[T(s, "g", "a")], INT64_MAX);
	free(w);
	free(F);
	free(tail);
	pd_dags_free(s);
}
END_TEST

START_TEST(longest_path_double)
{
	pd_dagset *s = diamond();
	size_t n = pd_dags_task_count(s);
	double *w = calloc(n, sizeof(double)), *F = calloc(n, sizeof(double)), *tail = calloc(n, sizeof(double));
	for (size_t i = 0; i < n; i++) /* utilisation-like weights C/T */
		w[i] = (double)pd_dags_task(s, i)->wcet_ns / (double)pd_dags_dag(s, pd_dags_task(s, i)->dag)->period_ns;
	ck_assert_double_eq_tol(pd_dags_longest_path_d(s, 0, w, F, tail), 7.0 / 40, 1e-12);
	ck_assert_double_eq_tol(F[T(s, "g", "c")], 6.0 / 40, 1e-12);
	ck_assert_double_eq_tol(tail[T(s, "g", "b")], 3.0 / 40, 1e-12);
	ck_assert_double_eq_tol(pd_dags_longest_path_d(s, 1, w, NULL, tail), 11.0 / 20, 1e-12);
	ck_assert_double_eq_tol(tail[T(s, "h", "y")], 11.0 / 20, 1e-12);
	ck_assert_double_eq_tol(tail[T(s, "h", "x")], 6.0 / 20, 1e-12);
	free(w);
	free(F);
	free(tail);
	pd_dags_free(s);
}
END_TEST

START_TEST(topo_of_generated_sets)
{
	for (uint64_t seed = 1; seed <= 30; seed++) {
		struct pd_gen_params p;
		pd_err e = {0};
		pd_dags_gen_defaults(&p);
		p.seed = seed;
		p.n_dags = 4;
		p.min_tasks = 1;
		p.max_tasks = 20;
		pd_dagset *s = pd_dags_generate(&p, &e);
		ck_assert_msg(s != NULL, "seed %llu: %s", (unsigned long long)seed, e.msg);
		assert_topo(s);
		pd_dags_free(s);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dags_graph");
	TCase *tc = tcase_create("graph");
	tcase_add_test(tc, topo_and_csr);
	tcase_add_test(tc, longest_path_int);
	tcase_add_test(tc, longest_path_double);
	tcase_add_test(tc, topo_of_generated_sets);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
