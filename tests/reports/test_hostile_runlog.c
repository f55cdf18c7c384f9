/* SPDX-License-Identifier: MIT */
/*
 * Hostile run logs (issue 13 item 3): checksum-valid records that lie. Each log is the synthetic run
 * directory's header (helper_rundir.h) followed by records written here byte by byte, each with a
 * correct CRC, so the frame layer accepts them all and only the reader's own checks stand between
 * them and the two consumers: `powerdag-agent dump` (pd_runlog_dump, every view) and `powerdag
 * report` (every form). One test per bug class: index out of range (task, DAG, rail, OPP), extreme
 * times (signed overflow of end - start, finish - release, sums of gaps), extreme power values (sum
 * of the rails of a tick), an empty power record on a log without rails (a copy into NULL), and
 * saturating drop counts. Run under the ASan/UBSan build these tests also prove the absence of
 * undefined behaviour on these inputs.
 */
#include "runlog/pd_runlog.h"
#include "helper_rundir.h"
#include "pd_test.h"
#include "reports/pd_reports.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lg {
	unsigned char *b;
	size_t n, cap;
};

static void put(struct lg *l, const void *p, size_t n)
{
	if (l->n + n > l->cap) {
		l->cap = (l->n + n) * 2;
		l->b = realloc(l->b, l->cap);
		ck_assert_ptr_nonnull(l->b);
	}
	memcpy(l->b + l->n, p, n);
	l->n += n;
}

/* One frame, little endian as documented in docs/RUNLOG.md, with its CRC. */
static void rec(struct lg *l, uint16_t type, const void *payload, uint32_t len)
{
	unsigned char h[8] = {(unsigned char)len, (unsigned char)(len >> 8), (unsigned char)(len >> 16),
			      (unsigned char)(len >> 24), (unsigned char)type, (unsigned char)(type >> 8), 0, 0};
	size_t at = l->n;
	put(l, h, 8);
	put(l, payload, len);
	uint32_t crc = pd_runlog_crc32(0, l->b + at, 8 + len);
	unsigned char c[4] = {(unsigned char)crc, (unsigned char)(crc >> 8), (unsigned char)(crc >> 16),
			      (unsigned char)(crc >> 24)};
	put(l, c, 4);
}

static void power(struct lg *l, int64_t t, uint32_t first, uint32_t n, int64_t v)
{
	unsigned char p[sizeof(struct pd_runlog_power_rec) + 8 * 8];
	struct pd_runlog_power_rec h = {.t_ns = t, .first_rail = first, .n = n};
	memcpy(p, &h, sizeof(h));
	for (uint32_t k = 0; k < n && k < 8; k++)
		memcpy(p + sizeof(h) + 8 * k, &v, 8);
	rec(l, PD_RUNLOG_POWER, p, (uint32_t)(sizeof(h) + 8 * (n < 8 ? n : 8)));
}

static void steal_sampled(struct syn_run *s)
{
	s->steal_sampled = true;
}

static void busy_sampled(struct syn_run *s)
{
	s->busy_sampled = true;
}

/* The synthetic run directory with its run.pdlog replaced by the header line plus l's records; its
 * header says steal was sampled when steal is true. */
static struct syn_run *hostile_dir_steal(const struct lg *l, bool steal)
{
	struct syn_run *s = calloc(1, sizeof(*s));
	s->pick_steal = steal ? steal_sampled : NULL;
	syn_write(s);
	char path[512], *data;
	size_t len;
	pd_err e = {0};
	snprintf(path, sizeof(path), "%s/run.pdlog", s->dir);
	ck_assert_int_eq(pd_read_file(path, &data, &len, 0, &e), 0);
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	fwrite(data, 1, s->header_bytes, f);
	fwrite(l->b, 1, l->n, f);
	fclose(f);
	free(data);
	return s;
}

static struct syn_run *hostile_dir(const struct lg *l)
{
	return hostile_dir_steal(l, false);
}

static void free_dir(struct syn_run *s)
{
	free((char *)s->dir);
	free(s);
}

