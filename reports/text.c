/* SPDX-License-Identifier: MIT */
/* The terminal summary: metadata, power, predicted vs measured, DAGs, tasks, gaps (stats.c numbers). */
#include "reports/pd_reports.h"
#include "reports/run_model_impl.h"

#include <math.h>
#include <string.h>

#define B(name) char name[32]

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* Strings from the run directory (board uname, platform and rail names, agent version, paths) are
 * printed through pd_esc_append: a terminal never sees their control characters (core/escape.c).
 * The escaped copies live in the arena of one pd_report_text call. */
static const char *E(pd_arena *a, const char *s)
{
	if (!s)
		return NULL;
	pd_buf b;
	pd_buf_init(&b);
	const char *r = pd_esc_append(&b, s, (size_t)-1) == 0 && b.data ? pd_arena_strdup(a, b.data) : NULL;
	pd_buf_free(&b);
	return r ? r : "?";
}

static void text_meta(const struct rpt_run *r, pd_buf *o, pd_arena *A)
{
	const pd_plan *p = r->plan;
	const struct pd_plan_meta *m = pd_plan_meta_c(p);
	pd_buf_printf(o, "powerdag report: %s\n", E(A, r->rundir));
	if (r->incomplete)
		pd_buf_printf(o, "  INCOMPLETE RUN: %s\n", E(A, r->incomplete_why));
	pd_buf_printf(o, "  board     %s (kernel %s, %s)\n", or_dash(E(A, r->board)), or_dash(E(A, r->kernel)),
		      or_dash(E(A, r->arch)));
	pd_buf_printf(o, "  plan      %s: platform %s, %zu DAGs, %zu tasks, objective %s, %s\n", E(A, r->plan_path),
		      E(A, pd_platform_name(pd_plan_platform(p))), pd_dags_count(pd_plan_dags(p)),
		      pd_dags_task_count(pd_plan_dags(p)), pd_plan_objective_name(m->objective), pd_plan_status_name(m->status));
	pd_buf_printf(o, "  duration  %.3f s logged (start %s, end %s), restore %s\n", (double)r->duration_ns / 1e9,
		      or_dash(E(A, r->started)), or_dash(E(A, r->ended)), or_dash(E(A, r->restore)));
	if (r->agent_version)
		pd_buf_printf(o, "  agent     %s\n", E(A, r->agent_version));
}

static void text_freqs(const struct rpt_run *r, pd_buf *o, pd_arena *A)
{
	if (r->n_freqs == 0)
		return;
	char pl[32], lo[32], hi[32];
	pd_buf_printf(o, "\nfrequencies                   planned  read back on the board\n");
	for (size_t i = 0; i < r->n_freqs; i++) {
		const struct rpt_freq *f = &r->freqs[i];
		char name[64];
		snprintf(name, sizeof(name), "%s (%s)", E(A, f->name), f->accel ? "accelerator" : "island");
		pd_buf_printf(o, "  %-26s %9s  ", name, f->planned_khz > 0 ? pd_fmt_freq(f->planned_khz, pl, 32) : "-");
		if (f->max_khz < 0)
			pd_buf_printf(o, "unreadable");
		else if (f->min_khz == f->max_khz)
			pd_buf_printf(o, "%s", pd_fmt_freq(f->min_khz, lo, 32));
		else
			pd_buf_printf(o, "%s .. %s", pd_fmt_freq(f->min_khz, lo, 32), pd_fmt_freq(f->max_khz, hi, 32));
		int m = rpt_freq_matches(f);
		pd_buf_printf(o, " (%zu snapshots)%s\n", f->snapshots, m == 0 ? "  MISMATCH: not the planned OPP" : "");
	}
	if (r->starvation_boosts)
		pd_buf_printf(o, "  starvation monitor boosted %zu times\n", r->starvation_boosts);
}

