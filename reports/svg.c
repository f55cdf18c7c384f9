/* SPDX-License-Identifier: MIT */
/* The SVG plotting kit of the HTML report (svg_impl.h). */
#include "reports/svg_impl.h"

#include <math.h>
#include <stdlib.h>

const char *svg_color(size_t i)
{
	static const char *const pal[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
					  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
	return pal[i % (sizeof(pal) / sizeof(pal[0]))];
}

void svg_text_esc(pd_buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': pd_buf_printf(b, "&amp;"); break;
		case '<': pd_buf_printf(b, "&lt;"); break;
		case '>': pd_buf_printf(b, "&gt;"); break;
		case '"': pd_buf_printf(b, "&quot;"); break;
		case '\'': pd_buf_printf(b, "&#39;"); break;
		default: pd_buf_append(b, s, 1);
		}
	}
}

double svg_x(const struct svg_chart *c, double x)
{
	return c->left + (x - c->x0) / (c->x1 - c->x0) * (c->w - c->left - c->right);
}

double svg_y(const struct svg_chart *c, double y)
{
	return c->h - c->bottom - (y - c->y0) / (c->y1 - c->y0) * (c->h - c->top - c->bottom);
}

/* A tick step of 1, 2 or 5 times a power of ten giving about five ticks over span. */
static double nice_step(double span)
{
	double raw = span / 5, p = pow(10, floor(log10(raw))), m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void widen(double *a, double *b)
{
	if (!isfinite(*a) || !isfinite(*b)) {
		*a = 0;
		*b = 1;
	}
	if (*b - *a <= 0) {
		double d = fabs(*a) > 0 ? fabs(*a) * 0.1 : 1;
		*a -= d;
		*b += d;
	}
}

static void axes(struct svg_chart *c, const char *xlabel, const char *ylabel)
{
	pd_buf *b = c->out;
	double px0 = c->left, px1 = c->w - c->right, py0 = c->top, py1 = c->h - c->bottom;
	pd_buf_printf(b, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='#fff' stroke='#999'/>\n", px0, py0,
		      px1 - px0, py1 - py0);
	double sx = nice_step(c->x1 - c->x0), sy = nice_step(c->y1 - c->y0);
	for (double t = ceil(c->x0 / sx) * sx; t <= c->x1 + sx * 1e-9; t += sx)
		pd_buf_printf(b,
			      "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#eee'/><text x='%.1f' y='%.1f' "
			      "text-anchor='middle' class='tick'>%g</text>\n",
			      svg_x(c, t), py0, svg_x(c, t), py1, svg_x(c, t), py1 + 14, fabs(t) < sx * 1e-9 ? 0 : t);
	for (double t = ceil(c->y0 / sy) * sy; ylabel && t <= c->y1 + sy * 1e-9; t += sy)
		pd_buf_printf(b,
			      "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#eee'/><text x='%.1f' y='%.1f' "
			      "text-anchor='end' class='tick'>%g</text>\n",
			      px0, svg_y(c, t), px1, svg_y(c, t), px0 - 4, svg_y(c, t) + 4, fabs(t) < sy * 1e-9 ? 0 : t);
	pd_buf_printf(b, "<text x='%.1f' y='%.1f' text-anchor='middle' class='lab'>", (px0 + px1) / 2, c->h - 4);
	svg_text_esc(b, xlabel);
	pd_buf_printf(b, "</text><text transform='translate(12 %.1f) rotate(-90)' text-anchor='middle' class='lab'>",
		      (py0 + py1) / 2);
	svg_text_esc(b, ylabel ? ylabel : "");
	pd_buf_printf(b, "</text>\n");
}

void svg_chart_begin(struct svg_chart *c, pd_buf *out, unsigned id, double w, double h, double x0, double x1,
		     double y0, double y1, const char *title, const char *xlabel, const char *ylabel)
{
	widen(&x0, &x1);
	widen(&y0, &y1);
	*c = (struct svg_chart){out, w, h, 64, 16, 26, 34, x0, x1, y0, y1, id};
	pd_buf_printf(out, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' viewBox='0 0 %.0f %.0f'>\n",
		      w, h, w, h);
	pd_buf_printf(out, "<text x='%.1f' y='16' class='ttl'>", c->left);
	svg_text_esc(out, title);
	pd_buf_printf(out, "</text>\n");
	axes(c, xlabel, ylabel);
	/* marks are clipped to the plot area: reference lines outside the range do not spill */
	pd_buf_printf(out, "<clipPath id='clip%u'><rect x='%.1f' y='%.1f' width='%.1f' height='%.1f'/></clipPath>"
			   "<g clip-path='url(#clip%u)'>\n",
		      id, c->left, c->top, w - c->left - c->right, h - c->top - c->bottom, id);
}

void svg_chart_end(struct svg_chart *c)
{
	pd_buf_printf(c->out, "</g></svg>\n");
}

static void point(struct svg_chart *c, double x, double y, bool first)
{
	pd_buf_printf(c->out, "%s%.1f,%.1f", first ? "" : " ", svg_x(c, x), svg_y(c, y));
}

void svg_line(struct svg_chart *c, const double *x, const double *y, size_t n, const char *color, double width)
{
	if (n == 0)
		return;
	pd_buf_printf(c->out, "<polyline fill='none' stroke='%s' stroke-width='%.1f' points='", color, width);
	double pxw = c->w - c->left - c->right;
	if (n <= 2 * (size_t)pxw) {
		for (size_t i = 0; i < n; i++)
			point(c, x[i], y[i], i == 0);
	} else { /* per-pixel column: first, min, max, last in time order keeps the envelope */
		size_t i = 0;
		bool first = true;
		while (i < n) {
			long col = lround(svg_x(c, x[i]));
			size_t j = i, lo = i, hi = i;
			while (j < n && lround(svg_x(c, x[j])) == col) {
				lo = y[j] < y[lo] ? j : lo;
				hi = y[j] > y[hi] ? j : hi;
				j++;
			}
			size_t a = lo < hi ? lo : hi, b2 = lo < hi ? hi : lo;
			point(c, x[i], y[i], first);
			point(c, x[a], y[a], false);
			point(c, x[b2], y[b2], false);
			point(c, x[j - 1], y[j - 1], false);
			first = false;
			i = j;
		}
	}
	pd_buf_printf(c->out, "'/>\n");
}

void svg_cdf(struct svg_chart *c, const double *sorted, size_t n, const char *color)
{
	if (n == 0)
		return;
	pd_buf_printf(c->out, "<polyline fill='none' stroke='%s' stroke-width='1.8' points='", color);
	point(c, sorted[0], 0, true);
	for (size_t i = 0; i < n; i++) {
		/* only the last of equal values draws its riser: thousands of equal responses, one step */
		if (i + 1 < n && sorted[i + 1] == sorted[i])
			continue;
		point(c, sorted[i], (double)(i + 1) / (double)n, false);
		if (i + 1 < n)
			point(c, sorted[i + 1], (double)(i + 1) / (double)n, false);
	}
	pd_buf_printf(c->out, "'/>\n");
}

static void label(struct svg_chart *c, double x, double y, const char *anchor, const char *color, const char *text)
{
	if (!text)
		return;
	pd_buf_printf(c->out, "<text x='%.1f' y='%.1f' text-anchor='%s' fill='%s' class='ref'>", x, y, anchor, color);
	svg_text_esc(c->out, text);
	pd_buf_printf(c->out, "</text>\n");
}

void svg_hline(struct svg_chart *c, double y, const char *color, const char *text)
{
	double py = svg_y(c, y);
	pd_buf_printf(c->out, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='%s' stroke-dasharray='6 4' "
			      "stroke-width='1.5'/>\n",
		      c->left, c->w - c->right, py, py, color);
	label(c, c->w - c->right - 4, py - 4, "end", color, text);
}

void svg_vline(struct svg_chart *c, double x, const char *color, const char *text)
{
	double px = svg_x(c, x);
	pd_buf_printf(c->out, "<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='%s' stroke-dasharray='6 4' "
			      "stroke-width='1.5'/>\n",
		      px, px, c->top, c->h - c->bottom, color);
	label(c, px - 4, c->top + 12, "end", color, text);
}

void svg_rect(struct svg_chart *c, double x0, double x1, double y0, double y1, const char *color, const char *tip)
{
	double ax = svg_x(c, x0), bx = svg_x(c, x1), ay = svg_y(c, y1), by = svg_y(c, y0);
	pd_buf_printf(c->out, "<rect x='%.2f' y='%.1f' width='%.2f' height='%.1f' fill='%s' stroke='#333' "
			      "stroke-width='0.3'>",
		      ax, ay, bx - ax > 0.5 ? bx - ax : 0.5, by - ay, color);
	if (tip) {
		pd_buf_printf(c->out, "<title>");
		svg_text_esc(c->out, tip);
		pd_buf_printf(c->out, "</title>");
	}
	pd_buf_printf(c->out, "</rect>\n");
}

void svg_legend(struct svg_chart *c, size_t i, const char *color, const char *text)
{
	double x = c->w - c->right - 150, y = c->top + 14 + 15 * (double)i;
	pd_buf_printf(c->out, "<rect x='%.1f' y='%.1f' width='10' height='10' fill='%s'/>", x, y - 9, color);
	label(c, x + 14, y, "start", "#222", text);
}

void svg_row_label(struct svg_chart *c, double y, const char *text)
{
	/* leave the clipped group for the margin, then re-enter it for the marks that follow */
	pd_buf_printf(c->out, "</g><text x='%.1f' y='%.1f' text-anchor='end' class='tick'>", c->left - 4, svg_y(c, y) + 4);
	svg_text_esc(c->out, text);
	pd_buf_printf(c->out, "</text><g clip-path='url(#clip%u)'>\n", c->id);
}
