/* SPDX-License-Identifier: MIT */
/*
 * Emitter round trip: parse(emit(x)) == x and emit(parse(emit(x))) == emit(x) byte for byte, for the
 * shipped examples, generated sets and a set exercising every optional field; the embedded form
 * (sequence only, as the plan writer uses it); atomic file writing.
 */
#include "helper_dags.h"
#include "pd_test.h"

#include <stdlib.h>
#include <string.h>

/* emit -> parse -> equal -> emit again -> same bytes. */
static void assert_round_trip(const pd_dagset *s)
{
	char *t1 = dt_format(s);
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s2 = dt_parse_mem(t1, strlen(t1), &d);
	if (!s2) {
		fprintf(stderr, "%s\n", t1);
		pd_diags_print(&d, stderr);
	}
	ck_assert_ptr_nonnull(s2);
	ck_assert(pd_dags_equal(s, s2));
	char *t2 = dt_format(s2);
	ck_assert_str_eq(t1, t2);
	free(t1);
	free(t2);
	pd_dags_free(s2);
	pd_diags_free(&d);
}

START_TEST(examples_round_trip)
{
	static const char *const ex[] = {"camera", "automotive", "set30", "twin"};
	for (size_t k = 0; k < 4; k++) {
		char rel[64];
		pd_diags d;
		pd_diags_init(&d);
		snprintf(rel, sizeof(rel), "dags/examples/%s.yaml", ex[k]);
		pd_dagset *s = pd_dags_load_file(pd_test_src(rel), &d);
		ck_assert_ptr_nonnull(s);
		assert_round_trip(s);
		pd_dags_free(s);
		pd_diags_free(&d);
	}
}
END_TEST

START_TEST(generated_round_trip)
{
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct pd_gen_params p;
		pd_err e = {0};
		pd_dags_gen_defaults(&p);
		p.seed = seed;
		p.accel_ratio = 0.5;
		pd_dagset *s = pd_dags_generate(&p, &e);
		ck_assert_ptr_nonnull(s);
		assert_round_trip(s);
		pd_dags_free(s);
	}
}
END_TEST

static const char *const OPTIONAL = "dags:\n"
				    "  - name: g\n"
				    "    period: 40ms\n"
				    "    tasks:\n"
				    "      - {name: plain, wcet: 1.5ms}\n"
				    "      - name: full\n"
				    "        wcet: 1234567ns\n"
				    "        wcet_fixed: 1us\n"
				    "        bcet: 1234567ns\n"
				    "        accel:\n"
				    "          - {kind: gpu, latency: 2500us, power: 0mW, accel: gpu0}\n"
				    "          - {kind: fpga, latency: 1s, bitstream: \"123\", power: 1.25W}\n"
				    "        work: plugin:lib.so:f\n"
				    "      - {name: \"true\", wcet: 2ms, work: builtin:spin}\n"
				    "      - {name: \"007\", wcet: 2ms}\n"
				    "    edges: [[plain, full], [full, \"true\"], [full, \"007\"]]\n"
				    "  - name: h\n"
				    "    period: 3600s\n"
				    "    deadline: 3599999999999ns\n"
				    "    late: queue\n"
				    "    tasks:\n"
				    "      - {name: x, wcet: 3600s}\n"
				    "  - name: k\n"
				    "    period: 1s\n"
				    "    late: resync\n"
				    "    tasks:\n"
				    "      - {name: y, wcet: 1ms}\n";

START_TEST(optional_fields_round_trip)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = dt_load_text(OPTIONAL, &d, NULL);
	if (!s)
		pd_diags_print(&d, stderr);
	ck_assert_ptr_nonnull(s);
	assert_round_trip(s);
	char *t = dt_format(s);
	/* given -> written; absent -> absent (exact model, not defaults made explicit) */
	ck_assert_ptr_null(strstr(t, "name: g\n  period: 40ms\n  deadline"));
	ck_assert_ptr_nonnull(strstr(t, "period: 1h") ? NULL : strstr(t, "deadline: 3599999999.999us"));
	ck_assert_ptr_nonnull(strstr(t, "bcet: 1234.567us"));
	ck_assert_ptr_nonnull(strstr(t, "{kind: gpu, latency: 2.5ms, power: 0W, accel: gpu0}"));
	ck_assert_ptr_nonnull(strstr(t, "bitstream: \"123\""));
	ck_assert_ptr_nonnull(strstr(t, "name: \"true\""));
	ck_assert_ptr_nonnull(strstr(t, "- [full, \"007\"]"));
	ck_assert_ptr_null(strstr(t, "name: plain\n    wcet: 1.5ms\n    bcet"));
	/* late: written when given (even the default), absent when absent */
	ck_assert_ptr_nonnull(strstr(t, "late: queue\n"));
	ck_assert_ptr_nonnull(strstr(t, "period: 1s\n  late: resync\n"));
	ck_assert_ptr_null(strstr(t, "period: 40ms\n  late"));
	ck_assert_int_eq(pd_dags_dag(s, 0)->late, PD_LATE_RESYNC);
	ck_assert(!pd_dags_dag(s, 0)->has_late);
	ck_assert_int_eq(pd_dags_dag(s, 1)->late, PD_LATE_QUEUE);
	ck_assert(pd_dags_dag(s, 2)->has_late);
	free(t);
	pd_dags_free(s);
	pd_diags_free(&d);
}
END_TEST

