/* SPDX-License-Identifier: MIT */
/*
 * Identical islands (docs/MODEL.md, "Symmetry of identical islands"): islands k < k' are identical
 * when everything the model knows of them is equal: number of cores, every OPP (frequency, busy and
 * idle power) and every task's execution time at every OPP (the instance's per-(task, island, OPP)
 * table, which is all the solvers read). Xavier's four Carmel clusters are.
 *
 * Why sorting is exact: swapping two identical islands (their OPPs, and the tasks on their cores
 * core by core) maps every plan to a plan with the same power, the same densities on every core,
 * the same path lengths and the same FIFO loads. So every plan has an equivalent one whose OPP
 * indices are non-decreasing along each class of identical islands ("canonical"), and searching the
 * canonical OPP vectors only loses no optimum and keeps every bound valid: a bound over the
 * canonical vectors is a bound over all of them.
 */
#include "optimizer/opt_impl.h"

#include <stdint.h>
#include <stdlib.h>

static bool identical(const struct opt_inst *in, size_t k, size_t j)
{
	const struct pd_island *a = pd_platform_island(in->plat, k), *b = pd_platform_island(in->plat, j);
	if (in->isl_nopp[k] != in->isl_nopp[j] || in->isl_ncores[k] != in->isl_ncores[j])
		return false;
	for (size_t m = 0; m < in->isl_nopp[k]; m++)
		if (a->opps[m].freq_khz != b->opps[m].freq_khz || in->idle_w[k][m] != in->idle_w[j][m] ||
		    in->busy_w[k][m] != in->busy_w[j][m] || in->isl_const_w[k][m] != in->isl_const_w[j][m])
			return false;
	for (size_t i = 0; i < in->n_tasks; i++)
		for (size_t m = 0; m < in->isl_nopp[k]; m++)
			if (runtime_at(in, i, k, m) != runtime_at(in, i, j, m) || demand_at(in, i, k, m) != demand_at(in, i, j, m))
				return false;
	return true;
}

int opt_symmetry_build(struct opt_inst *in)
{
	in->isl_prev_twin = malloc((in->n_isl ? in->n_isl : 1) * sizeof(long));
	if (!in->isl_prev_twin)
		return -1;
	for (size_t k = 0; k < in->n_isl; k++) {
		in->isl_prev_twin[k] = -1;
		for (size_t j = k; j-- > 0;)
			if (identical(in, k, j)) {
				in->isl_prev_twin[k] = (long)j;
				break;
			}
	}
	return 0;
}

bool opt_vector_canonical(const struct opt_inst *in, const struct opt_sol *s)
{
	for (size_t k = 0; k < in->n_isl; k++)
		if (in->isl_prev_twin[k] >= 0 && s->isl_opp[in->isl_prev_twin[k]] > s->isl_opp[k])
			return false;
	return true;
}

size_t opt_twin_pairs(const struct opt_inst *in)
{
	size_t n = 0;
	for (size_t k = 0; k < in->n_isl; k++)
		n += in->isl_prev_twin[k] >= 0;
	return n;
}

/* Odometer over the islands' and accelerators' OPPs in id order (opt_vector_decode's mixed radix,
 * island 0 fastest); false after the last vector. */
static bool next_vector(const struct opt_inst *in, size_t *isl, size_t *acc)
{
	for (size_t k = 0; k < in->n_isl; k++) {
		if (++isl[k] < in->isl_nopp[k])
			return true;
		isl[k] = 0;
	}
	for (size_t a = 0; a < in->n_acc; a++) {
		if (++acc[a] < in->acc_nopp[a])
			return true;
		acc[a] = 0;
	}
	return false;
}

size_t opt_canonical_vectors(const struct opt_inst *in, size_t *ids, size_t cap)
{
	size_t *isl = calloc(in->n_isl + in->n_acc + 1, sizeof(size_t));
	if (!isl)
		return SIZE_MAX;
	size_t *acc = isl + in->n_isl, n = 0, id = 0;
	do {
		bool canon = true;
		for (size_t k = 0; canon && k < in->n_isl; k++)
			canon = in->isl_prev_twin[k] < 0 || isl[in->isl_prev_twin[k]] <= isl[k];
		if (canon) {
			if (n >= cap) {
				n = SIZE_MAX;
				break;
			}
			if (ids)
				ids[n] = id;
			n++;
		}
		id++;
	} while (next_vector(in, isl, acc));
	free(isl);
	return n;
}

/* Cores of identical islands at one OPP are interchangeable in every rule of the model (speed,
 * power, cap; nothing else tells islands apart), so such islands may share their cores. */
void opt_twin_pools(const struct opt_inst *in, const struct opt_sol *s, size_t *pool)
{
	for (size_t k = 0; k < in->n_isl; k++) {
		long p = in->isl_prev_twin[k];
		pool[k] = p >= 0 && s->isl_opp[p] == s->isl_opp[k] ? pool[p] : k;
	}
}
