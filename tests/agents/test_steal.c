/* SPDX-License-Identifier: MIT */
/* Host steal and busy-time sampling (agents/steal.c): the /proc/stat parser, and the records a sampler
 * writes through the run-log writer from a fake /proc/stat whose counters the test moves. */
#include "agents/steal_impl.h"
#include "pd_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A /proc/stat of 3 CPUs (cpu2 offline: no line) whose steal counters are s0, s1, s3 and whose user
 * counters are u0, u1, u3. Every other counter differs too, so that a parser summing the wrong
 * columns into busy time gets another number: cpu0's busy time is u0 + 7 + 70 + 11 + 2 (user nice
 * system irq softirq; not idle 300, iowait 3, steal, guest 5, guest_nice 1). */
static void write_stat_busy(const char *path, unsigned s0, unsigned s1, unsigned s3, unsigned u0, unsigned u1, unsigned u3)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "cpu  %u 0 200 900 10 0 5 %u 0 0\n", u0 + u1 + u3, s0 + s1 + s3);
	fprintf(f, "cpu0 %u 7 70 300 3 11 2 %u 5 1\n", u0, s0);
	fprintf(f, "cpu1 %u 0 60 300 4 0 1 %u 0 0\n", u1, s1);
	fprintf(f, "cpu3 %u 0 70 300 3 0 2 %u 0 0\n", u3, s3);
	fprintf(f, "intr 12345 0 1 2 3\nctxt 999\nbtime 1700000000\ncpu7 1 1 1 1 1 1 1 999\n");
	fclose(f);
}

static void write_stat(const char *path, unsigned s0, unsigned s1, unsigned s3)
{
	write_stat_busy(path, s0, s1, s3, 100, 100, 100);
}

START_TEST(parse_reads_the_eighth_counter)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/stat", pd_test_tmpdir());
	write_stat(path, 11, 22, 33);
	char *text;
	size_t len;
	pd_err e = {0};
	ck_assert_int_eq(pd_read_file(path, &text, &len, 0, &e), 0);
	int cpus[3] = {3, 0, 1};
	uint64_t t[3] = {0}, b[3] = {0};
	ck_assert_int_eq(steal_parse(text, len, cpus, 3, t, b), 0);
	ck_assert_uint_eq(t[0], 33);
	ck_assert_uint_eq(t[1], 11);
	ck_assert_uint_eq(t[2], 22);
	/* busy = user + nice + system + irq + softirq of each line */
	ck_assert_uint_eq(b[0], 100 + 70 + 2);
	ck_assert_uint_eq(b[1], 100 + 7 + 70 + 11 + 2);
	ck_assert_uint_eq(b[2], 100 + 60 + 1);
	ck_assert_int_eq(steal_parse(text, len, cpus, 3, t, NULL), 0); /* steal alone */
	ck_assert_uint_eq(t[1], 11);
	/* an offline CPU has no line; a "cpu7" after the cpu lines is not one of them */
	int off[1] = {2}, late[1] = {7};
	ck_assert_int_eq(steal_parse(text, len, off, 1, t, b), -1);
	ck_assert_int_eq(steal_parse(text, len, late, 1, t, b), -1);
	/* a kernel without the steal column (7 counters) */
	const char *old = "cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n";
	int c0[1] = {0};
	ck_assert_int_eq(steal_parse(old, strlen(old), c0, 1, t, b), -1);
	/* a CPU id beyond the agent's limit is refused, not indexed */
	int big[1] = {4096};
	ck_assert_int_eq(steal_parse(text, len, big, 1, t, b), -1);
	/* counters near 2^64 saturate instead of wrapping to a small busy time */
	const char *huge = "cpu0 18446744073709551615 1 0 0 0 0 0 0\n";
	ck_assert_int_eq(steal_parse(huge, strlen(huge), c0, 1, t, b), 0);
	ck_assert_uint_eq(b[0], UINT64_MAX);
	free(text);
}
END_TEST

/* Baseline at the first sample, a record per CPU whose counter moved (the delta in ns at USER_HZ,
 * over the interval since its previous sample), nothing when no counter moved. */
