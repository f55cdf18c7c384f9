/* SPDX-License-Identifier: MIT */
/*
 * The screening board: the vector bounds the two GLPK workers of the small sets' portfolio
 * (optimize.c, small_portfolio) share, so that they screen each vector once between them.
 *
 * Why: both workers screened the same vectors in the same order (master.c, screen_vectors), and on
 * Xavier's 30-task sets that took the whole screening share, 5.7 of 9.75 s, in both (270-560 vectors
 * below the cut-off at ~20-25 ms each), leaving the branch and bound about 3 s. Each screening bound
 * is valid whichever worker computed it (the screening LP carries no cut-off row: its infeasibility is
 * the vector's own, and a bound cut short at the target is still a bound), so either worker can use
 * the other's. The LP roundings that follow (master.c, round_vectors) are split the same way, by
 * claims alone: a rounding's plan reaches the other worker as its power (opt_peer_w, the cut-off),
 * and the parent keeps the cheaper plan of both.
 *
 * Layout: one mapping (MAP_SHARED | MAP_ANONYMOUS) made before the fork, for up to cap positions
 * (indices in the worker's vector list): a screening state byte, a rounding claim byte, a bound
 * and a branch and bound's proven bound per position; for the split of a position's tree between
 * the two workers (master_bb.c), the split (task and group), and per part a claim byte and a proven
 * bound. Untouched pages cost nothing, so cap may be the canonical list's limit while a set uses a
 * few hundred positions.
 *
 * Invariants:
 * - A position's state only moves FREE -> TAKEN (compare and swap: one worker wins) -> DONE, or
 *   TAKEN -> FREE when the claimer got no bound in time. Only the claimer writes its bound, before
 *   it stores DONE with release order; a reader that loads DONE with acquire order reads that bound.
 * - Both workers index the same list: the first to join records the list's key (size and kind), and
 *   a worker whose list differs (a failed allocation made it fall back to another) does not use the
 *   board at all.
 * - A worker that dies holding a claim leaves that position TAKEN for good: the other one then keeps
 *   that vector's weaker bound, which is still valid. Nobody ever waits on a claim.
 * - A proven bound (opt_board_raise) only rises: it is a valid lower bound on every plan at its
 *   vector whichever worker proved it (a branch and bound's closure at its cut-off, or the floor of
 *   its open nodes), so the larger of two is too. Stored as the bits of a non-negative double,
 *   whose order as unsigned integers is the order of the values; raised by compare and swap.
 *   0 (the mapping's zero fill) means none: every plan's power is above it anyway. A part's proven
 *   bound is the same, for the plans of that part only.
 * - A split is set once (compare and swap from 0): both workers split a position's tree the same
 *   way, whoever recorded it. A part's claim byte goes 0 -> 1 once (exchange: one worker wins).
 *
 * Why the proven bounds: both workers run the branch and bound at the same vectors in the same
 * order, and one often closed a vector while the other went on searching it (Xavier 30 tasks, seed
 * 1888424: the precise worker closed the second vector in 1.1 s, the other spent 3.1 s there and
 * stopped with 9 nodes open 0.002 % under its cut-off).
 */
#include "optimizer/opt_impl.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

enum { FREE = 0, TAKEN = 1, DONE = 2 };

struct opt_board {
	size_t bytes, cap;
	uint64_t key; /* the list both workers index: 0 until the first joins */
	double *lb;   /* [cap], meaningful where state is DONE */
	uint64_t *proven; /* [cap]: opt_board_raise's bounds, as bits */
	unsigned char *rounded; /* [cap]: 1 once a worker has claimed the position's rounding */
	uint64_t *split;        /* [cap]: the tree's split, (t + 1) << 32 | (g + 1); 0: none */
	uint64_t *part_proven;  /* [2 cap]: each part's proven bound, as bits (as proven) */
	unsigned char *part_claim; /* [2 cap]: 1 once a worker has claimed the part */
	unsigned char state[];
};