/* Reads the log, dumps every view (to a file) and checks how many records were kept and refused. */
static pd_runlog *dump_all(const struct syn_run *s, size_t want_invalid)
{
	char path[512];
	pd_err e = {0};
	snprintf(path, sizeof(path), "%s/run.pdlog", s->dir);
	pd_runlog *r = pd_runlog_open(path, &e);
	ck_assert_msg(r, "%s", e.msg);
	ck_assert_uint_eq(pd_runlog_invalid_records(r), want_invalid);
	FILE *o = tmpfile();
	ck_assert_ptr_nonnull(o);
	static const char *const views[] = {"summary", "instances", "jobs", "power", "gaps", "steal", "busy"};
	for (size_t i = 0; i < 7; i++)
		ck_assert_int_eq(pd_runlog_dump(r, o, views[i]), 0);
	fclose(o);
	return r;
}

/* Loads the report and writes every form; returns its text. */
static char *report_all(const struct syn_run *s)
{
	pd_err e = {0};
	pd_report *rep = pd_report_open(s->dir, &e);
	ck_assert_msg(rep, "%s", e.msg);
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_report_json(rep, &b, &e), 0);
	b.len = 0;
	ck_assert_int_eq(pd_report_text(rep, &b, &e), 0);
	char p[512];
	snprintf(p, sizeof(p), "%s/r.html", s->dir);
	ck_assert_msg(pd_report_write_html(rep, p, &e) == 0, "%s", e.msg);
	snprintf(p, sizeof(p), "%s/trace.json", s->dir);
	ck_assert_msg(pd_report_write_perfetto(rep, p, &e) == 0, "%s", e.msg);
	snprintf(p, sizeof(p), "%s/csv", s->dir);
	ck_assert_msg(pd_report_write_csv(rep, p, &e) == 0, "%s", e.msg);
	pd_report_free(rep);
	return b.data;
}

START_TEST(index_out_of_range)
{
	struct lg l = {0};
	struct pd_runlog_instance_rec in = {.dag = 1000, .seq = 0, .release_ns = 0, .finish_ns = 10, .response_ns = 10};
	rec(&l, PD_RUNLOG_INSTANCE, &in, sizeof(in));
	struct pd_runlog_job_rec j = {.task = UINT32_MAX, .start_ns = 1, .end_ns = 2, .cpu_ns = 1};
	rec(&l, PD_RUNLOG_JOB, &j, sizeof(j));
	struct pd_runlog_gap_rec g = {.rail = 99, .start_ns = 0, .end_ns = 10};
	rec(&l, PD_RUNLOG_GAP, &g, sizeof(g));
	power(&l, 5, 2, 2, 1000); /* rails 2..3 of 3 */
	struct pd_runlog_opp_rec o = {.kind = PD_RUNLOG_OPP_ACCEL, .index = 1000, .t_ns = 0, .freq_khz = 5};
	rec(&l, PD_RUNLOG_OPP, &o, sizeof(o));
	struct pd_runlog_instance_rec ok = {.dag = 0, .seq = 0, .release_ns = 0, .finish_ns = 10, .response_ns = 10};
	rec(&l, PD_RUNLOG_INSTANCE, &ok, sizeof(ok));
	struct pd_runlog_end_rec end = {.t_ns = 100};
	rec(&l, PD_RUNLOG_END, &end, sizeof(end));
	struct syn_run *s = hostile_dir(&l);
	pd_runlog *r = dump_all(s, 4); /* the OPP index is the report's to check (header arrays) */
	ck_assert_uint_eq(pd_runlog_instance_count(r), 1);
	ck_assert_uint_eq(pd_runlog_job_count(r), 0);
	ck_assert_uint_eq(pd_runlog_gap_count(r), 0);
	ck_assert_uint_eq(pd_runlog_power_count(r), 0);
	pd_runlog_free(r);
	char *text = report_all(s);
	ck_assert_msg(strstr(text, "4 records with an index or a value out of range were skipped"), "%s", text);
	free(text);
	free(l.b);
	free_dir(s);
}
END_TEST

