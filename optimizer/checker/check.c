/* SPDX-License-Identifier: MIT */
/*
 * check.c - the driver of the independent checker: recompute, compare, collect every violation.
 * The rules live in check_task.c, check_core.c, check_accel.c and check_path.c.
 */
#include "optimizer/checker/check_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[PD_CK__COUNT] = {
	[PD_CK_WCET] = "wcet",
	[PD_CK_DENSITY] = "density",
	[PD_CK_PATH] = "path",
	[PD_CK_ACCEL_LOAD] = "accel_load",
	[PD_CK_FIFO] = "fifo_bound",
	[PD_CK_SLOTS] = "fpga_slots",
	[PD_CK_RUNTIME_MIN] = "runtime_min",
	[PD_CK_RUNTIME_DEADLINE] = "runtime_gt_deadline",
	[PD_CK_DEADLINE_PERIOD] = "deadline_gt_period",
	[PD_CK_PERIOD] = "period",
	[PD_CK_PERIOD_RANGE] = "period_range",
	[PD_CK_RUNTIME_BUDGET] = "runtime_lt_budget",
	[PD_CK_ADMISSION] = "admission",
	[PD_CK_DEADLINE_BUDGET] = "deadline_lt_budget",
	[PD_CK_OVERHEAD] = "overhead",
	[PD_CK_RECLAIM] = "reclaim",
};

const char *pd_check_kind_name(enum pd_check_kind k)
{
	return (unsigned)k < PD_CK__COUNT ? kind_names[k] : "?";
}

void ck_add(struct ck *c, enum pd_check_kind k, double value, double limit, const char *unit, const char *fmt, ...)
{
	pd_check_report *r = c->r;
	if (r->n_v == r->cap_v) {
		size_t nc = r->cap_v ? 2 * r->cap_v : 16;
		struct pd_check_violation *nv = realloc(r->v, nc * sizeof(*nv));
		if (!nv) {
			c->oom = true;
			return;
		}
		r->v = nv;
		r->cap_v = nc;
	}
	struct pd_check_violation *v = &r->v[r->n_v++];
	memset(v, 0, sizeof(*v));
	v->kind = k;
	v->value = value;
	v->limit = limit;
	v->unit = unit;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->where, sizeof(v->where), fmt, ap);
	va_end(ap);
	r->schedulable = false;
}

const char *ck_task_name(const struct ck *c, size_t i, char *buf, size_t n)
{
	const struct pd_task *t = pd_dags_task(c->dags, i);
	snprintf(buf, n, "%s/%s", pd_dags_dag(c->dags, t->dag)->name, t->name);
	return buf;
}

int64_t ck_umax_ppm(const pd_platform *p)
{
	/* sched_rt_runtime_us / sched_rt_period_us: the kernel's cap is a whole number of us per s. */
	return llround(pd_platform_dl(p)->max_util_per_cpu * 1e6);
}

void ck_capacity(const pd_platform *p, int64_t *num, int64_t *den)
{
	const struct pd_dl *dl = pd_platform_dl(p);
	int64_t ppm = ck_umax_ppm(p);
	if (dl->has_fair_server && dl->fair_period_ns > 0) {
		/* ppm/1e6 - Rf/Pf = (ppm*Pf - 1e6*Rf) / (1e6*Pf); Pf <= 2^22 us keeps this in int64. */
		*num = ppm * dl->fair_period_ns - 1000000LL * dl->fair_runtime_ns;
		*den = 1000000LL * dl->fair_period_ns;
	} else {
		*num = ppm;
		*den = 1000000LL;
	}
	if (*num < 0)
		*num = 0;
}

size_t pd_check_count(const pd_check_report *r, enum pd_check_kind k)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n_v; i++)
		n += r->v[i].kind == k;
	return n;
}

const struct pd_check_violation *pd_check_find(const pd_check_report *r, enum pd_check_kind k)
{
	for (size_t i = 0; i < r->n_v; i++)
		if (r->v[i].kind == k)
			return &r->v[i];
	return NULL;
}

void pd_check_report_free(pd_check_report *r)
{
	if (!r)
		return;
	free(r->v);
	free(r->cores);
	free(r->dags);
	free(r);
}

pd_check_report *pd_check_plan(const pd_plan *p, pd_err *e)
{
	struct ck c = {.plan = p, .dags = pd_plan_dags(p), .plat = pd_plan_platform(p)};
	c.n_tasks = pd_dags_task_count(c.dags);
	c.r = calloc(1, sizeof(*c.r));
	c.wcet_true = calloc(c.n_tasks + 1, sizeof(int64_t));
	c.delay_ns = calloc(c.n_tasks + 1, sizeof(int64_t));
	c.budget_true = calloc(c.n_tasks + 1, sizeof(int64_t));
	if (!c.r || !c.wcet_true || !c.delay_ns || !c.budget_true)
		goto oom;
	c.r->schedulable = true;
	c.r->min_relative_slack = 1.0;
	ck_tasks(&c);
	ck_cores(&c);
	ck_accels(&c);
	ck_paths(&c);
	if (c.oom)
		goto oom;
	free(c.wcet_true);
	free(c.delay_ns);
	free(c.budget_true);
	return c.r;
oom:
	free(c.wcet_true);
	free(c.delay_ns);
	free(c.budget_true);
	pd_check_report_free(c.r);
	pd_err_set(e, PD_EXIT_ENV, "out of memory while checking the plan");
	return NULL;
}
