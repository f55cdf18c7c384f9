/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the platform parser on arbitrary bytes. Besides "never crash", checks the
 * writer's contract on everything the parser accepts: emit(parse(emit(x))) == emit(x), and that a
 * model is returned exactly when no diagnostic was recorded. Seeds: the board files in platforms/.
 */
#include "platforms/pd_platform.h"

#include <stdlib.h>
#include <string.h>

static char *emit_text(const pd_platform *p)
{
	pd_buf b;
	pd_err e = {0};
	pd_buf_init(&b);
	pd_yemit *y = pd_yemit_new(&b);
	if (!y)
		return NULL;
	pd_yemit_map_begin(y, false);
	pd_yemit_key(y, "platform");
	pd_platform_emit(p, y);
	pd_yemit_map_end(y);
	if (pd_yemit_finish(y, &e) != 0)
		abort(); /* a valid model must always be writable */
	return b.data;
}

static pd_platform *parse(const char *text, size_t len, pd_ydoc *doc, pd_diags *d)
{
	if (pd_yaml_load(doc, "fuzz.yaml", text, len, d) != 0 || doc->root->kind != PD_Y_MAP)
		return NULL;
	const pd_ynode *n = pd_ymap_get(doc->root, "platform");
	if (!n)
		return NULL;
	pd_platform *p = pd_platform_from_node(n, d);
	if ((p != NULL) != (d->n == 0 && d->dropped == 0))
		abort();
	return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pd_ydoc doc = {0}, doc2 = {0};
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = parse((const char *)data, size, &doc, &d);
	if (p) {
		char *t1 = emit_text(p);
		pd_platform *q = parse(t1, strlen(t1), &doc2, &d);
		if (!q)
			abort(); /* the writer produced something the reader rejects */
		char *t2 = emit_text(q);
		if (strcmp(t1, t2) != 0)
			abort(); /* not canonical */
		free(t1);
		free(t2);
		pd_platform_free(q);
	}
	pd_platform_free(p);
	pd_yaml_free(&doc);
	pd_yaml_free(&doc2);
	pd_diags_free(&d);
	return 0;
}