START_TEST(extreme_times)
{
	struct lg l = {0};
	struct pd_runlog_instance_rec in = {.dag = 0, .seq = UINT64_MAX, .release_ns = INT64_MIN, .finish_ns = INT64_MAX,
				    .response_ns = INT64_MAX};
	rec(&l, PD_RUNLOG_INSTANCE, &in, sizeof(in));
	struct pd_runlog_job_rec j = {.task = 0, .release_ns = INT64_MIN, .start_ns = INT64_MIN, .end_ns = INT64_MAX,
			      .cpu_ns = INT64_MIN, .demand_ns = 1};
	rec(&l, PD_RUNLOG_JOB, &j, sizeof(j));
	struct pd_runlog_gap_rec g = {.rail = 0, .start_ns = INT64_MIN, .end_ns = INT64_MAX};
	rec(&l, PD_RUNLOG_GAP, &g, sizeof(g));
	power(&l, INT64_MIN, 0, 3, 1000);
	/* at the limit: kept, and every difference and sum the report takes still fits */
	const int64_t M = PD_RUNLOG_MAX_ABS_NS;
	struct pd_runlog_instance_rec in2 = {.dag = 1, .seq = 0, .release_ns = -M, .finish_ns = M, .response_ns = M};
	rec(&l, PD_RUNLOG_INSTANCE, &in2, sizeof(in2));
	struct pd_runlog_job_rec j2 = {.task = 0, .release_ns = -M, .start_ns = -M, .end_ns = M, .cpu_ns = M, .demand_ns = M};
	rec(&l, PD_RUNLOG_JOB, &j2, sizeof(j2));
	for (int i = 0; i < 8; i++) { /* overlapping logged gaps: their total must not wrap */
		struct pd_runlog_gap_rec g2 = {.rail = 1, .start_ns = -M, .end_ns = M};
		rec(&l, PD_RUNLOG_GAP, &g2, sizeof(g2));
	}
	power(&l, -M, 0, 3, 1000);
	power(&l, M, 0, 3, 2000);
	struct pd_runlog_end_rec end = {.t_ns = INT64_MAX};
	rec(&l, PD_RUNLOG_END, &end, sizeof(end));
	struct syn_run *s = hostile_dir(&l);
	pd_runlog *r = dump_all(s, 5);
	ck_assert_uint_eq(pd_runlog_instance_count(r), 1);
	ck_assert_uint_eq(pd_runlog_job_count(r), 1);
	ck_assert_uint_eq(pd_runlog_gap_count(r), 8);
	ck_assert_uint_eq(pd_runlog_power_count(r), 2);
	ck_assert_ptr_null(pd_runlog_end(r)); /* END at INT64_MAX refused: the run did not end cleanly */
	pd_runlog_free(r);
	free(report_all(s));
	free(l.b);
	free_dir(s);
}
END_TEST

START_TEST(extreme_power)
{
	struct lg l = {0};
	power(&l, 0, 0, 3, INT64_MAX);
	power(&l, 1, 0, 3, INT64_MIN + 1);
	power(&l, 2, 0, 3, PD_RUNLOG_MAX_ABS_UW); /* kept: 3 rails at the limit still sum within int64_t */
	power(&l, 3, 0, 3, PD_RUNLOG_MAX_ABS_UW);
	struct pd_runlog_drop_rec d = {.count = UINT64_MAX};
	rec(&l, PD_RUNLOG_DROP, &d, sizeof(d));
	rec(&l, PD_RUNLOG_DROP, &d, sizeof(d));
	struct pd_runlog_end_rec end = {.t_ns = 10, .dropped_records = UINT64_MAX};
	rec(&l, PD_RUNLOG_END, &end, sizeof(end));
	struct syn_run *s = hostile_dir(&l);
	pd_runlog *r = dump_all(s, 2);
	ck_assert_uint_eq(pd_runlog_power_count(r), 2);
	ck_assert_uint_eq(pd_runlog_ring_drops(r), UINT64_MAX); /* saturates, never wraps to a small count */
	pd_runlog_free(r);
	char *text = report_all(s);
	ck_assert_msg(strstr(text, "18446744073709551615 records"), "%s", text);
	free(text);
	free(l.b);
	free_dir(s);
}
END_TEST

/* A log without rails whose power record is empty: the reader once copied 0 bytes into a NULL row
 * (undefined even for 0 bytes). */
START_TEST(empty_power_no_rails)
{
	static const char hdr[] = "{\"format\":\"powerdag-runlog\",\"version\":1,\"dags\":[{\"name\":\"g\"}],"
				  "\"tasks\":[],\"rails\":[]}\n";
	struct lg l = {0};
	put(&l, hdr, sizeof(hdr) - 1);
	power(&l, 0, 0, 0, 0);
	struct pd_runlog_instance_rec in = {.dag = 0, .finish_ns = 1, .response_ns = 1};
	rec(&l, PD_RUNLOG_INSTANCE, &in, sizeof(in));
	in.dag = 1;
	rec(&l, PD_RUNLOG_INSTANCE, &in, sizeof(in));
	pd_err e = {0};
	pd_runlog *r = pd_runlog_from_bytes(l.b, l.n, "t", &e);
	ck_assert_msg(r, "%s", e.msg);
	ck_assert_uint_eq(pd_runlog_invalid_records(r), 2);
	ck_assert_uint_eq(pd_runlog_power_count(r), 0);
	ck_assert_uint_eq(pd_runlog_instance_count(r), 1);
	FILE *o = tmpfile();
	for (const char *v = "summary"; v; v = strcmp(v, "summary") == 0 ? "instances" : strcmp(v, "instances") == 0 ? "power" : NULL)
		ck_assert_int_eq(pd_runlog_dump(r, o, v), 0);
	fclose(o);
	pd_runlog_free(r);
	free(l.b);
}
END_TEST

