/* SPDX-License-Identifier: MIT */
/*
 * The exact mode's search over OPP vectors (docs/MODEL.md, "Exact"), driving the master of
 * formulation B (built in master_build.c, solved in master_solve.c, branch and bound in master_bb.c).
 *
 * Power depends only on which island / server each task uses and on the OPPs, never on the core or
 * the deadlines. The master therefore drops cores: per island k the aggregate density of its tasks
 * must fit n_k * cap at the chosen OPP; each task alone must fit one core (d >= C/cap); paths use
 * finish potentials; FIFO servers are linearised exactly. It is a relaxation of the full problem with
 * the same objective, so its bound is a valid lower bound; a master solution whose tasks can then be
 * packed onto cores (opt_pack: worst fit + deadline LP) is globally optimal.
 *
 * The density C/d is convex but not linear. With inverse-deadline variables v_ik and the placement
 * binary a_ik, v >= a^2 / d is the perspective of 1/d (= 1/d at a = 1, 0 at a = d = 0); its tangents
 *     v >= 2 a / t - d / t^2
 * are valid everywhere, so any finite set of them is an outer approximation (valid bound). Four are
 * static; more are generated lazily in GLPK's GLP_IROWGEN callback at every LP optimum that violates
 * the perspective (rows added there live only in the current subtree; we re-separate at every node).
 * GLPK settings, and why: presolve off (the callback must see the original columns),
 * simple rounding off (its incumbents would bypass the lazy rows), dual simplex. The incumbent from the
 * heuristic enters as an objective cut-off row (P <= incumbent (1 - gap tolerance)): if the master becomes
 * infeasible, the incumbent is proven optimal; rather than glp_ios_heur_sol, whose solutions GLPK does
 * not check against lazy rows.
 *
 * With --backend cbc the same model goes to CBC (C interface) in an outer-approximation loop: solve,
 * add the violated tangents, solve again; every CBC bound is a valid bound.
 */
#include "optimizer/master_impl.h"

#include <stdlib.h>
#include <string.h>

/*
 * Small sets (up to OPT_PER_CORE_TASKS): the island search keeps the whole time, and at each vector
 * its branch and bound the whole vector share (a vector it leaves open still gets the island MILP in
 * the final passes over the open vectors); the per-core phase gets only what the island search
 * leaves when it ends early. Why: the hard vectors are trees for the branch and bound, and the time
 * held back from it went to phases that did not move the bound.
 * - Up to 20 tasks since 2026-12-05: on the XU4 20-task sets the branch and bound of the one hard
 *   vector had stopped at 60 % of the time and the per-core phase after it never raised the bound
 *   (seeds 8681257 and 9176314 proven in 2.7-4.7 s, open at 0.04-0.11 % before).
 * - At 30 tasks since 2026-12-05, night (40 % held back for the per-core phase and 10 % of each
 *   vector's share for the MILP before): traced on eight Xavier sets, the per-core phase's 4 s
 *   raised neither bound nor plan on seven; 24 fresh Xavier 30-task sets, proven 15 against 14,
 *   worst gap 0.020 / 0.100 / 0.091 % against 0.148 / 0.128 / 0.118 % in three runs of eight.
 *   (An earlier trial had given plans 0.15-0.17 % dearer on three of six sets: before the FIFO pairs
 *   and the projections, when 60-odd vectors stayed below the cut-off; now it is 2-6 on most sets.)
 */

/* Whether vector s is nowhere faster than a vector proven infeasible (then it is infeasible too:
 * every WCET and latency there is at least as long, so every row only gets harder). */
static bool dominated_infeasible(const struct master *M, const struct opt_sol *s, struct opt_sol *tmp)
{
	const struct opt_inst *in = M->in;
	/* a scan of the first 512 is enough in practice (any subset keeps the test valid), and keeps
	 * it linear on Xavier's many canonical vectors */
	for (size_t j = 0; j < M->n_infeas && j < 512; j++) {
		opt_vector_decode(in, tmp, M->infeas[j]);
		bool dom = true;
		for (size_t k = 0; dom && k < in->n_isl; k++)
			dom = s->isl_opp[k] <= tmp->isl_opp[k];
		for (size_t a = 0; dom && a < in->n_acc; a++)
			dom = s->acc_opp[a] <= tmp->acc_opp[a];
		if (dom)
			return true;
	}
	return false;
}

/* Takes the bound the other worker screened for vector id at position pos, when there is one and
 * this worker has none (board.c); a vector without a plan also joins M->infeas. */
static void adopt(struct master *M, size_t id, size_t pos)
{
	double b = M->board && isnan(M->scr_lb[pos]) ? opt_board_get(M->board, pos) : NAN;
	if (isnan(b))
		return;
	M->scr_lb[pos] = b;
	if (b == INFINITY)
		M->infeas[M->n_infeas++] = id;
}

