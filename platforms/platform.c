/* SPDX-License-Identifier: MIT */
/* Accessors of the platform model and its lifetime. */
#include "platforms/platform_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pd_platform_free(pd_platform *p)
{
	if (!p)
		return;
	pd_arena_free(p->arena);
	free(p);
}

const char *pd_platform_name(const pd_platform *p) { return p->name; }
int64_t pd_platform_ref_freq_khz(const pd_platform *p) { return p->ref_khz; }
int64_t pd_platform_base_uw(const pd_platform *p) { return p->base_uw; }
const struct pd_dl *pd_platform_dl(const pd_platform *p) { return &p->dl; }
size_t pd_platform_island_count(const pd_platform *p) { return p->n_islands; }
size_t pd_platform_accel_count(const pd_platform *p) { return p->n_accels; }
size_t pd_platform_sensor_count(const pd_platform *p) { return p->n_sensors; }

const struct pd_island *pd_platform_island(const pd_platform *p, size_t k)
{
	return k < p->n_islands ? &p->islands[k] : NULL;
}

const struct pd_accelerator *pd_platform_accel(const pd_platform *p, size_t a)
{
	return a < p->n_accels ? &p->accels[a] : NULL;
}

const struct pd_sensor *pd_platform_sensor(const pd_platform *p, size_t s)
{
	return s < p->n_sensors ? &p->sensors[s] : NULL;
}

long pd_platform_find_island(const pd_platform *p, const char *name)
{
	for (size_t k = 0; k < p->n_islands; k++)
		if (strcmp(p->islands[k].name, name) == 0)
			return (long)k;
	return -1;
}

long pd_platform_find_accel(const pd_platform *p, const char *name)
{
	for (size_t a = 0; a < p->n_accels; a++)
		if (strcmp(p->accels[a].name, name) == 0)
			return (long)a;
	return -1;
}

long pd_platform_island_of_cpu(const pd_platform *p, int cpu)
{
	for (size_t k = 0; k < p->n_islands; k++)
		for (size_t c = 0; c < p->islands[k].n_cpus; c++)
			if (p->islands[k].cpus[c] == cpu)
				return (long)k;
	return -1;
}

size_t pd_platform_core_count(const pd_platform *p)
{
	size_t n = 0;
	for (size_t k = 0; k < p->n_islands; k++)
		n += p->islands[k].n_cpus;
	return n;
}

int pd_platform_set_opp_power(pd_platform *p, size_t island, size_t opp, int64_t busy_uw, int64_t idle_uw)
{
	if (island >= p->n_islands || opp >= p->islands[island].n_opps || idle_uw < 0 || busy_uw < idle_uw)
		return -1;
	p->islands[island].opps[opp].busy_uw = busy_uw;
	p->islands[island].opps[opp].idle_uw = idle_uw;
	return 0;
}

int pd_platform_set_base_uw(pd_platform *p, int64_t base_uw)
{
	if (base_uw < 0)
		return -1;
	p->base_uw = base_uw;
	return 0;
}

double pd_platform_core_capacity(const pd_platform *p)
{
	double u = p->dl.max_util_per_cpu;
	if (p->dl.has_fair_server)
		u -= (double)p->dl.fair_runtime_ns / (double)p->dl.fair_period_ns;
	return u;
}

int pd_platform_set_job_overhead(pd_platform *p, long island, int64_t ns)
{
	if (ns < 0 || ns > PD_JOB_OVERHEAD_MAX_NS || island < -1 || (island >= 0 && (size_t)island >= p->n_islands))
		return -1;
	if (island < 0) {
		p->dl.has_job_overhead = true;
		p->dl.job_overhead_ns = ns;
	} else {
		p->islands[island].has_job_overhead = true;
		p->islands[island].job_overhead_ns = ns;
	}
	return 0;
}

/* A 6-place decimal, as the parser accepts: the file written reads back to the same value. */
int pd_platform_set_background(pd_platform *p, size_t island, double util)
{
	if (island >= p->n_islands || !(util >= 0) || util > (double)p->islands[island].n_cpus)
		return -1;
	p->islands[island].background_util = nearbyint(util * (double)PD_CAPACITY_SCALE) / (double)PD_CAPACITY_SCALE;
	return 0;
}

/* The margin must stay a 6-place decimal in [0, 1) (the parser's rule): the budget law uses it
 * exactly and the writer must reproduce it. */
int pd_platform_set_fair_server(pd_platform *p, int64_t runtime_ns, int64_t period_ns)
{
	if (!(runtime_ns > 0 && runtime_ns < period_ns) ||
	    !(p->dl.max_util_per_cpu - (double)runtime_ns / (double)period_ns > 0))
		return -1;
	p->dl.has_fair_server = true;
	p->dl.fair_runtime_ns = runtime_ns;
	p->dl.fair_period_ns = period_ns;
	return 0;
}

int pd_platform_set_budget_margin(pd_platform *p, double margin)
{
	if (!(margin >= 0.0 && margin < 1.0))
		return -1;
	double micro = margin * (double)PD_CAPACITY_SCALE;
	if (fabs(micro - nearbyint(micro)) > 1e-6 * fmax(1.0, micro))
		return -1;
	p->dl.has_budget_margin = true;
	p->dl.budget_margin = margin;
	return 0;
}
