/* SPDX-License-Identifier: MIT */
/*
 * Lazy bound loop over the canonical OPP vectors of platforms with identical islands (docs/MODEL.md,
 * "Exact", lazy bounds over canonical vectors). Xavier at 120 tasks: of its 503440 canonical vectors
 * the idle-plus-separable bound leaves ~276k below the heuristic's plan, ~197k need the Lagrangian
 * bound (0.25 ms each) and only ~35k got it in 10 s, so the search returned the separable bound.
 *
 * Every vector carries its best valid bound so far; a min-heap pops the smallest. A vector whose
 * bound is the separable one gets the option and Lagrangian bounds; one that has those gets the
 * screening LP (screen.c). When the popped vector is already screened, its bound is the smallest
 * valid bound of every open vector: the loop stops there (the global bound). Closing:
 *   - a bound at or above the cut-off closes a vector (nothing better than the incumbent there);
 *   - a screening LP without a point closes its vector and, since having no plan is monotone in the
 *     OPPs (a vector nowhere faster has longer WCETs and latencies everywhere, so every row only gets
 *     harder), every vector nowhere faster. Such a verdict is first grown (grow): all coordinates
 *     together, then each alone, raised by bisection as far as the LP stays infeasible. The grown
 *     vectors form an antichain of maximal infeasible canonical vectors; a canonical vector
 *     componentwise at most one of them has no plan (both sorted along the twin classes, so "at
 *     most" holds island by island, and an equivalent of every plan sits at a canonical vector).
 * The loop only reorders work and closes by proofs, so the bound it returns is valid whenever it
 * stops; what it buys is that Xavier's many vectors without a plan close in boxes of hundreds.
 * Proofs of "no plan" come first from the path Lagrangian (pathlag.c, 1-30 ms), then, for a popped
 * vector, from its screening LP (100-600 ms at 120 tasks); grow's probes use the Lagrangian alone.
 */
#include "optimizer/opt_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Vectors with a point kept as a guide for grow (the oldest are kept when full). */
#define LAZY_FEAS_MAX 4096
/* Multiplier updates per proof attempt of the path Lagrangian (pathlag.c): Xavier 120 tasks, seed
 * 778, 10 s: bound 5.5494 / 5.5654 / 5.5814 W with 60 / 30 / 15 rounds of 2 path passes (more
 * attempts against stronger ones), 5.5754 W with 8. */
#define LAZY_PL_ROUNDS 15
/* ... and before a screening LP (100-800 ms where the Lagrangian failed at 15 rounds): 60 rounds
 * there gave 5.5894 / 5.6343 W on seeds 778 / 5113962 against 5.5494 / 5.6033 W with 15 (200:
 * the same as 60). */
#define LAZY_PL_ROUNDS_LP 60

enum { ST_SEP, ST_LAG, ST_SCREENED, ST_INFEAS, ST_CUT };

struct hent {
	double lb;
	size_t pos;
};

struct opt_lazy {
	const struct opt_inst *in;
	struct opt_screen *scr;
	struct opt_bound *lag;
	struct opt_pathlag *pl; /* cheap "no plan" proofs (pathlag.c; NULL: LPs only) */
	bool grow_lp;           /* grow's probes use LPs too (the vector grown was an LP's proof) */
	bool by_lp;             /* screen_at's last "no plan" was its LP's */
	const size_t *canon;
	size_t nv, dims;
	double *lb;           /* [pos] best valid bound so far (INFINITY: closed) */
	unsigned char *stage; /* [pos] ST_* */
	struct hent *heap;
	size_t nh;
	unsigned char *anti; /* [n_anti * dims] maximal infeasible canonical vectors */
	unsigned char *feas; /* [n_feas * dims] vectors whose LP had a point (a guide for grow) */
	size_t n_feas;
	size_t n_anti, cap_anti;
	size_t n_lp, n_lag, n_cover;
	struct opt_sol s, t;
};