/* Screens vector id (at position pos, decoded in s) unless done: its bound, INFINITY when it has no
 * plan (its relaxation is infeasible, or it is nowhere faster than a vector that has none), cached in
 * M->scr_lb[pos]; NAN when no LP optimum came in time (screened again later) or when the other
 * worker screens it (adopted later). */
static double screen_one(struct master *M, const struct opt_sol *s, size_t id, size_t pos, double cut, double dl,
			 struct opt_sol *tmp)
{
	adopt(M, id, pos);
	if (!isnan(M->scr_lb[pos]) || opt_now_s() >= dl)
		return M->scr_lb[pos];
	if (M->board && !opt_board_claim(M->board, pos))
		return NAN;
	bool inf = dominated_infeasible(M, s, tmp);
	double b = inf ? INFINITY : opt_screen_vector(M->scr, s, cut, dl, &inf);
	if (inf)
		M->infeas[M->n_infeas++] = id;
	if (b > -INFINITY || inf) /* -INFINITY: no LP optimum in time, screen again later */
		M->scr_lb[pos] = b;
	if (M->board)
		opt_board_put(M->board, pos, M->scr_lb[pos]);
	return M->scr_lb[pos];
}

/*
 * Before vector v (decoded in s) is screened: bisection along the coordinate c with the most OPPs
 * for the fastest vector of that line (v with OPP t >= v's on c) that has no plan. Having no plan is
 * monotone along the line (a vector nowhere faster than one without a plan has none either), and one
 * such vector closes v and every vector it dominates without an LP of their own
 * (dominated_infeasible), where the bound order screened the slowest, most dominated vectors first,
 * one LP each
 * (XU4, 120 tasks: ~205 of ~225 vectors below the cut-off have no plan; the screening took ~5.5 s on a
 * loaded machine and sometimes did not end in its share). Every probe is an ordinary screening of the
 * probed vector, cached for it. Only where positions are ids (no canonical list).
 */
static void probe_line(struct master *M, struct opt_sol *s, size_t id, double cut, double dl, struct opt_sol *tmp)
{
	const struct opt_inst *in = M->in;
	size_t dims = in->n_isl + in->n_acc, c = 0, stride = 1, cs = 1, best = 0;
	for (size_t k = 0; k < dims; k++) {
		size_t n = opt_coord_nopp(in, k);
		if (n > best)
			best = n, c = k, cs = stride;
		stride *= n;
	}
	size_t *x = opt_coord_opp(in, s, c);
	size_t v_t = *x;
	/* on the line: t <= none has no plan, t >= some has one (some = best: not known yet) */
	long none = -1;
	size_t some = best;
	while (none < (long)v_t && some > v_t && opt_now_s() < dl) {
		size_t a = none + 1 > (long)v_t ? (size_t)(none + 1) : v_t, mid = (a + some) / 2;
		*x = mid;
		size_t u = id - v_t * cs + mid * cs;
		double b = screen_one(M, s, u, u, cut, dl, tmp);
		if (isnan(b))
			break;
		if (b == INFINITY)
			none = (long)mid;
		else
			some = mid;
	}
	*x = v_t;
}

/*
 * Raises the bounds of the vectors in vs[0..nv) (sorted by bound) with the screening LP, in order,
 * while they are below the incumbent and until screen_dl; results are cached in M for the other
 * phase. Re-sorts vs (opt_vec_resort). Every screened bound is valid (screen.c), so pruning on it
 * stays exact. With probe (positions are ids), each vector is first probed along a line of faster
 * vectors (probe_line).
 * With a board (M->board), the vectors the other worker has screened take its bounds, and those it
 * is screening are skipped: both walk the same order, so each screens about half. Past screen_dl
 * it only takes the other worker's bounds.
 */
static void screen_vectors(struct master *M, struct opt_vec *vs, size_t nv, const struct opt_sol *inc, double screen_dl,
			   bool probe)
{
	const struct opt_inst *in = M->in;
	struct opt_sol s, tmp;
	if (!M->scr_lb) {
		M->scr_lb = malloc(nv * sizeof(double));
		M->infeas = malloc(nv * sizeof(size_t));
		M->scr = opt_screen_new(in);
		for (size_t pos = 0; M->scr_lb && pos < nv; pos++)
			M->scr_lb[pos] = NAN;
	}
	if (!M->scr_lb || !M->infeas || !M->scr || opt_sol_init(&s, in))
		return;
	if (opt_sol_init(&tmp, in)) {
		opt_sol_free(&s);
		return;
	}
	double cut = cut_w(in, inc);
	size_t j = 0; /* vs[0..j) visited (their bounds may rise), vs[j..nv) untouched */
	for (; j < nv && vs[j].lb < cut; j++) {
		size_t id = vs[j].id, pos = vs[j].pos;
		adopt(M, id, pos);
		if (isnan(M->scr_lb[pos]) && opt_now_s() < screen_dl) {
			opt_vector_decode(in, &s, id);
			if (probe && !dominated_infeasible(M, &s, &tmp))
				probe_line(M, &s, id, cut, screen_dl, &tmp);
			screen_one(M, &s, id, pos, cut, screen_dl, &tmp);
		}
		if (!isnan(M->scr_lb[pos]))
			vs[j].lb = fmax(vs[j].lb, M->scr_lb[pos]);
	}
	opt_vec_resort(vs, j, nv);
	opt_sol_free(&s);
	opt_sol_free(&tmp);
}

