/* SPDX-License-Identifier: MIT */
/* Plan reader/writer (docs/FORMATS.md section 4): exact byte round trip, structural validation with positions, file
 * kind detection, hash. */
#include "plan/pd_plan.h"
#include "pd_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const DAGS = "dags:\n"
				"  - name: cam\n"
				"    period: 40ms\n"
				"    tasks:\n"
				"      - {name: capture, wcet: 2ms, wcet_fixed: 500us}\n"
				"      - name: sobel\n"
				"        wcet: 6ms\n"
				"        accel:\n"
				"          - {kind: fpga, latency: 700us, bitstream: sobel.bin, power: 400mW}\n"
				"          - {kind: gpu, latency: 1.2ms, power: 1.4W}\n"
				"      - name: blur\n"
				"        wcet: 3ms\n"
				"        accel: [{kind: fpga, latency: 300us, bitstream: blur.bin}]\n"
				"      - {name: detect, wcet: 10ms, accel: [{kind: gpu, latency: 2ms}]}\n"
				"    edges: [[capture, sobel], [sobel, detect], [capture, blur]]\n"
				"  - name: ctl\n"
				"    period: 10ms\n"
				"    deadline: 8ms\n"
				"    tasks: [{name: a, wcet: 1ms}, {name: b, wcet: 500us}]\n"
				"    edges: [[a, b]]\n";

static const char *const PLAT = "platform:\n"
				"  name: mixed\n"
				"  reference_frequency: 2000MHz\n"
				"  base_power: 2.1W\n"
				"  islands:\n"
				"    - {name: little, cpus: [0, 1], capacity: 0.3, opps: [{freq: 200MHz, busy: 24mW, idle: 10mW}, {freq: 1400MHz, busy: 297mW, idle: 95mW}]}\n"
				"    - {name: big, cpus: [4, 5], opps: [{freq: 500MHz, busy: 236mW, idle: 53mW}, {freq: 2000MHz, busy: 1982mW, idle: 411mW}]}\n"
				"  accelerators:\n"
				"    - {name: gpu0, kind: gpu, opps: [{freq: 114750kHz, busy: 345mW, idle: 180mW}, {freq: 1377MHz, busy: 6W, idle: 0.5W}]}\n"
				"    - {name: pl, kind: fpga, slots: 2, reconfig_time: 22.664ms, idle_power: 812mW}\n";

static char *path_copy(const char *p)
{
	static char bufs[8][4096];
	static int next;
	char *b = bufs[next++ % 8];
	snprintf(b, 4096, "%s", p);
	return b;
}

static char *format(const pd_plan *p)
{
	pd_buf b;
	pd_err e = {0};
	pd_buf_init(&b);
	ck_assert_int_eq(pd_plan_format(p, &b, &e), 0);
	return b.data;
}

static pd_plan *load_text(const char *text, pd_diags *d)
{
	return pd_plan_load_file(path_copy(pd_test_write(pd_test_tmpdir(), "plan.yaml", text)), d);
}

static void set_cpu(pd_plan *p, size_t i, int cpu, int64_t deadline_ns)
{
	const pd_platform *plat = pd_plan_platform(p);
	const struct pd_task *t = pd_dags_task(pd_plan_dags(p), i);
	struct pd_plan_task *pt = pd_plan_task(p, i);
	size_t k = (size_t)pd_platform_island_of_cpu(plat, cpu);
	pt->place = (struct pd_placement){.kind = PD_PLACE_CPU, .cpu = cpu, .island = k};
	pt->wcet_ns = pd_platform_wcet_at(plat, t, k, pd_plan_island_opp(p, k));
	pt->runtime_ns = pt->wcet_ns;
	pt->deadline_ns = deadline_ns;
	pt->period_ns = pd_dags_dag(pd_plan_dags(p), t->dag)->period_ns;
	pt->response_ns = deadline_ns;
}

