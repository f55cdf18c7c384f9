/* SPDX-License-Identifier: MIT */
/*
 * Frequencies read back on the board (OPP records of the run log) against the plan's OPPs: the
 * cheapest check that the deployment really pinned what the optimizer assumed. A reading of -1 means
 * the board has no cpufreq / devfreq for that component (a VM, an FPGA): counted as unreadable.
 *
 * The OPP record names its island / accelerator by index in the header's "islands" / "accelerators"
 * arrays (docs/RUNLOG.md); they are matched to the plan's platform by name.
 */
#include "runlog/pd_runlog.h"
#include "reports/run_model_impl.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static int64_t planned_khz(const pd_plan *plan, const char *name, bool accel)
{
	const pd_platform *pf = pd_plan_platform(plan);
	if (!accel) {
		long k = pd_platform_find_island(pf, name);
		return k < 0 ? 0 : pd_platform_island(pf, (size_t)k)->opps[pd_plan_island_opp(plan, (size_t)k)].freq_khz;
	}
	long a = pd_platform_find_accel(pf, name);
	if (a < 0 || pd_platform_accel(pf, (size_t)a)->kind != PD_ACCEL_GPU)
		return 0;
	return pd_platform_accel(pf, (size_t)a)->opps[pd_plan_accel_opp(plan, (size_t)a)].freq_khz;
}

/* One entry per name of the header's arrays, islands first. */
static int make_entries(struct rpt_run *r, const json_t *isl, const json_t *acc)
{
	size_t ni = json_array_size(isl), na = json_array_size(acc);
	r->freqs = calloc(ni + na + 1, sizeof(*r->freqs));
	if (!r->freqs)
		return -1;
	for (size_t i = 0; i < ni + na; i++) {
		bool accel = i >= ni;
		const json_t *o = accel ? json_array_get(acc, i - ni) : json_array_get(isl, i);
		const char *name = json_string_value(json_object_get(o, "name"));
		struct rpt_freq *f = &r->freqs[r->n_freqs++];
		f->name = pd_arena_strdup(r->arena, name ? name : "?");
		f->accel = accel;
		f->planned_khz = name ? planned_khz(r->plan, name, accel) : 0;
		f->min_khz = INT64_MAX;
		f->max_khz = -1;
	}
	return 0;
}

int rpt_import_freqs(struct rpt_run *r, const pd_runlog *log)
{
	json_t *h = json_loads(pd_runlog_header_json(log), 0, NULL);
	const json_t *isl = json_object_get(h, "islands"), *acc = json_object_get(h, "accelerators");
	size_t ni = json_array_size(isl), na = json_array_size(acc);
	int rc = make_entries(r, isl, acc);
	json_decref(h);
	if (rc)
		return rc;
	for (size_t i = 0; i < pd_runlog_opp_count(log); i++) {
		const struct pd_runlog_opp_rec *o = pd_runlog_opp(log, i);
		bool accel = o->kind == PD_RUNLOG_OPP_ACCEL;
		if ((accel && o->index >= na) || (!accel && o->index >= ni))
			continue;
		struct rpt_freq *f = &r->freqs[accel ? ni + o->index : o->index];
		f->snapshots++;
		if (o->freq_khz < 0) {
			f->unreadable++;
			continue;
		}
		f->min_khz = o->freq_khz < f->min_khz ? o->freq_khz : f->min_khz;
		f->max_khz = o->freq_khz > f->max_khz ? o->freq_khz : f->max_khz;
	}
	for (size_t i = 0; i < r->n_freqs; i++)
		if (r->freqs[i].max_khz < 0)
			r->freqs[i].min_khz = -1; /* no readable snapshot */
	r->starvation_boosts = pd_runlog_starve_count(log);
	return 0;
}
