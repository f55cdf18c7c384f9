/* SPDX-License-Identifier: MIT */
/*
 * The screening board (optimizer/board.c) that the two workers of the small sets' portfolio share:
 * a position is screened by one worker only, its bound reaches the other, a claim given up is free
 * again, and workers whose vector lists differ do not share at all; the bounds a branch and bound
 * proves only rise, also when two processes raise them at once; a tree's split is recorded once and
 * each of its parts claimed by one worker.
 */
#include "helper_opt.h"
#include "optimizer/opt_impl.h"
#include "pd_test.h"

#include <math.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 400

/* In one process: claim, publish, read back; a claim given up (no bound in time) is free again. */
START_TEST(claims_and_bounds)
{
	struct opt_board *B = opt_board_new(1000);
	ck_assert_ptr_nonnull(B);
	ck_assert(opt_board_join(B, N, true));
	ck_assert(isnan(opt_board_get(B, 7)));
	ck_assert(opt_board_claim(B, 7));
	ck_assert(!opt_board_claim(B, 7)); /* the other worker's claim fails */
	ck_assert(isnan(opt_board_get(B, 7)));
	opt_board_put(B, 7, 5.25);
	ck_assert(opt_board_get(B, 7) == 5.25);
	ck_assert(!opt_board_claim(B, 7)); /* done: nobody screens it again */
	ck_assert(opt_board_claim(B, 8));
	opt_board_put(B, 8, NAN);
	ck_assert(isnan(opt_board_get(B, 8)));
	ck_assert(opt_board_claim(B, 8));
	opt_board_put(B, 8, INFINITY); /* no plan at that vector */
	ck_assert(isinf(opt_board_get(B, 8)));
	ck_assert(opt_board_claim_rounding(B, 3));
	ck_assert(!opt_board_claim_rounding(B, 3));
	opt_board_free(B);
}
END_TEST

/* A vector's split is recorded once (the second worker gets the first's), each part is claimed by
 * one worker, and a part's proven bound only rises; no board or a position out of range: no split. */
START_TEST(splits_and_parts)
{
	struct opt_board *B = opt_board_new(1000);
	ck_assert_ptr_nonnull(B);
	size_t t = 4, g = 2;
	ck_assert(opt_board_split(B, 9, &t, &g));
	ck_assert(t == 4 && g == 2);
	t = 7, g = 0;
	ck_assert(opt_board_split(B, 9, &t, &g));
	ck_assert(t == 4 && g == 2); /* the first worker's */
	t = 0, g = 0;
	ck_assert(opt_board_split(B, 10, &t, &g)); /* task 0, group 0 is a split too */
	ck_assert(t == 0 && g == 0);
	ck_assert(!opt_board_split(NULL, 9, &t, &g));
	ck_assert(!opt_board_split(B, 1000, &t, &g));
	ck_assert(opt_board_claim_part(B, 9, 1));
	ck_assert(!opt_board_claim_part(B, 9, 1));
	ck_assert(opt_board_claim_part(B, 9, 0));
	ck_assert(!opt_board_claim_part(B, 9, 2) && !opt_board_claim_part(NULL, 9, 0));
	ck_assert(opt_board_part(B, 9, 0) == 0);
	opt_board_raise_part(B, 9, 0, 5.2);
	opt_board_raise_part(B, 9, 0, 5.1);
	opt_board_raise_part(B, 9, 0, NAN);
	ck_assert(opt_board_part(B, 9, 0) == 5.2);
	ck_assert(opt_board_part(B, 9, 1) == 0); /* the other part untouched */
	ck_assert(opt_board_proven(B, 9) == 0);  /* and the vector's own proof */
	opt_board_free(B);
}
END_TEST

/* The second worker must index the same list as the first, and the list must fit. */
START_TEST(different_lists_do_not_share)
{
	struct opt_board *B = opt_board_new(1000);
	ck_assert_ptr_nonnull(B);
	ck_assert(!opt_board_join(NULL, N, true));
	ck_assert(!opt_board_join(B, 1001, true));
	ck_assert(opt_board_join(B, N, true));
	ck_assert(opt_board_join(B, N, true));
	ck_assert(!opt_board_join(B, N, false)); /* every vector, not the canonical ones */
	ck_assert(!opt_board_join(B, N + 1, true));
	opt_board_free(B);
}
END_TEST

