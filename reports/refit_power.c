/* SPDX-License-Identifier: MIT */
/*
 * refit --what power: power-table corrections from the measured rails at the measured utilisation
 * (docs/REFIT.md).
 *
 * Observations: every run's rail that measures an island is cut into windows of --window from its
 * first sample (a last partial window counts when at least half as long); per window, P = the mean of
 * the rail's samples in it and u = the island's measured busy fraction over it (measured_model.c:
 * everything that ran on its plan CPUs when the log has BUSY records, since the rail measured that
 * too and the jobs alone would fold the other software's power into the table; else the jobs),
 * filed under the OPP the island ran at (read back, else the plan's). Per island and OPP with n
 * observations (at least --min-samples, default 3):
 *
 *   line   when the busy fractions spread by at least --min-spread cores: least squares of
 *          P = a + b u, then idle = a / n_cores, busy = idle + b (the model's island power
 *          n P_idle + (P_busy - P_idle) u); refused (-> scale) when idle < 0 or busy < idle;
 *   scale  otherwise (a plan runs at one utilisation, so the two cannot be told apart): both powers
 *          multiplied by s = sum P M / sum M^2, the least-squares factor against the old model M(u).
 *
 * The residual is the RMS of P - model(u) over the observations, old table and new. A rail measuring
 * "base" gives base_power = the mean of its samples. Each island whose CPUs the runs' BUSY records
 * sampled gets background_util = the mean busy time beyond the jobs there (what the table's fit
 * above already counts as busy: the prediction adds it back, docs/MODEL.md). Every other entry is
 * kept as it was.
 */
#include "reports/refit_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MIN_WINDOWS 3

struct obs {
	double u, p; /* busy fraction (cores), mean rail power (W) */
};

struct entry {
	size_t n, cap;
	struct obs *v;
};

static int push(struct entry *en, double u, double p)
{
	if (en->n == en->cap) {
		size_t c = en->cap ? en->cap * 2 : 16;
		struct obs *q = realloc(en->v, c * sizeof(*q));
		if (!q)
			return -1;
		en->v = q;
		en->cap = c;
	}
	en->v[en->n++] = (struct obs){u, p};
	return 0;
}

static const struct rpt_rail *rail_of(const struct rpt_run *r, const char *measures)
{
	for (size_t k = 0; k < r->n_rails; k++)
		if (r->rails[k].measures && strcmp(r->rails[k].measures, measures) == 0 && r->rails[k].n > 0)
			return &r->rails[k];
	return NULL;
}

/* The windows of one run's rail for island k, appended to entries[opp]. */
static int observe(const struct rpt_run *r, size_t k, const struct rpt_rail *rl, int64_t win, struct entry *entries)
{
	size_t opp = rpt_measured_opp(r, false, k, NULL), i = 0;
	int64_t last = rl->t_ns[rl->n - 1];
	for (int64_t from = rl->t_ns[0]; from + win / 2 <= last; from += win) {
		int64_t to = from + win < last ? from + win : last;
		bool final = to == last;
		double sum = 0;
		size_t m = 0;
		for (; i < rl->n && (rl->t_ns[i] < to || (final && rl->t_ns[i] == to)); i++, m++)
			sum += (double)rl->uw[i] * 1e-6;
		if (m == 0)
			continue;
		if (push(&entries[opp], rpt_island_model_busy(r, k, from, to), sum / (double)m) < 0)
			return -1;
		if (final)
			break;
	}
	return 0;
}

struct fitted {
	const char *method;
	int64_t busy_uw, idle_uw;
	double spread, res_old, res_new;
};

static double rms(const struct entry *en, double n_cores, double busy_w, double idle_w)
{
	double s = 0;
	for (size_t i = 0; i < en->n; i++) {
		double d = en->v[i].p - (n_cores * idle_w + (busy_w - idle_w) * en->v[i].u);
		s += d * d;
	}
	return sqrt(s / (double)en->n);
}

