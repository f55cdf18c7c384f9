/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the plan reader on arbitrary bytes. Besides "never crash", checks the round
 * trip on everything the reader accepts: write(read(write(x))) == write(x) byte for byte, and that a
 * plan is returned exactly when no diagnostic was recorded. Seeds: the sample plans in tests/plan/.
 */
#include "plan/pd_plan.h"

#include <stdlib.h>
#include <string.h>

static pd_plan *parse(const char *text, size_t len, pd_ydoc *doc, pd_diags *d)
{
	if (pd_yaml_load(doc, "fuzz.yaml", text, len, d) != 0 || doc->root->kind != PD_Y_MAP)
		return NULL;
	const pd_ynode *n = pd_ymap_get(doc->root, "plan");
	if (!n)
		return NULL;
	pd_plan *p = pd_plan_from_node(n, d);
	if ((p != NULL) != (d->n == 0 && d->dropped == 0))
		abort();
	return p;
}

static char *text_of(const pd_plan *p)
{
	pd_buf b;
	pd_err e = {0};
	pd_buf_init(&b);
	if (pd_plan_format(p, &b, &e) != 0)
		abort();
	return b.data;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pd_ydoc doc = {0}, doc2 = {0};
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *p = parse((const char *)data, size, &doc, &d);
	if (p) {
		char *t1 = text_of(p);
		pd_plan *q = parse(t1, strlen(t1), &doc2, &d);
		if (!q)
			abort();
		char *t2 = text_of(q);
		if (strcmp(t1, t2) != 0 || pd_plan_hash(p) != pd_plan_hash(q))
			abort();
		free(t1);
		free(t2);
		pd_plan_free(q);
	}
	pd_plan_free(p);
	pd_yaml_free(&doc);
	pd_yaml_free(&doc2);
	pd_diags_free(&d);
	return 0;
}
