/* SPDX-License-Identifier: MIT */
/*
 * DAG-set parser: every rule of docs/FORMATS.md section 2 has a bad input here that asserts the message and its
 * line:col, plus the shipped examples and the multi-error behaviour.
 */
#include "helper_dags.h"
#include "pd_test.h"

#include <stdlib.h>
#include <string.h>

/* A one-DAG document; lines 1-8 fixed, `extra` appended to the DAG mapping at line 9+. */
#define HEAD "dags:\n"                   /* 1 */                                             \
	     "  - name: cam\n"           /* 2 */                                             \
	     "    period: 40ms\n"        /* 3 */                                             \
	     "    tasks:\n"              /* 4 */                                             \
	     "      - name: a\n"         /* 5 */                                             \
	     "        wcet: 2ms\n"       /* 6 */                                             \
	     "      - name: b\n"         /* 7 */                                             \
	     "        wcet: 3ms\n"       /* 8 */

START_TEST(valid_minimal)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = dt_load_text(HEAD "    edges:\n      - [a, b]\n", &d, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(d.n, 0);
	ck_assert_int_eq(pd_dags_count(s), 1);
	ck_assert_int_eq(pd_dags_task_count(s), 2);
	const struct pd_dag *G = pd_dags_dag(s, 0);
	ck_assert_str_eq(G->name, "cam");
	ck_assert_int_eq(G->period_ns, 40 * PD_NS_PER_MS);
	ck_assert_int_eq(G->deadline_ns, 40 * PD_NS_PER_MS); /* default D = T */
	ck_assert(!G->has_deadline);
	const struct pd_task *a = pd_dags_task(s, 0), *b = pd_dags_task(s, 1);
	ck_assert_int_eq(a->wcet_ns, 2 * PD_NS_PER_MS);
	ck_assert_int_eq(a->bcet_ns, 2 * PD_NS_PER_MS); /* default bcet = wcet */
	ck_assert_int_eq(a->wcet_fixed_ns, 0);
	ck_assert_ptr_null(a->work);
	ck_assert_int_eq(a->n_succs, 1);
	ck_assert_int_eq(a->succs[0], 1);
	ck_assert_int_eq(b->n_preds, 1);
	ck_assert_int_eq(b->preds[0], 0);
	ck_assert_int_eq(a->loc.line, 5);
	ck_assert_int_eq(a->loc.col, 9);
	pd_dags_free(s);
	pd_diags_free(&d);
}
END_TEST

START_TEST(full_task_fields)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = dt_load_text("dags:\n"
				    "  - name: cam\n"
				    "    period: 40ms\n"
				    "    deadline: 30ms\n"
				    "    tasks:\n"
				    "      - name: sobel\n"
				    "        wcet: 6ms\n"
				    "        wcet_fixed: 0.5ms\n"
				    "        bcet: 4ms\n"
				    "        accel:\n"
				    "          - {kind: fpga, latency: 700us, bitstream: sobel.bin, power: 0.4W, accel: pl}\n"
				    "          - {kind: gpu, latency: 1.2ms}\n"
				    "        work: plugin:libcv.so:sobel_run\n",
				    &d, NULL);
	ck_assert_ptr_nonnull(s);
	const struct pd_dag *G = pd_dags_dag(s, 0);
	ck_assert(G->has_deadline);
	ck_assert_int_eq(G->deadline_ns, 30 * PD_NS_PER_MS);
	const struct pd_task *t = pd_dags_task(s, 0);
	ck_assert_int_eq(t->wcet_fixed_ns, 500000);
	ck_assert(t->has_bcet);
	ck_assert_int_eq(t->bcet_ns, 4000000);
	ck_assert_int_eq(t->n_impls, 2);
	ck_assert_int_eq(t->impls[0].kind, PD_ACCEL_FPGA);
	ck_assert_int_eq(t->impls[0].latency_ns, 700000);
	ck_assert_str_eq(t->impls[0].bitstream, "sobel.bin");
	ck_assert_int_eq(t->impls[0].power_uw, 400000);
	ck_assert_str_eq(t->impls[0].accel, "pl");
	ck_assert_int_eq(t->impls[1].kind, PD_ACCEL_GPU);
	ck_assert_ptr_null(t->impls[1].bitstream);
	ck_assert_int_eq(t->impls[1].power_uw, -1);
	ck_assert_ptr_null(t->impls[1].accel);
	ck_assert_str_eq(t->work, "plugin:libcv.so:sobel_run");
	ck_assert(pd_dags_task_is_source(t) && pd_dags_task_is_sink(t));
	pd_dags_free(s);
	pd_diags_free(&d);
}
END_TEST

