/* SPDX-License-Identifier: MIT */
/* The run model's storage: growable vectors of samples, jobs, instances and gaps (run_model_impl.h). */
#include "reports/run_model_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grows *v (element size sz) so that it holds at least n + 1 elements; doubling keeps appends O(1). */
static int grow(void **v, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 64;
	void *p = realloc(*v, c * sz);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

struct rpt_run *rpt_run_new(void)
{
	struct rpt_run *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->arena = pd_arena_new();
	if (!r->arena) {
		free(r);
		return NULL;
	}
	return r;
}

void rpt_run_free(struct rpt_run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_rails; i++) {
		free(r->rails[i].t_ns);
		free(r->rails[i].uw);
	}
	free(r->rails);
	free(r->jobs);
	free(r->skips);
	free(r->insts);
	free(r->gaps);
	free(r->task_overruns);
	free(r->freqs);
	free(r->steals);
	free(r->foreigns);
	free(r->busys);
	free(r->busy_cpus);
	free(r->sim_dags);
	for (size_t i = 0; i < r->n_notes; i++)
		free(r->notes[i]);
	pd_plan_free(r->plan);
	pd_arena_free(r->arena);
	free(r);
}

/* The platform's sensor entry for a rail tells what the rail measures (an island, an accelerator,
 * "board"...), which decides how its samples compare with the model. */
static const char *rail_measures(const struct rpt_run *r, const char *name)
{
	if (!r->plan)
		return NULL;
	const pd_platform *p = pd_plan_platform(r->plan);
	for (size_t s = 0; s < pd_platform_sensor_count(p); s++) {
		const struct pd_sensor *se = pd_platform_sensor(p, s);
		if (se->rail && strcmp(se->rail, name) == 0)
			return se->measures;
	}
	return NULL;
}

struct rpt_rail *rpt_run_rail(struct rpt_run *r, const char *name)
{
	for (size_t i = 0; i < r->n_rails; i++)
		if (strcmp(r->rails[i].name, name) == 0)
			return &r->rails[i];
	if (grow((void **)&r->rails, &r->cap_rails, r->n_rails, sizeof(*r->rails)) < 0)
		return NULL;
	struct rpt_rail *rail = &r->rails[r->n_rails];
	memset(rail, 0, sizeof(*rail));
	rail->name = pd_arena_strdup(r->arena, name);
	if (!rail->name)
		return NULL;
	const char *m = rail_measures(r, name);
	rail->measures = m ? pd_arena_strdup(r->arena, m) : NULL;
	r->n_rails++;
	return rail;
}

int rpt_rail_add(struct rpt_rail *rail, int64_t t_ns, int64_t uw)
{
	/* time must move forward: a sample at or before the previous one (clock step, duplicated
	 * record) would make the trapezoid integral negative; it is dropped */
	if (rail->n && t_ns <= rail->t_ns[rail->n - 1])
		return 0;
	size_t cap = rail->cap;
	if (grow((void **)&rail->t_ns, &cap, rail->n, sizeof(int64_t)) < 0)
		return -1;
	size_t cap2 = rail->cap;
	if (grow((void **)&rail->uw, &cap2, rail->n, sizeof(int64_t)) < 0)
		return -1;
	rail->cap = cap;
	rail->t_ns[rail->n] = t_ns;
	rail->uw[rail->n] = uw;
	rail->n++;
	return 0;
}

int rpt_run_add_job(struct rpt_run *r, const struct rpt_job *j)
{
	if (grow((void **)&r->jobs, &r->cap_jobs, r->n_jobs, sizeof(*j)) < 0)
		return -1;
	r->jobs[r->n_jobs++] = *j;
	return 0;
}

int rpt_run_add_skip(struct rpt_run *r, const struct rpt_skip *k)
{
	if (grow((void **)&r->skips, &r->cap_skips, r->n_skips, sizeof(*k)) < 0)
		return -1;
	r->skips[r->n_skips++] = *k;
	return 0;
}

int rpt_run_add_inst(struct rpt_run *r, const struct rpt_inst *in)
{
	if (grow((void **)&r->insts, &r->cap_insts, r->n_insts, sizeof(*in)) < 0)
		return -1;
	r->insts[r->n_insts++] = *in;
	return 0;
}

int rpt_run_add_gap(struct rpt_run *r, const struct rpt_gap *g)
{
	if (grow((void **)&r->gaps, &r->cap_gaps, r->n_gaps, sizeof(*g)) < 0)
		return -1;
	r->gaps[r->n_gaps++] = *g;
	return 0;
}

void rpt_run_note(struct rpt_run *r, const char *fmt, ...)
{
	if (r->n_notes >= sizeof(r->notes) / sizeof(r->notes[0]))
		return;
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) >= 0)
		r->notes[r->n_notes++] = s;
	va_end(ap);
}

void rpt_run_mark_incomplete(struct rpt_run *r, const char *fmt, ...)
{
	if (r->incomplete) /* the first reason is the one that explains the rest */
		return;
	r->incomplete = true;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->incomplete_why, sizeof(r->incomplete_why), fmt, ap);
	va_end(ap);
}
