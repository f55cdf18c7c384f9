/* SPDX-License-Identifier: MIT */
/*
 * A platform with its cores renumbered (pd_platform_remap_cpus, pd_platform.h; `deploy --cpu-map`,
 * docs/DEPLOY.md "CPU map").
 *
 * Why: a plan names Linux CPU ids. Boards of one kind share a platform file and a plan, but the
 * board a farm hands out may reach the same cores under other ids: two board twins on one host each
 * own a disjoint set of the host's CPUs (`twin up --host-cpus`), and a board whose firmware numbers
 * its clusters the other way round names its big cores 0-3 instead of 4-7. The model does not
 * depend on the numbers (an island's cores are interchangeable), so the same plan holds on such a
 * board once every CPU id in it is replaced; the deployer does that before anything touches the
 * board, and everything after it (cpusets, the cpufreq policy, the agent's affinities, the run log)
 * sees the board's ids.
 *
 * The renumbering goes through the platform draft (platform_build.c), so the result passes the same
 * parser as a file: a CPU named twice, an id out of range or a list of the wrong length cannot make a
 * platform.
 */
#include "platforms/platform_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The island's policy on the board: the default name follows the first core (policy<cpu>, as the
 * kernel names a policy after its first CPU), a name written in the file is the board's own and
 * stays. */
static const char *remapped_policy(const struct pd_island *k, int first_board, char *buf, size_t n)
{
	char dflt[32];
	snprintf(dflt, sizeof(dflt), "policy%d", k->cpus[0]);
	if (!k->policy || strcmp(k->policy, dflt))
		return k->policy;
	snprintf(buf, n, "policy%d", first_board);
	return buf;
}

pd_platform *pd_platform_remap_cpus(const pd_platform *p, const int *board, size_t n, const char *file, pd_diags *d)
{
	size_t cores = pd_platform_core_count(p);
	if (n != cores) {
		pd_diags_add(d, (struct pd_loc){0}, "%s: a CPU map of %zu CPUs for a platform of %zu cores", file, n, cores);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (board[i] < 0 || board[i] > PD_PLATFORM_MAX_CPU) {
			pd_diags_add(d, (struct pd_loc){0}, "%s: CPU %d in the map is not a Linux CPU id (0-%d)", file,
				     board[i], PD_PLATFORM_MAX_CPU);
			return NULL;
		}
	pd_platform_draft *dr = pd_platform_draft_new(p->name, p->ref_khz, p->base_uw, &p->dl);
	if (!dr) {
		pd_diags_add(d, (struct pd_loc){0}, "%s: out of memory", file);
		return NULL;
	}
	size_t at = 0;
	for (size_t k = 0; k < p->n_islands; k++) {
		struct pd_island isl = p->islands[k];
		char policy[32];
		isl.cpus = board + at;
		isl.policy = remapped_policy(&p->islands[k], board[at], policy, sizeof(policy));
		at += isl.n_cpus;
		pd_platform_draft_add_island(dr, &isl); /* out of memory: finish says so */
	}
	for (size_t a = 0; a < p->n_accels; a++)
		pd_platform_draft_add_accel(dr, &p->accels[a]);
	for (size_t s = 0; s < p->n_sensors; s++)
		pd_platform_draft_add_sensor(dr, &p->sensors[s]);
	pd_platform *q = pd_platform_draft_finish(dr, file, d);
	if (q && pd_platform_set_provenance(q, p->provenance)) {
		pd_diags_add(d, (struct pd_loc){0}, "%s: out of memory", file);
		pd_platform_free(q);
		return NULL;
	}
	return q;
}