static void set_accel(pd_plan *p, size_t i, const char *accel, int slot, size_t impl)
{
	const pd_platform *plat = pd_plan_platform(p);
	size_t a = (size_t)pd_platform_find_accel(plat, accel);
	const struct pd_accelerator *acc = pd_platform_accel(plat, a);
	const struct pd_task *t = pd_dags_task(pd_plan_dags(p), i);
	struct pd_plan_task *pt = pd_plan_task(p, i);
	pt->place = (struct pd_placement){.kind = acc->kind == PD_ACCEL_GPU ? PD_PLACE_GPU : PD_PLACE_FPGA,
					  .accel = a, .slot = slot, .impl = impl};
	pt->wcet_ns = pd_platform_latency_at(acc, t->impls[impl].latency_ns, pd_plan_accel_opp(p, a));
	pt->response_ns = pt->wcet_ns + (acc->kind == PD_ACCEL_FPGA ? acc->reconfig_ns : 0);
	pt->reclaim = false;
	pt->runtime_ns = pt->deadline_ns = pt->period_ns = 0; /* CPU-only fields */
}

/* A plan over DAGS and PLAT; variant picks placements and meta values. */
static pd_plan *make_plan(int variant)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = pd_dags_load_file(path_copy(pd_test_write(pd_test_tmpdir(), "d.yaml", DAGS)), &d);
	pd_platform *pl = pd_platform_load_file(path_copy(pd_test_write(pd_test_tmpdir(), "p.yaml", PLAT)), &d);
	pd_diags_print(&d, stderr);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(pl);
	pd_diags_free(&d);
	pd_plan *p = pd_plan_new(s, pl);
	ck_assert_ptr_nonnull(p);
	struct pd_plan_meta *m = pd_plan_meta(p);
	long cap = pd_dags_find_task(s, "cam", "capture"), sob = pd_dags_find_task(s, "cam", "sobel"),
	     blur = pd_dags_find_task(s, "cam", "blur"), det = pd_dags_find_task(s, "cam", "detect"),
	     a = pd_dags_find_task(s, "ctl", "a"), b = pd_dags_find_task(s, "ctl", "b");
	if (variant == 0) {
		pd_plan_set_island_opp(p, 0, 0);
		pd_plan_set_accel_opp(p, 0, 0);
		set_cpu(p, (size_t)cap, 4, 3333333);
		set_accel(p, (size_t)sob, "pl", 1, 0);
		set_accel(p, (size_t)blur, "pl", 1, 0);
		set_accel(p, (size_t)det, "gpu0", 0, 0);
		set_cpu(p, (size_t)a, 5, 4000000);
		set_cpu(p, (size_t)b, 0, 4000000);
		pd_plan_task(p, (size_t)b)->reclaim = true;
		pd_plan_task(p, (size_t)a)->overhead_ns = 45500; /* recorded; capture's stays absent (-1) */
		m->status = PD_STATUS_OPTIMAL;
		m->objective = PD_OBJ_BALANCED;
		m->solver = "exact/glpk";
		m->gap = 0.1 + 0.2; /* 0.30000000000000004: needs all 17 digits */
		m->solve_time_s = 1.0 / 3.0;
		m->power_uw = 3456789;
		m->lower_bound_uw = 3400000;
		m->min_relative_slack = 2.0 / 7.0;
		m->power_cap_uw = 5000000;
	} else if (variant == 2) {
		/* what a solver that gave up leaves behind: undefined gap, no slack at all */
		for (size_t i = 0; i < pd_dags_task_count(s); i++) {
			set_cpu(p, i, 5, 1000000);
			pd_plan_task(p, i)->overhead_ns = 0; /* a measured zero is written, not dropped */
		}
		m->status = PD_STATUS_UNKNOWN;
		m->gap = NAN;
		m->solve_time_s = 0;
		m->min_relative_slack = -INFINITY;
		m->lower_bound_uw = 0;
	} else {
		for (size_t i = 0; i < pd_dags_task_count(s); i++)
			set_cpu(p, i, i % 2 ? 1 : 4, 1000000 + (int64_t)i * 1234567);
		set_accel(p, (size_t)sob, "gpu0", 0, 1);
		m->status = PD_STATUS_FEASIBLE;
		m->objective = PD_OBJ_SLACK;
		m->solver = "heuristic";
		m->gap = 1e-300;
		m->solve_time_s = 12345.678901234567;
		m->power_uw = 1;
		m->min_relative_slack = -0.125;
	}
	return p;
}