/* STEAL records at and beyond the limits: the reader refuses those beyond, the report's total
 * saturates instead of wrapping, and a miss window at the edge of time still meets a record. */
START_TEST(extreme_steal)
{
	struct lg l = {0};
	const int64_t M = PD_RUNLOG_MAX_ABS_NS;
	struct pd_runlog_steal_rec bad[3] = {{.from_ns = 0, .t_ns = 1, .steal_ns = INT64_MAX, .cpu = 0},
				      {.from_ns = 2, .t_ns = 1, .steal_ns = 1, .cpu = 0},
				      {.from_ns = 0, .t_ns = 1, .steal_ns = 1, .cpu = INT32_MIN}};
	for (int i = 0; i < 3; i++)
		rec(&l, PD_RUNLOG_STEAL, &bad[i], sizeof(bad[i]));
	for (int i = 0; i < 16; i++) { /* 16 x 2^60 ns: the sum must not wrap */
		struct pd_runlog_steal_rec st = {.from_ns = -M, .t_ns = M, .steal_ns = M, .cpu = 0};
		rec(&l, PD_RUNLOG_STEAL, &st, sizeof(st));
	}
	/* cam (cpu0) missed at the edge of time: its window [M, M + D] still meets (-M, M] */
	struct pd_runlog_instance_rec in = {.dag = 0, .miss = 1, .seq = 0, .release_ns = M, .finish_ns = -1, .response_ns = -1};
	rec(&l, PD_RUNLOG_INSTANCE, &in, sizeof(in));
	struct pd_runlog_end_rec end = {.t_ns = 100};
	rec(&l, PD_RUNLOG_END, &end, sizeof(end));
	struct syn_run *s = hostile_dir_steal(&l, true);
	pd_runlog *r = dump_all(s, 3);
	ck_assert_uint_eq(pd_runlog_steal_count(r), 16);
	pd_runlog_free(r);
	char *text = report_all(s);
	ck_assert_msg(strstr(text, "1 of 1 misses overlap it"), "%s", text);
	free(text);
	pd_err e = {0};
	pd_report *rep = pd_report_open(s->dir, &e);
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_report_json(rep, &b, &e), 0);
	json_t *j = json_loads(b.data, 0, NULL);
	double ms = json_number_value(json_object_get(json_object_get(j, "measured"), "host_steal_ms"));
	ck_assert_msg(fabs(ms - (double)INT64_MAX / 1e6) <= 1e-9 * ms, "%.17g", ms); /* 15 digits in the JSON */
	json_decref(j);
	pd_buf_free(&b);
	pd_report_free(rep);
	free(l.b);
	free_dir(s);
}
END_TEST

/* BUSY records at and beyond the limits: the reader refuses those beyond, the dump's total saturates,
 * and the report prorates the ones it keeps over the rail's window without overflow: 16 records of
 * 2^60 ns over (-2^60, 2^60] on cpu0 put 16 x 2^60 x 1000 / 2^61 ns into the window [0, 1000). */