struct walker {
	struct opt_inst *in;
	struct opt_pub *P;
	struct opt_board *B;
};

/* A worker's screening walk: every position in order, screening ("bound" pos + 0.5, 50 us of work)
 * those it claims; publishes how many it screened as its bound. */
static int walk(void *arg)
{
	struct walker *w = arg;
	w->in->pub = w->P;
	if (!opt_board_join(w->B, N, false))
		return 1;
	int mine = 0;
	for (size_t pos = 0; pos < N; pos++) {
		if (!isnan(opt_board_get(w->B, pos)) || !opt_board_claim(w->B, pos))
			continue;
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
		opt_board_put(w->B, pos, (double)pos + 0.5);
		mine++;
	}
	opt_pub_bound(w->in, mine);
	return 0;
}

/* Two forked workers walking the same order screen every position exactly once between them. */
START_TEST(two_workers_split_the_screening)
{
	struct opt_inst in;
	pd_plan *plan = pd_to_one_task(&in);
	struct opt_board *B = opt_board_new(N);
	struct opt_pub *P[2] = {opt_pub_new(&in), opt_pub_new(&in)};
	ck_assert(B && P[0] && P[1]);
	struct walker w[2] = {{&in, P[0], B}, {&in, P[1], B}};
	void *args[2] = {&w[0], &w[1]};
	struct opt_worker_end ends[2];
	ck_assert_int_eq(opt_workers_run(2, P, opt_now_s() + 20.0, walk, args, ends), 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(ends[i].how, OPT_END_DONE);
		ck_assert_int_eq(ends[i].rc, 0);
	}
	double a = opt_pub_lb(P[0]), b = opt_pub_lb(P[1]);
	ck_assert_msg(a + b == N, "screened %g + %g of %d", a, b, N);
	for (size_t pos = 0; pos < N; pos++)
		ck_assert(opt_board_get(B, pos) == (double)pos + 0.5);
	opt_pub_free(P[0]);
	opt_pub_free(P[1]);
	opt_board_free(B);
	opt_inst_free(&in);
	pd_plan_free(plan);
}
END_TEST

/* Proven bounds (opt_board_raise): 0 until raised, only ever larger, NaN and values no plan is
 * below (<= 0) ignored, positions out of range and a missing board harmless. Two processes raising
 * the same positions at once (a rising and a falling sequence each) leave the largest value there. */
START_TEST(proven_bounds_only_rise)
{
	struct opt_board *B = opt_board_new(1000);
	ck_assert_ptr_nonnull(B);
	ck_assert(opt_board_proven(B, 5) == 0);
	opt_board_raise(B, 5, 5.2);
	ck_assert(opt_board_proven(B, 5) == 5.2);
	opt_board_raise(B, 5, 5.1);
	opt_board_raise(B, 5, NAN);
	opt_board_raise(B, 5, -1.0);
	ck_assert(opt_board_proven(B, 5) == 5.2);
	opt_board_raise(B, 5, INFINITY); /* closed: no plan at all there */
	ck_assert(isinf(opt_board_proven(B, 5)));
	opt_board_raise(B, 2000, 1.0);
	ck_assert(opt_board_proven(B, 2000) == 0);
	opt_board_raise(NULL, 5, 1.0);
	ck_assert(opt_board_proven(NULL, 5) == 0);

	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	for (int k = 0; k < 20000; k++) { /* the child rises, the parent falls, over 10 positions */
		double v = pid == 0 ? 1.0 + k * 1e-4 : 4.0 - k * 1e-4;
		opt_board_raise(B, 10 + (size_t)(k % 10), v);
	}
	if (pid == 0)
		_exit(0);
	int st = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	for (size_t q = 0; q < 10; q++) /* the parent's first values, 4.0 - q 1e-4, beat the child's */
		ck_assert_msg(opt_board_proven(B, 10 + q) == 4.0 - (double)q * 1e-4, "pos %zu: %.9f", 10 + q,
			      opt_board_proven(B, 10 + q));
	opt_board_free(B);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("board");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, claims_and_bounds);
	tcase_add_test(tc, different_lists_do_not_share);
	tcase_add_test(tc, splits_and_parts);
	tcase_add_test(tc, two_workers_split_the_screening);
	tcase_add_test(tc, proven_bounds_only_rise);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
