/* SPDX-License-Identifier: MIT */
/*
 * The power model evaluated at what the board really did ("model error at the measured
 * utilisation", docs/REPORTS.md): the plan's power table at the OPP read back on the board and at
 * the busy fraction measured from the job records, next to the measured rail power. When the plan's
 * prediction is off but this one is right, the table is right and the utilisation differed from the
 * plan (work faster or slower than its WCET, overheads); when this one is off too, the table is wrong.
 * `powerdag refit` fits the table from the same two measurements (reports/refit.c).
 *
 *   busy fraction  of an island (accelerator) over [from, to): sum over the jobs that ran there of
 *                  their execution time (thread CPU time; end - start on an accelerator), each
 *                  prorated by the part of its [start, end] inside the window, divided by to - from.
 *                  In cores' worth: 1.5 = one and a half cores busy on average, like sum C/T.
 *   busy all       of an island, when the log has BUSY records: the same over the CPU time of
 *                  everything that ran on the island's sampled CPUs (the agent's sampler and writer,
 *                  iiod, sshd, interrupts: the rail measures them too), each record prorated by the
 *                  part of its (from, t] inside the window. The island's model term is evaluated at
 *                  it when known: the jobs alone would charge the other software's power to the
 *                  table. Sampled CPUs: the header's busy_cpus (the plan's CPUs and every online CPU
 *                  of the platform's islands), or, for an agent that did not list them, the CPUs
 *                  where the plan places a task; a CPU of the island outside them counts as idle.
 *   measured OPP   the frequency every readable snapshot agrees on when it is in the table, else the
 *                  plan's OPP (no cpufreq on the board, or it changed during the run).
 */
#include "reports/run_model_impl.h"

#include <math.h>
#include <string.h>

/* Part of a job's execution inside [from, to): prorated by wall-clock overlap. */
static double exec_in_window(const struct rpt_job *j, int64_t from, int64_t to)
{
	if (j->exec_ns <= 0)
		return 0;
	if (j->end_ns <= j->start_ns)
		return j->start_ns >= from && j->start_ns < to ? (double)j->exec_ns : 0;
	int64_t lo = j->start_ns > from ? j->start_ns : from, hi = j->end_ns < to ? j->end_ns : to;
	if (hi <= lo)
		return 0;
	return (double)j->exec_ns * (double)(hi - lo) / (double)(j->end_ns - j->start_ns);
}

/* Island (accel false) or accelerator a job ran on; -1 unknown. The CPU it ended on decides for a CPU
 * job (that is where its time went); the plan's placement otherwise. */
static long job_component(const struct rpt_run *r, const struct rpt_job *j, bool accel)
{
	const pd_platform *pf = pd_plan_platform(r->plan);
	const struct pd_plan_task *pt = pd_plan_task_c(r->plan, j->task);
	if (!accel) {
		if (j->cpu >= 0)
			return pd_platform_island_of_cpu(pf, j->cpu);
		return pt->place.kind == PD_PLACE_CPU ? (long)pt->place.island : -1;
	}
	return j->cpu < 0 && pt->place.kind != PD_PLACE_CPU ? (long)pt->place.accel : -1;
}

double rpt_busy_fraction(const struct rpt_run *r, bool accel, size_t idx, int64_t from, int64_t to)
{
	if (to <= from)
		return NAN;
	size_t nt = pd_dags_task_count(pd_plan_dags(r->plan));
	double busy = 0;
	for (size_t i = 0; i < r->n_jobs; i++) {
		const struct rpt_job *j = &r->jobs[i];
		if (j->task < nt && !j->failed && job_component(r, j, accel) == (long)idx)
			busy += exec_in_window(j, from, to);
	}
	return busy / (double)(to - from);
}

/* Part of a BUSY record inside [from, to): prorated by the overlap of its interval (from, to]. */
static double busy_in_window(const struct rpt_busy *b, int64_t from, int64_t to)
{
	if (b->to_ns <= b->from_ns)
		return b->to_ns >= from && b->to_ns < to ? (double)b->busy_ns : 0;
	int64_t lo = b->from_ns > from ? b->from_ns : from, hi = b->to_ns < to ? b->to_ns : to;
	if (hi <= lo)
		return 0;
	return (double)b->busy_ns * (double)(hi - lo) / (double)(b->to_ns - b->from_ns);
}

