/* SPDX-License-Identifier: MIT */
/*
 * sim_run.c - the event loop and the final accounting (power, energy, statistics).
 *
 * Power is integrated exactly: OPPs do not change during a run, so the energy of a core is
 * P_idle * duration + (P_busy - P_idle) * busy_ns, with busy_ns an exact integer; the same for GPUs;
 * an FPGA pays its idle power all along plus each implementation's busy power while it executes
 * (reconfiguration time counts as idle). uW x ns are summed in long double (exact well beyond 1e-9).
 */
#include "simulator/sim_impl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void dispatch(struct sim *s, uint32_t id)
{
	if (id < s->id_server) {
		sim_core_event(s, &s->cores[id]);
	} else if (id < s->id_timer) {
		sim_accel_done(s, &s->servers[id - s->id_server]);
	} else if (id < s->id_inact) {
		struct sim_task *t = &s->tasks[id - s->id_timer];
		sim_core_timer(s, &s->cores[t->core], &t->e);
	} else if (id < s->id_ftimer) {
		struct sim_task *t = &s->tasks[id - s->id_inact];
		struct sim_core *c = &s->cores[t->core];
		sim_core_sync(s, c);
		sim_cbs_inactive(s, c, &t->e);
		sim_core_resched(s, c);
	} else if (id < s->id_finact) {
		sim_fair_timer(s, &s->cores[id - s->id_ftimer]);
	} else if (id < s->id_bg) {
		struct sim_core *c = &s->cores[id - s->id_finact];
		sim_core_sync(s, c);
		sim_cbs_inactive(s, c, &c->fair);
		sim_core_resched(s, c);
	} else if (id < s->id_rel) {
		sim_bg_arrival(s, &s->cores[id - s->id_bg]);
	} else {
		sim_dag_release(s, &s->dags[id - s->id_rel]);
	}
}

static void loop(struct sim *s)
{
	const int64_t end = s->prm.duration_ns;
	struct sim_heap *h = &s->heap;
	while (!sim_heap_empty(h) && sim_heap_top_time(h) <= end && !s->oom) {
		/* The event stays in the heap while it is handled: a handler that re-arms its own source
		 * (a core's next event, a DAG's next release) moves it in place, one sift instead of a pop
		 * and a push; a source that was not re-armed is removed afterwards. */
		uint32_t id = sim_heap_top(h);
		s->now = sim_heap_top_time(h);
		s->events++;
		h->touched[id] = 0;
		dispatch(s, id);
		if (!h->touched[id])
			sim_heap_cancel(h, id);
	}
	s->now = end;
	for (size_t c = 0; c < s->n_cores; c++) {
		struct sim_core *core = &s->cores[c];
		sim_core_sync(s, core);
		if (core->run != RUN_IDLE && s->prm.trace_path) {
			int32_t what = core->run == RUN_TASK ? (int32_t)core->run_task : core->run == RUN_SERVER ? -2 : -1;
			sim_trace_seg(s, (int32_t)c, what, 0, core->seg_start, end);
		}
	}
	for (size_t v = 0; v < s->n_servers; v++) {
		struct sim_server *sv = &s->servers[v];
		if (sv->busy && end > sv->exec_start) { /* the request in service at the end */
			sv->st.busy_ns += end - sv->exec_start;
			s->tasks[sv->cur.task].accel_busy_ns += end - sv->exec_start;
		}
	}
	sim_dag_finish(s);
}

