/* SPDX-License-Identifier: MIT */
/*
 * sim_build.c - turns a plan into the simulation state: cores with their reservations, tasks with
 * their WCET at the plan's OPPs (the platform's law, pd_platform_wcet_at), accelerator servers, DAG rings,
 * the heap id layout and the first events. Everything is allocated here, once.
 */
#include "simulator/sim_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The kernel's default fair server (6.12), used when a mode is forced on a platform without one. */
#define SIM_FAIR_DEFAULT_RUNTIME_NS (50 * PD_NS_PER_MS)
#define SIM_FAIR_DEFAULT_PERIOD_NS PD_NS_PER_S

static int check_params(const struct pd_sim_params *p, const pd_dagset *ds, pd_err *e)
{
	if (p->duration_ns <= 0 || p->duration_ns > PD_MAX_RUN_NS)
		return pd_err_set(e, PD_EXIT_USAGE, "the duration must be positive and at most 30 days");
	if (!(p->background_util >= 0 && p->background_util <= 1))
		return pd_err_set(e, PD_EXIT_USAGE, "--background must be in [0, 1] (a fraction of one CPU)");
	if (p->background_period_ns <= 0)
		return pd_err_set(e, PD_EXIT_USAGE, "the background period must be positive");
	if (p->release_jitter_ns < 0)
		return pd_err_set(e, PD_EXIT_USAGE, "the release jitter must not be negative");
	for (size_t g = 0; g < pd_dags_count(ds); g++)
		if (p->release_jitter_ns >= pd_dags_dag(ds, g)->period_ns)
			return pd_err_set(e, PD_EXIT_USAGE, "the release jitter must be below every DAG period (%s)",
					  pd_dags_dag(ds, g)->name);
	if (p->trace_path && p->trace_to_ns <= p->trace_from_ns)
		return pd_err_set(e, PD_EXIT_USAGE, "the trace window A:B needs A < B");
	if (p->exec == PD_SIM_EXEC_REPLAY && !p->replay)
		return pd_err_set(e, PD_EXIT_USAGE, "replay: no run loaded (pd_sim_replay_load)");
	if (p->has_inject && pd_dags_inject_task(ds, &p->inject) < 0)
		return pd_err_set(e, PD_EXIT_USAGE, "overrun injection: the plan has no task '%s/%s'", p->inject.dag,
				  p->inject.task);
	return 0;
}

static int build_cores(struct sim *s, int64_t umax_ppm)
{
	const pd_platform *p = s->plat;
	s->n_cores = pd_platform_core_count(p);
	s->cores = calloc(s->n_cores ? s->n_cores : 1, sizeof(*s->cores));
	if (!s->cores)
		return -1;
	size_t ci = 0;
	for (size_t k = 0; k < pd_platform_island_count(p); k++) {
		const struct pd_island *isl = pd_platform_island(p, k);
		const struct pd_opp *o = &isl->opps[pd_plan_island_opp(s->plan, k)];
		for (size_t j = 0; j < isl->n_cpus && ci < s->n_cores; j++, ci++) {
			struct sim_core *c = &s->cores[ci];
			c->cpu = isl->cpus[j];
			c->st.cpu = c->cpu;
			c->island = k;
			c->busy_uw = o->busy_uw;
			c->idle_uw = o->idle_uw;
			c->max_bw = sim_to_ratio(PD_NS_PER_S, umax_ppm * 1000);
			/* bw_ratio = to_ratio(rt_runtime, rt_period) >> (BW_SHIFT - RATIO_SHIFT) */
			c->bw_ratio = sim_to_ratio(umax_ppm * 1000, PD_NS_PER_S) >> (SIM_BW_SHIFT - SIM_RATIO_SHIFT);
			c->bg_chunk = (int64_t)llround(s->prm.background_util * (double)s->prm.background_period_ns);
			c->tasks = calloc(s->n_tasks + 1, sizeof(uint32_t));
			c->ready = calloc(s->n_tasks + 1, sizeof(uint32_t));
			c->dirty = calloc(s->n_tasks + 1, sizeof(uint32_t));
			if (!c->tasks || !c->ready || !c->dirty)
				return -1;
		}
	}
	return 0;
}

static long core_of_cpu(const struct sim *s, int cpu)
{
	for (size_t c = 0; c < s->n_cores; c++)
		if (s->cores[c].cpu == cpu)
			return (long)c;
	return -1;
}

