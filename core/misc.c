/* SPDX-License-Identifier: MIT */
/* Hashing and the deterministic PRNG (xoshiro256** seeded with splitmix64). */
#include "core/pd_core.h"

uint64_t pd_hash64(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void pd_rng_seed(pd_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t pd_rng_next(pd_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return res;
}

double pd_rng_uniform(pd_rng *r)
{
	return (double)(pd_rng_next(r) >> 11) * 0x1.0p-53;
}

int64_t pd_rng_range(pd_rng *r, int64_t lo, int64_t hi)
{
	if (hi <= lo)
		return lo;
	uint64_t span = (uint64_t)(hi - lo) + 1;
	if (span == 0)
		return (int64_t)pd_rng_next(r);
	return lo + (int64_t)(pd_rng_next(r) % span);
}
