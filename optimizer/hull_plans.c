/* SPDX-License-Identifier: MIT */
/*
 * Plans where the OPP hull points (both workers of the hull's portfolio: optimize.c, hull_then_plans,
 * and master.c, plans_beside_the_hull; docs/MODEL.md, "Exact", plans where the hull points).
 *
 * Why: above 30 tasks on Xavier the gap left after the time limit is mostly the plan's, and the
 * plans came from descents over OPP vectors (the heuristic's from the top vector, the iterated ones
 * from the incumbent's) that step down or swap one or two OPPs at a time, each step judged by a
 * heuristic placement. Such descents stay in the valley they start in: Xavier 120 tasks, seed
 * 13017156, plans at (1036.8 1190.4 1267.2 1267.2 MHz, GPU 675.75 MHz), 6.0967 W after 10 s and
 * 6.0789 W after 40 s, while the LP rounding at the vector the hull's point suggests, with the GPU
 * at 522.75 MHz, packs 6.0055 W in 0.4 s (the hull's bound is 5.8616 W: 3.9 % -> 2.4 %).
 *
 * Two observations make the search below cheap enough for the seconds the workers have left:
 * - the screening LP's bound at a vector (screen.c) predicts what its rounding packs, to within
 *   0.05-0.3 % where the rounding packs, so the search can move by screened bounds (one LP each,
 *   warm from the previous vector: 0.1-1.7 s at 120 tasks) and round mostly where it ends;
 * - the hull's point spreads the identical islands over many OPPs, and its quantiles (hull.c,
 *   hint_from) keep the spread between slow and fast islands that the cheap plans have, but may lie
 *   where no plan is (too little capacity): the search starts on the line from that vector toward the
 *   incumbent's, at a point whose LP has a plan below the cut-off.
 * The search only makes plans; no bound depends on it.
 */
#include "optimizer/master_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Bisection steps on the line from the hint toward the incumbent's vector (start). */
#define HP_LINE_STEPS 2
/* Vectors screened at most (the memo). */
#define HP_MAX_SEEN 96
/* The share of the window that the descent over screened bounds may take; the roundings get the rest. */
#define HP_DESCENT_SHARE 0.5
/* Vectors rounded at most, best screened bound first. */
#define HP_ROUNDINGS 3
/* The path Lagrangian's multiplier updates before a vector's LP (as the lazy loop's, lazy.c): the
 * line's first points often have no plan, and the LP took up to 2 s to say so at 120 tasks. */
#define HP_PL_ROUNDS 60
/* A step must lower the screened bound by this much (relative) to count. */
#define HP_STEP_GAIN 1e-6

struct hp {
	const struct opt_inst *in;
	struct opt_screen *scr;
	struct opt_pathlag *pl; /* "no plan here" in milliseconds, before an LP (pathlag.c) */
	struct opt_sol *best;
	bool beside;        /* the search worker's search: its line starts three quarters of the way */
	struct opt_ws *w;
	struct opt_sol tmp; /* scratch plan of the roundings */
	size_t nc;          /* coordinates: islands, then accelerators */
	size_t *seen;       /* [n_seen * nc]: vectors screened (canonical) */
	double *seen_lb;    /* their screened bounds (INFINITY: no LP plan below the cut-off then) */
	bool *done;         /* whether a rounding of theirs packed, or every rounding was tried */
	bool *cut_short;    /* whether the clock cut their Kelley loop short (their bound: a valid low one) */
	size_t n_seen;
};

static void get_vec(const struct hp *P, struct opt_sol *s, size_t *v)
{
	for (size_t c = 0; c < P->nc; c++)
		v[c] = *opt_coord_opp(P->in, s, c);
}

static void set_vec(const struct hp *P, struct opt_sol *s, const size_t *v)
{
	for (size_t c = 0; c < P->nc; c++)
		*opt_coord_opp(P->in, s, c) = v[c];
	opt_vector_sort_twins(P->in, s);
}

/* The screened bound at s's vector (canonical), from the memo when it was screened before; INFINITY
 * when its LP has no plan below the cut-off, or when the memo is full. */
