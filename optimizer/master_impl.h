/* SPDX-License-Identifier: MIT */
/*
 * master_impl.h - private to the exact mode (master*.c): the MILP model of formulation B
 * (master_build.c), solving one model with lazy tangents in GLPK or CBC (master_solve.c), the
 * per-vector branch and bound on the screening LP (master_bb.c), and the search over OPP vectors
 * that drives them (master.c). docs/MODEL.md, "Exact", states the model and why each bound is valid.
 */
#ifndef OPT_MASTER_IMPL_H
#define OPT_MASTER_IMPL_H

#include "optimizer/opt_impl.h"

#include <glpk.h>
#include <math.h>

#define NO_COL 0

struct master {
	const struct opt_inst *in;
	glp_prob *lp;
	int *y;    /* [k] first column of y_k,m (consecutive) */
	int *g;    /* [a] first column of g_a,m */
	/* Bins: islands (island-level master) or cores (core-level master, exact without packing). */
	bool core_level;
	size_t nb;
	size_t *bin_isl, *bin_cores; /* island of a bin; cores it stands for (n_k or 1) */
	int *a, *d, *v; /* [i * nb + b]: a_ib, d_ib, v_ib (NO_COL when impossible) */
	int *wm;        /* [i * n_isl + k]: first w_ik,m */
	int *z, *r; /* [i * n_srv + s] */
	int *q;    /* [i * n_srv + s]: first q_i,s,m (GPU) */
	int *F;    /* [i] */
	int cutoff_row;
	/* search state */
	double bound, deadline_s;
	int n_cuts;
	struct cand *cands;
	size_t n_cands, cap_cands;
	/* vector screening (screen.c), shared by both phases of opt_exact: bound per vector id (NAN:
	 * not screened yet) and the vectors proven infeasible */
	struct opt_screen *scr;
	double *scr_lb;
	size_t *infeas, n_infeas;
	/* the other worker's screening bounds (in->board once joined, board.c), else NULL */
	struct opt_board *board;
	/* What the island search proved, per vector position, for the per-core phase that follows it:
	 * a valid bound (a vector it closed: its cut-off then, at least every later cut-off) and whether
	 * its branch and bound already ran there. NULL until the island search has run. */
	double *isl_lb;
	bool *isl_bb;
};

struct cand {
	double obj;
	int *where; /* island core 0 or -(1 + server) */
	size_t *isl_opp, *acc_opp;
};

static inline double ms(int64_t ns) { return (double)ns * 1e-6; }

/* What a plan must cost less than to matter: the incumbent less the optimality tolerance (every
 * search prunes at it; INFINITY without an incumbent). In a portfolio (optimize.c) the other
 * worker's published plan counts too, once this one has a plan of its own: whatever this worker
 * closes against it has no plan below it, which is a valid bound whoever holds that plan. Without
 * a plan of its own the cut-off stays infinite, so that "nothing below the cut-off" still means
 * "no plan at all" (solve_power's infeasibility verdict). */
static inline double cut_w(const struct opt_inst *in, const struct opt_sol *inc)
{
	return inc->ok ? fmin(inc->power_w, opt_peer_w(in)) * (1 - in->rel_gap) : INFINITY;
}

/* ---- master_build.c */
/* Builds the island-level (core_level false: one bin per island) or core-level master with the
 * incumbent's cut-off row (cutoff_w INFINITY: a free row until there is one); -1 on allocation
 * failure (M may then be half built: opt_mst_free it). */
int opt_mst_build(struct master *M, const struct opt_inst *in, double cutoff_w, bool core_level);
void opt_mst_free(struct master *M);
/* The perspective tangent v >= 2 a / t - d / t^2 of column triple (a, d, v) at t. */
void opt_mst_tangent(glp_prob *lp, int a, int d, int v, double t);
/* No-good row: the island / server assignment of cd at its OPPs does not pack (proven). */
void opt_mst_nogood(struct master *M, const struct cand *cd);