START_TEST(unknown_keys)
{
	dt_expect_error(HEAD "    priority: 3\n", 9, 5, "unknown key 'priority' in DAG");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - name: a\n        wcet: 2ms\n"
			"        prio: 1\n",
			7, 9, "unknown key 'prio' in task");
	dt_expect_error("extra: 1\n" HEAD, 1, 1, "unknown key 'extra' in DAG file");
	dt_expect_error(HEAD "    edges: []\n"
			     "    x_accel: [{kind: gpu, latency: 1ms}]\n",
			10, 5, "unknown key 'x_accel'");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - name: a\n        wcet: 2ms\n"
			"        accel:\n          - {kind: gpu, latency: 1ms, speed: 3}\n",
			8, 39, "unknown key 'speed' in accel entry");
}
END_TEST

START_TEST(late_policy)
{
	dt_expect_error(HEAD "    late: maybe\n", 9, 11, "'late' must be resync or queue, not 'maybe'");
	dt_expect_error(HEAD "    late: [queue]\n", 9, 11, "'late' must be a");
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = dt_load_text(HEAD "    late: queue\n", &d, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(pd_dags_dag(s, 0)->late, PD_LATE_QUEUE);
	ck_assert(pd_dags_dag(s, 0)->has_late);
	pd_dags_free(s);
	s = dt_load_text(HEAD, &d, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(pd_dags_dag(s, 0)->late, PD_LATE_RESYNC); /* the default */
	ck_assert(!pd_dags_dag(s, 0)->has_late);
	pd_dags_free(s);
	pd_diags_free(&d);
}
END_TEST

START_TEST(missing_keys)
{
	dt_expect_error("dags:\n  - period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms}\n", 2, 5,
			"missing required key 'name'");
	dt_expect_error("dags:\n  - name: cam\n    tasks:\n      - {name: a, wcet: 1ms}\n", 2, 5,
			"missing required key 'period'");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n", 2, 5, "missing required key 'tasks'");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: a}\n", 5, 9,
			"missing required key 'wcet'");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {wcet: 1ms}\n", 5, 9,
			"missing required key 'name'");
	dt_expect_error("other: 1\n", 1, 1, "missing required key 'dags'");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - name: a\n        wcet: 2ms\n"
			"        accel:\n          - {latency: 1ms}\n",
			8, 13, "missing required key 'kind'");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - name: a\n        wcet: 2ms\n"
			"        accel:\n          - {kind: gpu}\n",
			8, 13, "missing required key 'latency'");
}
END_TEST

START_TEST(wrong_types)
{
	dt_expect_error("dags: {name: cam}\n", 1, 7, "'dags' must be a sequence");
	dt_expect_error("dags:\n  - cam\n", 2, 5, "'DAG' must be a mapping");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks: 3\n", 4, 12, "'tasks' must be a sequence");
	dt_expect_error("dags:\n  - name: [cam]\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms}\n", 2, 11,
			"'name' must be a scalar");
	dt_expect_error("dags:\n  - name: cam\n    period: {ms: 40}\n    tasks:\n      - {name: a, wcet: 1ms}\n", 3,
			13, "'period' must be a scalar");
	dt_expect_error(HEAD "    edges: {a: b}\n", 9, 12, "'edges' must be a sequence");
	dt_expect_error(HEAD "    edges:\n      - a\n", 10, 9, "'edge' must be a sequence");
	dt_expect_error(HEAD "    edges:\n      - [a, [b]]\n", 10, 13, "'edge target' must be a scalar");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - x\n", 5, 9, "'task' must be a mapping");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms, accel: gpu}\n",
			5, 37, "'accel' must be a sequence");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms, accel: [gpu]}\n",
			5, 38, "'accel entry' must be a mapping");
	dt_expect_error("- 1\n", 1, 1, "a DAG file is a mapping");
}
END_TEST