double opt_vector_option_bound(const struct opt_inst *in, struct opt_sol *s)
{
	if (!opt_vector_paths_ok(in, s, 0, s->d_ns))
		return INFINITY;
	double p = opt_vector_idle_w(in, s);
	for (size_t i = 0; i < in->n_tasks; i++) {
		double best = INFINITY;
		for (size_t o = 0; o < in->n_isl + in->n_srv; o++)
			if (opt_option_fits(in, s, i, o, 0))
				best = fmin(best, opt_task_busy_w(in, s, i, opt_option_where(in, o)));
		if (!isfinite(best))
			return INFINITY;
		p += best;
	}
	return p;
}

void opt_vector_sort_twins(const struct opt_inst *in, struct opt_sol *s)
{
	for (bool swapped = true; swapped;) {
		swapped = false;
		for (size_t k = 0; k < in->n_isl; k++) {
			long j = in->isl_prev_twin[k];
			if (j >= 0 && s->isl_opp[j] > s->isl_opp[k]) {
				size_t x = s->isl_opp[j];
				s->isl_opp[j] = s->isl_opp[k], s->isl_opp[k] = x;
				swapped = true;
			}
		}
	}
}

static size_t encode(const struct opt_inst *in, struct opt_sol *s)
{
	size_t id = 0;
	for (size_t c = in->n_isl + in->n_acc; c-- > 0;)
		id = id * opt_coord_nopp(in, c) + *opt_coord_opp(in, s, c);
	return id;
}

/* Position of canonical vector id in the (increasing) canonical list; SIZE_MAX if absent. */
static size_t position(const struct opt_lazy *L, size_t id)
{
	size_t lo = 0, hi = L->nv;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (L->canon[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < L->nv && L->canon[lo] == id ? lo : SIZE_MAX;
}

/* ---- the antichain of maximal infeasible canonical vectors */

static bool leq(const struct opt_lazy *L, struct opt_sol *s, const unsigned char *w)
{
	for (size_t c = 0; c < L->dims; c++)
		if (*opt_coord_opp(L->in, s, c) > w[c])
			return false;
	return true;
}

/* Whether canonical s is nowhere faster than a recorded infeasible vector (then it has no plan). */
static bool covered(struct opt_lazy *L, struct opt_sol *s)
{
	for (size_t j = 0; j < L->n_anti; j++)
		if (leq(L, s, L->anti + j * L->dims))
			return true;
	return false;
}

/* Records canonical s as infeasible; drops the recorded vectors it covers (kept: an antichain). */
static void record(struct opt_lazy *L, struct opt_sol *s)
{
	size_t n = 0;
	for (size_t j = 0; j < L->n_anti; j++) {
		unsigned char *w = L->anti + j * L->dims;
		bool below = true;
		for (size_t c = 0; below && c < L->dims; c++)
			below = w[c] <= *opt_coord_opp(L->in, s, c);
		if (!below)
			memmove(L->anti + n++ * L->dims, w, L->dims);
	}
	L->n_anti = n;
	if (L->n_anti == L->cap_anti) {
		size_t cap = L->cap_anti ? 2 * L->cap_anti : 64;
		unsigned char *a = realloc(L->anti, cap * L->dims);
		if (!a)
			return; /* recording less only closes less */
		L->anti = a, L->cap_anti = cap;
	}
	for (size_t c = 0; c < L->dims; c++)
		L->anti[L->n_anti * L->dims + c] = (unsigned char)*opt_coord_opp(L->in, s, c);
	L->n_anti++;
}

/* ---- heap on (lb, pos) */

static void sift_down(struct opt_lazy *L, size_t i)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = l + 1;
		if (l < L->nh && L->heap[l].lb < L->heap[m].lb)
			m = l;
		if (r < L->nh && L->heap[r].lb < L->heap[m].lb)
			m = r;
		if (m == i)
			return;
		struct hent x = L->heap[i];
		L->heap[i] = L->heap[m], L->heap[m] = x;
		i = m;
	}
}