START_TEST(round_trip_is_byte_identical)
{
	pd_plan *p = make_plan(_i);
	char *t1 = format(p);
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *q = load_text(t1, &d);
	pd_diags_print(&d, stderr);
	ck_assert_ptr_nonnull(q);
	char *t2 = format(q);
	ck_assert_str_eq(t1, t2);
	ck_assert_uint_eq(pd_plan_hash(p), pd_plan_hash(q));
	/* the meta data come back as the same doubles, not merely the same text */
	ck_assert(pd_plan_meta_c(q)->gap == pd_plan_meta_c(p)->gap ||
		  (isnan(pd_plan_meta_c(q)->gap) && isnan(pd_plan_meta_c(p)->gap)));
	ck_assert(pd_plan_meta_c(q)->solve_time_s == pd_plan_meta_c(p)->solve_time_s);
	ck_assert(pd_plan_meta_c(q)->min_relative_slack == pd_plan_meta_c(p)->min_relative_slack);
	ck_assert_int_eq(pd_plan_meta_c(q)->power_uw, pd_plan_meta_c(p)->power_uw);
	ck_assert_int_eq(pd_plan_meta_c(q)->lower_bound_uw, pd_plan_meta_c(p)->lower_bound_uw);
	ck_assert_int_eq(pd_plan_meta_c(q)->power_cap_uw, pd_plan_meta_c(p)->power_cap_uw);
	ck_assert_str_eq(pd_plan_meta_c(q)->solver, pd_plan_meta_c(p)->solver);
	for (size_t i = 0; i < pd_dags_task_count(pd_plan_dags(p)); i++) {
		const struct pd_plan_task *a = pd_plan_task_c(p, i), *b = pd_plan_task_c(q, i);
		ck_assert_int_eq(a->place.kind, b->place.kind);
		ck_assert_int_eq(a->place.cpu, b->place.cpu);
		ck_assert_uint_eq(a->place.island, b->place.island);
		ck_assert_uint_eq(a->place.accel, b->place.accel);
		ck_assert_int_eq(a->place.slot, b->place.slot);
		ck_assert_uint_eq(a->place.impl, b->place.impl);
		ck_assert_int_eq(a->wcet_ns, b->wcet_ns);
		ck_assert_int_eq(a->runtime_ns, b->runtime_ns);
		ck_assert_int_eq(a->overhead_ns, b->overhead_ns);
		ck_assert_int_eq(a->deadline_ns, b->deadline_ns);
		ck_assert_int_eq(a->response_ns, b->response_ns);
		ck_assert_int_eq(a->reclaim, b->reclaim);
	}
	for (size_t k = 0; k < 2; k++)
		ck_assert_uint_eq(pd_plan_island_opp(p, k), pd_plan_island_opp(q, k));
	ck_assert_uint_eq(pd_plan_accel_opp(p, 0), pd_plan_accel_opp(q, 0));
	/* and once more through a file written by pd_plan_write_file */
	pd_err e = {0};
	char *out = path_copy(pd_test_write(pd_test_tmpdir(), "w.yaml", ""));
	ck_assert_int_eq(pd_plan_write_file(q, out, &e), 0);
	pd_plan *r = pd_plan_load_file(out, &d);
	ck_assert_ptr_nonnull(r);
	char *t3 = format(r);
	ck_assert_str_eq(t1, t3);
	free(t1);
	free(t2);
	free(t3);
	pd_plan_free(p);
	pd_plan_free(q);
	pd_plan_free(r);
	pd_diags_free(&d);
}
END_TEST