START_TEST(bad_durations)
{
	dt_expect_error("dags:\n  - name: cam\n    period: 40\n    tasks:\n      - {name: a, wcet: 1ms}\n", 3, 13,
			"missing unit");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 2}\n", 5, 25,
			"missing unit");
	dt_expect_error("dags:\n  - name: cam\n    period: 99999999999s\n    tasks:\n      - {name: a, wcet: 1ms}\n", 3,
			13, "overflows");
	/* the limit in a unit the parser accepts (it has no 'h'), the value as written (issue 13 item 12) */
	dt_expect_error("dags:\n  - name: cam\n    period: 7200s\n    tasks:\n      - {name: a, wcet: 1ms}\n", 3, 13,
			"'period' is 7200s: must be at most 3600s");
	dt_expect_error("dags:\n  - name: cam\n    period: 3600.000001s\n    tasks:\n      - {name: a, wcet: 1ms}\n", 3,
			13, "'period' is 3600.000001s: must be at most 3600s");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 0ms}\n", 5, 25,
			"'wcet' must be greater than zero");
	dt_expect_error("dags:\n  - name: cam\n    period: -40ms\n    tasks:\n      - {name: a, wcet: 1ms}\n", 3, 13,
			"negative");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    deadline: 0s\n    tasks:\n      - {name: a, wcet: 1ms}\n",
			4, 15, "'deadline' must be greater than zero");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms, bcet: 0.5ns}\n",
			5, 36, "not a whole number");
	dt_expect_error("dags:\n  - name: cam\n    period: 40 parsecs\n    tasks:\n      - {name: a, wcet: 1ms}\n", 3,
			13, "unknown unit");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms, wcet_fixed: 0us}\n",
			5, 42, "'wcet_fixed' must be greater than zero");
}
END_TEST

START_TEST(empty_lists)
{
	dt_expect_error("dags: []\n", 1, 7, "'dags' must not be empty");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks: []\n", 4, 12, "'tasks' must not be empty");
	dt_expect_error("", 1, 1, "empty document");
}
END_TEST

START_TEST(value_rules)
{
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    deadline: 50ms\n    tasks:\n      - {name: a, wcet: 1ms}\n",
			4, 15, "'deadline' 50ms exceeds 'period' 40ms");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms, wcet_fixed: 2ms}\n",
			5, 42, "'wcet_fixed' 2ms exceeds 'wcet' 1ms");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms, bcet: 1.5ms}\n",
			5, 36, "'bcet' 1.5ms exceeds 'wcet' 1ms");
}
END_TEST

START_TEST(deadline_equal_period_and_bounds_ok)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = dt_load_text("dags:\n  - name: cam\n    period: 40ms\n    deadline: 40ms\n    tasks:\n"
				    "      - {name: a, wcet: 1ms, wcet_fixed: 1ms, bcet: 1ms}\n",
				    &d, NULL);
	ck_assert_ptr_nonnull(s);
	pd_dags_free(s);
	pd_diags_free(&d);
}
END_TEST

#define ACCEL(entry)                                                                                       \
	"dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - name: a\n        wcet: 2ms\n        accel:\n" \
	"          - " entry "\n"

START_TEST(accel_rules)
{
	dt_expect_error(ACCEL("{kind: tpu, latency: 1ms}"), 8, 20, "'kind' must be gpu or fpga, not 'tpu'");
	dt_expect_error(ACCEL("{kind: gpu, latency: 0ms}"), 8, 34, "'latency' must be greater than zero");
	dt_expect_error(ACCEL("{kind: gpu, latency: 1}"), 8, 34, "missing unit");
	dt_expect_error(ACCEL("{kind: fpga, latency: 1ms}"), 8, 13, "fpga implementation needs a 'bitstream'");
	dt_expect_error(ACCEL("{kind: gpu, latency: 1ms, bitstream: x.bin}"), 8, 50, "only for fpga");
	dt_expect_error(ACCEL("{kind: fpga, latency: 1ms, bitstream: ../etc/x.bin}"), 8, 51, "plain file name");
	dt_expect_error(ACCEL("{kind: fpga, latency: 1ms, bitstream: x.bin, power: 3}"), 8, 65, "missing unit");
	dt_expect_error(ACCEL("{kind: gpu, latency: 1ms, accel: 'gpu 0'}"), 8, 46, "accelerator name 'gpu 0' may only");
}
END_TEST

