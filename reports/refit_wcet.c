/* SPDX-License-Identifier: MIT */
/*
 * refit --what wcet: a new WCET per CPU task from its measured execution times (docs/REFIT.md).
 *
 * Each sample x (a job's thread CPU time, measured on island k at frequency f) is taken back to the
 * DAG file's reference (f_ref, capacity 1.0) through the inverse of the WCET law of docs/MODEL.md,
 * rounded up so that the forward law gives back at least x at (k, f):
 *
 *     x_ref = C_fixed + ceil( (x - C_fixed) * kappa_micro * f / (f_ref * 10^6) )    (x > C_fixed)
 *     x_ref = x                                                                    (x <= C_fixed)
 *
 * Then C' = ceil(Q_q(x_ref) * margin) with Q_q the nearest-rank quantile (sorted[ceil(q n) - 1], the
 * report's percentile) and the margin taken to 6 decimal places (exact integer arithmetic: 1.1 is
 * 1.1, not 1.1000000000000000888); C' = max(C', max x_ref) unless --allow-below-max, and C' >=
 * C_fixed (the DAG-set invariant). Tasks that ran only on accelerators keep their WCET.
 */
#include "reports/refit_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MIN_SAMPLES 20

/* kappa in millionths exactly as platforms/power.c takes it (rounded down unless a 6-place decimal),
 * so that the inverse here and the forward law there use the same number. */
static int64_t capacity_micro(double capacity)
{
	double m = capacity * 1e6, r = nearbyint(m);
	return fabs(m - r) <= 1e-6 * fmax(1.0, m) ? (int64_t)r : (int64_t)floor(m);
}

