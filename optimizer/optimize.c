/* SPDX-License-Identifier: MIT */
/*
 * pd_optimize: objectives, solver choice, time budget, and turning the best solution into the plan.
 *
 *   power     min P (heuristic, then the exact master when asked for);
 *   slack     max zeta = min relative slack subject to P <= cap: bisection on zeta, each step a
 *             min-power solve with every path ending by (1 - zeta) D, feasible when P <= cap;
 *   balanced  P* = min P, then the same bisection with cap = 1.01 P*.
 *
 * Nothing is written into the plan unless the optimizer's exact evaluator accepted the solution.
 */
#include "optimizer/opt_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pd_opt_defaults(struct pd_opt_params *p)
{
	memset(p, 0, sizeof(*p));
	p->objective = PD_OBJ_POWER;
	p->solver = PD_SOLVER_AUTO;
	p->backend = PD_BACKEND_GLPK;
	p->time_limit_s = 60;
	p->power_cap_uw = -1;
	p->eta = 1e-5;
	p->gap = 1e-4;
}

int pd_solver_parse(const char *s, enum pd_solver *out)
{
	static const char *const names[] = {"auto", "exact", "heuristic"};
	for (int i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum pd_solver)i;
			return 0;
		}
	return -1;
}

int pd_backend_parse(const char *s, enum pd_backend *out)
{
	if (strcmp(s, "glpk") == 0)
		*out = PD_BACKEND_GLPK;
	else if (strcmp(s, "cbc") == 0)
		*out = PD_BACKEND_CBC;
	else
		return -1;
	return 0;
}

bool pd_opt_have_cbc(void)
{
#ifdef PD_HAVE_CBC
	return true;
#else
	return false;
#endif
}

/* ---------------------------------------------------------------- writing the plan */

static void fill_plan(pd_plan *plan, const struct opt_inst *in, const struct opt_sol *s)
{
	for (size_t k = 0; k < in->n_isl; k++)
		pd_plan_set_island_opp(plan, k, s->isl_opp[k]);
	for (size_t a = 0; a < in->n_acc; a++)
		pd_plan_set_accel_opp(plan, a, s->acc_opp[a]);
	for (size_t i = 0; i < in->n_tasks; i++) {
		struct pd_plan_task *t = pd_plan_task(plan, i);
		memset(t, 0, sizeof(*t));
		int w = s->where[i];
		int64_t exec = opt_exec_ns(in, s, i);
		t->wcet_ns = exec;
		if (w >= 0) {
			size_t k = in->core_isl[w];
			const struct pd_island *isl = pd_platform_island(in->plat, k);
			t->place.kind = PD_PLACE_CPU;
			t->place.island = k;
			t->place.cpu = isl->cpus[(size_t)w - in->isl_core0[k]];
			/* runtime = C_i(k, f) in the model's time; the agent converts it to the kernel's
			 * frequency/capacity-scaled accounting where the kernel scales (arm, arm64). */
			t->runtime_ns = exec;
			t->deadline_ns = s->dl_ns[i];
			t->period_ns = in->T_ns[i];
			t->response_ns = s->dl_ns[i];
		} else {
			size_t v = (size_t)(-w - 1);
			t->place.kind = in->srv[v].kind == PD_ACCEL_GPU ? PD_PLACE_GPU : PD_PLACE_FPGA;
			t->place.accel = in->srv[v].accel;
			t->place.slot = in->srv[v].slot;
			t->place.impl = (size_t)in->impl[i * in->n_srv + v];
			t->response_ns = s->dl_ns[i];
		}
	}
}

/* ---------------------------------------------------------------- objectives */

struct ctx {
	const struct opt_inst *in;
	const struct pd_opt_params *p;
	double t0, deadline;
	bool exact;
	char solver[64];
};

/* Min power; returns the bound and whether it is proven tight. */
static int solve_power(struct ctx *c, struct opt_sol *best, double slack_frac, double cap_w, double deadline,
		       double *lb, bool *proven)
{
	struct opt_heur_result hr;
	double hd = deadline;
	if (c->exact) { /* the heuristic is the warm start: a fraction of the budget, more for large sets
			  * where the MILP mostly tightens the bound */
		double share = c->in->n_tasks <= 30 ? 0.25 : 0.5;
		hd = fmin(deadline, opt_now_s() + fmax(0.5, share * (deadline - opt_now_s())));
	}
	if (opt_heuristic(c->in, c->p, hd, cap_w, slack_frac, best, &hr))
		return -1;
	*lb = hr.lower_bound_w;
	*proven = hr.proven;
	snprintf(c->solver, sizeof(c->solver), "heuristic");
	if (!c->exact || *proven || slack_frac > 0 || isfinite(cap_w))
		return 0;
	double mlb = -INFINITY;
	bool fin = false;
	if (opt_exact(c->in, c->p, deadline, best, &mlb, &fin, c->solver, sizeof(c->solver)))
		return -1;
	if (mlb > *lb || !isfinite(*lb))
		*lb = isfinite(*lb) ? fmax(*lb, mlb) : mlb;
	if (best->ok)
		*lb = fmin(*lb, best->power_w);
	*proven = best->ok && *lb >= best->power_w * (1 - fmax(1e-6, c->p->gap));
	if (!best->ok && fin)
		*lb = INFINITY; /* the master proved that nothing is feasible */
	return 0;
}

