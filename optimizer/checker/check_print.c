/* SPDX-License-Identifier: MIT */
/* check_print.c - the human-readable report of `powerdag check`. */
#include "optimizer/checker/pd_check.h"

#include <string.h>

static void print_value(FILE *out, double v, const char *unit)
{
	if (strcmp(unit, "ns") == 0) {
		char b[32];
		fprintf(out, "%s", pd_fmt_duration((int64_t)v, b, sizeof(b)));
	} else if (strcmp(unit, "slots") == 0) {
		fprintf(out, "%.0f slots", v);
	} else if (strcmp(unit, "tasks") == 0) {
		fprintf(out, "%.0f tasks", v);
	} else {
		fprintf(out, "%.9f", v);
	}
}

/* How the value breaks its limit: most rules are upper bounds, a few are lower bounds. */
static const char *relation(const struct pd_check_violation *v)
{
	switch (v->kind) {
	case PD_CK_WCET:
	case PD_CK_FIFO:
	case PD_CK_RUNTIME_MIN:
	case PD_CK_RUNTIME_BUDGET:
	case PD_CK_DEADLINE_BUDGET:
		return "< minimum";
	case PD_CK_OVERHEAD:
		return "!= required";
	case PD_CK_PERIOD_RANGE:
		return v->value < v->limit ? "< minimum" : "> maximum";
	default:
		return "> limit";
	}
}

void pd_check_print(const pd_check_report *r, const pd_plan *p, FILE *out)
{
	const pd_dagset *ds = pd_plan_dags(p);
	fprintf(out, "%s: %zu violation%s\n", r->schedulable ? "schedulable" : "NOT schedulable", r->n_v,
		r->n_v == 1 ? "" : "s");
	for (size_t i = 0; i < r->n_v; i++) {
		const struct pd_check_violation *v = &r->v[i];
		fprintf(out, "  %-20s %s: ", pd_check_kind_name(v->kind), v->where);
		print_value(out, v->value, v->unit);
		fprintf(out, " %s ", relation(v));
		print_value(out, v->limit, v->unit);
		fputc('\n', out);
	}
	fprintf(out, "cores (density = sum Q/d, admission = kernel sum runtime/period incl. fair server, reclaimable =\n"
		     "U_max - admission: what GRUB hands to reclaiming tasks):\n");
	for (size_t k = 0; k < r->n_cores; k++) {
		const struct pd_check_core *c = &r->cores[k];
		if (c->n_tasks == 0)
			continue;
		fprintf(out, "  cpu:%-3d tasks %-3zu density %.6f / %.6f   admission %.6f / %.6f   reclaimable %.6f, %zu reclaiming (%s)\n",
			c->cpu, c->n_tasks, c->density, c->density_limit, c->admission, c->admission_limit, c->reclaimable,
			c->n_reclaim, c->reclaim_allowed ? "allowed" : "not allowed: constrained deadlines, several DAGs or paths");
	}
	const pd_platform *pf = pd_plan_platform(p);
	const struct pd_dl *dl = pd_platform_dl(pf);
	fprintf(out, "budget: runtime = ceil((wcet + overhead) x (1 + %g)); overhead", dl->has_budget_margin ? dl->budget_margin : 0.0);
	for (size_t k = 0; k < pd_platform_island_count(pf); k++) {
		char b[32];
		const struct pd_island *isl = pd_platform_island(pf, k);
		fprintf(out, " %s %s%s", isl->name, pd_fmt_duration(pd_platform_job_overhead_ns(pf, k), b, sizeof(b)),
			isl->has_job_overhead || dl->has_job_overhead ? "" : " (default, not measured)");
	}
	fputc('\n', out);
	fprintf(out, "dags (longest finish potential F vs deadline D):\n");
	for (size_t g = 0; g < r->n_dags; g++) {
		char f[32], d[32];
		const struct pd_check_dag *dg = &r->dags[g];
		fprintf(out, "  %-20s F %-10s D %-10s slack %.4f\n", pd_dags_dag(ds, dg->dag)->name,
			pd_fmt_duration(dg->finish_ns, f, sizeof(f)), pd_fmt_duration(dg->deadline_ns, d, sizeof(d)),
			dg->relative_slack);
	}
	fprintf(out, "minimum relative slack: %.6f\n", r->min_relative_slack);
}
