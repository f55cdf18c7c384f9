/* SPDX-License-Identifier: MIT */
/* Errors as values and diagnostic lists (see pd_core.h). */
#include "core/pd_core.h"

#include <stdlib.h>
#include <string.h>

int pd_err_set(pd_err *e, int code, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
		e->code = code;
	}
	return code;
}

int pd_err_setloc(pd_err *e, int code, struct pd_loc where, const char *fmt, ...)
{
	if (e) {
		char tmp[PD_ERR_MSG / 2];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(tmp, sizeof(tmp), fmt, ap);
		va_end(ap);
		if (where.file)
			snprintf(e->msg, sizeof(e->msg), "%s:%d:%d: %s", where.file, where.line, where.col, tmp);
		else
			snprintf(e->msg, sizeof(e->msg), "%s", tmp);
		e->code = code;
	}
	return code;
}

void pd_diags_init(pd_diags *d)
{
	memset(d, 0, sizeof(*d));
}

void pd_diags_rebase(pd_diags *d, size_t from, const char *old_file, const char *new_file)
{
	for (size_t i = from; old_file && i < d->n; i++)
		if (d->v[i].loc.file == old_file)
			d->v[i].loc.file = new_file;
}

void pd_diags_free(pd_diags *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].msg);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

void pd_diags_vadd(pd_diags *d, struct pd_loc loc, const char *fmt, va_list ap)
{
	size_t limit = d->limit ? d->limit : 1000;
	if (d->n >= limit) {
		d->dropped++;
		return;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		struct pd_diag *v = realloc(d->v, cap * sizeof(*v));
		if (!v) {
			d->dropped++;
			return;
		}
		d->v = v;
		d->cap = cap;
	}
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0) {
		d->dropped++;
		return;
	}
	d->v[d->n].loc = loc;
	d->v[d->n].msg = msg;
	d->n++;
}

void pd_diags_add(pd_diags *d, struct pd_loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pd_diags_vadd(d, loc, fmt, ap);
	va_end(ap);
}

/* Messages quote the input (keys, values, file names): escaped, so that a hostile file cannot send
 * escape sequences to the terminal through them (core/escape.c). */
void pd_diags_print(const pd_diags *d, FILE *out)
{
	pd_buf f, m;
	pd_buf_init(&f);
	pd_buf_init(&m);
	for (size_t i = 0; i < d->n; i++) {
		const struct pd_diag *g = &d->v[i];
		f.len = m.len = 0;
		pd_esc_append(&f, g->loc.file ? g->loc.file : "", (size_t)-1);
		pd_esc_append(&m, g->msg, (size_t)-1);
		const char *fs = f.data ? f.data : "", *ms = m.data ? m.data : "";
		if (g->loc.file && g->loc.line > 0)
			fprintf(out, "%s:%d:%d: error: %s\n", fs, g->loc.line, g->loc.col, ms);
		else if (g->loc.file)
			fprintf(out, "%s: error: %s\n", fs, ms);
		else
			fprintf(out, "error: %s\n", ms);
	}
	pd_buf_free(&f);
	pd_buf_free(&m);
	if (d->dropped)
		fprintf(out, "(%zu more errors not shown)\n", d->dropped);
}

int pd_diags_to_err(const pd_diags *d, pd_err *e)
{
	if (d->n == 0 && d->dropped == 0)
		return 0;
	if (d->n == 0)
		return pd_err_set(e, PD_EXIT_USAGE, "%zu errors", d->dropped);
	return pd_err_setloc(e, PD_EXIT_USAGE, d->v[0].loc, "%s", d->v[0].msg);
}