static void text_power(const struct rpt_run *r, const struct rpt_stats *s, pd_buf *o, pd_arena *A)
{
	B(a); B(pk); B(pr); B(er); B(en);
	pd_buf_printf(o, "\npower                      avg W    peak W  energy J  model W    error  samples\n");
	if (!r->power_sampled && r->n_rails == 0) {
		pd_buf_printf(o, "  (not sampled: the agent ran without power sensors)\n");
		return;
	}
	for (size_t k = 0; k < s->n_rails; k++) {
		const struct rpt_rail_stats *rs = &s->rails[k];
		double err = isnan(rs->predicted_w) ? NAN : (rs->avg_w - rs->predicted_w) / rs->predicted_w * 100;
		pd_buf_printf(o, "  %-22s %8s  %8s  %8s  %7s  %7s  %zu\n", E(A, rs->name), rpt_fmt_w(rs->avg_w, a, 32),
			      rpt_fmt_w(rs->peak_w, pk, 32), rpt_fmt_w(rs->energy_j, en, 32),
			      rpt_fmt_w(rs->predicted_w, pr, 32), rpt_fmt_pct(err, er, 32), rs->samples);
	}
	if (s->has_power) {
		char label[64];
		snprintf(label, sizeof(label), "total (%s)", s->total_from);
		pd_buf_printf(o, "  %-22s %8s  %8s  %8.3f  %7s  %7s\n", label, rpt_fmt_w(s->power_w, a, 32),
			      rpt_fmt_w(s->peak_w, pk, 32), s->energy_j, rpt_fmt_w(s->plan_power_w, pr, 32),
			      rpt_fmt_pct(s->power_error_pct, er, 32));
	}
}

/* The measured jobs replayed through the model (replay.c): which misses the model explains. */
static void text_replay(const struct rpt_run *r, const struct rpt_stats *s, pd_buf *o)
{
	if (!r->has_replay)
		return;
	long long m = (long long)s->misses, p = (long long)r->replay_misses;
	pd_buf_printf(o, "  replayed: %lld misses predicted when the model executes what each of the %lld measured jobs took\n",
		      p, (long long)r->replay_jobs);
	if (m == 0 && p == 0)
		return;
	if (m <= p)
		pd_buf_printf(o, "  -> fed the execution times the jobs took, the model predicts as many misses or more: the\n"
				 "     WCETs or the budget margin are too small for this board (powerdag refit, powerdag\n"
				 "     profile), not the schedule\n");
	else
		pd_buf_printf(o, "  -> %lld misses beyond the replay: time the kernel did not charge to the jobs (a stalled or\n"
				 "     stolen vCPU, interrupts, release latency) or a gap in the model\n", m - p);
}

/* Host steal (steal.c): how much of the misses a stalled host may explain. */
static void text_steal(const struct rpt_stats *s, pd_buf *o)
{
	if (!s->steal_sampled) {
		pd_buf_printf(o, "  host steal: not sampled (an agent without STEAL records, or no steal counter)\n");
		return;
	}
	pd_buf_printf(o, "  host steal: %.1f ms of CPU time; %llu of %llu misses overlap it\n", (double)s->host_steal_ns / 1e6,
		      (unsigned long long)s->misses_with_steal, (unsigned long long)s->misses);
}

/* Other processes' SCHED_DEADLINE threads on the plan's CPUs (steal.c): outside every analysis of
 * the plan, so the misses next to them are named. */
static void text_foreign(const struct rpt_run *r, const struct rpt_stats *s, pd_buf *o)
{
	if (!s->foreign_scanned) {
		pd_buf_printf(o, "  other SCHED_DEADLINE threads: not scanned (an agent without FOREIGN records)\n");
		return;
	}
	if (!r->n_foreigns) {
		pd_buf_printf(o, "  other SCHED_DEADLINE threads on the plan's CPUs: none seen (scanned every %.0f ms)\n",
			      (double)r->foreign_period_ns / 1e6);
		return;
	}
	pd_buf_printf(o, "  other SCHED_DEADLINE threads on the plan's CPUs: %zu (outside the plan's analysis); %llu of %llu "
			 "misses overlap them\n",
		      r->n_foreigns, (unsigned long long)s->misses_with_foreign, (unsigned long long)s->misses);
	for (size_t i = 0; i < r->n_foreigns && i < 8; i++) {
		const struct rpt_foreign *f = &r->foreigns[i];
		char comm[4 * PD_RUNLOG_COMM_LEN + 8];
		pd_buf_printf(o, "    thread %d '%s' on CPU %d: %.3f ms every %.3f ms, seen %.1f-%.1f s\n", f->tid,
			      pd_esc(f->comm, comm, sizeof(comm)), f->cpu, (double)f->runtime_ns / 1e6,
			      (double)f->period_ns / 1e6, (double)f->from_ns / 1e9, (double)f->to_ns / 1e9);
	}
	if (r->n_foreigns > 8)
		pd_buf_printf(o, "    (%zu more)\n", r->n_foreigns - 8);
}

