/* SPDX-License-Identifier: MIT */
/* Run-log format: round trip of every record type, a log cut at every byte stays readable up to the
 * cut, a flipped bit stops decoding at that record, unknown types are skipped, bad headers refused. */
#include "runlog/pd_runlog.h"
#include "pd_test.h"

#include <stdlib.h>
#include <string.h>

static const char *HDR = "{\"format\":\"powerdag-runlog\",\"version\":1,\"plan_hash\":\"00000000deadbeef\","
			 "\"board\":\"b\",\"kernel\":\"k\",\"sample_hz\":100,"
			 "\"tasks\":[{\"name\":\"a\",\"dag\":\"g\",\"cpu\":0,\"runtime_ns\":5,\"deadline_ns\":6,"
			 "\"period_ns\":7,\"wcet_ns\":4,\"work\":\"builtin:busy\",\"preds\":[]}],"
			 "\"dags\":[{\"name\":\"g\",\"period_ns\":7,\"deadline_ns\":6}],"
			 "\"rails\":[{\"name\":\"r0\",\"measures\":\"cpu\"},{\"name\":\"r1\",\"measures\":\"ddr\"}]}";

/* Writes a log with n instances, n jobs, n power samples, one gap, one OPP, an unknown record and
 * an END; returns its bytes. */
static char *write_log(const char *dir, size_t n, size_t *len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/t.pdlog", dir);
	pd_err e = {0};
	pd_runlog_writer *w = pd_runlog_writer_new();
	ck_assert_ptr_nonnull(w);
	struct pd_runlog_ring *r = pd_runlog_add_ring(w, 128, 4096);
	ck_assert_int_eq(pd_runlog_writer_open(w, path, HDR, &e), 0);
	for (size_t i = 0; i < n; i++) {
		struct pd_runlog_instance_rec in = {.dag = 0, .miss = i == 3, .seq = i, .release_ns = (int64_t)i * 7,
					    .finish_ns = (int64_t)i * 7 + 3, .response_ns = 3};
		ck_assert(pd_runlog_put(r, PD_RUNLOG_INSTANCE, &in, sizeof(in)));
		struct pd_runlog_job_rec j = {.task = 0, .seq = i, .start_ns = (int64_t)i, .end_ns = (int64_t)i + 2, .cpu_ns = 2};
		ck_assert(pd_runlog_put(r, PD_RUNLOG_JOB, &j, sizeof(j)));
		unsigned char pw[sizeof(struct pd_runlog_power_rec) + 16];
		struct pd_runlog_power_rec h = {.t_ns = (int64_t)i * 10, .first_rail = 0, .n = 2};
		int64_t v[2] = {1000000 + (int64_t)i, i == 2 ? PD_RUNLOG_NO_VALUE : 250000};
		memcpy(pw, &h, sizeof(h));
		memcpy(pw + sizeof(h), v, 16);
		ck_assert(pd_runlog_put(r, PD_RUNLOG_POWER, pw, sizeof(pw)));
	}
	struct pd_runlog_gap_rec g = {.rail = 1, .err = 5, .start_ns = 20, .end_ns = 30};
	pd_runlog_put(r, PD_RUNLOG_GAP, &g, sizeof(g));
	struct pd_runlog_opp_rec o = {.kind = PD_RUNLOG_OPP_ISLAND, .index = 0, .freq_khz = 1200000};
	pd_runlog_put(r, PD_RUNLOG_OPP, &o, sizeof(o));
	uint64_t future = 42;
	pd_runlog_put(r, 999, &future, sizeof(future));
	struct pd_runlog_end_rec end = {.t_ns = 1000};
	ck_assert_int_eq(pd_runlog_writer_close(w, &end, &e), 0);
	char *data;
	ck_assert_int_eq(pd_read_file(path, &data, len, 0, &e), 0);
	return data;
}

