/* SPDX-License-Identifier: MIT */
/*
 * `report --html FILE`: one self-contained page (inline CSS and SVG, no script, no network fetch, so
 * it opens the same on an air-gapped lab machine and in a CI artefact viewer). Sections: run
 * metadata, predicted vs measured, power over time, response-time CDFs, misses over time, a Gantt
 * window, the DAGs coloured by placement, and the per-DAG / per-task / gap tables.
 */
#include "reports/html_impl.h"

#include <inttypes.h>
#include <math.h>

static const char css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1220px}"
	"h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}"
	"table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
	"th{background:#f4f4f4}td.l,th.l{text-align:left}.bad{color:#c00;font-weight:bold}"
	".banner{background:#fde2e1;border:1px solid #c00;padding:8px 12px;margin:12px 0}"
	"svg{margin:4px 8px 4px 0;vertical-align:top}svg text{font:11px system-ui,sans-serif}"
	".ttl{font-weight:bold;font-size:12px}.tick{fill:#555}.lab{fill:#333}.ref{font-size:11px}";

void html_esc(struct html_ctx *h, const char *s)
{
	svg_text_esc(h->b, s ? s : "-");
}

static void row2(struct html_ctx *h, const char *k, const char *v)
{
	pd_buf_printf(h->b, "<tr><th class='l'>%s</th><td class='l'>", k);
	html_esc(h, v);
	pd_buf_printf(h->b, "</td></tr>\n");
}

static void meta(struct html_ctx *h)
{
	const struct rpt_run *r = h->r;
	const struct pd_plan_meta *m = pd_plan_meta_c(r->plan);
	char dur[64], plan[512];
	snprintf(dur, sizeof(dur), "%.3f s", (double)r->duration_ns / 1e9);
	snprintf(plan, sizeof(plan), "%s (platform %s, objective %s, %s)", r->plan_path,
		 pd_platform_name(pd_plan_platform(r->plan)), pd_plan_objective_name(m->objective), pd_plan_status_name(m->status));
	pd_buf_printf(h->b, "<table>\n");
	row2(h, "board", r->board);
	row2(h, "kernel", r->kernel);
	row2(h, "arch", r->arch);
	row2(h, "plan", plan);
	row2(h, "duration", dur);
	row2(h, "started", r->started);
	row2(h, "ended", r->ended);
	row2(h, "restore", r->restore);
	pd_buf_printf(h->b, "</table>\n");
}

static void freq_table(struct html_ctx *h)
{
	if (h->r->n_freqs == 0)
		return;
	char a[32], b[32], c[32];
	pd_buf_printf(h->b, "<table id='frequencies'><tr><th class='l'>frequency of</th><th>planned</th>"
			    "<th>read back (min .. max)</th><th>snapshots</th></tr>\n");
	for (size_t i = 0; i < h->r->n_freqs; i++) {
		const struct rpt_freq *f = &h->r->freqs[i];
		pd_buf_printf(h->b, "<tr><td class='l'>");
		html_esc(h, f->name);
		pd_buf_printf(h->b, " (%s)</td><td>%s</td><td%s>", f->accel ? "accelerator" : "island",
			      f->planned_khz > 0 ? pd_fmt_freq(f->planned_khz, a, 32) : "-",
			      rpt_freq_matches(f) == 0 ? " class='bad'" : "");
		if (f->max_khz < 0)
			pd_buf_printf(h->b, "unreadable");
		else
			pd_buf_printf(h->b, "%s .. %s", pd_fmt_freq(f->min_khz, b, 32), pd_fmt_freq(f->max_khz, c, 32));
		pd_buf_printf(h->b, "</td><td>%zu</td></tr>\n", f->snapshots);
	}
	pd_buf_printf(h->b, "</table>\n");
}

static void cell_w(struct html_ctx *h, double w)
{
	char t[32];
	pd_buf_printf(h->b, "<td>%s</td>", rpt_fmt_w(w, t, sizeof(t)));
}

