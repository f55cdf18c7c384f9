/* SPDX-License-Identifier: MIT */
/*
 * `report --json` (docs/REPORTS.md): measured { power_w, rails (name -> W), instances, misses, dags }, predicted
 * { power_w, misses }, power_error_pct, and the rest of the report (docs/REPORTS.md lists every key).
 * Unknown numbers (no samples, no prediction) are null, never 0: 0 W would be a measurement.
 */
#include "reports/pd_reports.h"
#include "reports/run_model_impl.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *num(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static json_t *ms(int64_t ns)
{
	return ns < 0 ? json_null() : json_real((double)ns / 1e6);
}

static json_t *str(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *j_run(const struct rpt_run *r)
{
	const struct pd_plan_meta *m = pd_plan_meta_c(r->plan);
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:f, s:s, s:s, s:s, s:s, s:o}", "board", str(r->board),
			 "kernel", str(r->kernel), "arch", str(r->arch), "started", str(r->started), "ended",
			 str(r->ended), "restore", str(r->restore), "agent", str(r->agent_version), "duration_s",
			 (double)r->duration_ns / 1e9, "plan", r->plan_path, "platform",
			 pd_platform_name(pd_plan_platform(r->plan)), "objective", pd_plan_objective_name(m->objective),
			 "status", pd_plan_status_name(m->status), "sample_period_ms",
			 r->sample_period_ns > 0 ? ms(r->sample_period_ns) : json_null());
}

static json_t *j_dag(const struct rpt_dag_stats *d)
{
	return json_pack("{s:s, s:I, s:I, s:f, s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "name", d->name, "instances",
			 (json_int_t)d->instances, "misses", (json_int_t)d->misses, "miss_ratio", d->miss_ratio,
			 "unfinished", (json_int_t)d->unfinished, "deadline_ms", ms(d->deadline_ns), "p50_response_ms",
			 ms(d->p50_ns), "p99_response_ms", ms(d->p99_ns), "max_response_ms", ms(d->max_ns),
			 "worst_relative_slack", num(d->worst_slack), "period_ms", ms(d->period_ns));
}

static json_t *j_task(const struct rpt_task_stats *t)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:o, s:o, s:o}", "dag", t->dag, "task", t->name, "place",
			 t->place, "jobs", (json_int_t)t->jobs, "overruns", (json_int_t)t->overruns, "budget_ms",
			 ms(t->budget_ns), "max_exec_ms", ms(t->max_exec_ns), "mean_exec_ms",
			 num(t->mean_exec_ns / 1e6));
}

/* Other processes' SCHED_DEADLINE threads on the plan's CPUs: null when the agent did not scan for
 * them (an empty list would claim there were none). */
static json_t *j_foreign(const struct rpt_run *r, const struct rpt_stats *s)
{
	if (!s->foreign_scanned)
		return json_null();
	json_t *th = json_array();
	for (size_t i = 0; i < r->n_foreigns; i++) {
		const struct rpt_foreign *f = &r->foreigns[i];
		char comm[4 * PD_RUNLOG_COMM_LEN + 8]; /* a thread names itself: valid UTF-8 only after escaping */
		json_array_append_new(th, json_pack("{s:i, s:s, s:i, s:f, s:f, s:f, s:f}", "tid", f->tid, "comm",
						    pd_esc(f->comm, comm, sizeof(comm)), "cpu", f->cpu, "runtime_ms", (double)f->runtime_ns / 1e6,
						    "period_ms", (double)f->period_ns / 1e6, "first_seen_s",
						    (double)f->from_ns / 1e9, "last_seen_s", (double)f->to_ns / 1e9));
	}
	return json_pack("{s:o, s:f, s:I}", "threads", th, "scan_period_ms", (double)r->foreign_period_ns / 1e6,
			 "misses_overlapping", (json_int_t)s->misses_with_foreign);
}