START_TEST(round_trip)
{
	size_t len;
	char *data = write_log(pd_test_tmpdir(), 10, &len);
	pd_err e = {0};
	pd_runlog *r = pd_runlog_from_bytes(data, len, "t", &e);
	ck_assert_msg(r, "%s", e.msg);
	ck_assert_int_eq(pd_runlog_version(r), 1);
	ck_assert_uint_eq(pd_runlog_plan_hash(r), 0xdeadbeefULL);
	ck_assert_str_eq(pd_runlog_meta(r, "board"), "b");
	ck_assert_uint_eq(pd_runlog_task_count(r), 1);
	ck_assert_str_eq(pd_runlog_task(r, 0)->name, "a");
	ck_assert_int_eq(pd_runlog_task(r, 0)->runtime_ns, 5);
	ck_assert_uint_eq(pd_runlog_rail_count(r), 2);
	ck_assert_str_eq(pd_runlog_rail(r, 1)->measures, "ddr");
	ck_assert_uint_eq(pd_runlog_instance_count(r), 10);
	ck_assert_uint_eq(pd_runlog_instance(r, 3)->miss, 1);
	ck_assert_int_eq(pd_runlog_instance(r, 9)->release_ns, 63);
	ck_assert_uint_eq(pd_runlog_job_count(r), 10);
	ck_assert_int_eq(pd_runlog_job(r, 4)->end_ns, 6);
	ck_assert_uint_eq(pd_runlog_power_count(r), 10);
	ck_assert_int_eq(pd_runlog_power_uw(r, 7, 0), 1000007);
	ck_assert_int_eq(pd_runlog_power_uw(r, 2, 1), PD_RUNLOG_NO_VALUE);
	ck_assert_int_eq(pd_runlog_power_t(r, 5), 50);
	ck_assert_uint_eq(pd_runlog_gap_count(r), 1);
	ck_assert_int_eq(pd_runlog_gap(r, 0)->err, 5);
	ck_assert_uint_eq(pd_runlog_opp_count(r), 1);
	ck_assert_int_eq(pd_runlog_opp(r, 0)->freq_khz, 1200000);
	ck_assert_uint_eq(pd_runlog_unknown_records(r), 1);
	ck_assert_ptr_nonnull(pd_runlog_end(r));
	ck_assert_int_eq(pd_runlog_end(r)->t_ns, 1000);
	ck_assert_uint_eq(pd_runlog_dropped_bytes(r), 0);
	ck_assert_uint_eq(pd_runlog_records(r), 10 * 3 + 4);
	pd_runlog_free(r);
	free(data);
}
END_TEST

/* Every prefix of a log decodes to a prefix of its records; the damage report accounts for every
 * byte: header + decoded frames + dropped bytes == cut length. */
START_TEST(cut_at_every_byte)
{
	size_t len;
	char *data = write_log(pd_test_tmpdir(), 6, &len);
	size_t hl = (size_t)((char *)memchr(data, '\n', len) - data) + 1;
	size_t last_records = 0;
	for (size_t cut = hl; cut <= len; cut++) {
		pd_err e = {0};
		pd_runlog *r = pd_runlog_from_bytes(data, cut, "t", &e);
		ck_assert_msg(r, "cut %zu: %s", cut, e.msg);
		size_t rec = pd_runlog_records(r);
		ck_assert_uint_ge(rec, last_records); /* monotone in the cut */
		last_records = rec;
		ck_assert_uint_le(pd_runlog_dropped_bytes(r), cut - hl);
		ck_assert_uint_le(pd_runlog_instance_count(r), 6);
		if (cut < len)
			ck_assert_ptr_null(pd_runlog_end(r));
		/* decoded values are the written ones, never garbage */
		for (size_t i = 0; i < pd_runlog_instance_count(r); i++)
			ck_assert_uint_eq(pd_runlog_instance(r, i)->seq, i);
		pd_runlog_free(r);
	}
	ck_assert_uint_eq(last_records, 6 * 3 + 4);
	/* a cut inside the header line is not a run log */
	pd_err e = {0};
	ck_assert_ptr_null(pd_runlog_from_bytes(data, hl - 1, "t", &e));
	ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	free(data);
}
END_TEST

