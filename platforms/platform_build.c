/* SPDX-License-Identifier: MIT */
/*
 * Platforms built in code (pd_platform_draft_*, pd_platform.h): the board twin derives its platform
 * from a source platform for the CPUs of its host. A draft holds figures nobody has checked yet;
 * pd_platform_draft_finish makes a platform of it by the one road that checks every invariant of
 * pd_platform.h: the canonical writer (platform_emit.c), then the parser (platform_parse.c). So
 * there is one writer and one set of rules for every platform, read from a file or built.
 */
#include "platforms/platform_impl.h"

#include <stdlib.h>
#include <string.h>

struct pd_platform_draft {
	pd_platform p; /* the figures, in the arena of p; handed out only through finish */
	size_t cap_islands, cap_accels, cap_sensors;
	bool oom; /* an add failed: finish reports it */
};

pd_platform_draft *pd_platform_draft_new(const char *name, int64_t ref_khz, int64_t base_uw, const struct pd_dl *dl)
{
	pd_platform_draft *dr = calloc(1, sizeof(*dr));
	if (!dr || !(dr->p.arena = pd_arena_new())) {
		free(dr);
		return NULL;
	}
	dr->p.name = pd_arena_strdup(dr->p.arena, name);
	dr->p.ref_khz = ref_khz;
	dr->p.base_uw = base_uw;
	dr->p.dl = *dl;
	dr->oom = !dr->p.name;
	return dr;
}

void pd_platform_draft_free(pd_platform_draft *dr)
{
	if (!dr)
		return;
	pd_arena_free(dr->p.arena);
	free(dr);
}

/* Room for one more element of size sz in *v (n used, *cap allocated); arena memory, so the old
 * array is simply left behind. */
static void *grow(pd_platform_draft *dr, void *v, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return v;
	size_t c = *cap ? 2 * *cap : 4;
	void *w = pd_arena_calloc(dr->p.arena, c, sz);
	if (!w)
		return NULL;
	if (n)
		memcpy(w, v, n * sz);
	*cap = c;
	return w;
}

/* Arena copy of a string (NULL stays NULL); sets oom on failure. */
static const char *copy_str(pd_platform_draft *dr, const char *s)
{
	if (!s)
		return NULL;
	char *c = pd_arena_strdup(dr->p.arena, s);
	dr->oom |= !c;
	return c;
}

static struct pd_opp *copy_opps(pd_platform_draft *dr, const struct pd_opp *o, size_t n)
{
	if (!n)
		return NULL;
	struct pd_opp *c = pd_arena_calloc(dr->p.arena, n, sizeof(*c));
	if (!c) {
		dr->oom = true;
		return NULL;
	}
	for (size_t j = 0; j < n; j++)
		c[j] = (struct pd_opp){o[j].freq_khz, o[j].busy_uw, o[j].idle_uw, {0}};
	return c;
}

int pd_platform_draft_add_island(pd_platform_draft *dr, const struct pd_island *k)
{
	struct pd_island *v = grow(dr, dr->p.islands, dr->p.n_islands, &dr->cap_islands, sizeof(*v));
	int *cpus = k->n_cpus ? pd_arena_calloc(dr->p.arena, k->n_cpus, sizeof(int)) : NULL;
	if (!v || (k->n_cpus && !cpus)) {
		dr->oom = true;
		return -1;
	}
	dr->p.islands = v;
	if (k->n_cpus)
		memcpy(cpus, k->cpus, k->n_cpus * sizeof(int));
	v[dr->p.n_islands++] = (struct pd_island){
		.name = copy_str(dr, k->name),
		.cpus = cpus,
		.n_cpus = k->n_cpus,
		.capacity = k->capacity,
		.opps = copy_opps(dr, k->opps, k->n_opps),
		.n_opps = k->n_opps,
		.policy = copy_str(dr, k->policy),
		.has_job_overhead = k->has_job_overhead,
		.job_overhead_ns = k->job_overhead_ns,
		.background_util = k->background_util,
	};
	return dr->oom ? -1 : 0;
}

int pd_platform_draft_add_accel(pd_platform_draft *dr, const struct pd_accelerator *a)
{
	struct pd_accelerator *v = grow(dr, dr->p.accels, dr->p.n_accels, &dr->cap_accels, sizeof(*v));
	if (!v) {
		dr->oom = true;
		return -1;
	}
	dr->p.accels = v;
	v[dr->p.n_accels++] = (struct pd_accelerator){
		.name = copy_str(dr, a->name),
		.kind = a->kind,
		.devfreq = copy_str(dr, a->devfreq),
		.opps = copy_opps(dr, a->opps, a->n_opps),
		.n_opps = a->n_opps,
		.slots = a->slots,
		.reconfig_ns = a->reconfig_ns,
		.idle_uw = a->idle_uw,
		.manager = copy_str(dr, a->manager),
	};
	return dr->oom ? -1 : 0;
}

int pd_platform_draft_add_sensor(pd_platform_draft *dr, const struct pd_sensor *s)
{
	struct pd_sensor *v = grow(dr, dr->p.sensors, dr->p.n_sensors, &dr->cap_sensors, sizeof(*v));
	if (!v) {
		dr->oom = true;
		return -1;
	}
	dr->p.sensors = v;
	v[dr->p.n_sensors++] = (struct pd_sensor){
		.uri = copy_str(dr, s->uri),
		.device = copy_str(dr, s->device),
		.channel = copy_str(dr, s->channel),
		.rail = copy_str(dr, s->rail),
		.measures = copy_str(dr, s->measures),
		.scale = s->scale,
	};
	return dr->oom ? -1 : 0;
}

pd_platform *pd_platform_draft_finish(pd_platform_draft *dr, const char *file, pd_diags *d)
{
	pd_platform *p = NULL;
	pd_buf b;
	pd_buf_init(&b);
	pd_err e = {0};
	if (!dr || dr->oom)
		pd_diags_add(d, (struct pd_loc){0}, "%s: out of memory", file);
	else if (pd_platform_emit_doc(&dr->p, &b, &e))
		pd_diags_add(d, (struct pd_loc){0}, "%s: %s", file, e.msg);
	else {
		pd_ydoc doc = {0};
		size_t before = d->n;
		if (pd_yaml_load(&doc, file, b.data, b.len, d) == 0 && doc.root)
			p = pd_platform_from_node(pd_ymap_get(doc.root, "platform"), d);
		pd_diags_rebase(d, before, doc.file, file); /* they outlive doc */
		pd_yaml_free(&doc);
	}
	pd_buf_free(&b);
	pd_platform_draft_free(dr);
	return p;
}