START_TEST(sampler_writes_deltas_only_when_steal_moves)
{
	const char *dir = pd_test_tmpdir();
	char stat[512], log[512];
	snprintf(stat, sizeof(stat), "%s/stat", dir);
	snprintf(log, sizeof(log), "%s/run.pdlog", dir);
	write_stat(stat, 100, 200, 300);
	pd_err e = {0};
	int cpus[2] = {0, 3};
	pd_steal *st = steal_open(stat, cpus, 2, &e);
	ck_assert_msg(st, "%s", e.msg);
	pd_runlog_writer *w = pd_runlog_writer_new();
	struct pd_runlog_ring *ring = pd_runlog_add_ring(w, 80, 64);
	ck_assert_int_eq(pd_runlog_writer_open(w,
					       log,
					       "{\"format\":\"powerdag-runlog\",\"version\":1,\"steal_period_ns\":100000000,"
					       "\"tasks\":[],\"dags\":[],\"rails\":[]}",
					       &e),
			 0);
	ck_assert_uint_eq(steal_sample(st, 0, ring), 0); /* baseline */
	ck_assert_uint_eq(steal_sample(st, 100, ring), 0); /* nothing moved */
	write_stat(stat, 103, 250, 300);                    /* cpu1 is not watched */
	ck_assert_uint_eq(steal_sample(st, 200, ring), 1);
	ck_assert_uint_eq(steal_sample(st, 300, ring), 0);
	write_stat(stat, 104, 250, 310);
	ck_assert_uint_eq(steal_sample(st, 400, ring), 2);
	steal_close(st);
	struct pd_runlog_end_rec end = {.t_ns = 500};
	ck_assert_int_eq(pd_runlog_writer_close(w, &end, &e), 0);
	pd_runlog *r = pd_runlog_open(log, &e);
	ck_assert_msg(r, "%s", e.msg);
	ck_assert_uint_eq(pd_runlog_invalid_records(r), 0);
	ck_assert_uint_eq(pd_runlog_steal_count(r), 3);
	ck_assert_uint_eq(pd_runlog_busy_count(r), 0); /* no busy counter moved */
	int64_t tick = PD_NS_PER_S / sysconf(_SC_CLK_TCK);
	const struct pd_runlog_steal_rec *a = pd_runlog_steal(r, 0), *b = pd_runlog_steal(r, 1), *c = pd_runlog_steal(r, 2);
	ck_assert_int_eq(a->cpu, 0);
	ck_assert_int_eq(a->from_ns, 100); /* the previous sample, not the baseline */
	ck_assert_int_eq(a->t_ns, 200);
	ck_assert_int_eq(a->steal_ns, 3 * tick);
	ck_assert_int_eq(b->cpu, 0);
	ck_assert_int_eq(b->from_ns, 300);
	ck_assert_int_eq(b->steal_ns, tick);
	ck_assert_int_eq(c->cpu, 3);
	ck_assert_int_eq(c->from_ns, 300);
	ck_assert_int_eq(c->t_ns, 400);
	ck_assert_int_eq(c->steal_ns, 10 * tick);
	pd_runlog_free(r);
}
END_TEST

/* The same samples give BUSY records: a delta of user + nice + system + irq + softirq per CPU whose
 * busy time moved, over the same interval as steal, from the same read; steal's records unchanged. */
