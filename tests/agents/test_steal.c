/* SPDX-License-Identifier: MIT */
/* Host steal and busy-time sampling (agents/steal.c): the /proc/stat parser, and the records a sampler
 * writes through the run-log writer from a fake /proc/stat whose counters the test moves. */
#include "agents/steal_impl.h"
#include "pd_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A /proc/stat of 3 CPUs (cpu2 offline: no line) whose steal counters are s0, s1, s3 and whose idle
 * counters are i0, i1, i3. Every other counter differs too, so that a parser summing the wrong
 * columns into idle time gets another number: cpu0's idle + iowait is i0 + 3 (not user 100, nice 7,
 * system 70, irq 11, softirq 2, steal, guest 5, guest_nice 1). */
static void write_stat_idle(const char *path, unsigned s0, unsigned s1, unsigned s3, unsigned i0, unsigned i1, unsigned i3)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "cpu  300 0 200 %u 10 0 5 %u 0 0\n", i0 + i1 + i3, s0 + s1 + s3);
	fprintf(f, "cpu0 100 7 70 %u 3 11 2 %u 5 1\n", i0, s0);
	fprintf(f, "cpu1 100 0 60 %u 4 0 1 %u 0 0\n", i1, s1);
	fprintf(f, "cpu3 100 0 70 %u 3 0 2 %u 0 0\n", i3, s3);
	fprintf(f, "intr 12345 0 1 2 3\nctxt 999\nbtime 1700000000\ncpu7 1 1 1 1 1 1 1 999\n");
	fclose(f);
}

static void write_stat(const char *path, unsigned s0, unsigned s1, unsigned s3)
{
	write_stat_idle(path, s0, s1, s3, 300, 300, 300);
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
	/* not busy: idle + iowait of each line */
	ck_assert_uint_eq(b[0], 300 + 3);
	ck_assert_uint_eq(b[1], 300 + 3);
	ck_assert_uint_eq(b[2], 300 + 4);
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
	/* counters near 2^64 saturate instead of wrapping to a small idle time */
	const char *huge = "cpu0 0 0 0 18446744073709551615 1 0 0 0\n";
	ck_assert_int_eq(steal_parse(huge, strlen(huge), c0, 1, t, b), 0);
	ck_assert_uint_eq(b[0], UINT64_MAX);
	free(text);
}
END_TEST

/* Baseline at the first sample, a record per CPU whose counter moved (the delta in ns at USER_HZ,
 * over the interval since its previous sample), nothing when no counter moved. The idle counters
 * follow the clock (the CPUs are idle or stolen from), so no BUSY record is due. */
START_TEST(sampler_writes_deltas_only_when_steal_moves)
{
	const char *dir = pd_test_tmpdir();
	char stat[512], log[512];
	snprintf(stat, sizeof(stat), "%s/stat", dir);
	snprintf(log, sizeof(log), "%s/run.pdlog", dir);
	int64_t T = PD_NS_PER_S / sysconf(_SC_CLK_TCK);
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
	write_stat_idle(stat, 100, 200, 300, 301, 300, 301);
	ck_assert_uint_eq(steal_sample(st, T, ring), 0);        /* no steal moved */
	write_stat_idle(stat, 103, 250, 300, 301, 300, 302);   /* cpu1 is not watched */
	ck_assert_uint_eq(steal_sample(st, 2 * T, ring), 1);
	write_stat_idle(stat, 103, 250, 300, 301, 300, 303);
	ck_assert_uint_eq(steal_sample(st, 3 * T, ring), 0);
	write_stat_idle(stat, 104, 250, 310, 301, 300, 303);
	ck_assert_uint_eq(steal_sample(st, 4 * T, ring), 2);
	steal_close(st);
	struct pd_runlog_end_rec end = {.t_ns = 5 * T};
	ck_assert_int_eq(pd_runlog_writer_close(w, &end, &e), 0);
	pd_runlog *r = pd_runlog_open(log, &e);
	ck_assert_msg(r, "%s", e.msg);
	ck_assert_uint_eq(pd_runlog_invalid_records(r), 0);
	ck_assert_uint_eq(pd_runlog_steal_count(r), 3);
	ck_assert_uint_eq(pd_runlog_busy_count(r), 0); /* never busy */
	const struct pd_runlog_steal_rec *a = pd_runlog_steal(r, 0), *b = pd_runlog_steal(r, 1), *c = pd_runlog_steal(r, 2);
	ck_assert_int_eq(a->cpu, 0);
	ck_assert_int_eq(a->from_ns, T); /* the previous sample, not the baseline */
	ck_assert_int_eq(a->t_ns, 2 * T);
	ck_assert_int_eq(a->steal_ns, 3 * T);
	ck_assert_int_eq(b->cpu, 0);
	ck_assert_int_eq(b->from_ns, 3 * T);
	ck_assert_int_eq(b->steal_ns, T);
	ck_assert_int_eq(c->cpu, 3);
	ck_assert_int_eq(c->from_ns, 3 * T);
	ck_assert_int_eq(c->t_ns, 4 * T);
	ck_assert_int_eq(c->steal_ns, 10 * T);
	pd_runlog_free(r);
}
END_TEST

