/* SPDX-License-Identifier: MIT */
/* The schedule views of the HTML report (html_impl.h): a Gantt window of jobs per CPU / accelerator, and
 * each DAG drawn as a layered graph with its tasks coloured by placement. */
#include "reports/html_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- Gantt */
/* The window: two of the longest periods, from shortly before the first miss when there is one (the
 * interesting moment), else from the first job. */
static void gantt_window(const struct html_ctx *h, int64_t *from, int64_t *to)
{
	const pd_dagset *ds = pd_plan_dags(h->r->plan);
	int64_t tmax = 0, first_miss = -1, first_job = INT64_MAX;
	for (size_t g = 0; g < pd_dags_count(ds); g++)
		tmax = pd_dags_dag(ds, g)->period_ns > tmax ? pd_dags_dag(ds, g)->period_ns : tmax;
	for (size_t i = 0; i < h->r->n_insts; i++) {
		const struct rpt_inst *in = &h->r->insts[i];
		int64_t resp = rpt_inst_response_ns(in);
		if (resp > pd_dags_dag(ds, in->dag)->deadline_ns && (first_miss < 0 || in->release_ns < first_miss))
			first_miss = in->release_ns;
	}
	for (size_t j = 0; j < h->r->n_jobs; j++)
		first_job = h->r->jobs[j].start_ns < first_job ? h->r->jobs[j].start_ns : first_job;
	if (first_job == INT64_MAX)
		first_job = 0;
	*from = first_miss >= 0 ? first_miss - tmax / 2 : first_job;
	if (*from < first_job)
		*from = first_job;
	*to = *from + 2 * tmax;
}

struct gantt_row {
	int cpu;      /* >= 0: a CPU row */
	long accel;   /* >= 0: an accelerator row */
	long dag;     /* >= 0: a DAG-instance row (log without jobs) */
	char label[48];
};

static size_t gantt_rows(const struct html_ctx *h, struct gantt_row *rows, size_t max)
{
	const pd_platform *pf = pd_plan_platform(h->r->plan);
	size_t n = 0;
	if (h->r->n_jobs == 0) {
		for (size_t g = 0; g < pd_dags_count(pd_plan_dags(h->r->plan)) && n < max; g++, n++) {
			rows[n] = (struct gantt_row){-1, -1, (long)g, ""};
			snprintf(rows[n].label, sizeof(rows[n].label), "%s", pd_dags_dag(pd_plan_dags(h->r->plan), g)->name);
		}
		return n;
	}
	for (size_t k = 0; k < pd_platform_island_count(pf); k++)
		for (size_t c = 0; c < pd_platform_island(pf, k)->n_cpus && n < max; c++, n++) {
			rows[n] = (struct gantt_row){pd_platform_island(pf, k)->cpus[c], -1, -1, ""};
			snprintf(rows[n].label, sizeof(rows[n].label), "cpu%d", rows[n].cpu);
		}
	for (size_t a = 0; a < pd_platform_accel_count(pf) && n < max; a++, n++) {
		rows[n] = (struct gantt_row){-1, (long)a, -1, ""};
		snprintf(rows[n].label, sizeof(rows[n].label), "%s", pd_platform_accel(pf, a)->name);
	}
	return n;
}

static long row_of_job(const struct html_ctx *h, const struct gantt_row *rows, size_t n, const struct rpt_job *j)
{
	const struct pd_plan_task *pt = pd_plan_task_c(h->r->plan, j->task);
	for (size_t i = 0; i < n; i++)
		if ((j->cpu >= 0 && rows[i].cpu == j->cpu) ||
		    (j->cpu < 0 && pt->place.kind != PD_PLACE_CPU && rows[i].accel == (long)pt->place.accel))
			return (long)i;
	return -1;
}

static void gantt_label_rows(struct svg_chart *c, const struct gantt_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		svg_row_label(c, (double)(n - i) - 0.5, rows[i].label);
}

