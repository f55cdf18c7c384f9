/* SPDX-License-Identifier: MIT */
/*
 * The per-vector branch and bound of the exact mode's island search (sets up to OPT_PER_CORE_TASKS
 * tasks): nodes are the screening LP (screen.c) with some tasks fixed to one option, leaves are
 * decided by exact core packing (corepack.c, then the core-level master).
 */
#include "optimizer/master_impl.h"

#include <stdlib.h>
#include <string.h>

/*
 * Per-vector branch and bound on the screening LP (small sets, island search). With the OPPs fixed a
 * plan's power is the vector's idle power plus the busy power of its island / server assignment,
 * so only the assignment is searched: best first with dives (bb_node, bb_best_first), branching on a
 * fractional task (by pseudocosts up to BB_PC_TASKS tasks, else the most fractional one), the
 * option with the larger share first. A node
 * whose LP bound reaches the incumbent is closed. An integral LP optimum is an assignment whose
 * power is that bound: if it packs with the LP's deadlines (opt_pack_given keeps every task on its
 * island) it is the best plan of its subtree; otherwise the
 * exact packing search decides (corepack.c, then the core-level master if that ran out of time),
 * and an assignment that cannot be packed gets a no-good row in the screening LP (valid at this
 * vector, freed afterwards) and the node is solved again. Every node's LP is an outer approximation,
 * so every closure is valid.
 *
 * The no-good (since 2026-12-07) covers only the tasks that opt_corepack_cut keeps: a set that cannot
 * be packed wherever the other tasks go (bb_leaf). Why: a no-good on the whole assignment cuts off
 * that one leaf, and where the packing fails on one DAG's tight paths, every placement of the other
 * DAGs' tasks is a leaf of its own at nearly the same LP bound. XU4 20 tasks, seed 205218: 350-460
 * leaves in 10 s, each a no-good of all 20 tasks, and the vector's bound stayed 0.36 % under the plan;
 * with cuts of 8-10 tasks (one DAG's), proven in 1.1-2.2 s after 26 leaves. Where the cuts keep
 * naming every task, the vector stops searching for them (BB_CUT_TRIES).
 *
 * Identical islands at one OPP (Xavier's Carmel clusters, most often two to four at one level) are
 * one option, a "pool" (opt_twin_pools): their cores are interchangeable in every rule of the model,
 * so a plan's power and packability depend only on which pool each task is in, not on which twin.
 * Branching on the twins (as until 2026-12-05) searched every split of a pool's tasks between them,
 * each a leaf of its own, at equal LP bounds: the LP cannot tell the splits apart. A leaf is an LP
 * optimum integral in the pools (shares may still be split between twins: the power is the same);
 * its packing is decided over the pool's cores (opt_corepack_pooled), and a "no" is a no-good on
 * the pools, valid for every split. The symmetry rows stay in the LP (every plan keeps an
 * equivalent that satisfies them; that equivalent has the same pools).
 * At every size the branch and bound runs at (since 2026-12-06; up to 20 tasks before): at 30
 * tasks the hard vectors are trees of a few hundred nodes without a leaf, closed at depth 10-25,
 * and branching on the twins spent them on splits. With pools (and the heuristic packer on pooled
 * leaves above 20 tasks, corepack.c), 17 hard Xavier 30-task sets kept from earlier draws: 11 of 17
 * proven in both of two runs, against 8 of 17; sixteen fresh ones: 11 of 16, worst 0.047 %,
 * against 6 of 16, worst 0.151 %, no plan dearer beyond the 0.01 % tolerance. Without the packer a
 * pooled 30-task leaf that can be packed often stayed undecided and its plan was lost (10 of 17).
 *
 * Core branching (since 2026-12-07, sixteenth session; bb_core_branch): once a leaf at this vector
 * has failed its packing, a node whose LP fills a pool to BB_CORE_FULL of its cores first puts the
 * pool's densest fixed task (at least BB_CORE_DENSE of a core) on a core slot, with a row per slot
 * in the screening LP (opt_screen_core_row); island branching goes on once no such task is left.
 * Every plan of the node keeps an equivalent in one child (the pool's empty cores are
 * interchangeable, so only the first empty slot is a child), so no closure loses a plan. Leaves are
 * decided as before: their packing ignores the slots (a plan found is a plan; a "no" holds for
 * every packing, so its no-good is valid at the vector).
 *
 * Dual closures (since 2026-12-05): after a node's LP, opt_screen_option_bounds gives for every free
 * task and option a bound valid for every point of that LP with the option at 1 (safe against the
 * simplex's tolerances); an option whose bound reaches the cut-off is closed in the node's subtree,
 * and a child whose pool is closed, or whose bound is at the cut-off, is not solved at all. Every
 * plan of the subtree below the cut-off keeps an equivalent that is a point of the node's LP, and
 * that point has every closed option at 0, so no such plan is lost.
 *
 * Going on later (since 2026-12-06): a search the clock stops keeps its open nodes, each as its
 * fixings and floor (the children its dives left, the node it stopped in, the leaves whose packing
 * it could not decide), and master.c hands the search back part of the time the other vectors leave
 * (opt_mst_bb_resume, RESUME_SHARE). The vector's bound is always the least floor of its open nodes.
 * The no-goods are kept as assignments and added again each call (other vectors use the LP in
 * between), the pseudocosts carry over; closures belong to one dive, saved bases to one call.
 * Before, a stopped tree was lost and the island MILP had the rest of the time at that vector, which
 * hardly moved its bound.
 */
/* An open node besides its fixings: the floor of its plans, the pseudocost observation its LP makes
 * once solved (pc_io the branching task and option, -1 for none; pc_lb the parent's bound; pc_frac
 * 1 - the option's share there), and its parent's basis. */
struct bb_open {
	double floor, pc_lb, pc_frac;
	long pc_io;
	unsigned char *basis; /* the parent's LP basis (opt_screen_basis_get) during this call, or NULL */
};

/* Nodes: per node its fixings (bb_nf each: the options, then the core slots) and its bb_open. */
struct bb_list {
	long *fixed;
	struct bb_open *e;
	size_t n, cap;
};

