/* SPDX-License-Identifier: MIT */
/*
 * heur_search.c - the heuristic's searches over OPP vectors above OPT_DESCEND_TASKS tasks and its
 * bounds (docs/MODEL.md "Heuristic"): the separable lower bound, the descent from the fastest vector
 * (identical islands stepping together, exchange steps, warm starts from the incumbent), and the
 * strengthening of the vector bounds below the incumbent.
 */
#include "optimizer/heur_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

double opt_min_idle_w(const struct opt_inst *in)
{
	double p = in->base_w;
	for (size_t k = 0; k < in->n_isl; k++) {
		double m = INFINITY;
		for (size_t j = 0; j < in->isl_nopp[k]; j++)
			m = fmin(m, in->isl_const_w[k][j]);
		p += m;
	}
	for (size_t a = 0; a < in->n_acc; a++) {
		double m = INFINITY;
		for (size_t j = 0; j < in->acc_nopp[a]; j++)
			m = fmin(m, in->acc_idle_w[a][j]);
		p += m;
	}
	return p;
}

/* Weak but valid bound without enumerating vectors: cheapest idle per island / GPU plus each task's
 * cheapest option at any OPP. */
double heur_separable_bound(struct heur *h)
{
	const struct opt_inst *in = h->in;
	double p = opt_min_idle_w(in);
	for (size_t i = 0; i < in->n_tasks; i++) {
		double m = INFINITY;
		for (size_t k = 0; k < in->n_isl; k++)
			for (size_t j = 0; j < in->isl_nopp[k]; j++) {
				h->cur.isl_opp[k] = j;
				m = fmin(m, opt_task_busy_w(in, &h->cur, i, (int)in->isl_core0[k]));
			}
		for (size_t v = 0; v < in->n_srv; v++)
			for (size_t j = 0; j < in->acc_nopp[in->srv[v].accel] && in->impl[i * in->n_srv + v] >= 0; j++) {
				h->cur.acc_opp[in->srv[v].accel] = j;
				m = fmin(m, opt_task_busy_w(in, &h->cur, i, opt_where_server(v)));
			}
		p += m;
	}
	return p;
}

double opt_quick_bound(const struct opt_inst *in)
{
	struct heur h = {.in = in};
	if (opt_sol_init(&h.cur, in))
		return -INFINITY;
	double b = heur_separable_bound(&h);
	opt_sol_free(&h.cur);
	return b;
}

/* Coordinate descent over OPP vectors from the top one: lower one island's / GPU's OPP at a time,
 * keep the best plan, until nothing improves (for platforms with too many vectors to enumerate). */
/* Whether the vector vec with coordinate c set to j is in tried (n of cap rows of nc); adds it if
 * not. An allocation failure answers "not seen" (the search then only repeats work). */
static bool seen_vector(size_t **tried, size_t *n, size_t *cap, const size_t *vec, size_t c, size_t j, size_t nc)
{
	for (size_t t = 0; t < *n; t++) {
		const size_t *row = *tried + t * nc;
		size_t x = 0;
		while (x < nc && row[x] == (x == c ? j : vec[x]))
			x++;
		if (x == nc)
			return true;
	}
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		size_t *g = realloc(*tried, ncap * nc * sizeof(size_t));
		if (!g)
			return false;
		*tried = g, *cap = ncap;
	}
	for (size_t x = 0; x < nc; x++)
		(*tried)[*n * nc + x] = x == c ? j : vec[x];
	(*n)++;
	return false;
}

/* Sorts the OPPs of every class of identical islands (symmetry.c) in vec (islands first). */
static void canonical_sort(const struct opt_inst *in, size_t *vec)
{
	for (bool swapped = true; swapped;) {
		swapped = false;
		for (size_t k = 0; k < in->n_isl; k++) {
			long j = in->isl_prev_twin[k];
			if (j >= 0 && vec[j] > vec[k]) {
				size_t t = vec[j];
				vec[j] = vec[k], vec[k] = t;
				swapped = true;
			}
		}
	}
}

/* Sets the OPPs of h->cur from a vector (islands, then accelerators). */
static void set_vector(struct heur *h, const size_t *vec)
{
	const struct opt_inst *in = h->in;
	for (size_t x = 0; x < in->n_isl + in->n_acc; x++)
		*opt_coord_opp(in, &h->cur, x) = vec[x];
}

/* Whether the OPPs of s are the vector v (islands, then accelerators). */
static bool at_vector(const struct opt_inst *in, const struct opt_sol *s, const size_t *v)
{
	for (size_t x = 0; x < in->n_isl + in->n_acc; x++)
		if ((x < in->n_isl ? s->isl_opp[x] : s->acc_opp[x - in->n_isl]) != v[x])
			return false;
	return true;
}

