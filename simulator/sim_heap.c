/* SPDX-License-Identifier: MIT */
/* sim_heap.c - indexed 4-ary min-heap (see sim_heap_impl.h for the ordering invariant). */
#include "simulator/sim_heap_impl.h"

#include <stdlib.h>

static inline bool before(const struct sim_heap *h, uint32_t a, uint32_t b)
{
	return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && a < b);
}

static inline void place(struct sim_heap *h, uint32_t i, uint32_t id)
{
	h->heap[i] = id;
	h->pos[id] = (int32_t)i;
}

static void sift_up(struct sim_heap *h, uint32_t i)
{
	uint32_t id = h->heap[i];
	while (i > 0) {
		uint32_t p = (i - 1) / 4;
		if (!before(h, id, h->heap[p]))
			break;
		place(h, i, h->heap[p]);
		i = p;
	}
	place(h, i, id);
}

static void sift_down(struct sim_heap *h, uint32_t i)
{
	uint32_t id = h->heap[i];
	for (;;) {
		uint32_t l = 4 * i + 1;
		if (l >= h->n)
			break;
		uint32_t c = l, end = l + 4 < h->n ? l + 4 : h->n;
		for (uint32_t k = l + 1; k < end; k++)
			if (before(h, h->heap[k], h->heap[c]))
				c = k;
		if (!before(h, h->heap[c], id))
			break;
		place(h, i, h->heap[c]);
		i = c;
	}
	place(h, i, id);
}

int sim_heap_init(struct sim_heap *h, uint32_t n_ids)
{
	h->n = 0;
	h->cap = n_ids;
	h->key = calloc(n_ids ? n_ids : 1, sizeof(*h->key));
	h->pos = malloc((n_ids ? n_ids : 1) * sizeof(*h->pos));
	h->heap = calloc(n_ids ? n_ids : 1, sizeof(*h->heap));
	h->touched = calloc(n_ids ? n_ids : 1, 1);
	if (!h->key || !h->pos || !h->heap || !h->touched) {
		sim_heap_free(h);
		return -1;
	}
	for (uint32_t i = 0; i < n_ids; i++)
		h->pos[i] = -1;
	return 0;
}

void sim_heap_free(struct sim_heap *h)
{
	free(h->key);
	free(h->pos);
	free(h->heap);
	free(h->touched);
	h->touched = NULL;
	h->key = NULL;
	h->pos = NULL;
	h->heap = NULL;
}

void sim_heap_set(struct sim_heap *h, uint32_t id, int64_t t)
{
	int32_t p = h->pos[id];
	h->touched[id] = 1;
	if (p < 0) {
		h->key[id] = t;
		place(h, h->n++, id);
		sift_up(h, h->n - 1);
		return;
	}
	int64_t old = h->key[id];
	h->key[id] = t;
	if (t < old)
		sift_up(h, (uint32_t)p);
	else if (t > old)
		sift_down(h, (uint32_t)p);
}

void sim_heap_cancel(struct sim_heap *h, uint32_t id)
{
	int32_t p = h->pos[id];
	if (p < 0)
		return;
	h->pos[id] = -1;
	uint32_t last = h->heap[--h->n];
	if ((uint32_t)p == h->n)
		return;
	place(h, (uint32_t)p, last);
	sift_up(h, (uint32_t)p);
	sift_down(h, (uint32_t)h->pos[last]);
}

uint32_t sim_heap_pop(struct sim_heap *h)
{
	uint32_t id = h->heap[0];
	sim_heap_cancel(h, id);
	return id;
}