/* The share of the lazy loop's time that goes to the iterated descent when the hull runs beside,
 * and of what is left then, to the plans where the hull points (plans_beside_the_hull). */
#define OPT_RESTART_SHARE 0.35
#define OPT_BESIDE_SHARE 0.9

/*
 * With the OPP hull beside (optimize.c), the plans where the hull points (hull_plans.c), from the
 * hint the hull worker published, once it has one: the hull worker searches from the same hint at
 * about the same time, so this search starts elsewhere on the line (three quarters of the way). Why:
 * the lazy loop and its roundings, which had this time, changed neither plan nor bound at 120 Xavier
 * tasks (docs/OPTIMIZER-LOG.md, "Xavier at 120 tasks: the hull on CLP"): the hull's bound is the larger one,
 * and no vector reached the loop's screening stage, so there was nothing to round.
 */
static void plans_beside_the_hull(const struct opt_inst *in, struct opt_sol *inc, double dl)
{
	struct opt_sol hint;
	if (opt_sol_init(&hint, in))
		return;
	if (opt_peer_hint(in, &hint))
		opt_hull_plans(in, &hint, inc, dl, true);
	opt_sol_free(&hint);
}

/* LP rounding (rounding.c) at the vectors vs[0..nv) with the smallest bounds, best bound first, while
 * their bounds are below the cut-off; with a board, each vector by one of the two workers. */
static void round_vectors(struct master *M, const struct opt_vec *vs, size_t nv, struct opt_sol *inc, double dl)
{
	const struct opt_inst *in = M->in;
	struct opt_sol s = {0}, vec = {0};
	struct opt_ws *w = opt_ws_new(in);
	bool ok = w && M->scr && !opt_sol_init(&s, in) && !opt_sol_init(&vec, in);
	for (size_t j = 0; ok && j < nv && opt_now_s() < dl; j++) {
		if (vs[j].lb >= cut_w(in, inc))
			break;
		if (M->board && !opt_board_claim_rounding(M->board, vs[j].pos))
			continue; /* the other worker rounds it (board.c) */
		opt_vector_decode(in, &vec, vs[j].id);
		opt_round_vector(in, M->scr, &vec, &s, w, inc, dl);
	}
	opt_sol_free(&vec);
	opt_sol_free(&s);
	opt_ws_free(w);
}

/*
 * One OPP vector: solve the island-level master; if its optimum beats the incumbent but does not
 * pack (heuristic packing and repair), check packing exactly with the core-level master; a proven
 * impossible assignment gets a no-good cut and the vector is solved again. Returns the vector's open
 * bound (INFINITY when closed: nothing better than the incumbent at this vector).
 */
static double solve_vector(struct master *M, struct master *C, struct opt_sol *inc, double dl, double deadline_s,
			   struct cand *cd, struct opt_sol *tmp)
{
	const struct opt_inst *in = M->in;
	for (int round = 0; round < 50; round++) {
		double cut = cut_w(in, inc);
		if (isfinite(cut))
			glp_set_row_bnds(M->lp, M->cutoff_row, GLP_UP, 0, cut - in->base_w);
		bool fin = false;
		opt_mst_mip(M, dl, &fin);
		double mb = M->bound;
		bool have = opt_mst_best_cand(M, cd);
		if (M->n_cands)
			opt_mst_repair(M, inc, deadline_s);
		if (!fin)
			return mb;
		if (!isfinite(mb) || mb >= cut_w(in, inc))
			return INFINITY; /* closed */
		if (!have || !C || opt_now_s() >= dl)
			return mb;
		int r = opt_mst_pack_exact(C, cd, tmp, dl);
		if (r == 1) {
			if (!inc->ok || tmp->power_w < inc->power_w)
				opt_sol_copy(inc, tmp, in);
		} else if (r == 0) {
			opt_mst_nogood(M, cd);
		} else {
			return mb;
		}
	}
	return M->bound;
}

/* Publishes (worker.c) the bound the search has proven so far: every vector before done is closed
 * (nothing below the cut-off) or bounded by its open bound ob, every later one by its own bound,
 * which is at least vs[done].lb (sorted); min with the cut-off, since closing was relative to it. */