/* CPU stalls (stall.c): waits no job of the plan explains, which the replay cannot see. */
static void text_stall(const struct rpt_run *r, const struct rpt_stats *s, pd_buf *o)
{
	if (!r->n_jobs)
		return;
	if (!s->stall_jobs) {
		pd_buf_printf(o, "  CPU stalls: none (no job waited %.0f ms or more for a CPU that ran no other job of the plan)\n",
			      (double)RPT_STALL_MIN_NS / 1e6);
		return;
	}
	pd_buf_printf(o, "  CPU stalls: %zu job%s waited for a CPU that ran no other job of the plan (%.1f ms in all on the "
			 "plan's CPUs, the longest one job's %.1f ms: the CPU ran something else or nothing, e.g. a stopped "
			 "vCPU); %llu of %llu misses overlap them\n",
		      s->stall_jobs, s->stall_jobs == 1 ? "" : "s", (double)s->stall_total_ns / 1e6, (double)s->stall_max_ns / 1e6,
		      (unsigned long long)s->misses_with_stall, (unsigned long long)s->misses);
}

/* Stretched jobs (stretch.c): builtin jobs charged time their work did not take. Printed when there are
 * some: "none" on every clean run would be noise. */
static void text_stretch(const struct rpt_stats *s, pd_buf *o)
{
	if (!s->stretch_jobs)
		return;
	pd_buf_printf(o, "  stretched jobs: %zu job%s charged at least %.0f ms and %.0f %% more CPU time than their "
			 "work (%.1f ms over in all, the largest %.1f ms: time the CPU was taken from under them, e.g. a "
			 "stopped vCPU); %llu of %llu misses overlap them\n",
		      s->stretch_jobs, s->stretch_jobs == 1 ? "" : "s", (double)RPT_STRETCH_MIN_NS / 1e6,
		      RPT_STRETCH_MIN_FRAC * 100, (double)s->stretch_total_ns / 1e6, (double)s->stretch_max_ns / 1e6,
		      (unsigned long long)s->misses_with_stretch, (unsigned long long)s->misses);
}

/* The causes outside the plan together, each miss counted once: what is left is the misses the
 * plan's own analysis must answer for. */
static void text_outside(const struct rpt_stats *s, pd_buf *o)
{
	if (!s->misses)
		return;
	pd_buf_printf(o, "  -> %llu of %llu misses meet a cause outside the plan (a CPU stall, a stretched job, stolen "
			 "time, another reservation) or follow one within a deadline; %llu meet none\n",
		      (unsigned long long)s->misses_outside, (unsigned long long)s->misses,
		      (unsigned long long)(s->misses - s->misses_outside));
}

static void text_predicted(const struct rpt_run *r, const struct rpt_stats *s, pd_buf *o)
{
	B(pw); B(sw); B(mw); B(e1); B(e2);
	pd_buf_printf(o, "\npredicted vs measured          plan  simulator   measured  err(plan)  err(sim)\n");
	pd_buf_printf(o, "  average power W         %8s   %8s   %8s   %8s  %8s\n", rpt_fmt_w(s->plan_power_w, pw, 32),
		      r->has_sim ? rpt_fmt_w(r->sim_power_w, sw, 32) : "-", rpt_fmt_w(s->power_w, mw, 32),
		      rpt_fmt_pct(s->power_error_pct, e1, 32), rpt_fmt_pct(s->sim_power_error_pct, e2, 32));
	char simm[32] = "-";
	if (r->has_sim)
		snprintf(simm, sizeof(simm), "%lld", (long long)r->sim_misses);
	pd_buf_printf(o, "  deadline misses         %8d   %8s   %8llu\n", 0, simm, (unsigned long long)s->misses);
	if (r->has_sim && r->sim_jobs >= 0)
		pd_buf_printf(o, "  (simulator: %lld jobs over %.3f s)\n", (long long)r->sim_jobs, r->sim_duration_s);
	text_replay(r, s, o);
	text_steal(s, o);
	text_foreign(r, s, o);
	text_stall(r, s, o);
	text_stretch(s, o);
	text_outside(s, o);
}

/* Busy fractions of one row: "-" when unknown; other signed (tick resolution can make it a hair
 * negative, and hiding that would hide the resolution). */
static void fmt_busy(double v, bool sign, char *buf, size_t n)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, sign ? "%+.4f" : "%.4f", v);
}

/* The other software's share of the sampled CPUs of an island, in words, where it matters (over one
 * percentage point of those CPUs' time): the rail includes it, the plan only its background_util. */
