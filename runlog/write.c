/* SPDX-License-Identifier: MIT */
/*
 * Run-log writer: rings filled by the RT threads, one writer thread framing and appending records
 * (docs/RUNLOG.md for the bytes).
 */
#include "runlog/pd_runlog.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RLW_MAX_RINGS 256
#define SLOT_HDR 8

/* Invariant of a ring: only its producer thread moves head (pd_runlog_put), only the writer thread
 * moves tail (pd_runlog_writer_drain); head - tail <= n_slots. */
struct pd_runlog_ring {
	uint32_t id;
	uint32_t slot_size; /* bytes per slot, including the 8-byte slot header */
	uint64_t mask;      /* n_slots - 1 (n_slots a power of two) */
	_Atomic uint64_t head, tail;
	_Atomic uint64_t dropped;
	unsigned char *buf;
};

struct pd_runlog_writer {
	int fd;
	char *path;
	struct pd_runlog_ring *rings[RLW_MAX_RINGS];
	size_t n_rings;
	pthread_t thread;
	bool running;
	_Atomic int stop;
	int flush_ms;
	int io_err; /* first write errno; later records are dropped, the run goes on */
	unsigned char *frame; /* scratch: one framed record */
	pd_buf out;           /* batch of framed records for one write() */
	int64_t writer_cpu_ns;
};

bool pd_runlog_put(struct pd_runlog_ring *r, uint16_t type, const void *payload, uint32_t len)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (len + SLOT_HDR > r->slot_size || head - tail > r->mask) {
		atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
		return false;
	}
	unsigned char *s = r->buf + (head & r->mask) * r->slot_size;
	uint32_t hdr[2] = {len, type};
	memcpy(s, hdr, SLOT_HDR);
	memcpy(s + SLOT_HDR, payload, len);
	atomic_store_explicit(&r->head, head + 1, memory_order_release);
	return true;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static void frame_append(pd_runlog_writer *w, uint16_t type, const void *payload, uint32_t len)
{
	unsigned char hdr[8];
	uint32_t l = len;
	uint16_t t = type, z = 0;
	memcpy(hdr, &l, 4);
	memcpy(hdr + 4, &t, 2);
	memcpy(hdr + 6, &z, 2);
	uint32_t crc = pd_runlog_crc32(0, hdr, 8);
	crc = pd_runlog_crc32(crc, payload, len);
	pd_buf_append(&w->out, hdr, 8);
	pd_buf_append(&w->out, payload, len);
	pd_buf_append(&w->out, &crc, 4);
}

static void flush_out(pd_runlog_writer *w)
{
	if (w->fd < 0)
		w->io_err = EBADF;
	else if (w->out.len && !w->io_err) {
		int rc = write_all(w->fd, w->out.data, w->out.len);
		if (rc)
			w->io_err = -rc;
	}
	w->out.len = 0;
}

int pd_runlog_writer_drain(pd_runlog_writer *w)
{
	for (size_t i = 0; i < w->n_rings; i++) {
		struct pd_runlog_ring *r = w->rings[i];
		uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
		uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
		for (; tail != head; tail++) {
			const unsigned char *s = r->buf + (tail & r->mask) * r->slot_size;
			uint32_t hdr[2];
			memcpy(hdr, s, SLOT_HDR);
			frame_append(w, (uint16_t)hdr[1], s + SLOT_HDR, hdr[0]);
		}
		atomic_store_explicit(&r->tail, tail, memory_order_release);
		if (w->out.len > (1u << 20))
			flush_out(w);
	}
	flush_out(w);
	return w->io_err ? -w->io_err : 0;
}

pd_runlog_writer *pd_runlog_writer_new(void)
{
	pd_runlog_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = -1;
	pd_buf_init(&w->out);
	return w;
}

int pd_runlog_writer_open(pd_runlog_writer *w, const char *path, const char *header_json, pd_err *e)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return pd_err_set(e, errno == EEXIST ? PD_EXIT_USAGE : PD_EXIT_ENV, "cannot create run log %s: %s", path,
				  strerror(errno));
	if (write_all(fd, header_json, strlen(header_json)) || write_all(fd, "\n", 1)) {
		int rc = pd_err_set(e, PD_EXIT_ENV, "cannot write run log %s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return rc;
	}
	w->fd = fd;
	w->path = strdup(path);
	return 0;
}