/* Whether cpu is on island k (pd_platform_island_of_cpu decides, as for the jobs) and its busy time
 * was sampled: listed in the header's busy_cpus, or, without that list, a CPU of the plan. */
static bool sampled_cpu_on(const struct rpt_run *r, int cpu, size_t k)
{
	const pd_dagset *ds = pd_plan_dags(r->plan);
	if (pd_platform_island_of_cpu(pd_plan_platform(r->plan), cpu) != (long)k)
		return false;
	if (r->busy_cpus) {
		for (size_t i = 0; i < r->n_busy_cpus; i++)
			if (r->busy_cpus[i] == cpu)
				return true;
		return false;
	}
	for (size_t i = 0; i < pd_dags_task_count(ds); i++) {
		const struct pd_plan_task *pt = pd_plan_task_c(r->plan, i);
		if (pt->place.kind == PD_PLACE_CPU && pt->place.cpu == cpu)
			return true;
	}
	return false;
}

double rpt_busy_all_fraction(const struct rpt_run *r, size_t k, int64_t from, int64_t to, size_t *n_cpus)
{
	if (n_cpus)
		*n_cpus = 0;
	if (r->busy_period_ns <= 0 || !r->plan || to <= from)
		return NAN;
	const struct pd_island *isl = pd_platform_island(pd_plan_platform(r->plan), k);
	size_t n = 0;
	for (size_t c = 0; c < isl->n_cpus; c++) /* the platform lists an island's CPUs once each */
		n += sampled_cpu_on(r, isl->cpus[c], k);
	if (n_cpus)
		*n_cpus = n;
	if (n == 0)
		return NAN;
	double busy = 0;
	for (size_t i = 0; i < r->n_busys; i++)
		if (sampled_cpu_on(r, r->busys[i].cpu, k))
			busy += busy_in_window(&r->busys[i], from, to);
	return busy / (double)(to - from);
}

/* Busy fraction an island's model term is evaluated at: everything's when known, else the jobs'. */
static double island_busy(const struct rpt_run *r, size_t k, int64_t from, int64_t to, struct rpt_busy_meas *b)
{
	struct rpt_busy_meas own;
	if (!b)
		b = &own;
	b->jobs = rpt_busy_fraction(r, false, k, from, to);
	b->all = rpt_busy_all_fraction(r, k, from, to, &b->cpus);
	b->used_all = !isnan(b->all);
	return b->used_all ? b->all : b->jobs;
}

/* FPGA: sum power_i * (busy fraction of task i) over the tasks placed on it, in W. */
static double fpga_busy_w(const struct rpt_run *r, size_t a, int64_t from, int64_t to)
{
	const pd_dagset *ds = pd_plan_dags(r->plan);
	double w = 0;
	for (size_t i = 0; i < r->n_jobs; i++) {
		const struct rpt_job *j = &r->jobs[i];
		if (j->task >= pd_dags_task_count(ds) || j->failed || job_component(r, j, true) != (long)a)
			continue;
		const struct pd_plan_task *pt = pd_plan_task_c(r->plan, j->task);
		int64_t p = pd_dags_task(ds, j->task)->impls[pt->place.impl].power_uw;
		if (p > 0)
			w += (double)p * 1e-6 * exec_in_window(j, from, to) / (double)(to - from);
	}
	return w;
}

size_t rpt_measured_opp(const struct rpt_run *r, bool accel, size_t idx, bool *read_back)
{
	const pd_platform *pf = pd_plan_platform(r->plan);
	const char *name = accel ? pd_platform_accel(pf, idx)->name : pd_platform_island(pf, idx)->name;
	size_t planned = accel ? pd_plan_accel_opp(r->plan, idx) : pd_plan_island_opp(r->plan, idx);
	if (read_back)
		*read_back = false;
	for (size_t i = 0; i < r->n_freqs; i++) {
		const struct rpt_freq *f = &r->freqs[i];
		if (f->accel != accel || strcmp(f->name, name) != 0 || f->max_khz < 0 || f->min_khz != f->max_khz)
			continue;
		long o = accel ? pd_platform_opp_find(pd_platform_accel(pf, idx)->opps, pd_platform_accel(pf, idx)->n_opps, f->max_khz)
			       : pd_platform_opp_find(pd_platform_island(pf, idx)->opps, pd_platform_island(pf, idx)->n_opps, f->max_khz);
		if (o >= 0) {
			if (read_back)
				*read_back = true;
			return (size_t)o;
		}
	}
	return planned;
}