static int build_servers(struct sim *s)
{
	const pd_platform *p = s->plat;
	size_t n = 0;
	for (size_t a = 0; a < pd_platform_accel_count(p); a++) {
		const struct pd_accelerator *ac = pd_platform_accel(p, a);
		n += ac->kind == PD_ACCEL_GPU ? 1 : (size_t)(ac->slots > 0 ? ac->slots : 0);
	}
	s->n_servers = n;
	s->servers = calloc(n ? n : 1, sizeof(*s->servers));
	if (!s->servers)
		return -1;
	size_t v = 0;
	for (size_t a = 0; a < pd_platform_accel_count(p); a++) {
		const struct pd_accelerator *ac = pd_platform_accel(p, a);
		int slots = ac->kind == PD_ACCEL_GPU ? 1 : ac->slots;
		for (int sl = 0; sl < slots; sl++, v++) {
			struct sim_server *sv = &s->servers[v];
			sv->accel = a;
			sv->gpu = ac->kind == PD_ACCEL_GPU;
			sv->slot = sv->gpu ? -1 : sl;
			sv->reconfig_ns = ac->reconfig_ns;
			sv->st.name = ac->name;
			sv->st.slot = sv->slot;
			if (sv->gpu && ac->n_opps > 0) {
				const struct pd_opp *o = &ac->opps[pd_plan_accel_opp(s->plan, a)];
				sv->busy_uw = o->busy_uw;
				sv->idle_uw = o->idle_uw;
			}
		}
	}
	return 0;
}

static long server_of(const struct sim *s, const struct pd_placement *pl)
{
	for (size_t v = 0; v < s->n_servers; v++) {
		const struct sim_server *sv = &s->servers[v];
		if (sv->accel == pl->accel && (sv->gpu || sv->slot == pl->slot))
			return (long)v;
	}
	return -1;
}

static void init_ent(struct sim_ent *e, int64_t runtime, int64_t deadline, int64_t period)
{
	e->dl_runtime = runtime;
	e->dl_deadline = deadline;
	e->dl_period = period;
	e->bw = sim_to_ratio(period, runtime);
	e->density = sim_to_ratio(deadline, runtime);
	e->deadline = -((int64_t)1 << 62); /* in the past: the first wake-up starts a fresh period */
}

static int build_cpu_task(struct sim *s, struct sim_task *t, size_t i, const struct pd_plan_task *pt, pd_err *e)
{
	const struct pd_task *dt = pd_dags_task(s->ds, i);
	long c = core_of_cpu(s, pt->place.cpu);
	if (c < 0)
		return pd_err_set(e, PD_EXIT_USAGE, "task %s: cpu %d is not on the platform", dt->name, pt->place.cpu);
	if (!(pt->runtime_ns > 0 && pt->runtime_ns <= pt->deadline_ns && pt->deadline_ns <= pt->period_ns))
		return pd_err_set(e, PD_EXIT_USAGE,
				  "task %s: SCHED_DEADLINE needs 0 < runtime <= deadline <= period (got %lld/%lld/%lld ns); "
				  "run `powerdag check`",
				  dt->name, (long long)pt->runtime_ns, (long long)pt->deadline_ns, (long long)pt->period_ns);
	struct sim_core *core = &s->cores[c];
	const struct pd_island *isl = pd_platform_island(s->plat, core->island);
	size_t opp = pd_plan_island_opp(s->plan, core->island);
	t->core = (uint32_t)c;
	t->wcet_ns = pd_platform_wcet_at(s->plat, dt, core->island, opp);
	if (t->wcet_ns <= 0 || t->wcet_ns >= INT64_MAX / 4)
		return pd_err_set(e, PD_EXIT_USAGE, "task %s: no valid WCET at the plan's OPP", dt->name);
	int64_t fixed = dt->wcet_fixed_ns < dt->bcet_ns ? dt->wcet_fixed_ns : dt->bcet_ns;
	t->bcet_ns = pd_platform_wcet_scale(dt->bcet_ns, fixed, pd_platform_ref_freq_khz(s->plat), isl->capacity,
				   isl->opps[opp].freq_khz);
	if (t->bcet_ns <= 0 || t->bcet_ns > t->wcet_ns)
		t->bcet_ns = t->wcet_ns;
	/* The kernel charges o_k per job beyond the work (wake-up, time stamps, waking successors):
	 * modelled as execution, from the platform's law like C (pd_platform_budget_of), never from the plan. */
	struct pd_budget b;
	if (pd_platform_budget_of(s->plat, core->island, t->wcet_ns, &b) != 0)
		return pd_err_set(e, PD_EXIT_USAGE, "task %s: no per-job overhead for its island", dt->name);
	t->overhead_ns = b.overhead_ns;
	t->rel_deadline_ns = pt->deadline_ns;
	init_ent(&t->e, pt->runtime_ns, pt->deadline_ns, pt->period_ns);
	t->e.core = (uint32_t)c;
	t->e.task = (uint32_t)i;
	t->e.reclaim = pt->reclaim || s->prm.reclaim_all;
	core->grub |= t->e.reclaim;
	t->e.timer_id = s->id_timer + (uint32_t)i;
	t->e.inact_id = s->id_inact + (uint32_t)i;
	core->tasks[core->n_tasks++] = (uint32_t)i;
	core->this_bw += t->e.bw;
	return 0;
}

