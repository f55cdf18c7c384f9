/* SPDX-License-Identifier: MIT */
/*
 * svg_impl.h - internal to reports/: a small SVG plotting kit for the HTML report. A chart is a fixed-size
 * <svg> with a plot area, linear axes with "nice" ticks, and marks (polylines, steps, rectangles,
 * reference lines) drawn in data coordinates. Everything is written into a pd_buf; text is escaped.
 */
#ifndef PD_REPORTS_SVG_IMPL_H
#define PD_REPORTS_SVG_IMPL_H

#include "core/pd_core.h"

struct svg_chart {
	pd_buf *out;
	double w, h;                 /* pixels */
	double left, right, top, bottom; /* margins, pixels */
	double x0, x1, y0, y1;       /* data range */
	unsigned id;                 /* unique in the page: names the chart's clip path */
};

/* Categorical palette (colour-blind friendly, Tableau 10); i wraps around. */
const char *svg_color(size_t i);
/* Appends s with &, <, >, " and ' escaped. */
void svg_text_esc(pd_buf *b, const char *s);

/* Opens <svg> with a title above the plot and axes labelled xlabel / ylabel (ticks included; no y
 * ticks when ylabel is NULL: the caller labels rows itself). A zero range is widened so that a flat
 * series still gets a visible axis. id must be unique within the page (clip-path ids are global). */
void svg_chart_begin(struct svg_chart *c, pd_buf *out, unsigned id, double w, double h, double x0, double x1,
		     double y0, double y1, const char *title, const char *xlabel, const char *ylabel);
void svg_chart_end(struct svg_chart *c);
double svg_x(const struct svg_chart *c, double x);
double svg_y(const struct svg_chart *c, double y);

/* A polyline through (x[i], y[i]); more points than pixels are decimated to per-pixel min/max so
 * peaks survive. */
void svg_line(struct svg_chart *c, const double *x, const double *y, size_t n, const char *color, double width);
/* Empirical CDF of sorted values: a step that rises 1/n at each value. */
void svg_cdf(struct svg_chart *c, const double *sorted, size_t n, const char *color);
/* Horizontal / vertical reference line, dashed, with a label at its end. */
void svg_hline(struct svg_chart *c, double y, const char *color, const char *label);
void svg_vline(struct svg_chart *c, double x, const char *color, const char *label);
/* Rectangle in data coordinates, with a hover tooltip (<title>) when tip != NULL. */
void svg_rect(struct svg_chart *c, double x0, double x1, double y0, double y1, const char *color, const char *tip);
/* Text left of the plot area at data height y (row labels of a Gantt chart): outside the clip. */
void svg_row_label(struct svg_chart *c, double y, const char *text);
/* Legend entries, stacked at the top right of the plot area. */
void svg_legend(struct svg_chart *c, size_t i, const char *color, const char *label);

#endif
