/* SPDX-License-Identifier: MIT */
/*
 * pd_opt_verify_plan: the optimizer's own evaluator applied to a plan file's contents, so that tests
 * (and the optimizer before writing) can confirm that every number in the plan is the model's number
 * and every rule holds in integer ns. This is not the independent checker (optimizer/checker/), which
 * shares no code with this module.
 */
#include "optimizer/opt_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static bool say(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool say(char *why, size_t n, const char *fmt, ...)
{
	if (why && n) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, n, fmt, ap);
		va_end(ap);
	}
	return false;
}

static int core_of(const struct opt_inst *in, size_t k, int cpu)
{
	const struct pd_island *isl = pd_platform_island(in->plat, k);
	for (size_t c = 0; c < isl->n_cpus; c++)
		if (isl->cpus[c] == cpu)
			return (int)(in->isl_core0[k] + c);
	return -1;
}

static int server_of(const struct opt_inst *in, size_t accel, int slot)
{
	for (size_t v = 0; v < in->n_srv; v++)
		if (in->srv[v].accel == accel && in->srv[v].slot == slot)
			return (int)v;
	return -1;
}

static bool load_sol(const struct opt_inst *in, const pd_plan *plan, struct opt_sol *s, char *why, size_t n)
{
	for (size_t k = 0; k < in->n_isl; k++)
		s->isl_opp[k] = pd_plan_island_opp(plan, k);
	for (size_t a = 0; a < in->n_acc; a++)
		s->acc_opp[a] = in->srv && pd_platform_accel(in->plat, a)->kind == PD_ACCEL_GPU ? pd_plan_accel_opp(plan, a) : 0;
	for (size_t i = 0; i < in->n_tasks; i++) {
		const struct pd_plan_task *t = pd_plan_task_c(plan, i);
		if (t->place.kind == PD_PLACE_CPU) {
			long k = pd_platform_island_of_cpu(in->plat, t->place.cpu);
			int c = k >= 0 ? core_of(in, (size_t)k, t->place.cpu) : -1;
			if (c < 0)
				return say(why, n, "task %zu: cpu %d is not in the platform", i, t->place.cpu);
			s->where[i] = c;
			s->d_ns[i] = (double)t->deadline_ns;
		} else {
			int v = server_of(in, t->place.accel, t->place.kind == PD_PLACE_FPGA ? t->place.slot : 0);
			if (v < 0)
				return say(why, n, "task %zu: unknown accelerator placement", i);
			s->where[i] = -v - 1;
		}
	}
	return true;
}

static bool fields_match(const struct opt_inst *in, const pd_plan *plan, const struct opt_sol *s, char *why, size_t n)
{
	for (size_t i = 0; i < in->n_tasks; i++) {
		const struct pd_plan_task *t = pd_plan_task_c(plan, i);
		int64_t exec = opt_exec_ns(in, s, i), C = exec;
		if (s->where[i] >= 0) {
			struct pd_budget b;
			size_t k = in->core_isl[s->where[i]];
			pd_platform_budget_at(in->plat, pd_dags_task(in->dags, i), k, s->isl_opp[k], &b);
			C = b.wcet_ns;
			if (t->overhead_ns != b.overhead_ns)
				return say(why, n, "task %zu: overhead %lld ns, the platform says %lld ns", i,
					   (long long)t->overhead_ns, (long long)b.overhead_ns);
		}
		if (t->wcet_ns != C)
			return say(why, n, "task %zu: wcet %lld ns, the model says %lld ns", i, (long long)t->wcet_ns,
				   (long long)C);
		if (s->where[i] >= 0 &&
		    (t->runtime_ns != exec || t->period_ns != pd_plan_reservation_period(t->deadline_ns, in->T_ns[i])))
			return say(why, n, "task %zu: runtime %lld ns / period differ from the budget %lld ns / P(d, T)", i,
				   (long long)t->runtime_ns, (long long)exec);
		if (s->where[i] < 0 && t->response_ns != s->dl_ns[i])
			return say(why, n, "task %zu: response %lld ns, the FIFO bound is %lld ns", i,
				   (long long)t->response_ns, (long long)s->dl_ns[i]);
	}
	return true;
}

bool pd_opt_verify_plan(const pd_plan *plan, double *power_w, double *slack, char *why, size_t n)
{
	struct opt_inst in;
	struct opt_sol s;
	if (opt_inst_build(&in, pd_plan_dags(plan), pd_plan_platform(plan), 0.0, NULL))
		return say(why, n, "out of memory");
	if (opt_sol_init(&s, &in)) {
		opt_inst_free(&in);
		return say(why, n, "out of memory");
	}
	bool ok = load_sol(&in, plan, &s, why, n) && opt_evaluate(&in, &s, why, n) && fields_match(&in, plan, &s, why, n);
	if (power_w)
		*power_w = opt_power_w(&in, &s);
	if (slack)
		*slack = s.slack;
	opt_sol_free(&s);
	opt_inst_free(&in);
	return ok;
}
