/* SPDX-License-Identifier: MIT */
#include "helper_dags.h"
#include "pd_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pd_dagset *dt_load_text(const char *text, pd_diags *d, const char **path)
{
	const char *p = pd_test_write(pd_test_tmpdir(), "dags.yaml", text);
	if (path)
		*path = p;
	return pd_dags_load_file(p, d);
}

pd_dagset *dt_parse_mem(const char *text, size_t len, pd_diags *d)
{
	pd_ydoc doc;
	pd_dagset *s = NULL;
	if (pd_yaml_load(&doc, "mem.yaml", text, len, d) == 0)
		s = pd_dags_from_doc(&doc, d);
	pd_yaml_free(&doc);
	return s;
}

int dt_has_diag(const pd_diags *d, int line, int col, const char *substr)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].loc.line == line && (col == 0 || d->v[i].loc.col == col) && strstr(d->v[i].msg, substr))
			return 1;
	return 0;
}

void dt_expect_error_at(const char *file, int at, const char *text, int line, int col, const char *substr)
{
	pd_diags d;
	const char *path;
	pd_diags_init(&d);
	pd_dagset *s = dt_load_text(text, &d, &path);
	int ok = !s && dt_has_diag(&d, line, col, substr);
	if (!ok) {
		fprintf(stderr, "%s:%d: expected error %d:%d '%s', got %s and:\n", file, at, line, col, substr,
			s ? "a set" : "NULL");
		pd_diags_print(&d, stderr);
	}
	/* every diagnostic names the file it came from (not a dangling copy) */
	for (size_t i = 0; ok && i < d.n; i++)
		ok = d.v[i].loc.file && strcmp(d.v[i].loc.file, path) == 0;
	pd_dags_free(s);
	pd_diags_free(&d);
	ck_assert_msg(ok, "%s:%d: expected error at %d:%d containing '%s'", file, at, line, col, substr);
}

char *dt_format(const pd_dagset *s)
{
	pd_buf b;
	pd_err e = {0};
	pd_buf_init(&b);
	ck_assert_int_eq(pd_dags_format(s, &b, &e), 0);
	return b.data;
}