static json_t *j_measured(const struct rpt_stats *s)
{
	json_t *rails = json_object(), *detail = json_array(), *dags = json_array(), *tasks = json_array(),
	       *gaps = json_array();
	for (size_t k = 0; k < s->n_rails; k++) {
		const struct rpt_rail_stats *rs = &s->rails[k];
		json_object_set_new(rails, rs->name, num(rs->avg_w));
		json_t *d = json_pack("{s:s, s:o, s:o, s:o, s:I, s:o}", "name", rs->name, "avg_w", num(rs->avg_w), "peak_w",
				      num(rs->peak_w), "energy_j", num(rs->energy_j), "samples", (json_int_t)rs->samples,
				      "predicted_w", num(rs->predicted_w));
		json_object_set_new(d, "planned_busy", num(rs->planned_busy));
		json_object_set_new(d, "measured_busy", num(rs->measured_busy));
		/* null when the log has no busy time or the plan no CPU on the island: 0 would claim it idle */
		json_object_set_new(d, "measured_busy_all", num(rs->measured_busy_all));
		json_object_set_new(d, "other_busy", num(rs->other_busy));
		json_object_set_new(d, "plan_background", num(rs->plan_background));
		json_object_set_new(d, "busy_cpus", isnan(rs->measured_busy_all) ? json_null() : json_integer((json_int_t)rs->busy_cpus));
		/* which busy fraction model_at_measured_w is at; null where no busy fraction enters it */
		json_object_set_new(d, "model_busy", rs->model_at_busy_all ? json_string("all")
						     : !isnan(rs->measured_busy) ? json_string("jobs") : json_null());
		json_object_set_new(d, "model_at_measured_w", num(rs->model_at_measured_w));
		json_object_set_new(d, "model_error_pct", num(rs->model_error_pct));
		json_array_append_new(detail, d);
	}
	for (size_t g = 0; g < s->n_dags; g++)
		json_array_append_new(dags, j_dag(&s->dags[g]));
	for (size_t i = 0; i < s->n_tasks; i++)
		json_array_append_new(tasks, j_task(&s->tasks[i]));
	for (size_t i = 0; i < s->n_gaps; i++)
		json_array_append_new(gaps, json_pack("{s:o, s:o, s:o, s:s}", "rail", str(s->gaps[i].rail), "from_ms",
						      ms(s->gaps[i].from_ns), "to_ms", ms(s->gaps[i].to_ns), "kind",
						      s->gaps[i].late ? "late" : "unreadable"));
	int64_t all_gap_ns = s->gap_total_ns > INT64_MAX - s->late_total_ns ? INT64_MAX : s->gap_total_ns + s->late_total_ns;
	json_t *m = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:o, s:I, s:o, s:{s:I, s:f, s:o, s:{s:I, s:f}, s:{s:I, s:f}}}",
			      "power_w",
			      num(s->power_w), "peak_w", num(s->peak_w), "energy_j", num(s->energy_j), "total_from",
			      str(s->total_from), "rails", rails, "rail_stats", detail, "instances",
			      (json_int_t)s->instances, "misses", (json_int_t)s->misses, "dags", dags, "overruns",
			      (json_int_t)s->overruns, "tasks", tasks, "sampling_gaps", "count", (json_int_t)s->n_gaps,
			      "total_ms", (double)all_gap_ns / 1e6, "list", gaps, "unreadable", "count",
			      (json_int_t)(s->n_gaps - s->n_late_gaps), "total_ms", (double)s->gap_total_ns / 1e6, "late",
			      "count", (json_int_t)s->n_late_gaps, "total_ms", (double)s->late_total_ns / 1e6);
	/* null when the agent did not sample steal: 0 would claim the host stole nothing */
	json_object_set_new(m, "host_steal_ms", s->steal_sampled ? ms(s->host_steal_ns) : json_null());
	json_object_set_new(m, "misses_with_steal",
			    s->steal_sampled ? json_integer((json_int_t)s->misses_with_steal) : json_null());
	json_object_set_new(m, "misses_outside_plan", json_integer((json_int_t)s->misses_outside));
	return m;
}

static json_t *j_sim(const struct rpt_run *r)
{
	if (!r->has_sim)
		return json_null();
	json_t *dags = json_array();
	for (size_t i = 0; i < r->n_sim_dags; i++) {
		const struct rpt_sim_dag *d = &r->sim_dags[i];
		json_array_append_new(dags, json_pack("{s:s, s:I, s:I, s:o, s:o}", "name", d->name, "instances",
						      (json_int_t)d->instances, "misses", (json_int_t)d->misses,
						      "max_response_ms", num(d->max_response_ms), "p99_response_ms",
						      num(d->p99_response_ms)));
	}
	return json_pack("{s:o, s:o, s:o, s:I, s:I, s:o}", "power_w", num(r->sim_power_w), "energy_j",
			 num(r->sim_energy_j), "duration_s", num(r->sim_duration_s), "jobs", (json_int_t)r->sim_jobs,
			 "misses", (json_int_t)r->sim_misses, "dags", dags);
}

