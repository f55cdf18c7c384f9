/* SPDX-License-Identifier: MIT */
/*
 * Arena allocator and byte buffers. An arena is a chain of blocks; allocations are bump-pointer and
 * zeroed; everything is released by pd_arena_free. Models (dag sets, platforms, plans) own one each.
 */
#include "core/pd_core.h"

#include <stdlib.h>
#include <string.h>

struct block {
	struct block *next;
	size_t used, cap;
	max_align_t data[];
};

struct pd_arena {
	struct block *head;
};

#define BLOCK_MIN (16 * 1024)

pd_arena *pd_arena_new(void)
{
	return calloc(1, sizeof(pd_arena));
}

void pd_arena_free(pd_arena *a)
{
	if (!a)
		return;
	for (struct block *b = a->head, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a);
}

void *pd_arena_alloc(pd_arena *a, size_t size)
{
	const size_t al = sizeof(max_align_t);
	if (size > SIZE_MAX / 2)
		return NULL;
	size = (size + al - 1) / al * al;
	if (size == 0)
		size = al;
	struct block *b = a->head;
	if (!b || b->cap - b->used < size) {
		size_t cap = size > BLOCK_MIN ? size : BLOCK_MIN;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		b->next = a->head;
		a->head = b;
	}
	void *p = (char *)b->data + b->used;
	b->used += size;
	memset(p, 0, size);
	return p;
}

void *pd_arena_calloc(pd_arena *a, size_t n, size_t sz)
{
	if (sz && n > SIZE_MAX / 4 / sz)
		return NULL;
	return pd_arena_alloc(a, n * sz);
}

char *pd_arena_strdup(pd_arena *a, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s);
	char *p = pd_arena_alloc(a, n + 1);
	if (p)
		memcpy(p, s, n + 1);
	return p;
}

char *pd_arena_printf(pd_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *tmp = NULL;
	int n = vasprintf(&tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *p = pd_arena_strdup(a, tmp);
	free(tmp);
	return p;
}

void pd_buf_init(pd_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void pd_buf_free(pd_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

int pd_buf_append(pd_buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *d = realloc(b->data, cap);
		if (!d)
			return -1;
		b->data = d;
		b->cap = cap;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int pd_buf_printf(pd_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *tmp = NULL;
	int n = vasprintf(&tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	int r = pd_buf_append(b, tmp, (size_t)n);
	free(tmp);
	return r;
}