START_TEST(written_layout)
{
	pd_plan *p = make_plan(0);
	char *t = format(p);
	ck_assert(strncmp(t, "plan:\n  version: 1\n  solver:\n    status: optimal\n    objective: balanced\n", 71) == 0);
	ck_assert(strstr(t, "    gap: 0.30000000000000004\n"));
	ck_assert(strstr(t, "    power_cap: 5W\n"));
	ck_assert(strstr(t, "    power: 3456.789mW\n"));
	ck_assert(strstr(t, "  - {name: little, freq: 200MHz}\n"));
	ck_assert(strstr(t, "  - {name: big, freq: 2000MHz}\n"));
	ck_assert(strstr(t, "    freq: 114.75MHz\n"));
	ck_assert(strstr(t, "  - {slot: 1, bitstreams: [sobel.bin, blur.bin]}\n"));
	ck_assert(strstr(t, "  - {slot: 0, bitstreams: []}\n"));
	ck_assert(strstr(t, "placement: 'cpu:4', wcet: 2ms, runtime: 2ms, deadline: 3333.333us, period: 40ms, reclaim: false}"));
	ck_assert(strstr(t, "task: a, placement: 'cpu:5', wcet: 1ms, overhead: 45.5us, runtime: 1ms, deadline: 4ms,"));
	ck_assert(strstr(t, "task: sobel, placement: 'fpga:pl/1', impl: 0, wcet: 700us, response: 23.364ms}"));
	/* detect's GPU latency at 114.75 MHz: 2 ms * 12 */
	ck_assert(strstr(t, "task: detect, placement: 'gpu:gpu0', impl: 0, wcet: 24ms, response: 24ms}"));
	ck_assert(strstr(t, "  dags:\n  - name: cam\n"));
	ck_assert(strstr(t, "  platform:\n    name: mixed\n"));
	free(t);
	const char *bits[4];
	ck_assert_uint_eq(pd_plan_slot_bitstreams(p, 1, 1, bits, 4), 2);
	ck_assert_str_eq(bits[0], "sobel.bin");
	ck_assert_uint_eq(pd_plan_slot_bitstreams(p, 1, 0, bits, 4), 0);
	char buf[64];
	ck_assert_str_eq(pd_plan_placement_fmt(p, &pd_plan_task_c(p, 1)->place, buf, sizeof(buf)), "fpga:pl/1");
	pd_plan_free(p);
}
END_TEST

START_TEST(hash_changes_with_content)
{
	pd_plan *p = make_plan(0);
	uint64_t h = pd_plan_hash(p);
	ck_assert_uint_ne(h, 0);
	pd_plan_meta(p)->power_uw += 1;
	ck_assert_uint_ne(pd_plan_hash(p), h);
	pd_plan_meta(p)->power_uw -= 1;
	ck_assert_uint_eq(pd_plan_hash(p), h);
	pd_plan_free(p);
}
END_TEST

/* A structural error: the text replaced in the canonical plan of variant 0, the message expected and
 * the text whose line the diagnostic must point at (NULL: the line of the replacement). */
struct bad {
	const char *from, *to, *msg, *at;
	int col;
};

