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
/* One JSON object (SPEC 1 `report --json`), with a trailing newline. */
int pd_report_json(const pd_report *r, pd_buf *out, pd_err *e);
/* DIR/instances.csv, DIR/power.csv, DIR/tasks.csv (DIR is created when missing). */
int pd_report_write_csv(const pd_report *r, const char *dir, pd_err *e);
/* One self-contained HTML file: inline SVG plots, no network fetches. */
int pd_report_write_html(const pd_report *r, const char *path, pd_err *e);
/* Chrome trace-event JSON, loadable in Perfetto UI / chrome://tracing. */
int pd_report_write_perfetto(const pd_report *r, const char *path, pd_err *e);

#endif /* PD_REPORTS_H */