#define WORK(w) "dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms, work: " w "}\n"

START_TEST(work_rules)
{
	dt_expect_error(WORK("builtin:sleep"), 5, 36, "unknown builtin");
	dt_expect_error(WORK("shell:rm"), 5, 36, "must be builtin:spin, builtin:busy or plugin:LIB:SYMBOL");
	dt_expect_error(WORK("plugin:lib.so"), 5, 36, "plugin:LIB:SYMBOL");
	dt_expect_error(WORK("'plugin::sym'"), 5, 36, "plugin:LIB:SYMBOL");
	dt_expect_error(WORK("plugin:lib.so:1sym"), 5, 36, "C identifier");
	dt_expect_error(WORK("'plugin:lib.so:'"), 5, 36, "C identifier");
	const char *ok[] = {"builtin:spin", "builtin:busy", "plugin:/opt/x/libw.so:run_1", "plugin:C:\\w.so:f"};
	for (size_t i = 0; i < 4; i++) {
		char text[256];
		pd_diags d;
		pd_diags_init(&d);
		snprintf(text, sizeof(text), WORK("'%s'"), ok[i]);
		pd_dagset *s = dt_load_text(text, &d, NULL);
		ck_assert_msg(s != NULL, "%s rejected", ok[i]);
		ck_assert_str_eq(pd_dags_task(s, 0)->work, ok[i]);
		pd_dags_free(s);
		pd_diags_free(&d);
	}
	struct pd_work w;
	const char *why;
	ck_assert_int_eq(pd_dags_work_parse("plugin:/opt/a:b/libw.so:run", &w, &why), 0);
	ck_assert_int_eq(w.kind, PD_WORK_PLUGIN);
	ck_assert_str_eq(w.lib, "/opt/a:b/libw.so");
	ck_assert_str_eq(w.symbol, "run");
	ck_assert_int_eq(pd_dags_work_parse(NULL, &w, &why), 0);
	ck_assert_int_eq(w.kind, PD_WORK_SPIN);
	ck_assert_int_eq(pd_dags_work_parse("builtin:busy", &w, &why), 0);
	ck_assert_int_eq(w.kind, PD_WORK_BUSY);
}
END_TEST

START_TEST(names)
{
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: 'a b', wcet: 1ms}\n", 5, 16,
			"task name 'a b' may only hold");
	dt_expect_error("dags:\n  - name: c\"am\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms}\n", 2, 11,
			"DAG name");
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: '', wcet: 1ms}\n", 5, 16,
			"'name' must not be empty");
	char text[512];
	snprintf(text, sizeof(text), "dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: %s, wcet: 1ms}\n",
		 "a123456789012345678901234567890123456789012345678901234567890123");
	dt_expect_error(text, 5, 16, "longer than 63");
}
END_TEST