struct pd_runlog_ring *pd_runlog_add_ring(pd_runlog_writer *w, uint32_t slot_size, uint32_t n_slots)
{
	if (w->n_rings == RLW_MAX_RINGS || w->running)
		return NULL;
	uint64_t n = 1;
	while (n < n_slots)
		n <<= 1;
	struct pd_runlog_ring *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->buf = calloc(n, slot_size);
	if (!r->buf) {
		free(r);
		return NULL;
	}
	r->id = (uint32_t)w->n_rings;
	r->slot_size = slot_size;
	r->mask = n - 1;
	w->rings[w->n_rings++] = r;
	return r;
}

/* write() alone survives kill -9 (the page cache belongs to the kernel); the data reaches the disk
 * at the kernel's writeback pace (<= 30 s by default) and is fsync()ed at the end. A per-second
 * fdatasync() was measured at ~0.05 % of a CPU (journal commits) for no gain against kill -9. */
static void *writer_main(void *arg)
{
	pd_runlog_writer *w = arg;
	struct timespec period = {w->flush_ms / 1000, (long)(w->flush_ms % 1000) * PD_NS_PER_MS};
	while (!atomic_load(&w->stop)) {
		nanosleep(&period, NULL);
		pd_runlog_writer_drain(w);
	}
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	w->writer_cpu_ns = (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
	return NULL;
}

int pd_runlog_writer_start(pd_runlog_writer *w, int flush_ms, pd_err *e)
{
	/* the bound readers rely on (pd_runlog.h) is kept here */
	w->flush_ms = flush_ms <= 0 ? 50 : flush_ms > PD_RUNLOG_MAX_FLUSH_MS ? PD_RUNLOG_MAX_FLUSH_MS : flush_ms;
	int rc = pthread_create(&w->thread, NULL, writer_main, w);
	if (rc)
		return pd_err_set(e, PD_EXIT_ENV, "cannot start the run-log writer: %s", strerror(rc));
	w->running = true;
	return 0;
}

int pd_runlog_writer_close(pd_runlog_writer *w, struct pd_runlog_end_rec *end, pd_err *e)
{
	if (w->running) {
		atomic_store(&w->stop, 1);
		pthread_join(w->thread, NULL);
	}
	if (w->fd < 0) { /* no file: discard */
		for (size_t i = 0; i < w->n_rings; i++) {
			free(w->rings[i]->buf);
			free(w->rings[i]);
		}
		pd_buf_free(&w->out);
		free(w);
		return 0;
	}
	pd_runlog_writer_drain(w);
	uint64_t dropped = 0;
	for (size_t i = 0; i < w->n_rings; i++) {
		uint64_t d = atomic_load(&w->rings[i]->dropped);
		if (d) {
			struct pd_runlog_drop_rec dr = {.ring = (uint32_t)i, .count = d};
			frame_append(w, PD_RUNLOG_DROP, &dr, sizeof(dr));
			dropped += d;
		}
	}
	if (end) {
		end->dropped_records = dropped;
		end->writer_cpu_ns = w->writer_cpu_ns;
		frame_append(w, PD_RUNLOG_END, end, sizeof(*end));
	}
	flush_out(w);
	int rc = 0;
	if (w->fd < 0)
		rc = 0; /* never opened: nothing was written */
	else if (w->io_err)
		rc = pd_err_set(e, PD_EXIT_ENV, "writing run log %s: %s", w->path, strerror(w->io_err));
	else if (fsync(w->fd) < 0)
		rc = pd_err_set(e, PD_EXIT_ENV, "fsync %s: %s", w->path, strerror(errno));
	if (w->fd >= 0)
		close(w->fd);
	for (size_t i = 0; i < w->n_rings; i++) {
		free(w->rings[i]->buf);
		free(w->rings[i]);
	}
	pd_buf_free(&w->out);
	free(w->frame);
	free(w->path);
	free(w);
	return rc;
}