static double accel_model_w(const struct rpt_run *r, size_t a, int64_t from, int64_t to, double *busy)
{
	const struct pd_accelerator *ac = pd_platform_accel(pd_plan_platform(r->plan), a);
	*busy = rpt_busy_fraction(r, true, a, from, to);
	if (ac->kind == PD_ACCEL_GPU)
		return pd_platform_accel_power_w(ac, rpt_measured_opp(r, true, a, NULL), *busy);
	return (double)ac->idle_uw * 1e-6 + fpga_busy_w(r, a, from, to);
}

static bool measures_everything(const char *m)
{
	return m && (strcmp(m, "board") == 0 || strcmp(m, "total") == 0 || strcmp(m, "system") == 0);
}

double rpt_island_model_busy(const struct rpt_run *r, size_t k, int64_t from, int64_t to)
{
	return island_busy(r, k, from, to, NULL);
}

double rpt_model_total_at_measured_w(const struct rpt_run *r, int64_t from, int64_t to)
{
	if (to <= from)
		return NAN;
	const pd_platform *pf = pd_plan_platform(r->plan);
	double w = (double)pd_platform_base_uw(pf) * 1e-6, busy;
	struct rpt_busy_meas b;
	for (size_t k = 0; k < pd_platform_island_count(pf); k++)
		w += pd_platform_island_power_w(pd_platform_island(pf, k), rpt_measured_opp(r, false, k, NULL),
				       island_busy(r, k, from, to, &b));
	for (size_t a = 0; a < pd_platform_accel_count(pf); a++)
		w += accel_model_w(r, a, from, to, &busy);
	return w;
}

double rpt_model_at_measured_w(const struct rpt_run *r, const char *measures, int64_t from, int64_t to,
			       struct rpt_busy_meas *b)
{
	struct rpt_busy_meas own;
	if (!b)
		b = &own;
	*b = (struct rpt_busy_meas){NAN, NAN, 0, false};
	if (!r->plan || !measures || to <= from)
		return NAN;
	const pd_platform *pf = pd_plan_platform(r->plan);
	if (measures_everything(measures))
		return rpt_model_total_at_measured_w(r, from, to);
	if (strcmp(measures, "base") == 0)
		return (double)pd_platform_base_uw(pf) * 1e-6;
	long k = pd_platform_find_island(pf, measures);
	if (k >= 0) {
		double u = island_busy(r, (size_t)k, from, to, b);
		return pd_platform_island_power_w(pd_platform_island(pf, (size_t)k), rpt_measured_opp(r, false, (size_t)k, NULL), u);
	}
	long a = pd_platform_find_accel(pf, measures);
	return a >= 0 ? accel_model_w(r, (size_t)a, from, to, &b->jobs) : NAN;
}

double rpt_planned_busy(const struct rpt_run *r, const char *measures)
{
	const pd_platform *pf = pd_plan_platform(r->plan);
	const pd_dagset *ds = pd_plan_dags(r->plan);
	long k = measures ? pd_platform_find_island(pf, measures) : -1;
	long a = measures && k < 0 ? pd_platform_find_accel(pf, measures) : -1;
	if (k < 0 && a < 0)
		return NAN;
	double u = 0;
	for (size_t i = 0; i < pd_dags_task_count(ds); i++) {
		const struct pd_plan_task *pt = pd_plan_task_c(r->plan, i);
		bool here = k >= 0 ? pt->place.kind == PD_PLACE_CPU && (long)pt->place.island == k
				   : pt->place.kind != PD_PLACE_CPU && (long)pt->place.accel == a;
		if (here)
			u += (double)pt->wcet_ns / (double)pd_dags_dag(ds, pd_dags_task(ds, i)->dag)->period_ns;
	}
	return u;
}