struct opt_bb {
	struct master *M, *C;
	struct opt_sol *inc, s, tmp;
	struct opt_ws *w;
	struct cand cd;
	/* per task: fixed option, or -1 (an island option stands for its pool); then (fixed + n_tasks)
	 * per task: its core slot in that pool (bb_core_branch), or -1 */
	long *fixed;
	size_t *pool; /* per island: its pool (opt_twin_pools), or itself without pooling */
	bool pooled;  /* some pool has more than one island */
	/* Options closed by their dual bound (opt_screen_option_bounds) in the current node's subtree:
	 * closed[i * no + o], the closures in order on a stack (undone when their node returns), and the
	 * bounds of the last node's LP. */
	char *closed;
	size_t *stack, n_stack;
	double *ob;
	/* No-goods found at this vector: their assignments (ng_where, n_tasks each), kept across the
	 * calls, and their rows in the screening LP during one call (added again by the next: other
	 * vectors use the LP in between, and a no-good is valid at this vector only). */
	int *nogood, *ng_where;
	size_t n_nogood, cap_nogood;
	/* The open nodes (bb_push): a binary heap on their floors (open.e[0] the least), and the leaves
	 * whose packing this call left undecided (held back until the next call: searched again at once,
	 * the least floor would be that leaf again and again). fx: one node's fixings (scratch). lost: the
	 * least floor of nodes no memory was left for (they keep the vector open, but cannot be searched
	 * again). */
	struct bb_list open, held;
	long *fx;
	double lost;
	/* Pseudocost branching (up to BB_PC_TASKS tasks): per task and branching group, the sum of
	 * (child bound - parent bound) / (1 - the group's share at the parent) over the children solved,
	 * and their count; over all of them for groups not yet seen. pend_*: the child being solved. */
	bool pc;
	double *pc_sum, pc_all;
	int *pc_n, pc_all_n;
	long pend_io;
	double pend_lb, pend_frac;
	double *shr; /* group shares: row 0 scratch, row depth + 1 the branching task's at that depth */
	double dl;
	bool unfinished; /* out of time */
	/* The vector's position in the list the screening board indexes (master.c), and whether the
	 * other worker has proven on the board that this vector holds no plan below the cut-off
	 * (bb_peer_closed): then every open node is dropped and the vector is closed. */
	size_t pos;
	bool peer_closed;
	/* The split of this vector's tree between the two workers (bb_take_part): task split_t in
	 * branching group split_g is part 0, anywhere else part 1. part: the part this search covers
	 * now (BB_WHOLE: no split, the whole vector; BB_NONE: none left, each closed or done); done:
	 * the parts this search closed; vec_closed: the whole vector is closed (its root LP, or the
	 * other worker's proof); root_lb: the largest root LP bound seen (valid for the whole vector). */
	int part;
	bool split_tried, done[2], vec_closed;
	size_t split_t, split_g;
	double root_lb;
	/* Dives for plans in the gap tolerance's band (bb_band_dive): the time they took, and when the
	 * search began. */
	double band_s, t_start;
	size_t depth; /* of the current node */
	/* Unpackable leaves in a row, at this vector, whose no-good names every task (BB_CUT_TRIES), and
	 * the cut searches run (opt_mst_bb_cut_stats). */
	size_t cut_misses, cut_searches;
	/* Core branching (bb_core_branch): per pool g and slot q the screening LP's row of that core
	 * (crow[g * n_cores + q], 0 none yet this call), and scratch for opt_screen_core_row. */
	int *crow;
	bool *on, *isl;
	size_t core_branches; /* opt_mst_bb_core_branches */
};
/* One exact packing check of the branch and bound may take this long (corepack.c decides the
 * benchmark's 30-task packings in 0.01-2 s; GLPK's core-level master sometimes not in 9 s); a leaf
 * left undecided stays open and the search goes on. */
#define BB_EXACT_S 2.0
/* The search for a smaller no-good (opt_corepack_cut) after a leaf that cannot be packed may take
 * this long. Where it finds one it costs 2-4 projection searches of 10-50 ms, up to 20 more when the
 * deletion filter runs (XU4 20 tasks: 0.05-0.2 s); where a leaf's whole DAGs cannot be freed it
 * stops after n_dags + 1 of them. */
#define BB_CUT_S 0.5
/* A vector whose last BB_CUT_TRIES unpackable leaves each got a cut naming every task skips the cut
 * search from then on (the no-good is the whole assignment). Why: where the leaves fail on the paths
 * of every DAG across both islands, no DAG, pool or task can be freed, and each fruitless search
 * (0.05-0.35 s) cost many times the leaf's own packing check (2-15 ms). XU4 20 tasks, seed 12237671:
 * 180 leaves in 10 s, 11.9 s of both workers' 19.5 in cut searches, none of them smaller than the
 * assignment; with the searches stopped, ~660 leaves and the gap 0.107 -> 0.080 %. Seed 7715119,
 * open at 0.052 % after 10 s and at 0.023 % after 30 s, is proven in 7.4 s; seed 205218, whose cuts
 * do shrink, in 1.5 s instead of 2.7 s (docs/OPTIMIZER-LOG.md, 2026-12-07, twelfth session). */
#define BB_CUT_TRIES 3
/* Pseudocost branching up to this many tasks (most fractional above). Most fractional branching is
 * known to prove little better than a random choice; on Xavier's 20-task sets the hard vector is a
 * tree to close: seed 10236488 (bench shape) proven in 2.9 s with, open after 19.5 s of its branch
 * and bound without; fresh seeds: Xavier 20 tasks 16 of 16 proven against 15 (13055955: 6.10 ->
 * 1.83 s), XU4 20 tasks the same 6 of 8. At 30 tasks it gave dearer plans (the dives of the most
 * fractional rule find them; at 30 tasks the gap left is mostly the plan's): 4 of 8 proven against
 * 7, worst gap 0.371 % against 0.212 % (docs/OPTIMIZER-LOG.md, 2026-12-05, night). */
#define BB_PC_TASKS 20
/* No-goods per vector: room for 256 at first, doubled as needed up to this many. Why no fixed cap: a
 * full table left every later leaf undecided (held back, tried again next call, still undecided),
 * so the vector could never close: ZCU102 30 tasks, seed 11127984, before the screening LP knew
 * the FPGA's reconfiguration time, 256 no-goods then 171 leaves held at the 300 MHz vector; with
 * room, the same search decided all 393 of its leaves (each no-good is one more LP row). */
#define BB_NOGOOD_MAX 65536
/* The dives for plans in the band (bb_band_dive) take at most this share of the search's time. */
#define BB_BAND_SHARE 0.25
/* ... and at most this many LPs per task of the set, each. */
#define BB_BAND_NODES 2
/* Core branching (bb_core_task): a pool the LP fills to this share of its cores, a task at this
 * share of a core or more; at most this many slots per branch. */
#define BB_CORE_FULL 0.98
#define BB_CORE_DENSE (1.0 / 3.0)
#define BB_CORE_SLOTS 64
/* bb_push and list_add without a change to the fixings they are given. */
#define BB_NO_TASK ((size_t)-1)
/* opt_bb.part besides the parts 0 and 1. */
#define BB_WHOLE (-1)
#define BB_NONE 2

static size_t n_options(const struct opt_inst *in) { return in->n_isl + in->n_srv; }

/* Entries of a node's fixings: per task its group (opt_bb.fixed), then per task its core slot. */
static size_t bb_nf(const struct opt_bb *B) { return 2 * B->M->in->n_tasks; }

/* The branching option that option o belongs to: its island's pool, or the server itself. */
static size_t bb_group(const struct opt_bb *B, size_t o)
{
	return o < B->M->in->n_isl ? B->pool[o] : o;
}

/* Shares of task i per branching group (pool or server) into sh[0..no). */
static void bb_group_shares(const struct opt_bb *B, size_t i, double *sh)
{
	size_t no = n_options(B->M->in);
	for (size_t o = 0; o < no; o++)
		sh[o] = 0;
	for (size_t q = 0; q < no; q++)
		sh[bb_group(B, q)] += opt_screen_share(B->M->scr, i, q);
}

/* What task i's children are expected to raise the bound by, multiplied over the groups it has a
 * share of (the product rule of pseudocost branching, one factor per child): an observed group's
 * mean per unit of 1 - share, else the mean over every observation. */
static double bb_pc_score(const struct opt_bb *B, size_t i, const double *sh)
{
	size_t no = n_options(B->M->in);
	double mean = B->pc_all_n ? B->pc_all / B->pc_all_n : 1.0, score = 1;
	for (size_t o = 0; o < no; o++) {
		if (bb_group(B, o) != o || sh[o] <= 1e-6)
			continue;
		size_t io = i * no + o;
		double est = B->pc_n[io] ? B->pc_sum[io] / B->pc_n[io] : mean;
		score *= fmax(1e-6, est * (1 - sh[o]));
	}
	return score;
}

