/* SPDX-License-Identifier: MIT */
/*
 * The numbers of a report, computed once from the run model (run_model_impl.h) and printed by every
 * writer. Definitions (also in docs/REPORTS.md):
 *
 *   rail energy   trapezoids between consecutive samples: sum (P_i + P_i+1) / 2 * (t_i+1 - t_i);
 *                 a gap is bridged by a straight line (the best guess without data), and counted;
 *   rail average  energy / (t_last - t_first): time-weighted, so a burst of samples does not weigh
 *                 more than a quiet stretch; with one sample, that sample (energy 0);
 *   total         the rail measuring "board" / "total" / "system" when the platform has one, else the
 *                 sum of the rails, each held at its last sample, on the union of their timestamps
 *                 (a rail without any sample is left out of the sum);
 *   response      R = finish of the last sink - release of the sources; a miss is R > D, or an
 *                 instance that never finished (logged so by the agent, or inferred from a truncated
 *                 log, runlog_import.c);
 *   percentiles   nearest rank over finished instances: sorted[ceil(p n) - 1];
 *   slack         (D - R) / D, the worst (smallest) over finished instances;
 *   gap           a gap the agent logged (a GAP record: the rail could not be read, "unreadable"), or
 *                 an interval between two samples of a rail longer than twice the nominal sampling
 *                 period (the median interval when the log does not state it) that no GAP record
 *                 covers ("late": every read succeeded, the sampler ticked late). A late interval
 *                 that every rail with samples shares is one tick of the sampler and is listed once,
 *                 for all rails.
 */
