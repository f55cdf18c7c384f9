/* SPDX-License-Identifier: MIT */
/*
 * The platform's `provenance` block: where measured values came from (written by `powerdag
 * profile`, docs/PROFILE.md; keys in docs/FORMATS.md §3). The model never reads it: it is accepted,
 * kept and written back, so a fitted platform still says which board, kernel and date its figures
 * were measured on, with how many samples and what spread.
 *
 * Shape (checked): a mapping whose values are scalars, or sequences of scalars or of flat mappings
 * of scalars. Kept as a copy of the YAML nodes in the platform's arena; written back with numbers
 * plain (canonical form) and every other scalar as a string, so emit(parse(emit(x))) == emit(x).
 */
#include "platforms/platform_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static pd_ynode *copy(pd_arena *a, const pd_ynode *n)
{
	pd_ynode *c = pd_arena_calloc(a, 1, sizeof(*c));
	if (!c)
		return NULL;
	c->kind = n->kind;
	c->quoted = n->quoted;
	c->n = n->n;
	if (n->str && !(c->str = pd_arena_strdup(a, n->str)))
		return NULL;
	size_t items = n->kind == PD_Y_MAP ? 2 * n->n : n->kind == PD_Y_SEQ ? n->n : 0;
	if (items) {
		c->items = pd_arena_calloc(a, items, sizeof(*c->items));
		if (!c->items)
			return NULL;
		for (size_t i = 0; i < items; i++)
			if (!(c->items[i] = copy(a, n->items[i])))
				return NULL;
	}
	return c;
}

static bool flat_map(const pd_ynode *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->items[2 * i + 1]->kind != PD_Y_SCALAR)
			return false;
	return true;
}

int platform_parse_provenance(pd_platform *p, const pd_ynode *map, pd_diags *d)
{
	const pd_ynode *v = pd_ymap_get(map, "provenance");
	if (!v)
		return 0;
	if (!pd_ynode_expect(v, PD_Y_MAP, "provenance", d))
		return -1;
	int bad = 0;
	for (size_t i = 0; i < v->n; i++) {
		const pd_ynode *val = v->items[2 * i + 1];
		if (val->kind == PD_Y_MAP) {
			pd_diags_add(d, val->loc, "provenance.%s: expected a scalar or a sequence", v->items[2 * i]->str);
			bad = -1;
			continue;
		}
		for (size_t j = 0; val->kind == PD_Y_SEQ && j < val->n; j++) {
			const pd_ynode *it = val->items[j];
			if (it->kind == PD_Y_SEQ || (it->kind == PD_Y_MAP && !flat_map(it))) {
				pd_diags_add(d, it->loc, "provenance.%s: items are scalars or mappings of scalars",
					     v->items[2 * i]->str);
				bad = -1;
			}
		}
	}
	if (bad)
		return -1;
	p->provenance = copy(p->arena, v);
	if (!p->provenance) {
		pd_diags_add(d, v->loc, "out of memory");
		return -1;
	}
	return 0;
}

const pd_ynode *pd_platform_provenance(const pd_platform *p) { return p->provenance; }

int pd_platform_set_provenance(pd_platform *p, const pd_ynode *map)
{
	if (!map) {
		p->provenance = NULL;
		return 0;
	}
	if (map->kind != PD_Y_MAP)
		return -1;
	pd_ynode *c = copy(p->arena, map);
	if (!c)
		return -1;
	p->provenance = c;
	return 0;
}

/* A plain scalar that reads as a number is written as that number in canonical form. */
static void emit_scalar(pd_yemit *y, const pd_ynode *n)
{
	if (!n->quoted && n->str && *n->str) {
		char *end;
		errno = 0;
		long long i = strtoll(n->str, &end, 10);
		if (!*end && !errno) {
			pd_yemit_int(y, i);
			return;
		}
		double dv = strtod(n->str, &end);
		if (!*end && !errno && dv == dv && dv - dv == 0) {
			pd_yemit_double(y, dv);
			return;
		}
	}
	pd_yemit_str(y, n->str ? n->str : "");
}

static void emit_node(pd_yemit *y, const pd_ynode *n, bool flow)
{
	if (n->kind == PD_Y_SCALAR) {
		emit_scalar(y, n);
	} else if (n->kind == PD_Y_SEQ) {
		pd_yemit_seq_begin(y, flow);
		for (size_t i = 0; i < n->n; i++)
			emit_node(y, n->items[i], n->items[i]->kind == PD_Y_MAP);
		pd_yemit_seq_end(y);
	} else {
		pd_yemit_map_begin(y, flow);
		for (size_t i = 0; i < n->n; i++) {
			pd_yemit_key(y, n->items[2 * i]->str);
			emit_node(y, n->items[2 * i + 1], flow);
		}
		pd_yemit_map_end(y);
	}
}

void platform_emit_provenance(const pd_platform *p, pd_yemit *y)
{
	if (!p->provenance)
		return;
	pd_yemit_key(y, "provenance");
	emit_node(y, p->provenance, false);
}

int pd_platform_set_gpu_opp_power(pd_platform *p, size_t accel, size_t opp, int64_t busy_uw, int64_t idle_uw)
{
	/* the parser's invariant: busy >= idle >= 0 */
	if (accel >= p->n_accels || p->accels[accel].kind != PD_ACCEL_GPU || opp >= p->accels[accel].n_opps ||
	    idle_uw < 0 || busy_uw < idle_uw)
		return -1;
	p->accels[accel].opps[opp].busy_uw = busy_uw;
	p->accels[accel].opps[opp].idle_uw = idle_uw;
	return 0;
}
