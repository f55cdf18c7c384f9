/* SPDX-License-Identifier: MIT */
/*
 * powerdag check PLAN [--json] - the independent schedulability check of a plan (optimizer/checker).
 * Exit 0 schedulable, 1 not schedulable, 2 bad usage or an unreadable plan.
 */
#include "cli/cli_impl.h"
#include "optimizer/checker/pd_check.h"

#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static json_t *violation_json(const struct pd_check_violation *v)
{
	return json_pack("{s:s, s:s, s:f, s:f, s:s}", "kind", pd_check_kind_name(v->kind), "where", v->where,
			 "value", v->value, "limit", v->limit, "unit", v->unit);
}

static json_t *report_json(const pd_check_report *r, const pd_plan *p)
{
	json_t *viol = json_array(), *cores = json_array(), *dags = json_array();
	for (size_t i = 0; i < r->n_v; i++)
		json_array_append_new(viol, violation_json(&r->v[i]));
	for (size_t k = 0; k < r->n_cores; k++) {
		const struct pd_check_core *c = &r->cores[k];
		json_array_append_new(cores, json_pack("{s:i, s:I, s:f, s:f, s:f, s:f, s:f, s:I, s:b}", "cpu", c->cpu,
						       "tasks", (json_int_t)c->n_tasks, "density", c->density,
						       "density_limit", c->density_limit, "admission", c->admission,
						       "admission_limit", c->admission_limit, "reclaimable", c->reclaimable,
						       "reclaiming", (json_int_t)c->n_reclaim, "reclaim_allowed",
						       c->reclaim_allowed));
	}
	for (size_t g = 0; g < r->n_dags; g++) {
		const struct pd_check_dag *d = &r->dags[g];
		json_array_append_new(dags, json_pack("{s:s, s:f, s:f, s:f}", "name",
						      pd_dags_dag(pd_plan_dags(p), d->dag)->name, "finish_ms",
						      (double)d->finish_ns / 1e6, "deadline_ms", (double)d->deadline_ns / 1e6,
						      "relative_slack", d->relative_slack));
	}
	return json_pack("{s:b, s:o, s:f, s:o, s:o}", "schedulable", r->schedulable, "violations", viol,
			 "min_relative_slack", r->min_relative_slack, "cores", cores, "dags", dags);
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {NULL, 0, NULL, 0}};
	bool json = false;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c != 'j')
			return pd_cli_fail("check", PD_EXIT_USAGE, "usage: powerdag %s", pd_cmd_check.usage);
		json = true;
	}
	if (optind != argc - 1)
		return pd_cli_fail("check", PD_EXIT_USAGE, "expected one PLAN file (usage: powerdag %s)",
				   pd_cmd_check.usage);
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *p = pd_plan_load_file(argv[optind], &d);
	if (!p) {
		pd_diags_print(&d, stderr);
		pd_diags_free(&d);
		return PD_EXIT_USAGE;
	}
	pd_diags_free(&d);
	pd_err e = {0};
	pd_check_report *r = pd_check_plan(p, &e);
	if (!r) {
		pd_plan_free(p);
		return pd_cli_fail("check", e.code ? e.code : PD_EXIT_ENV, "%s", e.msg);
	}
	int rc = r->schedulable ? PD_EXIT_OK : PD_EXIT_FAIL;
	if (json) {
		json_t *j = report_json(r, p);
		if (!j || json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) != 0)
			rc = pd_cli_fail("check", PD_EXIT_ENV, "cannot write the JSON report");
		else
			fputc('\n', stdout);
		json_decref(j);
	} else {
		pd_check_print(r, p, stdout);
	}
	pd_check_report_free(r);
	pd_plan_free(p);
	return rc;
}

const struct pd_cmd pd_cmd_check = {
	"check", run, "independent schedulability check of a plan (does not trust the optimizer)",
	"check PLAN [--json]\n\n"
	"Recomputes, from the plan alone, WCETs at the chosen OPPs, per-core densities sum C/d against\n"
	"U_max minus the fair-server share, every source->sink path bound, accelerator loads and FIFO\n"
	"response bounds, FPGA slots, SCHED_DEADLINE parameter limits and the kernel admission test.\n"
	"Lists every violation with its value and limit.\n\n"
	"  --json   one JSON object: schedulable, violations [{kind, where, value, limit, unit}], cores, dags\n\n"
	"exit: 0 schedulable, 1 not schedulable, 2 bad usage or input"};
