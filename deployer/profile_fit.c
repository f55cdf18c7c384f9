/* SPDX-License-Identifier: MIT */
/*
 * profile_fit.c - from the measurements of profile_steps.c to the fitted platform (docs/PROFILE.md):
 * OPP idle/busy powers per core or device, the builtin:spin speed and the capacity it implies (flags
 * only), job_overhead per island, dl.budget_margin, GPU latency checks; then the provenance block
 * and the text/JSON summary.
 */
#include "deployer/profile_impl.h"
#include "deployer/board_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void value(struct prof *c, json_t *v) { json_array_append_new(c->values, v); }

static json_t *pw_value(const char *what, double w, double sd, long n)
{
	char p[32], s[32];
	return json_pack("{s:s, s:s, s:i, s:s}", "what", what, "value", pd_fmt_power(llround(w * 1e6), p, sizeof(p)), "samples",
			 (int)n, "spread", pd_fmt_power(llround(sd * 1e6), s, sizeof(s)));
}

static int fit_opps(struct prof *c, bool accel, size_t idx, const char *name, const struct pd_opp *opps, size_t n_opps,
		    struct isl_res *r, pd_err *e)
{
	for (size_t j = 0; j < n_opps && r->opps; j++) {
		struct opp_res *o = &r->opps[j];
		if (!o->have_pw)
			continue;
		int64_t idle = llround(o->idle_w * 1e6), busy = llround(o->busy_w * 1e6);
		char f[32], what[200];
		pd_fmt_freq(opps[j].freq_khz, f, sizeof(f));
		if (idle < 0)
			idle = 0;
		if (busy < idle) {
			profile_flag(c, "%s at %s: measured busy power below idle (%.1f < %.1f mW): busy set to idle", name, f,
			     o->busy_w * 1e3, o->idle_w * 1e3);
			busy = idle;
		}
		if ((accel ? pd_platform_set_gpu_opp_power(c->fit, idx, j, busy, idle)
			   : pd_platform_set_opp_power(c->fit, idx, j, busy, idle)) != 0)
			return pd_err_set(e, PD_EXIT_ENV, "%s at %s: cannot set the fitted power", name, f);
		snprintf(what, sizeof(what), "%s.%s.opps.%s.idle", accel ? "accelerators" : "islands", name, f);
		value(c, pw_value(what, o->idle_w, o->idle_sd, o->n_idle));
		snprintf(what, sizeof(what), "%s.%s.opps.%s.busy", accel ? "accelerators" : "islands", name, f);
		json_t *v = pw_value(what, o->busy_w, o->busy_sd, o->n_busy);
		json_object_set_new(v, "busy_fraction", json_real(round(o->busy_frac * 1e4) / 1e4));
		value(c, v);
	}
	return 0;
}

/* Frequency of the measurement at index j of island k (the OPP, or the only OPP). 0 unknown. */
static int64_t meas_khz(const struct pd_island *isl, size_t j)
{
	if (j < isl->n_opps)
		return isl->opps[j].freq_khz;
	return isl->n_opps == 1 ? isl->opps[0].freq_khz : 0;
}