#include "reports/run_model_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t rpt_percentile(const int64_t *sorted, size_t n, double p)
{
	if (n == 0)
		return -1;
	double rank = ceil(p * (double)n);
	size_t k = rank < 1 ? 0 : (size_t)rank - 1;
	return sorted[k < n ? k : n - 1];
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* ---------------------------------------------------------------- power */
static void series_stats(const int64_t *t_ns, const int64_t *uw, size_t n, double *avg_w, double *peak_w,
			 double *energy_j)
{
	*avg_w = *peak_w = *energy_j = NAN;
	if (n == 0)
		return;
	double e_uw_ns = 0, peak = (double)uw[0];
	for (size_t i = 0; i + 1 < n; i++)
		e_uw_ns += ((double)uw[i] + (double)uw[i + 1]) / 2.0 * (double)(t_ns[i + 1] - t_ns[i]);
	for (size_t i = 1; i < n; i++)
		if ((double)uw[i] > peak)
			peak = (double)uw[i];
	*peak_w = peak * 1e-6;
	*energy_j = e_uw_ns * 1e-15;
	int64_t span = t_ns[n - 1] - t_ns[0];
	*avg_w = span > 0 ? e_uw_ns / (double)span * 1e-6 : (double)uw[0] * 1e-6;
}

static bool measures_everything(const char *m)
{
	return m && (strcmp(m, "board") == 0 || strcmp(m, "total") == 0 || strcmp(m, "system") == 0);
}

/* Sum of the rails held at their last sample, at every timestamp of any rail once all have started. */
int rpt_total_series(const struct rpt_run *r, int64_t **t_out, int64_t **uw_out, size_t *n_out)
{
	size_t cap = 0;
	for (size_t k = 0; k < r->n_rails; k++)
		cap += r->rails[k].n;
	*n_out = 0;
	*t_out = malloc((cap + 1) * sizeof(int64_t));
	*uw_out = malloc((cap + 1) * sizeof(int64_t));
	size_t *pos = calloc(r->n_rails + 1, sizeof(size_t));
	if (!*t_out || !*uw_out || !pos) {
		free(pos);
		return -1;
	}
	for (;;) {
		/* next timestamp: the smallest unconsumed sample over all rails */
		int64_t t = INT64_MAX;
		for (size_t k = 0; k < r->n_rails; k++)
			if (pos[k] < r->rails[k].n && r->rails[k].t_ns[pos[k]] < t)
				t = r->rails[k].t_ns[pos[k]];
		if (t == INT64_MAX)
			break;
		bool all_started = true;
		int64_t sum = 0;
		for (size_t k = 0; k < r->n_rails; k++) {
			const struct rpt_rail *rl = &r->rails[k];
			if (rl->n == 0) /* never read: left out of the sum (its row in the report says so) */
				continue;
			while (pos[k] < rl->n && rl->t_ns[pos[k]] <= t)
				pos[k]++;
			if (pos[k] == 0)
				all_started = false;
			else
				sum += rl->uw[pos[k] - 1];
		}
		if (all_started) {
			(*t_out)[*n_out] = t;
			(*uw_out)[*n_out] = sum;
			(*n_out)++;
		}
	}
	free(pos);
	return 0;
}

/* Model power of the component a rail measures (docs/MODEL.md "Average power" terms of that component); NAN if unknown. */
static double component_predicted_w(const pd_plan *plan, const char *measures)
{
	if (!plan || !measures)
		return NAN;
	const struct pd_plan_meta *m = pd_plan_meta_c(plan);
	if (measures_everything(measures))
		return m->power_uw > 0 ? (double)m->power_uw * 1e-6 : NAN;
	const pd_platform *pf = pd_plan_platform(plan);
	if (strcmp(measures, "base") == 0) /* the rest of the board: the model's constant base power */
		return (double)pd_platform_base_uw(pf) * 1e-6;
	const pd_dagset *ds = pd_plan_dags(plan);
	long k = pd_platform_find_island(pf, measures);
	long a = k < 0 ? pd_platform_find_accel(pf, measures) : -1;
	if (k < 0 && a < 0)
		return NAN;
	double util = 0, accel_w = 0;
	for (size_t i = 0; i < pd_dags_task_count(ds); i++) {
		const struct pd_plan_task *pt = pd_plan_task_c(plan, i);
		const struct pd_task *t = pd_dags_task(ds, i);
		/* busy fraction of the model: a CPU job executes its work plus the per-job overhead (D/T,
		 * docs/MODEL.md); plans that predate the overhead record none */
		int64_t busy = pt->wcet_ns + (pt->place.kind == PD_PLACE_CPU && pt->overhead_ns > 0 ? pt->overhead_ns : 0);
		double frac = (double)busy / (double)pd_dags_dag(ds, t->dag)->period_ns;
		if (k >= 0 && pt->place.kind == PD_PLACE_CPU && (long)pt->place.island == k)
			util += frac;
		if (a >= 0 && pt->place.kind != PD_PLACE_CPU && (long)pt->place.accel == a) {
			const struct pd_accelerator *ac = pd_platform_accel(pf, (size_t)a);
			if (ac->kind == PD_ACCEL_GPU) {
				const struct pd_opp *o = &ac->opps[pd_plan_accel_opp(plan, (size_t)a)];
				accel_w += (double)(o->busy_uw - o->idle_uw) * 1e-6 * frac;
			} else {
				int64_t p = t->impls[pt->place.impl].power_uw;
				accel_w += (p > 0 ? (double)p * 1e-6 : 0) * frac;
			}
		}
	}
	if (k >= 0) { /* with the island's background, as the optimizer predicted it */
		const struct pd_island *isl = pd_platform_island(pf, (size_t)k);
		size_t opp = pd_plan_island_opp(plan, (size_t)k);
		return pd_platform_island_power_w(isl, opp, util) + pd_platform_island_background_w(isl, opp);
	}
	const struct pd_accelerator *ac = pd_platform_accel(pf, (size_t)a);
	if (ac->kind == PD_ACCEL_GPU)
		return (double)ac->opps[pd_plan_accel_opp(plan, (size_t)a)].idle_uw * 1e-6 + accel_w;
	return (double)ac->idle_uw * 1e-6 + accel_w;
}

/* The whole model at the measured busy fractions over the span the total covers: the board rail's
 * samples, or from the first to the last sample of any rail (docs/REPORTS.md). */
static void model_at_measured(const struct rpt_run *r, struct rpt_stats *s, const struct rpt_rail_stats *whole)
{
	s->model_at_measured_w = s->model_error_pct = NAN;
	if (!s->has_power)
		return;
	int64_t from = INT64_MAX, to = INT64_MIN;
	for (size_t k = 0; k < r->n_rails; k++) {
		const struct rpt_rail *rl = &r->rails[k];
		if (rl->n == 0 || (whole && strcmp(rl->name, whole->name) != 0))
			continue;
		from = rl->t_ns[0] < from ? rl->t_ns[0] : from;
		to = rl->t_ns[rl->n - 1] > to ? rl->t_ns[rl->n - 1] : to;
	}
	if (to > from)
		s->model_at_measured_w = rpt_model_total_at_measured_w(r, from, to);
	if (s->model_at_measured_w > 0)
		s->model_error_pct = (s->power_w - s->model_at_measured_w) / s->model_at_measured_w * 100.0;
}

static int power_stats(const struct rpt_run *r, struct rpt_stats *s)
{
	s->n_rails = r->n_rails;
	s->rails = calloc(r->n_rails + 1, sizeof(*s->rails));
	if (!s->rails)
		return -1;
	const struct rpt_rail_stats *whole = NULL;
	for (size_t k = 0; k < r->n_rails; k++) {
		const struct rpt_rail *rl = &r->rails[k];
		struct rpt_rail_stats *rs = &s->rails[k];
		rs->name = rl->name;
		rs->measures = rl->measures;
		rs->samples = rl->n;
		series_stats(rl->t_ns, rl->uw, rl->n, &rs->avg_w, &rs->peak_w, &rs->energy_j);
		rs->predicted_w = component_predicted_w(r->plan, rl->measures);
		rs->planned_busy = rpt_planned_busy(r, rl->measures);
		long isl = rl->measures ? pd_platform_find_island(pd_plan_platform(r->plan), rl->measures) : -1;
		rs->plan_background = isl >= 0 ? pd_platform_island(pd_plan_platform(r->plan), (size_t)isl)->background_util : NAN;
		rs->model_at_measured_w = rs->measured_busy = rs->model_error_pct = NAN;
		rs->measured_busy_all = rs->other_busy = NAN;
		if (rl->n >= 2) {
			struct rpt_busy_meas b;
			rs->model_at_measured_w = rpt_model_at_measured_w(r, rl->measures, rl->t_ns[0], rl->t_ns[rl->n - 1], &b);
			rs->measured_busy = b.jobs;
			rs->measured_busy_all = b.all;
			rs->other_busy = b.all - b.jobs; /* NAN when either is */
			rs->busy_cpus = b.cpus;
			rs->model_at_busy_all = b.used_all;
		}
		if (rs->model_at_measured_w > 0)
			rs->model_error_pct = (rs->avg_w - rs->model_at_measured_w) / rs->model_at_measured_w * 100.0;
		if (!whole && rl->n && measures_everything(rl->measures))
			whole = rs;
	}
	s->power_w = s->peak_w = s->energy_j = NAN;
	if (whole) {
		s->total_from = whole->name;
		s->power_w = whole->avg_w;
		s->peak_w = whole->peak_w;
		s->energy_j = whole->energy_j;
	} else if (r->n_rails) {
		int64_t *t, *uw;
		size_t n;
		if (rpt_total_series(r, &t, &uw, &n) < 0) {
			free(t);
			free(uw);
			return -1;
		}
		s->total_from = "sum of rails";
		series_stats(t, uw, n, &s->power_w, &s->peak_w, &s->energy_j);
		free(t);
		free(uw);
	}
	s->has_power = !isnan(s->power_w);
	model_at_measured(r, s, whole);
	return 0;
}

/* ---------------------------------------------------------------- gaps */
static int64_t median_interval(const struct rpt_rail *rl)
{
	if (rl->n < 2)
		return 0;
	int64_t *d = malloc((rl->n - 1) * sizeof(int64_t));
	if (!d)
		return 0;
	for (size_t i = 0; i + 1 < rl->n; i++)
		d[i] = rl->t_ns[i + 1] - rl->t_ns[i];
	qsort(d, rl->n - 1, sizeof(int64_t), cmp_i64);
	int64_t m = d[(rl->n - 1) / 2];
	free(d);
	return m;
}

static bool covered_by_logged(const struct rpt_run *r, const char *rail, int64_t from, int64_t to)
{
	for (size_t g = 0; g < r->n_gaps; g++) {
		const struct rpt_gap *lg = &r->gaps[g];
		if ((!lg->rail || strcmp(lg->rail, rail) == 0) && lg->from_ns < to && from < lg->to_ns)
			return true;
	}
	return false;
}

static int push_gap(struct rpt_stats *s, size_t *cap, struct rpt_gap g)
{
	if (s->n_gaps == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct rpt_gap *p = realloc(s->gaps, c * sizeof(*p));
		if (!p)
			return -1;
		s->gaps = p;
		*cap = c;
	}
	s->gaps[s->n_gaps++] = g;
	/* logged gaps may overlap (and each spans at most 2^61 ns, run log limits): saturate the totals */
	int64_t len = g.to_ns > g.from_ns ? g.to_ns - g.from_ns : 0, *tot = g.late ? &s->late_total_ns : &s->gap_total_ns;
	*tot = len > INT64_MAX - *tot ? INT64_MAX : *tot + len;
	s->n_late_gaps += g.late;
	return 0;
}

static int64_t rail_period(const struct rpt_run *r, const struct rpt_rail *rl)
{
	return r->sample_period_ns > 0 ? r->sample_period_ns : median_interval(rl);
}

/* Whether rail rl has two consecutive samples at exactly a and b (its timestamps are sorted). */
static bool has_interval(const struct rpt_rail *rl, int64_t a, int64_t b)
{
	size_t lo = 0, hi = rl->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rl->t_ns[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo + 1 < rl->n && rl->t_ns[lo] == a && rl->t_ns[lo + 1] == b;
}

/* A late interval every rail with samples shares: one late tick of the sampler, listed once. */
static bool shared_by_all(const struct rpt_run *r, int64_t a, int64_t b)
{
	for (size_t k = 0; k < r->n_rails; k++)
		if (r->rails[k].n > 0 && !has_interval(&r->rails[k], a, b))
			return false;
	return true;
}

static int late_gaps(const struct rpt_run *r, struct rpt_stats *s, size_t *cap)
{
	size_t first = r->n_rails; /* the first rail with samples lists the shared ticks */
	for (size_t k = 0; k < r->n_rails; k++) {
		const struct rpt_rail *rl = &r->rails[k];
		int64_t period = rail_period(r, rl);
		if (rl->n > 0 && first == r->n_rails)
			first = k;
		if (period <= 0)
			continue;
		for (size_t i = 0; i + 1 < rl->n; i++) {
			int64_t a = rl->t_ns[i], b = rl->t_ns[i + 1];
			if (b - a <= 2 * period || covered_by_logged(r, rl->name, a, b))
				continue;
			bool shared = shared_by_all(r, a, b);
			if (shared && k != first)
				continue; /* listed with the first rail */
			if (push_gap(s, cap, (struct rpt_gap){shared && r->n_rails > 1 ? NULL : rl->name, a, b, true}) < 0)
				return -1;
		}
	}
	return 0;
}

static int gap_stats(const struct rpt_run *r, struct rpt_stats *s)
{
	size_t cap = 0;
	for (size_t g = 0; g < r->n_gaps; g++) {
		struct rpt_gap lg = r->gaps[g];
		lg.late = false;
		if (push_gap(s, &cap, lg) < 0)
			return -1;
	}
	return late_gaps(r, s, &cap);
}

/* ---------------------------------------------------------------- DAG instances */
static const struct rpt_sim_dag *sim_dag(const struct rpt_run *r, const char *name)
{
	for (size_t i = 0; i < r->n_sim_dags; i++)
		if (r->sim_dags[i].name && strcmp(r->sim_dags[i].name, name) == 0)
			return &r->sim_dags[i];
	return NULL;
}

static int dag_stats(const struct rpt_run *r, size_t g, struct rpt_dag_stats *ds)
{
	const struct pd_dag *dag = pd_dags_dag(pd_plan_dags(r->plan), g);
	ds->name = dag->name;
	ds->deadline_ns = dag->deadline_ns;
	ds->period_ns = dag->period_ns;
	ds->responses_ns = malloc((r->n_insts + 1) * sizeof(int64_t));
	if (!ds->responses_ns)
		return -1;
	for (size_t i = 0; i < r->n_insts; i++) {
		const struct rpt_inst *in = &r->insts[i];
		if (in->dag != g)
			continue;
		int64_t resp = rpt_inst_response_ns(in);
		ds->instances++;
		ds->misses += rpt_inst_missed(in, dag->deadline_ns);
		if (resp < 0) {
			/* unfinished: the model holds only those whose deadline passed (agent's END flush, or
			 * inferred from a truncated log, runlog_import.c), so each is a miss */
			ds->unfinished++;
			continue;
		}
		ds->responses_ns[ds->n_responses++] = resp;
	}
	qsort(ds->responses_ns, ds->n_responses, sizeof(int64_t), cmp_i64);
	ds->miss_ratio = ds->instances ? (double)ds->misses / (double)ds->instances : 0;
	ds->p50_ns = rpt_percentile(ds->responses_ns, ds->n_responses, 0.50);
	ds->p99_ns = rpt_percentile(ds->responses_ns, ds->n_responses, 0.99);
	ds->max_ns = ds->n_responses ? ds->responses_ns[ds->n_responses - 1] : -1;
	/* the largest response has the smallest slack */
	ds->worst_slack = ds->n_responses ? (double)(dag->deadline_ns - ds->max_ns) / (double)dag->deadline_ns : NAN;
	const struct rpt_sim_dag *sd = sim_dag(r, dag->name);
	ds->sim_instances = sd ? sd->instances : -1;
	ds->sim_misses = sd ? sd->misses : -1;
	ds->sim_p99_ms = sd ? sd->p99_response_ms : NAN;
	ds->sim_max_ms = sd ? sd->max_response_ms : NAN;
	return 0;
}

/* ---------------------------------------------------------------- tasks */
static int task_stats(const struct rpt_run *r, struct rpt_stats *s)
{
	const pd_dagset *dset = pd_plan_dags(r->plan);
	s->n_tasks = pd_dags_task_count(dset);
	s->tasks = calloc(s->n_tasks + 1, sizeof(*s->tasks));
	double *sum = calloc(s->n_tasks + 1, sizeof(double));
	if (!s->tasks || !sum) {
		free(sum);
		return -1;
	}
	for (size_t i = 0; i < s->n_tasks; i++) {
		const struct pd_task *t = pd_dags_task(dset, i);
		const struct pd_plan_task *pt = pd_plan_task_c(r->plan, i);
		struct rpt_task_stats *ts = &s->tasks[i];
		ts->dag = pd_dags_dag(dset, t->dag)->name;
		ts->name = t->name;
		pd_plan_placement_fmt(r->plan, &pt->place, ts->place, sizeof(ts->place));
		/* the budget is the reservation (runtime Q) for a CPU task, the latency for an accelerated one */
		ts->budget_ns = pt->place.kind == PD_PLACE_CPU ? pt->runtime_ns : pt->wcet_ns;
		ts->max_exec_ns = -1;
		ts->overruns = r->task_overruns ? r->task_overruns[i] : 0;
	}
	for (size_t j = 0; j < r->n_jobs; j++) {
		const struct rpt_job *jb = &r->jobs[j];
		if (jb->task >= s->n_tasks)
			continue;
		struct rpt_task_stats *ts = &s->tasks[jb->task];
		ts->overruns += jb->overrun;
		ts->failed += jb->failed;
		int64_t ex = jb->exec_ns;
		ts->jobs++;
		sum[jb->task] += (double)ex;
		if (ex > ts->max_exec_ns)
			ts->max_exec_ns = ex;
	}
	for (size_t i = 0; i < s->n_tasks; i++) {
		s->tasks[i].mean_exec_ns = s->tasks[i].jobs ? sum[i] / (double)s->tasks[i].jobs : NAN;
		s->overruns += s->tasks[i].overruns;
	}
	free(sum);
	return 0;
}

/* ---------------------------------------------------------------- all */
int rpt_stats_compute(const struct rpt_run *r, struct rpt_stats *s, pd_err *e)
{
	memset(s, 0, sizeof(*s));
	s->busy_sampled = r->busy_period_ns > 0;
	if (power_stats(r, s) < 0 || gap_stats(r, s) < 0 || task_stats(r, s) < 0 || rpt_steal_stats(r, s) < 0 ||
	    rpt_foreign_stats(r, s) < 0 || rpt_causes_stats(r, s) < 0)
		goto oom;
	const pd_dagset *dset = pd_plan_dags(r->plan);
	s->n_dags = pd_dags_count(dset);
	s->dags = calloc(s->n_dags + 1, sizeof(*s->dags));
	if (!s->dags)
		goto oom;
	for (size_t g = 0; g < s->n_dags; g++) {
		if (dag_stats(r, g, &s->dags[g]) < 0)
			goto oom;
		s->instances += s->dags[g].instances;
		s->misses += s->dags[g].misses;
	}
	const struct pd_plan_meta *m = pd_plan_meta_c(r->plan);
	s->plan_power_w = m->power_uw > 0 ? (double)m->power_uw * 1e-6 : NAN;
	s->power_error_pct = NAN;
	if (s->has_power && !isnan(s->plan_power_w))
		s->power_error_pct = (s->power_w - s->plan_power_w) / s->plan_power_w * 100.0;
	s->sim_power_error_pct = NAN;
	if (s->has_power && r->has_sim && r->sim_power_w > 0)
		s->sim_power_error_pct = (s->power_w - r->sim_power_w) / r->sim_power_w * 100.0;
	s->predicted_misses = r->has_sim ? r->sim_misses : 0;
	return 0;
oom:
	rpt_stats_free(s);
	return pd_err_set(e, PD_EXIT_ENV, "out of memory computing the report");
}

void rpt_stats_free(struct rpt_stats *s)
{
	for (size_t g = 0; g < s->n_dags; g++)
		free(s->dags[g].responses_ns);
	free(s->dags);
	free(s->rails);
	free(s->tasks);
	free(s->gaps);
	memset(s, 0, sizeof(*s));
}
