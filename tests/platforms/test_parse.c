/* SPDX-License-Identifier: MIT */
/* Platform parser (docs/FORMATS.md section 3): the shipped boards, every validation rule with its position, the
 * canonical writer's round trip. */
#include "platforms/pd_platform.h"
#include "pd_test.h"

#include <stdlib.h>
#include <string.h>

/* A small valid platform; the rule tests below each break one thing in it. */
static const char *const GOOD = "platform:\n"
				"  name: tiny\n"
				"  reference_frequency: 2GHz\n"
				"  base_power: 1.5W\n"
				"  dl: {max_util_per_cpu: 0.9, fair_server: {runtime: 50ms, period: 1s}}\n"
				"  islands:\n"
				"    - name: big\n"
				"      cpus: [2, 3]\n"
				"      capacity: 1.0\n"
				"      opps:\n"
				"        - {freq: 1000MHz, busy: 0.5W, idle: 0.1W}\n"
				"        - {freq: 2000MHz, busy: 2W, idle: 0.4W}\n"
				"    - name: little\n"
				"      cpus: [0, 1]\n"
				"      capacity: 0.3\n"
				"      opps:\n"
				"        - {freq: 1400MHz, busy: 300mW, idle: 95mW}\n"
				"  accelerators:\n"
				"    - {name: gpu0, kind: gpu, devfreq: 17000000.gv11b, opps: [{freq: 1377MHz, busy: 6W, idle: 0.5W}]}\n"
				"    - {name: pl, kind: fpga, slots: 2, reconfig_time: 22.664ms, idle_power: 812mW, manager: fpga0}\n"
				"  sensors:\n"
				"    - {uri: \"local:\", device: ina226-u79, channel: power2, rail: VCCINT, measures: pl}\n";

static pd_platform *load_text(const char *text, pd_diags *d)
{
	const char *path = pd_test_write(pd_test_tmpdir(), "p.yaml", text);
	static char keep[4096]; /* diagnostics point at the path the caller passed */
	snprintf(keep, sizeof(keep), "%s", path);
	return pd_platform_load_file(keep, d);
}

/* Replaces the first occurrence of from in GOOD by to. */
static const char *mutate(const char *from, const char *to)
{
	static char buf[8192];
	const char *at = strstr(GOOD, from);
	ck_assert_msg(at != NULL, "fixture lacks '%s'", from);
	snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - GOOD), GOOD, to, at + strlen(from));
	return buf;
}

static char *emit_text(const pd_platform *p)
{
	pd_buf b;
	pd_err e = {0};
	pd_buf_init(&b);
	pd_yemit *y = pd_yemit_new(&b);
	pd_yemit_map_begin(y, false);
	pd_yemit_key(y, "platform");
	pd_platform_emit(p, y);
	pd_yemit_map_end(y);
	ck_assert_int_eq(pd_yemit_finish(y, &e), 0);
	return b.data;
}

START_TEST(good_platform_values)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = load_text(GOOD, &d);
	pd_diags_print(&d, stderr);
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(pd_platform_name(p), "tiny");
	ck_assert_int_eq(pd_platform_ref_freq_khz(p), 2000000);
	ck_assert_int_eq(pd_platform_base_uw(p), 1500000);
	ck_assert(pd_platform_dl(p)->has_fair_server);
	ck_assert_int_eq(pd_platform_dl(p)->fair_runtime_ns, 50000000);
	ck_assert_double_eq_tol(pd_platform_core_capacity(p), 0.85, 1e-12);
	ck_assert_uint_eq(pd_platform_island_count(p), 2);
	ck_assert_uint_eq(pd_platform_core_count(p), 4);
	const struct pd_island *big = pd_platform_island(p, 0);
	ck_assert_str_eq(big->policy, "policy2"); /* default: policy of the first CPU */
	ck_assert_int_eq(big->opps[1].busy_uw, 2000000);
	ck_assert_int_eq(big->loc.line, 7);
	ck_assert_int_eq(pd_platform_island_of_cpu(p, 1), 1);
	ck_assert_int_eq(pd_platform_island_of_cpu(p, 7), -1);
	ck_assert_int_eq(pd_platform_find_island(p, "little"), 1);
	ck_assert_int_eq(pd_platform_find_accel(p, "pl"), 1);
	ck_assert_int_eq(pd_platform_find_accel(p, "big"), -1);
	const struct pd_accelerator *pl = pd_platform_accel(p, 1);
	ck_assert_int_eq(pl->kind, PD_ACCEL_FPGA);
	ck_assert_int_eq(pl->slots, 2);
	ck_assert_int_eq(pl->reconfig_ns, 22664000);
	ck_assert_int_eq(pl->idle_uw, 812000);
	ck_assert_str_eq(pd_platform_accel(p, 0)->devfreq, "17000000.gv11b");
	const struct pd_sensor *s = pd_platform_sensor(p, 0);
	ck_assert_str_eq(s->uri, "local:");
	ck_assert_double_eq(s->scale, 0.001); /* default */
	pd_platform_free(p);
	pd_diags_free(&d);
}
END_TEST