START_TEST(duplicate_names)
{
	dt_expect_error("dags:\n  - name: cam\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms}\n"
			"  - name: cam\n    period: 20ms\n    tasks:\n      - {name: a, wcet: 1ms}\n",
			6, 5, "duplicate DAG name 'cam' (first at line 2)");
	dt_expect_error(HEAD "      - name: a\n        wcet: 1ms\n", 9, 9, "duplicate task name 'a' in DAG 'cam' (first at line 5)");
	/* the same task name in two DAGs is fine */
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = dt_load_text("dags:\n  - name: x\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms}\n"
				    "  - name: y\n    period: 20ms\n    tasks:\n      - {name: a, wcet: 1ms}\n",
				    &d, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(pd_dags_find_task(s, "y", "a"), 1);
	ck_assert_int_eq(pd_dags_find_task(s, "x", "a"), 0);
	ck_assert_int_eq(pd_dags_find_task(s, "z", "a"), -1);
	ck_assert_int_eq(pd_dags_find_task(s, "x", "b"), -1);
	ck_assert_int_eq(pd_dags_find_dag(s, "y"), 1);
	pd_dags_free(s);
	pd_diags_free(&d);
}
END_TEST

START_TEST(edge_rules)
{
	dt_expect_error(HEAD "    edges:\n      - [a, c]\n", 10, 13, "edge to unknown task 'c' in DAG 'cam'");
	dt_expect_error(HEAD "    edges:\n      - [z, b]\n", 10, 10, "edge from unknown task 'z' in DAG 'cam'");
	dt_expect_error(HEAD "    edges:\n      - [a, a]\n", 10, 9, "self-loop on task 'a' in DAG 'cam'");
	dt_expect_error(HEAD "    edges:\n      - [a, b]\n      - [b, a]\n      - [a, b]\n", 12, 9,
			"duplicate edge [a, b] in DAG 'cam' (first at line 10)");
	dt_expect_error(HEAD "    edges:\n      - [a]\n", 10, 9, "an edge must be a pair [from, to], not 1 items");
	dt_expect_error(HEAD "    edges:\n      - [a, b, a]\n", 10, 9, "not 3 items");
	/* edges never cross DAGs: a name of another DAG is unknown here */
	dt_expect_error("dags:\n  - name: x\n    period: 40ms\n    tasks:\n      - {name: p, wcet: 1ms}\n"
			"  - name: y\n    period: 20ms\n    tasks:\n      - {name: q, wcet: 1ms}\n    edges: [[q, p]]\n",
			10, 17, "edge to unknown task 'p' in DAG 'y'");
}
END_TEST

START_TEST(cycles)
{
	dt_expect_error(HEAD "      - {name: c, wcet: 1ms}\n    edges:\n      - [a, b]\n      - [b, c]\n      - [c, b]\n", 7,
			9, "cycle in DAG 'cam': b -> c -> b");
	dt_expect_error("dags:\n  - name: g\n    period: 40ms\n    tasks:\n"
			"      - {name: s, wcet: 1ms}\n"  /* 5 */
			"      - {name: x, wcet: 1ms}\n"  /* 6 */
			"      - {name: y, wcet: 1ms}\n"  /* 7 */
			"      - {name: z, wcet: 1ms}\n"  /* 8 */
			"    edges: [[s, x], [z, x], [x, y], [y, z]]\n",
			6, 9, "cycle in DAG 'g': x -> y -> z -> x");
	/* a cycle in a second DAG is found and named there */
	dt_expect_error(HEAD "  - name: two\n    period: 20ms\n    tasks:\n      - {name: p, wcet: 1ms}\n"
			     "      - {name: q, wcet: 1ms}\n    edges: [[p, q], [q, p]]\n",
			12, 9, "cycle in DAG 'two': p -> q -> p");
}
END_TEST

START_TEST(all_problems_reported)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = dt_load_text("dags:\n"
				    "  - name: cam\n"
				    "    period: 40\n"                    /* 3: unit */
				    "    colour: red\n"                   /* 4: unknown key */
				    "    tasks:\n"
				    "      - {name: a, wcet: 0ms}\n"      /* 6: zero */
				    "      - {name: b, wcet: 1ms, bcet: 2ms}\n" /* 7: bcet > wcet */
				    "    edges: [[a, nope]]\n"            /* 8: unknown task */
				    "  - name: cam\n"                     /* 9: duplicate */
				    "    period: 10ms\n"
				    "    tasks: []\n",                    /* 11: empty */
				    &d, NULL);
	ck_assert_ptr_null(s);
	ck_assert(dt_has_diag(&d, 3, 13, "missing unit"));
	ck_assert(dt_has_diag(&d, 4, 5, "unknown key 'colour'"));
	ck_assert(dt_has_diag(&d, 6, 25, "greater than zero"));
	ck_assert(dt_has_diag(&d, 7, 36, "'bcet' 2ms exceeds"));
	ck_assert(dt_has_diag(&d, 8, 17, "unknown task 'nope'"));
	ck_assert(dt_has_diag(&d, 9, 5, "duplicate DAG name 'cam'"));
	ck_assert(dt_has_diag(&d, 11, 12, "'tasks' must not be empty"));
	ck_assert_int_eq(d.n, 7);
	pd_diags_free(&d);
}
END_TEST