void html_plot_gantt(struct html_ctx *h)
{
	struct gantt_row rows[64];
	size_t n = gantt_rows(h, rows, 64);
	int64_t from, to;
	gantt_window(h, &from, &to);
	const pd_dagset *ds = pd_plan_dags(h->r->plan);
	char title[160], tip[256];
	snprintf(title, sizeof(title), "%s, %.3f .. %.3f ms", h->r->n_jobs ? "jobs per CPU / accelerator" :
		 "DAG instances (the log has no per-job records)", (double)from / 1e6, (double)to / 1e6);
	struct svg_chart c;
	svg_chart_begin(&c, h->b, h->next_id++, 1200, 60 + 24 * (double)(n ? n : 1), (double)from / 1e6,
			(double)to / 1e6, 0, (double)(n ? n : 1), title, "time (ms)", NULL);
	gantt_label_rows(&c, rows, n);
	for (size_t i = 0; i < h->r->n_jobs; i++) {
		const struct rpt_job *j = &h->r->jobs[i];
		long row = row_of_job(h, rows, n, j);
		if (row < 0 || j->end_ns < from || j->start_ns > to)
			continue;
		const struct pd_task *t = pd_dags_task(ds, j->task);
		snprintf(tip, sizeof(tip), "%s/%s #%llu: %.3f .. %.3f ms%s", pd_dags_dag(ds, t->dag)->name, t->name,
			 (unsigned long long)j->inst, (double)j->start_ns / 1e6, (double)j->end_ns / 1e6,
			 j->overrun ? " (overrun)" : "");
		double y0 = (double)(n - (size_t)row) - 0.85;
		svg_rect(&c, (double)j->start_ns / 1e6, (double)j->end_ns / 1e6, y0, y0 + 0.7,
			 j->overrun ? "#c00" : svg_color(t->dag), tip);
	}
	for (size_t i = 0; h->r->n_jobs == 0 && i < h->r->n_insts; i++) {
		const struct rpt_inst *in = &h->r->insts[i];
		int64_t end = in->finish_ns >= 0 ? in->finish_ns : h->r->duration_ns;
		if (end < from || in->release_ns > to)
			continue;
		snprintf(tip, sizeof(tip), "%s #%llu", pd_dags_dag(ds, in->dag)->name, (unsigned long long)in->seq);
		double y0 = (double)(n - in->dag) - 0.85;
		svg_rect(&c, (double)in->release_ns / 1e6, (double)end / 1e6, y0, y0 + 0.7, svg_color(in->dag), tip);
	}
	svg_chart_end(&c);
}

/* ---------------------------------------------------------------- DAG layouts */
/* Placement colours are shared by every DAG of the page: the same CPU is the same colour. */
static size_t place_color(const char **seen, size_t *n, const char *place)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(seen[i], place) == 0)
			return i;
	seen[*n] = place;
	return (*n)++;
}

enum { NODE_W = 120, NODE_H = 34, COL_W = 170, ROW_H = 52, PAD = 16 };