/* One broken fixture: the replacement, a message fragment and the expected line:col. */
struct rule {
	const char *from, *to, *msg;
	int line, col;
};

static const struct rule rules[] = {
	{"  base_power: 1.5W\n", "  base_power: 1.5W\n  colour: red\n", "unknown key 'colour'", 5, 3},
	{"  name: tiny\n", "", "missing required key 'name'", 2, 3},
	{"  reference_frequency: 2GHz\n", "", "missing required key 'reference_frequency'", 2, 3},
	{"reference_frequency: 2GHz", "reference_frequency: 2", "missing unit", 3, 24},
	{"base_power: 1.5W", "base_power: 1.5", "missing unit", 4, 15},
	{"base_power: 1.5W", "base_power: -1W", "negative", 4, 15},
	{"max_util_per_cpu: 0.9", "max_util_per_cpu: 1.5", "out of range", 5, 26},
	/* the value as written, not rounded by %g to "1" (issue 13 item 12) */
	{"max_util_per_cpu: 0.9", "max_util_per_cpu: 1.0000001", "'max_util_per_cpu': 1.0000001 is out of range [0, 1]", 5, 26},
	{"max_util_per_cpu: 0.9", "max_util_per_cpu: 0", "must be > 0", 5, 26},
	{"max_util_per_cpu: 0.9", "max_util_per_cpu: 0.04", "leaves no capacity", 5, 45},
	{"runtime: 50ms", "runtime: 1s", "runtime must be smaller than period", 5, 44},
	{"runtime: 50ms", "runtime: 0ms", "must be greater than zero", 5, 54},
	{", period: 1s}", "}", "missing required key 'period'", 5, 44},
	{"fair_server:", "server:", "unknown key 'server' in dl", 5, 31},
	{"cpus: [0, 1]", "cpus: [0, 2]", "CPU 2 listed twice", 13, 7},
	{"cpus: [0, 1]", "cpus: [0, -1]", "out of range", 14, 17},
	{"cpus: [0, 1]", "cpus: []", "at least one CPU", 14, 13},
	{"cpus: [0, 1]", "cpus: 0", "'cpus' must be a sequence", 14, 13},
	{"capacity: 0.3", "capacity: 0", "'capacity' must be > 0", 15, 17},
	{"capacity: 0.3", "capacity: 17", "out of range", 15, 17},
	{"capacity: 0.3", "capacity: 0.1234567", "at most 6 decimal places", 15, 17},
	{"capacity: 0.3", "capacity: fast", "not a number", 15, 17},
	{"{freq: 2000MHz, busy: 2W", "{freq: 1000MHz, busy: 2W", "strictly increasing", 12, 11},
	{"busy: 300mW, idle: 95mW", "busy: 30mW, idle: 95mW", "busy power must be >= idle power", 17, 11},
	{"busy: 300mW, idle: 95mW}", "busy: 300mW}", "missing required key 'idle'", 17, 11},
	{"busy: 300mW, idle: 95mW", "busy: 300mW, idle: 95mW, volt: 1", "unknown key 'volt' in an OPP", 17, 52},
	{"freq: 1400MHz", "freq: 0MHz", "must be greater than zero", 17, 18},
	{"freq: 1400MHz", "freq: 1400.0001MHz", "invalid value", 17, 18},
	{"      opps:\n        - {freq: 1400MHz, busy: 300mW, idle: 95mW}\n", "      opps: []\n", "at least one operating point", 16, 13},
	{"    - name: little\n", "    - name: big\n", "duplicate name 'big' (first at line 7)", 13, 7},
	{"{name: gpu0,", "{name: little,", "duplicate name 'little'", 19, 7},
	{"kind: gpu", "kind: npu", "unknown accelerator kind 'npu'", 19, 26},
	{"kind: gpu,", "kind: gpu, slots: 2,", "'slots' does not apply to a gpu accelerator", 19, 31},
	{"devfreq: 17000000.gv11b, opps: [{freq: 1377MHz, busy: 6W, idle: 0.5W}]", "devfreq: x", "missing required key 'opps'", 19, 7},
	{"slots: 2,", "", "missing required key 'slots'", 20, 7},
	{"slots: 2", "slots: 0", "out of range", 20, 37},
	{"slots: 2", "slots: two", "not an integer", 20, 37},
	{"manager: fpga0}", "manager: fpga0, opps: []}", "'opps' does not apply to a fpga accelerator", 20, 100},
	{"reconfig_time: 22.664ms", "reconfig_time: 22.664", "missing unit", 20, 55},
	{"rail: VCCINT, ", "", "missing required key 'rail'", 22, 7},
	{"measures: pl}", "measures: pl, scale: 0}", "'scale' must be > 0", 22, 95},
	{"measures: pl}", "measures: pl, unit: mW}", "unknown key 'unit' in a sensor", 22, 88},
	{"  islands:\n", "  islands: {}\n  x:\n", "'islands' must be a sequence", 6, 12},
	{"name: tiny", "name: \"\"", "'name' must not be empty", 2, 9},
	{"    - name: little\n", "    - name: lit tle\n", "'name' 'lit tle' must be at most 63 letters", 13, 13},
	{"      capacity: 0.3\n", "      capacity: 0.3\n      policy: ../../etc\n", "'policy' '../../etc' must be a plain file name", 16, 15},
	{"devfreq: 17000000.gv11b", "devfreq: a/b", "'devfreq' 'a/b' must be a plain file name", 19, 40},
	{"manager: fpga0", "manager: .hidden", "'manager' '.hidden' must be a plain file name", 20, 93},
	{"rail: VCCINT", "rail: \"VCC INT\"", "'rail' 'VCC INT' must be at most 63 letters", 22, 66},
	{"period: 1s}}", "period: 1s}, job_overhead: 200ms}", "'job_overhead' must be at most 100ms", 5, 87},
	{"period: 1s}}", "period: 1s}, job_overhead: 200}", "missing unit", 5, 87},
	{"period: 1s}}", "period: 1s}, job_overhead: -5us}", "negative", 5, 87},
	{"period: 1s}}", "period: 1s}, budget_margin: 1}", "'budget_margin' must be < 1", 5, 88},
	{"period: 1s}}", "period: 1s}, budget_margin: -0.1}", "out of range", 5, 88},
	{"period: 1s}}", "period: 1s}, budget_margin: 0.1234567}", "at most 6 decimal places", 5, 88},
	{"period: 1s}}", "period: 1s}, budget_margin: 5%}", "not a number", 5, 88},
	{"      capacity: 0.3\n", "      capacity: 0.3\n      job_overhead: fast\n", "job_overhead", 16, 21},
};