START_TEST(sampler_writes_busy_deltas_from_the_same_read)
{
	const char *dir = pd_test_tmpdir();
	char stat[512], log[512];
	snprintf(stat, sizeof(stat), "%s/stat", dir);
	snprintf(log, sizeof(log), "%s/run.pdlog", dir);
	write_stat_busy(stat, 100, 200, 300, 1000, 1000, 1000);
	pd_err e = {0};
	int cpus[2] = {0, 3};
	pd_steal *st = steal_open(stat, cpus, 2, &e);
	ck_assert_msg(st, "%s", e.msg);
	pd_runlog_writer *w = pd_runlog_writer_new();
	struct pd_runlog_ring *ring = pd_runlog_add_ring(w, 80, 64);
	ck_assert_int_eq(pd_runlog_writer_open(w, log,
					       "{\"format\":\"powerdag-runlog\",\"version\":1,\"steal_period_ns\":100000000,"
					       "\"busy_period_ns\":100000000,\"tasks\":[],\"dags\":[],\"rails\":[]}",
					       &e),
			 0);
	ck_assert_uint_eq(steal_sample(st, 0, ring), 0);         /* baseline */
	write_stat_busy(stat, 100, 200, 300, 1004, 1500, 1000); /* cpu0 busy +4; cpu1 not watched */
	ck_assert_uint_eq(steal_sample(st, 100, ring), 1);
	ck_assert_uint_eq(steal_sample(st, 200, ring), 0);       /* nothing moved */
	write_stat_busy(stat, 102, 200, 300, 1004, 1500, 1009); /* cpu0 steal +2, cpu3 busy +9 */
	ck_assert_uint_eq(steal_sample(st, 300, ring), 2);
	steal_close(st);
	struct pd_runlog_end_rec end = {.t_ns = 400};
	ck_assert_int_eq(pd_runlog_writer_close(w, &end, &e), 0);
	pd_runlog *r = pd_runlog_open(log, &e);
	ck_assert_msg(r, "%s", e.msg);
	ck_assert_uint_eq(pd_runlog_invalid_records(r), 0);
	ck_assert_int_eq(pd_runlog_busy_period_ns(r), 100000000);
	int64_t tick = PD_NS_PER_S / sysconf(_SC_CLK_TCK);
	ck_assert_uint_eq(pd_runlog_steal_count(r), 1);
	ck_assert_int_eq(pd_runlog_steal(r, 0)->cpu, 0);
	ck_assert_int_eq(pd_runlog_steal(r, 0)->from_ns, 200);
	ck_assert_int_eq(pd_runlog_steal(r, 0)->steal_ns, 2 * tick);
	ck_assert_uint_eq(pd_runlog_busy_count(r), 2);
	const struct pd_runlog_busy_rec *a = pd_runlog_busy(r, 0), *b = pd_runlog_busy(r, 1);
	ck_assert_int_eq(a->cpu, 0);
	ck_assert_int_eq(a->from_ns, 0);
	ck_assert_int_eq(a->t_ns, 100);
	ck_assert_int_eq(a->busy_ns, 4 * tick);
	ck_assert_int_eq(b->cpu, 3);
	ck_assert_int_eq(b->from_ns, 200); /* the previous sample, not the last record */
	ck_assert_int_eq(b->t_ns, 300);
	ck_assert_int_eq(b->busy_ns, 9 * tick);
	pd_runlog_free(r);
}
END_TEST

START_TEST(open_refuses_what_it_cannot_watch)
{
	char stat[512];
	snprintf(stat, sizeof(stat), "%s/stat", pd_test_tmpdir());
	write_stat(stat, 1, 2, 3);
	pd_err e = {0};
	int offline[1] = {2};
	ck_assert_ptr_null(steal_open(stat, offline, 1, &e));
	ck_assert_msg(strstr(e.msg, "no steal counter"), "%s", e.msg);
	ck_assert_ptr_null(steal_open("/nonexistent/stat", offline, 1, &e));
	ck_assert_msg(strstr(e.msg, "cannot open"), "%s", e.msg);
	/* the real one, on Linux >= 2.6.11, has a steal counter for CPU 0 */
	int c0[1] = {0};
	pd_steal *st = steal_open("/proc/stat", c0, 1, &e);
	ck_assert_msg(st, "%s", e.msg);
	steal_close(st);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agents_steal");
	TCase *tc = tcase_create("steal");
	tcase_add_test(tc, parse_reads_the_eighth_counter);
	tcase_add_test(tc, sampler_writes_deltas_only_when_steal_moves);
	tcase_add_test(tc, sampler_writes_busy_deltas_from_the_same_read);
	tcase_add_test(tc, open_refuses_what_it_cannot_watch);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
