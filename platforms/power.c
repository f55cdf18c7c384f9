/* SPDX-License-Identifier: MIT */
/*
 * The power model of docs/MODEL.md "Average power": WCET scaling with frequency and capacity, accelerator latency scaling,
 * island power.
 *
 * WCET law:   C_i(k, f) = C_fixed + (C - C_fixed) * f_ref / (kappa_k * f)
 *
 * A WCET feeds admission control (runtime) and end-to-end bounds, so it must never come out
 * optimistic, not even by one nanosecond through binary floating point. It is therefore computed
 * exactly in integers (pd_muldiv_ceil) and rounded up: kappa is a decimal with at most 6 places (the parser
 * enforces it), i.e. kappa = kappa_micro / 10^6, and
 *
 *     C_i = C_fixed + ceil( (C - C_fixed) * f_ref * 10^6 / (kappa_micro * f) ).
 *
 * A capacity that is not such a decimal (a caller computed it) is rounded *down* to millionths,
 * which lengthens the WCET, never shortens it.
 */
#include "platforms/platform_impl.h"

#include <math.h>

/* v in millionths, exact when v is a 6-place decimal, else rounded down (up when round_up). */
static int64_t decimal_micro(double v, bool round_up)
{
	double m = v * (double)PD_CAPACITY_SCALE;
	double r = nearbyint(m);
	if (fabs(m - r) <= 1e-6 * fmax(1.0, m))
		return (int64_t)r;
	return (int64_t)(round_up ? ceil(m) : floor(m));
}

/* kappa in millionths, rounded down unless it is already a 6-place decimal; 0 when invalid. */
static int64_t capacity_micro(double capacity)
{
	if (!(capacity > 0.0) || capacity > 1e9)
		return 0;
	return decimal_micro(capacity, false);
}

int64_t pd_platform_wcet_scale(int64_t wcet_ns, int64_t wcet_fixed_ns, int64_t ref_khz, double capacity, int64_t f_khz)
{
	int64_t kmicro = capacity_micro(capacity);
	if (wcet_ns < 0 || wcet_fixed_ns < 0 || wcet_fixed_ns > wcet_ns || ref_khz <= 0 || f_khz <= 0 ||
	    kmicro <= 0)
		return -1;
	int64_t scaled = pd_muldiv_ceil((uint64_t)(wcet_ns - wcet_fixed_ns), (uint64_t)ref_khz, PD_CAPACITY_SCALE, (uint64_t)kmicro, (uint64_t)f_khz);
	if (scaled > INT64_MAX - wcet_fixed_ns)
		return INT64_MAX;
	return wcet_fixed_ns + scaled;
}

int64_t pd_platform_wcet_at(const pd_platform *p, const struct pd_task *t, size_t island, size_t opp)
{
	if (island >= p->n_islands || opp >= p->islands[island].n_opps)
		return -1;
	const struct pd_island *k = &p->islands[island];
	return pd_platform_wcet_scale(t->wcet_ns, t->wcet_fixed_ns, p->ref_khz, k->capacity, k->opps[opp].freq_khz);
}

/* ------------------------------------------------------------------ overhead and budget */
/*
 * D = C + o_k is what a job really executes as the kernel charges it; Q = ceil(D (1 + m)) is its
 * reservation. The margin is taken as the 6-place decimal of the file (a computed one is rounded
 * up, which only lengthens Q), so Q = D + ceil(D * m_micro / 10^6) exactly in integers: like the
 * WCET, a budget must never come out short by 1 ns through binary floating point.
 */
int64_t pd_platform_job_overhead_ns(const pd_platform *p, size_t island)
{
	if (island >= p->n_islands)
		return -1;
	if (p->islands[island].has_job_overhead)
		return p->islands[island].job_overhead_ns;
	return p->dl.has_job_overhead ? p->dl.job_overhead_ns : PD_JOB_OVERHEAD_DEFAULT_NS;
}