START_TEST(rule_reported_with_position)
{
	const struct rule *r = &rules[_i];
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = load_text(mutate(r->from, r->to), &d);
	ck_assert_ptr_null(p);
	bool found = false;
	for (size_t i = 0; i < d.n; i++)
		if (strstr(d.v[i].msg, r->msg)) {
			found = true;
			ck_assert_msg(d.v[i].loc.line == r->line && d.v[i].loc.col == r->col,
				      "rule %d '%s' at %d:%d, expected %d:%d", _i, r->msg, d.v[i].loc.line,
				      d.v[i].loc.col, r->line, r->col);
			ck_assert_ptr_nonnull(d.v[i].loc.file);
			ck_assert(strstr(d.v[i].loc.file, "p.yaml") != NULL);
		}
	if (!found)
		pd_diags_print(&d, stderr);
	ck_assert_msg(found, "rule %d: no diagnostic containing '%s'", _i, r->msg);
	pd_diags_free(&d);
}
END_TEST

START_TEST(every_problem_reported)
{
	const char *text = "platform:\n"
			   "  name: many\n"
			   "  reference_frequency: fast\n"
			   "  islands:\n"
			   "    - {name: a, cpus: [0], capacity: 0, opps: [{freq: 2GHz, busy: 1W, idle: 2W}]}\n"
			   "    - {name: a, cpus: [0], opps: [{freq: 2GHz, busy: 1W, idle: 0W}, {freq: 1GHz, busy: 1W, idle: 0W}]}\n"
			   "  sensors:\n"
			   "    - {device: d, channel: c, rail: R}\n"
			   "    - {device: d, channel: c, rail: R}\n";
	pd_diags d;
	pd_diags_init(&d);
	ck_assert_ptr_null(load_text(text, &d));
	/* frequency, capacity, busy<idle, duplicate name, CPU twice, non-increasing OPPs, rail twice */
	ck_assert_uint_eq(d.n, 7);
	pd_diags_free(&d);
}
END_TEST

