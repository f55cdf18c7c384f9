/* SPDX-License-Identifier: MIT */
/*
 * `powerdag refit`: model files from measured runs (reports/pd_reports.h, docs/REFIT.md). The runs are read
 * with the report's loader (load.c, runlog_import.c), so a run directory means the same thing to
 * `report` and to `refit`; what refit adds is stricter input rules (a run log is required, runs must
 * share their DAG set and platform) and the two fits (refit_wcet.c, refit_power.c).
 */
#include "reports/pd_reports.h"
#include "reports/refit_impl.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void pd_report_refit_defaults(struct pd_report_refit_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->what = PD_REPORT_REFIT_WCET;
	o->quantile = 0.999;
	o->margin = 1.1;
	o->min_samples = 0; /* 0: the default of the fit (20 jobs per task, 3 windows per OPP) */
	o->window_ns = PD_NS_PER_S;
	o->min_spread = 0.1;
}

/* Canonical text of a platform: two platforms are the same when these are equal. */
static char *platform_text(const pd_platform *p)
{
	pd_buf b;
	pd_buf_init(&b);
	pd_yemit *y = pd_yemit_new(&b);
	if (!y)
		return NULL;
	pd_platform_emit(p, y);
	if (pd_yemit_finish(y, NULL) != 0) {
		pd_buf_free(&b);
		return NULL;
	}
	pd_buf_append(&b, "", 1);
	return b.data;
}

static int same_inputs(const struct refit_in *in, size_t i, pd_err *e)
{
	const pd_plan *p0 = in->runs[0]->run->plan, *pi = in->runs[i]->run->plan;
	if (!pd_dags_equal(pd_plan_dags(p0), pd_plan_dags(pi)))
		return pd_err_set(e, PD_EXIT_USAGE,
				  "%s: its plan's DAG set differs from %s's: refit combines runs of one DAG set and "
				  "one platform",
				  in->dirs[i], in->dirs[0]);
	char *a = platform_text(pd_plan_platform(p0)), *b = platform_text(pd_plan_platform(pi));
	int same = a && b && strcmp(a, b) == 0;
	free(a);
	free(b);
	if (!same)
		return pd_err_set(e, PD_EXIT_USAGE,
				  "%s: its plan's platform (%s) differs from %s's (%s): refit combines runs of one DAG "
				  "set and one platform",
				  in->dirs[i], pd_platform_name(pd_plan_platform(pi)), in->dirs[0],
				  pd_platform_name(pd_plan_platform(p0)));
	return 0;
}

static int load_one(struct refit_in *in, size_t i, pd_buf *text, pd_err *e)
{
	const char *dir = in->dirs[i];
	struct stat st;
	if (stat(dir, &st) != 0)
		return pd_err_set(e, PD_EXIT_USAGE, "%s: no such run directory (%s)", dir, strerror(errno));
	in->runs[i] = pd_report_open(dir, e);
	if (!in->runs[i])
		return e && e->code ? e->code : PD_EXIT_USAGE;
	const struct rpt_run *r = in->runs[i]->run;
	if (!r->has_log)
		return pd_err_set(e, PD_EXIT_USAGE,
				  "%s/run.pdlog is missing: nothing to refit from (the agent never started, or its log "
				  "was not collected)",
				  dir);
	if (r->log_plan_hash != pd_plan_hash(r->plan))
		return pd_err_set(e, PD_EXIT_USAGE,
				  "%s: run.pdlog is of another plan (plan hash %016llx, plan.yaml %016llx): its samples "
				  "would be attributed to the wrong placements and OPPs",
				  dir, (unsigned long long)r->log_plan_hash, (unsigned long long)pd_plan_hash(r->plan));
	if (r->incomplete)
		pd_buf_printf(text, "note: %s is incomplete (%s); its %zu complete job records and %zu power ticks are "
				    "used\n",
			      dir, r->incomplete_why, r->n_jobs, r->n_rails ? r->rails[0].n : (size_t)0);
	return i > 0 ? same_inputs(in, i, e) : 0;
}