static void fit(const struct entry *en, const struct pd_island *isl, const struct pd_opp *op, double min_spread,
		struct fitted *f)
{
	double nc = (double)isl->n_cpus, ob = (double)op->busy_uw * 1e-6, oi = (double)op->idle_uw * 1e-6;
	double umin = INFINITY, umax = -INFINITY, su = 0, sp = 0;
	for (size_t i = 0; i < en->n; i++) {
		umin = fmin(umin, en->v[i].u);
		umax = fmax(umax, en->v[i].u);
		su += en->v[i].u;
		sp += en->v[i].p;
	}
	f->spread = umax - umin;
	f->method = NULL;
	if (en->n >= 3 && f->spread >= min_spread && f->spread > 0) {
		double mu = su / (double)en->n, mp = sp / (double)en->n, cov = 0, var = 0;
		for (size_t i = 0; i < en->n; i++) {
			cov += (en->v[i].u - mu) * (en->v[i].p - mp);
			var += (en->v[i].u - mu) * (en->v[i].u - mu);
		}
		double b = cov / var, idle = (mp - b * mu) / nc;
		if (idle >= 0 && b >= 0) {
			f->method = "line";
			f->idle_uw = llround(idle * 1e6);
			f->busy_uw = llround((idle + b) * 1e6);
		}
	}
	if (!f->method) {
		double pm = 0, mm = 0;
		for (size_t i = 0; i < en->n; i++) {
			double m = nc * oi + (ob - oi) * en->v[i].u;
			pm += en->v[i].p * m;
			mm += m * m;
		}
		double s = mm > 0 ? pm / mm : 1;
		f->method = "scale";
		f->idle_uw = llround((double)op->idle_uw * s);
		f->busy_uw = llround((double)op->busy_uw * s);
	}
	f->res_old = rms(en, nc, ob, oi);
	f->res_new = rms(en, nc, (double)f->busy_uw * 1e-6, (double)f->idle_uw * 1e-6);
}

static int copy_platform(const pd_platform *src, pd_platform **out, pd_err *e)
{
	pd_buf b;
	pd_buf_init(&b);
	pd_yemit *y = pd_yemit_new(&b);
	*out = NULL;
	if (y) {
		pd_yemit_map_begin(y, false);
		pd_yemit_key(y, "platform");
		pd_platform_emit(src, y);
		pd_yemit_map_end(y);
	}
	pd_ydoc doc = {0};
	pd_diags d;
	pd_diags_init(&d);
	if (y && pd_yemit_finish(y, NULL) == 0 && pd_yaml_load(&doc, pd_platform_name(src), b.data, b.len, &d) == 0)
		*out = pd_platform_from_node(pd_ymap_get(doc.root, "platform"), &d);
	pd_yaml_free(&doc);
	pd_diags_free(&d);
	pd_buf_free(&b);
	return *out ? 0 : pd_err_set(e, PD_EXIT_ENV, "cannot copy the platform (out of memory)");
}

/* Island k: observations from every run, one fit per OPP with data. Returns entries changed, or -1. */
static int fit_island(const struct refit_in *in, size_t k, pd_platform *pf, const struct pd_report_refit_opts *o,
		      pd_buf *text, json_t *arr, pd_err *e)
{
	const struct pd_island *isl = pd_platform_island(pd_plan_platform(in->runs[0]->run->plan), k);
	struct entry *en = calloc(isl->n_opps, sizeof(*en));
	if (!en)
	{
		pd_err_set(e, PD_EXIT_ENV, "out of memory");
		return -1;
	}
	int changed = 0;
	size_t min = o->min_samples ? o->min_samples : DEFAULT_MIN_WINDOWS;
	for (size_t r = 0; r < in->n && changed >= 0; r++) {
		const struct rpt_rail *rl = rail_of(in->runs[r]->run, isl->name);
		if (rl && observe(in->runs[r]->run, k, rl, o->window_ns, en) < 0) {
			pd_err_set(e, PD_EXIT_ENV, "out of memory");
			changed = -1;
		}
	}
	for (size_t j = 0; j < isl->n_opps && changed >= 0; j++) {
		if (en[j].n == 0)
			continue;
		const struct pd_opp *op = &isl->opps[j];
		char fq[32], ob[32], oi[32], nb[32], ni[32];
		if (en[j].n < min) {
			pd_err_set(e, PD_EXIT_USAGE,
				   "island %s at %s: %zu observation window(s), fewer than the %zu needed (--min-samples): "
				   "run longer, or shorten --window; nothing written",
				   isl->name, pd_fmt_freq(op->freq_khz, fq, 32), en[j].n, min);
			changed = -1;
			break;
		}
		struct fitted f;
		fit(&en[j], isl, op, o->min_spread, &f);
		if (pd_platform_set_opp_power(pf, k, j, f.busy_uw, f.idle_uw) < 0) {
			pd_err_set(e, PD_EXIT_USAGE, "island %s at %s: fitted powers out of range; nothing written", isl->name,
				   pd_fmt_freq(op->freq_khz, fq, 32));
			changed = -1;
			break;
		}
		changed++;
		pd_buf_printf(text, "  %-12s %-9s %5zu  %7.4f  %-5s  busy %s -> %s  idle %s -> %s  residual %.4f W (was %.4f W)\n",
			      isl->name, pd_fmt_freq(op->freq_khz, fq, 32), en[j].n, f.spread, f.method,
			      pd_fmt_power(op->busy_uw, ob, 32), pd_fmt_power(f.busy_uw, nb, 32), pd_fmt_power(op->idle_uw, oi, 32),
			      pd_fmt_power(f.idle_uw, ni, 32), f.res_new, f.res_old);
		json_array_append_new(arr, json_pack("{s:s, s:I, s:I, s:f, s:s, s:I, s:I, s:I, s:I, s:f, s:f}", "island",
						     isl->name, "freq_khz", (json_int_t)op->freq_khz, "observations",
						     (json_int_t)en[j].n, "busy_spread", f.spread, "method", f.method,
						     "old_busy_uw", (json_int_t)op->busy_uw, "old_idle_uw",
						     (json_int_t)op->idle_uw, "new_busy_uw", (json_int_t)f.busy_uw,
						     "new_idle_uw", (json_int_t)f.idle_uw, "residual_w", f.res_new,
						     "old_residual_w", f.res_old));
	}
	for (size_t j = 0; j < isl->n_opps; j++)
		free(en[j].v);
	free(en);
	return changed;
}