START_TEST(not_a_platform)
{
	pd_diags d;
	pd_diags_init(&d);
	ck_assert_ptr_null(load_text("dags: []\n", &d));
	ck_assert_uint_eq(d.n, 1);
	ck_assert(strstr(d.v[0].msg, "not a platform file"));
	pd_diags_free(&d);
	pd_diags_init(&d);
	ck_assert_ptr_null(load_text("", &d));
	ck_assert_uint_ge(d.n, 1);
	pd_diags_free(&d);
	pd_diags_init(&d);
	ck_assert_ptr_null(pd_platform_load_file("/nonexistent/x.yaml", &d));
	ck_assert_uint_eq(d.n, 1);
	pd_diags_free(&d);
}
END_TEST

/* Defaults are written out explicitly and the output reads back to the same bytes. */
START_TEST(emit_is_canonical)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = load_text(GOOD, &d);
	ck_assert_ptr_nonnull(p);
	char *t1 = emit_text(p);
	ck_assert(strstr(t1, "reference_frequency: 2000MHz\n"));
	ck_assert(strstr(t1, "policy: policy2\n"));
	ck_assert(strstr(t1, "- {freq: 1400MHz, busy: 300mW, idle: 95mW}\n"));
	ck_assert(strstr(t1, "scale: 0.001}"));
	pd_platform *q = load_text(t1, &d);
	ck_assert_ptr_nonnull(q);
	char *t2 = emit_text(q);
	ck_assert_str_eq(t1, t2);
	free(t1);
	free(t2);
	pd_platform_free(p);
	pd_platform_free(q);
	pd_diags_free(&d);
}
END_TEST

/* job_overhead and budget_margin are written only when given, and read back to the same bytes. */
START_TEST(overhead_keys_round_trip)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = load_text(GOOD, &d);
	ck_assert_ptr_nonnull(p);
	char *t0 = emit_text(p);
	ck_assert_ptr_null(strstr(t0, "job_overhead"));
	ck_assert_ptr_null(strstr(t0, "budget_margin"));
	ck_assert(!pd_platform_dl(p)->has_job_overhead && !pd_platform_dl(p)->has_budget_margin);
	pd_platform_free(p);
	p = load_text(mutate("period: 1s}}", "period: 1s}, job_overhead: 35.5us, budget_margin: 0.05}"), &d);
	ck_assert_ptr_nonnull(p);
	ck_assert(pd_platform_dl(p)->has_job_overhead);
	ck_assert_int_eq(pd_platform_dl(p)->job_overhead_ns, 35500);
	ck_assert_double_eq(pd_platform_dl(p)->budget_margin, 0.05);
	ck_assert_int_eq(pd_platform_set_job_overhead(p, 1, 7000), 0);
	ck_assert_int_eq(pd_platform_set_job_overhead(p, 2, 7000), -1);
	ck_assert_int_eq(pd_platform_set_job_overhead(p, 0, -1), -1);
	ck_assert_int_eq(pd_platform_set_budget_margin(p, 1.0), -1);
	ck_assert_int_eq(pd_platform_set_budget_margin(p, 0.1234567), -1);
	char *t1 = emit_text(p);
	ck_assert(strstr(t1, "    job_overhead: 35.5us\n    budget_margin: 0.05\n  islands:"));
	ck_assert(strstr(t1, "    policy: policy0\n    job_overhead: 7us\n    opps:"));
	pd_platform *q = load_text(t1, &d);
	ck_assert_ptr_nonnull(q);
	ck_assert(!pd_platform_island(q, 0)->has_job_overhead);
	ck_assert_int_eq(pd_platform_island(q, 1)->job_overhead_ns, 7000);
	char *t2 = emit_text(q);
	ck_assert_str_eq(t1, t2);
	free(t0);
	free(t1);
	free(t2);
	pd_platform_free(p);
	pd_platform_free(q);
	pd_diags_free(&d);
}
END_TEST