static void publish_bound(const struct opt_inst *in, const struct opt_vec *vs, const double *ob, size_t done, size_t nv,
			  const struct opt_sol *inc)
{
	double cut = cut_w(in, inc), b = done < nv ? vs[done].lb : INFINITY;
	for (size_t t = 0; ob && t < done; t++)
		if (ob[t] < INFINITY && vs[t].lb < cut)
			b = fmin(b, fmax(vs[t].lb, ob[t]));
	opt_pub_bound(in, fmin(b, cut));
}

/* Keeps what the island search proved for the per-core phase (M->isl_lb, M->isl_bb): vectors
 * vs[0..done) were visited (their branch and bound ran), ob[t] is their open bound (INFINITY:
 * closed, i.e. nothing below the cut-off then, which is at least the current one). */
static void keep_island_result(struct master *M, const struct opt_vec *vs, const double *ob, size_t done, size_t nv,
			       const struct opt_sol *inc)
{
	free(M->isl_lb), free(M->isl_bb);
	M->isl_lb = malloc(nv * sizeof(double));
	M->isl_bb = calloc(nv, sizeof(bool));
	if (!M->isl_lb || !M->isl_bb) { /* the per-core phase then starts from its own bounds */
		free(M->isl_lb), free(M->isl_bb);
		M->isl_lb = NULL, M->isl_bb = NULL;
		return;
	}
	double cut = cut_w(M->in, inc);
	for (size_t t = 0; t < nv; t++) {
		size_t pos = vs[t].pos;
		M->isl_lb[pos] = vs[t].lb;
		if (t < done) {
			M->isl_bb[pos] = true;
			M->isl_lb[pos] = fmax(vs[t].lb, ob[t] == INFINITY ? cut : ob[t]);
		}
	}
}

/* LP rounding in the lazy loop's wake: at its screened vectors only (their LP has a point), best
 * bound first. The smallest bounds are mostly vectors without any plan whose LPs the loop has not
 * reached (each rounding there is an LP that finds nothing). */
static void round_screened(struct master *M, const struct opt_lazy *L, const struct opt_vec *vs, size_t nv,
			   struct opt_sol *inc, double dl)
{
	size_t n = 0;
	for (size_t t = 0; t < nv; t++)
		n += opt_lazy_screened(L, vs[t].pos);
	struct opt_vec *rv = malloc((n + 1) * sizeof(*rv));
	if (!rv)
		return;
	n = 0;
	for (size_t t = 0; t < nv; t++)
		if (opt_lazy_screened(L, vs[t].pos))
			rv[n++] = vs[t]; /* vs is sorted: so is rv */
	round_vectors(M, rv, n, inc, dl);
	free(rv);
}

/* Raises the bounds of vs[0..nv) with the lazy loop over canonical vectors (lazy.c) until dl, and
 * re-sorts them: its bounds are valid, a closed vector's is INFINITY. */
static void lazy_screen(struct opt_lazy *L, const struct opt_inst *in, struct opt_vec *vs, size_t nv,
			const struct opt_sol *inc, double dl)
{
	opt_pub_bound(in, opt_lazy_run(L, cut_w(in, inc), dl));
	for (size_t t = 0; t < nv; t++)
		vs[t].lb = opt_lazy_bound(L, vs[t].pos);
	qsort(vs, nv, sizeof(*vs), opt_vec_cmp);
}

/* The stopped trees' share of what the first visit of every vector leaves (resume_trees); the island
 * MILP's passes get the rest. All of it to the trees proved no more sets on 56 fresh 20-30-task XU4
 * and Xavier sets than no trees at all (50 of 56 each) and left one plan 0.16 % dearer (XU4 20,
 * seed 13541884: searching least bound first, the tree reached no leaf with the plan that the MILP's
 * repair had found); two thirds proved 52 of 56, no plan dearer than before beyond the tolerance
 * (docs/OPTIMIZER-LOG.md, 2026-12-06, fifth session). */
#define RESUME_SHARE (2.0 / 3.0)

/*
 * The two workers of the small sets share what their searches prove per vector (board.c,
 * opt_board_raise): a vector closed at the cut-off c has no plan below c, and an open one none below
 * its open bound. peer_ob folds the other worker's proof into this worker's open bound ob of the
 * vector at position pos: INFINITY (closed) once it reaches this worker's cut-off, else the larger
 * of the two. share_proof publishes this worker's: ob INFINITY means "closed at cut". Both are no-ops
 * without a board.
 */
static double peer_ob(const struct master *M, size_t pos, double ob, double cut)
{
	double p = M->board ? opt_board_proven(M->board, pos) : 0;
	return p >= cut ? INFINITY : fmax(ob, p);
}