/* builtin:spin speed: kappa * f scaling per island, against the fastest island's top measurement. */
static void fit_spin(struct prof *c)
{
	size_t K = pd_platform_island_count(c->nom);
	long anchor = -1;
	size_t aj = 0;
	for (size_t k = 0; k < K; k++) {
		const struct pd_island *isl = pd_platform_island(c->nom, k);
		if (anchor >= 0 && isl->capacity <= pd_platform_island(c->nom, (size_t)anchor)->capacity)
			continue;
		for (size_t j = isl->n_opps + 1; j-- > 0;)
			if (c->isl[k].opps && c->isl[k].opps[j].have_rate && meas_khz(isl, j)) {
				anchor = (long)k, aj = j;
				break;
			}
	}
	for (size_t k = 0; k < K; k++) {
		const struct pd_island *isl = pd_platform_island(c->nom, k);
		struct isl_res *r = &c->isl[k];
		double kap[128];
		size_t nk = 0;
		long lo = -1, hi = -1;
		for (size_t j = 0; j <= isl->n_opps && r->opps; j++) {
			if (!r->opps[j].have_rate)
				continue;
			char f[32], what[200];
			int64_t khz = meas_khz(isl, j);
			if (khz)
				pd_fmt_freq(khz, f, sizeof(f));
			else
				snprintf(f, sizeof(f), "current");
			snprintf(what, sizeof(what), "islands.%s.spin.%s", isl->name, f);
			json_t *v = json_pack("{s:s, s:f, s:s, s:i}", "what", what, "value", round(r->opps[j].rate * 1e6) / 1e6,
					      "unit", "iterations/ns", "samples", (int)isl->n_cpus);
			if (anchor >= 0 && khz) {
				const struct pd_island *ai = pd_platform_island(c->nom, (size_t)anchor);
				double ka = ai->capacity * (r->opps[j].rate / c->isl[anchor].opps[aj].rate) *
					    ((double)meas_khz(ai, aj) / (double)khz);
				json_object_set_new(v, "capacity", json_real(round(ka * 1e4) / 1e4));
				if (nk < 128)
					kap[nk++] = ka;
			}
			value(c, v);
			if (j < isl->n_opps) {
				if (lo < 0)
					lo = (long)j;
				hi = (long)j;
			}
		}
		if (lo >= 0 && hi > lo) { /* does the speed follow the frequency? */
			double sr = r->opps[hi].rate / r->opps[lo].rate;
			double fr = (double)isl->opps[hi].freq_khz / (double)isl->opps[lo].freq_khz;
			if (fabs(sr / fr - 1) > 0.10) {
				char a[32], b[32];
				profile_flag(c, "island %s: builtin:spin speed does not follow the frequency (x%.2f from %s to %s, the frequency "
					"x%.2f): cpufreq does not change this CPU's speed (an emulated board, or clocks the firmware "
					"manages); the agent scales spin work by the frequency it reads; capacity not checked",
				     isl->name, sr, pd_fmt_freq(isl->opps[lo].freq_khz, a, sizeof(a)),
				     pd_fmt_freq(isl->opps[hi].freq_khz, b, sizeof(b)), fr);
				continue;
			}
		}
		if (nk && anchor >= 0 && (long)k != anchor) {
			qsort(kap, nk, sizeof(double), profile_cmp_double);
			double med = kap[nk / 2];
			if (fabs(med / isl->capacity - 1) > 0.05)
				profile_flag(c, "island %s: measured capacity %.3f (builtin:spin against island %s), the platform says %.3f",
				     isl->name, med, pd_platform_island(c->nom, (size_t)anchor)->name, isl->capacity);
		}
	}
}

static void fit_overhead(struct prof *c)
{
	for (size_t k = 0; k < pd_platform_island_count(c->nom); k++) {
		struct isl_res *r = &c->isl[k];
		if (!r->have_ov)
			continue;
		const struct pd_island *isl = pd_platform_island(c->nom, k);
		int64_t ns = r->ov_ns < PD_JOB_OVERHEAD_MAX_NS ? r->ov_ns : PD_JOB_OVERHEAD_MAX_NS;
		pd_platform_set_job_overhead(c->fit, (long)k, ns);
		char what[200], v[32], a[32], b[32], d[32], m[32];
		snprintf(what, sizeof(what), "islands.%s.job_overhead", isl->name);
		value(c, json_pack("{s:s, s:s, s:f, s:i, s:s, s:s, s:s, s:s}", "what", what, "value",
				   pd_fmt_duration(ns, v, sizeof(v)), "quantile", 0.999, "samples", (int)r->ov_samples, "p50",
				   pd_fmt_duration(r->ov_p50_ns, a, sizeof(a)), "p99", pd_fmt_duration(r->ov_p99_ns, b, sizeof(b)),
				   "max", pd_fmt_duration(r->ov_max_ns, d, sizeof(d)), "mean",
				   pd_fmt_duration(r->ov_mean_ns, m, sizeof(m))));
	}
}

/* dl.budget_margin from the spread step (docs/PROFILE.md): the 99th percentile's excess, rounded up to
 * 0.01. The rarer, larger excesses (a stall the kernel charged to the thread) are left to the
 * late-instance policy: covering them would reserve for the worst vCPU stall. */
static void fit_margin(struct prof *c)
{
	if (!c->have_spread)
		return;
	double m = ceil((c->spread_p99 - 1.0) * 100.0 - 1e-9) / 100.0;
	if (m < 0)
		m = 0;
	if (m > MARGIN_MAX) {
		profile_flag(c, "builtin:spin jobs took up to %.2f x their calibrated CPU time (99th percentile) with every CPU busy: "
			"the margin is capped at %.2f; measure the WCETs under load instead (powerdag refit)",
		     c->spread_p99, MARGIN_MAX);
		m = MARGIN_MAX;
	}
	pd_platform_set_budget_margin(c->fit, m);
	value(c, json_pack("{s:s, s:f, s:f, s:i, s:f, s:f, s:f}", "what", "dl.budget_margin", "value", m, "quantile", 0.99,
			   "samples", (int)c->spread_jobs, "p50", c->spread_p50, "p99", c->spread_p99, "max", c->spread_max));
}

/* dl.fair_server: a board fact, not a measurement. The fair deadline server of a kernel >= 6.12 takes
 * its share of every CPU's DL bandwidth whether the platform declares it or not; a platform that does
 * not gives the optimizer a capacity the kernel's admission then refuses. Read from debugfs, or the
 * kernel's default when debugfs is unreadable (the deployer then leaves it alone and counts it). A
 * nominal platform that declares one keeps its own: the deploy configures it. */