/* provenance (written by profile): accepted, kept, written back unchanged; a wrong shape is an
 * error with its position; the model ignores it. */
START_TEST(provenance_round_trip)
{
	pd_diags d;
	pd_diags_init(&d);
	const char *prov = "    - {uri: \"local:\", device: ina226-u79, channel: power2, rail: VCCINT, measures: pl}\n"
			   "  provenance:\n"
			   "    board: ssh://root@10.0.0.2:22\n"
			   "    kernel_version: '#1 SMP'\n"
			   "    seconds: 95.2\n"
			   "    values:\n"
			   "      - {what: islands.big.job_overhead, value: 35us, quantile: 0.999, samples: 2000}\n"
			   "      - {what: islands.big.opps.1000MHz.idle, value: '100', samples: 50}\n"
			   "    flags: [island little measured capacity 0.29]\n";
	pd_platform *p = load_text(mutate("    - {uri: \"local:\", device: ina226-u79, channel: power2, rail: VCCINT, measures: pl}\n", prov), &d);
	ck_assert_msg(p != NULL, "%s", d.n ? d.v[0].msg : "");
	const pd_ynode *pv = pd_platform_provenance(p);
	ck_assert_ptr_nonnull(pv);
	ck_assert_str_eq(pd_ymap_get(pv, "board")->str, "ssh://root@10.0.0.2:22");
	char *t1 = emit_text(p);
	ck_assert(strstr(t1, "  provenance:\n    board: ssh://root@10.0.0.2:22\n    kernel_version: '#1 SMP'\n    seconds: 95.2\n"));
	ck_assert(strstr(t1, "- {what: islands.big.job_overhead, value: 35us, quantile: 0.999, samples: 2000}\n"));
	ck_assert(strstr(t1, "value: \"100\"")); /* a quoted number stays a string */
	pd_platform *q = load_text(t1, &d);
	ck_assert_ptr_nonnull(q);
	char *t2 = emit_text(q);
	ck_assert_str_eq(t1, t2);
	/* setting replaces it; NULL removes it */
	ck_assert_int_eq(pd_platform_set_provenance(q, NULL), 0);
	char *t3 = emit_text(q);
	ck_assert_ptr_null(strstr(t3, "provenance"));
	/* the OPP power setters keep busy >= idle >= 0 */
	ck_assert_int_eq(pd_platform_set_opp_power(q, 0, 1, 1900000, 390000), 0);
	ck_assert_int_eq(pd_platform_island(q, 0)->opps[1].busy_uw, 1900000);
	ck_assert_int_eq(pd_platform_set_opp_power(q, 0, 1, 100, 200), -1);
	ck_assert_int_eq(pd_platform_set_opp_power(q, 0, 2, 200, 100), -1);
	ck_assert_int_eq(pd_platform_set_gpu_opp_power(q, 0, 0, 7000000, 600000), 0);
	ck_assert_int_eq(pd_platform_set_gpu_opp_power(q, 1, 0, 7000000, 600000), -1); /* pl is an FPGA */
	free(t1), free(t2), free(t3);
	pd_platform_free(p);
	pd_platform_free(q);
	/* a nested mapping is refused with its position */
	pd_diags_free(&d);
	pd_diags_init(&d);
	p = load_text(mutate("    - {uri: \"local:\", device: ina226-u79, channel: power2, rail: VCCINT, measures: pl}\n",
			     "    - {uri: \"local:\", device: ina226-u79, channel: power2, rail: VCCINT, measures: pl}\n"
			     "  provenance: {values: [{what: x, deep: {a: 1}}]}\n"),
		      &d);
	ck_assert_ptr_null(p);
	ck_assert_uint_ge(d.n, 1);
	ck_assert_ptr_nonnull(strstr(d.v[0].msg, "provenance.values"));
	ck_assert_int_eq(d.v[0].loc.line, 23);
	pd_diags_free(&d);
}
END_TEST