static json_t *j_replay(const struct rpt_run *r)
{
	if (!r->has_replay)
		return json_null();
	return json_pack("{s:I, s:I, s:I}", "misses", (json_int_t)r->replay_misses, "instances",
			 (json_int_t)r->replay_instances, "jobs", (json_int_t)r->replay_jobs);
}

static json_t *khz(int64_t v)
{
	return v > 0 ? json_integer((json_int_t)v) : json_null();
}

static json_t *j_freqs(const struct rpt_run *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->n_freqs; i++) {
		const struct rpt_freq *f = &r->freqs[i];
		int m = rpt_freq_matches(f);
		json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:o, s:o, s:I, s:I, s:o}", "name", f->name, "kind",
						   f->accel ? "accelerator" : "island", "planned_khz", khz(f->planned_khz),
						   "min_khz", khz(f->min_khz), "max_khz", khz(f->max_khz), "snapshots",
						   (json_int_t)f->snapshots, "unreadable", (json_int_t)f->unreadable,
						   "matches", m < 0 ? json_null() : json_boolean(m)));
	}
	return a;
}

int pd_report_json(const pd_report *rep, pd_buf *out, pd_err *e)
{
	const struct rpt_run *r = rep->run;
	const struct rpt_stats *s = &rep->st;
	json_t *root = json_pack("{s:s, s:b, s:o, s:o, s:o, s:{s:o, s:I, s:o, s:o, s:o}, s:o, s:o}", "rundir", r->rundir,
				 "complete", !r->incomplete, "incomplete_reason",
				 r->incomplete ? json_string(r->incomplete_why) : json_null(), "run", j_run(r),
				 "measured", j_measured(s), "predicted", "power_w", num(s->plan_power_w), "misses",
				 (json_int_t)s->predicted_misses, "simulated_power_w",
				 r->has_sim ? num(r->sim_power_w) : json_null(), "simulator", j_sim(r), "replay",
				 j_replay(r), "power_error_pct", num(s->power_error_pct), "sim_power_error_pct",
				 num(s->sim_power_error_pct));
	if (!root)
		return pd_err_set(e, PD_EXIT_ENV, "cannot build the JSON report (out of memory or bad UTF-8)");
	json_object_set_new(json_object_get(root, "measured"), "foreign_dl", j_foreign(r, s));
	/* null without executed jobs: 0 stalls would claim that the jobs were watched */
	json_object_set_new(json_object_get(root, "measured"), "cpu_stalls",
			    r->n_jobs ? json_pack("{s:I, s:f, s:f, s:f, s:I}", "jobs", (json_int_t)s->stall_jobs, "total_ms",
						  (double)s->stall_total_ns / 1e6, "max_ms", (double)s->stall_max_ns / 1e6,
						  "threshold_ms", (double)RPT_STALL_MIN_NS / 1e6, "misses_overlapping",
						  (json_int_t)s->misses_with_stall)
				      : json_null());
	/* null when no builtin job recorded its demand: nothing was compared */
	json_object_set_new(json_object_get(root, "measured"), "stretched_jobs",
			    s->stretch_known ? json_pack("{s:I, s:f, s:f, s:f, s:f, s:I}", "jobs", (json_int_t)s->stretch_jobs,
							 "excess_ms", (double)s->stretch_total_ns / 1e6, "max_excess_ms",
							 (double)s->stretch_max_ns / 1e6, "threshold_ms",
							 (double)RPT_STRETCH_MIN_NS / 1e6, "threshold_fraction",
							 RPT_STRETCH_MIN_FRAC, "misses_overlapping",
							 (json_int_t)s->misses_with_stretch)
					 : json_null());
	json_t *notes = json_array();
	for (size_t i = 0; i < r->n_notes; i++)
		json_array_append_new(notes, json_string(r->notes[i]));
	json_object_set_new(root, "notes", notes);
	json_object_set_new(root, "frequencies", j_freqs(r));
	json_object_set_new(root, "model_at_measured",
			    json_pack("{s:o, s:o}", "power_w", num(s->model_at_measured_w), "error_pct",
				      num(s->model_error_pct)));
	json_object_set_new(root, "starvation_boosts", json_integer((json_int_t)r->starvation_boosts));
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
	json_decref(root);
	if (!text)
		return pd_err_set(e, PD_EXIT_ENV, "cannot serialise the JSON report");
	int rc = pd_buf_append(out, text, strlen(text)) || pd_buf_append(out, "\n", 1);
	free(text);
	return rc ? pd_err_set(e, PD_EXIT_ENV, "out of memory") : 0;
}