static const struct bad bads[] = {
	{"  version: 1\n", "  version: 2\n", "unsupported plan version 2", NULL, 12},
	{"    status: optimal\n", "    status: great\n", "'status' must be optimal", NULL, 13},
	{"    objective: balanced\n", "    objective: cheap\n", "'objective' must be power, slack or balanced", NULL, 16},
	{"    gap: 0.30000000000000004\n", "    gap: small\n", "not a number", NULL, 10},
	{"    solve_time_s: 0.3333333333333333\n", "", "missing required key 'solve_time_s'", "    status: optimal", 5},
	{"    power: 3456.789mW\n", "    power: 3.4\n", "missing unit", NULL, 12},
	{"  - {name: little, freq: 200MHz}\n", "  - {name: little, freq: 300MHz}\n", "frequency 300MHz is not an OPP of island 'little'", NULL, 26},
	{"  - {name: little, freq: 200MHz}\n", "  - {name: tiny, freq: 200MHz}\n", "unknown island 'tiny'", NULL, 12},
	{"  - {name: little, freq: 200MHz}\n", "", "island 'little' has no frequency", "  - {name: big, freq: 2000MHz}", 3},
	{"    freq: 114.75MHz\n", "    freq: 115MHz\n", "is not an OPP of accelerator 'gpu0'", NULL, 11},
	{"  - {slot: 1, bitstreams: [sobel.bin, blur.bin]}\n", "  - {slot: 1, bitstreams: [sobel.bin]}\n", "listed bitstreams differ", NULL, 29},
	{"  - {slot: 1, bitstreams: [sobel.bin, blur.bin]}\n", "  - {slot: 2, bitstreams: []}\n", "out of range", NULL, 14},
	{"placement: 'cpu:4',", "placement: 'cpu:9',", "CPU 9 is not in any island", NULL, 42},
	{"placement: 'cpu:4',", "placement: 'npu:4',", "must be cpu:N, gpu:NAME or fpga:NAME/SLOT", NULL, 42},
	{"placement: 'fpga:pl/1',", "placement: 'fpga:pl/2',", "slot 2 >= the 2 slot(s) of 'pl'", NULL, 40},
	{"placement: 'fpga:pl/1',", "placement: 'fpga:pl',", "must be cpu:N, gpu:NAME or fpga:NAME/SLOT", NULL, 40},
	{"placement: 'gpu:gpu0', impl: 0,", "placement: 'gpu:pl', impl: 0,", "the platform has no GPU named 'pl'", NULL, 41},
	{"task: blur, placement: 'fpga:pl/1', impl: 0,", "task: blur, placement: 'gpu:gpu0', impl: 0,", "task 'blur' has no gpu implementation for 'gpu0'", NULL, 57},
	{"task: sobel, placement: 'fpga:pl/1', impl: 0,", "task: sobel, placement: 'fpga:pl/1', impl: 1,", "no fpga implementation for 'pl' at this 'impl' index", NULL, 59},
	{"placement: 'cpu:4', wcet: 2ms,", "placement: 'cpu:4', wcet: 0ms,", "'wcet' must be greater than zero", NULL, 57},
	{"deadline: 3333.333us,", "deadline: -1ms,", "negative value", NULL, 0},
	{", period: 40ms, reclaim: false}", ", reclaim: false}", "missing required key 'period'", "task: capture", 5},
	{"placement: 'cpu:4', wcet: 2ms,", "placement: 'cpu:4', impl: 0, wcet: 2ms,", "'impl' does not apply to a CPU placement", NULL, 57},
	{"impl: 0, wcet: 700us, response: 23.364ms}", "impl: 0, wcet: 700us, response: 23.364ms, period: 40ms}", "'period' does not apply to an accelerator placement", NULL, 0},
	{"task: capture,", "task: grab,", "task 'cam/grab' is not in the plan's DAG set", NULL, 5},
	{"task: capture,", "task: blur,", "task 'cam/blur' listed twice", "task: blur, placement: 'fpga", 5},
	{"task: capture,", "task: blur,", "task 'cam/capture' has no entry in 'tasks'", "  - {dag: cam, task: blur, placement: 'cpu:4'", 3},
	{"reclaim: false}", "reclaim: false, colour: red}", "unknown key 'colour' in a plan task", NULL, 0},
	{"  tasks:\n", "  extra: 1\n  tasks:\n", "unknown key 'extra' in plan", NULL, 3},
	{"    name: mixed\n", "    name: mixed\n    colour: red\n", "unknown key 'colour' in platform", "    colour: red", 5},
	{"    period: 40ms\n", "    period: 40\n", "missing unit", NULL, 13},
	/* a cross-check of the embedded platform: its diagnostic outlives the model (ASan checks it) */
	{"cpus: [4, 5]", "cpus: [0, 5]", "CPU 0 listed twice", "- name: big\n", 0},
};

static int line_of(const char *text, const char *needle)
{
	const char *at = strstr(text, needle);
	ck_assert_msg(at != NULL, "'%s' not in the mutated plan", needle);
	int line = 1;
	for (const char *c = text; c < at; c++)
		line += *c == '\n';
	return line;
}

START_TEST(structural_errors_with_position)
{
	const struct bad *b = &bads[_i];
	pd_plan *p = make_plan(0);
	char *t = format(p);
	pd_plan_free(p);
	const char *at = strstr(t, b->from);
	ck_assert_msg(at != NULL, "bad %d: canonical plan lacks '%s'", _i, b->from);
	char *m = NULL;
	ck_assert_int_ge(asprintf(&m, "%.*s%s%s", (int)(at - t), t, b->to, at + strlen(b->from)), 0);
	int want_line = b->at ? line_of(m, b->at) : line_of(t, b->from);
	pd_diags d;
	pd_diags_init(&d);
	ck_assert_ptr_null(load_text(m, &d));
	bool found = false;
	for (size_t i = 0; i < d.n && !found; i++) {
		if (!strstr(d.v[i].msg, b->msg))
			continue;
		found = true;
		ck_assert_msg(d.v[i].loc.line == want_line, "bad %d '%s': line %d, expected %d", _i, b->msg,
			      d.v[i].loc.line, want_line);
		ck_assert_msg(b->col == 0 || d.v[i].loc.col == b->col, "bad %d '%s': col %d, expected %d", _i,
			      b->msg, d.v[i].loc.col, b->col);
		ck_assert(d.v[i].loc.file && strstr(d.v[i].loc.file, "plan.yaml"));
	}
	if (!found)
		pd_diags_print(&d, stderr);
	ck_assert_msg(found, "bad %d: no diagnostic containing '%s'", _i, b->msg);
	pd_diags_free(&d);
	free(m);
	free(t);
}
END_TEST