static int build_accel_task(struct sim *s, struct sim_task *t, size_t i, const struct pd_plan_task *pt, pd_err *e)
{
	const struct pd_task *dt = pd_dags_task(s->ds, i);
	long v = server_of(s, &pt->place);
	if (v < 0 || pt->place.impl >= dt->n_impls)
		return pd_err_set(e, PD_EXIT_USAGE, "task %s: its accelerator placement does not exist", dt->name);
	const struct pd_accelerator *ac = pd_platform_accel(s->plat, pt->place.accel);
	const struct pd_impl *im = &dt->impls[pt->place.impl];
	t->server = (uint32_t)v;
	t->wcet_ns = im->latency_ns;
	if (ac->kind == PD_ACCEL_GPU && ac->n_opps > 0)
		t->wcet_ns = pd_platform_latency_at(ac, im->latency_ns, pd_plan_accel_opp(s->plan, pt->place.accel));
	if (t->wcet_ns <= 0 || t->wcet_ns >= INT64_MAX / 4)
		return pd_err_set(e, PD_EXIT_USAGE, "task %s: no valid latency at the plan's OPP", dt->name);
	t->bcet_ns = (int64_t)(((__int128)t->wcet_ns * dt->bcet_ns + dt->wcet_ns - 1) / dt->wcet_ns);
	t->rel_deadline_ns = pt->response_ns > 0 ? pt->response_ns : t->wcet_ns;
	t->power_uw = im->power_uw > 0 ? im->power_uw : 0;
	t->bitstream = im->bitstream;
	struct sim_server *sv = &s->servers[v];
	sv->cap += SIM_RING;
	if (!sv->gpu && !sv->loaded)
		sv->loaded = im->bitstream; /* the deployer loads the slot's first bitstream before the run */
	return 0;
}

static int build_tasks(struct sim *s, pd_err *e)
{
	s->tasks = calloc(s->n_tasks ? s->n_tasks : 1, sizeof(*s->tasks));
	int64_t *finish = calloc(s->n_tasks ? s->n_tasks : 1, sizeof(*finish));
	if (!s->tasks || !finish) {
		free(finish);
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	}
	pd_plan_finish_offsets(s->plan, finish);
	for (size_t i = 0; i < s->n_tasks; i++)
		s->tasks[i].finish_ns = finish[i];
	free(finish);
	for (size_t i = 0; i < s->n_tasks; i++) {
		const struct pd_task *dt = pd_dags_task(s->ds, i);
		const struct pd_plan_task *pt = pd_plan_task_c(s->plan, i);
		struct sim_task *t = &s->tasks[i];
		t->kind = pt->place.kind;
		t->dag = (uint32_t)dt->dag;
		t->local = (uint32_t)(i - pd_dags_dag(s->ds, dt->dag)->first_task);
		t->name = dt->name;
		t->succs = dt->succs;
		t->n_succs = dt->n_succs;
		t->n_preds = dt->n_preds;
		t->ready_pos = -1;
		int rc = t->kind == PD_PLACE_CPU ? build_cpu_task(s, t, i, pt, e) : build_accel_task(s, t, i, pt, e);
		if (rc)
			return rc;
	}
	for (size_t v = 0; v < s->n_servers; v++) {
		struct sim_server *sv = &s->servers[v];
		sv->q = calloc(sv->cap ? sv->cap : 1, sizeof(*sv->q));
		if (!sv->q)
			return pd_err_set(e, PD_EXIT_ENV, "out of memory");
		if (!sv->cap)
			sv->cap = 1;
	}
	return 0;
}

static int build_dags(struct sim *s)
{
	s->n_dags = pd_dags_count(s->ds);
	s->dags = calloc(s->n_dags ? s->n_dags : 1, sizeof(*s->dags));
	if (!s->dags)
		return -1;
	for (size_t g = 0; g < s->n_dags; g++) {
		const struct pd_dag *pg = pd_dags_dag(s->ds, g);
		struct sim_dag *d = &s->dags[g];
		d->name = pg->name;
		d->st.name = pg->name;
		d->period = pg->period_ns;
		d->deadline = pg->deadline_ns;
		d->first_task = pg->first_task;
		d->n_tasks = pg->n_tasks;
		d->late = pg->late;
		d->reanchor_seq = -1;
		d->bucket_ns = (2 * pg->deadline_ns + SIM_HIST - 1) / SIM_HIST;
		if (d->bucket_ns < 1)
			d->bucket_ns = 1;
		d->preds_left = calloc(SIM_RING * (d->n_tasks + 1), sizeof(uint32_t));
		d->ready_at = calloc(SIM_RING * (d->n_tasks + 1), sizeof(int64_t));
		d->hist = calloc(SIM_HIST + 1, sizeof(uint32_t));
		if (!d->preds_left || !d->ready_at || !d->hist)
			return -1;
	}
	return 0;
}

