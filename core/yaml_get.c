/* SPDX-License-Identifier: MIT */
/*
 * Typed getters over the YAML tree. Each records its own diagnostic at the value's position and
 * names the key, so parsers read as a list of fields and report every problem in one pass.
 */
#include "core/pd_core.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(enum pd_yaml_kind k)
{
	return k == PD_Y_MAP ? "a mapping" : k == PD_Y_SEQ ? "a sequence" : "a scalar";
}

const pd_ynode *pd_ymap_get(const pd_ynode *map, const char *key)
{
	if (!map || map->kind != PD_Y_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->items[2 * i]->str, key) == 0)
			return map->items[2 * i + 1];
	return NULL;
}

int pd_ymap_check_keys(const pd_ynode *map, const char *const *allowed, const char *what, pd_diags *d)
{
	int bad = 0;
	if (!map || map->kind != PD_Y_MAP)
		return 0;
	for (size_t i = 0; i < map->n; i++) {
		const pd_ynode *k = map->items[2 * i];
		bool ok = false;
		for (const char *const *a = allowed; *a; a++)
			if (strcmp(*a, k->str) == 0)
				ok = true;
		if (!ok) {
			pd_diags_add(d, k->loc, "unknown key '%s' in %s", k->str, what);
			bad++;
		}
	}
	return bad;
}

bool pd_ynode_expect(const pd_ynode *node, enum pd_yaml_kind k, const char *what, pd_diags *d)
{
	if (node && node->kind == k)
		return true;
	if (node)
		pd_diags_add(d, node->loc, "'%s' must be %s, not %s", what, kind_name(k), kind_name(node->kind));
	return false;
}

/* Common prologue: locate key, check presence and scalar kind. */
static int get_scalar(const pd_ynode *map, const char *key, bool required, const pd_ynode **out, pd_diags *d)
{
	const pd_ynode *v = pd_ymap_get(map, key);
	if (!v) {
		if (required)
			pd_diags_add(d, map ? map->loc : (struct pd_loc){0}, "missing required key '%s'", key);
		return 0;
	}
	if (!pd_ynode_expect(v, PD_Y_SCALAR, key, d))
		return -1;
	*out = v;
	return 1;
}

int pd_yget_str(const pd_ynode *map, const char *key, bool required, const char **out, pd_diags *d)
{
	const pd_ynode *v;
	int r = get_scalar(map, key, required, &v, d);
	if (r <= 0)
		return r;
	if (!v->str[0]) {
		pd_diags_add(d, v->loc, "'%s' must not be empty", key);
		return -1;
	}
	*out = v->str;
	return 1;
}

typedef int (*unit_parser)(const char *, int64_t *, const char **);

static int get_unit(const pd_ynode *map, const char *key, bool required, bool allow_zero, int64_t *out,
		    unit_parser parse, const char *example, pd_diags *d)
{
	const pd_ynode *v;
	const char *why = NULL;
	int64_t x;
	int r = get_scalar(map, key, required, &v, d);
	if (r <= 0)
		return r;
	if (parse(v->str, &x, &why) < 0) {
		pd_diags_add(d, v->loc, "'%s': invalid value '%.40s': %s (e.g. %s)", key, v->str, why, example);
		return -1;
	}
	if (x == 0 && !allow_zero) {
		pd_diags_add(d, v->loc, "'%s' must be greater than zero", key);
		return -1;
	}
	*out = x;
	return 1;
}

int pd_yget_duration(const pd_ynode *map, const char *key, bool required, bool allow_zero, int64_t *out_ns,
		     pd_diags *d)
{
	return get_unit(map, key, required, allow_zero, out_ns, pd_parse_duration_ns, "2.5ms, 250us, 1s", d);
}

int pd_yget_power(const pd_ynode *map, const char *key, bool required, int64_t *out_uw, pd_diags *d)
{
	return get_unit(map, key, required, true, out_uw, pd_parse_power_uw, "350mW, 1.2W", d);
}

int pd_yget_freq(const pd_ynode *map, const char *key, bool required, int64_t *out_khz, pd_diags *d)
{
	return get_unit(map, key, required, false, out_khz, pd_parse_freq_khz, "1400MHz, 1.4GHz", d);
}

int pd_ynode_double(const pd_ynode *n, const char *what, double lo, double hi, double *out, pd_diags *d)
{
	char *end = NULL;
	if (!pd_ynode_expect(n, PD_Y_SCALAR, what, d))
		return -1;
	errno = 0;
	double x = strtod(n->str, &end);
	if (n->quoted || end == n->str || *end || errno == ERANGE || !isfinite(x)) {
		pd_diags_add(d, n->loc, "'%s': '%.40s' is not a number", what, n->str);
		return -1;
	}
	if (x < lo || x > hi) { /* the value as written: %g would print 1.0000001 as "1" */
		char a[32], b[32];
		pd_diags_add(d, n->loc, "'%s': %.40s is out of range [%s, %s]", what, n->str, pd_fmt_double(lo, a, sizeof(a)),
			     pd_fmt_double(hi, b, sizeof(b)));
		return -1;
	}
	*out = x;
	return 1;
}

int pd_ynode_int(const pd_ynode *n, const char *what, int64_t lo, int64_t hi, int64_t *out, pd_diags *d)
{
	char *end = NULL;
	if (!pd_ynode_expect(n, PD_Y_SCALAR, what, d))
		return -1;
	errno = 0;
	long long x = strtoll(n->str, &end, 10);
	if (n->quoted || end == n->str || *end || errno == ERANGE) {
		pd_diags_add(d, n->loc, "'%s': '%.40s' is not an integer", what, n->str);
		return -1;
	}
	if (x < lo || x > hi) {
		pd_diags_add(d, n->loc, "'%s': %.40s is out of range [%lld, %lld]", what, n->str, (long long)lo,
			     (long long)hi);
		return -1;
	}
	*out = x;
	return 1;
}

int pd_yget_double(const pd_ynode *map, const char *key, bool required, double lo, double hi, double *out,
		   pd_diags *d)
{
	const pd_ynode *v;
	int r = get_scalar(map, key, required, &v, d);
	return r <= 0 ? r : pd_ynode_double(v, key, lo, hi, out, d);
}

int pd_yget_int(const pd_ynode *map, const char *key, bool required, int64_t lo, int64_t hi, int64_t *out,
		pd_diags *d)
{
	const pd_ynode *v;
	int r = get_scalar(map, key, required, &v, d);
	return r <= 0 ? r : pd_ynode_int(v, key, lo, hi, out, d);
}

int pd_yget_bool(const pd_ynode *map, const char *key, bool required, bool *out, pd_diags *d)
{
	const pd_ynode *v;
	int r = get_scalar(map, key, required, &v, d);
	if (r <= 0)
		return r;
	if (!v->quoted && strcmp(v->str, "true") == 0)
		*out = true;
	else if (!v->quoted && strcmp(v->str, "false") == 0)
		*out = false;
	else {
		pd_diags_add(d, v->loc, "'%s' must be true or false, not '%.40s'", key, v->str);
		return -1;
	}
	return 1;
}