START_TEST(extreme_busy)
{
	struct lg l = {0};
	const int64_t M = PD_RUNLOG_MAX_ABS_NS;
	struct pd_runlog_busy_rec bad[3] = {{.from_ns = 0, .t_ns = 1, .busy_ns = INT64_MAX, .cpu = 0},
				     {.from_ns = 2, .t_ns = 1, .busy_ns = 1, .cpu = 0},
				     {.from_ns = 0, .t_ns = 1, .busy_ns = 1, .cpu = INT32_MIN}};
	for (int i = 0; i < 3; i++)
		rec(&l, PD_RUNLOG_BUSY, &bad[i], sizeof(bad[i]));
	for (int i = 0; i < 16; i++) {
		struct pd_runlog_busy_rec b = {.from_ns = -M, .t_ns = M, .busy_ns = M, .cpu = 0};
		rec(&l, PD_RUNLOG_BUSY, &b, sizeof(b));
	}
	power(&l, 0, 0, 3, 1000000);
	power(&l, 1000, 0, 3, 1000000);
	struct pd_runlog_end_rec end = {.t_ns = 1000};
	rec(&l, PD_RUNLOG_END, &end, sizeof(end));
	struct syn_run *s = calloc(1, sizeof(*s));
	s->pick_busy = busy_sampled;
	syn_write(s);
	char path[512], *data;
	size_t len;
	pd_err e = {0};
	snprintf(path, sizeof(path), "%s/run.pdlog", s->dir);
	ck_assert_int_eq(pd_read_file(path, &data, &len, 0, &e), 0);
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	fwrite(data, 1, s->header_bytes, f);
	fwrite(l.b, 1, l.n, f);
	fclose(f);
	free(data);
	pd_runlog *r = dump_all(s, 3);
	ck_assert_uint_eq(pd_runlog_busy_count(r), 16);
	pd_runlog_free(r);
	free(report_all(s));
	pd_report *rep = pd_report_open(s->dir, &e);
	ck_assert_msg(rep, "%s", e.msg);
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_report_json(rep, &b, &e), 0);
	json_t *j = json_loads(b.data, 0, NULL);
	json_t *rl = json_array_get(json_object_get(json_object_get(j, "measured"), "rail_stats"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(rl, "name")), "VDD_CPU");
	double all = json_number_value(json_object_get(rl, "measured_busy_all"));
	ck_assert_msg(fabs(all - 8.0) < 1e-9, "%.17g", all);
	json_decref(j);
	pd_buf_free(&b);
	pd_report_free(rep);
	free(l.b);
	free_dir(s);
}
END_TEST

/* A header with more rails than the reader's bound is refused as input (exit 2), not decoded. */
START_TEST(too_many_rails)
{
	pd_buf b;
	pd_buf_init(&b);
	pd_buf_printf(&b, "{\"format\":\"powerdag-runlog\",\"version\":1,\"rails\":[");
	for (int i = 0; i <= PD_RUNLOG_MAX_RAILS; i++)
		pd_buf_printf(&b, "%s{\"name\":\"r%d\"}", i ? "," : "", i);
	pd_buf_printf(&b, "]}\n");
	pd_err e = {0};
	ck_assert_ptr_null(pd_runlog_from_bytes(b.data, b.len, "t", &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	ck_assert_msg(strstr(e.msg, "4097 rails (at most 4096)"), "%s", e.msg);
	free(b.data);
}
END_TEST

/* The checked-in seeds of the run-log fuzz target (fuzz/corpus/fuzz_runlog/): real logs from the agent
 * and hostile ones; every one is read and dumped without a crash (and ASan/UBSan-clean in that build). */
START_TEST(fuzz_seeds)
{
	static const char *const seeds[] = {"twin-2s", "twin-0.5s", "twin-torn", "hostile-index", "hostile-times", "hostile-power",
					    "hostile-near-limits", "hostile-norails"};
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "fuzz/corpus/fuzz_runlog/%s.pdlog", seeds[i]);
		pd_err e = {0};
		pd_runlog *r = pd_runlog_open(pd_test_src(rel), &e);
		ck_assert_msg(r, "%s: %s", rel, e.msg);
		FILE *o = tmpfile();
		static const char *const views[] = {"summary", "instances", "jobs", "power", "gaps", "steal", "busy"};
		for (size_t v = 0; v < 7; v++)
			ck_assert_int_eq(pd_runlog_dump(r, o, views[v]), 0);
		fclose(o);
		/* the agent's own logs break no limit, nor does the log of values exactly at the limits */
		if (strncmp(seeds[i], "twin", 4) == 0 || strcmp(seeds[i], "hostile-near-limits") == 0)
			ck_assert_uint_eq(pd_runlog_invalid_records(r), 0);
		else
			ck_assert_uint_gt(pd_runlog_invalid_records(r), 0);
		pd_runlog_free(r);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hostile_runlog");
	TCase *tc = tcase_create("hostile");
	tcase_add_test(tc, index_out_of_range);
	tcase_add_test(tc, extreme_times);
	tcase_add_test(tc, extreme_power);
	tcase_add_test(tc, empty_power_no_rails);
	tcase_add_test(tc, too_many_rails);
	tcase_add_test(tc, extreme_steal);
	tcase_add_test(tc, extreme_busy);
	tcase_add_test(tc, fuzz_seeds);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
