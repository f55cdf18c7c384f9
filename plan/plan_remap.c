/* SPDX-License-Identifier: MIT */
/*
 * A plan carried to a board that numbers the same cores otherwise (pd_plan_remap_cpus, pd_plan.h;
 * `deploy --cpu-map`, docs/DEPLOY.md "CPU map"; why in platforms/platform_remap.c).
 *
 * Invariant kept: the copy is the same plan on other CPU ids. Every figure (OPPs, triples, WCETs,
 * predictions, the DAG set) is the original's, read back from its canonical text, and every task
 * sits on the core at the same position of the same island, so `check` and `simulate` give the
 * copy the verdict and the figures of the original.
 */
#include "plan/plan_impl.h"

#include <string.h>

/* A deep copy through the canonical text: the one writer and the one reader, so nothing the
 * file holds can be left behind. */
static pd_plan *plan_copy(const pd_plan *p, const char *file, pd_diags *d)
{
	pd_buf b;
	pd_buf_init(&b);
	pd_err e = {0};
	pd_plan *q = NULL;
	if (pd_plan_format(p, &b, &e))
		pd_diags_add(d, (struct pd_loc){0}, "%s: %s", file, e.msg);
	else {
		pd_ydoc doc = {0};
		size_t before = d->n;
		if (pd_yaml_load(&doc, file, b.data, b.len, d) == 0 && doc.root)
			q = pd_plan_from_node(pd_ymap_get(doc.root, "plan"), d);
		pd_diags_rebase(d, before, doc.file, file); /* they outlive doc */
		pd_yaml_free(&doc);
	}
	pd_buf_free(&b);
	return q;
}

pd_plan *pd_plan_remap_cpus(const pd_plan *p, const int *board, size_t n, const char *file, pd_diags *d)
{
	pd_platform *np = pd_platform_remap_cpus(p->plat, board, n, file, d);
	if (!np)
		return NULL;
	pd_plan *q = plan_copy(p, file, d);
	if (!q) {
		pd_platform_free(np);
		return NULL;
	}
	/* the core at position j of island k is board CPU j of island k on the new platform */
	for (size_t i = 0; i < q->n_tasks; i++) {
		struct pd_placement *pl = &q->tasks[i].place;
		if (pl->kind != PD_PLACE_CPU)
			continue;
		const struct pd_island *from = pd_platform_island(p->plat, pl->island);
		const struct pd_island *to = pd_platform_island(np, pl->island);
		for (size_t j = 0; j < from->n_cpus; j++)
			if (from->cpus[j] == pl->cpu) {
				pl->cpu = to->cpus[j];
				break;
			}
	}
	pd_platform_free(q->plat);
	q->plat = np;
	return q;
}