/* For the placement and OPPs of best (power unchanged), the largest zeta whose deadlines still pack:
 * bisection with opt_pack (cores and deadlines are free, power does not depend on them). */
static void stretch_slack(struct ctx *c, struct opt_sol *best)
{
	if (!best->ok)
		return;
	struct opt_sol s;
	struct opt_ws *w = opt_ws_new(c->in);
	if (!w || opt_sol_init(&s, c->in)) {
		opt_ws_free(w);
		return;
	}
	double lo = fmax(0, best->slack), hi = 1;
	for (int it = 0; it < 20 && hi - lo > 1e-4 && opt_now_s() < c->deadline; it++) {
		double z = 0.5 * (lo + hi);
		opt_sol_copy(&s, best, c->in);
		if (opt_pack(c->in, &s, w, z, true, c->deadline) <= 1.0 && opt_evaluate(c->in, &s, NULL, 0) &&
		    s.slack > best->slack) {
			opt_sol_copy(best, &s, c->in);
			lo = fmax(z, s.slack);
		} else {
			hi = z;
		}
	}
	opt_sol_free(&s);
	opt_ws_free(w);
}

/* Max slack under a power cap: bisection on zeta with min-power solves. */
static int solve_slack(struct ctx *c, struct opt_sol *best, double cap_w)
{
	struct opt_sol s;
	if (opt_sol_init(&s, c->in))
		return -1;
	double lo = 0, hi = 1;
	bool have = best->ok && best->power_w <= cap_w;
	if (have)
		lo = fmax(0, best->slack);
	for (int it = 0; it < 14 && hi - lo > 1e-3 && opt_now_s() < c->deadline; it++) {
		double z = have ? 0.5 * (lo + hi) : lo;
		struct opt_heur_result hr;
		s.ok = false;
		s.power_w = INFINITY;
		double left = c->deadline - opt_now_s();
		/* the first step (zeta = 0 without a plan yet) is a full min-power search */
		double dl = opt_now_s() + (have ? fmax(0.05, left / (double)(14 - it)) : 0.5 * left);
		if (opt_heuristic(c->in, c->p, dl, cap_w, z, &s, &hr)) {
			opt_sol_free(&s);
			return -1;
		}
		if (s.ok && s.power_w <= cap_w) {
			if (!have || s.slack > best->slack)
				opt_sol_copy(best, &s, c->in);
			have = true;
			lo = fmax(z, s.slack);
		} else if (!have) {
			break; /* not even zeta = 0 fits under the cap */
		} else {
			hi = z;
		}
	}
	opt_sol_free(&s);
	stretch_slack(c, best);
	snprintf(c->solver, sizeof(c->solver), "heuristic/bisection");
	return 0;
}

static void explain(const struct opt_inst *in, const struct pd_opt_params *p, struct pd_opt_result *r, bool capped,
		    bool proven)
{
	opt_explain_infeasible(in, r->explain, sizeof(r->explain));
	if (r->explain[0])
		return;
	if (capped)
		snprintf(r->explain, sizeof(r->explain), "no plan meets every deadline within the power cap of %.6g W",
			 (double)p->power_cap_uw * 1e-6);
	else if (proven)
		snprintf(r->explain, sizeof(r->explain),
			 "every path fits at the top OPPs, but no placement fits every core under its capacity "
			 "%.6g (proven by the exact search)",
			 in->cap_raw);
	else
		snprintf(r->explain, sizeof(r->explain),
			 "every path fits at the top OPPs, but no placement packing every core under its capacity "
			 "%.6g was found in %.2f s (not a proof: a longer --time-limit may find one)",
			 in->cap_raw, r->solve_time_s);
}

