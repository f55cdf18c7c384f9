/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the DAG-set parser: any bytes -> pd_yaml_load -> pd_dags_from_node (through
 * pd_dags_from_doc, the top-level check), and whatever is accepted must survive an emit/parse round
 * trip unchanged. Seed corpus: the files of dags/examples.
 *   cmake -DPD_FUZZ=ON -DCMAKE_C_COMPILER=clang ... && ./fuzz_dags -max_len=8192 ../dags/examples
 */
#include "core/pd_core.h"
#include "dags/pd_dags.h"

#include <stdlib.h>
#include <string.h>

static void round_trip(const pd_dagset *s)
{
	pd_buf b;
	pd_err e = {0};
	pd_diags d;
	pd_ydoc doc;
	pd_buf_init(&b);
	pd_diags_init(&d);
	if (pd_dags_format(s, &b, &e) != 0)
		abort();
	if (pd_yaml_load(&doc, "emitted", b.data, b.len, &d) != 0)
		abort();
	pd_dagset *s2 = pd_dags_from_node(pd_ymap_get(doc.root, "dags"), &d);
	if (!s2 || !pd_dags_equal(s, s2))
		abort(); /* the emitter wrote something the parser reads differently */
	pd_dags_free(s2);
	pd_yaml_free(&doc);
	pd_diags_free(&d);
	pd_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pd_ydoc doc;
	pd_diags d;
	pd_diags_init(&d);
	d.limit = 64;
	if (pd_yaml_load(&doc, "fuzz.yaml", (const char *)data, size, &d) == 0) {
		pd_dagset *s = pd_dags_from_doc(&doc, &d);
		if (s && d.n)
			abort(); /* accepted with diagnostics: contract broken */
		if (s)
			round_trip(s);
		pd_dags_free(s);
		/* the embedded form, as the plan reader calls it */
		s = pd_dags_from_node(doc.root && doc.root->kind == PD_Y_MAP ? pd_ymap_get(doc.root, "dags") : doc.root, &d);
		pd_dags_free(s);
	}
	pd_yaml_free(&doc);
	pd_diags_free(&d);
	return 0;
}