/* The free task to branch on, or n_tasks when the LP optimum is integral in the pools and servers;
 * the pool or server with its largest share in *best_o (its child comes first), its group shares in
 * best_sh[0..no). Up to BB_PC_TASKS tasks the fractional task with the best pseudocost score, above
 * that the most fractional one (largest 1 - max share). */
static size_t bb_branch_task(const struct opt_bb *B, long *best_o, double *best_sh)
{
	const struct opt_inst *in = B->M->in;
	size_t no = n_options(in), bi = in->n_tasks;
	double best = -1, *sh = B->shr;
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (B->fixed[i] >= 0)
			continue;
		bb_group_shares(B, i, sh);
		double top = 0;
		long o_top = 0;
		for (size_t o = 0; o < no; o++)
			if (bb_group(B, o) == o && sh[o] > top)
				top = sh[o], o_top = (long)o;
		if (1 - top <= 1e-6)
			continue;
		double score = B->pc ? bb_pc_score(B, i, sh) : 1 - top;
		if (score > best) {
			best = score, bi = i, *best_o = o_top;
			memcpy(best_sh, sh, no * sizeof(double));
		}
	}
	return bi;
}

/* The child being solved got its LP bound lb (INFINITY: closed by infeasibility or the cut-off,
 * counted as reaching cut): one more observation for its task and option. */
static void bb_pc_update(struct opt_bb *B, double lb, double cut)
{
	if (B->pend_io < 0 || !B->pc)
		return;
	double up = (fmin(lb, cut) - B->pend_lb) / fmax(1e-6, B->pend_frac);
	if (isfinite(up) && up >= 0) {
		B->pc_sum[B->pend_io] += up, B->pc_n[B->pend_io]++;
		B->pc_all += up, B->pc_all_n++;
	}
	B->pend_io = -1;
}

/* Whether the other worker's proven bound at this vector (board.c, opt_board_raise) has reached the
 * cut-off: nothing at this vector beats the incumbent, whatever this search has left open. */
static bool bb_peer_closed(struct opt_bb *B)
{
	if (!B->peer_closed && B->M->board)
		B->peer_closed = opt_board_proven(B->M->board, B->pos) >= cut_w(B->M->in, B->inc);
	return B->peer_closed;
}

/* Whether the part this search covers has been closed by the other worker (it searches the same
 * part once its own is done: bb_claim_part): nothing in the part beats the incumbent. */
static bool bb_part_closed(const struct opt_bb *B)
{
	return (B->part == 0 || B->part == 1) &&
	       opt_board_part(B->M->board, B->pos, B->part) >= cut_w(B->M->in, B->inc);
}

/* Room for more no-goods: doubled, up to BB_NOGOOD_MAX. False when full or without memory. */
static bool bb_grow_nogoods(struct opt_bb *B)
{
	size_t nt = B->M->in->n_tasks, cap = 2 * B->cap_nogood;
	if (cap > BB_NOGOOD_MAX)
		return false;
	int *ng = realloc(B->nogood, cap * sizeof(int));
	if (ng)
		B->nogood = ng;
	int *wh = ng ? realloc(B->ng_where, cap * nt * sizeof(int)) : NULL;
	if (!wh)
		return false;
	B->ng_where = wh, B->cap_nogood = cap;
	return true;
}

/* An integral LP optimum: can its assignment be packed? 1 yes (incumbent updated), 0 proven not
 * (a no-good row now excludes it), -1 not known (the exact check ran out of its time). */
static int bb_leaf(struct opt_bb *B)
{
	const struct opt_inst *in = B->M->in;
	opt_screen_round(B->M->scr, B->s.where);
	memcpy(B->cd.where, B->s.where, in->n_tasks * sizeof(int));
	/* only packings that keep this assignment close the subtree (no repair moves here) */
	if (opt_round_pack(in, B->M->scr, &B->s, B->w, fmin(B->dl, opt_now_s() + 1.0), false)) {
		if (!B->inc->ok || B->s.power_w < B->inc->power_w)
			opt_sol_copy(B->inc, &B->s, in);
		return 1;
	}
	if (B->n_nogood == B->cap_nogood && !bb_grow_nogoods(B))
		return -1;
	memcpy(B->cd.isl_opp, B->s.isl_opp, in->n_isl * sizeof(size_t));
	memcpy(B->cd.acc_opp, B->s.acc_opp, in->n_acc * sizeof(size_t));
	opt_sol_copy(&B->tmp, &B->s, in);
	memcpy(B->tmp.where, B->cd.where, in->n_tasks * sizeof(int));
	int r = opt_corepack_pooled(in, &B->tmp, B->pooled, fmin(B->dl, opt_now_s() + BB_EXACT_S));
	if (r < 0 && B->C) {
		/* the core-level master keeps every task on its island: with pools, only its plans count */
		int rc = opt_mst_pack_exact(B->C, &B->cd, &B->tmp, fmin(B->dl, opt_now_s() + BB_EXACT_S));
		r = rc == 1 || !B->pooled ? rc : -1;
	}
	if (r == 1 && (!B->inc->ok || B->tmp.power_w < B->inc->power_w))
		opt_sol_copy(B->inc, &B->tmp, in);
	if (r == 0) { /* the smallest no-good proven in time: a cut, or the whole assignment */
		int *ng = B->ng_where + B->n_nogood * in->n_tasks;
		memcpy(B->tmp.where, B->cd.where, in->n_tasks * sizeof(int));
		bool search = B->cut_misses < BB_CUT_TRIES;
		B->cut_searches += search;
		if (!search || opt_corepack_cut(in, &B->tmp, B->pooled, ng, fmin(B->dl, opt_now_s() + BB_CUT_S)) != 0)
			memcpy(ng, B->cd.where, in->n_tasks * sizeof(int));
		bool every = true;
		for (size_t i = 0; every && i < in->n_tasks; i++)
			every = ng[i] != OPT_WHERE_ANY;
		B->cut_misses = every ? B->cut_misses + 1 : 0;
		B->nogood[B->n_nogood++] = opt_screen_nogood(B->M->scr, ng, B->pool);
	}
	return r;
}

/* Whether option o of task i is open under its fixing (closures aside). */
static bool bb_admits(const struct opt_bb *B, size_t i, size_t o)
{
	if (B->part != BB_WHOLE && i == B->split_t && (bb_group(B, o) == B->split_g) != (B->part == 0))
		return false; /* outside this search's part */
	return B->fixed[i] < 0 || (size_t)B->fixed[i] == bb_group(B, o);
}

/* Task i's options as its fixing and the closures leave them open. */
static void bb_open_task(struct opt_bb *B, size_t i)
{
	size_t no = n_options(B->M->in);
	for (size_t o = 0; o < no; o++)
		opt_screen_open(B->M->scr, &B->s, i, o, bb_admits(B, i, o) && !B->closed[i * no + o]);
}

/* The power a plan must be below to be worth having: the better of both workers' plans. */
static double band_top(const struct opt_bb *B)
{
	return B->inc->ok ? fmin(B->inc->power_w, opt_peer_w(B->M->in)) : INFINITY;
}

/* Whether the band's dives have taken at most their share of the search's time so far. */
static bool bb_band_time(const struct opt_bb *B)
{
	return B->band_s <= BB_BAND_SHARE * (opt_now_s() - B->t_start);
}