START_TEST(several_sources_and_sinks)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = dt_load_text("dags:\n  - name: g\n    period: 40ms\n    tasks:\n"
				    "      - {name: s1, wcet: 1ms}\n      - {name: s2, wcet: 1ms}\n"
				    "      - {name: m, wcet: 1ms}\n      - {name: k1, wcet: 1ms}\n      - {name: k2, wcet: 1ms}\n"
				    "      - {name: alone, wcet: 1ms}\n"
				    "    edges: [[s1, m], [s2, m], [m, k1], [m, k2]]\n",
				    &d, NULL);
	ck_assert_ptr_nonnull(s);
	int sources = 0, sinks = 0;
	for (size_t i = 0; i < pd_dags_task_count(s); i++) {
		sources += pd_dags_task_is_source(pd_dags_task(s, i));
		sinks += pd_dags_task_is_sink(pd_dags_task(s, i));
	}
	ck_assert_int_eq(sources, 3);
	ck_assert_int_eq(sinks, 3);
	pd_dags_free(s);
	pd_diags_free(&d);
}
END_TEST

START_TEST(yaml_level_errors)
{
	dt_expect_error("dags:\n  - name: cam\n    period: [40ms\n", 4, 1, "YAML syntax error");
	dt_expect_error("dags:\n  - &x {name: cam}\n", 2, 5, "anchors are not supported");
	pd_diags d;
	pd_diags_init(&d);
	ck_assert_ptr_null(pd_dags_load_file("/nonexistent/dags.yaml", &d));
	ck_assert_int_ge(d.n, 1);
	ck_assert_ptr_null(pd_dags_from_node(NULL, &d));
	ck_assert(dt_has_diag(&d, 0, 0, "missing required key 'dags'"));
	pd_diags_free(&d);
}
END_TEST

START_TEST(examples_load)
{
	static const char *const ex[] = {"camera", "automotive", "set30", "twin"};
	static const size_t n_dags[] = {1, 3, 0, 1}, n_tasks[] = {7, 13, 30, 3};
	for (size_t k = 0; k < 4; k++) {
		char rel[64];
		pd_diags d;
		pd_diags_init(&d);
		snprintf(rel, sizeof(rel), "dags/examples/%s.yaml", ex[k]);
		pd_dagset *s = pd_dags_load_file(pd_test_src(rel), &d);
		if (!s)
			pd_diags_print(&d, stderr);
		ck_assert_msg(s != NULL, "%s does not load", rel);
		if (n_dags[k])
			ck_assert_int_eq(pd_dags_count(s), n_dags[k]);
		ck_assert_int_eq(pd_dags_task_count(s), n_tasks[k]);
		double u = pd_dags_utilisation(s);
		ck_assert_msg(u > 0.2 && u < 1.6, "%s: utilisation %g", rel, u);
		pd_dags_free(s);
		pd_diags_free(&d);
	}
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = pd_dags_load_file(pd_test_src("dags/examples/camera.yaml"), &d);
	long i = pd_dags_find_task(s, "camera", "sobel");
	ck_assert_int_ge(i, 0);
	const struct pd_task *t = pd_dags_task(s, (size_t)i);
	ck_assert_int_eq(t->impls[0].kind, PD_ACCEL_FPGA);
	ck_assert_str_eq(t->impls[0].bitstream, "sobel.bin");
	ck_assert_double_eq_tol(pd_dags_utilisation(s), 20.5 / 40, 1e-12);
	s = (pd_dags_free(s), pd_dags_load_file(pd_test_src("dags/examples/twin.yaml"), &d));
	ck_assert_double_eq_tol(pd_dags_utilisation(s), 0.3, 1e-12);
	pd_dags_free(s);
	pd_diags_free(&d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dags_parse");
	TCase *tc = tcase_create("parse");
	tcase_add_test(tc, valid_minimal);
	tcase_add_test(tc, full_task_fields);
	tcase_add_test(tc, unknown_keys);
	tcase_add_test(tc, late_policy);
	tcase_add_test(tc, missing_keys);
	tcase_add_test(tc, wrong_types);
	tcase_add_test(tc, bad_durations);
	tcase_add_test(tc, empty_lists);
	tcase_add_test(tc, value_rules);
	tcase_add_test(tc, deadline_equal_period_and_bounds_ok);
	tcase_add_test(tc, accel_rules);
	tcase_add_test(tc, work_rules);
	tcase_add_test(tc, names);
	tcase_add_test(tc, duplicate_names);
	tcase_add_test(tc, edge_rules);
	tcase_add_test(tc, cycles);
	tcase_add_test(tc, all_problems_reported);
	tcase_add_test(tc, several_sources_and_sinks);
	tcase_add_test(tc, yaml_level_errors);
	tcase_add_test(tc, examples_load);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