int64_t pd_platform_budget_runtime(int64_t demand_ns, double margin)
{
	if (demand_ns < 0)
		return -1;
	if (!(margin > 0.0))
		return demand_ns;
	int64_t mmicro = decimal_micro(fmin(margin, 1e6), true);
	int64_t extra = pd_muldiv_ceil((uint64_t)demand_ns, (uint64_t)mmicro, 1, PD_CAPACITY_SCALE, 1);
	return extra > INT64_MAX - demand_ns ? INT64_MAX : demand_ns + extra;
}

int pd_platform_budget_of(const pd_platform *p, size_t island, int64_t wcet_ns, struct pd_budget *b)
{
	*b = (struct pd_budget){0};
	int64_t o = pd_platform_job_overhead_ns(p, island);
	if (o < 0 || wcet_ns < 0)
		return -1;
	b->wcet_ns = wcet_ns;
	b->overhead_ns = o;
	b->demand_ns = wcet_ns > INT64_MAX - o ? INT64_MAX : wcet_ns + o;
	b->runtime_ns = pd_platform_budget_runtime(b->demand_ns, p->dl.has_budget_margin ? p->dl.budget_margin : 0.0);
	return 0;
}

int pd_platform_budget_at(const pd_platform *p, const struct pd_task *t, size_t island, size_t opp, struct pd_budget *b)
{
	int64_t c = pd_platform_wcet_at(p, t, island, opp);
	if (c < 0) {
		*b = (struct pd_budget){0};
		return -1;
	}
	return pd_platform_budget_of(p, island, c, b);
}

/* Accelerator latencies in DAG files are measured at the top OPP; the whole latency scales with
 * f_top / f (the platform has no finer model for GPUs). An FPGA runs its own fixed clocks. */
int64_t pd_platform_latency_at(const struct pd_accelerator *a, int64_t latency_top_ns, size_t opp)
{
	if (latency_top_ns < 0)
		return -1;
	if (a->kind != PD_ACCEL_GPU || a->n_opps == 0)
		return latency_top_ns;
	size_t j = opp < a->n_opps ? opp : a->n_opps - 1;
	int64_t f_top = a->opps[a->n_opps - 1].freq_khz, f = a->opps[j].freq_khz;
	if (f <= 0 || f_top <= 0)
		return -1;
	return pd_muldiv_ceil((uint64_t)latency_top_ns, (uint64_t)f_top, 1, (uint64_t)f, 1);
}

double pd_platform_island_power_w(const struct pd_island *isl, size_t opp, double sum_util)
{
	if (opp >= isl->n_opps)
		opp = isl->n_opps - 1;
	const struct pd_opp *o = &isl->opps[opp];
	double idle_w = (double)o->idle_uw * 1e-6, delta_w = (double)(o->busy_uw - o->idle_uw) * 1e-6;
	return (double)isl->n_cpus * idle_w + delta_w * sum_util;
}

double pd_platform_island_background_w(const struct pd_island *isl, size_t opp)
{
	if (isl->background_util <= 0)
		return 0;
	if (opp >= isl->n_opps)
		opp = isl->n_opps - 1;
	const struct pd_opp *o = &isl->opps[opp];
	return (double)(o->busy_uw - o->idle_uw) * 1e-6 * isl->background_util;
}

double pd_platform_accel_power_w(const struct pd_accelerator *a, size_t opp, double sum_util)
{
	if (a->kind != PD_ACCEL_GPU || a->n_opps == 0)
		return (double)a->idle_uw * 1e-6;
	const struct pd_opp *o = &a->opps[opp < a->n_opps ? opp : a->n_opps - 1];
	return (double)o->idle_uw * 1e-6 + (double)(o->busy_uw - o->idle_uw) * 1e-6 * sum_util;
}

long pd_platform_opp_find(const struct pd_opp *opps, size_t n, int64_t freq_khz)
{
	for (size_t j = 0; j < n; j++)
		if (opps[j].freq_khz == freq_khz)
			return (long)j;
	return -1;
}
