/* SPDX-License-Identifier: MIT */
/*
 * The exact mode's list of OPP vectors, kept sorted by bound (master.c): the comparison, and the
 * re-sort after the screening raised the bounds of a prefix of the list.
 */
#include "optimizer/master_impl.h"

#include <stdlib.h>
#include <string.h>

int opt_vec_cmp(const void *a, const void *b)
{
	double x = ((const struct opt_vec *)a)->lb, y = ((const struct opt_vec *)b)->lb;
	return (x > y) - (x < y);
}

/*
 * The prefix is sorted alone, copied out and merged with the rest from the front, each element moved
 * at most once, and the merge ends where the prefix's last element lands.
 * Why: on Xavier's 503 440 canonical vectors a qsort of the whole list takes ~43 ms, several per
 * run, where the screening raises a few hundred bounds (a 10-task set is solved in ~0.35 s).
 */
void opt_vec_resort(struct opt_vec *vs, size_t m, size_t nv)
{
	qsort(vs, m, sizeof(*vs), opt_vec_cmp);
	struct opt_vec *p = m && m < nv ? malloc(m * sizeof(*vs)) : NULL;
	if (!p) {
		if (m && m < nv) /* no memory for the merge: the whole list, in place */
			qsort(vs, nv, sizeof(*vs), opt_vec_cmp);
		return;
	}
	memcpy(p, vs, m * sizeof(*vs));
	/* p[i..m) and vs[j..nv) left to merge into vs[w..): w = i + j - m <= j, so no unread element is
	 * overwritten, and once p is used up (w = j) the rest is in place */
	size_t i = 0, j = m, w = 0;
	while (i < m) {
		if (j < nv && vs[j].lb < p[i].lb)
			vs[w++] = vs[j++];
		else
			vs[w++] = p[i++];
	}
	free(p);
}