/* An error cell is flagged red beyond 10 %: the usual accuracy of a calibrated power model. */
static void cell_pct(struct html_ctx *h, double p)
{
	char t[32];
	pd_buf_printf(h->b, "<td%s>%s</td>", !isnan(p) && fabs(p) > 10 ? " class='bad'" : "", rpt_fmt_pct(p, t, sizeof(t)));
}

static void predicted_table(struct html_ctx *h)
{
	const struct rpt_run *r = h->r;
	const struct rpt_stats *s = h->s;
	pd_buf_printf(h->b, "<table id='predicted'><tr><th class='l'></th><th>plan</th><th>simulator</th>"
			    "<th>measured</th><th>error vs plan</th><th>error vs simulator</th>"
			    "<th>model at measured utilisation</th><th>model error at measured utilisation</th></tr>\n"
			    "<tr><td class='l'>average power W</td>");
	cell_w(h, s->plan_power_w);
	cell_w(h, r->has_sim ? r->sim_power_w : NAN);
	cell_w(h, s->power_w);
	cell_pct(h, s->power_error_pct);
	cell_pct(h, s->sim_power_error_pct);
	cell_w(h, s->model_at_measured_w);
	cell_pct(h, s->model_error_pct);
	pd_buf_printf(h->b, "</tr>\n<tr><td class='l'>deadline misses</td><td>0</td><td>");
	if (r->has_sim)
		pd_buf_printf(h->b, "%" PRId64, r->sim_misses);
	else
		pd_buf_printf(h->b, "-");
	pd_buf_printf(h->b, "</td><td%s>%" PRIu64 "</td><td></td><td></td><td></td><td></td></tr>\n",
		      s->misses ? " class='bad'" : "", s->misses);
	for (size_t k = 0; k < s->n_rails; k++) {
		const struct rpt_rail_stats *rs = &s->rails[k];
		pd_buf_printf(h->b, "<tr><td class='l'>rail ");
		html_esc(h, rs->name);
		pd_buf_printf(h->b, " W</td>");
		cell_w(h, rs->predicted_w);
		pd_buf_printf(h->b, "<td>-</td>");
		cell_w(h, rs->avg_w);
		cell_pct(h, isnan(rs->predicted_w) ? NAN : (rs->avg_w - rs->predicted_w) / rs->predicted_w * 100);
		pd_buf_printf(h->b, "<td></td>");
		cell_w(h, rs->model_at_measured_w);
		cell_pct(h, rs->model_error_pct);
		pd_buf_printf(h->b, "</tr>\n");
	}
	pd_buf_printf(h->b, "</table>\n");
}

static void cell_busy(struct html_ctx *h, double v, bool sign)
{
	if (isnan(v))
		pd_buf_printf(h->b, "<td>-</td>");
	else
		pd_buf_printf(h->b, sign ? "<td>%+.4f</td>" : "<td>%.4f</td>", v);
}

/* The busy fractions behind the model at the measured utilisation (docs/REPORTS.md): planned, the
 * jobs', everything's on the island's sampled CPUs, and the other software's share in words. */
