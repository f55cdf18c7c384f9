/* SPDX-License-Identifier: MIT */
/*
 * Plan -> pd_agent_spec: the flat view the executor needs, with every lookup done once at start-up
 * (OPP frequencies, work kinds, scaled bcet), so that nothing in the hot loop touches the model.
 */
#include "agents/pd_agent.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_work(struct pd_agent_spec *s, struct pd_agent_task *t, const char *w, pd_err *e)
{
	struct pd_work pw;
	const char *why = "invalid";
	if (pd_dags_work_parse(w, &pw, &why))
		return pd_err_set(e, PD_EXIT_USAGE, "task '%s/%s': work '%s': %s", t->dag_name, t->name, w ? w : "", why);
	switch (pw.kind) {
	case PD_WORK_SPIN:
		t->work = PD_AW_SPIN;
		break;
	case PD_WORK_BUSY:
		t->work = PD_AW_BUSY;
		break;
	default:
		t->work = PD_AW_PLUGIN;
		t->plugin_lib = pd_arena_strdup(s->arena, pw.lib);
		t->plugin_sym = pd_arena_strdup(s->arena, pw.symbol);
		break;
	}
	return 0;
}

static void fill_platform(struct pd_agent_spec *s, const pd_plan *p)
{
	const pd_platform *pl = pd_plan_platform(p);
	s->board = pd_arena_strdup(s->arena, pd_platform_name(pl));
	s->ref_khz = pd_platform_ref_freq_khz(pl);
	s->n_islands = pd_platform_island_count(pl);
	s->islands = pd_arena_calloc(s->arena, s->n_islands + 1, sizeof(*s->islands));
	for (size_t k = 0; k < s->n_islands; k++) {
		const struct pd_island *is = pd_platform_island(pl, k);
		s->islands[k] = (struct pd_agent_island){is->name, is->policy, is->opps[pd_plan_island_opp(p, k)].freq_khz,
							 is->capacity, is->cpus, is->n_cpus};
		if (!s->islands[k].policy)
			s->islands[k].policy = pd_arena_printf(s->arena, "policy%d", is->n_cpus ? is->cpus[0] : 0);
	}
	s->n_accels = pd_platform_accel_count(pl);
	s->accels = pd_arena_calloc(s->arena, s->n_accels + 1, sizeof(*s->accels));
	for (size_t a = 0; a < s->n_accels; a++) {
		const struct pd_accelerator *ac = pd_platform_accel(pl, a);
		int64_t f = 0;
		if (ac->kind == PD_ACCEL_GPU && ac->n_opps)
			f = ac->opps[pd_plan_accel_opp(p, a)].freq_khz;
		s->accels[a] = (struct pd_agent_accel){ac->name, ac->kind, ac->manager, ac->devfreq, f};
	}
	s->n_rails = pd_platform_sensor_count(pl);
	s->rails = pd_arena_calloc(s->arena, s->n_rails + 1, sizeof(*s->rails));
	for (size_t r = 0; r < s->n_rails; r++) {
		const struct pd_sensor *se = pd_platform_sensor(pl, r);
		s->rails[r] = (struct pd_agent_rail){se->uri, se->device, se->channel, se->rail, se->measures, se->scale};
	}
}

int pd_agent_spec_from_plan(const pd_plan *p, struct pd_agent_spec *s, pd_err *e)
{
	memset(s, 0, sizeof(*s));
	s->arena = pd_arena_new();
	if (!s->arena)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	const pd_dagset *ds = pd_plan_dags(p);
	const pd_platform *pl = pd_plan_platform(p);
	s->plan_hash = pd_plan_hash(p);
	fill_platform(s, p);
	s->n_dags = pd_dags_count(ds);
	s->dags = pd_arena_calloc(s->arena, s->n_dags + 1, sizeof(*s->dags));
	for (size_t g = 0; g < s->n_dags; g++) {
		const struct pd_dag *d = pd_dags_dag(ds, g);
		s->dags[g] = (struct pd_agent_dag){d->name, d->period_ns, d->deadline_ns, d->first_task, d->n_tasks, d->late};
	}
	s->n_tasks = pd_dags_task_count(ds);
	s->tasks = pd_arena_calloc(s->arena, s->n_tasks + 1, sizeof(*s->tasks));
	int64_t *finish = pd_arena_calloc(s->arena, s->n_tasks + 1, sizeof(*finish));
	if (!s->tasks || !finish)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	pd_plan_finish_offsets(p, finish);
	for (size_t i = 0; i < s->n_tasks; i++) {
		const struct pd_task *dt = pd_dags_task(ds, i);
		const struct pd_plan_task *pt = pd_plan_task_c(p, i);
		struct pd_agent_task *t = &s->tasks[i];
		t->name = dt->name;
		t->dag = dt->dag;
		t->dag_name = s->dags[dt->dag].name;
		t->preds = dt->preds;
		t->n_preds = dt->n_preds;
		t->succs = dt->succs;
		t->n_succs = dt->n_succs;
		t->wcet_ref_ns = dt->wcet_ns;
		t->wcet_fixed_ns = dt->wcet_fixed_ns;
		t->bcet_ref_ns = dt->bcet_ns > 0 ? dt->bcet_ns : dt->wcet_ns;
		t->ref_khz = s->ref_khz;
		t->wcet_ns = pt->wcet_ns;
		t->runtime_ns = pt->runtime_ns;
		t->deadline_ns = pt->deadline_ns;
		t->period_ns = pt->period_ns ? pt->period_ns : s->dags[dt->dag].period_ns;
		t->reclaim = pt->reclaim;
		t->finish_ns = finish[i];
		t->overhead_ns = pt->overhead_ns > 0 ? pt->overhead_ns : 0;
		if (pt->place.kind == PD_PLACE_CPU) {
			const struct pd_agent_island *is = &s->islands[pt->place.island];
			t->cpu = pt->place.cpu;
			t->opp_khz = is->opp_khz;
			t->capacity = is->capacity;
			if (parse_work(s, t, dt->work, e))
				return e->code;
			/* bcet at the OPP with the same law as the plan's wcet */
			t->bcet_ns = t->bcet_ref_ns >= t->wcet_ref_ns
					     ? t->wcet_ns
					     : pd_platform_wcet_scale(t->bcet_ref_ns, t->wcet_fixed_ns < t->bcet_ref_ns ? t->wcet_fixed_ns : 0,
							     s->ref_khz, is->capacity, is->opp_khz);
			if (t->bcet_ns > t->wcet_ns)
				t->bcet_ns = t->wcet_ns;
		} else {
			t->cpu = -1;
			t->work = PD_AW_ACCEL;
			t->accel = pt->place.accel;
			t->slot = pt->place.slot;
			const struct pd_impl *im = &dt->impls[pt->place.impl];
			t->bitstream = im->bitstream;
			t->latency_top_ns = im->latency_ns;
			t->accel_power_uw = im->power_uw;
			t->bcet_ns = t->wcet_ns;
			(void)pl;
		}
	}
	return 0;
}