static void text_other_software(const struct rpt_stats *s, pd_buf *o, pd_arena *A)
{
	for (size_t k = 0; k < s->n_rails; k++) {
		const struct rpt_rail_stats *rs = &s->rails[k];
		if (isnan(rs->other_busy) || rs->busy_cpus == 0 || rs->other_busy / (double)rs->busy_cpus <= RPT_OTHER_BUSY_NOTE)
			continue;
		bool said = false; /* one sentence per island, however many rails measure it */
		for (size_t j = 0; j < k && !said; j++)
			said = !isnan(s->rails[j].other_busy) && s->rails[j].measures && rs->measures &&
			       strcmp(s->rails[j].measures, rs->measures) == 0 &&
			       s->rails[j].other_busy / (double)s->rails[j].busy_cpus > RPT_OTHER_BUSY_NOTE;
		if (said)
			continue;
		pd_buf_printf(o, "  -> the board's other software (agent sampler, iiod, ssh...) kept %s busy %.1f %% of the time\n"
				 "     (its %zu sampled CPU%s: %.4f cores' worth beyond the jobs); ",
			      E(A, rs->measures), rs->other_busy / (double)rs->busy_cpus * 100, rs->busy_cpus,
			      rs->busy_cpus == 1 ? "" : "s", rs->other_busy);
		if (rs->plan_background > 0)
			pd_buf_printf(o, "the plan includes %.4f (background_util)\n", rs->plan_background);
		else
			pd_buf_printf(o, "the plan does not include it\n     (`powerdag refit --what power` measures the island's background_util)\n");
	}
}

/* Which is wrong, the table or the utilisation: the model at what the board did next to the plan. */
static void text_model_error(const struct rpt_stats *s, pd_buf *o, pd_arena *A)
{
	B(a); B(pl); B(ma); B(e1); B(e2);
	if (!s->has_power)
		return;
	pd_buf_printf(o, "\nmodel error at the measured utilisation\n"
			 "                       busy plan  busy meas   busy all      other  measured W  plan W  model@meas W"
			 "  err(plan)  err(model@meas)\n");
	for (size_t k = 0; k < s->n_rails; k++) {
		const struct rpt_rail_stats *rs = &s->rails[k];
		double err = isnan(rs->predicted_w) ? NAN : (rs->avg_w - rs->predicted_w) / rs->predicted_w * 100;
		char bp[32], bm[32], ba[32], ot[32];
		fmt_busy(rs->planned_busy, false, bp, sizeof(bp));
		fmt_busy(rs->measured_busy, false, bm, sizeof(bm));
		fmt_busy(rs->measured_busy_all, false, ba, sizeof(ba));
		fmt_busy(rs->other_busy, true, ot, sizeof(ot));
		pd_buf_printf(o, "  %-20s %9s  %9s  %9s  %9s  %10s  %6s  %12s  %9s  %15s\n", E(A, rs->name), bp, bm, ba, ot,
			      rpt_fmt_w(rs->avg_w, a, 32), rpt_fmt_w(rs->predicted_w, pl, 32),
			      rpt_fmt_w(rs->model_at_measured_w, ma, 32), rpt_fmt_pct(err, e1, 32),
			      rpt_fmt_pct(rs->model_error_pct, e2, 32));
	}
	pd_buf_printf(o, "  %-20s %9s  %9s  %9s  %9s  %10s  %6s  %12s  %9s  %15s\n", "total", "", "", "", "",
		      rpt_fmt_w(s->power_w, a, 32), rpt_fmt_w(s->plan_power_w, pl, 32), rpt_fmt_w(s->model_at_measured_w, ma, 32),
		      rpt_fmt_pct(s->power_error_pct, e1, 32), rpt_fmt_pct(s->model_error_pct, e2, 32));
	if (s->busy_sampled)
		pd_buf_printf(o, "  (busy meas: the plan's jobs; busy all: everything that ran on the island's CPUs - jobs,\n"
				 "   agent, daemons, interrupts; other = all - meas; model@meas is at busy all where known)\n");
	else
		pd_buf_printf(o, "  (model@meas is at busy meas, the plan's jobs alone: this run log has no busy time of the\n"
				 "   CPUs (an agent before BUSY records), so other software on the board is not seen)\n");
	text_other_software(s, o, A);
	pd_buf_printf(o, "  (err(plan) large but err(model@meas) small: the utilisation differed from the plan;\n"
			 "   both large: the power table is off - `powerdag refit --what power` fits it)\n");
}

