/* SPDX-License-Identifier: MIT */
/*
 * libyaml events -> a tree of pd_ynode that remember line and column, so that every later validator
 * can point at the offending key. Hostile input is bounded here once for all parsers: no anchors,
 * aliases or custom tags (alias expansion is the classic YAML bomb), nesting <= 64, one document,
 * keys are unique scalars, at most PD_YAML_MAX_KEYS keys per mapping (docs/FORMATS.md). Uniqueness is
 * checked with a hash set per mapping, so a mapping costs time linear in its size (a 64 MiB input
 * of distinct keys once took seconds per 50 000 keys with pairwise comparisons).
 */
#include "core/pd_core.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_DEPTH 64

struct loader {
	yaml_parser_t parser;
	pd_arena *arena;
	const char *file;
	pd_diags *d;
	int failed;
};

static struct pd_loc mark_loc(const struct loader *l, yaml_mark_t m)
{
	struct pd_loc loc = {l->file, (int)m.line + 1, (int)m.column + 1};
	return loc;
}

/* Growable pointer list on the heap while a collection is being built. */
struct plist {
	pd_ynode **v;
	size_t n, cap;
};

static int plist_push(struct plist *p, pd_ynode *x)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 8;
		pd_ynode **v = realloc(p->v, cap * sizeof(*v));
		if (!v)
			return -1;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = x;
	return 0;
}

/* The keys of one mapping under construction: open addressing over indices into the items list
 * (keys are items[2 k]), power-of-two size, at most half full. */
struct keyset {
	uint32_t *slot; /* key index + 1; 0 = empty */
	size_t size;
};

static uint64_t key_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int keyset_grow(struct keyset *ks, const struct plist *items)
{
	size_t size = ks->size ? 2 * ks->size : 16;
	uint32_t *slot = calloc(size, sizeof(*slot));
	if (!slot)
		return -1;
	for (size_t i = 0; i < ks->size; i++) {
		if (!ks->slot[i])
			continue;
		size_t j = key_hash(items->v[2 * (ks->slot[i] - 1)]->str) & (size - 1);
		while (slot[j])
			j = (j + 1) & (size - 1);
		slot[j] = ks->slot[i];
	}
	free(ks->slot);
	ks->slot = slot;
	ks->size = size;
	return 0;
}

/* Adds key number k (items->v[2 k]); returns the earlier equal key, NULL when new, or sets *oom. */
static const pd_ynode *keyset_add(struct keyset *ks, const struct plist *items, size_t k, bool *oom)
{
	if (2 * (k + 1) > ks->size && keyset_grow(ks, items) < 0) {
		*oom = true;
		return NULL;
	}
	const char *key = items->v[2 * k]->str;
	size_t j = key_hash(key) & (ks->size - 1);
	for (; ks->slot[j]; j = (j + 1) & (ks->size - 1)) {
		const pd_ynode *old = items->v[2 * (ks->slot[j] - 1)];
		if (strcmp(old->str, key) == 0)
			return old;
	}
	ks->slot[j] = (uint32_t)(k + 1);
	return NULL;
}

static bool next_event(struct loader *l, yaml_event_t *ev)
{
	if (yaml_parser_parse(&l->parser, ev))
		return true;
	struct pd_loc loc = mark_loc(l, l->parser.problem_mark);
	if (l->parser.context)
		pd_diags_add(l->d, loc, "YAML syntax error: %s %s", l->parser.problem ? l->parser.problem : "error",
			     l->parser.context);
	else
		pd_diags_add(l->d, loc, "YAML syntax error: %s", l->parser.problem ? l->parser.problem : "error");
	l->failed = 1;
	return false;
}

static pd_ynode *parse_node(struct loader *l, yaml_event_t *ev, int depth);

static bool refuse_extras(struct loader *l, const yaml_char_t *anchor, const yaml_char_t *tag, bool implicit,
			  struct pd_loc loc)
{
	if (anchor) {
		pd_diags_add(l->d, loc, "YAML anchors are not supported");
		return false;
	}
	if (tag && !implicit) {
		pd_diags_add(l->d, loc, "YAML tags are not supported ('%s')", (const char *)tag);
		return false;
	}
	return true;
}

static pd_ynode *new_node(struct loader *l, enum pd_yaml_kind k, struct pd_loc loc)
{
	pd_ynode *n = pd_arena_alloc(l->arena, sizeof(*n));
	if (n) {
		n->kind = k;
		n->loc = loc;
	}
	return n;
}

static pd_ynode *parse_collection(struct loader *l, yaml_event_t *ev, int depth, bool is_map)
{
	struct pd_loc loc = mark_loc(l, ev->start_mark);
	pd_ynode *n = new_node(l, is_map ? PD_Y_MAP : PD_Y_SEQ, loc);
	struct plist items = {0};
	struct keyset keys = {0};
	yaml_event_type_t end = is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
	if (!n)
		return NULL;
	if (depth > MAX_DEPTH) {
		pd_diags_add(l->d, loc, "nesting deeper than %d levels", MAX_DEPTH);
		return NULL;
	}
	for (;;) {
		yaml_event_t e;
		if (!next_event(l, &e))
			goto fail;
		if (e.type == end) {
			yaml_event_delete(&e);
			break;
		}
		pd_ynode *child = parse_node(l, &e, depth + 1);
		yaml_event_delete(&e);
		if (!child || plist_push(&items, child) < 0)
			goto fail;
		if (is_map && items.n % 2 == 1) {
			if (child->kind != PD_Y_SCALAR) {
				pd_diags_add(l->d, child->loc, "mapping keys must be plain scalars");
				goto fail;
			}
			size_t k = items.n / 2;
			if (k >= PD_YAML_MAX_KEYS) {
				pd_diags_add(l->d, child->loc, "more than %d keys in one mapping (the limit of every powerdag file)",
					     PD_YAML_MAX_KEYS);
				goto fail;
			}
			bool oom = false;
			const pd_ynode *first = keyset_add(&keys, &items, k, &oom);
			if (oom)
				goto fail;
			if (first) {
				pd_diags_add(l->d, child->loc, "duplicate key '%s' (first at line %d)", child->str,
					     first->loc.line);
				goto fail;
			}
		}
	}
	n->n = is_map ? items.n / 2 : items.n;
	n->items = pd_arena_calloc(l->arena, items.n ? items.n : 1, sizeof(pd_ynode *));
	if (!n->items)
		goto fail;
	if (items.n)
		memcpy(n->items, items.v, items.n * sizeof(pd_ynode *));
	free(items.v);
	free(keys.slot);
	return n;
fail:
	free(items.v);
	free(keys.slot);
	return NULL;
}