struct opt_board *opt_board_new(size_t cap)
{
	size_t head = sizeof(struct opt_board) + 4 * cap;
	head = (head + 7) & ~(size_t)7;
	size_t bytes = head + cap * sizeof(double) + 4 * cap * sizeof(uint64_t);
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct opt_board *B = m; /* zero filled: every position FREE */
	B->bytes = bytes, B->cap = cap;
	B->lb = (double *)((unsigned char *)m + head);
	B->proven = (uint64_t *)(B->lb + cap);
	B->split = B->proven + cap;
	B->part_proven = B->split + cap;
	B->rounded = B->state + cap;
	B->part_claim = B->rounded + cap;
	return B;
}

void opt_board_free(struct opt_board *B)
{
	if (B)
		munmap(B, B->bytes);
}

bool opt_board_join(struct opt_board *B, size_t n, bool canonical)
{
	if (!B || n > B->cap || n == 0)
		return false;
	uint64_t key = (uint64_t)n << 1 | (canonical ? 1u : 0u), none = 0;
	if (__atomic_compare_exchange_n(&B->key, &none, key, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return true;
	return none == key; /* none now holds the first worker's key */
}

double opt_board_get(const struct opt_board *B, size_t pos)
{
	if (__atomic_load_n(&B->state[pos], __ATOMIC_ACQUIRE) != DONE)
		return NAN;
	return B->lb[pos];
}

bool opt_board_claim(struct opt_board *B, size_t pos)
{
	unsigned char free_ = FREE;
	return __atomic_compare_exchange_n(&B->state[pos], &free_, TAKEN, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

void opt_board_put(struct opt_board *B, size_t pos, double lb)
{
	if (isnan(lb)) { /* no bound in time: the position is free again */
		__atomic_store_n(&B->state[pos], FREE, __ATOMIC_RELEASE);
		return;
	}
	B->lb[pos] = lb;
	__atomic_store_n(&B->state[pos], DONE, __ATOMIC_RELEASE);
}

bool opt_board_claim_rounding(struct opt_board *B, size_t pos)
{
	return __atomic_exchange_n(&B->rounded[pos], 1, __ATOMIC_RELAXED) == 0;
}


/* Raises the bound stored as bits at *slot to lb if larger (see the invariants above). */
static void raise_bits(uint64_t *slot, double lb)
{
	if (!(lb > 0)) /* NaN, or nothing a plan's power is not above */
		return;
	uint64_t want, now = __atomic_load_n(slot, __ATOMIC_RELAXED);
	memcpy(&want, &lb, sizeof(want));
	while (want > now && !__atomic_compare_exchange_n(slot, &now, want, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static double load_bits(const uint64_t *slot)
{
	uint64_t bits = __atomic_load_n(slot, __ATOMIC_RELAXED);
	double lb;
	memcpy(&lb, &bits, sizeof(lb));
	return lb;
}

void opt_board_raise(struct opt_board *B, size_t pos, double lb)
{
	if (B && pos < B->cap)
		raise_bits(&B->proven[pos], lb);
}

double opt_board_proven(const struct opt_board *B, size_t pos)
{
	return B && pos < B->cap ? load_bits(&B->proven[pos]) : 0;
}

bool opt_board_split(struct opt_board *B, size_t pos, size_t *t, size_t *g)
{
	if (!B || pos >= B->cap || *t >= UINT32_MAX || *g >= UINT32_MAX)
		return false;
	uint64_t want = ((uint64_t)*t + 1) << 32 | ((uint64_t)*g + 1), now = 0;
	if (!__atomic_compare_exchange_n(&B->split[pos], &now, want, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		want = now; /* the other worker's split */
	*t = (size_t)(want >> 32) - 1, *g = (size_t)(want & UINT32_MAX) - 1;
	return true;
}

bool opt_board_claim_part(struct opt_board *B, size_t pos, int p)
{
	if (!B || pos >= B->cap || (p != 0 && p != 1))
		return false;
	return __atomic_exchange_n(&B->part_claim[2 * pos + (size_t)p], 1, __ATOMIC_ACQ_REL) == 0;
}

void opt_board_raise_part(struct opt_board *B, size_t pos, int p, double lb)
{
	if (B && pos < B->cap && (p == 0 || p == 1))
		raise_bits(&B->part_proven[2 * pos + (size_t)p], lb);
}

double opt_board_part(const struct opt_board *B, size_t pos, int p)
{
	return B && pos < B->cap && (p == 0 || p == 1) ? load_bits(&B->part_proven[2 * pos + (size_t)p]) : 0;
}
