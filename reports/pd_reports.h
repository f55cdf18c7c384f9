/* SPDX-License-Identifier: MIT */
/*
 * pd_reports.h - `powerdag report RUNDIR`: turns a run directory (docs/ARCHITECTURE.md "Run
 * directory") into answers: measured power per rail and in total, energy, per-DAG instances, misses,
 * response-time percentiles and worst relative slack, overruns per task, sampling gaps, and the
 * predictions of the plan and the simulator next to the measurements.
 *
 * A report is loaded once (pd_report_open) and then written in any of the forms below; every form
 * prints the same numbers, computed once. A truncated run log (the agent was killed, the board
 * rebooted) is not an error: the report covers what the log holds and says it is incomplete
 * (pd_report_incomplete). Everything else is documented in docs/REPORTS.md.
 */
#ifndef PD_REPORTS_H
#define PD_REPORTS_H

#include "core/pd_core.h"

#include <stdbool.h>

typedef struct pd_report pd_report;

/*
 * Reads RUNDIR/plan.yaml (required), RUNDIR/run.pdlog (required; may be truncated), and the optional
 * RUNDIR/deploy.json, RUNDIR/simulate.json. Returns NULL with e->code = PD_EXIT_USAGE when RUNDIR or
 * its plan or run log is missing or unreadable, or when the log does not belong to the plan.
 */
pd_report *pd_report_open(const char *rundir, pd_err *e);
void pd_report_free(pd_report *r);

/* True when the run log ends early; why (static to the report) says where and how. */
bool pd_report_incomplete(const pd_report *r, const char **why);

/* Deadline misses measured over all DAGs (finished late, or never finished by release + D). */
uint64_t pd_report_misses(const pd_report *r);

/* Human summary for the terminal. */
int pd_report_text(const pd_report *r, pd_buf *out, pd_err *e);
/* One JSON object (docs/REPORTS.md `report --json`), with a trailing newline. */
int pd_report_json(const pd_report *r, pd_buf *out, pd_err *e);
/* DIR/instances.csv, DIR/power.csv, DIR/tasks.csv (DIR is created when missing). */
int pd_report_write_csv(const pd_report *r, const char *dir, pd_err *e);
/* One self-contained HTML file: inline SVG plots, no network fetches. */
int pd_report_write_html(const pd_report *r, const char *path, pd_err *e);
/* Chrome trace-event JSON, loadable in Perfetto UI / chrome://tracing. */
int pd_report_write_perfetto(const pd_report *r, const char *path, pd_err *e);

/* ---------------------------------------------------------------- refit
 * `powerdag refit RUNDIR... -o OUT`: closes the loop from runs back to the model files
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
/* WCET: the DAG set's WCETs; POWER: the power table, base power and the islands' background;
 * BACKGROUND: the islands' background_util only (the table kept: a profiled board, a twin whose
 * table is its truth; one short run's rail noise is not fitted into it). */
enum pd_report_refit_what { PD_REPORT_REFIT_WCET = 0, PD_REPORT_REFIT_POWER, PD_REPORT_REFIT_BACKGROUND };

struct pd_report_refit_opts {
	enum pd_report_refit_what what;
	double quantile;      /* (0, 1]: nearest rank over the samples; default 0.999 */
	double margin;        /* >= 1e-3: multiplies the quantile; default 1.1 */
	bool allow_below_max; /* let quantile x margin fall below the largest sample; default false */
	size_t min_samples;   /* a CPU task (an island/OPP) with fewer samples (windows) is refused; default 20 (3) */
	int64_t window_ns;    /* power: length of one observation window; default 1 s */
	double min_spread;    /* power: busy-fraction spread (cores) for a two-parameter fit; default 0.1 */
};

void pd_report_refit_defaults(struct pd_report_refit_opts *o);

/*
 * Fits from the n run directories and writes out (a DAG-set or a platform file, atomically). The
 * explanation of the fit is appended to text (human) and, when json != NULL, as one JSON object with
 * a trailing newline to json. Returns 0, or the error's exit code (PD_EXIT_USAGE for bad input, with
 * nothing written; PD_EXIT_ENV when out cannot be written).
 */
int pd_report_refit_run(const char *const *rundirs, size_t n, const struct pd_report_refit_opts *o, const char *out, pd_buf *text,
		 pd_buf *json, pd_err *e);

#endif /* PD_REPORTS_H */