static pd_ynode *parse_node(struct loader *l, yaml_event_t *ev, int depth)
{
	struct pd_loc loc = mark_loc(l, ev->start_mark);
	switch (ev->type) {
	case YAML_SCALAR_EVENT: {
		if (!refuse_extras(l, ev->data.scalar.anchor, ev->data.scalar.tag,
				   ev->data.scalar.plain_implicit || ev->data.scalar.quoted_implicit, loc))
			return NULL;
		if (strlen((const char *)ev->data.scalar.value) != ev->data.scalar.length) {
			pd_diags_add(l->d, loc, "NUL byte inside a scalar");
			return NULL;
		}
		pd_ynode *n = new_node(l, PD_Y_SCALAR, loc);
		if (!n)
			return NULL;
		n->str = pd_arena_strdup(l->arena, (const char *)ev->data.scalar.value);
		n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
		return n->str ? n : NULL;
	}
	case YAML_SEQUENCE_START_EVENT:
		if (!refuse_extras(l, ev->data.sequence_start.anchor, ev->data.sequence_start.tag,
				   ev->data.sequence_start.implicit, loc))
			return NULL;
		return parse_collection(l, ev, depth, false);
	case YAML_MAPPING_START_EVENT:
		if (!refuse_extras(l, ev->data.mapping_start.anchor, ev->data.mapping_start.tag,
				   ev->data.mapping_start.implicit, loc))
			return NULL;
		return parse_collection(l, ev, depth, true);
	case YAML_ALIAS_EVENT:
		pd_diags_add(l->d, loc, "YAML aliases are not supported");
		return NULL;
	default:
		pd_diags_add(l->d, loc, "unexpected YAML event");
		return NULL;
	}
}

static int expect_event(struct loader *l, yaml_event_type_t t, yaml_event_t *ev)
{
	if (!next_event(l, ev))
		return -1;
	if (ev->type != t) {
		yaml_event_delete(ev);
		return -1;
	}
	return 0;
}

int pd_yaml_load(pd_ydoc *doc, const char *file, const char *text, size_t len, pd_diags *d)
{
	struct loader l = {0};
	yaml_event_t ev;
	size_t before = d->n + d->dropped;
	memset(doc, 0, sizeof(*doc));
	doc->arena = pd_arena_new();
	if (!doc->arena)
		return -1;
	doc->file = pd_arena_strdup(doc->arena, file ? file : "<input>");
	l.arena = doc->arena;
	l.file = doc->file;
	l.d = d;
	if (!yaml_parser_initialize(&l.parser))
		return -1;
	yaml_parser_set_input_string(&l.parser, (const unsigned char *)text, len);
	if (expect_event(&l, YAML_STREAM_START_EVENT, &ev) < 0)
		goto out;
	yaml_event_delete(&ev);
	if (!next_event(&l, &ev))
		goto out;
	if (ev.type == YAML_STREAM_END_EVENT) { /* empty file */
		yaml_event_delete(&ev);
		goto out;
	}
	yaml_event_delete(&ev); /* DOCUMENT_START */
	if (!next_event(&l, &ev))
		goto out;
	doc->root = parse_node(&l, &ev, 0);
	yaml_event_delete(&ev);
	if (!doc->root)
		goto out;
	if (expect_event(&l, YAML_DOCUMENT_END_EVENT, &ev) < 0)
		goto out;
	yaml_event_delete(&ev);
	if (!next_event(&l, &ev))
		goto out;
	if (ev.type != YAML_STREAM_END_EVENT)
		pd_diags_add(d, mark_loc(&l, ev.start_mark), "more than one YAML document in the file");
	yaml_event_delete(&ev);
out:
	yaml_parser_delete(&l.parser);
	if (d->n + d->dropped != before) {
		doc->root = NULL;
		return -1;
	}
	if (!doc->root && !l.failed) {
		struct pd_loc loc = {doc->file, 1, 1};
		pd_diags_add(d, loc, "empty document");
		return -1;
	}
	return doc->root ? 0 : -1;
}

int pd_yaml_load_file(pd_ydoc *doc, const char *path, pd_diags *d)
{
	char *text = NULL;
	size_t len = 0;
	pd_err e = {0};
	memset(doc, 0, sizeof(*doc));
	if (pd_read_file(path, &text, &len, 0, &e)) {
		struct pd_loc loc = {NULL, 0, 0};
		pd_diags_add(d, loc, "%s", e.msg);
		return -1;
	}
	int r = pd_yaml_load(doc, path, text, len, d);
	free(text);
	return r;
}

void pd_yaml_free(pd_ydoc *doc)
{
	if (doc) {
		pd_arena_free(doc->arena);
		memset(doc, 0, sizeof(*doc));
	}
}