static void share_proof(const struct master *M, const struct opt_vec *v, double ob, double cut)
{
	if (M->board)
		opt_board_raise(M->board, v->pos, fmin(fmax(ob, v->lb), cut));
}

/*
 * The branch and bounds the clock stopped go on where they stopped (master_bb.c keeps their open
 * nodes), least vector bound first, each until dl: the one holding the bound down gets the time,
 * and one that closes early leaves the rest to the next. Up to three rounds, since a search may
 * stop early on a leaf whose packing it could not decide. Why: a vector's search had at most half
 * of what was left, and the passes after it gave the island MILP the rest, which hardly moved the
 * bound (XU4 20 tasks, seed 3265996: one vector's tree stopped at 5 s, the MILP then raised its
 * bound from 2.40276 to 2.40307 W in 4.8 s, the plan at 2.40422 W).
 */
static void resume_trees(const struct master *M, const struct opt_vec *vs, double *ob, struct opt_bb **tree, size_t j,
			 size_t nv, struct opt_sol *inc, double dl)
{
	const struct opt_inst *in = M->in;
	char *done = calloc(j + 1, 1);
	for (int round = 0; done && round < 3 && opt_now_s() < dl; round++) {
		memset(done, 0, j + 1);
		for (;;) {
			size_t best = j;
			double cut = cut_w(in, inc), bb = INFINITY;
			for (size_t t = 0; t < j; t++) {
				ob[t] = peer_ob(M, vs[t].pos, ob[t], cut);
				if (tree[t] && !done[t] && ob[t] < INFINITY && vs[t].lb < cut && fmax(vs[t].lb, ob[t]) < bb)
					bb = fmax(vs[t].lb, ob[t]), best = t;
			}
			if (best == j || opt_now_s() >= dl)
				break;
			done[best] = 1;
			ob[best] = fmax(ob[best], opt_mst_bb_resume(tree[best], inc, dl));
			share_proof(M, &vs[best], ob[best], cut_w(in, inc));
			publish_bound(in, vs, ob, j, nv, inc);
		}
	}
	free(done);
}

/*
 * Exact search over OPP vectors. For a fixed vector the master has no OPP binaries and its capacity
 * rows are exact and tight, so GLPK closes it quickly. Vectors are visited by increasing valid bound
 * (opt_vector_option_bound); the search stops when the next bound reaches the incumbent. Each vector's MILP runs
 * with the cut-off row at the incumbent, so "infeasible" means "nothing better at this vector". A
 * vector that runs out of time stays open with its MILP bound (small sets: its branch and bound
 * goes on later, resume_trees); the final bound is the smallest open bound (or the next unvisited
 * vector's bound).
 *
 * Small sets (<= OPT_PER_CORE_TASKS tasks): each vector is solved with the core-level master itself
 * (binaries per task and core, core symmetry breaking) instead of the island master. With the vector
 * fixed its per-core capacity rows are exact, so its optimum packs by construction (only the
 * deadlines are recomputed from the candidate's cores) and no island assignment that does not fit on
 * the cores can keep a vector open. GLPK closes some vectors much faster this way and others much
 * slower than with the island master (aggregated capacity rows, fewer binaries), hence the
 * portfolio in opt_exact. Its bound is valid for the same reason as the island master's (same
 * objective, deadlines relaxed only by tangents).
 */
