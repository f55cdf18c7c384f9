/* SPDX-License-Identifier: MIT */
/*
 * The per-vector branch and bound (optimizer/master_bb.c).
 *
 * search_matches_brute_force: at the proven optimum's vector of 12-task XU4 sets, the search (best
 * first with dives, dual closures, no-goods) started without a plan closes the vector with the plan
 * that exhaustive enumeration finds: all 4096 island assignments packed by the exact packer, the
 * cheapest that packs (which agrees with the optimizer's proven optimum). Its plan is never below
 * that (it passed the evaluator) and at most the tolerance above. Seen failing with the heap's
 * closing test taken on the last open node instead of the least floor (seeds 7 and 21: plans
 * 0.03 % dearer, subtrees closed below the cut-off).
 *
 * stopped_search_goes_on_to_the_same_verdict: the search stopped by its clock and handed back
 * (opt_mst_bb_resume) reaches the verdict of one uninterrupted search: at the proven optimum's
 * vector of a 20-task XU4 set, the search is cut into short slices (the first only a few ms), and
 * - every slice's bound is valid (with the cut-off, at most the uninterrupted search's plan) and
 *   never falls from one slice to the next (open nodes are only replaced by their children);
 * - the sliced search closes the vector, with a plan within the tolerance of the uninterrupted
 *   one's, both ways round;
 * - it was stopped several times, so the resumption is what the test exercises.
 * Seen failing with the open nodes dropped at a stop (closed at once, without a plan) and with the
 * resumed nodes searched from the root's bound instead of their own floors (the bound fell at the
 * ninth stop). Without the no-goods or the fixings of the resumed nodes it still passes, slower:
 * those only save work.
 *
 * split_parts_cover_the_vector: with a board (two workers, board.c) the search splits the vector's
 * tree in two parts and claims one. Alone, it searches both in turn and reaches the verdict of the
 * search without a board (closed, a plan within the tolerance), both parts proven on the board.
 * When the other worker holds part 1 and never publishes (it stopped), the search does part 1
 * alongside it: cut into slices, every bound on the way is valid and the verdict is the same.
 * When the other worker has proven part 1 closed, part 0 alone closes the vector. Seen failing
 * with the search ending after its own part (the vector open at 2.37686 W with nothing left).
 *
 * band_dive_finds_a_better_plan: with an incumbent 2 % above the optimum and a tolerance that puts
 * the cut-off just under the optimum, no plan is below the cut-off and the search closes the vector
 * without one; the dives for plans in the tolerance's band (bb_band_dive) still replace the
 * incumbent with a real plan (it passes the evaluator) below it. Without the dives the incumbent
 * stays as it was.
 *
 * fruitless_cut_searches_stop: XU4 20 tasks in the bench's shape, seed 7715119, at its optimum's
 * vector with no incumbent. Its unpackable leaves fail on the paths of both DAGs, so cut searches
 * hardly ever free a task, and after BB_CUT_TRIES fruitless ones in a row the search stops running
 * them (each cost many times the leaf). A search stopped after 2 s and handed back has met more
 * unpackable leaves than it ran cut searches (77 leaves, 5 searches here, RelWithDebInfo). Fails
 * with a cut search at every leaf (as many searches as leaves). The search's verdicts with the
 * whole assignments as no-goods are the other tests' (search_matches_brute_force). Handed back
 * until it closes the vector, the same search has core-branched (bb_core_branch: its leaves fail
 * their packing) and ends with the proven optimum, a plan that passes the evaluator.
 *
 * core_branches_keep_the_optimum: two 12-task XU4 sets (seeds 15 and 31, from a scan of 60 in which
 * 30 core-branch and all 60 agree with brute force) whose search at the optimum's vector puts dense
 * tasks on core slots hundreds of times (bb_core_branch) still closes the vector with the brute
 * force's optimum. A slot row that cut off a plan, or children that missed a slot, would leave a
 * dearer plan or none; the test fails too if neither set core-branches (the trigger lost).
 */
#include "helper_opt.h"
#include "optimizer/master_impl.h"
#include "pd_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct fixture {
	pd_plan *plan;
	struct opt_inst in;
	struct master M, C;
	struct opt_sol s;
};

/* The set (two DAGs of per_dag tasks), its proven optimum (power in *opt_w) and that optimum's vector
 * in f->s. */
