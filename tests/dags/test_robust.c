/* SPDX-License-Identifier: MIT */
/*
 * Fuzz-like robustness: every truncated prefix and a few thousand random byte mutations of the
 * shipped examples go through pd_yaml_load + pd_dags_from_node. The parser must never crash (run it
 * under -DPD_SANITIZE=ON), must fail with at least one diagnostic whenever it returns NULL, and
 * whatever it accepts must round-trip through the emitter. Deterministic: seeded pd_rng.
 */
#include "helper_dags.h"
#include "pd_test.h"

#include <stdlib.h>
#include <string.h>

static const char *const examples[] = {"camera", "automotive", "set30", "twin"};

static char *read_example(size_t k, size_t *len)
{
	char rel[64];
	char *text = NULL;
	pd_err e = {0};
	snprintf(rel, sizeof(rel), "dags/examples/%s.yaml", examples[k]);
	ck_assert_int_eq(pd_read_file(pd_test_src(rel), &text, len, 0, &e), 0);
	return text;
}

/* Returns 1 when accepted. */
static int feed(const char *text, size_t len)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = dt_parse_mem(text, len, &d);
	if (s) {
		ck_assert_uint_eq(d.n, 0);
		char *t1 = dt_format(s);
		pd_dagset *s2 = dt_parse_mem(t1, strlen(t1), &d);
		ck_assert_ptr_nonnull(s2);
		ck_assert(pd_dags_equal(s, s2));
		free(t1);
		pd_dags_free(s2);
	} else {
		ck_assert_uint_gt(d.n + d.dropped, 0);
	}
	pd_dags_free(s);
	pd_diags_free(&d);
	return s != NULL;
}

START_TEST(truncated_prefixes)
{
	for (size_t k = 0; k < 4; k++) {
		size_t len, accepted = 0;
		char *text = read_example(k, &len);
		for (size_t n = 0; n < len; n += 1 + (len > 4000) * 2) {
			char *copy = malloc(n + 1); /* exact-size heap copy: ASan sees any over-read */
			memcpy(copy, text, n);
			copy[n] = '\0';
			accepted += (size_t)feed(copy, n);
			free(copy);
		}
		ck_assert_uint_lt(accepted, len); /* most prefixes are broken: they must be refused */
		ck_assert_int_eq(feed(text, len), 1);
		free(text);
	}
}
END_TEST

START_TEST(random_mutations)
{
	static const char alphabet[] = "-:[]{},#&*!|>'\"\n \t0123456789abcmsuW.%@\\";
	pd_rng r;
	size_t accepted = 0;
	pd_rng_seed(&r, 2024);
	for (size_t k = 0; k < 4; k++) {
		size_t len;
		char *text = read_example(k, &len);
		for (int it = 0; it < 600; it++) {
			char *m = malloc(len + 1);
			memcpy(m, text, len + 1);
			int edits = 1 + (int)pd_rng_range(&r, 0, 3);
			for (int j = 0; j < edits; j++) {
				size_t at = (size_t)pd_rng_range(&r, 0, (int64_t)len - 1);
				switch (pd_rng_range(&r, 0, 2)) {
				case 0: /* replace with a YAML-significant byte */
					m[at] = alphabet[pd_rng_range(&r, 0, sizeof(alphabet) - 2)];
					break;
				case 1: /* random byte (invalid UTF-8, NUL included) */
					m[at] = (char)pd_rng_range(&r, 0, 255);
					break;
				default: /* duplicate a line: duplicate keys, tasks, edges */
					memmove(m + at, m + at / 2, len - at);
					break;
				}
			}
			accepted += (size_t)feed(m, len);
			free(m);
		}
		free(text);
	}
	/* edits inside comments or names keep a file valid: the round-trip branch was exercised */
	ck_assert_uint_gt(accepted, 0);
	ck_assert_uint_lt(accepted, 4 * 600);
}
END_TEST

START_TEST(hostile_shapes)
{
	static const char *const cases[] = {
		"dags: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
		"dags: [{name: a, period: 1ms, tasks: [{name: t, wcet: 1ms}], edges: [[t, t], [t, t]]}]\n",
		"dags: [{name: a, period: 1ms, tasks: [{name: t, wcet: 1ms}], edges: [[], [t], [t, t, t], {}]}]\n",
		"dags: [{}, [], x, ~, {name: ~}]\n",
		"dags: [{name: a, period: 1ms, tasks: [{name: t, wcet: 9223372036854775807ns, bcet: 1ms}]}]\n",
		"dags: [{name: a, period: 1ms, tasks: [{name: t, wcet: 1ms, accel: [{}, [], x, {kind: ~}]}]}]\n",
		"dags: !!seq [a]\n",
		"dags: &a [*a]\n",
		"\xef\xbb\xbf" "dags: []\n",
		"dags:\n  - name: a\n    name: b\n",
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		ck_assert_int_eq(feed(cases[k], strlen(cases[k])), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dags_robust");
	TCase *tc = tcase_create("robust");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, truncated_prefixes);
	tcase_add_test(tc, random_mutations);
	tcase_add_test(tc, hostile_shapes);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
