/* SPDX-License-Identifier: MIT */
/*
 * Hostile input for the plan reader: prefixes and random byte mutations of the sample plans. The
 * reader must never crash, must return a plan exactly when it recorded no diagnostic, and whatever
 * it accepts must write back to bytes that read back to the same bytes.
 */
#include "plan/pd_plan.h"
#include "pd_test.h"

#include <glob.h>
#include <stdlib.h>
#include <string.h>

static char *canonical(const pd_plan *p)
{
	pd_buf b;
	pd_err e = {0};
	pd_buf_init(&b);
	ck_assert_int_eq(pd_plan_format(p, &b, &e), 0);
	return b.data;
}

static int try_parse(const char *text, size_t len)
{
	pd_ydoc doc;
	pd_diags d;
	int accepted = 0;
	pd_diags_init(&d);
	if (pd_yaml_load(&doc, "mem.yaml", text, len, &d) == 0) {
		const pd_ynode *n = doc.root->kind == PD_Y_MAP ? pd_ymap_get(doc.root, "plan") : NULL;
		pd_plan *p = n ? pd_plan_from_node(n, &d) : NULL;
		ck_assert_msg(!n || (p != NULL) == (d.n == 0), "plan returned together with diagnostics");
		if (p) {
			accepted = 1;
			char *t1 = canonical(p);
			pd_ydoc doc2;
			ck_assert_int_eq(pd_yaml_load(&doc2, "re.yaml", t1, strlen(t1), &d), 0);
			pd_plan *q = pd_plan_from_node(pd_ymap_get(doc2.root, "plan"), &d);
			pd_diags_print(&d, stderr);
			ck_assert_ptr_nonnull(q);
			char *t2 = canonical(q);
			ck_assert_str_eq(t1, t2);
			free(t1);
			free(t2);
			pd_plan_free(q);
			pd_yaml_free(&doc2);
		}
		pd_plan_free(p);
	}
	pd_yaml_free(&doc);
	pd_diags_free(&d);
	return accepted;
}

static char sample_path[4096];

static char *sample(int i, size_t *len)
{
	glob_t g;
	char *text = NULL;
	pd_err e = {0};
	ck_assert_int_eq(glob(pd_test_src("tests/plan/*.plan.yaml"), 0, NULL, &g), 0);
	ck_assert_uint_ge(g.gl_pathc, 3);
	snprintf(sample_path, sizeof(sample_path), "%s", g.gl_pathv[(size_t)i % g.gl_pathc]);
	ck_assert_int_eq(pd_read_file(sample_path, &text, len, 0, &e), 0);
	globfree(&g);
	return text;
}

START_TEST(prefixes)
{
	size_t len;
	char *text = sample(_i, &len);
	/* a prefix cut before the embedded platform lacks it and cannot be a plan; one cut inside the
	 * platform may still be valid (e.g. fewer sensors), and then it must write canonically */
	size_t plat = (size_t)(strstr(text, "\n  platform:\n") - text);
	for (size_t n = 0; n < len; n += 7)
		ck_assert_int_eq(try_parse(text, n) && n < plat, 0);
	ck_assert_int_eq(try_parse(text, len), 1);
	free(text);
}
END_TEST

START_TEST(byte_mutations)
{
	static const char bytes[] = {'\0', '\n', ' ', ':', '-', '[', '{', '}', ']', ',', '"', '\'', '#',
				     '/', '0', '9', 'x', '\xff', '\t', '.', 'u', 'm', 's'};
	size_t len;
	char *text = sample(_i, &len);
	char *buf = malloc(len + 1);
	pd_rng r;
	pd_rng_seed(&r, 0xfeed + (uint64_t)_i);
	for (int iter = 0; iter < 800; iter++) {
		memcpy(buf, text, len + 1);
		size_t at = (size_t)pd_rng_range(&r, 0, (int64_t)len - 1);
		buf[at] = bytes[pd_rng_range(&r, 0, sizeof(bytes) - 1)];
		try_parse(buf, len);
	}
	free(buf);
	free(text);
}
END_TEST

/* The sample plans were written by pd_plan_write_file: reading and writing gives their bytes. When
 * the canonical form of an embedded model changes on purpose, run this test once with
 * PD_REGEN_SAMPLES=1 to rewrite the samples, and review the diff. */
START_TEST(samples_round_trip)
{
	size_t len;
	char *text = sample(_i, &len);
	pd_ydoc doc;
	pd_diags d;
	pd_diags_init(&d);
	ck_assert_int_eq(pd_yaml_load(&doc, "s.yaml", text, len, &d), 0);
	pd_plan *p = pd_plan_from_node(pd_ymap_get(doc.root, "plan"), &d);
	pd_diags_print(&d, stderr);
	ck_assert_ptr_nonnull(p);
	char *t = canonical(p);
	if (getenv("PD_REGEN_SAMPLES")) {
		pd_err e = {0};
		ck_assert_int_eq(pd_plan_write_file(p, sample_path, &e), 0);
	} else {
		ck_assert_str_eq(t, text);
	}
	free(t);
	pd_plan_free(p);
	pd_yaml_free(&doc);
	pd_diags_free(&d);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plan_robust");
	TCase *tc = tcase_create("robust");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, samples_round_trip, 0, 3);
	tcase_add_loop_test(tc, prefixes, 0, 3);
	tcase_add_loop_test(tc, byte_mutations, 0, 3);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