static void setup(struct fixture *f, unsigned per_dag, uint64_t seed, double *opt_w)
{
	f->plan = pd_to_bench_set(2, per_dag, seed, "platforms/odroid-xu4.yaml");
	struct pd_opt_params p;
	pd_opt_defaults(&p);
	p.solver = PD_SOLVER_EXACT;
	p.time_limit_s = 60.0;
	struct pd_opt_result r;
	pd_err e = {0};
	ck_assert_msg(pd_optimize(f->plan, &p, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(r.status, PD_STATUS_OPTIMAL);
	*opt_w = r.power_w;
	ck_assert_msg(opt_inst_build(&f->in, pd_plan_dags(f->plan), pd_plan_platform(f->plan), p.eta, &e) == 0, "%s",
		      e.msg);
	f->in.rel_gap = p.gap;
	ck_assert_int_eq(opt_mst_build(&f->M, &f->in, INFINITY, false), 0);
	ck_assert_int_eq(opt_mst_build(&f->C, &f->in, INFINITY, true), 0);
	f->M.scr = opt_screen_new(&f->in);
	ck_assert_ptr_nonnull(f->M.scr);
	ck_assert_int_eq(opt_sol_init(&f->s, &f->in), 0);
	for (size_t k = 0; k < f->in.n_isl; k++)
		f->s.isl_opp[k] = pd_plan_island_opp(f->plan, k);
	for (size_t a = 0; a < f->in.n_acc; a++)
		f->s.acc_opp[a] = pd_plan_accel_opp(f->plan, a);
}

static void teardown(struct fixture *f)
{
	opt_sol_free(&f->s);
	opt_mst_free(&f->M);
	opt_mst_free(&f->C);
	opt_inst_free(&f->in);
	pd_plan_free(f->plan);
}

/* The cheapest plan at f->s over every island / server assignment (INFINITY: none packs). */
static double brute_force(struct fixture *f)
{
	const struct opt_inst *in = &f->in;
	size_t n = in->n_tasks, no = in->n_isl + in->n_srv;
	size_t *o = calloc(n, sizeof(size_t));
	struct opt_sol t;
	ck_assert_ptr_nonnull(o);
	ck_assert_int_eq(opt_sol_init(&t, in), 0);
	double best = INFINITY;
	for (;;) {
		opt_sol_copy(&t, &f->s, in);
		bool ok = true;
		for (size_t i = 0; i < n; i++) {
			ok = ok && opt_option_fits(in, &f->s, i, o[i], 0);
			t.where[i] = opt_option_where(in, o[i]);
		}
		int r = ok ? opt_corepack_pooled(in, &t, false, opt_now_s() + 20.0) : 0;
		ck_assert_int_ne(r, -1); /* every packing of these sizes is decided */
		if (r == 1)
			best = fmin(best, t.power_w);
		size_t i = 0; /* the next assignment, options in mixed radix */
		while (i < n && ++o[i] == no)
			o[i++] = 0;
		if (i == n)
			break;
	}
	opt_sol_free(&t);
	free(o);
	return best;
}

/*
 * The search at f->s (board position pos) cut into slices, 3 ms, then 30 % longer each time (a slice
 * must at least solve the root LP again), resumed until it closes the vector: every stop's bound is
 * valid (with the cut-off, at most plan_w, a plan at the vector) and with rising never below the one
 * before. Returns the number of stops.
 */
static int search_in_slices(struct fixture *f, size_t pos, struct opt_sol *inc, double plan_w, bool rising)
{
	double slice = 0.003, prev = -INFINITY;
	struct opt_bb *T = NULL;
	double r = opt_mst_vector_bb(&f->M, &f->C, &f->s, pos, inc, opt_now_s() + slice, &T);
	int stops = 0;
	while (T && stops < 400) {
		ck_assert(r < INFINITY);
		ck_assert_msg(!rising || r >= prev, "stop %d: bound fell from %.9f to %.9f W", stops, prev, r);
		ck_assert_msg(fmin(r, cut_w(&f->in, inc)) <= plan_w * (1 + 1e-9), "stop %d: bound %.9f W above a plan at %.9f W",
			      stops, fmin(r, cut_w(&f->in, inc)), plan_w);
		prev = r;
		stops++;
		slice *= 1.3;
		r = opt_mst_bb_resume(T, inc, opt_now_s() + slice);
		if (isinf(r) && r > 0) {
			opt_mst_bb_free(T);
			T = NULL;
		}
	}
	ck_assert_msg(!T, "still open after %d stops", stops);
	return stops;
}

START_TEST(search_matches_brute_force)
{
	static const uint64_t seeds[] = {7, 21, 23};
	for (size_t q = 0; q < sizeof(seeds) / sizeof(seeds[0]); q++) {
		struct fixture f = {0};
		double opt_w;
		setup(&f, 6, seeds[q], &opt_w);
		double best = brute_force(&f);
		ck_assert_msg(isfinite(best), "seed %llu: no assignment packs at the optimum's vector",
			      (unsigned long long)seeds[q]);
		/* the optimizer's proven optimum lies at this vector: the enumeration agrees with it */
		ck_assert_msg(best <= opt_w * (1 + 1e-9) && best >= opt_w * (1 - f.in.rel_gap) * (1 - 1e-9),
			      "seed %llu: brute force %.9f W, optimize %.9f W", (unsigned long long)seeds[q], best, opt_w);
		struct opt_sol a;
		ck_assert_int_eq(opt_sol_init(&a, &f.in), 0);
		double r = opt_mst_vector_bb(&f.M, &f.C, &f.s, 0, &a, opt_now_s() + 60.0, NULL);
		ck_assert_msg(isinf(r) && r > 0, "seed %llu: vector still open at %.9f W", (unsigned long long)seeds[q], r);
		ck_assert(a.ok);
		ck_assert_msg(a.power_w >= best * (1 - 1e-9) && a.power_w <= best / (1 - f.in.rel_gap) * (1 + 1e-9),
			      "seed %llu: search %.9f W, brute force %.9f W", (unsigned long long)seeds[q], a.power_w,
			      best);
		opt_sol_free(&a);
		teardown(&f);
	}
}
END_TEST

START_TEST(stopped_search_goes_on_to_the_same_verdict)
{
	struct fixture f = {0};
	double opt_w;
	setup(&f, 10, 3, &opt_w);
	struct opt_sol a, b;
	ck_assert_int_eq(opt_sol_init(&a, &f.in), 0);
	ck_assert_int_eq(opt_sol_init(&b, &f.in), 0);

	/* uninterrupted: closes the vector, its plan at the optimum within the tolerance */
	ck_assert(isinf(opt_mst_vector_bb(&f.M, &f.C, &f.s, 0, &a, opt_now_s() + 60.0, NULL)));
	ck_assert(a.ok);
	ck_assert_msg(a.power_w <= opt_w / (1 - f.in.rel_gap) * (1 + 1e-9), "%.9f W against the optimum %.9f W",
		      a.power_w, opt_w);

	/* sliced: the bound never falls from one stop to the next */
	ck_assert_int_ge(search_in_slices(&f, 0, &b, a.power_w, true), 3);
	ck_assert(b.ok);
	ck_assert_msg(cut_w(&f.in, &b) <= a.power_w * (1 + 1e-9) && cut_w(&f.in, &a) <= b.power_w * (1 + 1e-9),
		      "sliced %.9f W, uninterrupted %.9f W", b.power_w, a.power_w);
	opt_sol_free(&a);
	opt_sol_free(&b);
	teardown(&f);
}
END_TEST

/* A fresh board (the other worker's view of nothing yet) for f's master. */
static struct opt_board *board_for(struct fixture *f)
{
	struct opt_board *B = opt_board_new(16);
	ck_assert_ptr_nonnull(B);
	f->M.board = B;
	return B;
}

START_TEST(split_parts_cover_the_vector)
{
	struct fixture f = {0};
	double opt_w;
	setup(&f, 10, 3, &opt_w);
	struct opt_sol a, b, c;
	ck_assert_int_eq(opt_sol_init(&a, &f.in), 0);
	ck_assert_int_eq(opt_sol_init(&b, &f.in), 0);
	ck_assert_int_eq(opt_sol_init(&c, &f.in), 0);
	ck_assert(isinf(opt_mst_vector_bb(&f.M, &f.C, &f.s, 0, &a, opt_now_s() + 60.0, NULL)));
	ck_assert(a.ok);

	/* alone with a board: both parts, one after the other, to the same verdict */
	struct opt_board *B = board_for(&f);
	double r = opt_mst_vector_bb(&f.M, &f.C, &f.s, 3, &b, opt_now_s() + 60.0, NULL);
	ck_assert_msg(isinf(r) && r > 0, "vector open at %.9f W", r);
	ck_assert(b.ok);
	ck_assert_msg(cut_w(&f.in, &b) <= a.power_w * (1 + 1e-9) && cut_w(&f.in, &a) <= b.power_w * (1 + 1e-9),
		      "split %.9f W, whole %.9f W", b.power_w, a.power_w);
	size_t t = 0, g = 0;
	ck_assert(opt_board_split(B, 3, &t, &g)); /* the search's split is recorded, not this one */
	ck_assert(t < f.in.n_tasks && g < f.in.n_isl + f.in.n_srv);
	ck_assert(!opt_board_claim_part(B, 3, 0) && !opt_board_claim_part(B, 3, 1));
	ck_assert(opt_board_part(B, 3, 0) >= cut_w(&f.in, &b) && opt_board_part(B, 3, 1) >= cut_w(&f.in, &b));
	opt_board_free(B);

	/* the other worker claimed part 1 and stopped (it never publishes): searched alongside it, in
	 * slices; every slice's bound valid and the vector closed in the end, with the same verdict */
	B = board_for(&f);
	ck_assert(opt_board_claim_part(B, 5, 1));
	search_in_slices(&f, 5, &c, a.power_w, false);
	ck_assert(c.ok);
	ck_assert_msg(cut_w(&f.in, &c) <= a.power_w * (1 + 1e-9) && cut_w(&f.in, &a) <= c.power_w * (1 + 1e-9),
		      "alongside %.9f W, whole %.9f W", c.power_w, a.power_w);
	ck_assert(opt_board_part(B, 5, 0) >= cut_w(&f.in, &c) && opt_board_part(B, 5, 1) >= cut_w(&f.in, &c));
	opt_board_free(B);

	/* the other worker proved part 1 closed: only part 0 is searched, and the vector closes */
	B = board_for(&f);
	ck_assert(opt_board_claim_part(B, 6, 1));
	opt_board_raise_part(B, 6, 1, 1e9);
	struct opt_sol d;
	ck_assert_int_eq(opt_sol_init(&d, &f.in), 0);
	r = opt_mst_vector_bb(&f.M, &f.C, &f.s, 6, &d, opt_now_s() + 60.0, NULL);
	ck_assert(isinf(r) && r > 0);
	ck_assert(opt_board_part(B, 6, 1) == 1e9);
	ck_assert(opt_board_part(B, 6, 0) > 0);
	opt_sol_free(&d);
	opt_board_free(B);
	f.M.board = NULL;
	opt_sol_free(&a);
	opt_sol_free(&b);
	opt_sol_free(&c);
	teardown(&f);
}
END_TEST

START_TEST(band_dive_finds_a_better_plan)
{
	struct fixture f = {0};
	double opt_w;
	setup(&f, 6, 7, &opt_w);
	/* the cut-off just under the optimum: every plan is at or above it, so the search closes each
	 * leaf and node with a plan below the incumbent only by that bound */
	f.in.rel_gap = 1 - (1 - 1e-5) / 1.02;
	struct opt_sol a;
	ck_assert_int_eq(opt_sol_init(&a, &f.in), 0);
	a.ok = true, a.power_w = 1.02 * opt_w; /* a stand-in incumbent: only its power is used */
	double r = opt_mst_vector_bb(&f.M, &f.C, &f.s, 0, &a, opt_now_s() + 60.0, NULL);
	ck_assert(isinf(r) && r > 0);
	ck_assert_msg(a.power_w < 1.02 * opt_w * (1 - 1e-9), "incumbent kept at %.9f W (optimum %.9f W)", a.power_w,
		      opt_w);
	ck_assert_msg(a.power_w >= opt_w * (1 - 1e-4) * (1 - 1e-9), "%.9f W below the optimum %.9f W", a.power_w,
		      opt_w);
	char why[256] = "";
	ck_assert_msg(opt_evaluate(&f.in, &a, why, sizeof(why)), "the dive's plan: %s", why);
	opt_sol_free(&a);
	teardown(&f);
}
END_TEST

START_TEST(fruitless_cut_searches_stop)
{
	struct fixture f = {0};
	double opt_w;
	setup(&f, 10, 7715119, &opt_w);
	struct opt_sol a;
	ck_assert_int_eq(opt_sol_init(&a, &f.in), 0);
	struct opt_bb *T = NULL;
	double r = opt_mst_vector_bb(&f.M, &f.C, &f.s, 0, &a, opt_now_s() + 2.0, &T);
	ck_assert_msg(T != NULL, "the vector was closed in 2 s (bound %.9f W)", r);
	size_t nogoods, searches;
	opt_mst_bb_cut_stats(T, &nogoods, &searches);
	ck_assert_uint_gt(nogoods, 3);
	ck_assert_uint_lt(searches, nogoods);
	/* handed back until it closes the vector: it core-branched, and its plan is the optimum */
	for (int call = 0; call < 20 && !(isinf(r) && r > 0); call++)
		r = opt_mst_bb_resume(T, &a, opt_now_s() + 60.0);
	ck_assert_msg(isinf(r) && r > 0, "still open at %.9f W", r);
	ck_assert_uint_gt(opt_mst_bb_core_branches(T), 0);
	ck_assert(a.ok);
	ck_assert_msg(a.power_w <= opt_w / (1 - f.in.rel_gap) * (1 + 1e-9) && a.power_w >= opt_w * (1 - f.in.rel_gap) * (1 - 1e-9),
		      "%.9f W against the optimum %.9f W", a.power_w, opt_w);
	char why[256] = "";
	ck_assert_msg(opt_evaluate(&f.in, &a, why, sizeof(why)), "the search's plan: %s", why);
	opt_mst_bb_free(T);
	opt_sol_free(&a);
	teardown(&f);
}
END_TEST

/* The search at f->s without an incumbent's help (a is empty), its first slice 3 ms and then resumed
 * until it closes the vector (so that the search outlives its closure); returns its core branches. */
static size_t close_counting_core_branches(struct fixture *f, struct opt_sol *a)
{
	struct opt_bb *T = NULL;
	double r = opt_mst_vector_bb(&f->M, &f->C, &f->s, 0, a, opt_now_s() + 0.003, &T);
	ck_assert_msg(T != NULL, "closed in 3 ms (%.9f W)", r);
	for (int call = 0; call < 20 && !(isinf(r) && r > 0); call++)
		r = opt_mst_bb_resume(T, a, opt_now_s() + 60.0);
	ck_assert_msg(isinf(r) && r > 0, "still open at %.9f W", r);
	size_t n = opt_mst_bb_core_branches(T);
	opt_mst_bb_free(T);
	return n;
}

START_TEST(core_branches_keep_the_optimum)
{
	static const uint64_t seeds[] = {15, 31};
	size_t fired = 0;
	for (size_t q = 0; q < sizeof(seeds) / sizeof(seeds[0]); q++) {
		struct fixture f = {0};
		double opt_w;
		setup(&f, 6, seeds[q], &opt_w);
		double best = brute_force(&f);
		ck_assert(isfinite(best));
		struct opt_sol a;
		ck_assert_int_eq(opt_sol_init(&a, &f.in), 0);
		size_t n = close_counting_core_branches(&f, &a);
		fired += n > 0;
		ck_assert(a.ok);
		ck_assert_msg(a.power_w >= best * (1 - 1e-9) && a.power_w <= best / (1 - f.in.rel_gap) * (1 + 1e-9),
			      "seed %llu: search %.9f W (%zu core branches), brute force %.9f W",
			      (unsigned long long)seeds[q], a.power_w, n, best);
		opt_sol_free(&a);
		teardown(&f);
	}
	ck_assert_uint_ge(fired, 2);
}
END_TEST


int main(void)
{
	Suite *s = suite_create("optimizer_bb");
	TCase *tc = tcase_create("bb");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, search_matches_brute_force);
	tcase_add_test(tc, stopped_search_goes_on_to_the_same_verdict);
	tcase_add_test(tc, split_parts_cover_the_vector);
	tcase_add_test(tc, band_dive_finds_a_better_plan);
	tcase_add_test(tc, fruitless_cut_searches_stop);
	tcase_add_test(tc, core_branches_keep_the_optimum);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
