/* SPDX-License-Identifier: MIT */
/*
 * Units (docs/FORMATS.md section 1.1): durations in ns, power in uW, frequency in kHz, all int64.
 *
 * Parsing is exact decimal arithmetic: "2.5ms" is 25 * 10^6 / 10 ns computed in 128-bit integers, so no
 * binary floating point ever rounds a deadline. A value that is not a whole number of the base unit
 * ("0.5ns", "0.1kHz") is an error, not a silent rounding. Writing picks the largest unit that keeps
 * the value >= 1 and needs at most 3 decimals, so the text stays readable and reads back exactly.
 */
#include "core/pd_core.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct unit {
	const char *sfx;
	int64_t mult; /* base units per unit (may be 0 for "divide by 1000") */
	int64_t div;
};

static const struct unit dur_units[] = {
	{"ns", 1, 1}, {"us", 1000, 1}, {"\xc2\xb5s", 1000, 1}, {"ms", 1000000, 1}, {"s", 1000000000, 1}, {NULL, 0, 0},
};
static const struct unit pow_units[] = {
	{"uW", 1, 1}, {"\xc2\xb5W", 1, 1}, {"mW", 1000, 1}, {"W", 1000000, 1}, {NULL, 0, 0},
};
static const struct unit freq_units[] = {
	{"Hz", 1, 1000}, {"kHz", 1, 1}, {"MHz", 1000, 1}, {"GHz", 1000000, 1}, {NULL, 0, 0},
};

/* Parses "[+]digits[.digits]unit" in checked 64-bit integers (no 128-bit type: this code also runs
 * on 32-bit boards). Fraction digits are cancelled against the unit's power of ten before multiplying,
 * so every value that fits int64 base units is parsed, and nothing that does not. */
static int parse_units(const char *s, const struct unit *units, int64_t *out, const char **why)
{
	const char *p = s;
	uint64_t mant = 0;
	int frac = 0, digits = 0, zeros = 0; /* zeros: fraction zeros not yet folded into mant */
	bool dot = false;

	if (!s || !*s) {
		*why = "empty value";
		return -1;
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '-') {
		*why = "negative value";
		return -1;
	}
	if (*p == '+')
		p++;
	for (; *p; p++) {
		if (*p == '.' && !dot) {
			dot = true;
			continue;
		}
		if (!isdigit((unsigned char)*p))
			break;
		digits++;
		if (dot && *p == '0') { /* trailing zeros of a fraction do not change the value */
			zeros++;
			continue;
		}
		for (; zeros >= 0; zeros--) {
			uint64_t d = zeros ? 0 : (uint64_t)(*p - '0');
			if (__builtin_mul_overflow(mant, 10, &mant) || __builtin_add_overflow(mant, d, &mant)) {
				*why = "value overflows 64-bit base units";
				return -1;
			}
			if (dot)
				frac++;
		}
		zeros = 0;
	}
	if (digits == 0) {
		*why = "not a number";
		return -1;
	}
	while (*p == ' ')
		p++;
	if (!*p) {
		*why = "missing unit";
		return -1;
	}
	const struct unit *u = NULL;
	for (const struct unit *c = units; c->sfx; c++)
		if (strcmp(p, c->sfx) == 0)
			u = c;
	if (!u) {
		*why = "unknown unit";
		return -1;
	}
	uint64_t mult = (uint64_t)u->mult, den = (uint64_t)u->div;
	for (; frac > 0 && mult % 10 == 0; frac--)
		mult /= 10;
	for (; frac > 0; frac--) {
		if (__builtin_mul_overflow(den, 10, &den)) {
			*why = "not a whole number of the base unit (ns, uW or kHz)";
			return -1;
		}
	}
	uint64_t num;
	if (__builtin_mul_overflow(mant, mult, &num)) {
		*why = "value overflows 64-bit base units";
		return -1;
	}
	if (num % den != 0) {
		*why = "not a whole number of the base unit (ns, uW or kHz)";
		return -1;
	}
	num /= den;
	if (num > (uint64_t)INT64_MAX) {
		*why = "value overflows 64-bit base units";
		return -1;
	}
	*out = (int64_t)num;
	return 0;
}

int pd_parse_duration_ns(const char *s, int64_t *out, const char **why)
{
	return parse_units(s, dur_units, out, why);
}

int pd_parse_power_uw(const char *s, int64_t *out, const char **why)
{
	if (parse_units(s, pow_units, out, why))
		return -1;
	if (*out > PD_MAX_POWER_UW) {
		*why = "more than 1000000W, the limit of every power value";
		return -1;
	}
	return 0;
}

int pd_parse_run_ns(const char *s, bool bare_seconds, int64_t *out, const char **why)
{
	char buf[64];
	size_t n = s ? strlen(s) : 0;
	/* a bare number of seconds is read as that many "s": the same exact, overflow-checked parser */
	if (bare_seconds && n > 0 && n + 2 <= sizeof(buf) && isdigit((unsigned char)s[n - 1])) {
		memcpy(buf, s, n);
		memcpy(buf + n, "s", 2);
		s = buf;
	}
	if (parse_units(s, dur_units, out, why))
		return -1;
	if (*out == 0) {
		*why = "must be greater than zero";
		return -1;
	}
	if (*out > PD_MAX_RUN_NS) {
		*why = "longer than 2592000s (30 days), the longest run";
		return -1;
	}
	return 0;
}

