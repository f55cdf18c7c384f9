/* SPDX-License-Identifier: MIT */
/* pd_esc_append / pd_esc: what reaches a terminal has no control character left (issue 13 item 8). */
#include "core/pd_core.h"
#include "pd_test.h"

#include <string.h>

static const char *esc(const char *s, size_t n)
{
	static char out[512];
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_esc_append(&b, s, n), 0);
	snprintf(out, sizeof(out), "%s", b.data ? b.data : "");
	pd_buf_free(&b);
	return out;
}

START_TEST(controls_are_escaped)
{
	ck_assert_str_eq(esc("plain text, 1.5 W", (size_t)-1), "plain text, 1.5 W");
	/* OSC title change, then clear screen: the classic terminal forgery */
	ck_assert_str_eq(esc("a\033]0;pwned\007\033[2Jb", (size_t)-1), "a\\e]0;pwned\\x07\\e[2Jb");
	ck_assert_str_eq(esc("l1\nl2\r\tx\x7f", (size_t)-1), "l1\\nl2\\r\\tx\\x7F");
	ck_assert_str_eq(esc("back\\slash", (size_t)-1), "back\\\\slash");
	/* a NUL inside an explicit length is shown, not a terminator */
	ck_assert_str_eq(esc("a\0b", 3), "a\\x00b");
	/* C1 CSI (U+009B, UTF-8 C2 9B) is an escape sequence by itself on many terminals */
	ck_assert_str_eq(esc("\xc2\x9b" "31m", (size_t)-1), "\\u{9B}31m");
}
END_TEST

START_TEST(utf8_kept_invalid_escaped)
{
	ck_assert_str_eq(esc("Zürich – µW ✓ 😀", (size_t)-1), "Zürich – µW ✓ 😀");
	ck_assert_str_eq(esc("\xff\xfe", (size_t)-1), "\\xFF\\xFE");           /* never valid */
	ck_assert_str_eq(esc("\xc3", (size_t)-1), "\\xC3");                   /* truncated sequence */
	ck_assert_str_eq(esc("\xc0\xaf", (size_t)-1), "\\xC0\\xAF");           /* overlong '/' */
	ck_assert_str_eq(esc("\xed\xa0\x80", (size_t)-1), "\\xED\\xA0\\x80");  /* surrogate */
	ck_assert_str_eq(esc("\xf4\x90\x80\x80", (size_t)-1), "\\xF4\\x90\\x80\\x80"); /* > U+10FFFF */
}
END_TEST

START_TEST(lines_variant_and_truncation)
{
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_esc_append_lines(&b, "one\n\033[1mtwo\n", (size_t)-1), 0);
	ck_assert_str_eq(b.data, "one\n\\e[1mtwo\n");
	pd_buf_free(&b);
	char small[8];
	/* "ab\e[" does not fit whole: the escape is not cut in half */
	ck_assert_str_eq(pd_esc("abcde\033[", small, sizeof(small)), "abcde\\e");
	ck_assert_str_eq(pd_esc("abcdef\033", small, sizeof(small)), "abcdef");
	ck_assert_str_eq(pd_esc("abcdeé", small, sizeof(small)), "abcdeé");
	ck_assert_str_eq(pd_esc("abcdefé", small, sizeof(small)), "abcdef");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("escape");
	TCase *tc = tcase_create("escape");
	tcase_add_test(tc, controls_are_escaped);
	tcase_add_test(tc, utf8_kept_invalid_escaped);
	tcase_add_test(tc, lines_variant_and_truncation);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
