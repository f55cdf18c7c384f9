/* SPDX-License-Identifier: MIT */
/*
 * sim_heap_impl.h - the event queue: an indexed binary min-heap over a fixed set of event sources.
 *
 * A 4-ary heap (shallower than binary: fewer cache lines per sift). Every source of events (a core's next completion/exhaustion, a task's replenishment timer, a DAG's
 * next release, ...) owns one id in [0, n) for the whole run and has at most one pending event, so
 * the heap never allocates after creation: setting an id's time inserts or moves it, cancelling
 * removes it. Order: earlier time first; at equal times the smaller id first (ids are laid out so
 * that completions are handled before releases at the same instant), which makes runs deterministic.
 */
#ifndef PD_SIM_HEAP_IMPL_H
#define PD_SIM_HEAP_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_heap {
	int64_t *key;   /* per id: its event time (valid while pos[id] >= 0) */
	int32_t *pos;   /* per id: index in heap[], -1 when not pending */
	uint32_t *heap; /* heap[0..n) of ids */
	uint8_t *touched; /* per id: set by sim_heap_set (the loop keeps a handled event that re-armed itself) */
	uint32_t n, cap;
};

int sim_heap_init(struct sim_heap *h, uint32_t n_ids);
void sim_heap_free(struct sim_heap *h);
void sim_heap_set(struct sim_heap *h, uint32_t id, int64_t t);
void sim_heap_cancel(struct sim_heap *h, uint32_t id);
static inline bool sim_heap_empty(const struct sim_heap *h) { return h->n == 0; }
static inline uint32_t sim_heap_top(const struct sim_heap *h) { return h->heap[0]; }
static inline int64_t sim_heap_top_time(const struct sim_heap *h) { return h->key[h->heap[0]]; }
static inline bool sim_heap_pending(const struct sim_heap *h, uint32_t id) { return h->pos[id] >= 0; }
/* Removes and returns the earliest id. */
uint32_t sim_heap_pop(struct sim_heap *h);

#endif