static void push(struct opt_lazy *L, double lb, size_t pos)
{
	size_t i = L->nh++;
	L->heap[i] = (struct hent){lb, pos};
	while (i > 0 && L->heap[(i - 1) / 2].lb > L->heap[i].lb) {
		struct hent x = L->heap[i];
		L->heap[i] = L->heap[(i - 1) / 2], L->heap[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
}

static struct hent pop(struct opt_lazy *L)
{
	struct hent top = L->heap[0];
	L->heap[0] = L->heap[--L->nh];
	sift_down(L, 0);
	return top;
}

/* ---- */

struct opt_lazy *opt_lazy_new(const struct opt_inst *in, struct opt_screen *scr, const size_t *canon, size_t nv,
			      const double *lb0)
{
	struct opt_lazy *L = calloc(1, sizeof(*L));
	if (!L)
		return NULL;
	L->in = in, L->scr = scr, L->canon = canon, L->nv = nv, L->dims = in->n_isl + in->n_acc;
	L->lb = malloc(nv * sizeof(double));
	L->stage = calloc(nv, 1);
	L->heap = malloc(nv * sizeof(struct hent)); /* a vector is in the heap at most once */
	L->lag = opt_bound_new(in);
	L->pl = opt_pathlag_new(in); /* optional: without it every verdict is an LP's */
	L->feas = malloc(LAZY_FEAS_MAX * L->dims);
	bool small = true; /* the antichain stores OPP indices in bytes */
	for (size_t c = 0; c < L->dims; c++)
		small = small && opt_coord_nopp(in, c) <= 256;
	if (!L->lb || !L->stage || !L->heap || !L->lag || !L->feas || !small || opt_sol_init(&L->s, in) || opt_sol_init(&L->t, in)) {
		opt_lazy_free(L);
		return NULL;
	}
	for (size_t pos = 0; pos < nv; pos++) {
		L->lb[pos] = lb0[pos];
		if (lb0[pos] < INFINITY)
			L->heap[L->nh++] = (struct hent){lb0[pos], pos};
		else
			L->stage[pos] = ST_CUT;
	}
	for (size_t i = L->nh / 2; i-- > 0;)
		sift_down(L, i);
	return L;
}

void opt_lazy_free(struct opt_lazy *L)
{
	if (!L)
		return;
	free(L->lb), free(L->stage), free(L->heap), free(L->anti), free(L->feas);
	opt_bound_free(L->lag);
	opt_pathlag_free(L->pl);
	opt_sol_free(&L->s), opt_sol_free(&L->t);
	free(L);
}

/* Whether the path Lagrangian proves that canonical s (position pos) has no plan; records it. */
static bool pl_proves(struct opt_lazy *L, struct opt_sol *s, size_t pos, int rounds, double dl)
{
	if (!L->pl || !opt_pathlag_no_plan(L->pl, s, rounds, dl))
		return false;
	L->stage[pos] = ST_INFEAS, L->lb[pos] = INFINITY;
	return true;
}

/* Screens canonical vector s (position pos) unless known: 1 no plan there, 2 its LP has a point
 * (a bound, or closed by it), 0 known to have a bound at or above the cut-off, -1 no LP optimum in
 * time. (One simplex without the Kelley rounds, for grow's verdicts, found far fewer vectors
 * without a point: Xavier 120 tasks, seed 778, (5 5 5 6 5) had one in the first LP, none after the
 * rounds; the grown vectors stayed small.) */
static int screen_at(struct opt_lazy *L, struct opt_sol *s, size_t pos, double cut, double dl)
{
	if (L->stage[pos] == ST_INFEAS || covered(L, s)) {
		L->stage[pos] = ST_INFEAS, L->lb[pos] = INFINITY;
		return 1;
	}
	if (L->stage[pos] == ST_SCREENED)
		return 2;
	if (L->stage[pos] == ST_CUT && L->lb[pos] < INFINITY)
		return 0;
	if (pl_proves(L, s, pos, LAZY_PL_ROUNDS_LP, dl))
		return 1;
	bool inf;
	L->n_lp++;
	double b = opt_screen_vector(L->scr, s, cut, dl, &inf);
	if (inf) {
		L->stage[pos] = ST_INFEAS, L->lb[pos] = INFINITY;
		L->by_lp = true;
		return 1;
	}
	if (b == -INFINITY)
		return -1;
	L->lb[pos] = fmax(L->lb[pos], b);
	L->stage[pos] = L->lb[pos] >= cut ? ST_CUT : ST_SCREENED;
	return 2;
}

/* Whether canonical s is at least as fast everywhere as a vector whose screening LP had a point
 * (then so has its LP: only a guide for grow, never a proof of anything). */
static bool above_feasible(struct opt_lazy *L, struct opt_sol *s)
{
	for (size_t j = 0; j < L->n_feas; j++) {
		const unsigned char *w = L->feas + j * L->dims;
		bool geq = true;
		for (size_t c = 0; geq && c < L->dims; c++)
			geq = *opt_coord_opp(L->in, s, c) >= w[c];
		if (geq)
			return true;
	}
	return false;
}

static void note_feasible(struct opt_lazy *L, struct opt_sol *s)
{
	if (L->n_feas == LAZY_FEAS_MAX)
		return;
	for (size_t c = 0; c < L->dims; c++)
		L->feas[L->n_feas * L->dims + c] = (unsigned char)*opt_coord_opp(L->in, s, c);
	L->n_feas++;
}

/* t = s with every coordinate in dir raised by step (clipped at its top), sorted along the twins
 * (t may be s). */
static void step_to(const struct opt_lazy *L, const bool *dir, size_t step, struct opt_sol *s, struct opt_sol *t)
{
	const struct opt_inst *in = L->in;
	for (size_t c = 0; c < L->dims; c++) {
		size_t x = *opt_coord_opp(in, s, c) + (dir[c] ? step : 0);
		*opt_coord_opp(in, t, c) = x < opt_coord_nopp(in, c) ? x : opt_coord_nopp(in, c) - 1;
	}
	opt_vector_sort_twins(in, t);
}

/* The vector step_to makes of L->s (in L->t): 1 no plan there, 0 a plan (or its LP has a point),
 * -1 unknown. */
static int probe(struct opt_lazy *L, const bool *dir, size_t step, double cut, double dl)
{
	const struct opt_inst *in = L->in;
	struct opt_sol *t = &L->t;
	step_to(L, dir, step, &L->s, t);
	if (above_feasible(L, t))
		return 0;
	size_t pos = position(L, encode(in, t));
	if (L->pl && !L->grow_lp && pos != SIZE_MAX) {
		/* the path Lagrangian only: where it finds no proof the LP hardly ever did (Xavier 120
		 * tasks, seed 778: 1 of 39 LPs after a failed proof), at 100-600 ms per LP against
		 * 1-30 ms per proof attempt; stopping there only makes the grown vector smaller. Not when
		 * the vector grown was the LP's proof: the Lagrangian failed there, so it would fail at
		 * every probe above it (those vectors grew by nothing: (0 10 15 15 0), GPU at 0) */
		if (L->stage[pos] == ST_INFEAS || covered(L, t))
			return 1;
		if (pl_proves(L, t, pos, LAZY_PL_ROUNDS, dl))
			return 1;
		return 0;
	}
	int r = pos == SIZE_MAX ? -1 : screen_at(L, t, pos, cut, dl);
	if (r == 2)
		note_feasible(L, t);
	return r == 2 ? 0 : r;
}

/* Raises the coordinates in dir of infeasible s together, by bisection on the step (after doubling
 * steps), as far as the vector stays without a plan; s becomes that vector (sorted). */
static void grow_along(struct opt_lazy *L, const bool *dir, double cut, double dl)
{
	const struct opt_inst *in = L->in;
	size_t lo = 0, hi = 0; /* step lo: no plan; step hi: a plan, or past every top */
	for (size_t c = 0; c < L->dims; c++)
		if (dir[c] && opt_coord_nopp(in, c) - *opt_coord_opp(in, &L->s, c) > hi)
			hi = opt_coord_nopp(in, c) - *opt_coord_opp(in, &L->s, c);
	/* with the Lagrangian's probes a failed one (no proof: 5-10 ms) costs several proofs (~1 ms):
	 * steps 1, 2, 4, ... first, then bisection, fail less where the boundary is near (most single
	 * coordinates after the diagonal) */
	bool gallop = L->pl != NULL;
	size_t jump = 1;
	while (lo + 1 < hi && opt_now_s() < dl) {
		size_t mid = gallop && lo + jump < hi ? lo + jump : lo + (hi - lo) / 2;
		if (gallop && mid == lo + jump)
			jump *= 2;
		else
			gallop = false;
		int r = probe(L, dir, mid, cut, dl);
		if (r < 0)
			break; /* unknown: stop here */
		if (r == 1)
			lo = mid;
		else
			hi = mid, gallop = false;
	}
	step_to(L, dir, lo, &L->s, &L->s);
}

/* Grows infeasible canonical vector s (in L->s) to a maximal one: first every coordinate together
 * (the vectors popped next are the balanced, low ones around it: a corner grown one coordinate at
 * a time covered few of them), then each coordinate alone; records the result. Every step's
 * verdict is an LP's (or a certificate's, or the antichain's), so the recorded vector has no plan
 * whatever the LP does elsewhere. */
static void grow(struct opt_lazy *L, double cut, double dl)
{
	bool dir[64];
	if (L->dims > 64)
		return;
	for (size_t c = 0; c < L->dims; c++)
		dir[c] = true;
	grow_along(L, dir, cut, dl);
	for (size_t c = L->dims; c-- > 0 && opt_now_s() < dl;) {
		for (size_t x = 0; x < L->dims; x++)
			dir[x] = x == c;
		grow_along(L, dir, cut, dl);
	}
	record(L, &L->s);
}

/* The next bound of the vector at pos (decoded in L->s): the option and Lagrangian bounds after the
 * separable one, the screening LP after those. */
static void refine(struct opt_lazy *L, size_t pos, double cut, double target, double dl)
{
	struct opt_sol *s = &L->s;
	if (L->stage[pos] == ST_SEP) {
		double b = fmax(L->lb[pos], opt_vector_option_bound(L->in, s));
		if (b < cut) {
			L->n_lag++;
			b = fmax(b, opt_bound_vector(L->lag, s, target));
		}
		L->lb[pos] = b;
		L->stage[pos] = b >= cut ? ST_CUT : ST_LAG;
		return;
	}
	L->by_lp = false;
	if (screen_at(L, s, pos, cut, dl) == 1) {
		L->grow_lp = L->by_lp;
		grow(L, cut, dl);
		L->grow_lp = false;
	}
}

double opt_lazy_run(struct opt_lazy *L, double cut, double dl)
{
	const struct opt_inst *in = L->in;
	/* the Lagrangian's steering target: the incumbent (the cut-off lies a tolerance below it) */
	double target = isfinite(cut) ? cut / (1 - in->rel_gap) : INFINITY;
	while (L->nh > 0 && L->heap[0].lb < cut && opt_now_s() < dl) {
		size_t pos = L->heap[0].pos;
		if (L->stage[pos] == ST_INFEAS || L->lb[pos] >= cut) {
			pop(L); /* closed meanwhile (a probe of grow, or an earlier cut-off) */
			continue;
		}
		if (L->heap[0].lb < L->lb[pos]) { /* raised meanwhile (a probe of grow) */
			pop(L);
			push(L, L->lb[pos], pos);
			continue;
		}
		if (L->stage[pos] == ST_SCREENED)
			break; /* the smallest open bound is a screened one: nothing cheaper to do here */
		pop(L);
		opt_vector_decode(in, &L->s, L->canon[pos]);
		if (covered(L, &L->s)) {
			L->n_cover++;
			L->stage[pos] = ST_INFEAS, L->lb[pos] = INFINITY;
			continue;
		}
		refine(L, pos, cut, target, dl);
		if (L->lb[pos] < cut)
			push(L, L->lb[pos], pos);
	}
	while (L->nh > 0 && (L->stage[L->heap[0].pos] == ST_INFEAS || L->lb[L->heap[0].pos] >= cut))
		pop(L);
	return L->nh > 0 ? fmin(L->heap[0].lb, cut) : cut;
}

double opt_lazy_bound(const struct opt_lazy *L, size_t pos)
{
	return L->lb[pos];
}

bool opt_lazy_screened(const struct opt_lazy *L, size_t pos)
{
	return L->stage[pos] == ST_SCREENED;
}

bool opt_lazy_no_plan(const struct opt_lazy *L, size_t pos)
{
	return L->stage[pos] == ST_INFEAS;
}

void opt_lazy_stats(const struct opt_lazy *L, size_t *n_lp, size_t *n_lag, size_t *n_cover, size_t *n_anti)
{
	*n_lp = L->n_lp, *n_lag = L->n_lag, *n_cover = L->n_cover, *n_anti = L->n_anti;
}