/* An entry fitted next to kept ones can break the table's order (a higher OPP cheaper than a lower
 * one): legal, but the optimizer will then avoid the fitted OPP. Said, so the user profiles the island
 * or runs at the other OPPs too. */
static void order_notes(const pd_platform *pf, pd_buf *text)
{
	char a[32], b[32];
	for (size_t k = 0; k < pd_platform_island_count(pf); k++) {
		const struct pd_island *isl = pd_platform_island(pf, k);
		for (size_t j = 0; j + 1 < isl->n_opps; j++)
			if (isl->opps[j].busy_uw > isl->opps[j + 1].busy_uw || isl->opps[j].idle_uw > isl->opps[j + 1].idle_uw)
				pd_buf_printf(text, "note: island %s: %s now costs more than %s (only the OPPs the runs used were "
						    "fitted): the optimizer will avoid it; run at the other OPPs too, or profile "
						    "the island\n",
					      isl->name, pd_fmt_freq(isl->opps[j].freq_khz, a, 32),
					      pd_fmt_freq(isl->opps[j + 1].freq_khz, b, 32));
	}
}

/* base_power from the rails measuring "base": the mean of all their samples. 1 changed, 0 none. */
static int fit_base(const struct refit_in *in, pd_platform *pf, pd_buf *text, json_t *root)
{
	double sum = 0;
	size_t n = 0;
	for (size_t r = 0; r < in->n; r++) {
		const struct rpt_rail *rl = rail_of(in->runs[r]->run, "base");
		for (size_t i = 0; rl && i < rl->n; i++, n++)
			sum += (double)rl->uw[i];
	}
	if (n == 0)
		return 0;
	int64_t old = pd_platform_base_uw(pf), nw = llround(sum / (double)n);
	if (pd_platform_set_base_uw(pf, nw) < 0)
		return 0;
	char a[32], b[32];
	pd_buf_printf(text, "  base_power: %s -> %s (%zu samples)\n", pd_fmt_power(old, a, 32), pd_fmt_power(nw, b, 32), n);
	json_object_set_new(root, "base", json_pack("{s:I, s:I, s:I}", "samples", (json_int_t)n, "old_uw", (json_int_t)old,
						    "new_uw", (json_int_t)nw));
	return 1;
}

/* Island k's background_util: the mean over the runs (weighted by their length) of what ran on its
 * sampled CPUs beyond the plan's jobs (BUSY records - JOB records, measured_model.c), the "other"
 * column of the report. Runs without BUSY records do not count. 1 changed, 0 no run had them. */
static int fit_background(const struct refit_in *in, size_t k, pd_platform *pf, pd_buf *text, json_t *arr)
{
	double other = 0, span = 0;
	size_t runs = 0;
	for (size_t r = 0; r < in->n; r++) {
		const struct rpt_run *run = in->runs[r]->run;
		size_t cpus = 0;
		double all = rpt_busy_all_fraction(run, k, 0, run->duration_ns, &cpus);
		double jobs = rpt_busy_fraction(run, false, k, 0, run->duration_ns);
		if (isnan(all) || isnan(jobs) || cpus == 0 || run->duration_ns <= 0)
			continue;
		other += (all - jobs) * (double)run->duration_ns;
		span += (double)run->duration_ns;
		runs++;
	}
	if (runs == 0)
		return 0;
	const struct pd_island *isl = pd_platform_island(pf, k);
	double old = isl->background_util, b = fmax(0.0, other / span); /* jobs charged beyond busy: rounding */
	if (b > (double)isl->n_cpus)
		b = (double)isl->n_cpus;
	if (pd_platform_set_background(pf, k, b) < 0)
		return 0;
	pd_buf_printf(text, "  %-12s background_util %.6f -> %.6f cores (other software on its CPUs, %zu run%s)\n", isl->name, old,
		      isl->background_util, runs, runs == 1 ? "" : "s");
	json_array_append_new(arr, json_pack("{s:s, s:f, s:f, s:I}", "island", isl->name, "old", old, "new",
					     isl->background_util, "runs", (json_int_t)runs));
	return 1;
}