START_TEST(corruption_stops_decoding)
{
	size_t len;
	char *data = write_log(pd_test_tmpdir(), 6, &len);
	size_t hl = (size_t)((char *)memchr(data, '\n', len) - data) + 1;
	/* flip a bit inside the 4th record's payload: 3 records survive, the rest is dropped */
	size_t off = hl;
	for (int k = 0; k < 3; k++) {
		uint32_t pl;
		memcpy(&pl, data + off, 4);
		off += 12 + pl;
	}
	data[off + 9] ^= 0x10;
	pd_err e = {0};
	pd_runlog *r = pd_runlog_from_bytes(data, len, "t", &e);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(pd_runlog_records(r), 3);
	ck_assert_uint_eq(pd_runlog_dropped_bytes(r), len - off);
	pd_runlog_free(r);
	free(data);
}
END_TEST

START_TEST(bad_headers)
{
	pd_err e = {0};
	const char *cases[] = {"not json\n", "{\"format\":\"other\",\"version\":1}\n",
			       "{\"format\":\"powerdag-runlog\",\"version\":2}\n", "[1]\n", "no newline"};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		ck_assert_ptr_null(pd_runlog_from_bytes(cases[i], strlen(cases[i]), "x", &e));
		ck_assert_int_eq(e.code, PD_EXIT_USAGE);
	}
	ck_assert_ptr_null(pd_runlog_from_bytes(cases[2], strlen(cases[2]), "x", &e));
	ck_assert_ptr_nonnull(strstr(e.msg, "version 2"));
}
END_TEST

/* The header's busy_cpus: the CPUs the agent sampled, read back in order; anything but a list of at
 * most PD_RUNLOG_MAX_CPU CPU ids 0..PD_RUNLOG_MAX_CPU - 1 is a bad header (exit 2). */