static void busy_table(struct html_ctx *h)
{
	const struct rpt_stats *s = h->s;
	bool any = false;
	for (size_t k = 0; k < s->n_rails; k++)
		any = any || !isnan(s->rails[k].planned_busy);
	if (!any)
		return;
	pd_buf_printf(h->b, "<table id='busy'><tr><th class='l'>rail (busy, cores)</th><th>plan</th><th>jobs (meas)</th>"
			    "<th>all (sampled CPUs)</th><th>other</th><th>model at</th></tr>\n");
	for (size_t k = 0; k < s->n_rails; k++) {
		const struct rpt_rail_stats *rs = &s->rails[k];
		if (isnan(rs->planned_busy))
			continue;
		pd_buf_printf(h->b, "<tr><td class='l'>");
		html_esc(h, rs->name);
		pd_buf_printf(h->b, "</td>");
		cell_busy(h, rs->planned_busy, false);
		cell_busy(h, rs->measured_busy, false);
		cell_busy(h, rs->measured_busy_all, false);
		cell_busy(h, rs->other_busy, true);
		pd_buf_printf(h->b, "<td>%s</td></tr>\n", rs->model_at_busy_all ? "all" : "jobs");
	}
	pd_buf_printf(h->b, "</table>\n");
	if (!s->busy_sampled)
		pd_buf_printf(h->b, "<p>The run log has no busy time of the CPUs (an agent before BUSY records): the model "
				    "is at the jobs' busy fraction, other software is not seen.</p>\n");
	for (size_t k = 0; k < s->n_rails; k++) {
		const struct rpt_rail_stats *rs = &s->rails[k];
		if (isnan(rs->other_busy) || rs->busy_cpus == 0 || rs->other_busy / (double)rs->busy_cpus <= RPT_OTHER_BUSY_NOTE)
			continue;
		pd_buf_printf(h->b, "<p>The board's other software (agent sampler, iiod, ssh...) kept ");
		html_esc(h, rs->measures ? rs->measures : rs->name);
		pd_buf_printf(h->b, " busy %.1f %% of the time (rail ", rs->other_busy / (double)rs->busy_cpus * 100);
		html_esc(h, rs->name);
		pd_buf_printf(h->b, ", %zu sampled CPU%s); ", rs->busy_cpus, rs->busy_cpus == 1 ? "" : "s");
		if (rs->plan_background > 0)
			pd_buf_printf(h->b, "the plan includes %.4f cores' worth of it (background_util).</p>\n", rs->plan_background);
		else
			pd_buf_printf(h->b, "the plan does not include it (<code>powerdag refit --what power</code> measures it).</p>\n");
	}
}

static void dag_table(struct html_ctx *h)
{
	char a[32], b[32], c[32], d[32], e[32], f[32], g2[32];
	pd_buf_printf(h->b, "<table id='dags'><tr><th class='l'>DAG</th><th>instances</th><th>misses</th><th>miss ratio</th>"
			    "<th>p50 ms</th><th>p99 ms</th><th>max ms</th><th>D ms</th><th>worst slack</th>"
			    "<th>sim p99 ms</th><th>sim max ms</th></tr>\n");
	for (size_t g = 0; g < h->s->n_dags; g++) {
		const struct rpt_dag_stats *ds = &h->s->dags[g];
		pd_buf_printf(h->b, "<tr><td class='l'>");
		html_esc(h, ds->name);
		pd_buf_printf(h->b, "</td><td>%" PRIu64 "</td><td%s>%" PRIu64 "</td><td>%.2f%%</td><td>%s</td><td>%s</td>"
				    "<td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			      ds->instances, ds->misses ? " class='bad'" : "", ds->misses, ds->miss_ratio * 100,
			      rpt_fmt_ms(ds->p50_ns, a, 32), rpt_fmt_ms(ds->p99_ns, b, 32), rpt_fmt_ms(ds->max_ns, c, 32),
			      rpt_fmt_ms(ds->deadline_ns, d, 32), rpt_fmt_pct(ds->worst_slack * 100, e, 32),
			      rpt_fmt_w(ds->sim_p99_ms, f, 32), rpt_fmt_w(ds->sim_max_ms, g2, 32));
	}
	pd_buf_printf(h->b, "</table>\n");
}

static void task_table(struct html_ctx *h)
{
	char a[32], b[32];
	pd_buf_printf(h->b, "<table id='tasks'><tr><th class='l'>task</th><th class='l'>place</th><th>jobs</th>"
			    "<th>overruns</th><th>failed</th><th>budget ms</th><th>max exec ms</th></tr>\n");
	for (size_t i = 0; i < h->s->n_tasks; i++) {
		const struct rpt_task_stats *t = &h->s->tasks[i];
		pd_buf_printf(h->b, "<tr><td class='l'>");
		html_esc(h, t->dag);
		pd_buf_printf(h->b, "/");
		html_esc(h, t->name);
		pd_buf_printf(h->b, "</td><td class='l'>%s</td><td>%" PRIu64 "</td><td%s>%" PRIu64 "</td><td>%" PRIu64
				    "</td><td>%s</td><td>%s</td></tr>\n",
			      t->place, t->jobs, t->overruns ? " class='bad'" : "", t->overruns, t->failed,
			      rpt_fmt_ms(t->budget_ns, a, 32), rpt_fmt_ms(t->max_exec_ns, b, 32));
	}
	pd_buf_printf(h->b, "</table>\n");
}

