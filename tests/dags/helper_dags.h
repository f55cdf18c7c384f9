/* SPDX-License-Identifier: MIT */
/* Helpers shared by the tests of dags/: parse a YAML text and look for a diagnostic. */
#ifndef PD_TEST_HELPER_DAGS_H
#define PD_TEST_HELPER_DAGS_H

#include "core/pd_core.h"
#include "dags/pd_dags.h"

/* Writes text to a fresh temporary file and loads it with pd_dags_load_file; the path used is
 * returned in *path when non-NULL (static rotating buffer). */
pd_dagset *dt_load_text(const char *text, pd_diags *d, const char **path);
/* Parses text (a whole "dags:" document) from memory, through pd_yaml_load + pd_dags_from_doc. */
pd_dagset *dt_parse_mem(const char *text, size_t len, pd_diags *d);
/* True when some diagnostic is at line:col (col 0 = any column) and contains substr. */
int dt_has_diag(const pd_diags *d, int line, int col, const char *substr);
/* Asserts that text is rejected with a diagnostic at line:col containing substr. */
#define dt_expect_error(text, line, col, substr) dt_expect_error_at(__FILE__, __LINE__, text, line, col, substr)
void dt_expect_error_at(const char *file, int at, const char *text, int line, int col, const char *substr);
/* The canonical text of a set (pd_dags_format); caller frees. */
char *dt_format(const pd_dagset *s);

#endif
