/* SPDX-License-Identifier: MIT */
/* The time-series plots of the HTML report (html_impl.h): power per rail, response-time CDFs, misses over
 * time; drawn with the SVG kit (svg_impl.h) from the run model and stats. */
#include "reports/html_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double max2(double a, double b)
{
	return isnan(b) || a >= b ? a : b;
}

/* ---------------------------------------------------------------- power */
enum { MEAN_BUCKETS = 120 };

/* A dense, noisy series reads as a solid band; the mean of each 1/120 of the span, drawn over it,
 * shows the level the average power comes from. Only drawn when there are many more samples than
 * buckets. */
static void bucket_means(struct svg_chart *c, const double *x, const double *y, size_t n)
{
	if (n < 4 * MEAN_BUCKETS)
		return;
	double mx[MEAN_BUCKETS], my[MEAN_BUCKETS], span = x[n - 1] - x[0];
	size_t m = 0, i = 0;
	for (size_t b = 0; b < MEAN_BUCKETS; b++) {
		double end = x[0] + span * (double)(b + 1) / MEAN_BUCKETS, sum = 0, sx = 0;
		size_t k = 0;
		for (; i < n && (x[i] <= end || b == MEAN_BUCKETS - 1); i++, k++) {
			sum += y[i];
			sx += x[i];
		}
		if (k) {
			mx[m] = sx / (double)k;
			my[m++] = sum / (double)k;
		}
	}
	svg_line(c, mx, my, m, "#111", 1.6);
}

static void power_chart(struct html_ctx *h, const char *title, const int64_t *t_ns, const int64_t *uw, size_t n,
			const char *rail, double predicted_w, const char *color)
{
	double *x = malloc((n + 1) * sizeof(double)), *y = malloc((n + 1) * sizeof(double));
	if (!x || !y)
		goto out;
	double peak = 0;
	for (size_t i = 0; i < n; i++) {
		x[i] = (double)t_ns[i] / 1e9;
		y[i] = (double)uw[i] / 1e6;
		peak = y[i] > peak ? y[i] : peak;
	}
	struct svg_chart c;
	double x0 = n ? x[0] : 0, x1 = n ? x[n - 1] : (double)h->r->duration_ns / 1e9;
	svg_chart_begin(&c, h->b, h->next_id++, 590, 240, x0, x1, 0, max2(peak, predicted_w) * 1.15, title, "time (s)",
			"power (W)");
	for (size_t g = 0; g < h->s->n_gaps; g++) /* grey bands where the rail was not read */
		if (!h->s->gaps[g].rail || (rail && strcmp(h->s->gaps[g].rail, rail) == 0))
			svg_rect(&c, (double)h->s->gaps[g].from_ns / 1e9, (double)h->s->gaps[g].to_ns / 1e9, c.y0, c.y1,
				 "#ddd", "sampling gap");
	svg_line(&c, x, y, n, color, 1.2);
	bucket_means(&c, x, y, n);
	if (!isnan(predicted_w)) {
		char lab[64];
		snprintf(lab, sizeof(lab), "predicted %.3f W", predicted_w);
		svg_hline(&c, predicted_w, "#c00", lab);
	}
	svg_chart_end(&c);
out:
	free(x);
	free(y);
}

void html_plot_power(struct html_ctx *h)
{
	const struct rpt_run *r = h->r;
	if (r->n_rails == 0) {
		pd_buf_printf(h->b, "<p>No power samples in this run.</p>\n");
		return;
	}
	for (size_t k = 0; k < r->n_rails; k++) {
		char title[128];
		snprintf(title, sizeof(title), "rail %s%s%s", r->rails[k].name, r->rails[k].measures ? " measures " : "",
			 r->rails[k].measures ? r->rails[k].measures : "");
		power_chart(h, title, r->rails[k].t_ns, r->rails[k].uw, r->rails[k].n, r->rails[k].name,
			    h->s->rails[k].predicted_w, svg_color(k));
	}
	if (h->s->has_power && strcmp(h->s->total_from, "sum of rails") == 0 && r->n_rails > 1) {
		int64_t *t = NULL, *uw = NULL;
		size_t n = 0;
		if (rpt_total_series(r, &t, &uw, &n) == 0)
			power_chart(h, "total (sum of rails) vs the plan's power", t, uw, n, NULL, h->s->plan_power_w,
				    "#999");
		free(t);
		free(uw);
	}
}