/* Energy in uW*ns (1e-15 J) by component. */
static void energy(const struct sim *s, pd_sim_result *r)
{
	const long double D = (long double)s->prm.duration_ns;
	long double base = (long double)pd_platform_base_uw(s->plat) * D, cpu = 0, acc = 0;
	for (size_t c = 0; c < s->n_cores; c++) {
		const struct sim_core *k = &s->cores[c];
		cpu += (long double)k->idle_uw * D + (long double)(k->busy_uw - k->idle_uw) * (long double)k->st.busy_ns;
	}
	/* the islands' background (software outside the plan, docs/MODEL.md): a constant, as in the
	 * optimizer; not simulated work (it runs below every reservation, and --background is the
	 * fair-class load whose timing the simulator does play out) */
	for (size_t k = 0; k < pd_platform_island_count(s->plat); k++)
		cpu += (long double)pd_platform_island_background_w(pd_platform_island(s->plat, k), pd_plan_island_opp(s->plan, k)) *
		       1e6L * D;
	for (size_t v = 0; v < s->n_servers; v++) {
		const struct sim_server *sv = &s->servers[v];
		if (sv->gpu)
			acc += (long double)sv->idle_uw * D + (long double)(sv->busy_uw - sv->idle_uw) * (long double)sv->st.busy_ns;
	}
	for (size_t a = 0; a < pd_platform_accel_count(s->plat); a++) {
		const struct pd_accelerator *ac = pd_platform_accel(s->plat, a);
		if (ac->kind == PD_ACCEL_FPGA)
			acc += (long double)ac->idle_uw * D;
	}
	for (size_t i = 0; i < s->n_tasks; i++)
		if (s->tasks[i].kind == PD_PLACE_FPGA)
			acc += (long double)s->tasks[i].power_uw * (long double)s->tasks[i].accel_busy_ns;
	r->energy_j = (double)((base + cpu + acc) * 1e-15L);
	r->power_w = (double)((base + cpu + acc) / D * 1e-6L);
	r->base_w = (double)(base / D * 1e-6L);
	r->cpu_w = (double)(cpu / D * 1e-6L);
	r->accel_w = (double)(acc / D * 1e-6L);
}

static pd_sim_result *collect(const struct sim *s)
{
	pd_sim_result *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->n_dags = s->n_dags;
	r->n_tasks = s->n_tasks;
	r->n_cores = s->n_cores;
	r->n_servers = s->n_servers;
	r->dags = calloc(s->n_dags + 1, sizeof(*r->dags));
	r->tasks = calloc(s->n_tasks + 1, sizeof(*r->tasks));
	r->cores = calloc(s->n_cores + 1, sizeof(*r->cores));
	r->servers = calloc(s->n_servers + 1, sizeof(*r->servers));
	if (!r->dags || !r->tasks || !r->cores || !r->servers) {
		pd_sim_result_free(r);
		return NULL;
	}
	r->duration_ns = s->prm.duration_ns;
	r->events = s->events;
	r->fair_mode = s->fair_mode;
	r->trace_truncated = s->trace_truncated;
	for (size_t g = 0; g < s->n_dags; g++) {
		r->dags[g] = s->dags[g].st;
		r->misses += s->dags[g].st.misses;
	}
	for (size_t i = 0; i < s->n_tasks; i++) {
		r->tasks[i] = s->tasks[i].st;
		r->jobs += s->tasks[i].st.jobs;
		r->job_misses += s->tasks[i].st.job_misses;
		r->reanchors += s->tasks[i].st.reanchors;
	}
	for (size_t c = 0; c < s->n_cores; c++) {
		r->cores[c] = s->cores[c].st;
		r->bg_demand_ns += s->cores[c].st.bg_demand_ns;
		r->bg_served_ns += s->cores[c].st.bg_served_ns;
		r->bg_server_ns += s->cores[c].st.bg_server_ns;
	}
	for (size_t v = 0; v < s->n_servers; v++)
		r->servers[v] = s->servers[v].st;
	energy(s, r);
	return r;
}

pd_sim_result *pd_sim_run(const pd_plan *p, const struct pd_sim_params *params, pd_err *e)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct sim *s = calloc(1, sizeof(*s));
	if (!s) {
		pd_err_set(e, PD_EXIT_ENV, "out of memory");
		return NULL;
	}
	pd_sim_result *r = NULL;
	if (sim_build(s, p, params, e))
		goto out;
	loop(s);
	if (s->oom) {
		pd_err_set(e, PD_EXIT_ENV, "out of memory during the simulation");
		goto out;
	}
	if (params->trace_path && sim_trace_write(s, params->trace_path, e))
		goto out;
	r = collect(s);
	if (!r) {
		pd_err_set(e, PD_EXIT_ENV, "out of memory");
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->wall_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
out:
	sim_destroy(s);
	free(s);
	return r;
}

void pd_sim_result_free(pd_sim_result *r)
{
	if (!r)
		return;
	free(r->dags);
	free(r->tasks);
	free(r->cores);
	free(r->servers);
	free(r);
}
