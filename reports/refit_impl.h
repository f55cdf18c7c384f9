/* SPDX-License-Identifier: MIT */
/* refit_impl.h - internal to reports/refit*.c: the loaded runs and the two fits. */
#ifndef PD_REPORTS_REFIT_IMPL_H
#define PD_REPORTS_REFIT_IMPL_H

#include "reports/pd_reports.h"
#include "reports/run_model_impl.h"

#include <jansson.h>

/* The run directories, loaded; runs[i]->run shares DAG set and platform with runs[0]->run. */
struct refit_in {
	const char *const *dirs;
	size_t n;
	pd_report **runs;
};

/* Each fills root (the --json object) and text, and writes out; 0 or an exit code with e set. */
int refit_wcet(const struct refit_in *in, const struct pd_report_refit_opts *o, const char *out, pd_buf *text, json_t *root,
	       pd_err *e);
int refit_power(const struct refit_in *in, const struct pd_report_refit_opts *o, const char *out, pd_buf *text,
		json_t *root, pd_err *e);
/* A measured time x at (kappa_micro, f) taken back to the reference through the inverse WCET law,
 * rounded up (refit_wcet.c). */
int64_t refit_to_reference(int64_t x, int64_t fixed, int64_t kmicro, int64_t f_khz, int64_t ref_khz);
/* Validates doc by reading it back as a platform (or a DAG set), then writes it atomically to out. */
int refit_write_checked(const pd_buf *doc, const char *out, bool platform, pd_err *e);

#endif