static void free_in(struct refit_in *in)
{
	for (size_t i = 0; i < in->n; i++)
		pd_report_free(in->runs[i]);
	free(in->runs);
}

static json_t *runs_json(const struct refit_in *in)
{
	json_t *a = json_array();
	for (size_t i = 0; i < in->n; i++) {
		const struct rpt_run *r = in->runs[i]->run;
		json_array_append_new(a, json_pack("{s:s, s:b, s:s?, s:I, s:f}", "rundir", in->dirs[i], "complete",
						   !r->incomplete, "incomplete_reason", r->incomplete ? r->incomplete_why : NULL,
						   "jobs", (json_int_t)r->n_jobs, "duration_s", (double)r->duration_ns / 1e9));
	}
	return a;
}

/* Writes the fitted document after checking that it reads back as a valid file of its kind. */
int refit_write_checked(const pd_buf *doc, const char *out, bool platform, pd_err *e)
{
	pd_ydoc y = {0};
	pd_diags d;
	pd_diags_init(&d);
	int ok = pd_yaml_load(&y, out, doc->data, doc->len, &d) == 0;
	if (ok && platform) {
		pd_platform *p = pd_platform_from_node(pd_ymap_get(y.root, "platform"), &d);
		ok = p != NULL;
		pd_platform_free(p);
	} else if (ok) {
		pd_dagset *s = pd_dags_from_doc(&y, &d);
		ok = s != NULL;
		pd_dags_free(s);
	}
	if (!ok) {
		/* the setters keep the invariants; reaching this is a bug, said as such */
		int rc = pd_err_set(e, PD_EXIT_USAGE, "internal error: the fitted %s does not validate (%s); nothing written",
				    platform ? "platform" : "DAG set", d.n ? d.v[0].msg : "?");
		pd_diags_free(&d);
		pd_yaml_free(&y);
		return rc;
	}
	pd_diags_free(&d);
	pd_yaml_free(&y);
	return pd_write_file_atomic(out, doc->data, doc->len, e);
}

static int check_opts(const struct pd_report_refit_opts *o, pd_err *e)
{
	if (!(o->quantile > 0 && o->quantile <= 1))
		return pd_err_set(e, PD_EXIT_USAGE, "--quantile %g: must be in (0, 1]", o->quantile);
	if (!(o->margin >= 1e-3 && o->margin <= 1000))
		return pd_err_set(e, PD_EXIT_USAGE, "--margin %g: must be in [0.001, 1000]", o->margin);
	if (o->window_ns < PD_NS_PER_MS)
		return pd_err_set(e, PD_EXIT_USAGE, "--window must be at least 1ms");
	if (!(o->min_spread >= 0))
		return pd_err_set(e, PD_EXIT_USAGE, "--min-spread must be >= 0");
	return 0;
}

int pd_report_refit_run(const char *const *rundirs, size_t n, const struct pd_report_refit_opts *o, const char *out, pd_buf *text,
		 pd_buf *json, pd_err *e)
{
	if (n == 0)
		return pd_err_set(e, PD_EXIT_USAGE, "no run directory given");
	int rc = check_opts(o, e);
	if (rc)
		return rc;
	struct refit_in in = {.dirs = rundirs, .n = n, .runs = calloc(n, sizeof(pd_report *))};
	if (!in.runs)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = load_one(&in, i, text, e);
	json_t *root = NULL;
	if (rc == 0) {
		root = json_pack("{s:s, s:s, s:o}", "what",
				 o->what == PD_REPORT_REFIT_WCET ? "wcet" : o->what == PD_REPORT_REFIT_POWER ? "power" : "background", "out", out, "runs",
				 runs_json(&in));
		rc = o->what == PD_REPORT_REFIT_WCET ? refit_wcet(&in, o, out, text, root, e) : refit_power(&in, o, out, text, root, e);
	}
	if (rc == 0 && json) {
		char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		if (!s || pd_buf_append(json, s, strlen(s)) || pd_buf_append(json, "\n", 1))
			rc = pd_err_set(e, PD_EXIT_ENV, "out of memory");
		free(s);
	}
	json_decref(root);
	free_in(&in);
	return rc;
}
