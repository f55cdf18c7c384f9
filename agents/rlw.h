/* SPDX-License-Identifier: MIT */
/*
 * rlw.h - run-log writer (internal to agents/): per-producer lock-free single-producer /
 * single-consumer rings drained by one writer thread that frames records (pd_runlog.h) and
 * write()s them every flush period, so a kill -9 loses at most what the rings held (< 1 s).
 *
 * Invariant of a ring: only its producer thread moves head, only the writer thread moves tail;
 * head - tail <= n_slots. A full ring never blocks the producer: the record is counted in dropped
 * and a DROP record reports the count.
 */
#ifndef PD_RLW_H
#define PD_RLW_H

#include "agents/pd_runlog.h"

#include <stdatomic.h>

struct pd_rlw_ring {
	uint32_t id;
	uint32_t slot_size; /* bytes per slot, including the 8-byte slot header */
	uint64_t mask;      /* n_slots - 1 (n_slots a power of two) */
	_Atomic uint64_t head, tail;
	_Atomic uint64_t dropped;
	unsigned char *buf;
};

/* Producer side: copies one record into the ring; false (and counted) when full or too big. */
bool pd_rlw_put(struct pd_rlw_ring *r, uint16_t type, const void *payload, uint32_t len);

typedef struct pd_rlw pd_rlw;

/* A writer with no file yet: rings can be registered before the header (which needs t0) is known. */
pd_rlw *pd_rlw_new(void);
/* Creates path (O_EXCL: a run never overwrites a log) and writes the header line at once. */
int pd_rlw_open(pd_rlw *w, const char *path, const char *header_json, pd_err *e);
/* Adds a ring before pd_rlw_start (not thread-safe). n_slots rounded up to a power of two. */
struct pd_rlw_ring *pd_rlw_add_ring(pd_rlw *w, uint32_t slot_size, uint32_t n_slots);
/* Starts the writer thread, draining every flush_ms with one write(). */
int pd_rlw_start(pd_rlw *w, int flush_ms, pd_err *e);
/* Stops the writer, drains every ring, writes DROP records and end (when non-NULL; its
 * dropped_records and writer_cpu_ns are filled here), fsyncs and closes (when a file was opened). Frees w. */
int pd_rlw_close(pd_rlw *w, struct pd_rl_end *end, pd_err *e);
/* Without a writer thread (tests, tools): drain now. */
int pd_rlw_drain(pd_rlw *w);

#endif