int64_t refit_to_reference(int64_t x, int64_t fixed, int64_t kmicro, int64_t f_khz, int64_t ref_khz)
{
	if (x <= fixed)
		return x;
	int64_t s = pd_muldiv_ceil((uint64_t)(x - fixed), (uint64_t)kmicro, (uint64_t)f_khz, (uint64_t)ref_khz, 1000000);
	return s > INT64_MAX - fixed ? INT64_MAX : fixed + s;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

struct task_fit {
	size_t n;
	int64_t *ref;         /* samples at the reference, sorted */
	int64_t max_raw;      /* largest sample as measured */
	int64_t freq_khz;     /* frequency of the first sample (the usual case: one OPP) */
	bool several_opps;
	char place[48];
};

/* Collects task i's samples from every run, converted to the reference. */
static int collect(const struct refit_in *in, size_t i, struct task_fit *tf, size_t cap)
{
	const pd_platform *pf = pd_plan_platform(in->runs[0]->run->plan);
	tf->ref = malloc((cap + 1) * sizeof(int64_t));
	if (!tf->ref)
		return -1;
	tf->max_raw = -1;
	const struct pd_task *t = pd_dags_task(pd_plan_dags(in->runs[0]->run->plan), i);
	for (size_t r = 0; r < in->n; r++) {
		const struct rpt_run *run = in->runs[r]->run;
		const struct pd_plan_task *pt = pd_plan_task_c(run->plan, i);
		if (!tf->place[0])
			pd_plan_placement_fmt(run->plan, &pt->place, tf->place, sizeof(tf->place));
		for (size_t j = 0; j < run->n_jobs; j++) {
			const struct rpt_job *jb = &run->jobs[j];
			if (jb->task != i || jb->failed || jb->exec_ns <= 0)
				continue;
			long k = jb->cpu >= 0 ? pd_platform_island_of_cpu(pf, jb->cpu)
					      : pt->place.kind == PD_PLACE_CPU ? (long)pt->place.island : -1;
			if (k < 0 || pt->place.kind != PD_PLACE_CPU)
				continue; /* accelerated job: its latency is no CPU WCET */
			const struct pd_island *isl = pd_platform_island(pf, (size_t)k);
			int64_t f = isl->opps[rpt_measured_opp(run, false, (size_t)k, NULL)].freq_khz;
			if (tf->n == 0)
				tf->freq_khz = f;
			else if (f != tf->freq_khz)
				tf->several_opps = true;
			tf->ref[tf->n++] = refit_to_reference(jb->exec_ns, t->wcet_fixed_ns, capacity_micro(isl->capacity), f,
							      pd_platform_ref_freq_khz(pf));
			if (jb->exec_ns > tf->max_raw)
				tf->max_raw = jb->exec_ns;
		}
	}
	qsort(tf->ref, tf->n, sizeof(int64_t), cmp_i64);
	return 0;
}

static int copy_dags(const pd_dagset *src, pd_dagset **out, pd_err *e)
{
	pd_buf b;
	pd_buf_init(&b);
	int rc = pd_dags_format(src, &b, e);
	pd_ydoc y = {0};
	pd_diags d;
	pd_diags_init(&d);
	*out = NULL;
	if (rc == 0 && pd_yaml_load(&y, "dags", b.data, b.len, &d) == 0)
		*out = pd_dags_from_doc(&y, &d);
	pd_yaml_free(&y);
	pd_diags_free(&d);
	pd_buf_free(&b);
	return *out ? 0 : pd_err_set(e, PD_EXIT_ENV, "cannot copy the DAG set (out of memory)");
}

struct fit_result {
	int64_t q, target, new_wcet;
	const char *bound;
	bool bcet_lowered;
};

static int fit_task(const struct task_fit *tf, const struct pd_task *t, const struct pd_report_refit_opts *o,
		    struct fit_result *fr)
{
	int64_t margin_micro = llround(o->margin * 1e6);
	fr->q = rpt_percentile(tf->ref, tf->n, o->quantile);
	fr->target = pd_muldiv_ceil((uint64_t)fr->q, (uint64_t)margin_micro, 1, 1000000, 1);
	fr->new_wcet = fr->target;
	fr->bound = "quantile x margin";
	int64_t max_ref = tf->ref[tf->n - 1];
	if (!o->allow_below_max && fr->new_wcet < max_ref) {
		fr->new_wcet = max_ref;
		fr->bound = "observed maximum";
	}
	if (fr->new_wcet < t->wcet_fixed_ns || fr->new_wcet < 1) {
		fr->new_wcet = t->wcet_fixed_ns > 1 ? t->wcet_fixed_ns : 1;
		fr->bound = "wcet_fixed";
	}
	return fr->new_wcet <= PD_DAGS_MAX_DURATION_NS ? 0 : -1;
}

static void explain(pd_buf *text, json_t *arr, const char *name, const struct task_fit *tf, const struct pd_task *t,
		    const struct pd_report_refit_opts *o, const struct fit_result *fr)
{
	char a[32], b[32], c[32], d[32], f[32], g[32], h[32];
	pd_buf_printf(text, "  %-22s %-8s %-8s %7zu  %11s  %11s  %11s  %11s  %9s -> %-11s %s%s%s\n", name, tf->place,
		      pd_fmt_freq(tf->freq_khz, f, sizeof(f)), tf->n, pd_fmt_duration(tf->max_raw, a, sizeof(a)),
		      pd_fmt_duration(tf->ref[tf->n - 1], h, sizeof(h)), pd_fmt_duration(fr->q, b, sizeof(b)),
		      pd_fmt_duration(fr->target, c, sizeof(c)), pd_fmt_duration(t->wcet_ns, d, sizeof(d)),
		      pd_fmt_duration(fr->new_wcet, g, sizeof(g)), fr->bound, tf->several_opps ? ", several OPPs" : "",
		      fr->bcet_lowered ? ", bcet lowered to it" : "");
	json_array_append_new(arr, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:I, s:I, s:I, s:s, s:b, s:b}",
					     "task", name, "place", tf->place, "freq_khz", (json_int_t)tf->freq_khz,
					     "samples", (json_int_t)tf->n, "observed_max_ns", (json_int_t)tf->max_raw,
					     "observed_max_ref_ns", (json_int_t)tf->ref[tf->n - 1], "quantile", o->quantile,
					     "margin", o->margin, "quantile_ref_ns", (json_int_t)fr->q, "old_wcet_ns",
					     (json_int_t)t->wcet_ns, "new_wcet_ns", (json_int_t)fr->new_wcet, "bound",
					     fr->bound, "several_opps", tf->several_opps, "bcet_lowered",
					     fr->bcet_lowered));
}