/* A descent step from vector vec to raw, whose canonical form is cand: the full try at cand, then,
 * when that did not improve best and best is the plan at vec, the warm start at raw. Returns true
 * when the warm start improved best (best is then at raw, not cand). l: unused (the bound is
 * recomputed with the cheapest placement try_vector starts from). */
static bool step_to(struct heur *h, double power_cap_w, struct opt_sol *best, const size_t *vec, const size_t *raw,
		    const size_t *cand, double l)
{
	double before = best->ok ? best->power_w : INFINITY;
	bool at_inc = best->ok && at_vector(h->in, best, vec);
	set_vector(h, cand);
	l = heur_vector_lb(h, &h->cur); /* also the cheapest placement in h->cur, which try_vector starts from */
	if (isfinite(l))
		heur_try_vector(h, l, power_cap_w, best);
	if (best->ok && best->power_w < before - 1e-12)
		return false;
	return at_inc && heur_try_warm(h, raw, power_cap_w, best);
}

/*
 * Identical islands (Xavier's four Carmel clusters) step down together while that improves: a
 * balanced level is where their optimum usually lies, and one island at a time from the top reaches
 * it only through many single steps (each a full try), if at all (a lone island low and its twins
 * at the top stalls the descent). Returns whether anything improved.
 */
static bool group_steps(struct heur *h, double power_cap_w, struct opt_sol *best, size_t *vec, size_t *cand,
			size_t *raw, size_t **tried, size_t *n_tried, size_t *cap_tried)
{
	const struct opt_inst *in = h->in;
	size_t nc = in->n_isl + in->n_acc;
	bool any = false;
	for (size_t k0 = 0; k0 < in->n_isl; k0++) {
		if (in->isl_prev_twin[k0] >= 0)
			continue;
		size_t members = 0;
		for (size_t k = k0; k < in->n_isl; k++)
			members += opt_twin_root(in, k) == k0;
		if (members < 2)
			continue;
		while (opt_now_s() < h->deadline_s) {
			bool lowered = false;
			for (size_t x = 0; x < nc; x++)
				raw[x] = vec[x];
			for (size_t k = k0; k < in->n_isl; k++)
				if (opt_twin_root(in, k) == k0 && raw[k] > 0)
					raw[k]--, lowered = true;
			if (!lowered)
				break;
			memcpy(cand, raw, nc * sizeof(size_t));
			canonical_sort(in, cand);
			set_vector(h, cand);
			double before = best->ok ? best->power_w : INFINITY;
			double l = heur_vector_lb(h, &h->cur);
			if (!isfinite(l) || l >= before || seen_vector(tried, n_tried, cap_tried, cand, 0, cand[0], nc))
				break;
			bool warm = step_to(h, power_cap_w, best, vec, raw, cand, l);
			if (!(best->ok && best->power_w < before - 1e-12))
				break;
			memcpy(vec, warm ? raw : cand, nc * sizeof(size_t));
			any = true;
		}
	}
	return any;
}

/* Exchange steps tried when no single step down improves, smallest bound first. */
#define OPT_EXCHANGE_TRIES 4

/*
 * When no coordinate can go down alone, one island / GPU one step down while another goes one or two
 * steps up: the plan at a lower OPP often packs only with the load shifted to a faster neighbour
 * (XU4: big down, LITTLE up). Tries the OPT_EXCHANGE_TRIES such vectors with the smallest bounds
 * below the incumbent; moves vec to the first that improves it. cand: scratch of nc.
 */
static bool exchange(struct heur *h, double power_cap_w, struct opt_sol *best, size_t *vec, size_t *cand,
		     size_t **tried, size_t *n_tried, size_t *cap_tried)
{
	const struct opt_inst *in = h->in;
	size_t nc = in->n_isl + in->n_acc;
	struct vec *list = calloc(nc * nc * 2 + 1, sizeof(*list));
	size_t *vecs = calloc((nc * nc * 2 + 1) * nc, sizeof(size_t));
	bool improved = false;
	if (!list || !vecs)
		goto out;
	size_t n = 0;
	double before = best->ok ? best->power_w : INFINITY;
	for (size_t c = 0; c < nc; c++) {
		if (vec[c] == 0)
			continue;
		for (size_t u = 0; u < nc; u++) {
			size_t top = opt_coord_nopp(in, u);
			for (size_t up = 1; up <= 2 && u != c && vec[u] + up < top; up++) {
				for (size_t x = 0; x < nc; x++)
					cand[x] = vec[x];
				cand[c] = vec[c] - 1;
				cand[u] = vec[u] + up;
				memcpy(vecs + n * nc, cand, nc * sizeof(size_t)); /* as stepped (warm start) */
				canonical_sort(in, cand);
				set_vector(h, cand);
				double l = heur_vector_lb(h, &h->cur);
				if (!isfinite(l) || l >= before)
					continue;
				list[n] = (struct vec){n, l};
				n++;
			}
		}
	}
	qsort(list, n, sizeof(*list), heur_cmp_vec);
	int tries = 0;
	for (size_t t = 0; t < n && tries < OPT_EXCHANGE_TRIES && opt_now_s() < h->deadline_s; t++) {
		const size_t *v = vecs + list[t].id * nc;
		memcpy(cand, v, nc * sizeof(size_t));
		canonical_sort(in, cand);
		if (seen_vector(tried, n_tried, cap_tried, cand, 0, cand[0], nc))
			continue;
		tries++;
		bool warm = step_to(h, power_cap_w, best, vec, v, cand, list[t].lb_w);
		if (best->ok && best->power_w < before - 1e-12) {
			memcpy(vec, warm ? v : cand, nc * sizeof(size_t));
			improved = true;
			break;
		}
	}
out:
	free(list);
	free(vecs);
	return improved;
}

