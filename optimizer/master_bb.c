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
 * so only the assignment is searched: depth first, on the task whose LP share is most fractional,
 * the option with the larger share first. A node whose LP bound reaches the incumbent is closed. An
 * integral LP optimum is an assignment whose power is that bound: if it packs with the LP's deadlines
 * (opt_pack_given keeps every task on its island) it is the best plan of its subtree; otherwise the
 * exact packing search decides (corepack.c, then the core-level master if that ran out of time),
 * and an assignment that cannot be packed gets a no-good row in the screening LP (valid at this
 * vector, freed afterwards) and the node is solved again. Every node's LP is an outer approximation,
 * so every closure is valid.
 */
struct bb {
	struct master *M, *C;
	struct opt_sol *inc, s, tmp;
	struct opt_ws *w;
	struct cand cd;
	long *fixed; /* per task: fixed option, or -1 */
	int *nogood; /* no-good rows added to the screening LP at this vector */
	size_t n_nogood, cap_nogood;
	double dl;
	bool unfinished; /* out of time */
	bool unknown;    /* some leaf's packing was not decided */
};
/* One exact packing check of the branch and bound may take this long (corepack.c decides the
 * benchmark's 30-task packings in 0.01-2 s; GLPK's core-level master sometimes not in 9 s); a leaf
 * left undecided stays open and the search goes on. */
#define BB_EXACT_S 2.0

static size_t n_options(const struct opt_inst *in) { return in->n_isl + in->n_srv; }

/* Most fractional free task (largest 1 - max share), or n_tasks when the LP optimum is integral; the
 * option with its largest share in *best_o. */
static size_t bb_branch_task(const struct bb *B, long *best_o)
{
	const struct opt_inst *in = B->M->in;
	size_t bi = in->n_tasks;
	double bf = 1e-6;
	for (size_t i = 0; i < in->n_tasks; i++) {
		if (B->fixed[i] >= 0)
			continue;
		double top = 0;
		long o_top = 0;
		for (size_t o = 0; o < n_options(in); o++) {
			double sh = opt_screen_share(B->M->scr, i, o);
			if (sh > top)
				top = sh, o_top = (long)o;
		}
		if (1 - top > bf)
			bf = 1 - top, bi = i, *best_o = o_top;
	}
	return bi;
}

/* An integral LP optimum: can its assignment be packed? 1 yes (incumbent updated), 0 proven not
 * (a no-good row now excludes it), -1 not known (the exact check ran out of its time). */
static int bb_leaf(struct bb *B)
{
	const struct opt_inst *in = B->M->in;
	opt_screen_round(B->M->scr, B->s.where);
	memcpy(B->cd.where, B->s.where, in->n_tasks * sizeof(int));
	/* only packings that keep this assignment close the subtree (no repair moves here) */
	if (opt_mst_round_pack(B->M, &B->s, B->w, fmin(B->dl, opt_now_s() + 1.0), false)) {
		if (!B->inc->ok || B->s.power_w < B->inc->power_w)
			opt_sol_copy(B->inc, &B->s, in);
		return 1;
	}
	if (B->n_nogood == B->cap_nogood)
		return -1;
	memcpy(B->cd.isl_opp, B->s.isl_opp, in->n_isl * sizeof(size_t));
	memcpy(B->cd.acc_opp, B->s.acc_opp, in->n_acc * sizeof(size_t));
	opt_sol_copy(&B->tmp, &B->s, in);
	memcpy(B->tmp.where, B->cd.where, in->n_tasks * sizeof(int));
	int r = opt_corepack(in, &B->tmp, fmin(B->dl, opt_now_s() + BB_EXACT_S));
	if (r < 0 && B->C)
		r = opt_mst_pack_exact(B->C, &B->cd, &B->tmp, fmin(B->dl, opt_now_s() + BB_EXACT_S));
	if (r == 1 && (!B->inc->ok || B->tmp.power_w < B->inc->power_w))
		opt_sol_copy(B->inc, &B->tmp, in);
	if (r == 0)
		B->nogood[B->n_nogood++] = opt_screen_nogood(B->M->scr, B->cd.where);
	return r;
}

static void bb_node(struct bb *B)
{
	const struct opt_inst *in = B->M->in;
	long o_top = 0;
	size_t bi = in->n_tasks;
	for (;;) { /* again after a no-good row: the same node has a new LP */
		if (B->unfinished || opt_now_s() >= B->dl) {
			B->unfinished = true;
			return;
		}
		double cut = cut_w(in, B->inc);
		bool inf;
		double lb = opt_screen_resolve(B->M->scr, cut, B->dl, &inf);
		if (inf || lb >= cut)
			return;
		if (!isfinite(lb)) {
			B->unfinished = true;
			return;
		}
		bi = bb_branch_task(B, &o_top);
		if (bi < in->n_tasks)
			break;
		int r = bb_leaf(B);
		if (r == 1)
			return;
		if (r < 0) { /* this leaf stays open: the vector cannot be closed, the search goes on */
			B->unknown = true;
			return;
		}
	}
	/* children: the LP's favourite option first, then the others */
	for (size_t t = 0; t < n_options(in) && !B->unfinished; t++) {
		long o = t == 0 ? o_top : (long)(t - 1 < (size_t)o_top ? t - 1 : t);
		B->fixed[bi] = o;
		opt_screen_fix(B->M->scr, &B->s, bi, o);
		bb_node(B);
	}
	B->fixed[bi] = -1;
	opt_screen_fix(B->M->scr, &B->s, bi, -1);
}

/* Returns INFINITY when the search closed vector s (any better plan is now the incumbent), else
 * -INFINITY (unfinished: the caller keeps the vector's other bounds). */
double opt_mst_vector_bb(struct master *M, struct master *C, const struct opt_sol *s, struct opt_sol *inc, double dl)
{
	const struct opt_inst *in = M->in;
	struct bb B = {.M = M, .C = C, .inc = inc, .dl = dl};
	double res = -INFINITY;
	if (!M->scr)
		return res;
	B.w = opt_ws_new(in);
	B.fixed = malloc(in->n_tasks * sizeof(long));
	B.cap_nogood = 256;
	B.nogood = malloc(B.cap_nogood * sizeof(int));
	if (!B.w || !B.fixed || !B.nogood || opt_sol_init(&B.s, in) || opt_sol_init(&B.tmp, in) || opt_mst_cand_alloc(&B.cd, in))
		goto out;
	memcpy(B.s.isl_opp, s->isl_opp, in->n_isl * sizeof(size_t));
	memcpy(B.s.acc_opp, s->acc_opp, in->n_acc * sizeof(size_t));
	for (size_t i = 0; i < in->n_tasks; i++)
		B.fixed[i] = -1;
	bool inf;
	/* the root needs only to reach the cut-off: a bound there closes the vector */
	double cut = cut_w(in, inc);
	double lb = opt_screen_vector(M->scr, &B.s, cut, dl, &inf);
	if (inf || lb >= cut)
		res = INFINITY;
	else if (isfinite(lb)) {
		bb_node(&B);
		if (!B.unfinished && !B.unknown)
			res = INFINITY;
	}
out:
	for (size_t r = 0; r < B.n_nogood; r++)
		opt_screen_release(M->scr, B.nogood[r]);
	opt_ws_free(B.w);
	free(B.fixed);
	free(B.nogood);
	opt_mst_cand_free(&B.cd);
	opt_sol_free(&B.s);
	opt_sol_free(&B.tmp);
	return res;
}