START_TEST(write_file_round_trip)
{
	pd_diags d;
	pd_err e = {0};
	pd_diags_init(&d);
	pd_platform *p = load_text(GOOD, &d);
	const char *out = pd_test_write(pd_test_tmpdir(), "w.yaml", "");
	char path[4096];
	snprintf(path, sizeof(path), "%s", out);
	ck_assert_int_eq(pd_platform_write_file(p, path, &e), 0);
	pd_platform *q = pd_platform_load_file(path, &d);
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq(pd_platform_island(q, 1)->n_opps, 1);
	ck_assert_double_eq(pd_platform_island(q, 1)->capacity, 0.3);
	pd_platform_free(p);
	pd_platform_free(q);
	pd_diags_free(&d);
}
END_TEST

static pd_platform *board(const char *name)
{
	pd_diags d;
	char rel[128];
	pd_diags_init(&d);
	snprintf(rel, sizeof(rel), "platforms/%s.yaml", name);
	pd_platform *p = pd_platform_load_file(pd_test_src(rel), &d);
	pd_diags_print(&d, stderr);
	ck_assert_msg(p != NULL, "%s does not validate", rel);
	pd_diags_free(&d);
	char *t1 = emit_text(p);
	pd_diags_init(&d);
	pd_platform *q = load_text(t1, &d);
	ck_assert_ptr_nonnull(q);
	char *t2 = emit_text(q);
	ck_assert_str_eq(t1, t2);
	free(t1);
	free(t2);
	pd_platform_free(q);
	pd_diags_free(&d);
	return p;
}

START_TEST(board_zcu102)
{
	pd_platform *p = board("zcu102");
	ck_assert_uint_eq(pd_platform_island_count(p), 1);
	const struct pd_island *k = pd_platform_island(p, 0);
	ck_assert_uint_eq(k->n_cpus, 4);
	ck_assert_uint_eq(k->n_opps, 4);
	ck_assert_int_eq(k->opps[0].freq_khz, 299999);
	ck_assert_int_eq(k->opps[3].freq_khz, 1199999);
	ck_assert_int_eq(k->opps[3].busy_uw - k->opps[3].idle_uw, 141000); /* measured per busy core */
	ck_assert_int_eq(k->opps[0].busy_uw - k->opps[0].idle_uw, 38000);
	ck_assert_double_eq(k->capacity, 1.0);
	long pl = pd_platform_find_accel(p, "pl");
	ck_assert_int_ge(pl, 0);
	const struct pd_accelerator *a = pd_platform_accel(p, (size_t)pl);
	ck_assert_int_eq(a->kind, PD_ACCEL_FPGA);
	ck_assert_int_ge(a->slots, 1);
	ck_assert_int_eq(a->reconfig_ns, 22664000);
	ck_assert_int_eq(a->idle_uw, 812000);
	ck_assert_uint_eq(pd_platform_sensor_count(p), 18);
	bool vccint = false;
	for (size_t s = 0; s < 18; s++) {
		const struct pd_sensor *x = pd_platform_sensor(p, s);
		ck_assert(strncmp(x->device, "ina226-u", 8) == 0);
		ck_assert_str_eq(x->channel, "power2");
		if (strcmp(x->rail, "VCCINT") == 0)
			vccint = strcmp(x->device, "ina226-u79") == 0 && strcmp(x->measures, "pl") == 0;
	}
	ck_assert(vccint);
	ck_assert(!pd_platform_dl(p)->has_fair_server);
	pd_platform_free(p);
}
END_TEST