static size_t total_jobs(const struct refit_in *in)
{
	size_t n = 0;
	for (size_t r = 0; r < in->n; r++)
		n += in->runs[r]->run->n_jobs;
	return n;
}

int refit_wcet(const struct refit_in *in, const struct pd_report_refit_opts *o, const char *out, pd_buf *text, json_t *root,
	       pd_err *e)
{
	const pd_dagset *ds0 = pd_plan_dags(in->runs[0]->run->plan);
	size_t min = o->min_samples ? o->min_samples : DEFAULT_MIN_SAMPLES, cap = total_jobs(in);
	pd_dagset *ds;
	int rc = copy_dags(ds0, &ds, e);
	if (rc)
		return rc;
	json_t *tasks = json_array(), *kept = json_array();
	pd_buf_printf(text, "refit --what wcet: quantile %g x margin %g, %s; %zu run(s)\n", o->quantile, o->margin,
		      o->allow_below_max ? "may fall below the observed maximum" : "never below the observed maximum",
		      in->n);
	pd_buf_printf(text, "  %-22s %-8s %-8s %7s  %11s  %11s  %11s  %11s  %9s    %s\n", "task", "place", "at", "samples",
		      "max at OPP", "max (ref)", "quant (ref)", "x margin", "old WCET", "new WCET (ref)");
	bool short_samples = false;
	for (size_t i = 0; i < pd_dags_task_count(ds) && rc == 0; i++) {
		const struct pd_task *t = pd_dags_task(ds0, i);
		char name[2 * PD_DAGS_MAX_NAME + 2];
		snprintf(name, sizeof(name), "%s/%s", pd_dags_dag(ds0, t->dag)->name, t->name);
		struct task_fit tf = {0};
		if (collect(in, i, &tf, cap) < 0) {
			rc = pd_err_set(e, PD_EXIT_ENV, "out of memory");
		} else if (tf.n == 0 && pd_plan_task_c(in->runs[0]->run->plan, i)->place.kind != PD_PLACE_CPU) {
			pd_buf_printf(text, "  %-22s %-8s kept: ran on an accelerator (its latency is not a CPU WCET)\n", name,
				      tf.place);
			json_array_append_new(kept, json_pack("{s:s, s:s}", "task", name, "reason", "accelerator"));
		} else if (tf.n < min) {
			rc = pd_err_set(e, PD_EXIT_USAGE,
					"%s: %zu execution sample(s) in %zu run(s), fewer than the %zu needed "
					"(--min-samples): run longer, or lower --min-samples; nothing written",
					name, tf.n, in->n, min);
		} else {
			struct fit_result fr = {0};
			if (fit_task(&tf, t, o, &fr) < 0 || pd_dags_set_wcet(ds, i, fr.new_wcet, &fr.bcet_lowered) < 0)
				rc = pd_err_set(e, PD_EXIT_USAGE, "%s: fitted WCET %lld ns is out of range; nothing written", name,
						(long long)fr.new_wcet);
			else
				explain(text, tasks, name, &tf, t, o, &fr);
			short_samples |= o->quantile < 1 && (double)tf.n < 1.0 / (1.0 - o->quantile);
		}
		free(tf.ref);
	}
	if (rc == 0 && short_samples)
		pd_buf_printf(text, "note: some tasks have fewer than 1/(1 - q) = %.0f samples: their %g quantile is their "
				    "maximum\n",
			      1.0 / (1.0 - o->quantile), o->quantile);
	json_object_set_new(root, "tasks", tasks);
	json_object_set_new(root, "kept", kept);
	if (rc == 0) {
		pd_buf b;
		pd_buf_init(&b);
		rc = pd_dags_format(ds, &b, e);
		if (rc == 0)
			rc = refit_write_checked(&b, out, false, e);
		pd_buf_free(&b);
	}
	if (rc == 0)
		pd_buf_printf(text, "wrote %s (DAG set; WCETs at the reference frequency on a capacity-1.0 core)\n", out);
	pd_dags_free(ds);
	return rc;
}