int pd_agent_spec_load(const char *plan_path, struct pd_agent_spec *s, FILE *errf, pd_err *e)
{
	memset(s, 0, sizeof(*s)); /* pd_agent_spec_free is safe on every path */
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *p = pd_plan_load_file(plan_path, &d);
	if (!p) {
		if (errf)
			pd_diags_print(&d, errf);
		if (!pd_diags_to_err(&d, e))
			pd_err_set(e, PD_EXIT_USAGE, "%s: cannot load the plan", plan_path);
		pd_diags_free(&d);
		return PD_EXIT_USAGE;
	}
	pd_diags_free(&d);
	int rc = pd_agent_spec_from_plan(p, s, e);
	/* The spec borrows names from the plan's arenas: keep the plan alive as long as the spec by
	 * copying what it borrows. Simplest correct choice: copy the strings and arrays now. */
	if (rc == 0) {
		for (size_t i = 0; i < s->n_tasks; i++) {
			struct pd_agent_task *t = &s->tasks[i];
			t->name = pd_arena_strdup(s->arena, t->name);
			size_t *pr = pd_arena_calloc(s->arena, t->n_preds + 1, sizeof(size_t));
			size_t *su = pd_arena_calloc(s->arena, t->n_succs + 1, sizeof(size_t));
			if (t->n_preds)
				memcpy(pr, t->preds, t->n_preds * sizeof(size_t));
			if (t->n_succs)
				memcpy(su, t->succs, t->n_succs * sizeof(size_t));
			t->preds = pr;
			t->succs = su;
			if (t->bitstream)
				t->bitstream = pd_arena_strdup(s->arena, t->bitstream);
			if (t->plugin_lib && t->plugin_lib[0] != '/') {
				/* relative plugin paths are relative to the plan's directory, and only to it
				 * (pd_agent_plugin_path): never the dynamic linker's search path */
				char *dup = strdup(plan_path);
				char *real = dup ? realpath(dirname(dup), NULL) : NULL;
				t->plugin_dir = real ? pd_arena_strdup(s->arena, real) : NULL;
				free(real);
				free(dup);
			}
		}
		for (size_t g = 0; g < s->n_dags; g++)
			s->dags[g].name = pd_arena_strdup(s->arena, s->dags[g].name);
		for (size_t i = 0; i < s->n_tasks; i++)
			s->tasks[i].dag_name = s->dags[s->tasks[i].dag].name;
		for (size_t k = 0; k < s->n_islands; k++) {
			struct pd_agent_island *is = &s->islands[k];
			is->name = pd_arena_strdup(s->arena, is->name);
			is->policy = pd_arena_strdup(s->arena, is->policy);
			int *c = pd_arena_calloc(s->arena, is->n_cpus + 1, sizeof(int));
			if (is->n_cpus)
				memcpy(c, is->cpus, is->n_cpus * sizeof(int));
			is->cpus = c;
		}
		for (size_t a = 0; a < s->n_accels; a++) {
			struct pd_agent_accel *ac = &s->accels[a];
			ac->name = pd_arena_strdup(s->arena, ac->name);
			ac->manager = ac->manager ? pd_arena_strdup(s->arena, ac->manager) : NULL;
			ac->devfreq = ac->devfreq ? pd_arena_strdup(s->arena, ac->devfreq) : NULL;
		}
		for (size_t r = 0; r < s->n_rails; r++) {
			struct pd_agent_rail *ra = &s->rails[r];
			ra->uri = pd_arena_strdup(s->arena, ra->uri ? ra->uri : "local:");
			ra->device = pd_arena_strdup(s->arena, ra->device ? ra->device : "");
			ra->channel = pd_arena_strdup(s->arena, ra->channel ? ra->channel : "");
			ra->rail = pd_arena_strdup(s->arena, ra->rail ? ra->rail : "");
			ra->measures = pd_arena_strdup(s->arena, ra->measures ? ra->measures : "");
		}
		s->board = pd_arena_strdup(s->arena, s->board ? s->board : "");
	}
	pd_plan_free(p);
	return rc;
}

void pd_agent_spec_free(struct pd_agent_spec *s)
{
	if (s && s->arena)
		pd_arena_free(s->arena);
	if (s)
		s->arena = NULL;
}