static void setup_fair(struct sim *s)
{
	const struct pd_dl *dl = pd_platform_dl(s->plat);
	s->fair_mode = s->prm.fair;
	if (s->fair_mode == PD_SIM_FAIR_AUTO)
		s->fair_mode = dl->has_fair_server ? PD_SIM_FAIR_DEFERRED : PD_SIM_FAIR_OFF;
	s->fair_runtime_ns = dl->has_fair_server ? dl->fair_runtime_ns : SIM_FAIR_DEFAULT_RUNTIME_NS;
	s->fair_period_ns = dl->has_fair_server ? dl->fair_period_ns : SIM_FAIR_DEFAULT_PERIOD_NS;
	for (size_t ci = 0; ci < s->n_cores; ci++) {
		struct sim_core *c = &s->cores[ci];
		c->fair_on = s->fair_mode != PD_SIM_FAIR_OFF && s->fair_runtime_ns > 0;
		if (c->fair_on) {
			init_ent(&c->fair, s->fair_runtime_ns, s->fair_period_ns, s->fair_period_ns);
			c->fair.core = (uint32_t)ci;
			c->fair.task = SIM_NO_TASK;
			c->fair.timer_id = s->id_ftimer + (uint32_t)ci;
			c->fair.inact_id = s->id_finact + (uint32_t)ci;
			c->this_bw += c->fair.bw; /* counted in total_bw since 6.12 */
		}
		c->extra_bw = c->max_bw - c->this_bw;
		if (c->extra_bw < 0)
			c->extra_bw = 0;
	}
}

static void first_events(struct sim *s)
{
	for (size_t g = 0; g < s->n_dags; g++) {
		int64_t jit = s->prm.release_jitter_ns > 0 ? pd_rng_range(&s->rng, 0, s->prm.release_jitter_ns) : 0;
		sim_heap_set(&s->heap, s->id_rel + (uint32_t)g, jit);
	}
	if (s->prm.background_util > 0)
		for (size_t c = 0; c < s->n_cores; c++)
			sim_heap_set(&s->heap, s->id_bg + (uint32_t)c, 0);
}

int sim_build(struct sim *s, const pd_plan *p, const struct pd_sim_params *prm, pd_err *e)
{
	memset(s, 0, sizeof(*s));
	s->prm = *prm;
	s->plan = p;
	s->ds = pd_plan_dags(p);
	s->plat = pd_plan_platform(p);
	pd_rng_seed(&s->rng, prm->seed);
	if (check_params(prm, s->ds, e))
		return -1;
	s->n_tasks = pd_dags_task_count(s->ds);
	s->inject_task = prm->has_inject ? pd_dags_inject_task(s->ds, &prm->inject) : -1;
	int64_t ppm = llround(pd_platform_dl(s->plat)->max_util_per_cpu * 1e6);
	if (build_cores(s, ppm) || build_servers(s) || build_dags(s))
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	uint32_t nc = (uint32_t)s->n_cores, nt = (uint32_t)s->n_tasks;
	s->id_server = nc;
	s->id_timer = s->id_server + (uint32_t)s->n_servers;
	s->id_inact = s->id_timer + nt;
	s->id_ftimer = s->id_inact + nt;
	s->id_finact = s->id_ftimer + nc;
	s->id_bg = s->id_finact + nc;
	s->id_rel = s->id_bg + nc;
	s->n_ids = s->id_rel + (uint32_t)s->n_dags;
	if (build_tasks(s, e))
		return -1;
	setup_fair(s);
	if (sim_heap_init(&s->heap, s->n_ids))
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	first_events(s);
	return 0;
}

void sim_destroy(struct sim *s)
{
	for (size_t c = 0; s->cores && c < s->n_cores; c++) {
		free(s->cores[c].tasks);
		free(s->cores[c].ready);
		free(s->cores[c].dirty);
	}
	for (size_t v = 0; s->servers && v < s->n_servers; v++)
		free(s->servers[v].q);
	for (size_t g = 0; s->dags && g < s->n_dags; g++) {
		free(s->dags[g].preds_left);
		free(s->dags[g].ready_at);
		free(s->dags[g].hist);
	}
	free(s->cores);
	free(s->servers);
	free(s->dags);
	free(s->tasks);
	free(s->segs);
	sim_heap_free(&s->heap);
}
