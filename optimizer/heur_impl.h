/* SPDX-License-Identifier: MIT */
/* heur_impl.h - the heuristic's state, shared by heuristic.c (placement, repair, local search, the
 * entry points) and heur_search.c (the searches over OPP vectors: separable bound, descent). Private
 * to optimizer/. */
#ifndef PD_OPT_HEUR_IMPL_H
#define PD_OPT_HEUR_IMPL_H

#include "optimizer/opt_impl.h"

struct vec {
	size_t id;
	double lb_w;
};

/* Above this many tasks only OPT_LARGE_TRIES vectors are tried in bound order, then a descent. */
#define OPT_DESCEND_TASKS 60
/* Large sets: vectors tried in bound order before the descent (a repair there costs many packs). */
#define OPT_LARGE_TRIES 6

struct heur {
	const struct opt_inst *in;
	struct opt_ws *ws;
	double slack_frac, deadline_s;
	size_t n_opt;  /* options per task: islands then servers */
	int *opt_where; /* option -> where value (island's core 0, or -(1 + server)) */
	struct opt_sol cur, tmp, keep;
	struct opt_sol rep; /* repair: the packed plan of the best move of the current step */
	/* A repair does not try moves that make the plan cost more than this (W): the caller only wants
	 * plans that beat its incumbent, and the local search after a repair recovers little. */
	double cutoff_w;
};

/* Iterated descent (opt_heur_restarts): each coordinate raised by at most this many OPPs. */
#define OPT_RESTART_UP 4

/* Slack above the incumbent that a repair may still spend (the local search may win it back). */
#define OPT_REPAIR_MARGIN 0.02

/* heuristic.c */
bool heur_try_vector(struct heur *h, double lb, double power_cap_w, struct opt_sol *best);
bool heur_try_warm(struct heur *h, const size_t *v, double power_cap_w, struct opt_sol *best);
double heur_vector_lb(struct heur *h, struct opt_sol *s);
int heur_cmp_vec(const void *a, const void *b);
/* heur_search.c */
void heur_descend(struct heur *h, double power_cap_w, struct opt_sol *best, const size_t *start);
void heur_strengthen(struct heur *h, struct vec *vs, size_t nv, const struct opt_sol *best);
double heur_separable_bound(struct heur *h);

#endif