START_TEST(not_a_plan)
{
	pd_diags d;
	pd_diags_init(&d);
	ck_assert_ptr_null(load_text("platform: {}\n", &d));
	ck_assert(d.n == 1 && strstr(d.v[0].msg, "not a plan file"));
	pd_diags_free(&d);
	pd_diags_init(&d);
	ck_assert_ptr_null(load_text("plan:\n  version: 1\n", &d));
	ck_assert_uint_eq(d.n, 4); /* solver, predicted, dags, platform missing */
	pd_diags_free(&d);
}
END_TEST

static enum pd_file_kind kind_of(const char *text, pd_diags *d)
{
	pd_ydoc doc;
	enum pd_file_kind k = PD_FILE_UNKNOWN;
	if (pd_yaml_load(&doc, "k.yaml", text, strlen(text), d) == 0)
		k = pd_plan_file_kind_of(&doc, d);
	else
		k = pd_plan_file_kind_of(NULL, d);
	pd_yaml_free(&doc);
	return k;
}

START_TEST(file_kind_detection)
{
	pd_diags d;
	pd_diags_init(&d);
	ck_assert_int_eq(kind_of("dags: []\n", &d), PD_FILE_DAGS);
	ck_assert_int_eq(kind_of("# c\nplatform: {name: x}\n", &d), PD_FILE_PLATFORM);
	ck_assert_int_eq(kind_of("plan: {}\n", &d), PD_FILE_PLAN);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_int_eq(kind_of("stuff: 1\n", &d), PD_FILE_UNKNOWN);
	ck_assert_uint_eq(d.n, 1);
	ck_assert(strstr(d.v[0].msg, "unknown file kind"));
	ck_assert_int_eq(kind_of("- 1\n- 2\n", &d), PD_FILE_UNKNOWN);
	ck_assert_uint_eq(d.n, 2);
	ck_assert_int_eq(kind_of("dags: []\nplan: {}\n", &d), PD_FILE_UNKNOWN);
	ck_assert_uint_eq(d.n, 3);
	ck_assert_int_eq(d.v[2].loc.line, 2);
	ck_assert_int_eq(kind_of("", &d), PD_FILE_UNKNOWN);
	ck_assert_uint_ge(d.n, 4);
	pd_diags_free(&d);
}
END_TEST

START_TEST(names)
{
	enum pd_objective o;
	enum pd_status s;
	ck_assert_str_eq(pd_plan_status_name(PD_STATUS_INFEASIBLE), "infeasible");
	ck_assert_str_eq(pd_plan_objective_name(PD_OBJ_SLACK), "slack");
	ck_assert_int_eq(pd_plan_objective_parse("balanced", &o), 0);
	ck_assert_int_eq(o, PD_OBJ_BALANCED);
	ck_assert_int_eq(pd_plan_objective_parse("fast", &o), -1);
	ck_assert_int_eq(pd_plan_status_parse("feasible", &s), 0);
	ck_assert_int_eq(s, PD_STATUS_FEASIBLE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("plan");
	tcase_add_loop_test(tc, round_trip_is_byte_identical, 0, 3);
	tcase_add_test(tc, written_layout);
	tcase_add_test(tc, hash_changes_with_content);
	tcase_add_loop_test(tc, structural_errors_with_position, 0, (int)(sizeof(bads) / sizeof(bads[0])));
	tcase_add_test(tc, not_a_plan);
	tcase_add_test(tc, file_kind_detection);
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