static void fit_fair_server(struct prof *c)
{
	if (pd_platform_dl(c->nom)->has_fair_server || !c->b)
		return;
	int64_t rt = 0, per = 0;
	int fs = board_fair_server(c->b, &rt, &per);
	if (fs == 0 || rt == 0)
		return;
	if (pd_platform_set_fair_server(c->fit, rt, per) != 0) {
		profile_flag(c, "the board's fair server (%lld ns every %lld ns) leaves no SCHED_DEADLINE bandwidth under "
				"dl.max_util_per_cpu: not written", (long long)rt, (long long)per);
		return;
	}
	char v[64];
	snprintf(v, sizeof(v), "%gms/%gms", (double)rt / 1e6, (double)per / 1e6);
	value(c, json_pack("{s:s, s:s, s:I, s:I, s:s}", "what", "dl.fair_server", "value", v, "runtime_ns", (json_int_t)rt,
			   "period_ns", (json_int_t)per, "source",
			   fs == 1 ? "read from /sys/kernel/debug/sched/fair_server/cpu0"
				   : "kernel >= 6.12 with debugfs unreadable: the kernel's default assumed"));
}

static void fit_accel_latency(struct prof *c)
{
	for (size_t a = 0; a < pd_platform_accel_count(c->nom); a++) {
		const struct pd_accelerator *ac = pd_platform_accel(c->nom, a);
		struct isl_res *r = &c->acc[a];
		for (size_t j = 0; r->opps && j <= ac->n_opps; j++) {
			struct opp_res *o = &r->opps[j];
			if (o->jobs <= 0)
				continue;
			char f[32], what[200], v[32];
			if (j < ac->n_opps)
				pd_fmt_freq(ac->opps[j].freq_khz, f, sizeof(f));
			else
				snprintf(f, sizeof(f), "current");
			snprintf(what, sizeof(what), "accelerators.%s.latency.%s", ac->name, f);
			json_t *x = json_pack("{s:s, s:s, s:i}", "what", what, "value",
					      pd_fmt_duration(llround(o->latency_ns), v, sizeof(v)), "samples", (int)o->jobs);
			if (!isnan(o->latency_expect_ns)) {
				char m[32];
				json_object_set_new(x, "model", json_string(pd_fmt_duration(llround(o->latency_expect_ns), m, sizeof(m))));
				if (fabs(o->latency_ns / o->latency_expect_ns - 1) > 0.05)
					profile_flag(c, "GPU %s at %s: a %d us job (at the top OPP) takes %.0f us, the model says %.0f us", ac->name,
					     f, ACCEL_LATENCY_US, o->latency_ns / 1e3, o->latency_expect_ns / 1e3);
			}
			value(c, x);
		}
	}
}

/* JSON scalars as YAML: strings as strings, numbers as numbers. */
static void yaml_scalar(pd_yemit *y, const json_t *v)
{
	if (json_is_string(v))
		pd_yemit_str(y, json_string_value(v));
	else if (json_is_integer(v))
		pd_yemit_int(y, json_integer_value(v));
	else if (json_is_real(v))
		pd_yemit_double(y, json_real_value(v));
	else
		pd_yemit_str(y, "");
}

static void yaml_list(pd_yemit *y, const char *key, const json_t *a)
{
	pd_yemit_key(y, key);
	pd_yemit_seq_begin(y, false);
	for (size_t i = 0; i < json_array_size(a); i++) {
		const json_t *it = json_array_get(a, i);
		if (!json_is_object(it)) {
			yaml_scalar(y, it);
			continue;
		}
		pd_yemit_map_begin(y, true);
		const char *k;
		const json_t *v;
		json_object_foreach((json_t *)it, k, v)
		{
			pd_yemit_key(y, k);
			yaml_scalar(y, v);
		}
		pd_yemit_map_end(y);
	}
	pd_yemit_seq_end(y);
}