int pd_parse_freq_khz(const char *s, int64_t *out, const char **why)
{
	return parse_units(s, freq_units, out, why);
}

/* units ordered from small to large; writes with the largest fitting one (see top comment). */
static const char *fmt_units(int64_t v, const char *const *sfx, const int64_t *mult, int n, char *buf, size_t len)
{
	if (v < 0) {
		snprintf(buf, len, "%lld%s", (long long)v, sfx[0]);
		return buf;
	}
	int pick = 0;
	for (int i = n - 1; i > 0; i--) {
		if (v >= mult[i] && (mult[i] < 1000 || v % (mult[i] / 1000) == 0)) {
			pick = i;
			break;
		}
	}
	int64_t m = mult[pick];
	int64_t ip = v / m, fp = v % m;
	if (fp == 0) {
		snprintf(buf, len, "%lld%s", (long long)ip, sfx[pick]);
		return buf;
	}
	/* at most 3 decimals by construction: fp is a multiple of m/1000 */
	int64_t f3 = fp / (m / 1000);
	char d[24];
	snprintf(d, sizeof(d), "%03lld", (long long)f3);
	for (int k = 2; k > 0 && d[k] == '0'; k--)
		d[k] = '\0';
	snprintf(buf, len, "%lld.%s%s", (long long)ip, d, sfx[pick]);
	return buf;
}

const char *pd_fmt_duration(int64_t ns, char *buf, size_t n)
{
	static const char *const s[] = {"ns", "us", "ms", "s"};
	static const int64_t m[] = {1, 1000, 1000000, 1000000000};
	return fmt_units(ns, s, m, 4, buf, n);
}

const char *pd_fmt_power(int64_t uw, char *buf, size_t n)
{
	static const char *const s[] = {"uW", "mW", "W"};
	static const int64_t m[] = {1, 1000, 1000000};
	if (uw == 0) {
		snprintf(buf, n, "0W");
		return buf;
	}
	return fmt_units(uw, s, m, 3, buf, n);
}

const char *pd_fmt_freq(int64_t khz, char *buf, size_t n)
{
	/* Frequencies read best in MHz (cpufreq tables, datasheets); GHz is never chosen. */
	static const char *const s[] = {"kHz", "MHz"};
	static const int64_t m[] = {1, 1000};
	return fmt_units(khz, s, m, 2, buf, n);
}

const char *pd_fmt_double(double v, char *buf, size_t n)
{
	if (!isfinite(v)) {
		snprintf(buf, n, "%s", isnan(v) ? ".nan" : (v > 0 ? ".inf" : "-.inf"));
		return buf;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* keep a number looking like a number in YAML: "1" stays "1", "1e-05" stays valid */
	return buf;
}

int pd_parse_cpulist(const char *s, unsigned char *set, size_t n)
{
	memset(set, 0, n);
	while (s && *s && *s != '\n' && *s != ' ' && *s != '\t') {
		char *end;
		errno = 0;
		long a = strtol(s, &end, 10), z = a;
		if (end == s || *s == '-' || *s == '+' || errno)
			return -1;
		if (*end == '-') {
			s = end + 1;
			if (*s < '0' || *s > '9')
				return -1;
			z = strtol(s, &end, 10);
			if (errno)
				return -1;
		}
		if (z < a || (unsigned long)z >= n)
			return -1;
		for (long c = a; c <= z; c++)
			set[c] = 1;
		if (*end == ',') {
			s = end + 1;
			if (*s < '0' || *s > '9') /* "1," or "1,,2" */
				return -1;
		} else if (*end && *end != '\n' && *end != ' ' && *end != '\t') {
			return -1;
		} else {
			s = end;
		}
	}
	return 0;
}

/* One id of a CPU sequence at *s: digits only, < 4096; advances *s. */
static int cpuseq_id(const char **s, long *v)
{
	if (**s < '0' || **s > '9')
		return -1;
	char *end;
	errno = 0;
	*v = strtol(*s, &end, 10);
	if (errno || *v > 4095)
		return -1;
	*s = end;
	return 0;
}

int pd_parse_cpuseq(const char *s, int *out, size_t max, size_t *n, const char **why)
{
	unsigned char seen[4096] = {0};
	*n = 0;
	*why = "expected CPU ids and ranges, comma-separated (e.g. 1 or 4-7,0-3), each 0-4095";
	if (!s || !*s)
		return -1;
	for (;;) {
		long a, z;
		if (cpuseq_id(&s, &a))
			return -1;
		z = a;
		if (*s == '-') {
			s++;
			if (cpuseq_id(&s, &z))
				return -1;
		}
		if (z < a)
			return (*why = "a range runs backwards"), -1;
		for (long c = a; c <= z; c++) {
			if (seen[c])
				return (*why = "a CPU is named twice"), -1;
			if (*n == max)
				return (*why = "too many CPUs"), -1;
			seen[c] = 1;
			out[(*n)++] = (int)c;
		}
		if (!*s)
			return 0;
		if (*s++ != ',')
			return -1;
	}
}

bool pd_name_chars_ok(const char *s, bool slash)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '_' || *s == '.' || (slash && *s == '/')))
			return false;
	return true;
}