static int solve_glpk(struct master *M, struct master *C, bool per_core, double deadline_s, struct opt_sol *inc,
		      bool *finished)
{
	const struct opt_inst *in = M->in;
	per_core = per_core && C;
	struct master *V = per_core ? C : M;   /* the master solved per vector */
	struct master *P = per_core ? NULL : C; /* exact packing checks of V's island assignments */
	size_t nv = opt_vector_count(in);
	size_t *canon = NULL; /* with identical islands: the canonical vectors only (symmetry.c) */
	if (nv > OPT_VECTOR_LIMIT && opt_twin_pairs(in)) {
		size_t nc = opt_canonical_vectors(in, NULL, OPT_CANON_LIMIT);
		canon = nc != SIZE_MAX ? malloc(nc * sizeof(size_t)) : NULL;
		if (canon)
			nv = opt_canonical_vectors(in, canon, nc);
	}
	if (nv > OPT_VECTOR_LIMIT && !canon) { /* one master with free OPP binaries */
		if (inc->ok)
			glp_set_row_bnds(M->lp, M->cutoff_row, GLP_UP, 0, cut_w(in, inc) - in->base_w);
		opt_mst_mip(M, deadline_s, finished);
		if (M->n_cands)
			opt_mst_repair(M, inc, deadline_s);
		opt_pub_bound(in, fmin(M->bound, cut_w(in, inc)));
		return 0;
	}
	struct opt_vec *vs = calloc(nv, sizeof(*vs));
	struct opt_sol s, tmp;
	struct cand cd = {0};
	int rc = -1;
	if (!vs || opt_sol_init(&s, in) || opt_sol_init(&tmp, in) || opt_mst_cand_alloc(&cd, in))
		goto out;
	/* each vector's bound: the stronger of "cheapest option per task" and the capacity-aware
	 * Lagrangian bound (bound.c); both valid, so pruning at the incumbent stays exact */
	struct opt_bound *lag = opt_bound_new(in);
	/* idle power plus every task's cheapest option at any OPP: valid and O(islands) per vector, so
	 * on Xavier's half a million canonical vectors only those it leaves below the incumbent get the
	 * per-task bounds */
	double sep = opt_quick_bound(in) - opt_min_idle_w(in);
	/* above the per-core sizes with a canonical list: the lazy loop refines the bounds (lazy.c) */
	bool lazy = canon && !per_core && in->n_tasks > OPT_PER_CORE_TASKS;
	for (size_t pos = 0; pos < nv; pos++) {
		size_t id = canon ? canon[pos] : pos;
		opt_vector_decode(in, &s, id);
		/* only canonical vectors (symmetry.c): the others have an equivalent among them */
		double lb = opt_vector_canonical(in, &s) ? opt_vector_idle_w(in, &s) + sep : INFINITY;
		if (!lazy && isfinite(lb) && (!inc->ok || lb < inc->power_w))
			lb = fmax(lb, opt_vector_option_bound(in, &s));
		if (!lazy && lag && isfinite(lb) && (!inc->ok || lb < inc->power_w) && opt_now_s() < deadline_s)
			lb = fmax(lb, opt_bound_vector(lag, &s, inc->ok ? inc->power_w : INFINITY));
		vs[pos] = (struct opt_vec){id, pos, lb};
	}
	opt_bound_free(lag);
	/* The per-core phase goes on from what the island search proved: its bounds and closures are
	 * valid here too (same vectors, same objective; a vector closed at an earlier cut-off has no plan
	 * below the current one, which is never larger). Without them it started again from the
	 * Lagrangian bounds and spent its time on vectors the island search had closed (Xavier, 30
	 * tasks: 10 of 356 such vectors in 3.6 s, its bound 5.206 W under the island search's 5.256 W). */
	if (per_core && M->isl_lb)
		for (size_t pos = 0; pos < nv; pos++)
			vs[pos].lb = fmax(vs[pos].lb, M->isl_lb[pos]);
	qsort(vs, nv, sizeof(*vs), opt_vec_cmp);
	/* The island search screens and rounds first (screen.c); above the per-core phase's sizes the
	 * per-vector MILPs hardly move their LP bounds, so most of the time goes to roundings there.
	 * The per-core phase keeps the plain bound order: on the benchmark's 10-task XU4 set, skipping
	 * the vectors that screening closes made GLPK's tree search at the optimum's vector stall (60 s
	 * instead of 1.2 s): the root cut loops at those neighbours leave tangents in the shared model. */
	struct opt_lazy *L = NULL;
	if (lazy && !M->scr)
		M->scr = opt_screen_new(in);
	if (lazy && M->scr) {
		double *lb0 = malloc(nv * sizeof(double));
		for (size_t t = 0; lb0 && t < nv; t++)
			lb0[vs[t].pos] = vs[t].lb;
		if (lb0)
			L = opt_lazy_new(in, M->scr, canon, nv, lb0);
		free(lb0);
	}
	/* With the OPP hull beside (optimize.c) the lazy loop's bound rarely counts (Xavier 120 tasks:
	 * 5.6-5.7 W against the hull's 5.8-5.96 W), and the gap left is the plan's: half of the time goes
	 * to the heuristic's iterated descent first (seeds 1730919 / 8573466 / 16493118: 6.1530 /
	 * 5.9648 / 6.0813 W -> 6.0820 / 5.9575 / 6.0765 W). */
	if (L && in->hull_beside && inc->ok) {
		opt_heur_restarts(in, opt_now_s() + OPT_RESTART_SHARE * (deadline_s - opt_now_s()), inc, 1);
		plans_beside_the_hull(in, inc, opt_now_s() + OPT_BESIDE_SHARE * (deadline_s - opt_now_s()));
	}
	if (L) { /* the same shares as the screening below: bounds, roundings, bounds again */
		lazy_screen(L, in, vs, nv, inc, opt_now_s() + 0.6 * (deadline_s - opt_now_s()));
		round_screened(M, L, vs, nv, inc, opt_now_s() + 0.7 * (deadline_s - opt_now_s()));
		lazy_screen(L, in, vs, nv, inc, deadline_s);
		opt_lazy_free(L);
	} else if (!per_core) {
		/* line probes above the per-core sizes only: the small sets' screening ends well within its
		 * share, and a changed order moved their branch and bound (XU4 30 tasks, seed 9194263:
		 * proven in 2.3 s without, open at 0.098 % in 10 s with) */
		bool probe = !canon && in->n_tasks > OPT_PER_CORE_TASKS;
		if (in->board && !M->board && opt_board_join(in->board, nv, canon != NULL))
			M->board = in->board;
		screen_vectors(M, vs, nv, inc, opt_now_s() + 0.6 * (deadline_s - opt_now_s()), probe);
		/* with a board: both workers walk the same order, so most of the other's bounds were still
		 * being computed when this one passed them; take them now, and after the roundings those
		 * that were then */
		if (M->board)
			screen_vectors(M, vs, nv, inc, -INFINITY, probe);
		double share = in->n_tasks > OPT_PER_CORE_TASKS ? 0.7 : 0.2;
		round_vectors(M, vs, nv, inc, opt_now_s() + share * (deadline_s - opt_now_s()));
		if (M->board)
			screen_vectors(M, vs, nv, inc, -INFINITY, probe);
		/* Above the per-core sizes, the vectors the screening did not reach in its share (a loaded
		 * machine) and that are still below the rounded incumbent's cut-off are screened now: a
		 * screening LP bounds (or closes) a vector in ~25 ms, where the island MILP at 120 tasks
		 * often ends its 1-2 s share without any bound (XU4 120 tasks, seed 778: 20 of 229
		 * vectors left unscreened in one run of two, the MILP then closed none, gap 2.8 % against
		 * 0.02 %). The bounds are the same valid screening bounds, only computed later. */
		if (in->n_tasks > OPT_PER_CORE_TASKS)
			screen_vectors(M, vs, nv, inc, deadline_s, probe);
	}
	publish_bound(in, vs, NULL, 0, nv, inc);
	double *ob = calloc(nv, sizeof(double)); /* open bound per visited vector (INFINITY: closed) */
	struct opt_bb **tree = calloc(nv, sizeof(*tree)); /* unfinished branch and bounds, by position */
	if (!ob || !tree) {
		free(ob);
		free(tree);
		goto out;
	}
	size_t j = 0;
	for (; j < nv && isfinite(vs[j].lb); j++) {
		double cut = cut_w(in, inc);
		if (vs[j].lb >= cut || opt_now_s() >= deadline_s)
			break;
		if ((ob[j] = peer_ob(M, vs[j].pos, -INFINITY, cut)) == INFINITY)
			continue; /* the other worker closed it */
		opt_vector_decode(in, &s, vs[j].id);
		opt_mst_fix_vector(V, &s);
		/* later vectors must leave time: at most half of what is left, at least 0.2 s; the last vector
		 * below the cut-off gets it all (the cut-off only falls, so no later vector can need any:
		 * Xavier's 10- and 20-task sets often have one hard vector, whose branch and bound had
		 * stopped at half of the phase, and the MILPs after it hardly moved its bound) */
		double left = deadline_s - opt_now_s();
		bool last = j + 1 >= nv || vs[j + 1].lb >= cut;
		double dl = last ? deadline_s : opt_now_s() + fmax(fmin(left, 0.2), 0.5 * left);
		/* the branch and bound on the screening LP first, the whole vector share; in the per-core
		 * phase (small sets) at the vectors the island search did not reach (on the easy ones it is
		 * much faster than the core-level MILP: 0.01-0.1 s against 0.2-0.7 s on Xavier).
		 * At every size since 2026-12-07 (up to OPT_PER_CORE_TASKS before): above, the island MILP
		 * hardly moved a vector's bound, and its candidates at the cheapest vector did not pack; the
		 * branch and bound in the precise mode (master_bb.c, bb_search) proves such vectors. XU4 120
		 * tasks, seed 9833854: open at 3.13 % after 60 s (plan 4.6473 W at (10 17), the vector (12
		 * 16) held at 4.499 W), proven in 2.6 s (4.5026 W at (12 16)); twelve fresh XU4 50 / 80 / 120
		 * and eight ZCU102 50 / 80 sets: all proven but one XU4 120 at 0.021 % (before: none of the
		 * XU4 ones, at 0.02-0.26 %). On Xavier above 30 tasks the lazy loop's canonical vectors leave
		 * it no time: the same plans and bounds on ten sets. */
		bool bb = !per_core || (M->isl_bb && !M->isl_bb[vs[j].pos]);
		/* an unfinished branch and bound still bounds the vector (the open parts of its tree) */
		double bbv = bb ? opt_mst_vector_bb(M, C, &s, vs[j].pos, inc, dl, &tree[j]) : -INFINITY;
		if (bbv == INFINITY) {
			ob[j] = INFINITY;
			share_proof(M, &vs[j], ob[j], cut_w(in, inc));
			continue;
		}
		ob[j] = fmax(bbv, solve_vector(V, P, inc, dl, deadline_s, &cd, &tmp));
		share_proof(M, &vs[j], ob[j], cut_w(in, inc));
		ob[j] = peer_ob(M, vs[j].pos, ob[j], cut_w(in, inc));
		publish_bound(in, vs, ob, j + 1, nv, inc);
	}
	resume_trees(M, vs, ob, tree, j, nv, inc, opt_now_s() + RESUME_SHARE * (deadline_s - opt_now_s()));
	/* Vectors left open (time) get the rest of the budget, those with a stopped tree too: the cuts
	 * and no-goods gathered meanwhile often close them quickly, and the MILP's repair finds plans
	 * that the tree's leaves do not. */
	for (int pass = 0; pass < 3 && opt_now_s() < deadline_s; pass++)
		for (size_t t = 0; t < j && opt_now_s() < deadline_s; t++) {
			double cut = cut_w(in, inc);
			ob[t] = peer_ob(M, vs[t].pos, ob[t], cut);
			if (ob[t] == INFINITY || vs[t].lb >= cut)
				continue;
			opt_vector_decode(in, &s, vs[t].id);
			opt_mst_fix_vector(V, &s);
			double again = solve_vector(V, P, inc, deadline_s, deadline_s, &cd, &tmp);
			ob[t] = fmax(ob[t], again); /* both are valid bounds of this vector: keep the larger */
			share_proof(M, &vs[t], ob[t], cut_w(in, inc));
			publish_bound(in, vs, ob, j, nv, inc);
		}
	for (size_t t = 0; t < j; t++)
		opt_mst_bb_free(tree[t]);
	free(tree);
	if (!per_core)
		keep_island_result(M, vs, ob, j, nv, inc);
	double open_bound = INFINITY;
	for (size_t t = 0; t < j; t++) {
		double cut = cut_w(in, inc);
		ob[t] = peer_ob(M, vs[t].pos, ob[t], cut);
		if (ob[t] < INFINITY && vs[t].lb < cut) /* -INFINITY (no LP bound in time): the vector's own */
			open_bound = fmin(open_bound, fmax(vs[t].lb, ob[t]));
	}
	free(ob);
	double rest = j < nv ? vs[j].lb : INFINITY;
	M->bound = fmin(open_bound, rest);
	*finished = !isfinite(open_bound) && (j >= nv || !isfinite(rest) || rest >= cut_w(in, inc));
	rc = 0;
out:
	free(vs);
	free(canon);
	opt_mst_cand_free(&cd);
	opt_sol_free(&s);
	opt_sol_free(&tmp);
	return rc;
}