static double screened(struct hp *P, struct opt_sol *s, double dl)
{
	size_t nc = P->nc, *v = P->seen + P->n_seen * nc;
	get_vec(P, s, v);
	for (size_t j = 0; j < P->n_seen; j++)
		if (!memcmp(P->seen + j * nc, v, nc * sizeof(size_t)))
			return P->seen_lb[j];
	if (P->n_seen == HP_MAX_SEEN)
		return INFINITY;
	double cut = cut_w(P->in, P->best);
	bool inf = opt_pathlag_no_plan(P->pl, s, HP_PL_ROUNDS, dl);
	double b = inf ? INFINITY : opt_screen_vector(P->scr, s, cut, dl, &inf);
	if (!inf && !isfinite(b))
		return INFINITY; /* no optimum in time: not known, not remembered */
	P->seen_lb[P->n_seen] = inf || !(b < cut) ? INFINITY : b;
	P->cut_short[P->n_seen] = !inf && !opt_screen_at_optimum(P->scr);
	/* the LP's own optimum rounded: a packing only, no LP (the roundings with capacity held back
	 * each solve the LP again, as long as a screening) */
	bool packed = false;
	if (isfinite(P->seen_lb[P->n_seen]) && !P->cut_short[P->n_seen]) {
		set_vec(P, &P->tmp, v);
		packed = opt_round_current(P->in, P->scr, &P->tmp, P->w, P->best, dl) == 2;
	}
	P->done[P->n_seen] = packed;
	P->n_seen++;
	return P->seen_lb[P->n_seen - 1];
}

/* The point t of the way from h to b (islands; the accelerators at b's OPPs: the hull's point often
 * leaves the GPU at its slowest OPP, where its tasks miss their paths). */
static void line_point(const struct hp *P, const size_t *h, const size_t *b, double t, size_t *v)
{
	for (size_t c = 0; c < P->nc; c++)
		v[c] = c < P->in->n_isl ? (size_t)lround((double)h[c] + t * ((double)b[c] - (double)h[c])) : b[c];
}

/* The start: on the line from hint toward the incumbent's vector, the point nearest the hint whose
 * LP has a plan below the cut-off, by HP_LINE_STEPS bisections from its middle (beside the search:
 * from three quarters of the way, away from the hull worker's start; no plan at t: none nearer the
 * hint either, as a rule: the hint's vector has too little capacity); else the incumbent's vector.
 * Returns its screened bound, the vector in cur. */
static double start(struct hp *P, const struct opt_sol *hint, struct opt_sol *s, size_t *cur, double dl)
{
	const struct opt_inst *in = P->in;
	size_t n = P->nc * sizeof(size_t), *h = malloc(n), *b = malloc(n), *p = malloc(n);
	double f = INFINITY, lo = 0, hi = 1;
	if (!h || !b || !p)
		goto out;
	opt_sol_copy(s, hint, in);
	opt_vector_sort_twins(in, s);
	get_vec(P, s, h);
	opt_sol_copy(s, P->best, in);
	opt_vector_sort_twins(in, s);
	get_vec(P, s, b);
	memcpy(cur, b, P->nc * sizeof(size_t));
	for (int k = 0; k < HP_LINE_STEPS && opt_now_s() < dl; k++) {
		double t = k == 0 && P->beside ? 0.75 : 0.5 * (lo + hi);
		line_point(P, h, b, t, p);
		set_vec(P, s, p);
		double g = screened(P, s, dl);
		if (isfinite(g))
			f = g, hi = t, get_vec(P, s, cur);
		else
			lo = t;
	}
	if (!isfinite(f)) {
		set_vec(P, s, b);
		f = screened(P, s, dl);
	}
out:
	free(h), free(b), free(p);
	return f;
}

/* Coordinate descent over screened bounds from cur (bound f): each coordinate one OPP down or up,
 * accelerators first (the hint's are the least telling); the first step that lowers the bound is
 * taken; until no step does or dl. */
static void descend(struct hp *P, struct opt_sol *s, size_t *cur, double f, double dl)
{
	const struct opt_inst *in = P->in;
	size_t *v = malloc(P->nc * sizeof(size_t));
	for (bool moved = v != NULL; moved && opt_now_s() < dl;) {
		moved = false;
		for (size_t q = 0; q < 2 * P->nc && !moved && opt_now_s() < dl; q++) {
			size_t c = (q / 2 + in->n_isl) % P->nc;
			bool up = q % 2;
			if ((!up && cur[c] == 0) || (up && cur[c] + 1 >= opt_coord_nopp(in, c)))
				continue;
			memcpy(v, cur, P->nc * sizeof(size_t));
			v[c] = up ? v[c] + 1 : v[c] - 1;
			set_vec(P, s, v);
			double g = screened(P, s, dl);
			if (g < f * (1 - HP_STEP_GAIN)) {
				get_vec(P, s, cur);
				f = g, moved = true;
			}
		}
	}
	free(v);
}