/*
 * A node closed by its LP bound lb with cut <= lb < band_top: nothing below the cut-off in its
 * subtree, but maybe a plan between the two, one that the gap tolerance lets the search skip and
 * that would lower the cut-off for the rest of the search. bb_band_dive looks for it: a depth-first
 * search of the node's subtree against band_top instead of the cut-off (the node's LP refined up
 * to it first: it was solved only up to the cut-off), the LP's favourite option of the branching
 * task first, then the one with the next largest share; leaves packed as bb_node's are (bb_leaf:
 * a plan, or a no-good row and the LP again), until a plan is found or BB_BAND_NODES LPs per task
 * are spent. The fixings are undone afterwards. It only looks for plans: the node stays closed, and
 * every closure stays as valid as it was. Measured with the shared bounds (board.c) on 48 Xavier
 * 30-task sets, 10 s: 36 proven against 34 without either (the same seeds, one run each; a run of
 * the same set varies by more than that); a single dive without backtracking proved 40 there, but
 * found no plan in band_dive_finds_a_better_plan (test_bb.c), where the leaves of the favourite
 * options do not pack.
 * Why: on Xavier's 30-task sets the optimum is often within the tolerance of the first plans (a
 * rounding's). Its subtree is then closed at once, while the open nodes around the cut-off take
 * the whole time: seed 1888424, plan 5.22553 W, cut-off 5.22501 W, 829 nodes open at 5.22487-5.22490 W
 * after 10 s without a leaf; where a dive happened to reach the 5.22502-W plan first (the cut-off
 * then 5.22450 W, under the root's 5.22461 W), the set was proven in 1.4 s.
 */
static bool bb_band_dfs(struct opt_bb *B, int *budget)
{
	const struct opt_inst *in = B->M->in;
	size_t n = in->n_tasks, no = n_options(in), bi;
	double *sh = B->shr + (B->depth + 1) * no;
	long o = 0;
	for (;;) { /* again after a no-good row */
		bool inf;
		double top = band_top(B), lb = opt_screen_resolve(B->M->scr, top, B->dl, &inf);
		if (--*budget < 0 || inf || !(lb < top) || opt_now_s() >= B->dl)
			return false;
		bi = bb_branch_task(B, &o, sh);
		if (bi < n)
			break;
		int r = bb_leaf(B);
		if (r != 0) /* packed (a plan below the incumbent's: it is the incumbent now), or undecided */
			return r == 1;
	}
	/* the favourite option, then the one with the next largest share */
	long o2 = -1;
	for (size_t g = 0; g < no; g++)
		if (bb_group(B, g) == g && (long)g != o && sh[g] > 1e-9 && (o2 < 0 || sh[g] > sh[o2]))
			o2 = (long)g;
	bool found = false;
	B->depth++;
	for (int c = 0; c < 2 && !found && *budget >= 0; c++) {
		long oc = c == 0 ? o : o2;
		if (oc < 0)
			break;
		B->fixed[bi] = oc;
		bb_open_task(B, bi);
		found = bb_band_dfs(B, budget);
	}
	B->depth--;
	B->fixed[bi] = -1;
	bb_open_task(B, bi);
	return found;
}

static void bb_band_dive(struct opt_bb *B)
{
	double t0 = opt_now_s();
	int budget = (int)(BB_BAND_NODES * B->M->in->n_tasks);
	bb_band_dfs(B, &budget);
	B->band_s += opt_now_s() - t0;
}

/*
 * Closes, in this node's subtree, every option of a free task whose dual bound reaches the cut-off:
 * no plan the node admits puts that task there for less. Those columns are at 0 in the node's LP
 * optimum (a column with a share has reduced cost 0 or less: its bound is the node's), so the LP
 * optimum, and the branching decision taken from it, stay as they are.
 */
static void bb_close(struct opt_bb *B, double cut)
{
	const struct opt_inst *in = B->M->in;
	size_t no = n_options(in);
	if (!isfinite(cut) || !isfinite(opt_screen_option_bounds(B->M->scr, B->ob))) {
		for (size_t io = 0; io < in->n_tasks * no; io++)
			B->ob[io] = -INFINITY;
		return;
	}
	for (size_t i = 0; i < in->n_tasks; i++)
		for (size_t o = 0; B->fixed[i] < 0 && o < no; o++) {
			size_t io = i * no + o;
			if (B->closed[io] || !isfinite(B->ob[io]) || B->ob[io] < cut)
				continue;
			B->closed[io] = 1;
			B->stack[B->n_stack++] = io;
			opt_screen_open(B->M->scr, &B->s, i, o, false);
		}
}

/* Undoes the closures made since the stack held n. */
static void bb_reopen(struct opt_bb *B, size_t n)
{
	size_t no = n_options(B->M->in);
	while (B->n_stack > n) {
		size_t io = B->stack[--B->n_stack], i = io / no;
		B->closed[io] = 0;
		opt_screen_open(B->M->scr, &B->s, i, io % no, bb_admits(B, i, io % no));
	}
}

/* Swaps nodes a and b of L (entry and fixings). */
static void list_swap(struct bb_list *L, size_t nf, size_t a, size_t b)
{
	struct bb_open e = L->e[a];
	L->e[a] = L->e[b], L->e[b] = e;
	long *x = L->fixed + a * nf, *y = L->fixed + b * nf;
	for (size_t i = 0; i < nf; i++) {
		long t = x[i];
		x[i] = y[i], y[i] = t;
	}
}

/* Appends a node to L: the fixings fx (nf entries), with entry i (< nf: a task's group, or n_tasks +
 * a task's core slot) at o, and e. False without memory. */
static bool list_add(struct bb_list *L, size_t nf, const long *fx, size_t i, long o, struct bb_open e)
{
	if (L->n == L->cap) {
		size_t cap = L->cap ? 2 * L->cap : 16;
		long *f = realloc(L->fixed, cap * nf * sizeof(long));
		if (f)
			L->fixed = f;
		struct bb_open *en = f ? realloc(L->e, cap * sizeof(*en)) : NULL;
		if (!en)
			return false;
		L->e = en, L->cap = cap;
	}
	long *dst = L->fixed + L->n * nf;
	memcpy(dst, fx, nf * sizeof(long));
	if (i < nf)
		dst[i] = o;
	L->e[L->n++] = e;
	return true;
}

static void list_free(struct bb_list *L)
{
	free(L->fixed);
	free(L->e);
}

/* Restores the heap order of the open nodes from node k down (its floor grew) or up (it fell). */
static void heap_down(struct opt_bb *B, size_t k)
{
	struct bb_list *L = &B->open;
	for (;;) {
		size_t l = 2 * k + 1, m = k;
		if (l < L->n && L->e[l].floor < L->e[m].floor)
			m = l;
		if (l + 1 < L->n && L->e[l + 1].floor < L->e[m].floor)
			m = l + 1;
		if (m == k)
			return;
		list_swap(L, bb_nf(B), k, m);
		k = m;
	}
}

static void heap_up(struct opt_bb *B, size_t k)
{
	struct bb_list *L = &B->open;
	while (k && L->e[k].floor < L->e[(k - 1) / 2].floor) {
		list_swap(L, bb_nf(B), k, (k - 1) / 2);
		k = (k - 1) / 2;
	}
}