START_TEST(board_xavier)
{
	pd_platform *p = board("xavier-agx");
	ck_assert_uint_eq(pd_platform_island_count(p), 4);
	ck_assert_uint_eq(pd_platform_core_count(p), 8);
	for (size_t k = 0; k < 4; k++) {
		const struct pd_island *isl = pd_platform_island(p, k);
		ck_assert_uint_eq(isl->n_opps, 29);
		ck_assert_int_eq(isl->opps[0].freq_khz, 115200);
		ck_assert_int_eq(isl->opps[28].freq_khz, 2265600);
		ck_assert_int_eq(isl->cpus[0], (int)(2 * k));
	}
	ck_assert_str_eq(pd_platform_island(p, 3)->policy, "policy6");
	ck_assert_int_eq(pd_platform_ref_freq_khz(p), 2265600);
	const struct pd_accelerator *g = pd_platform_accel(p, 0);
	ck_assert_int_eq(g->kind, PD_ACCEL_GPU);
	ck_assert_str_eq(g->devfreq, "17000000.gv11b");
	ck_assert_uint_eq(g->n_opps, 14);
	ck_assert_int_eq(g->opps[0].freq_khz, 114750);
	ck_assert_int_eq(g->opps[13].freq_khz, 1377000);
	ck_assert_uint_eq(pd_platform_sensor_count(p), 6);
	ck_assert_str_eq(pd_platform_sensor(p, 0)->rail, "GPU");
	ck_assert_str_eq(pd_platform_sensor(p, 5)->rail, "SYS5V");
	ck_assert(!pd_platform_dl(p)->has_fair_server);
	pd_platform_free(p);
}
END_TEST

START_TEST(board_xu4)
{
	pd_platform *p = board("odroid-xu4");
	long big = pd_platform_find_island(p, "big"), little = pd_platform_find_island(p, "little");
	ck_assert_int_ge(big, 0);
	ck_assert_int_ge(little, 0);
	const struct pd_island *b = pd_platform_island(p, (size_t)big), *l = pd_platform_island(p, (size_t)little);
	ck_assert_double_eq(b->capacity, 1.0);
	ck_assert_double_eq(l->capacity, 0.3);
	ck_assert_uint_eq(b->n_opps, 19);
	ck_assert_uint_eq(l->n_opps, 13);
	ck_assert_int_eq(b->opps[18].busy_uw, 1982000);
	ck_assert_int_eq(b->opps[18].idle_uw, 411000);
	ck_assert_int_eq(l->opps[12].freq_khz, 1400000);
	ck_assert_int_eq(l->opps[12].busy_uw, 297000);
	ck_assert_int_eq(pd_platform_island_of_cpu(p, 5), big);
	ck_assert_int_eq(pd_platform_ref_freq_khz(p), 2000000);
	ck_assert(pd_platform_dl(p)->has_fair_server);
	ck_assert_double_eq_tol(pd_platform_core_capacity(p), 0.90, 1e-12);
	ck_assert_uint_eq(pd_platform_accel_count(p), 0);
	ck_assert(strncmp(pd_platform_sensor(p, 0)->uri, "ip:", 3) == 0);
	pd_platform_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("platforms_parse");
	TCase *tc = tcase_create("parse");
	tcase_add_test(tc, good_platform_values);
	tcase_add_loop_test(tc, rule_reported_with_position, 0, (int)(sizeof(rules) / sizeof(rules[0])));
	tcase_add_test(tc, every_problem_reported);
	tcase_add_test(tc, not_a_platform);
	tcase_add_test(tc, emit_is_canonical);
	tcase_add_test(tc, overhead_keys_round_trip);
	tcase_add_test(tc, write_file_round_trip);
	tcase_add_test(tc, provenance_round_trip);
	tcase_add_test(tc, board_zcu102);
	tcase_add_test(tc, board_xavier);
	tcase_add_test(tc, board_xu4);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