static void dag_layout(struct html_ctx *h, size_t g, const char **seen, size_t *n_seen, char (*place)[48])
{
	const pd_dagset *ds = pd_plan_dags(h->r->plan);
	const struct pd_dag *d = pd_dags_dag(ds, g);
	size_t *layer = calloc(d->n_tasks + 1, sizeof(size_t)), *slot = calloc(d->n_tasks + 1, sizeof(size_t));
	size_t *count = calloc(d->n_tasks + 1, sizeof(size_t));
	if (!layer || !slot || !count)
		goto out;
	/* longest-path layering in topological order: a task sits one column right of its latest pred */
	const size_t *topo = pd_dags_topo(ds);
	size_t layers = 1, rows = 1;
	for (size_t k = 0; k < pd_dags_task_count(ds); k++) {
		size_t i = topo[k];
		if (pd_dags_task(ds, i)->dag != g)
			continue;
		const struct pd_task *t = pd_dags_task(ds, i);
		size_t l = 0;
		for (size_t p = 0; p < t->n_preds; p++)
			l = layer[t->preds[p] - d->first_task] + 1 > l ? layer[t->preds[p] - d->first_task] + 1 : l;
		layer[i - d->first_task] = l;
		slot[i - d->first_task] = count[l]++;
		layers = l + 1 > layers ? l + 1 : layers;
		rows = count[l] > rows ? count[l] : rows;
	}
	double w = fmax(280, PAD * 2 + (double)(layers - 1) * COL_W + NODE_W), hh = 30 + PAD + (double)rows * ROW_H;
	unsigned id = h->next_id++;
	pd_buf_printf(h->b, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f'><defs><marker "
			    "id='arrow%u' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='7' markerHeight='7' "
			    "orient='auto'><path d='M0,0L10,5L0,10z' fill='#666'/></marker></defs>\n<text x='%d' y='18' "
			    "class='ttl'>",
		      w, hh, id, PAD);
	html_esc(h, d->name);
	pd_buf_printf(h->b, " (T = %.3g ms, D = %.3g ms)</text>\n", (double)d->period_ns / 1e6, (double)d->deadline_ns / 1e6);
#define NX(i) (PAD + (double)layer[(i) - d->first_task] * COL_W)
#define NY(i) (30 + (double)slot[(i) - d->first_task] * ROW_H)
	for (size_t e = 0; e < d->n_edges; e++)
		pd_buf_printf(h->b, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#666' marker-end='url(#arrow%u)'/>\n",
			      NX(d->edges[e].from) + NODE_W, NY(d->edges[e].from) + NODE_H / 2.0, NX(d->edges[e].to),
			      NY(d->edges[e].to) + NODE_H / 2.0, id);
	for (size_t i = d->first_task; i < d->first_task + d->n_tasks; i++) {
		size_t col = place_color(seen, n_seen, place[i]);
		pd_buf_printf(h->b, "<rect x='%.1f' y='%.1f' width='%d' height='%d' rx='6' fill='%s' stroke='#333'><title>",
			      NX(i), NY(i), NODE_W, NODE_H, svg_color(col));
		html_esc(h, pd_dags_task(ds, i)->name);
		pd_buf_printf(h->b, " on %s</title></rect><text x='%.1f' y='%.1f' text-anchor='middle'>", place[i],
			      NX(i) + NODE_W / 2.0, NY(i) + 14);
		html_esc(h, pd_dags_task(ds, i)->name);
		pd_buf_printf(h->b, "</text><text x='%.1f' y='%.1f' text-anchor='middle'>%s</text>\n",
			      NX(i) + NODE_W / 2.0, NY(i) + 28, place[i]);
	}
#undef NX
#undef NY
	pd_buf_printf(h->b, "</svg>\n");
out:
	free(layer);
	free(slot);
	free(count);
}

void html_plot_dags(struct html_ctx *h)
{
	size_t nt = h->s->n_tasks, n_seen = 0;
	const char **seen = calloc(nt + 1, sizeof(char *));
	char(*place)[48] = calloc(nt + 1, sizeof(*place));
	if (!seen || !place)
		goto out;
	for (size_t i = 0; i < nt; i++)
		memcpy(place[i], h->s->tasks[i].place, sizeof(place[i]));
	for (size_t g = 0; g < h->s->n_dags; g++)
		dag_layout(h, g, seen, &n_seen, place);
	pd_buf_printf(h->b, "<p id='placement-legend'>");
	for (size_t i = 0; i < n_seen; i++)
		pd_buf_printf(h->b, "<span style='background:%s;padding:2px 8px;margin-right:6px'>%s</span>", svg_color(i),
			      seen[i]);
	pd_buf_printf(h->b, "</p>\n");
out:
	free(seen);
	free(place);
}
