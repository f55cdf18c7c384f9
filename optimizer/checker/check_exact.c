/* SPDX-License-Identifier: MIT */
/*
 * check_exact.c - deciding "sum of fractions <= a limit" without ever accepting a false answer.
 *
 * Densities C/d and loads L/T are ratios of int64 nanoseconds. A plain double sum can round a
 * sum of 0.9500000000000001 down to the cap and accept an overloaded core. We therefore:
 *   1. sum in long double and bound the rounding error rigorously (each division and addition of
 *      positive values adds at most one unit roundoff u = 2^(1 - LDBL_MANT_DIG) relative error, so
 *      |S - S_exact| <= (n + 1) u S, taken with a factor 2 of margin);
 *   2. when the sum and the limit are closer than that bound, redo the sum with reduced __int128
 *      rationals (exact);
 *   3. when the exact rationals would overflow, answer "not proven" (false): a checker may reject a
 *      plan that sits within 1e-17 of its limit, it may never accept an unschedulable one.
 */
#include "optimizer/checker/pd_check.h"

#include <float.h>
#include <math.h>

typedef unsigned __int128 u128;

#define U128_SAFE ((u128)1 << 125) /* keep every intermediate well below 2^128 */

static u128 gcd128(u128 a, u128 b)
{
	while (b) {
		u128 t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* num/den += a/b, reduced; false on (potential) overflow. */
static bool rat_add(u128 *num, u128 *den, u128 a, u128 b)
{
	u128 g = gcd128(*den, b);
	u128 bd = b / g, dd = *den / g;
	if (dd != 0 && bd > U128_SAFE / *den)
		return false;
	u128 nden = *den * bd;
	if (bd != 0 && *num > U128_SAFE / bd)
		return false;
	if (dd != 0 && a > U128_SAFE / dd)
		return false;
	u128 nnum = *num * bd + a * dd;
	if (nnum >= U128_SAFE)
		return false;
	u128 r = gcd128(nnum, nden);
	if (r > 1) {
		nnum /= r;
		nden /= r;
	}
	*num = nnum;
	*den = nden;
	return true;
}

/* Exact decision; *ok = false when the arithmetic would overflow. */
static bool exact_le(const int64_t *num, const int64_t *den, size_t n, int64_t ln, int64_t ld, bool *ok)
{
	u128 sn = 0, sd = 1;
	*ok = true;
	for (size_t i = 0; i < n; i++) {
		if (!rat_add(&sn, &sd, (u128)num[i], (u128)den[i])) {
			*ok = false;
			return false;
		}
	}
	/* sn/sd <= ln/ld  <=>  sn*ld <= ln*sd; both factors < 2^125 and 2^63: reduce first. */
	u128 g1 = gcd128(sn, (u128)ln), g2 = gcd128(sd, (u128)ld);
	u128 a = sn / (g1 ? g1 : 1), c = (u128)ln / (g1 ? g1 : 1);
	u128 b = (u128)ld / (g2 ? g2 : 1), dd = sd / (g2 ? g2 : 1);
	if ((b && a > (~(u128)0) / b) || (dd && c > (~(u128)0) / dd)) {
		*ok = false;
		return false;
	}
	return a * b <= c * dd;
}

bool pd_check_sum_le(const int64_t *num, const int64_t *den, size_t n, int64_t lim_num, int64_t lim_den)
{
	if (lim_den <= 0 || lim_num < 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (num[i] < 0 || den[i] <= 0)
			return false;
	long double s = 0;
	for (size_t i = 0; i < n; i++)
		s += (long double)num[i] / (long double)den[i];
	long double lim = (long double)lim_num / (long double)lim_den;
	long double u = ldexpl(1.0L, 1 - LDBL_MANT_DIG);
	long double es = 2.0L * (long double)(n + 1) * u * s; /* bound on |s - exact sum| */
	long double el = 2.0L * u * lim;                         /* bound on |lim - exact limit| */
	if (s + es < lim - el)
		return true;
	if (s - es > lim + el)
		return false;
	bool ok;
	bool le = exact_le(num, den, n, lim_num, lim_den, &ok);
	return ok && le;
}
