/* SPDX-License-Identifier: MIT */
/*
 * Exact ceil(a * b * c / (d1 * d2)) for the power model and the agent's runtime conversion. 64-bit
 * hosts use the compiler's 128-bit integers; 32-bit boards (armhf: the ODROID-XU4) have none, so there
 * the numbers are kept in two 64-bit halves and divided by long division. Both give the same bits.
 * ceil(ceil(x / d1) / d2) == ceil(x / (d1 d2)) for positive integers, so dividing twice is exact.
 */
#include "core/pd_core.h"

#ifdef __SIZEOF_INT128__
typedef unsigned __int128 u128;

static u128 div_ceil(u128 n, uint64_t d)
{
	return n / d + (n % d != 0);
}

int64_t pd_muldiv_ceil(uint64_t a, uint64_t b, uint64_t c, uint64_t d1, uint64_t d2)
{
	u128 num;
	if (d1 == 0 || d2 == 0 || __builtin_mul_overflow((u128)a, (u128)b, &num) ||
	    __builtin_mul_overflow(num, (u128)c, &num))
		return INT64_MAX;
	u128 q = div_ceil(div_ceil(num, d1), d2);
	return q > (u128)INT64_MAX ? INT64_MAX : (int64_t)q;
}
#else
typedef struct {
	uint64_t hi, lo;
} u128;

/* x * y as 128 bits from 32-bit partial products. */
static u128 mul64(uint64_t x, uint64_t y)
{
	uint64_t xl = (uint32_t)x, xh = x >> 32, yl = (uint32_t)y, yh = y >> 32;
	uint64_t ll = xl * yl, lh = xl * yh, hl = xh * yl, hh = xh * yh;
	uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
	u128 r = {hh + (lh >> 32) + (hl >> 32) + (mid >> 32), (mid << 32) | (uint32_t)ll};
	return r;
}

/* n * c in 128 bits; false on overflow. */
static bool mul128(u128 n, uint64_t c, u128 *out)
{
	u128 lo = mul64(n.lo, c), hi = mul64(n.hi, c);
	if (hi.hi || lo.hi + hi.lo < lo.hi)
		return false;
	out->hi = lo.hi + hi.lo;
	out->lo = lo.lo;
	return true;
}

/* ceil(n / d), d > 0: the high half divides directly, the low half by restoring long division with a
 * remainder that always stays below d. */
static u128 div_ceil(u128 n, uint64_t d)
{
	u128 q = {n.hi / d, 0};
	uint64_t rem = n.hi % d;
	for (int i = 63; i >= 0; i--) {
		bool carry = rem >> 63;
		rem = (rem << 1) | ((n.lo >> i) & 1);
		q.lo <<= 1;
		if (carry || rem >= d) {
			rem -= d;
			q.lo |= 1;
		}
	}
	if (rem && ++q.lo == 0)
		q.hi++;
	return q;
}

int64_t pd_muldiv_ceil(uint64_t a, uint64_t b, uint64_t c, uint64_t d1, uint64_t d2)
{
	u128 n;
	if (d1 == 0 || d2 == 0 || !mul128(mul64(a, b), c, &n))
		return INT64_MAX;
	u128 q = div_ceil(div_ceil(n, d1), d2);
	return q.hi || q.lo > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)q.lo;
}
#endif
