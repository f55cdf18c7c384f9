/* SPDX-License-Identifier: MIT */
/* html_impl.h - internal to reports/: the HTML report's page (html.c) and its plots (html_plots.c). */
#ifndef PD_REPORTS_HTML_IMPL_H
#define PD_REPORTS_HTML_IMPL_H

#include "reports/pd_reports.h"
#include "reports/run_model_impl.h"
#include "reports/svg_impl.h"

struct html_ctx {
	pd_buf *b;
	const struct rpt_run *r;
	const struct rpt_stats *s;
	unsigned next_id; /* clip-path / marker ids, unique in the page */
};

void html_esc(struct html_ctx *h, const char *s);
void html_plot_power(struct html_ctx *h);
void html_plot_cdf(struct html_ctx *h);
void html_plot_misses(struct html_ctx *h);
void html_plot_gantt(struct html_ctx *h);
void html_plot_dags(struct html_ctx *h);

#endif
