/* SPDX-License-Identifier: MIT */
/*
 * pd_refit.h - `powerdag refit RUNDIR... -o OUT`: closes the loop from runs back to the model files
 * (docs/REFIT.md).
 *
 *   --what wcet   new WCETs from the measured job execution times: per CPU task, the chosen quantile
 *                 of its samples times a margin, never below the observed maximum unless asked,
 *                 converted back through the inverse of the WCET law (docs/MODEL.md) to the reference
 *                 frequency and capacity 1.0 the DAG file holds; writes a DAG-set file.
 *   --what power  per island and OPP the runs ran at, busy and idle power solved from the measured
 *                 rail power against the measured busy fraction (windows of the runs); the base power
 *                 from a rail measuring "base"; every other entry kept; writes a platform file.
 *
 * Inputs are run directories (plan.yaml + run.pdlog, read through the report's loader); they must
 * share one DAG set and one platform (their plans may differ, e.g. in OPPs). A truncated run (agent
 * killed) is used for its complete records. Every bad input returns PD_EXIT_USAGE and writes nothing;
 * the output is written atomically.
 */
#ifndef PD_REFIT_H
#define PD_REFIT_H

#include "core/pd_core.h"

#include <stdbool.h>

enum pd_refit_what { PD_REFIT_WCET = 0, PD_REFIT_POWER };

struct pd_refit_opts {
	enum pd_refit_what what;
	double quantile;      /* (0, 1]: nearest rank over the samples; default 0.999 */
	double margin;        /* >= 1e-3: multiplies the quantile; default 1.1 */
	bool allow_below_max; /* let quantile x margin fall below the largest sample; default false */
	size_t min_samples;   /* a CPU task (an island/OPP) with fewer samples (windows) is refused; default 20 (3) */
	int64_t window_ns;    /* power: length of one observation window; default 1 s */
	double min_spread;    /* power: busy-fraction spread (cores) for a two-parameter fit; default 0.1 */
};

void pd_refit_defaults(struct pd_refit_opts *o);

/*
 * Fits from the n run directories and writes out (a DAG-set or a platform file, atomically). The
 * explanation of the fit is appended to text (human) and, when json != NULL, as one JSON object with
 * a trailing newline to json. Returns 0, or the error's exit code (PD_EXIT_USAGE for bad input, with
 * nothing written; PD_EXIT_ENV when out cannot be written).
 */
int pd_refit_run(const char *const *rundirs, size_t n, const struct pd_refit_opts *o, const char *out, pd_buf *text,
		 pd_buf *json, pd_err *e);

#endif /* PD_REFIT_H */