/* The same samples give BUSY records: busy = elapsed - (idle + iowait) - steal since the baseline, a
 * record per CPU whose figure grew beyond what its records hold (over the interval since its previous
 * sample, from the same read as steal): the records sum to the figure, none is negative, and a dip
 * from whole-tick counters is not written again when the figure recovers. */
START_TEST(sampler_writes_busy_from_idle_time)
{
	const char *dir = pd_test_tmpdir();
	char stat[512], log[512];
	snprintf(stat, sizeof(stat), "%s/stat", dir);
	snprintf(log, sizeof(log), "%s/run.pdlog", dir);
	int64_t tick = PD_NS_PER_S / sysconf(_SC_CLK_TCK), ms = PD_NS_PER_MS;
	write_stat_idle(stat, 100, 200, 300, 1000, 1000, 1000);
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
	ck_assert_uint_eq(steal_sample(st, 1000 * ms, ring), 0); /* baseline */
	/* 10 ticks later: cpu0 idle 4 ticks (busy 6), cpu3 idle 9 (busy 1) */
	write_stat_idle(stat, 100, 200, 300, 1004, 1500, 1009);
	ck_assert_uint_eq(steal_sample(st, 1000 * ms + 10 * tick, ring), 2);
	/* 5 ns on: cpu0 busy by 5 ns more (no idle tick yet); cpu3's idle counter stepped: its figure
	 * (5 ns) dips below the tick recorded, no record */
	write_stat_idle(stat, 100, 200, 300, 1004, 1500, 1010);
	ck_assert_uint_eq(steal_sample(st, 1000 * ms + 10 * tick + 5, ring), 1);
	/* 20 ticks after the baseline: cpu0 2 ticks stolen, 3 more idle (busy 20 - 7 - 2 = 11 ticks);
	 * cpu3 idle 18 of 20 (busy 2 ticks: only the tick beyond the one recorded is written) */
	write_stat_idle(stat, 102, 200, 300, 1007, 1500, 1018);
	ck_assert_uint_eq(steal_sample(st, 1000 * ms + 20 * tick, ring), 3);
	steal_close(st);
	struct pd_runlog_end_rec end = {.t_ns = 1000 * ms + 30 * tick};
	ck_assert_int_eq(pd_runlog_writer_close(w, &end, &e), 0);
	pd_runlog *r = pd_runlog_open(log, &e);
	ck_assert_msg(r, "%s", e.msg);
	ck_assert_uint_eq(pd_runlog_invalid_records(r), 0);
	ck_assert_int_eq(pd_runlog_busy_period_ns(r), 100000000);
	ck_assert_uint_eq(pd_runlog_steal_count(r), 1);
	ck_assert_int_eq(pd_runlog_steal(r, 0)->cpu, 0);
	ck_assert_int_eq(pd_runlog_steal(r, 0)->steal_ns, 2 * tick);
	ck_assert_uint_eq(pd_runlog_busy_count(r), 5);
	struct {
		int cpu;
		int64_t from, to, busy;
	} want[5] = {
		{0, 1000 * ms, 1000 * ms + 10 * tick, 6 * tick},
		{3, 1000 * ms, 1000 * ms + 10 * tick, tick},
		{0, 1000 * ms + 10 * tick, 1000 * ms + 10 * tick + 5, 5},
		{0, 1000 * ms + 10 * tick + 5, 1000 * ms + 20 * tick, 5 * tick - 5}, /* from the previous sample */
		{3, 1000 * ms + 10 * tick + 5, 1000 * ms + 20 * tick, tick},
	};
	for (size_t i = 0; i < 5; i++) {
		const struct pd_runlog_busy_rec *x = pd_runlog_busy(r, i);
		ck_assert_int_eq(x->cpu, want[i].cpu);
		ck_assert_int_eq(x->from_ns, want[i].from);
		ck_assert_int_eq(x->t_ns, want[i].to);
		ck_assert_int_eq(x->busy_ns, want[i].busy);
	}
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
	tcase_add_test(tc, sampler_writes_busy_from_idle_time);
	tcase_add_test(tc, open_refuses_what_it_cannot_watch);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