/* Whether screened vector j goes before vector pick in the roundings: a vector whose Kelley loop
 * ran to its end before one the clock cut short, then the lower bound. Why: a loop cut short leaves
 * an earlier round's bound, lower than the LP's, so such a vector would often rank first, and its LP
 * may have no point at all: Xavier 120 tasks, seed 6384365, the vector (9 13 15 15, GPU 4) ranked
 * first at 5.9958 W and was infeasible once its loop went on; its roundings took the first slice,
 * and the plan at the line's first vector (6.0160 W, 2.46 %) was often not reached (3.08 %). */
static bool rounds_before(const struct hp *P, size_t j, size_t pick)
{
	if (pick == P->n_seen || P->cut_short[j] != P->cut_short[pick])
		return pick == P->n_seen || !P->cut_short[j];
	return P->seen_lb[j] < P->seen_lb[pick];
}

/* Every rounding (rounding.c: capacity held back, LP dives) at the screened vectors with the best
 * bounds below the cut-off whose LP optimum's own rounding did not pack, best first
 * (rounds_before). */
static void round_best(struct hp *P, double dl)
{
	const struct opt_inst *in = P->in;
	struct opt_sol vec;
	if (opt_sol_init(&vec, in))
		return;
	for (int r = 0; r < HP_ROUNDINGS && opt_now_s() < dl; r++) {
		size_t pick = P->n_seen, left = 0;
		for (size_t j = 0; j < P->n_seen; j++)
			if (!P->done[j] && P->seen_lb[j] < cut_w(in, P->best)) {
				left++;
				if (rounds_before(P, j, pick))
					pick = j;
			}
		if (pick == P->n_seen)
			break;
		/* an equal slice for each vector still to be rounded: the best bound's rounding often
		 * fails to pack (the LP fills its islands), and one failure took all of the time that the
		 * next vector's needed; with fewer vectors than HP_ROUNDINGS the slices are larger (Xavier
		 * 120 tasks, seed 6384365: two vectors screened, and a third of the window cut the first
		 * one's roundings after the rounding with nothing held back) */
		size_t slices = left < (size_t)(HP_ROUNDINGS - r) ? left : (size_t)(HP_ROUNDINGS - r);
		double slice_dl = opt_now_s() + (dl - opt_now_s()) / (double)slices;
		P->done[pick] = true;
		set_vec(P, &vec, P->seen + pick * P->nc);
		opt_round_vector(in, P->scr, &vec, &P->tmp, P->w, P->best, slice_dl);
	}
	opt_sol_free(&vec);
}

void opt_hull_plans(const struct opt_inst *in, const struct opt_sol *hint, struct opt_sol *best, double deadline_s,
		    bool beside)
{
	struct hp P = {.in = in, .best = best, .beside = beside, .nc = in->n_isl + in->n_acc};
	struct opt_sol s = {0};
	size_t *cur = malloc(P.nc * sizeof(size_t));
	P.seen = malloc((HP_MAX_SEEN + 1) * P.nc * sizeof(size_t));
	P.seen_lb = malloc(HP_MAX_SEEN * sizeof(double));
	P.done = malloc(HP_MAX_SEEN * sizeof(bool));
	P.cut_short = malloc(HP_MAX_SEEN * sizeof(bool));
	P.w = opt_ws_new(in);
	if (!hint->ok || !best->ok || !cur || !P.seen || !P.seen_lb || !P.done || !P.cut_short || !P.w ||
	    opt_sol_init(&s, in) || opt_sol_init(&P.tmp, in) || !(P.scr = opt_screen_new(in)) ||
	    !(P.pl = opt_pathlag_new(in)))
		goto out;
	double descent_dl = opt_now_s() + HP_DESCENT_SHARE * (deadline_s - opt_now_s());
	double f = start(&P, hint, &s, cur, descent_dl);
	if (isfinite(f))
		descend(&P, &s, cur, f, descent_dl);
	round_best(&P, deadline_s);
out:
	opt_screen_free(P.scr);
	opt_pathlag_free(P.pl);
	opt_ws_free(P.w);
	opt_sol_free(&P.tmp);
	opt_sol_free(&s);
	free(cur), free(P.seen), free(P.seen_lb), free(P.done), free(P.cut_short);
}