int opt_exact(const struct opt_inst *in, const struct pd_opt_params *p, double deadline_s, struct opt_sol *inc,
	      double *lb, bool *finished)
{
	struct master M = {0};
	*finished = false;
	*lb = -INFINITY;
	double cutoff = cut_w(in, inc);
	/* The island-level master, and for the exact packing checks (up to 60 tasks) the core-level one. */
	struct master C = {0};
	bool with_cores = in->n_tasks <= 60 && p->backend == PD_BACKEND_GLPK;
	if (opt_mst_build(&M, in, cutoff, false) || (with_cores && opt_mst_build(&C, in, INFINITY, true))) {
		opt_mst_free(&M);
		opt_mst_free(&C);
		return -1;
	}
	glp_term_out(GLP_OFF);
	int rc;
#ifdef PD_HAVE_CBC
	if (p->backend == PD_BACKEND_CBC) {
		rc = opt_mst_solve_cbc(&M, deadline_s, finished);
	} else
#endif
	{
		/* Small sets: a portfolio on one valid bound. The island search (screening, branch and
		 * bound with exact packing) proves most sets; the per-core search then gets what it leaves
		 * and proves some that the island search does not. Each phase's bound is valid (min with
		 * the incumbent), so the larger one is kept. */
		bool small = with_cores && in->n_tasks <= OPT_PER_CORE_TASKS;
		rc = solve_glpk(&M, with_cores ? &C : NULL, false, deadline_s, inc, finished);
		if (small && rc == 0 && !*finished && opt_now_s() < deadline_s) {
			double lb1 = fmin(M.bound, cut_w(in, inc));
			rc = solve_glpk(&M, &C, true, deadline_s, inc, finished);
			if (rc == 0 && lb1 > M.bound)
				M.bound = lb1;
		}
	}
	glp_term_out(GLP_ON);
	if (rc < 0) {
		opt_mst_free(&M);
		opt_mst_free(&C);
		return -1;
	}
	/* Bound: the master's; when the cut-off made it infeasible, nothing beats the incumbent. */
	if (rc == 0)
		opt_mst_repair(&M, inc, deadline_s);
	cutoff = cut_w(in, inc);
	*lb = fmin(M.bound, cutoff);
	opt_mst_free(&M);
	opt_mst_free(&C);
	return 0;
}