static void gaps_and_notes(struct html_ctx *h)
{
	char a[32], b[32];
	pd_buf_printf(h->b, "<p>%zu sampling gaps: %zu unreadable (%.3f ms), %zu late ticks of the sampler (%.3f ms).</p>\n",
		      h->s->n_gaps, h->s->n_gaps - h->s->n_late_gaps, (double)h->s->gap_total_ns / 1e6, h->s->n_late_gaps,
		      (double)h->s->late_total_ns / 1e6);
	if (h->s->n_gaps) {
		pd_buf_printf(h->b, "<table id='gaps'><tr><th class='l'>rail</th><th>from ms</th><th>to ms</th>"
				    "<th class='l'>kind</th></tr>\n");
		for (size_t i = 0; i < h->s->n_gaps && i < 50; i++) {
			pd_buf_printf(h->b, "<tr><td class='l'>");
			html_esc(h, h->s->gaps[i].rail ? h->s->gaps[i].rail : "all rails");
			pd_buf_printf(h->b, "</td><td>%s</td><td>%s</td><td class='l'>%s</td></tr>\n",
				      rpt_fmt_ms(h->s->gaps[i].from_ns, a, 32), rpt_fmt_ms(h->s->gaps[i].to_ns, b, 32),
				      h->s->gaps[i].late ? "late" : "unreadable");
		}
		pd_buf_printf(h->b, "</table>\n");
	}
	for (size_t i = 0; i < h->r->n_notes; i++) {
		pd_buf_printf(h->b, "<pre class='note'>");
		html_esc(h, h->r->notes[i]);
		pd_buf_printf(h->b, "</pre>\n");
	}
}

static void page(struct html_ctx *h)
{
	pd_buf_printf(h->b, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
			    "<meta name='generator' content='powerdag %s'><title>powerdag report: ",
		      PD_VERSION);
	html_esc(h, h->r->rundir);
	pd_buf_printf(h->b, "</title><style>%s</style></head><body>\n<h1>powerdag report: ", css);
	html_esc(h, h->r->rundir);
	pd_buf_printf(h->b, "</h1>\n");
	if (h->r->incomplete) {
		pd_buf_printf(h->b, "<div class='banner' id='incomplete'><b>Incomplete run.</b> ");
		html_esc(h, h->r->incomplete_why);
		pd_buf_printf(h->b, "</div>\n");
	}
	meta(h);
	freq_table(h);
	pd_buf_printf(h->b, "<h2>Predicted vs measured</h2>\n");
	predicted_table(h);
	busy_table(h);
	pd_buf_printf(h->b, "<h2>Power over time</h2>\n");
	html_plot_power(h);
	pd_buf_printf(h->b, "<h2>Response times</h2>\n");
	html_plot_cdf(h);
	dag_table(h);
	pd_buf_printf(h->b, "<h2>Deadline misses over time</h2>\n");
	html_plot_misses(h);
	pd_buf_printf(h->b, "<h2>Schedule</h2>\n");
	html_plot_gantt(h);
	pd_buf_printf(h->b, "<h2>DAGs by placement</h2>\n");
	html_plot_dags(h);
	pd_buf_printf(h->b, "<h2>Tasks</h2>\n");
	task_table(h);
	pd_buf_printf(h->b, "<h2>Sampling</h2>\n");
	gaps_and_notes(h);
	pd_buf_printf(h->b, "</body></html>\n");
}

int pd_report_write_html(const pd_report *rep, const char *path, pd_err *e)
{
	pd_buf b;
	pd_buf_init(&b);
	struct html_ctx h = {&b, rep->run, &rep->st, 0};
	page(&h);
	int rc = b.data ? pd_write_file_atomic(path, b.data, b.len, e)
			: pd_err_set(e, PD_EXIT_ENV, "out of memory writing %s", path);
	pd_buf_free(&b);
	return rc;
}