static void text_dags(const struct rpt_stats *s, pd_buf *o, pd_arena *A)
{
	B(p50); B(p99); B(mx); B(d); B(sp); B(sm);
	pd_buf_printf(o, "\ndags            instances  misses   ratio   p50 ms   p99 ms   max ms     D ms  worst slack"
			 "  sim p99  sim max\n");
	for (size_t g = 0; g < s->n_dags; g++) {
		const struct rpt_dag_stats *ds = &s->dags[g];
		char slack[32] = "-";
		if (!isnan(ds->worst_slack))
			snprintf(slack, sizeof(slack), "%+.1f%%", ds->worst_slack * 100);
		rpt_fmt_w(ds->sim_p99_ms, sp, 32); /* same 3-decimal look, ms instead of W */
		rpt_fmt_w(ds->sim_max_ms, sm, 32);
		pd_buf_printf(o, "  %-14s %9llu  %6llu  %5.1f%%  %7s  %7s  %7s  %7s  %11s  %7s  %7s\n", E(A, ds->name),
			      (unsigned long long)ds->instances, (unsigned long long)ds->misses, ds->miss_ratio * 100,
			      rpt_fmt_ms(ds->p50_ns, p50, 32), rpt_fmt_ms(ds->p99_ns, p99, 32),
			      rpt_fmt_ms(ds->max_ns, mx, 32), rpt_fmt_ms(ds->deadline_ns, d, 32), slack, sp, sm);
		if (ds->unfinished)
			pd_buf_printf(o, "  %-14s (%llu of the misses never finished)\n", "",
				      (unsigned long long)ds->unfinished);
	}
	pd_buf_printf(o, "  %-14s %9llu  %6llu\n", "all", (unsigned long long)s->instances,
		      (unsigned long long)s->misses);
}

static void text_tasks(const struct rpt_stats *s, pd_buf *o, pd_arena *A)
{
	B(bu); B(mx);
	pd_buf_printf(o, "\ntasks                          place         jobs  overruns  budget ms  max exec ms\n");
	for (size_t i = 0; i < s->n_tasks; i++) {
		const struct rpt_task_stats *t = &s->tasks[i];
		/* DAG and task names have no length limit: padded to the column, never cut */
		const char *dag = E(A, t->dag), *name = E(A, t->name);
		int pad = 29 - (int)(strlen(dag) + strlen(name));
		pd_buf_printf(o, "  %s/%s%*s %-12s %6llu  %8llu  %9s  %11s\n", dag, name, pad > 0 ? pad : 0, "",
			      E(A, t->place), (unsigned long long)t->jobs,
			      (unsigned long long)t->overruns, rpt_fmt_ms(t->budget_ns, bu, 32),
			      rpt_fmt_ms(t->max_exec_ns, mx, 32));
	}
	pd_buf_printf(o, "  overruns in total: %llu\n", (unsigned long long)s->overruns);
}

static void text_gaps(const struct rpt_run *r, const struct rpt_stats *s, pd_buf *o, pd_arena *A)
{
	B(a); B(b);
	pd_buf_printf(o, "\nsampling gaps: %zu unreadable, %.3f ms; %zu late ticks, %.3f ms", s->n_gaps - s->n_late_gaps,
		      (double)s->gap_total_ns / 1e6, s->n_late_gaps, (double)s->late_total_ns / 1e6);
	if (r->sample_period_ns > 0)
		pd_buf_printf(o, " (nominal period %.3f ms)", (double)r->sample_period_ns / 1e6);
	pd_buf_printf(o, "\n");
	if (s->n_late_gaps) /* why, in the words of docs/REPORTS.md */
		pd_buf_printf(o, "  (late: every read succeeded but the sampler ticked late: it runs SCHED_FIFO, below every\n"
				 "   SCHED_DEADLINE task, so it - and iiod for a network rail - waits while the CPUs run jobs;\n"
				 "   the energy is bridged linearly)\n");
	for (size_t i = 0; i < s->n_gaps && i < 10; i++)
		pd_buf_printf(o, "  %-14s %s .. %s ms  %s\n", s->gaps[i].rail ? E(A, s->gaps[i].rail) : "(every rail)",
			      rpt_fmt_ms(s->gaps[i].from_ns, a, 32), rpt_fmt_ms(s->gaps[i].to_ns, b, 32),
			      s->gaps[i].late ? "late" : "unreadable");
	if (s->n_gaps > 10)
		pd_buf_printf(o, "  ... %zu more (see --csv / --json)\n", s->n_gaps - 10);
}

int pd_report_text(const pd_report *rep, pd_buf *o, pd_err *e)
{
	const struct rpt_run *r = rep->run;
	pd_arena *A = pd_arena_new();
	if (!A)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	text_meta(r, o, A);
	text_freqs(r, o, A);
	text_power(r, &rep->st, o, A);
	text_predicted(r, &rep->st, o);
	text_model_error(&rep->st, o, A);
	text_dags(&rep->st, o, A);
	text_tasks(&rep->st, o, A);
	text_gaps(r, &rep->st, o, A);
	for (size_t i = 0; i < r->n_notes; i++)
		pd_buf_printf(o, "%snote: %s\n", i == 0 ? "\n" : "", E(A, r->notes[i]));
	pd_arena_free(A);
	return 0;
}
