/* SPDX-License-Identifier: MIT */
/* sim_output.c - the result of a simulation as the JSON object of docs/SIMULATOR.md and as a text summary. */
#include "simulator/pd_simulator.h"

#include <jansson.h>
#include <stdlib.h>

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static json_t *dags_json(const pd_sim_result *r)
{
	json_t *a = json_array();
	for (size_t g = 0; g < r->n_dags; g++) {
		const struct pd_sim_dag_stats *d = &r->dags[g];
		json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:I, s:I, s:f, s:f, s:f}", "name", d->name, "instances",
						   (json_int_t)d->instances, "misses", (json_int_t)d->misses, "dropped",
						   (json_int_t)d->dropped, "skipped", (json_int_t)d->skipped, "max_response_ms", ms(d->max_response_ns),
						   "p99_response_ms", ms(d->p99_response_ns), "mean_response_ms",
						   d->mean_response_ns / 1e6));
	}
	return a;
}

static json_t *cores_json(const pd_sim_result *r)
{
	json_t *a = json_array();
	double D = (double)r->duration_ns;
	for (size_t c = 0; c < r->n_cores; c++) {
		const struct pd_sim_core_stats *k = &r->cores[c];
		json_array_append_new(a, json_pack("{s:i, s:f, s:f, s:I, s:f, s:f, s:f}", "cpu", k->cpu, "busy",
						   (double)k->busy_ns / D, "deadline_busy", (double)k->dl_busy_ns / D,
						   "throttles", (json_int_t)k->throttles, "background_demand_s",
						   (double)k->bg_demand_ns / 1e9, "background_served_s",
						   (double)k->bg_served_ns / 1e9, "background_by_server_s",
						   (double)k->bg_server_ns / 1e9));
	}
	return a;
}

static json_t *servers_json(const pd_sim_result *r)
{
	json_t *a = json_array();
	for (size_t v = 0; v < r->n_servers; v++) {
		const struct pd_sim_server_stats *s = &r->servers[v];
		json_array_append_new(a, json_pack("{s:s, s:i, s:f, s:I, s:I, s:f}", "name", s->name, "slot", s->slot,
						   "busy", (double)s->busy_ns / (double)r->duration_ns, "requests",
						   (json_int_t)s->requests, "reconfigs", (json_int_t)s->reconfigs,
						   "max_response_ms", ms(s->max_response_ns)));
	}
	return a;
}

char *pd_sim_result_json(const pd_sim_result *r, const pd_plan *p)
{
	(void)p;
	double frac = r->bg_demand_ns > 0 ? (double)r->bg_served_ns / (double)r->bg_demand_ns : 1.0;
	json_t *bg = json_pack("{s:s, s:f, s:f, s:f, s:f}", "fair_server", pd_sim_fair_name(r->fair_mode), "demand_s",
			       (double)r->bg_demand_ns / 1e9, "served_s", (double)r->bg_served_ns / 1e9,
			       "served_by_server_s", (double)r->bg_server_ns / 1e9, "served_fraction", frac);
	json_t *pw = json_pack("{s:f, s:f, s:f}", "base_w", r->base_w, "cpu_w", r->cpu_w, "accel_w", r->accel_w);
	json_t *root = json_pack("{s:f, s:f, s:f, s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:I, s:f, s:b}", "power_w",
				 r->power_w, "energy_j", r->energy_j, "duration_s", (double)r->duration_ns / 1e9, "jobs",
				 (json_int_t)r->jobs, "misses", (json_int_t)r->misses, "job_misses",
				 (json_int_t)r->job_misses, "reanchors", (json_int_t)r->reanchors, "dags", dags_json(r), "background", bg, "power", pw, "cores",
				 cores_json(r), "accelerators", servers_json(r), "events", (json_int_t)r->events,
				 "wall_s", r->wall_s, "trace_truncated", r->trace_truncated);
	if (!root)
		return NULL;
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	json_decref(root);
	return s;
}

void pd_sim_result_print(const pd_sim_result *r, const pd_plan *p, FILE *out)
{
	(void)p;
	fprintf(out, "simulated %.3f s: %llu jobs, %llu DAG deadline misses, %llu job (d_i) misses", (double)r->duration_ns / 1e9,
		(unsigned long long)r->jobs, (unsigned long long)r->misses, (unsigned long long)r->job_misses);
	if (r->reanchors)
		fprintf(out, ", %llu re-anchored reservations (late: resync rule 4)", (unsigned long long)r->reanchors);
	fputc('\n', out);
	fprintf(out, "power %.6f W (base %.6f, cpu %.6f, accelerators %.6f), energy %.6f J\n", r->power_w, r->base_w,
		r->cpu_w, r->accel_w, r->energy_j);
	fprintf(out, "%-24s %10s %8s %14s %14s %8s\n", "dag", "instances", "misses", "max resp (ms)", "p99 resp (ms)",
		"skipped");
	for (size_t g = 0; g < r->n_dags; g++) {
		const struct pd_sim_dag_stats *d = &r->dags[g];
		fprintf(out, "%-24s %10llu %8llu %14.3f %14.3f %8llu\n", d->name, (unsigned long long)d->instances,
			(unsigned long long)d->misses, ms(d->max_response_ns), ms(d->p99_response_ns),
			(unsigned long long)d->skipped);
	}
	for (size_t c = 0; c < r->n_cores; c++) {
		const struct pd_sim_core_stats *k = &r->cores[c];
		if (k->busy_ns == 0 && k->bg_demand_ns == 0)
			continue;
		fprintf(out, "cpu%-3d busy %6.2f %%  throttles %llu\n", k->cpu, 100.0 * (double)k->busy_ns / (double)r->duration_ns,
			(unsigned long long)k->throttles);
	}
	for (size_t v = 0; v < r->n_servers; v++) {
		const struct pd_sim_server_stats *s = &r->servers[v];
		if (s->requests == 0)
			continue;
		char where[160];
		if (s->slot >= 0)
			snprintf(where, sizeof(where), "fpga:%s/%d", s->name, s->slot);
		else
			snprintf(where, sizeof(where), "gpu:%s", s->name);
		fprintf(out, "%-12s busy %6.2f %%  requests %llu  reconfigs %llu  max resp %.3f ms\n", where,
			100.0 * (double)s->busy_ns / (double)r->duration_ns,
			(unsigned long long)s->requests, (unsigned long long)s->reconfigs, ms(s->max_response_ns));
	}
	if (r->bg_demand_ns > 0)
		fprintf(out, "background (fair server %s): demand %.3f s, served %.3f s (%.2f %%), by the server %.3f s\n",
			pd_sim_fair_name(r->fair_mode), (double)r->bg_demand_ns / 1e9, (double)r->bg_served_ns / 1e9,
			100.0 * (double)r->bg_served_ns / (double)r->bg_demand_ns, (double)r->bg_server_ns / 1e9);
	fprintf(out, "%llu events in %.3f s wall\n", (unsigned long long)r->events, r->wall_s);
}
