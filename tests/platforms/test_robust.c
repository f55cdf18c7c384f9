/* SPDX-License-Identifier: MIT */
/*
 * Hostile input for the platform parser: every prefix of every board file and random byte
 * mutations of them. The parser must never crash (ASan/UBSan builds check memory), must return a
 * model exactly when it recorded no diagnostic, and whatever it accepts must write canonically.
 */
#include "platforms/pd_platform.h"
#include "pd_test.h"

#include <stdlib.h>
#include <string.h>

static char *canonical(const pd_platform *p)
{
	pd_buf b;
	pd_err e = {0};
	pd_buf_init(&b);
	pd_yemit *y = pd_yemit_new(&b);
	pd_yemit_map_begin(y, false);
	pd_yemit_key(y, "platform");
	pd_platform_emit(p, y);
	pd_yemit_map_end(y);
	ck_assert_int_eq(pd_yemit_finish(y, &e), 0);
	return b.data;
}

/* Parses text from memory; returns 1 when accepted. */
static int try_parse(const char *text, size_t len)
{
	pd_ydoc doc;
	pd_diags d;
	int accepted = 0;
	pd_diags_init(&d);
	if (pd_yaml_load(&doc, "mem.yaml", text, len, &d) == 0) {
		const pd_ynode *n = doc.root->kind == PD_Y_MAP ? pd_ymap_get(doc.root, "platform") : NULL;
		pd_platform *p = n ? pd_platform_from_node(n, &d) : NULL;
		ck_assert_msg(!n || (p != NULL) == (d.n == 0), "model returned together with diagnostics");
		if (p) {
			accepted = 1;
			char *t1 = canonical(p);
			pd_ydoc doc2;
			ck_assert_int_eq(pd_yaml_load(&doc2, "re.yaml", t1, strlen(t1), &d), 0);
			pd_platform *q = pd_platform_from_node(pd_ymap_get(doc2.root, "platform"), &d);
			ck_assert_ptr_nonnull(q);
			char *t2 = canonical(q);
			ck_assert_str_eq(t1, t2);
			free(t1);
			free(t2);
			pd_platform_free(q);
			pd_yaml_free(&doc2);
		}
		pd_platform_free(p);
	}
	for (size_t i = 0; i < d.n; i++)
		ck_assert(d.v[i].msg && d.v[i].msg[0]);
	pd_yaml_free(&doc);
	pd_diags_free(&d);
	return accepted;
}

static char *read_board(const char *name, size_t *len)
{
	char rel[128], *text = NULL;
	pd_err e = {0};
	snprintf(rel, sizeof(rel), "platforms/%s.yaml", name);
	ck_assert_int_eq(pd_read_file(pd_test_src(rel), &text, len, 0, &e), 0);
	return text;
}

static const char *const boards[] = {"zcu102", "xavier-agx", "odroid-xu4"};

START_TEST(every_prefix)
{
	size_t len;
	char *text = read_board(boards[_i], &len);
	int accepted = 0;
	/* every 2nd prefix of the smaller boards, every 7th of the long Xavier table (seconds under ASan) */
	size_t step = len > 8000 ? 7 : 2;
	for (size_t n = 0; n <= len; n += step)
		accepted += try_parse(text, n);
	ck_assert_int_eq(try_parse(text, len), 1);
	ck_assert_int_ge(accepted, 1);
	free(text);
}
END_TEST

START_TEST(byte_mutations)
{
	static const char bytes[] = {'\0', '\n', ' ', ':', '-', '[', '{', '}', ']', ',', '"', '\'', '#', '&', '*',
				     '!', '0', '9', 'x', '\xff', '\t', '|', '>', '%', '@', '.'};
	size_t len;
	char *text = read_board(boards[_i], &len);
	char *buf = malloc(len + 1);
	pd_rng r;
	pd_rng_seed(&r, 0x5eed + (uint64_t)_i);
	for (int iter = 0; iter < 800; iter++) {
		memcpy(buf, text, len + 1);
		int edits = (int)pd_rng_range(&r, 1, 4);
		for (int k = 0; k < edits; k++) {
			size_t at = (size_t)pd_rng_range(&r, 0, (int64_t)len - 1);
			buf[at] = bytes[pd_rng_range(&r, 0, sizeof(bytes) - 1)];
		}
		try_parse(buf, len);
	}
	free(buf);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("platforms_robust");
	TCase *tc = tcase_create("robust");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, every_prefix, 0, 3);
	tcase_add_loop_test(tc, byte_mutations, 0, 3);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