void heur_descend(struct heur *h, double power_cap_w, struct opt_sol *best, const size_t *start)
{
	const struct opt_inst *in = h->in;
	size_t nc = in->n_isl + in->n_acc;
	size_t *vec = calloc(nc, sizeof(size_t)), *cand = calloc(nc, sizeof(size_t)), *raw = calloc(nc, sizeof(size_t));
	size_t *tried = NULL, n_tried = 0, cap_tried = 0;
	if (!vec || !cand || !raw) {
		free(vec), free(cand), free(raw);
		return;
	}
	for (size_t c = 0; c < nc; c++)
		vec[c] = start ? start[c] : opt_coord_nopp(in, c) - 1;
	if (!best->ok) { /* the start vector itself first */
		set_vector(h, vec);
		double l = heur_vector_lb(h, &h->cur);
		if (isfinite(l))
			heur_try_vector(h, l, power_cap_w, best);
	}
	for (bool improved = true; improved && opt_now_s() < h->deadline_s;) {
		improved = group_steps(h, power_cap_w, best, vec, cand, raw, &tried, &n_tried, &cap_tried);
		for (size_t c = 0; c < nc && opt_now_s() < h->deadline_s; c++) {
			for (size_t j = vec[c]; j-- > 0 && opt_now_s() < h->deadline_s;) {
				for (size_t x = 0; x < nc; x++)
					raw[x] = cand[x] = x == c ? j : vec[x];
				/* the equivalent canonical vector (symmetry.c): the same plans, and a vector
				 * reached twice in another order is tried once */
				canonical_sort(in, cand);
				set_vector(h, cand);
				double before = best->ok ? best->power_w : INFINITY;
				double l = heur_vector_lb(h, &h->cur);
				if (!isfinite(l) || l >= before)
					continue;
				/* try_vector is deterministic in the vector: one that failed to improve once
				 * (the incumbent only got better since) would fail again */
				if (seen_vector(&tried, &n_tried, &cap_tried, cand, 0, cand[0], nc))
					break;
				bool warm = step_to(h, power_cap_w, best, vec, raw, cand, l);
				if (!(best->ok && best->power_w < before - 1e-12))
					break; /* one step down did not help: next coordinate */
				bool moved = cand[c] != j; /* the sort gave coordinate c another island's OPP */
				memcpy(vec, warm ? raw : cand, nc * sizeof(size_t));
				moved = moved && !warm;
				improved = true;
				if (moved)
					break;
			}
		}
		if (!improved && opt_now_s() < h->deadline_s)
			improved = exchange(h, power_cap_w, best, vec, cand, &tried, &n_tried, &cap_tried);
	}
	free(vec);
	free(cand);
	free(raw);
	free(tried);
}

/* Raises every vector's bound to the capacity-aware one (bound.c) where that is stronger; vectors
 * whose cheapest-option bound already reaches the incumbent keep it (they are pruned either way).
 * Stops at the time limit: the bounds not raised stay valid, only weaker. */
void heur_strengthen(struct heur *h, struct vec *vs, size_t nv, const struct opt_sol *best)
{
	const struct opt_inst *in = h->in;
	double inc = best->ok ? best->power_w : INFINITY;
	struct opt_bound *b = opt_bound_new(in);
	for (size_t j = 0; b && j < nv && opt_now_s() < h->deadline_s; j++) {
		if (!isfinite(vs[j].lb_w) || vs[j].lb_w >= inc)
			continue;
		opt_vector_decode(in, &h->cur, vs[j].id);
		vs[j].lb_w = fmax(vs[j].lb_w, opt_bound_vector(b, &h->cur, inc));
	}
	opt_bound_free(b);
}