/* Rails that constrain nothing are said, so that a user knows why an entry was kept. */
static void unused_rails(const struct refit_in *in, const pd_platform *pf, pd_buf *text)
{
	const struct rpt_run *r = in->runs[0]->run;
	for (size_t k = 0; k < r->n_rails; k++) {
		const char *m = r->rails[k].measures;
		if (m && (pd_platform_find_island(pf, m) >= 0 || strcmp(m, "base") == 0))
			continue;
		pd_buf_printf(text, "  rail %s (measures %s): not fitted (refit fits rails that measure one island, or "
				    "\"base\")\n",
			      r->rails[k].name, m ? m : "?");
	}
}

int refit_power(const struct refit_in *in, const struct pd_report_refit_opts *o, const char *out, pd_buf *text, json_t *root,
		pd_err *e)
{
	const pd_platform *pf0 = pd_plan_platform(in->runs[0]->run->plan);
	bool table = o->what != PD_REPORT_REFIT_BACKGROUND;
	size_t samples = 0;
	for (size_t r = 0; r < in->n; r++)
		for (size_t k = 0; k < in->runs[r]->run->n_rails; k++)
			samples += in->runs[r]->run->rails[k].n;
	if (samples == 0 && table)
		return pd_err_set(e, PD_EXIT_USAGE,
				  "the runs have no power samples (agent run with --no-power, or no sensors): nothing to "
				  "fit the power table from; nothing written");
	pd_platform *pf;
	int rc = copy_platform(pf0, &pf, e);
	if (rc)
		return rc;
	json_t *entries = json_array();
	json_object_set_new(root, "entries", entries);
	if (table) {
		pd_buf_printf(text, "refit --what power: windows of %.3f s, line fit from a busy spread of %g cores; %zu run(s)\n",
			      (double)o->window_ns / 1e9, o->min_spread, in->n);
		pd_buf_printf(text, "  %-12s %-9s %5s  %7s  %-5s\n", "island", "OPP", "obs", "spread", "fit");
	} else {
		pd_buf_printf(text, "refit --what background: the islands' background_util, the power table kept; %zu run(s)\n",
			      in->n);
	}
	int changed = 0;
	for (size_t k = 0; table && k < pd_platform_island_count(pf0) && rc == 0; k++) {
		int c = fit_island(in, k, pf, o, text, entries, e);
		if (c < 0)
			rc = e && e->code ? e->code : PD_EXIT_USAGE;
		else
			changed += c;
	}
	if (rc == 0 && table)
		changed += fit_base(in, pf, text, root);
	json_t *bgs = json_array();
	json_object_set_new(root, "background", bgs);
	for (size_t k = 0; k < pd_platform_island_count(pf0) && rc == 0; k++)
		changed += fit_background(in, k, pf, text, bgs);
	if (table)
		unused_rails(in, pf0, text);
	if (rc == 0 && table)
		order_notes(pf, text);
	if (rc == 0 && changed == 0)
		rc = pd_err_set(e, PD_EXIT_USAGE,
				table ? "no rail of these runs measures an island or \"base\": nothing constrains the power table; "
					"nothing written"
				      : "no run has busy time of an island's CPUs (BUSY records: an agent from before them, or "
					"a plan without CPU tasks): nothing to fit the background from; nothing written");
	if (rc == 0) {
		pd_buf b;
		pd_buf_init(&b);
		pd_yemit *y = pd_yemit_new(&b);
		if (!y) {
			rc = pd_err_set(e, PD_EXIT_ENV, "out of memory");
		} else {
			pd_yemit_map_begin(y, false);
			pd_yemit_key(y, "platform");
			pd_platform_emit(pf, y);
			pd_yemit_map_end(y);
			rc = pd_yemit_finish(y, e);
		}
		if (rc == 0)
			rc = refit_write_checked(&b, out, true, e);
		pd_buf_free(&b);
	}
	if (rc == 0)
		pd_buf_printf(text, "wrote %s (platform; %d entr%s changed, the rest kept)\n", out, changed,
			      changed == 1 ? "y" : "ies");
	pd_platform_free(pf);
	return rc;
}