/*
 * Records an open node: the fixings fx, with entry i (< bb_nf: list_add) at o, and e (its floor,
 * pseudocost observation and basis, which the heap now owns). Without memory the node is only counted
 * (lost): the vector's bound keeps it, the search cannot go on there.
 */
static void bb_push(struct opt_bb *B, const long *fx, size_t i, long o, struct bb_open e)
{
	if (!list_add(&B->open, bb_nf(B), fx, i, o, e))
		B->lost = fmin(B->lost, e.floor), free(e.basis);
	else
		heap_up(B, B->open.n - 1);
}

/* Takes the open node with the least floor off the heap: its fixings into B->fx. */
static struct bb_open bb_pop(struct opt_bb *B)
{
	size_t n = bb_nf(B);
	struct bb_open e = B->open.e[0];
	memcpy(B->fx, B->open.fixed, n * sizeof(long));
	list_swap(&B->open, n, 0, --B->open.n);
	heap_down(B, 0);
	return e;
}

/* Back to the heap: the leaves held back by the call that ends. */
static void bb_unhold(struct opt_bb *B)
{
	size_t n = bb_nf(B);
	for (size_t k = 0; k < B->held.n; k++)
		bb_push(B, B->held.fixed + k * n, BB_NO_TASK, 0, B->held.e[k]);
	B->held.n = 0;
}

/* The current node as an open node with this floor, and the pseudocost observation still pending on
 * it (none once its LP was solved). */
static struct bb_open bb_self(const struct opt_bb *B, double floor)
{
	return (struct bb_open){floor, B->pend_lb, B->pend_frac, B->pend_io, NULL};
}

/* Drops the saved bases of L's nodes (they hold for one call: the next sets the LP up again). */
static void list_drop_bases(struct bb_list *L)
{
	for (size_t k = 0; k < L->n; k++) {
		free(L->e[k].basis);
		L->e[k].basis = NULL;
	}
}

/* Core branching (bb_core_branch): the cores of pool g (its islands' cores together). */
static size_t bb_pool_cores(const struct opt_bb *B, size_t g)
{
	const struct opt_inst *in = B->M->in;
	size_t n = 0;
	for (size_t k = 0; k < in->n_isl; k++)
		n += B->pool[k] == g ? in->isl_ncores[k] : 0;
	return n;
}

/* Sets the LP's row of slot q of pool g to the tasks now there (a row is added at first use). */
static void bb_core_row(struct opt_bb *B, size_t g, size_t q)
{
	const struct opt_inst *in = B->M->in;
	size_t n = in->n_tasks;
	int *r = B->crow + g * in->n_cores + q;
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		B->on[i] = B->fixed[i] == (long)g && B->fixed[n + i] == (long)q;
		any = any || B->on[i];
	}
	if (!any && !*r)
		return;
	for (size_t k = 0; k < in->n_isl; k++)
		B->isl[k] = B->pool[k] == g;
	*r = opt_screen_core_row(B->M->scr, *r, &B->s, B->on, B->isl);
}

/* Every core row as the fixings now have it. */
static void bb_core_rows(struct opt_bb *B)
{
	const struct opt_inst *in = B->M->in;
	for (size_t g = 0; g < in->n_isl; g++)
		for (size_t q = 0; B->pool[g] == g && q < bb_pool_cores(B, g) && q < in->n_cores; q++)
			bb_core_row(B, g, q);
}

/* Task i's density in the last LP optimum on pool g (C v summed over g's islands, in cores). */
static double bb_load(const struct opt_bb *B, size_t i, size_t g)
{
	double u = 0;
	for (size_t k = 0; k < B->M->in->n_isl; k++)
		if (B->pool[k] == g)
			u += opt_screen_load(B->M->scr, &B->s, i, k);
	return u;
}

/*
 * The task to put on a core before the next island branch, or n_tasks: of the tasks fixed to a pool
 * that the LP fills to BB_CORE_FULL of its cores, not yet on a core, the densest at BB_CORE_DENSE
 * of a core or more (its pool in *g).
 */
static size_t bb_core_task(const struct opt_bb *B, size_t *g)
{
	const struct opt_inst *in = B->M->in;
	size_t n = in->n_tasks, best_i = n;
	double best = in->cap * BB_CORE_DENSE;
	if (!B->n_nogood) /* no leaf at this vector has failed its packing yet */
		return n;
	for (size_t p = 0; p < in->n_isl; p++) {
		if (B->pool[p] != p)
			continue;
		double load = 0;
		for (size_t i = 0; i < n; i++)
			load += bb_load(B, i, p);
		if (load < BB_CORE_FULL * in->cap * (double)bb_pool_cores(B, p))
			continue;
		for (size_t i = 0; i < n; i++) {
			if (B->fixed[i] != (long)p || B->fixed[n + i] >= 0)
				continue;
			double u = bb_load(B, i, p);
			if (u >= best)
				best = u, best_i = i, *g = p;
		}
	}
	return best_i;
}

static void bb_node(struct opt_bb *B, double floor);

/*
 * Branches on the core of task ci in pool g: each slot of g that holds tasks already (most loaded in
 * the LP first), then the first empty one (the empty cores of a pool are interchangeable, so one
 * stands for all: slots are taken in order). Each child adds the task to its slot's row
 * (opt_screen_core_row). The first child is searched at once, the others are open nodes.
 * Why: where dense tasks fill a pool, the island rows let them share cores they cannot share, and
 * every placement of the other tasks became an unpackable leaf of its own. XU4 20 tasks, seed
 * 1399657, at the vector (LITTLE 1, big 2): the big island at 3.600 of its 3.6 cores in every leaf,
 * six tasks of one DAG's chain at 0.46-0.73 of a core each, one to three of the other DAG's at
 * 0.02-0.06; 95 leaves in 10 s, none packable, each cut by a no-good of all 20 tasks (the chain
 * packs once the other DAG is left out, so no smaller cut holds). With the chain on cores, two pairs
 * of it share a core, their deadlines move and the LP sees the island full before any other task
 * is placed.
 */
static void bb_core_branch(struct opt_bb *B, size_t ci, size_t g, double lb)
{
	const struct opt_inst *in = B->M->in;
	size_t n = in->n_tasks, n_stack = B->n_stack, slots = bb_pool_cores(B, g), used = 0, m = 0;
	long *slot = B->fixed + n;
	double load[BB_CORE_SLOTS];
	size_t cand[BB_CORE_SLOTS];
	for (size_t i = 0; i < n; i++)
		if (B->fixed[i] == (long)g && slot[i] >= 0 && (size_t)slot[i] + 1 > used)
			used = (size_t)slot[i] + 1;
	for (size_t q = 0; q < used && m < BB_CORE_SLOTS; q++) {
		double l = 0;
		for (size_t i = 0; i < n; i++)
			l += B->fixed[i] == (long)g && slot[i] == (long)q ? bb_load(B, i, g) : 0;
		size_t at = m++;
		while (at && load[at - 1] < l)
			load[at] = load[at - 1], cand[at] = cand[at - 1], at--;
		load[at] = l, cand[at] = q;
	}
	if (used < slots && m < BB_CORE_SLOTS)
		cand[m++] = used;
	size_t nb = opt_screen_basis_size(B->M->scr);
	unsigned char *bas = malloc(nb);
	if (bas)
		opt_screen_basis_get(B->M->scr, bas);
	bb_close(B, cut_w(in, B->inc));
	B->depth++;
	B->core_branches++;
	for (size_t t = 0; t < m; t++) {
		struct bb_open e = {lb, lb, 0, -1, NULL};
		if (t > 0 || B->unfinished) {
			if (bas && !B->unfinished && (e.basis = malloc(nb)))
				memcpy(e.basis, bas, nb);
			bb_push(B, B->fixed, n + ci, (long)cand[t], e);
			continue;
		}
		slot[ci] = (long)cand[t];
		bb_core_row(B, g, cand[t]);
		B->pend_io = -1;
		bb_node(B, lb);
		slot[ci] = -1;
		bb_core_row(B, g, cand[t]);
	}
	free(bas);
	B->depth--;
	bb_reopen(B, n_stack);
}

