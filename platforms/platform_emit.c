/* SPDX-License-Identifier: MIT */
/*
 * The canonical platform writer. Every field is written, defaults included, in one fixed order and
 * in the canonical unit forms of core (1.4GHz -> "1400MHz", 0.5 W -> "500mW"), so that
 * emit(parse(emit(x))) == emit(x) byte for byte: plans embed platforms and are hashed.
 */
#include "platforms/platform_impl.h"

static void emit_opps(pd_yemit *y, const struct pd_opp *o, size_t n)
{
	pd_yemit_key(y, "opps");
	pd_yemit_seq_begin(y, false);
	for (size_t j = 0; j < n; j++) {
		pd_yemit_map_begin(y, true);
		pd_yemit_kv_freq(y, "freq", o[j].freq_khz);
		pd_yemit_kv_power(y, "busy", o[j].busy_uw);
		pd_yemit_kv_power(y, "idle", o[j].idle_uw);
		pd_yemit_map_end(y);
	}
	pd_yemit_seq_end(y);
}

static void emit_dl(pd_yemit *y, const struct pd_dl *dl)
{
	pd_yemit_key(y, "dl");
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_double(y, "max_util_per_cpu", dl->max_util_per_cpu);
	if (dl->has_fair_server) {
		pd_yemit_key(y, "fair_server");
		pd_yemit_map_begin(y, true);
		pd_yemit_kv_duration(y, "runtime", dl->fair_runtime_ns);
		pd_yemit_kv_duration(y, "period", dl->fair_period_ns);
		pd_yemit_map_end(y);
	}
	/* Written only when given: an absent job_overhead means "the documented default", and a
	 * platform read back must still say so. */
	if (dl->has_job_overhead)
		pd_yemit_kv_duration(y, "job_overhead", dl->job_overhead_ns);
	if (dl->has_budget_margin)
		pd_yemit_kv_double(y, "budget_margin", dl->budget_margin);
	pd_yemit_map_end(y);
}

static void emit_island(pd_yemit *y, const struct pd_island *k)
{
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "name", k->name);
	pd_yemit_key(y, "cpus");
	pd_yemit_seq_begin(y, true);
	for (size_t c = 0; c < k->n_cpus; c++)
		pd_yemit_int(y, k->cpus[c]);
	pd_yemit_seq_end(y);
	pd_yemit_kv_double(y, "capacity", k->capacity);
	pd_yemit_kv_str(y, "policy", k->policy);
	if (k->has_job_overhead)
		pd_yemit_kv_duration(y, "job_overhead", k->job_overhead_ns);
	if (k->background_util > 0) /* absent means 0 */
		pd_yemit_kv_double(y, "background_util", k->background_util);
	emit_opps(y, k->opps, k->n_opps);
	pd_yemit_map_end(y);
}

static void emit_accel(pd_yemit *y, const struct pd_accelerator *a)
{
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "name", a->name);
	if (a->kind == PD_ACCEL_GPU) {
		pd_yemit_kv_str(y, "kind", "gpu");
		if (a->devfreq)
			pd_yemit_kv_str(y, "devfreq", a->devfreq);
		emit_opps(y, a->opps, a->n_opps);
	} else {
		pd_yemit_kv_str(y, "kind", "fpga");
		pd_yemit_kv_int(y, "slots", a->slots);
		pd_yemit_kv_duration(y, "reconfig_time", a->reconfig_ns);
		pd_yemit_kv_power(y, "idle_power", a->idle_uw);
		if (a->manager)
			pd_yemit_kv_str(y, "manager", a->manager);
	}
	pd_yemit_map_end(y);
}

static void emit_sensor(pd_yemit *y, const struct pd_sensor *s)
{
	pd_yemit_map_begin(y, true);
	pd_yemit_kv_str(y, "uri", s->uri);
	pd_yemit_kv_str(y, "device", s->device);
	pd_yemit_kv_str(y, "channel", s->channel);
	pd_yemit_kv_str(y, "rail", s->rail);
	pd_yemit_kv_str(y, "measures", s->measures);
	pd_yemit_kv_double(y, "scale", s->scale);
	pd_yemit_map_end(y);
}

void pd_platform_emit(const pd_platform *p, pd_yemit *y)
{
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "name", p->name);
	pd_yemit_kv_freq(y, "reference_frequency", p->ref_khz);
	pd_yemit_kv_power(y, "base_power", p->base_uw);
	emit_dl(y, &p->dl);
	pd_yemit_key(y, "islands");
	pd_yemit_seq_begin(y, false);
	for (size_t k = 0; k < p->n_islands; k++)
		emit_island(y, &p->islands[k]);
	pd_yemit_seq_end(y);
	if (p->n_accels) {
		pd_yemit_key(y, "accelerators");
		pd_yemit_seq_begin(y, false);
		for (size_t a = 0; a < p->n_accels; a++)
			emit_accel(y, &p->accels[a]);
		pd_yemit_seq_end(y);
	}
	if (p->n_sensors) {
		pd_yemit_key(y, "sensors");
		pd_yemit_seq_begin(y, false);
		for (size_t s = 0; s < p->n_sensors; s++)
			emit_sensor(y, &p->sensors[s]);
		pd_yemit_seq_end(y);
	}
	platform_emit_provenance(p, y);
	pd_yemit_map_end(y);
}

int pd_platform_emit_doc(const pd_platform *p, pd_buf *out, pd_err *e)
{
	pd_yemit *y = pd_yemit_new(out);
	if (!y)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	pd_yemit_map_begin(y, false);
	pd_yemit_key(y, "platform");
	pd_platform_emit(p, y);
	pd_yemit_map_end(y);
	return pd_yemit_finish(y, e) == 0 ? 0 : PD_EXIT_ENV;
}

int pd_platform_write_file(const pd_platform *p, const char *path, pd_err *e)
{
	pd_buf b;
	pd_buf_init(&b);
	int rc = pd_platform_emit_doc(p, &b, e);
	if (rc == 0)
		rc = pd_write_file_atomic(path, b.data, b.len, e);
	pd_buf_free(&b);
	return rc;
}