/* ---------------------------------------------------------------- response-time CDFs */
void html_plot_cdf(struct html_ctx *h)
{
	for (size_t g = 0; g < h->s->n_dags; g++) {
		const struct rpt_dag_stats *ds = &h->s->dags[g];
		double *v = malloc((ds->n_responses + 1) * sizeof(double));
		if (!v)
			return;
		for (size_t i = 0; i < ds->n_responses; i++)
			v[i] = (double)ds->responses_ns[i] / 1e6;
		double dl = (double)ds->deadline_ns / 1e6, hi = ds->n_responses ? v[ds->n_responses - 1] : 0;
		char title[160], lab[64];
		snprintf(title, sizeof(title), "%s: %zu responses", ds->name, ds->n_responses);
		snprintf(lab, sizeof(lab), "D = %.3g ms", dl);
		struct svg_chart c;
		svg_chart_begin(&c, h->b, h->next_id++, 396, 240, 0, max2(hi, dl) * 1.08, 0, 1.0, title,
				"response time (ms)", "fraction of instances");
		svg_cdf(&c, v, ds->n_responses, svg_color(g));
		svg_vline(&c, dl, "#c00", lab);
		svg_chart_end(&c);
		free(v);
	}
}

/* ---------------------------------------------------------------- misses over time */
void html_plot_misses(struct html_ctx *h)
{
	const struct rpt_run *r = h->r;
	const pd_dagset *dset = pd_plan_dags(r->plan);
	struct svg_chart c;
	double top = 0;
	for (size_t g = 0; g < h->s->n_dags; g++)
		top = h->s->dags[g].misses > top ? (double)h->s->dags[g].misses : top;
	svg_chart_begin(&c, h->b, h->next_id++, 1200, 260, 0, (double)r->duration_ns / 1e9, 0, top > 0 ? top * 1.1 : 1,
			h->s->misses ? "cumulative deadline misses per DAG (at release + D)" : "no deadline misses",
			"time (s)", "misses");
	double *x = malloc((r->n_insts + 2) * sizeof(double)), *y = malloc((r->n_insts + 2) * sizeof(double));
	for (size_t g = 0; x && y && g < h->s->n_dags; g++) {
		const struct pd_dag *d = pd_dags_dag(dset, g);
		size_t n = 0;
		for (size_t i = 0; i < r->n_insts; i++) {
			const struct rpt_inst *in = &r->insts[i];
			int64_t resp = rpt_inst_response_ns(in);
			if (in->dag == g && (resp > d->deadline_ns || resp < 0)) /* unfinished ones are misses */
				x[n++] = (double)(in->release_ns + d->deadline_ns) / 1e9;
		}
		qsort(x, n, sizeof(double), cmp_double);
		/* a staircase: (t_i, i) then (t_i, i + 1), ending flat at the end of the run */
		size_t m = 0;
		double *sx = malloc((2 * n + 3) * sizeof(double)), *sy = malloc((2 * n + 3) * sizeof(double));
		if (sx && sy) {
			sx[m] = 0, sy[m++] = 0;
			for (size_t i = 0; i < n; i++) {
				sx[m] = x[i], sy[m++] = (double)i;
				sx[m] = x[i], sy[m++] = (double)i + 1;
			}
			sx[m] = (double)r->duration_ns / 1e9, sy[m++] = (double)n;
			svg_line(&c, sx, sy, m, svg_color(g), 1.8);
			svg_legend(&c, g, svg_color(g), d->name);
		}
		free(sx);
		free(sy);
	}
	free(x);
	free(y);
	svg_chart_end(&c);
}