/*
 * Solves the node and dives: the LP's favourite child is solved at once (and its favourite, down to
 * a leaf or a closed node), every other child becomes an open node (bb_push) with its floor, which
 * bb_best_first takes up in the order of the floors. What a dive does not settle is left open as
 * well, each node with a valid lower bound on its plans: the node itself when the clock stops it or
 * its leaf's packing stays undecided. A subtree with nothing below the cut-off leaves none (the
 * cut-off only falls, so a subtree closed at an earlier cut-off stays closed). `floor` is a bound the
 * caller already has for this subtree (its LP bound, raised by the branching option's dual bound):
 * the node's own when the clock stops it before its LP, and the least of its children's otherwise
 * (its LP is a restriction of its parent's, raised to floor). Why open nodes rather than a search
 * depth first: a depth-first search that met unpackable leaves stayed in their subtree, below the
 * LP's favourite options, while the cheapest plan sat in a sibling subtree it never reached (Xavier
 * 30 tasks, seed 16536362: leaves at 5.21278-5.21322 W all unpackable, open at 0.025-0.059 % after
 * 10 s; the next open node by floor holds the plan at 5.21281 W, proven in 3.7-5.2 s). And a search
 * stopped by the clock used to leave its vector at the root's bound, however much of the tree it had
 * closed (Xavier 20 tasks, seed 5518925: 669 nodes, bound still the root's 5.18410 W with the plan
 * at 5.18518 W); the vector's bound is the least floor of the open nodes (bb_bound), never less than
 * the root's.
 */
static void bb_node(struct opt_bb *B, double floor)
{
	const struct opt_inst *in = B->M->in;
	long o_top = 0;
	size_t bi = in->n_tasks;
	double lb, *shares = B->shr + (B->depth + 1) * n_options(in); /* the branching task's */
	for (;;) { /* again after a no-good row: the same node has a new LP */
		if (bb_peer_closed(B) || bb_part_closed(B))
			return; /* the vector or the part is closed: this node with it */
		if (B->unfinished || opt_now_s() >= B->dl) {
			B->unfinished = true;
			bb_push(B, B->fixed, BB_NO_TASK, 0, bb_self(B, floor));
			return;
		}
		double cut = cut_w(in, B->inc);
		bool inf;
		lb = opt_screen_resolve(B->M->scr, cut, B->dl, &inf);
		if (!inf && (isnan(lb) || lb == -INFINITY)) { /* no LP optimum in time */
			B->unfinished = true;
			bb_push(B, B->fixed, BB_NO_TASK, 0, bb_self(B, floor));
			return;
		}
		lb = fmax(lb, floor);
		bb_pc_update(B, inf ? INFINITY : lb, cut);
		if (!inf && lb >= cut && lb < band_top(B) && bb_band_time(B))
			bb_band_dive(B);
		if (inf || lb >= cut)
			return;
		bi = bb_branch_task(B, &o_top, shares);
		if (bi < in->n_tasks)
			break;
		int r = bb_leaf(B);
		if (r == 1) /* the best plan of the subtree, now the incumbent (or one as good) */
			return;
		if (r < 0) { /* this leaf stays open (the next call tries it again), the search goes on */
			if (!list_add(&B->held, bb_nf(B), B->fixed, BB_NO_TASK, 0, bb_self(B, lb)))
				B->lost = fmin(B->lost, lb);
			return;
		}
	}
	size_t cg = 0, ci = bb_core_task(B, &cg);
	if (ci < in->n_tasks) { /* a dense task of a full pool onto a core before the next island */
		bb_core_branch(B, ci, cg, lb);
		return;
	}
	size_t no = n_options(in), n_stack = B->n_stack;
	size_t nb = opt_screen_basis_size(B->M->scr);
	unsigned char *bas = malloc(nb); /* this node's basis, where its children left open start */
	if (bas)
		opt_screen_basis_get(B->M->scr, bas);
	bb_close(B, cut_w(in, B->inc));
	/* the branching task's bounds: a child is skipped when its bound reaches the cut-off, which
	 * falls as the earlier children find plans */
	double *cb = B->ob + in->n_tasks * no + (size_t)B->depth * no;
	for (size_t o = 0; o < no; o++) /* a pool's bound: the smallest of its islands' that are open */
		cb[o] = INFINITY;
	for (size_t o = 0; o < no; o++)
		if (!B->closed[bi * no + o])
			cb[bb_group(B, o)] = fmin(cb[bb_group(B, o)], B->ob[bi * no + o]);
	B->depth++;
	/* children: the LP's favourite option first, searched now (its LP starts from this node's
	 * basis), then the others as open nodes, after the dive (its plans may close them) */
	for (size_t t = 0; t < no; t++) {
		long o = t == 0 ? o_top : (long)(t - 1 < (size_t)o_top ? t - 1 : t);
		if (bb_group(B, (size_t)o) != (size_t)o)
			continue;
		if (cb[o] >= cut_w(in, B->inc)) /* every island of the pool closed, or its bound at the cut-off */
			continue;
		struct bb_open e = {fmax(lb, cb[o]), lb, 1 - shares[o], (long)(bi * no + (size_t)o), NULL};
		if (t > 0 || B->unfinished) {
			if (bas && !B->unfinished && (e.basis = malloc(nb)))
				memcpy(e.basis, bas, nb);
			bb_push(B, B->fixed, bi, o, e);
			continue;
		}
		B->fixed[bi] = o;
		bb_open_task(B, bi);
		B->pend_io = e.pc_io, B->pend_lb = e.pc_lb, B->pend_frac = e.pc_frac;
		bb_node(B, e.floor); /* its open nodes' floors never below e.floor */
		B->fixed[bi] = -1;
		bb_open_task(B, bi);
	}
	free(bas);
	B->depth--;
	B->fixed[bi] = -1;
	bb_open_task(B, bi);
	bb_reopen(B, n_stack);
}


/* The valid bound on the plans at this vector that the search has not ruled out: the least floor of
 * its open nodes (INFINITY when there is none: the vector is closed). Only between calls: the leaves
 * a call holds back are back on the heap by then (bb_unhold). */
static double bb_bound(const struct opt_bb *B)
{
	return B->open.n ? fmin(B->lost, B->open.e[0].floor) : B->lost;
}

/* Sets the node's fixings fx (task by task, then the core slots and their rows; closures are empty
 * between nodes) and returns its depth: one fixing (a task's group or its slot) per level. fx NULL:
 * every task free again. */
static size_t bb_set_fixings(struct opt_bb *B, const long *fx)
{
	size_t depth = 0, n = B->M->in->n_tasks;
	for (size_t i = 0; i < 2 * n; i++) {
		B->fixed[i] = fx ? fx[i] : -1;
		depth += B->fixed[i] >= 0;
		if (i < n)
			bb_open_task(B, i);
	}
	bb_core_rows(B);
	return depth;
}