static int provenance(struct prof *c, pd_err *e)
{
	pd_buf b;
	pd_buf_init(&b);
	pd_yemit *y = pd_yemit_new(&b);
	if (!y)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	const struct pd_deploy_board_info *in = pd_deploy_board_info(c->b);
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "tool", "powerdag profile " PD_VERSION);
	pd_yemit_kv_str(y, "board", c->o->board_uri);
	pd_yemit_kv_str(y, "hostname", c->hostname);
	pd_yemit_kv_str(y, "kernel", in->kernel);
	pd_yemit_kv_str(y, "kernel_version", c->kernel_version);
	pd_yemit_kv_str(y, "machine", in->arch);
	pd_yemit_kv_str(y, "date", c->date);
	pd_yemit_kv_str(y, "nominal", c->o->platform_path);
	pd_yemit_kv_double(y, "seconds", round(c->seconds * 10) / 10);
	if (c->load1 >= 0)
		pd_yemit_kv_double(y, "load_average", round(c->load1 * 100) / 100);
	if (c->cpus_online > 0)
		pd_yemit_kv_int(y, "cpus_online", c->cpus_online);
	yaml_list(y, "values", c->values);
	if (json_array_size(c->skipped))
		yaml_list(y, "skipped", c->skipped);
	if (json_array_size(c->flags))
		yaml_list(y, "flags", c->flags);
	pd_yemit_map_end(y);
	int rc = pd_yemit_finish(y, e);
	pd_ydoc doc = {0};
	pd_diags d;
	pd_diags_init(&d);
	if (rc == 0 && (pd_yaml_load(&doc, "<provenance>", b.data, b.len, &d) != 0 || !doc.root ||
			pd_platform_set_provenance(c->fit, doc.root) != 0))
		rc = pd_err_set(e, PD_EXIT_ENV, "cannot build the provenance block");
	pd_yaml_free(&doc);
	pd_diags_free(&d);
	pd_buf_free(&b);
	return rc;
}

/* The board was busy before the steps: more runnable threads than 3/4 of its CPUs, on average over
 * the last minute. The overhead and the margin are quantiles of what the board did under that load
 * (on the 2-CPU test VM the fitted margin was 0.5 at load 4.5 and 0.15 at load 2.2 a minute later), so
 * they hold for a board as busy as that, and reserve more than a quieter board needs. Said, not
 * corrected: the load of the board in use is the user's to know. */
static void flag_busy(struct prof *c)
{
	if (c->load1 < 0 || c->cpus_online <= 0 || c->load1 <= 0.75 * (double)c->cpus_online)
		return;
	profile_flag(c, "the board was busy before the steps (load average %.2f on %ld CPUs): the per-job overhead and "
			"the budget margin include that load; profile again when the board is as it will be in use",
		     c->load1, c->cpus_online);
}

int profile_fit_and_write(struct prof *c, pd_err *e)
{
	flag_busy(c);
	fit_overhead(c);
	fit_margin(c);
	fit_fair_server(c);
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < pd_platform_island_count(c->nom); k++) {
		const struct pd_island *isl = pd_platform_island(c->nom, k);
		rc = fit_opps(c, false, k, isl->name, isl->opps, isl->n_opps, &c->isl[k], e);
	}
	for (size_t a = 0; rc == 0 && a < pd_platform_accel_count(c->nom); a++) {
		const struct pd_accelerator *ac = pd_platform_accel(c->nom, a);
		if (ac->kind == PD_ACCEL_GPU)
			rc = fit_opps(c, true, a, ac->name, ac->opps, ac->n_opps, &c->acc[a], e);
	}
	fit_spin(c);
	fit_accel_latency(c);
	if (rc == 0)
		rc = provenance(c, e);
	if (rc == 0)
		rc = pd_platform_write_file(c->fit, c->o->out_path, e);
	c->written = rc == 0;
	return rc;
}

char *profile_summary_text(struct prof *c)
{
	json_t *steps = json_array();
	for (size_t i = 0; i < c->n_steps; i++) {
		const struct pstep *s = &c->steps[i];
		json_t *o = json_pack("{s:s, s:s, s:f, s:f, s:s}", "step", s->title, "kind",
				      s->kind == PK_OVERHEAD ? "overhead"
				      : s->kind == PK_POWER  ? "power"
				      : s->kind == PK_SPREAD ? "spread"
							     : "accel",
				      "seconds",
				      s->seconds, "estimated_s", s->est_s, "status",
				      s->failed ? "failed" : s->seconds > 0 ? "ok" : "not run");
		if (s->failed)
			json_object_set_new(o, "error", json_string(s->error));
		if (s->retries)
			json_object_set_new(o, "retries", json_integer(s->retries));
		json_array_append_new(steps, o);
	}
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:f, s:o, s:O, s:O, s:O, s:i}", "board",
			      c->o->board_uri ? c->o->board_uri : "", "hostname", c->hostname, "kernel",
			      c->b ? pd_deploy_board_info(c->b)->kernel : "", "date", c->date, "output", c->o->out_path ? c->o->out_path : "",
			      "written", c->written, "seconds", c->seconds, "steps", steps, "skipped", c->skipped, "flags", c->flags,
			      "values", c->values, "exit_code", c->err.code);
	json_object_set_new(j, "error", c->err.code ? json_string(c->err.msg) : json_null());
	json_object_set_new(j, "restore", json_pack("{s:b, s:b}", "done", c->restore_rc == 0, "state_equal", c->state_equal));
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	return s;
}