/* ---- master_solve.c */
/* Branch and cut from the root LP; bound into M->bound, *finished when the search completed. */
void opt_mst_mip(struct master *M, double deadline_s, bool *finished);
/* Fixes the OPP binaries of M to the vector of s. */
void opt_mst_fix_vector(struct master *M, const struct opt_sol *s);
/* Packs M's candidates onto cores, best first; keeps the best that passes the evaluator in inc. */
void opt_mst_repair(struct master *M, struct opt_sol *inc, double deadline_s);
/* Copies M's cheapest candidate into dst; false when there is none. */
bool opt_mst_best_cand(const struct master *M, struct cand *dst);
int opt_mst_cand_alloc(struct cand *c, const struct opt_inst *in);
void opt_mst_cand_free(struct cand *c);
/* Exact packing check with the core-level master C: 1 packed (plan in out), 0 impossible, -1 unknown. */
int opt_mst_pack_exact(struct master *C, const struct cand *cd, struct opt_sol *out, double deadline_s);
#ifdef PD_HAVE_CBC
int opt_mst_solve_cbc(struct master *M, double deadline_s, bool *finished);
#endif

/* ---- master_bb.c */
/* Branch and bound on the screening LP at vector s until dl: INFINITY when it closed the vector,
 * else a valid bound on the plans there that it did not rule out (take it with min(., cut-off);
 * -INFINITY: no root LP in time). C: the core-level master for exact packing checks (may be NULL).
 * pos: the vector's position in the list M->board indexes; the search stops and closes the vector
 * once the other worker's proven bound there reaches the cut-off (opt_board_proven).
 * With keep, an unfinished search is handed back in *keep (else NULL) to go on from later. */
struct opt_bb;
double opt_mst_vector_bb(struct master *M, struct master *C, const struct opt_sol *s, size_t pos, struct opt_sol *inc,
			 double dl, struct opt_bb **keep);
/* Goes on with a search opt_mst_vector_bb handed back, until dl, from its open nodes (least bound
 * first); the same result. M's screening LP may have served other vectors meanwhile. */
double opt_mst_bb_resume(struct opt_bb *B, struct opt_sol *inc, double dl);
void opt_mst_bb_free(struct opt_bb *B);
/* For tests: the unpackable leaves the search has met (each a no-good) and the cut searches it ran
 * for them (opt_corepack_cut; BB_CUT_TRIES in master_bb.c). */
void opt_mst_bb_cut_stats(const struct opt_bb *B, size_t *nogoods, size_t *searches);
/* For tests: the core branches the search has made (bb_core_branch in master_bb.c). */
size_t opt_mst_bb_core_branches(const struct opt_bb *B);

/* ---- vecsort.c */
/* One OPP vector of the exact mode's list (master.c), ordered by its bound lb. */
struct opt_vec {
	size_t id;  /* vector id (opt_vector_decode) */
	size_t pos; /* index in the list of canonical vectors (M->scr_lb) */
	double lb;
};
/* qsort's comparison: increasing lb. */
int opt_vec_cmp(const void *a, const void *b);
/* Sorts vs[0..nv) by lb again after the bounds of vs[0..m) changed, vs[m..nv) untouched and still
 * sorted: O(m log m + the merge), not a sort of the whole list. */
void opt_vec_resort(struct opt_vec *vs, size_t m, size_t nv);

/* ---- rounding.c */
/* A plan of a rounded screening LP: the LP's deadlines, packed exactly; with repair, also the
 * heuristic's packing and repair. True when the plan passed the evaluator. */
bool opt_round_pack(const struct opt_inst *in, struct opt_screen *scr, struct opt_sol *s, struct opt_ws *w, double dl,
		    bool repair);
/* The rounding of the screening LP's last optimum, at s's vector (no LP solved): 2 when it packed
 * (inc updated if cheaper), else 1. */
int opt_round_current(const struct opt_inst *in, struct opt_screen *scr, struct opt_sol *s, struct opt_ws *w,
		      struct opt_sol *inc, double dl);
/* Every LP rounding at the OPPs of vec (s: scratch): capacity held back on every island in turn,
 * then (above the per-core sizes) island by island, then LP dives. 2 when a rounding packed (inc
 * updated if cheaper), 1 when some LP had a plan below the cut-off and none packed, else 0. */
int opt_round_vector(const struct opt_inst *in, struct opt_screen *scr, const struct opt_sol *vec, struct opt_sol *s,
		     struct opt_ws *w, struct opt_sol *inc, double dl);

#endif
