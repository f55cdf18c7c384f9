/* SPDX-License-Identifier: MIT */
/* pd_muldiv_ceil: the 32-bit (armhf) long-division path must give the same bits as the 128-bit one. */
#include "core/pd_core.h"
#include "pd_test.h"

/* Compile the portable branch of core/muldiv.c under another name. */
#pragma push_macro("__SIZEOF_INT128__")
#undef __SIZEOF_INT128__
#define pd_muldiv_ceil soft_muldiv_ceil
#include "../../core/muldiv.c"
#undef pd_muldiv_ceil
#pragma pop_macro("__SIZEOF_INT128__")

START_TEST(known_values)
{
	ck_assert_int_eq(pd_muldiv_ceil(10, 1, 1, 3, 1), 4);
	ck_assert_int_eq(pd_muldiv_ceil(9, 1, 1, 1, 3), 3);
	ck_assert_int_eq(pd_muldiv_ceil(10000000, 2000000, 1000000, 300000, 1400000), 47619048);
	ck_assert_int_eq(pd_muldiv_ceil(UINT64_MAX, UINT64_MAX, 2, 1, 1), INT64_MAX); /* saturates */
	ck_assert_int_eq(pd_muldiv_ceil(1, 1, 1, 0, 1), INT64_MAX);
	/* 1e19 after the first division, 1e16 after the second: no premature saturation */
	ck_assert_int_eq(pd_muldiv_ceil(1000000000000000ULL, 1000, 1000000, 100000, 1000), 10000000000000000LL);
	ck_assert_int_eq(soft_muldiv_ceil(1000000000000000ULL, 1000, 1000000, 100000, 1000), 10000000000000000LL);
	ck_assert_int_eq(soft_muldiv_ceil(10000000, 2000000, 1000000, 300000, 1400000), 47619048);
}
END_TEST

START_TEST(soft_equals_native)
{
	pd_rng r;
	pd_rng_seed(&r, 42);
	for (int i = 0; i < 200000; i++) {
		int sh = (int)pd_rng_range(&r, 1, 63);
		uint64_t a = pd_rng_next(&r) >> sh, b = pd_rng_next(&r) >> (64 - sh), c = pd_rng_next(&r) >> 40;
		uint64_t d1 = (pd_rng_next(&r) >> pd_rng_range(&r, 0, 63)) | 1;
		uint64_t d2 = (pd_rng_next(&r) >> pd_rng_range(&r, 0, 63)) | 1;
		ck_assert_int_eq(soft_muldiv_ceil(a, b, c, d1, d2), pd_muldiv_ceil(a, b, c, d1, d2));
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("muldiv");
	TCase *tc = tcase_create("muldiv");
	tcase_add_test(tc, known_values);
	tcase_add_test(tc, soft_equals_native);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