/*
 * Searches the open nodes, least floor first (the one holding the vector's bound down), each at
 * least at the root's LP bound, until none is left below the cut-off or the clock stops; a node the
 * clock stops goes back to the heap. A node's floor stays valid for its subtree whatever was learnt
 * since (the cut-off only falls, the no-goods are valid at this vector), and its LP without the
 * closures of its ancestors is weaker than it was, never wrong, so no plan below the cut-off is lost.
 * A node's LP starts from its parent's basis, saved when the node was left open (from the last node
 * solved, dual feasible too, as nodes differ only in column bounds and added rows, a popped node took
 * 3-5 times the iterations of a dive's child: Xavier 20 tasks, seed 14360225, 220 per popped node
 * against 89 from the parent's basis).
 */
static void bb_best_first(struct opt_bb *B, double root)
{
	const struct opt_inst *in = B->M->in;
	while (B->open.n && !B->unfinished) {
		if (B->open.e[0].floor >= cut_w(in, B->inc) || bb_peer_closed(B) || bb_part_closed(B)) {
			list_drop_bases(&B->open);
			B->open.n = 0; /* the least floor reaches the cut-off: every open node is closed */
			break;
		}
		if (opt_now_s() >= B->dl) {
			B->unfinished = true;
			break;
		}
		struct bb_open e = bb_pop(B);
		B->depth = bb_set_fixings(B, B->fx);
		if (e.basis)
			opt_screen_basis_set(B->M->scr, e.basis);
		free(e.basis);
		B->pend_io = e.pc_io, B->pend_lb = e.pc_lb, B->pend_frac = e.pc_frac;
		bb_node(B, fmax(e.floor, root));
		bb_set_fixings(B, NULL);
	}
}

/* Drops every open node and held leaf: the vector is closed (INFINITY, bb_bound's value now). */
static double bb_close_all(struct opt_bb *B)
{
	B->vec_closed = true;
	list_drop_bases(&B->open);
	list_drop_bases(&B->held);
	B->open.n = B->held.n = 0, B->lost = INFINITY;
	return INFINITY;
}

/*
 * The two workers of the small sets (board.c) split a vector's tree rather than both searching all
 * of it: the first to branch at the vector's root records its branching task t and favourite group
 * g on the board; part 0 is every plan with t in g, part 1 every other, and each worker claims a
 * part (opt_board_claim_part) and searches it alone. The parts cover the vector, so the vector's
 * bound is the smaller of theirs (bb_vector_bound), each proven by whoever searched it and
 * published on the board (opt_board_raise_part). A worker that closes its part claims the other if
 * nobody has, and else searches the other worker's part alongside it until one of them closes it
 * (bb_part_closed): idle, it would only wait; with both parts closed or searched it has none left
 * (BB_NONE) and takes the board's bounds. A part whose worker stops or dies keeps the bound
 * published last: still valid, only weaker.
 * Why: both searched the same tree side by side (Xavier 30 tasks, seed 2220026: 603 and 307 nodes
 * in 3.8 s at one vector, 874 and 407 open), where the tree is what keeps such a set open.
 */
static void bb_claim_part(struct opt_bb *B)
{
	B->part = BB_NONE;
	for (int p = 0; p < 2; p++)
		if (!B->done[p] && opt_board_claim_part(B->M->board, B->pos, p)) {
			B->part = p;
			return;
		}
	/* both claimed: the other worker's part, alongside it, rather than nothing (the second worker
	 * is often the faster prover, the precise one; two proofs of a part are both valid) */
	for (int p = 0; p < 2; p++)
		if (!B->done[p] && opt_board_part(B->M->board, B->pos, p) < cut_w(B->M->in, B->inc)) {
			B->part = p;
			return;
		}
}

/* At the first root LP below the cut-off, with a board: the split (the board's, or this root's
 * branching task), then a part. The root LP must be the last one solved. */
static void bb_take_part(struct opt_bb *B)
{
	const struct opt_inst *in = B->M->in;
	if (!B->M->board || B->split_tried)
		return;
	B->split_tried = true;
	long o = 0;
	size_t t = bb_branch_task(B, &o, B->shr + n_options(in)), g = (size_t)o; /* row 1: depth 0's */
	if (t >= in->n_tasks || !opt_board_split(B->M->board, B->pos, &t, &g) || t >= in->n_tasks ||
	    g >= n_options(in))
		return; /* integral at the root, or no split: the whole vector */
	B->split_t = t, B->split_g = g;
	bb_claim_part(B);
}

/* After a call's search of its part: publishes the part's bound (the cut-off once closed) and, when
 * it closed, claims the other part if that is free (a fresh root, all tasks free). True when there is
 * a part to search now. */
static bool bb_next_part(struct opt_bb *B, double root)
{
	if (B->part != 0 && B->part != 1)
		return false;
	double cut = cut_w(B->M->in, B->inc);
	/* no node left and none lost: closed by this search, or by the other worker's (bb_part_closed) */
	bool closed = !B->open.n && !B->held.n && B->lost == INFINITY && !B->unfinished && !B->peer_closed;
	opt_board_raise_part(B->M->board, B->pos, B->part, fmin(bb_bound(B), cut));
	if (!closed)
		return false;
	B->done[B->part] = true;
	bb_claim_part(B);
	if (B->part == BB_NONE)
		return false;
	B->pend_io = -1;
	bb_push(B, B->fixed, BB_NO_TASK, 0, bb_self(B, root));
	return true;
}

/* The bound on every plan at the vector that this search and the other worker's have not ruled out:
 * bb_bound without a split; with one, the least over the parts of this search's bound (a part it
 * searches), INFINITY (a part it closed) or the board's (the other worker's part, closed once its
 * bound reaches the cut-off), each at least the root's. INFINITY: the vector is closed. */
static double bb_vector_bound(const struct opt_bb *B, double cut)
{
	if (B->vec_closed)
		return INFINITY;
	if (B->part == BB_WHOLE)
		return bb_bound(B);
	double b = INFINITY;
	for (int p = 0; p < 2; p++) {
		double x = B->done[p] ? INFINITY : opt_board_part(B->M->board, B->pos, p);
		if (p == B->part)
			x = fmax(x, bb_bound(B)); /* two proofs of one part: both valid */
		x = fmax(x, B->root_lb);
		b = fmin(b, x >= cut ? INFINITY : x);
	}
	return b;
}

/* One call's search at the vector until dl: the root LP (set up again: other vectors used the LP
 * since), the no-goods found so far, then the open nodes (of its part, and the next part once that
 * is closed: bb_next_part). Returns the vector's bound (bb_vector_bound). */