START_TEST(busy_cpus_header)
{
	pd_err e = {0};
	char hdr[4096];
	snprintf(hdr, sizeof(hdr), "%.*s,\"busy_cpus\":[3,0,5]}\n", (int)strlen(HDR) - 1, HDR);
	pd_runlog *rl = pd_runlog_from_bytes(hdr, strlen(hdr), "h", &e);
	ck_assert_msg(rl, "%s", e.msg);
	size_t n = 0;
	const int *c = pd_runlog_busy_cpus(rl, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert(c[0] == 3 && c[1] == 0 && c[2] == 5);
	pd_runlog_free(rl);
	const char *bad[] = {"\"x\"", "[-1]", "[1024]", "[1.5]", "[\"0\"]", "{}"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		snprintf(hdr, sizeof(hdr), "%.*s,\"busy_cpus\":%s}\n", (int)strlen(HDR) - 1, HDR, bad[i]);
		ck_assert_msg(!pd_runlog_from_bytes(hdr, strlen(hdr), "h", &e), "%s accepted", bad[i]);
		ck_assert_int_eq(e.code, PD_EXIT_USAGE);
		ck_assert_msg(strstr(e.msg, "busy_cpus"), "%s", e.msg);
	}
}
END_TEST

START_TEST(full_ring_drops_and_reports)
{
	const char *dir = pd_test_tmpdir();
	char path[512];
	snprintf(path, sizeof(path), "%s/d.pdlog", dir);
	pd_err e = {0};
	pd_runlog_writer *w = pd_runlog_writer_new();
	struct pd_runlog_ring *r = pd_runlog_add_ring(w, 80, 8);
	ck_assert_int_eq(pd_runlog_writer_open(w, path, HDR, &e), 0);
	struct pd_runlog_instance_rec in = {0};
	int ok = 0;
	for (int i = 0; i < 20; i++)
		ok += pd_runlog_put(r, PD_RUNLOG_INSTANCE, &in, sizeof(in));
	ck_assert_int_eq(ok, 8); /* never blocks, never overwrites */
	char big[200] = {0};
	ck_assert(!pd_runlog_put(r, PD_RUNLOG_INSTANCE, big, sizeof(big))); /* larger than a slot */
	struct pd_runlog_end_rec end = {0};
	ck_assert_int_eq(pd_runlog_writer_close(w, &end, &e), 0);
	ck_assert_uint_eq(end.dropped_records, 13);
	pd_runlog *rl = pd_runlog_open(path, &e);
	ck_assert_ptr_nonnull(rl);
	ck_assert_uint_eq(pd_runlog_instance_count(rl), 8);
	ck_assert_uint_eq(pd_runlog_ring_drops(rl), 13);
	ck_assert_uint_eq(pd_runlog_end(rl)->dropped_records, 13);
	pd_runlog_free(rl);
	/* a second run never overwrites a log */
	pd_runlog_writer *w2 = pd_runlog_writer_new();
	ck_assert_int_eq(pd_runlog_writer_open(w2, path, HDR, &e), PD_EXIT_USAGE);
	pd_runlog_writer_close(w2, NULL, NULL);
}
END_TEST

/* FOREIGN records (type 11) and the header's foreign_period_ns round-trip; the reader keeps only a
 * forward interval, a thread, a CPU and a reservation the kernel could hold; dump's CSV keeps a comm
 * with a comma in one field. */
START_TEST(foreign_records_round_trip)
{
	char hdr[2048];
	snprintf(hdr, sizeof(hdr), "%.*s,\"foreign_period_ns\":500000000}", (int)strlen(HDR) - 1, HDR);
	char path[512];
	snprintf(path, sizeof(path), "%s/f.pdlog", pd_test_tmpdir());
	pd_err e = {0};
	pd_runlog_writer *w = pd_runlog_writer_new();
	struct pd_runlog_ring *r = pd_runlog_add_ring(w, 80, 64);
	ck_assert_int_eq(pd_runlog_writer_open(w, path, hdr, &e), 0);
	struct pd_runlog_foreign_rec ok = {.from_ns = 500000000, .t_ns = 1000000000, .runtime_ns = 2000000,
					   .deadline_ns = 5000000, .period_ns = 10000000, .tid = 4242, .cpu = 1,
					   .comm = "cam,era"};
	struct pd_runlog_foreign_rec bad[5];
	for (int i = 0; i < 5; i++)
		bad[i] = ok;
	bad[0].t_ns = 1;                     /* backwards */
	bad[1].tid = 0;                      /* no thread */
	bad[2].cpu = PD_RUNLOG_MAX_CPU;      /* no such CPU */
	bad[3].runtime_ns = 6000000;         /* runtime above the deadline */
	bad[4].deadline_ns = 20000000;       /* deadline above the period */
	ck_assert_uint_eq(sizeof(ok), 64); /* the documented payload */
	ck_assert(pd_runlog_put(r, PD_RUNLOG_FOREIGN, &ok, sizeof(ok)));
	for (int i = 0; i < 5; i++)
		ck_assert(pd_runlog_put(r, PD_RUNLOG_FOREIGN, &bad[i], sizeof(bad[i])));
	struct pd_runlog_end_rec end = {.t_ns = 2000000000};
	ck_assert_int_eq(pd_runlog_writer_close(w, &end, &e), 0);
	pd_runlog *rl = pd_runlog_open(path, &e);
	ck_assert_msg(rl, "%s", e.msg);
	ck_assert_int_eq(pd_runlog_foreign_period_ns(rl), 500000000);
	ck_assert_uint_eq(pd_runlog_foreign_count(rl), 1);
	ck_assert_int_eq(pd_runlog_foreign(rl, 0)->tid, 4242);
	ck_assert_int_eq(pd_runlog_foreign(rl, 0)->runtime_ns, 2000000);
	ck_assert_uint_eq(pd_runlog_invalid_records(rl), 5);
	char *txt = NULL;
	size_t tl = 0;
	FILE *o = open_memstream(&txt, &tl);
	ck_assert_int_eq(pd_runlog_dump(rl, o, "summary"), 0);
	ck_assert_int_eq(pd_runlog_dump(rl, o, "foreign"), 0);
	fclose(o);
	ck_assert_msg(strstr(txt, "foreign_dl: 1 threads (1 records, scanned every 500 ms)\n"), "%s", txt);
	ck_assert_msg(strstr(txt, "tid,comm,cpu,from_ns,t_ns,runtime_ns,deadline_ns,period_ns\n"
				  "4242,cam_era,1,500000000,1000000000,2000000,5000000,10000000\n"),
		      "%s", txt);
	free(txt);
	pd_runlog_free(rl);
	/* a log from before the record: not scanned */
	size_t len;
	char *data = write_log(pd_test_tmpdir(), 3, &len);
	rl = pd_runlog_from_bytes(data, len, "old", &e);
	ck_assert_ptr_nonnull(rl);
	ck_assert_int_eq(pd_runlog_foreign_period_ns(rl), 0);
	txt = NULL;
	o = open_memstream(&txt, &tl);
	ck_assert_int_eq(pd_runlog_dump(rl, o, "summary"), 0);
	fclose(o);
	ck_assert_msg(strstr(txt, "foreign_dl: not scanned\n"), "%s", txt);
	free(txt);
	free(data);
	pd_runlog_free(rl);
}
END_TEST

/* STEAL records (type 9) and the header's steal_period_ns round-trip; the reader keeps only forward
 * intervals with a positive steal on a real CPU; a log from before the record reads as "not sampled". */
START_TEST(steal_records_round_trip)
{
	/* the same header with steal sampled every 100 ms */
	char hdr[2048];
	snprintf(hdr, sizeof(hdr), "%.*s,\"steal_period_ns\":100000000}", (int)strlen(HDR) - 1, HDR);
	char path[512];
	snprintf(path, sizeof(path), "%s/s.pdlog", pd_test_tmpdir());
	pd_err e = {0};
	pd_runlog_writer *w = pd_runlog_writer_new();
	struct pd_runlog_ring *r = pd_runlog_add_ring(w, 80, 64);
	ck_assert_int_eq(pd_runlog_writer_open(w, path, hdr, &e), 0);
	struct pd_runlog_steal_rec ok[2] = {{.from_ns = 100000000, .t_ns = 200000000, .steal_ns = 30000000, .cpu = 1},
				     {.from_ns = -5, .t_ns = 7, .steal_ns = 10000000, .cpu = 0}};
	struct pd_runlog_steal_rec bad[4] = {{.from_ns = 9, .t_ns = 8, .steal_ns = 1, .cpu = 0},   /* backwards */
				      {.from_ns = 0, .t_ns = 8, .steal_ns = 0, .cpu = 0},   /* nothing stolen */
				      {.from_ns = 0, .t_ns = 8, .steal_ns = 1, .cpu = -1},  /* no CPU */
				      {.from_ns = 0, .t_ns = INT64_MAX, .steal_ns = 1, .cpu = 0}}; /* beyond 2^60 */
	ck_assert_uint_eq(sizeof(ok[0]), 32); /* the documented payload */
	for (int i = 0; i < 2; i++)
		ck_assert(pd_runlog_put(r, PD_RUNLOG_STEAL, &ok[i], sizeof(ok[i])));
	for (int i = 0; i < 4; i++)
		ck_assert(pd_runlog_put(r, PD_RUNLOG_STEAL, &bad[i], sizeof(bad[i])));
	ck_assert(pd_runlog_put(r, PD_RUNLOG_STEAL, &ok[0], 16)); /* short payload: an unknown record */
	struct pd_runlog_end_rec end = {.t_ns = 300000000};
	ck_assert_int_eq(pd_runlog_writer_close(w, &end, &e), 0);
	pd_runlog *rl = pd_runlog_open(path, &e);
	ck_assert_msg(rl, "%s", e.msg);
	ck_assert_int_eq(pd_runlog_steal_period_ns(rl), 100000000);
	ck_assert_uint_eq(pd_runlog_steal_count(rl), 2);
	ck_assert_int_eq(pd_runlog_steal(rl, 0)->cpu, 1);
	ck_assert_int_eq(pd_runlog_steal(rl, 0)->from_ns, 100000000);
	ck_assert_int_eq(pd_runlog_steal(rl, 0)->t_ns, 200000000);
	ck_assert_int_eq(pd_runlog_steal(rl, 0)->steal_ns, 30000000);
	ck_assert_int_eq(pd_runlog_steal(rl, 1)->from_ns, -5);
	ck_assert_uint_eq(pd_runlog_invalid_records(rl), 4);
	ck_assert_uint_eq(pd_runlog_unknown_records(rl), 1);
	/* dump: the total and the CSV view */
	char *txt = NULL;
	size_t tl = 0;
	FILE *o = open_memstream(&txt, &tl);
	ck_assert_int_eq(pd_runlog_dump(rl, o, "summary"), 0);
	ck_assert_int_eq(pd_runlog_dump(rl, o, "steal"), 0);
	fclose(o);
	ck_assert_msg(strstr(txt, "steal_ms: 40.000 (2 records, sampled every 100 ms)\n"), "%s", txt);
	ck_assert_msg(strstr(txt, "cpu,from_ns,t_ns,steal_ns\n1,100000000,200000000,30000000\n0,-5,7,10000000\n"), "%s", txt);
	free(txt);
	pd_runlog_free(rl);

	/* a log written before the record: no steal_period_ns, no STEAL records, read as "not sampled" */
	size_t len;
	char *data = write_log(pd_test_tmpdir(), 3, &len);
	rl = pd_runlog_from_bytes(data, len, "old", &e);
	ck_assert_ptr_nonnull(rl);
	ck_assert_int_eq(pd_runlog_steal_period_ns(rl), 0);
	ck_assert_uint_eq(pd_runlog_steal_count(rl), 0);
	ck_assert_uint_eq(pd_runlog_instance_count(rl), 3);
	o = open_memstream(&txt, &tl);
	ck_assert_int_eq(pd_runlog_dump(rl, o, "summary"), 0);
	fclose(o);
	ck_assert_msg(strstr(txt, "steal_ms: not sampled\n"), "%s", txt);
	free(txt);
	pd_runlog_free(rl);
	free(data);
}
END_TEST

/* BUSY records (type 10) and the header's busy_period_ns round-trip beside STEAL with the same limits;
 * a log from before the record reads as "not sampled". */
START_TEST(busy_records_round_trip)
{
	char hdr[2048];
	snprintf(hdr, sizeof(hdr), "%.*s,\"steal_period_ns\":100000000,\"busy_period_ns\":100000000}", (int)strlen(HDR) - 1,
		 HDR);
	char path[512];
	snprintf(path, sizeof(path), "%s/b.pdlog", pd_test_tmpdir());
	pd_err e = {0};
	pd_runlog_writer *w = pd_runlog_writer_new();
	struct pd_runlog_ring *r = pd_runlog_add_ring(w, 80, 64);
	ck_assert_int_eq(pd_runlog_writer_open(w, path, hdr, &e), 0);
	struct pd_runlog_busy_rec ok[3] = {{.from_ns = 0, .t_ns = 100000000, .busy_ns = 40000000, .cpu = 2},
				    {.from_ns = 100000000, .t_ns = 200000000, .busy_ns = 2500000, .cpu = 2},
				    {.from_ns = -5, .t_ns = 7, .busy_ns = 10000000, .cpu = 0}};
	struct pd_runlog_busy_rec bad[5] = {{.from_ns = 9, .t_ns = 8, .busy_ns = 1, .cpu = 0},           /* backwards */
				     {.from_ns = 0, .t_ns = 8, .busy_ns = 0, .cpu = 0},           /* nothing */
				     {.from_ns = 0, .t_ns = 8, .busy_ns = -3, .cpu = 0},          /* negative */
				     {.from_ns = 0, .t_ns = 8, .busy_ns = 1, .cpu = -1},          /* no CPU */
				     {.from_ns = 0, .t_ns = 8, .busy_ns = INT64_MAX, .cpu = 0}};  /* beyond 2^60 */
	ck_assert_uint_eq(sizeof(ok[0]), 32); /* the documented payload */
	struct pd_runlog_steal_rec st = {.from_ns = 0, .t_ns = 100000000, .steal_ns = 10000000, .cpu = 2};
	ck_assert(pd_runlog_put(r, PD_RUNLOG_STEAL, &st, sizeof(st)));
	for (int i = 0; i < 3; i++)
		ck_assert(pd_runlog_put(r, PD_RUNLOG_BUSY, &ok[i], sizeof(ok[i])));
	for (int i = 0; i < 5; i++)
		ck_assert(pd_runlog_put(r, PD_RUNLOG_BUSY, &bad[i], sizeof(bad[i])));
	ck_assert(pd_runlog_put(r, PD_RUNLOG_BUSY, &ok[0], 24)); /* short payload: an unknown record */
	struct pd_runlog_end_rec end = {.t_ns = 300000000};
	ck_assert_int_eq(pd_runlog_writer_close(w, &end, &e), 0);
	pd_runlog *rl = pd_runlog_open(path, &e);
	ck_assert_msg(rl, "%s", e.msg);
	ck_assert_int_eq(pd_runlog_busy_period_ns(rl), 100000000);
	ck_assert_uint_eq(pd_runlog_busy_count(rl), 3);
	ck_assert_int_eq(pd_runlog_busy(rl, 0)->cpu, 2);
	ck_assert_int_eq(pd_runlog_busy(rl, 0)->from_ns, 0);
	ck_assert_int_eq(pd_runlog_busy(rl, 0)->t_ns, 100000000);
	ck_assert_int_eq(pd_runlog_busy(rl, 0)->busy_ns, 40000000);
	ck_assert_int_eq(pd_runlog_busy(rl, 1)->busy_ns, 2500000);
	ck_assert_int_eq(pd_runlog_busy(rl, 2)->from_ns, -5);
	ck_assert_int_eq(pd_runlog_busy(rl, 2)->cpu, 0);
	ck_assert_uint_eq(pd_runlog_steal_count(rl), 1); /* steal beside it, unchanged */
	ck_assert_int_eq(pd_runlog_steal(rl, 0)->steal_ns, 10000000);
	ck_assert_uint_eq(pd_runlog_invalid_records(rl), 5);
	ck_assert_uint_eq(pd_runlog_unknown_records(rl), 1);
	char *txt = NULL;
	size_t tl = 0;
	FILE *o = open_memstream(&txt, &tl);
	ck_assert_int_eq(pd_runlog_dump(rl, o, "summary"), 0);
	ck_assert_int_eq(pd_runlog_dump(rl, o, "busy"), 0);
	fclose(o);
	ck_assert_msg(strstr(txt, "busy_ms: 52.500 (3 records, sampled every 100 ms)\n"), "%s", txt);
	ck_assert_msg(strstr(txt, "steal_ms: 10.000 (1 records, sampled every 100 ms)\n"), "%s", txt);
	ck_assert_msg(strstr(txt, "cpu,from_ns,t_ns,busy_ns\n2,0,100000000,40000000\n2,100000000,200000000,2500000\n"
				  "0,-5,7,10000000\n"),
		      "%s", txt);
	free(txt);
	pd_runlog_free(rl);

	/* a log written before the record: no busy_period_ns, no BUSY records, read as "not sampled" */
	size_t len;
	char *data = write_log(pd_test_tmpdir(), 3, &len);
	rl = pd_runlog_from_bytes(data, len, "old", &e);
	ck_assert_ptr_nonnull(rl);
	ck_assert_int_eq(pd_runlog_busy_period_ns(rl), 0);
	ck_assert_uint_eq(pd_runlog_busy_count(rl), 0);
	o = open_memstream(&txt, &tl);
	ck_assert_int_eq(pd_runlog_dump(rl, o, "summary"), 0);
	ck_assert_int_eq(pd_runlog_dump(rl, o, "busy"), 0);
	fclose(o);
	ck_assert_msg(strstr(txt, "busy_ms: not sampled\n"), "%s", txt);
	ck_assert_msg(strstr(txt, "cpu,from_ns,t_ns,busy_ns\n") && txt[tl - 1] == '\n' &&
			      strcmp(txt + tl - strlen("cpu,from_ns,t_ns,busy_ns\n"), "cpu,from_ns,t_ns,busy_ns\n") == 0,
		      "%s", txt);
	free(txt);
	pd_runlog_free(rl);
	free(data);
}
END_TEST

START_TEST(crc_known_value)
{
	ck_assert_uint_eq(pd_runlog_crc32(0, "123456789", 9), 0xCBF43926u); /* the CRC-32 check value */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agents_runlog");
	TCase *tc = tcase_create("runlog");
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, cut_at_every_byte);
	tcase_add_test(tc, corruption_stops_decoding);
	tcase_add_test(tc, bad_headers);
	tcase_add_test(tc, busy_cpus_header);
	tcase_add_test(tc, full_ring_drops_and_reports);
	tcase_add_test(tc, steal_records_round_trip);
	tcase_add_test(tc, foreign_records_round_trip);
	tcase_add_test(tc, busy_records_round_trip);
	tcase_add_test(tc, crc_known_value);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