int pd_optimize(pd_plan *plan, const struct pd_opt_params *p, struct pd_opt_result *r, pd_err *e)
{
	memset(r, 0, sizeof(*r));
	r->lower_bound_w = -1;
	double t0 = opt_now_s(); /* the limit covers building the instance too */
	struct opt_inst in;
	if (opt_inst_build(&in, pd_plan_dags(plan), pd_plan_platform(plan), p->eta, e))
		return e ? e->code : PD_EXIT_ENV;
	in.rel_gap = fmax(1e-7, p->gap); /* below 1e-7 the searches' float noise decides */
	if (p->backend == PD_BACKEND_CBC && !pd_opt_have_cbc()) {
		opt_inst_free(&in);
		return pd_err_set(e, PD_EXIT_USAGE, "this build has no CBC backend (coinor-libcbc-dev was not found)");
	}
	/* One absolute deadline for every phase (heuristic, each MILP, packing checks, LP polishing):
	 * each gets at most what is left of it, never a fresh allowance of its own. A small reserve
	 * (5 % of the limit, at most OPT_RESERVE_S) is kept for the final evaluation and filling the
	 * plan, and for the steps that only check the clock between calls (one packing of a 120-task
	 * candidate takes up to ~0.15 s). */
	struct ctx c = {.in = &in, .p = p, .t0 = t0};
	double limit_s = p->time_limit_s > 0 ? p->time_limit_s : 60;
	c.deadline = c.t0 + limit_s - fmin(OPT_RESERVE_S, 0.05 * limit_s);
	/* auto: the exact mode starts from the heuristic's plan and only improves it, so it is the
	 * better use of any limit that leaves the heuristic its ~1 s on large sets (measured at 120 XU4
	 * tasks: 28 % gap by the heuristic, 0.02 % by the exact mode in 20 s) */
	c.exact = p->solver == PD_SOLVER_EXACT ||
		  (p->solver == PD_SOLVER_AUTO && (in.n_tasks <= OPT_AUTO_TASKS || limit_s >= OPT_AUTO_LIMIT_S));
	struct opt_sol best;
	if (opt_sol_init(&best, &in)) {
		opt_inst_free(&in);
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	}
	double cap_w = p->power_cap_uw >= 0 ? (double)p->power_cap_uw * 1e-6 : INFINITY;
	double lb = -1;
	bool proven = false;
	int rc = 0;
	if (p->objective == PD_OBJ_SLACK) {
		rc = solve_slack(&c, &best, cap_w);
	} else {
		/* balanced: keep a third of the time for the slack phase */
		double dl = p->objective == PD_OBJ_BALANCED ? c.t0 + (c.deadline - c.t0) * 2.0 / 3.0 : c.deadline;
		rc = solve_power(&c, &best, 0, INFINITY, dl, &lb, &proven);
		if (!rc && best.ok && p->objective == PD_OBJ_BALANCED) {
			double pstar = best.power_w;
			rc = solve_slack(&c, &best, pstar * 1.01);
			proven = false;
		}
	}
	r->solve_time_s = opt_now_s() - c.t0;
	snprintf(r->solver, sizeof(r->solver), "%s", c.solver);
	if (rc) {
		rc = pd_err_set(e, PD_EXIT_ENV, "the solver failed (out of memory or a GLPK error)");
		goto out;
	}
	char why[512] = "";
	if (!best.ok || !opt_evaluate(&in, &best, why, sizeof(why))) {
		r->status = PD_STATUS_INFEASIBLE;
		explain(&in, p, r, p->objective == PD_OBJ_SLACK && isfinite(cap_w), !isfinite(lb) && lb > 0);
		rc = PD_EXIT_FAIL;
		goto out;
	}
	r->power_w = best.power_w;
	r->min_relative_slack = best.slack;
	r->lower_bound_w = isfinite(lb) && lb >= 0 ? fmin(lb, best.power_w) : -1;
	/* gap is about power; unknown (-1) without a bound, e.g. for the slack objective */
	r->gap = r->lower_bound_w >= 0 ? (best.power_w - r->lower_bound_w) / best.power_w : -1.0;
	if (r->gap >= 0 && r->gap < 1e-9)
		r->gap = 0;
	r->status = proven || (p->objective != PD_OBJ_SLACK && r->lower_bound_w >= 0 && r->gap <= fmax(1e-6, p->gap))
			    ? PD_STATUS_OPTIMAL
			    : PD_STATUS_FEASIBLE;
	if (p->objective == PD_OBJ_SLACK)
		r->status = PD_STATUS_FEASIBLE;
	/* Every power in a plan must read back (PD_MAX_POWER_UW): inputs within the limit can still sum
	 * above it (a thousand 1-MW cores), and such a plan is refused here, not written. */
	if (!(best.power_w * 1e6 <= (double)PD_MAX_POWER_UW)) {
		char w[32];
		rc = pd_err_set(e, PD_EXIT_USAGE,
				"the model power of the solution, %s W, is above 1000000W, the largest power a plan may state",
				pd_fmt_double(best.power_w, w, sizeof(w)));
		goto out;
	}
	fill_plan(plan, &in, &best);
	struct pd_plan_meta *m = pd_plan_meta(plan);
	m->status = r->status;
	m->objective = p->objective;
	m->solver = r->solver[0] == 'e' ? (strstr(r->solver, "cbc") ? "exact/cbc" : "exact/glpk")
					: (strstr(r->solver, "bisection") ? "heuristic/bisection" : "heuristic");
	m->gap = r->gap >= 0 ? r->gap : 1.0;
	m->solve_time_s = r->solve_time_s;
	m->power_uw = (int64_t)llround(r->power_w * 1e6);
	m->lower_bound_uw = r->lower_bound_w >= 0 ? (int64_t)floor(r->lower_bound_w * 1e6) : -1;
	m->min_relative_slack = r->min_relative_slack;
	m->power_cap_uw = p->power_cap_uw;
out:
	opt_sol_free(&best);
	opt_inst_free(&in);
	return rc;
}