static double bb_search(struct opt_bb *B, struct opt_sol *inc, double dl)
{
	const struct opt_inst *in = B->M->in;
	struct opt_screen *scr = B->M->scr;
	B->inc = inc, B->dl = dl, B->unfinished = false;
	double cut = cut_w(in, inc);
	bool inf;
	if (bb_peer_closed(B))
		return bb_close_all(B);
	/* Above the small sets' sizes, always the precise mode. Why: at the screening's tolerance an
	 * integral LP optimum may put an island up to 0.1 % over its cores; at 120 tasks the islands
	 * are full, and every such leaf was refused at its packing's root LP and cut off by a no-good of
	 * its own, while the vector's real plans stayed unseen (XU4 120 tasks, seed 9833854: 8 such leaves
	 * and the bound stuck at 4.4988 W, plan 4.6473 W; precise: no refused leaf, the plan at 4.5026 W
	 * and the vector proven in 2.6 s). The small sets keep their portfolio (optimize.c: one worker
	 * precise, one not). */
	opt_screen_precise(scr, in->precise_bb || in->n_tasks > OPT_PER_CORE_TASKS);
	/* the root needs only to reach the cut-off: a bound there closes the vector (after a dive for a
	 * plan in the band, where the bound is below the incumbent: bb_band_dive) */
	double root = opt_screen_vector(scr, &B->s, cut, dl, &inf);
	bool dive = !inf && root >= cut && root < band_top(B) && bb_band_time(B);
	if (!inf && root < cut && isfinite(root))
		bb_take_part(B); /* the root LP is the last one solved here */
	if (inf || (root >= cut && !dive)) {
		bb_close_all(B);
	} else if (isfinite(root)) {
		opt_screen_compact(scr); /* before the no-goods: it renumbers the rows */
		memset(B->crow, 0, in->n_isl * in->n_cores * sizeof(int)); /* the last call's: released */
		for (size_t r = 0; r < B->n_nogood; r++)
			B->nogood[r] = opt_screen_nogood(scr, B->ng_where + r * in->n_tasks, B->pool);
		if (root >= cut) {
			B->depth = 0;
			bb_band_dive(B);
			bb_close_all(B);
		} else {
			B->root_lb = fmax(B->root_lb, root);
			do {
				if (B->part == BB_NONE) { /* both parts closed, or searched by this worker */
					list_drop_bases(&B->open);
					B->open.n = 0;
					break;
				}
				bb_best_first(B, root);
				list_drop_bases(&B->open);
				bb_unhold(B);
			} while (bb_next_part(B, root));
		}
		if (B->peer_closed) /* a node the clock stopped, or a held leaf, may be back on the heap */
			bb_close_all(B);
		for (size_t r = 0; r < B->n_nogood; r++)
			opt_screen_release(scr, B->nogood[r]);
		for (size_t q = 0; q < in->n_isl * in->n_cores; q++)
			opt_screen_release(scr, B->crow[q]);
	}
	opt_screen_precise(scr, false);
	return bb_vector_bound(B, cut_w(in, inc));
}

void opt_mst_bb_free(struct opt_bb *B)
{
	if (!B)
		return;
	opt_ws_free(B->w);
	free(B->fixed);
	free(B->nogood);
	free(B->ng_where);
	list_drop_bases(&B->open);
	list_free(&B->open);
	list_free(&B->held);
	free(B->fx);
	free(B->crow);
	free(B->on);
	free(B->isl);
	free(B->closed);
	free(B->pool);
	free(B->pc_sum);
	free(B->pc_n);
	free(B->shr);
	free(B->stack);
	free(B->ob);
	opt_mst_cand_free(&B->cd);
	opt_sol_free(&B->s);
	opt_sol_free(&B->tmp);
	free(B);
}

static struct opt_bb *bb_new(struct master *M, struct master *C, const struct opt_sol *s)
{
	const struct opt_inst *in = M->in;
	struct opt_bb *B = calloc(1, sizeof(*B));
	if (!B)
		return NULL;
	B->M = M, B->C = C, B->lost = INFINITY, B->pend_io = -1, B->part = BB_WHOLE, B->root_lb = -INFINITY;
	size_t nt = in->n_tasks, no = n_options(in), nio = nt * no;
	B->w = opt_ws_new(in);
	B->fixed = malloc(2 * nt * sizeof(long));
	B->cap_nogood = 256;
	B->nogood = malloc(B->cap_nogood * sizeof(int));
	B->ng_where = malloc(B->cap_nogood * nt * sizeof(int));
	B->closed = calloc(nio + 1, 1);
	B->stack = malloc((nio + 1) * sizeof(size_t));
	/* the last node's bounds, then one row of the branching task's per depth (at most 2 n_tasks:
	 * an island and a core slot per task) */
	B->ob = malloc((nio + (2 * nt + 1) * no) * sizeof(double));
	B->pool = malloc((in->n_isl + 1) * sizeof(size_t));
	B->pc = nt <= BB_PC_TASKS;
	B->pc_sum = B->pc ? calloc(nio + 1, sizeof(double)) : NULL;
	B->pc_n = B->pc ? calloc(nio + 1, sizeof(int)) : NULL;
	B->shr = malloc((2 * nt + 2) * no * sizeof(double));
	B->fx = malloc(2 * nt * sizeof(long));
	B->crow = calloc(in->n_isl * in->n_cores + 1, sizeof(int));
	B->on = calloc(nt + 1, sizeof(bool));
	B->isl = calloc(in->n_isl + 1, sizeof(bool));
	B->t_start = opt_now_s();
	bool ok = B->w && B->fixed && B->nogood && B->ng_where && B->closed && B->stack && B->ob && B->pool &&
		  (!B->pc || (B->pc_sum && B->pc_n)) && B->shr && B->fx && B->crow && B->on && B->isl;
	/* each init only when the one before succeeded: opt_mst_bb_free frees what was set up */
	ok = ok && !opt_sol_init(&B->s, in);
	ok = ok && !opt_sol_init(&B->tmp, in);
	ok = ok && !opt_mst_cand_alloc(&B->cd, in);
	if (!ok) {
		opt_mst_bb_free(B);
		return NULL;
	}
	memcpy(B->s.isl_opp, s->isl_opp, in->n_isl * sizeof(size_t));
	memcpy(B->s.acc_opp, s->acc_opp, in->n_acc * sizeof(size_t));
	opt_twin_pools(in, s, B->pool);
	for (size_t k = 0; k < in->n_isl; k++)
		B->pooled = B->pooled || B->pool[k] != k;
	for (size_t i = 0; i < 2 * nt; i++)
		B->fixed[i] = -1;
	return B;
}

double opt_mst_vector_bb(struct master *M, struct master *C, const struct opt_sol *s, size_t pos, struct opt_sol *inc,
			 double dl, struct opt_bb **keep)
{
	if (keep)
		*keep = NULL;
	if (!M->scr)
		return -INFINITY;
	struct opt_bb *B = bb_new(M, C, s);
	if (!B)
		return -INFINITY;
	B->pos = pos;
	bb_push(B, B->fixed, BB_NO_TASK, 0, bb_self(B, -INFINITY)); /* the root: every task free */
	double res = bb_search(B, inc, dl);
	if (keep && res < INFINITY)
		*keep = B;
	else
		opt_mst_bb_free(B);
	return res;
}

void opt_mst_bb_cut_stats(const struct opt_bb *B, size_t *nogoods, size_t *searches)
{
	*nogoods = B->n_nogood;
	*searches = B->cut_searches;
}

size_t opt_mst_bb_core_branches(const struct opt_bb *B)
{
	return B->core_branches;
}

double opt_mst_bb_resume(struct opt_bb *B, struct opt_sol *inc, double dl)
{
	/* nothing open and no part left to search: the bound as it stands */
	B->inc = inc;
	/* BB_NONE is final: the board's bounds only rise and the cut-off only falls */
	if (!B->open.n && (B->vec_closed || B->part == BB_WHOLE || B->part == BB_NONE))
		return bb_vector_bound(B, cut_w(B->M->in, inc));
	return bb_search(B, inc, dl);
}