START_TEST(equality_sees_differences)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *a = dt_load_text(OPTIONAL, &d, NULL);
	char *text = strdup(OPTIONAL);
	*strstr(text, "1.25W") = '2'; /* power 2.25W */
	pd_dagset *b = dt_parse_mem(text, strlen(text), &d);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert(pd_dags_equal(a, a));
	ck_assert(!pd_dags_equal(a, b));
	free(text);
	pd_dags_free(b);
	/* the same set with the other policy */
	char *t2 = malloc(strlen(OPTIONAL) + 8);
	strcpy(t2, OPTIONAL);
	char *q = strstr(t2, "late: queue");
	memmove(q + strlen("late: resync"), q + strlen("late: queue"), strlen(q + strlen("late: queue")) + 1);
	memcpy(q, "late: resync", strlen("late: resync"));
	b = dt_parse_mem(t2, strlen(t2), &d);
	ck_assert_ptr_nonnull(b);
	ck_assert(!pd_dags_equal(a, b));
	free(t2);
	pd_dags_free(a);
	pd_dags_free(b);
	pd_diags_free(&d);
}
END_TEST

/* The plan writer emits the set as the value of one of its keys. */
START_TEST(embedded_sequence)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = pd_dags_load_file(pd_test_src("dags/examples/automotive.yaml"), &d);
	ck_assert_ptr_nonnull(s);
	pd_buf b;
	pd_err e = {0};
	pd_buf_init(&b);
	pd_yemit *y = pd_yemit_new(&b);
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "plan", "x");
	pd_yemit_key(y, "embedded");
	pd_dags_emit(s, y);
	pd_yemit_kv_int(y, "after", 3);
	pd_yemit_map_end(y);
	ck_assert_int_eq(pd_yemit_finish(y, &e), 0);
	pd_ydoc doc;
	ck_assert_int_eq(pd_yaml_load(&doc, "emb.yaml", b.data, b.len, &d), 0);
	pd_dagset *s2 = pd_dags_from_node(pd_ymap_get(doc.root, "embedded"), &d);
	ck_assert_ptr_nonnull(s2);
	ck_assert(pd_dags_equal(s, s2));
	ck_assert_str_eq(pd_ymap_get(doc.root, "after")->str, "3");
	pd_yaml_free(&doc);
	pd_buf_free(&b);
	pd_dags_free(s);
	pd_dags_free(s2);
	pd_diags_free(&d);
}
END_TEST

START_TEST(write_file)
{
	pd_diags d;
	pd_err e = {0};
	pd_diags_init(&d);
	pd_dagset *s = pd_dags_load_file(pd_test_src("dags/examples/camera.yaml"), &d);
	const char *dir = pd_test_tmpdir();
	char path[512];
	snprintf(path, sizeof(path), "%s/out.yaml", dir);
	ck_assert_int_eq(pd_dags_write_file(s, path, &e), 0);
	pd_dagset *s2 = pd_dags_load_file(path, &d);
	ck_assert_ptr_nonnull(s2);
	ck_assert(pd_dags_equal(s, s2));
	/* an unwritable destination fails with an error, leaving nothing */
	snprintf(path, sizeof(path), "%s/missing/out.yaml", dir);
	ck_assert_int_ne(pd_dags_write_file(s, path, &e), 0);
	ck_assert_int_ne(e.code, 0);
	pd_dags_free(s);
	pd_dags_free(s2);
	pd_diags_free(&d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dags_roundtrip");
	TCase *tc = tcase_create("roundtrip");
	tcase_add_test(tc, examples_round_trip);
	tcase_add_test(tc, generated_round_trip);
	tcase_add_test(tc, optional_fields_round_trip);
	tcase_add_test(tc, equality_sees_differences);
	tcase_add_test(tc, embedded_sequence);
	tcase_add_test(tc, write_file);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
