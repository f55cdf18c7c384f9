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
#include "optimizer/opt_impl.h"

#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The hull worker searches plans after its bound only with at least this much time left (s): the
 * heuristic alone takes ~0.5 s at 120 tasks on Xavier. */
#define OPT_HULL_PLANS_MIN_S 0.5
/* The share of what is then left that goes to the plans where the hull points (hull_plans.c); the
 * heuristic's iterated descent gets the rest. */
#define OPT_HULL_PLANS_SHARE 0.8

void pd_opt_defaults(struct pd_opt_params *p)
{
	memset(p, 0, sizeof(*p));
	p->objective = PD_OBJ_POWER;
	p->solver = PD_SOLVER_AUTO;
	p->backend = PD_BACKEND_AUTO;
	p->time_limit_s = 60;
	p->power_cap_uw = -1;
	p->eta = 1e-5;
	p->gap = 1e-4;
}

int pd_opt_solver_parse(const char *s, enum pd_solver *out)
{
	static const char *const names[] = {"auto", "exact", "heuristic"};
	for (int i = 0; i < 3; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum pd_solver)i;
			return 0;
		}
	return -1;
}

int pd_opt_backend_parse(const char *s, enum pd_backend *out)
{
	if (strcmp(s, "glpk") == 0)
		*out = PD_BACKEND_GLPK;
	else if (strcmp(s, "auto") == 0)
		*out = PD_BACKEND_AUTO;
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

/* Is task b reachable from task a along successor edges (a precedes b in their DAG)? Iterative
 * depth-first search with caller scratch (seen: n_tasks flags, stack: n_tasks entries). */
static bool precedes(const pd_dagset *ds, size_t a, size_t b, bool *seen, size_t *stack, size_t n)
{
	memset(seen, 0, n * sizeof(*seen));
	size_t top = 0;
	stack[top++] = a;
	seen[a] = true;
	while (top) {
		const struct pd_task *t = pd_dags_task(ds, stack[--top]);
		for (size_t s = 0; s < t->n_succs; s++) {
			size_t q = t->succs[s];
			if (q == b)
				return true;
			if (!seen[q]) {
				seen[q] = true;
				stack[top++] = q;
			}
		}
	}
	return false;
}

/*
 * GRUB reclaiming (SCHED_FLAG_RECLAIM) per task: a job that overruns its budget then keeps running on
 * the core's unused bandwidth instead of being throttled into its next period, which with
 * constrained deadlines delays every later job of its DAG (docs/MODEL.md "Reclaiming"). The kernel's
 * GRUB accounts bandwidth as Q/P, which the density test (sum Q/d) matches only for implicit
 * deadlines: with constrained ones a reclaiming task could take time the density test gives to a
 * neighbour. The optimizer's reservations have P = d (pd_plan_reservation_period), so every core
 * qualifies unless a deadline below the kernel's minimum period made some P > d. Every task of a
 * core reclaims when its tasks all have implicit deadlines (d = P), or
 * all lie on one path of one DAG (pairwise ordered by precedence, a single task included): then the
 * only jobs a reclaiming overrun can delay are its own DAG's later ones, which an overrun delays
 * anyway. `check` verifies the same rule.
 */
static void decide_reclaim(pd_plan *plan, const struct opt_inst *in, const struct opt_sol *s)
{
	size_t n = in->n_tasks;
	bool *seen = calloc(n ? n : 1, sizeof(*seen));
	size_t *stack = calloc(n ? n : 1, sizeof(*stack)), *on = calloc(n ? n : 1, sizeof(*on));
	for (size_t c = 0; seen && stack && on && c < in->n_cores; c++) {
		size_t m = 0;
		bool implicit = true, one_path = true;
		for (size_t i = 0; i < n; i++)
			if (s->where[i] == (int)c) {
				on[m++] = i;
				implicit &= pd_plan_task_c(plan, i)->deadline_ns == pd_plan_task_c(plan, i)->period_ns;
			}
		for (size_t x = 0; x < m && one_path; x++)
			for (size_t y = x + 1; y < m && one_path; y++)
				one_path = in->task_dag[on[x]] == in->task_dag[on[y]] &&
					   (precedes(in->dags, on[x], on[y], seen, stack, n) ||
					    precedes(in->dags, on[y], on[x], seen, stack, n));
		for (size_t x = 0; x < m; x++)
			pd_plan_task(plan, on[x])->reclaim = implicit || one_path;
	}
	free(seen);
	free(stack);
	free(on);
}

static void fill_plan(pd_plan *plan, const struct opt_inst *in, const struct opt_sol *s)
{
	for (size_t k = 0; k < in->n_isl; k++)
		pd_plan_set_island_opp(plan, k, s->isl_opp[k]);
	for (size_t a = 0; a < in->n_acc; a++)
		pd_plan_set_accel_opp(plan, a, s->acc_opp[a]);
	for (size_t i = 0; i < in->n_tasks; i++) {
		struct pd_plan_task *t = pd_plan_task(plan, i);
		memset(t, 0, sizeof(*t));
		t->overhead_ns = -1;
		int w = s->where[i];
		int64_t exec = opt_exec_ns(in, s, i);
		t->wcet_ns = exec;
		if (w >= 0) {
			size_t k = in->core_isl[w];
			const struct pd_island *isl = pd_platform_island(in->plat, k);
			t->place.kind = PD_PLACE_CPU;
			t->place.island = k;
			t->place.cpu = isl->cpus[(size_t)w - in->isl_core0[k]];
			/* wcet = C_i(k, f), runtime = Q = ceil((C + o_k)(1 + m)) in the model's time (the
			 * instance's Q is pd_platform_budget_at's); the agent hands the kernel exactly Q, converted
			 * to its frequency/capacity-scaled accounting where the kernel scales (arm, arm64). */
			struct pd_budget b;
			pd_platform_budget_at(in->plat, pd_dags_task(in->dags, i), k, s->isl_opp[k], &b);
			t->wcet_ns = b.wcet_ns;
			t->overhead_ns = b.overhead_ns;
			t->runtime_ns = exec;
			t->deadline_ns = s->dl_ns[i];
			t->period_ns = pd_plan_reservation_period(s->dl_ns[i], in->T_ns[i]);
			t->response_ns = s->dl_ns[i];
		} else {
			size_t v = opt_where_server_of(w);
			t->place.kind = in->srv[v].kind == PD_ACCEL_GPU ? PD_PLACE_GPU : PD_PLACE_FPGA;
			t->place.accel = in->srv[v].accel;
			t->place.slot = in->srv[v].slot;
			t->place.impl = (size_t)in->impl[i * in->n_srv + v];
			t->response_ns = s->dl_ns[i];
		}
	}
	decide_reclaim(plan, in, s);
}

/* ---------------------------------------------------------------- objectives */

struct ctx {
	struct opt_inst *in; /* the worker points in->pub at its own page */
	struct opt_pub *pub;
	struct pd_opt_params params; /* backend resolved to glpk or cbc */
	const struct pd_opt_params *p; /* = &params */
	double t0, deadline;
	bool exact;
	enum opt_used used;
	/* the worker's results (read by the parent through the published page) */
	struct opt_sol best;
	double lb;
	bool proven;
	char note[400]; /* why the worker stopped early, when it did not end normally */
	const struct opt_pub *peer; /* the other worker's page (small_portfolio), else NULL */
	struct opt_board *board;    /* the screening bounds both share (small_portfolio), else NULL */
	bool precise;               /* its branch and bound to the tighter tolerances (small_portfolio) */
	bool hull;                  /* it only computes the OPP hull bound (hull_portfolio) */
	bool hull_beside;           /* the other worker does (hull_portfolio) */
};

const char *opt_used_name(enum opt_used u)
{
	switch (u) {
	case OPT_USED_BISECTION:
		return "heuristic/bisection";
	case OPT_USED_EXACT_GLPK:
		return "exact/glpk";
	case OPT_USED_EXACT_CBC:
		return "exact/cbc";
	case OPT_USED_HEURISTIC:
		break;
	}
	return "heuristic";
}

static void set_used(struct ctx *c, enum opt_used u)
{
	c->used = u;
	opt_pub_used(c->in, u);
}

/* Tests only (pd_opt_params.fault): fail the way a solver library can, where the exact phase starts. */
static void inject_fault(enum pd_opt_fault f)
{
	if (f == PD_OPT_FAULT_GLPK_ERROR)
		glp_error("injected fault (test)\n"); /* GLPK's own error path: its error hook, or abort() */
	if (f == PD_OPT_FAULT_ABORT)
		abort();
	while (f == PD_OPT_FAULT_HANG) { /* ignores every clock: only the hard kill ends it */
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
}

/* Min power; returns the bound and whether it is proven tight. Every valid bound is published as
 * soon as it is known (min with the incumbent: what the worker is killed with is still honest). */
static int solve_power(struct ctx *c, struct opt_sol *best, double deadline, double *lb, bool *proven)
{
	struct opt_heur_result hr;
	/* The heuristic gets the same deadline as in --solver heuristic: the exact mode starts from
	 * exactly the plan the heuristic alone would return, so it is never worse (it finishes in well
	 * under a second on most sets and leaves the rest to the exact search). */
	if (opt_heuristic(c->in, c->p, deadline, INFINITY, 0, best, &hr))
		return opt_pub_fail(c->in, "out of memory in the heuristic");
	*lb = hr.lower_bound_w;
	*proven = hr.proven;
	set_used(c, OPT_USED_HEURISTIC);
	if (isfinite(*lb) && best->ok)
		opt_pub_bound(c->in, fmin(*lb, best->power_w));
	if (!c->exact || *proven)
		return 0;
	set_used(c, c->p->backend == PD_BACKEND_CBC ? OPT_USED_EXACT_CBC : OPT_USED_EXACT_GLPK);
	inject_fault(c->p->fault);
	double mlb = -INFINITY;
	bool fin = false;
	if (opt_exact(c->in, c->p, deadline, best, &mlb, &fin))
		return opt_pub_fail(c->in, "out of memory building the exact master");
	if (mlb > *lb || !isfinite(*lb))
		*lb = isfinite(*lb) ? fmax(*lb, mlb) : mlb;
	if (best->ok)
		*lb = fmin(*lb, best->power_w);
	*proven = best->ok && *lb >= best->power_w * (1 - fmax(1e-6, c->p->gap) - OPT_GAP_FLOAT_SLACK);
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
		return opt_pub_fail(c->in, "out of memory in the slack search");
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
			return opt_pub_fail(c->in, "out of memory in the slack search's heuristic");
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
	set_used(c, OPT_USED_BISECTION);
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

/* The search worker's plan when it is cheaper than this worker's (the plans below start from it);
 * whether there was one. */
static bool adopt_peer_plan(struct ctx *c)
{
	struct opt_sol peer;
	if (opt_sol_init(&peer, c->in))
		return false;
	bool got = opt_peer_take(c->in, &peer);
	if (got && (!c->best.ok || peer.power_w < c->best.power_w))
		opt_sol_copy(&c->best, &peer, c->in);
	opt_sol_free(&peer);
	return got;
}

/*
 * The hull worker (hull_portfolio): the OPP hull's bound, published round by round (hull.c), then
 * plans with what is left of the time: from the search worker's plan (or the heuristic's, when it
 * has none), the plans where the hull points (hull_plans.c), then the iterated descent with a random
 * stream of its own (the search worker's is seed 1). Why: on CLP the hull converges in 3-5 s of a
 * 10-s limit, and what Xavier's gaps above 30 tasks then lack is plans; the descents stay in the
 * valley of OPP vectors they start in, where the hull's point shows others (docs/MODEL.md, "Plans
 * where the hull points"). The parent keeps the cheaper plan of both workers (merge).
 */
static int hull_then_plans(struct ctx *c)
{
	struct opt_sol hint;
	if (opt_sol_init(&hint, c->in))
		return 0; /* out of memory: no bound, the search's stands */
	c->lb = opt_hull_bound(c->in, c->deadline, &hint);
	struct opt_heur_result hr;
	if (opt_now_s() > c->deadline - OPT_HULL_PLANS_MIN_S)
		goto out; /* the bound stands */
	/* the search worker's plan, else the heuristic's (the search ran the heuristic first) */
	if (!adopt_peer_plan(c) && opt_heuristic(c->in, c->p, c->deadline, INFINITY, 0, &c->best, &hr))
		goto out;
	set_used(c, OPT_USED_EXACT_GLPK); /* a plan of the exact mode's portfolio, as the search's own */
	opt_hull_plans(c->in, &hint, &c->best, opt_now_s() + OPT_HULL_PLANS_SHARE * (c->deadline - opt_now_s()),
		       false);
	opt_heur_restarts(c->in, c->deadline, &c->best, 2);
out:
	opt_sol_free(&hint);
	return 0;
}

/* The worker's work (worker.c runs it in a child process): the objective's searches on c->best,
 * which publishes every incumbent; then the final bound. */
static int work(void *arg)
{
	struct ctx *c = arg;
	const struct pd_opt_params *p = c->p;
	c->in->pub = c->pub; /* in the child: its own copy of the instance */
	c->in->peer = c->peer;
	c->in->board = c->board;
	c->in->precise_bb = c->precise;
	c->in->hull_beside = c->hull_beside;
	c->best.publish = true;
	double cap_w = p->power_cap_uw >= 0 ? (double)p->power_cap_uw * 1e-6 : INFINITY;
	int rc;
	c->lb = -1;
	c->proven = false;
	if (p->objective == PD_OBJ_SLACK)
		return solve_slack(c, &c->best, cap_w);
	if (c->hull)
		return hull_then_plans(c);
	/* balanced: keep a third of the time for the slack phase */
	double dl = p->objective == PD_OBJ_BALANCED ? c->t0 + (c->deadline - c->t0) * 2.0 / 3.0 : c->deadline;
	rc = solve_power(c, &c->best, dl, &c->lb, &c->proven);
	if (!rc && !isnan(c->lb) && (c->lb > 0 || !c->best.ok))
		opt_pub_bound(c->in, c->best.ok ? fmin(c->lb, c->best.power_w) : c->lb);
	if (!rc && c->best.ok && p->objective == PD_OBJ_BALANCED) {
		double pstar = c->best.power_w;
		rc = solve_slack(c, &c->best, pstar * 1.01);
		c->proven = false;
	}
	opt_pub_set_proven(c->in, c->proven);
	return rc;
}

/* The parent's view after the worker ended: the last published plan and bound. */
static int collect(struct ctx *c, struct opt_pub *P, const struct opt_worker_end *end, pd_err *e)
{
	if (end->how == OPT_END_INPROC) /* c->best, lb, proven are this process's own */
		return end->rc ? pd_err_set(e, PD_EXIT_ENV, "the solver failed: %s", end->reason) : 0;
	c->best.ok = false;
	opt_pub_take(P, c->in, &c->best);
	c->used = opt_pub_used_get(P);
	double plb = opt_pub_lb(P);
	c->lb = isinf(plb) && plb < 0 ? -1 : plb;
	if (c->lb < 0 && c->best.ok && end->how != OPT_END_DONE) /* stopped before any bound: a quick one */
		c->lb = fmin(opt_quick_bound(c->in), c->best.power_w);
	c->proven = end->how == OPT_END_DONE && !end->rc && opt_pub_proven(P);
	if (end->how == OPT_END_CRASH || (end->how == OPT_END_DONE && end->rc)) {
		const char *why = end->reason[0] ? end->reason : "out of memory";
		if (!c->best.ok)
			return pd_err_set(e, PD_EXIT_ENV, "the solver failed before finding a plan: %s", why);
		/* the reason is cut to what fits: the note must not be */
		snprintf(c->note, sizeof(c->note), "the %s search stopped early (%.300s); best plan found before",
			 opt_used_name(c->used), why);
	}
	return 0;
}

/* Both backends at once (--backend auto): only for the exact power search, with CBC built in and a
 * second CPU to run it on, and only on platforms with few OPP vectors (OPT_PORTFOLIO_VECTORS; the
 * ZCU102 has 4), where CBC's branch and cut closes the single-island masters that GLPK's search does
 * not (80-120 tasks: ~1 s against > 60 s). Elsewhere GLPK alone: on XU4 (247 vectors) the second
 * worker only took CPU from GLPK's island search (120 tasks, 60 s, loaded 2-CPU VM: 16.7 % gap with
 * both, 0.031 % with GLPK alone), and on Xavier (descent) from the heuristic (+7.7 % power at 80
 * tasks in 10 s). */
static bool portfolio(const struct opt_inst *in, const struct pd_opt_params *p, bool exact)
{
	return p->backend == PD_BACKEND_AUTO && exact && p->objective == PD_OBJ_POWER && pd_opt_have_cbc() &&
	       sysconf(_SC_NPROCESSORS_ONLN) >= 2 && opt_vector_count(in) <= OPT_PORTFOLIO_VECTORS;
}

/*
 * Two GLPK workers at once on small sets (--backend auto, the exact power search, up to
 * OPT_PER_CORE_TASKS tasks, two CPUs, where CBC's portfolio does not run): the same search, but the
 * second one's branch and bound solves its LPs to tighter tolerances (opt_screen_precise), and each
 * prunes at the better of both plans (cut_w). Why: on Xavier's 30-task sets the two settings fail on
 * different sets. The default one finds the plans (cheap nodes, many dives); the tight one's leaves
 * and node bounds are the LP's, not Kelley's (seed 11045238: proven in 1.8 s, open at 0.031 % after
 * 60 s otherwise; seed 3042740: bound 5.2462 W against 5.2430 W), but its slower nodes find dearer
 * plans (seed 1725745: 5.2315 W against 5.2291 W). The second CPU was idle on these sets.
 */
static bool small_portfolio(const struct opt_inst *in, const struct pd_opt_params *p, bool exact)
{
	return p->backend == PD_BACKEND_AUTO && exact && p->objective == PD_OBJ_POWER &&
	       in->n_tasks <= OPT_PER_CORE_TASKS && sysconf(_SC_NPROCESSORS_ONLN) >= 2 && !portfolio(in, p, exact);
}

/*
 * The OPP hull bound beside the search (--backend auto, the exact power search, above
 * OPT_PER_CORE_TASKS tasks, two CPUs, platforms whose vectors are searched over the canonical list:
 * Xavier): the second worker computes hull.c's bound over every vector at once while the first runs
 * the whole search; the larger bound is kept. Why: on Xavier at 120 tasks the search's bound after
 * 10 s was 5.59 W (seed 778, plan 5.8558 W, 4.5 %), tens of thousands of vectors still open, and the
 * second CPU idle; the hull's bound there is 5.71 W after its first LP and 5.79 W after 9 s (1.1 %).
 */
static bool hull_portfolio(const struct opt_inst *in, const struct pd_opt_params *p, bool exact)
{
	return p->backend == PD_BACKEND_AUTO && exact && p->objective == PD_OBJ_POWER &&
	       in->n_tasks > OPT_PER_CORE_TASKS && sysconf(_SC_NPROCESSORS_ONLN) >= 2 && !portfolio(in, p, exact) &&
	       opt_vector_count(in) > OPT_VECTOR_LIMIT && opt_twin_pairs(in) > 0;
}

/* The better of the workers' results into c[0]: the cheaper plan, the larger bound (each is valid). */
static void merge(struct ctx *c, size_t n, const int *rcs, struct pd_opt_result *r)
{
	size_t b = 0;
	for (size_t i = 1; i < n; i++)
		if (!rcs[i] && c[i].best.ok && (rcs[b] || !c[b].best.ok || c[i].best.power_w < c[b].best.power_w))
			b = i;
	double lb = -1;
	bool proven = false;
	char note[sizeof(r->note)] = "";
	for (size_t i = 0; i < n; i++) {
		if (rcs[i])
			continue;
		lb = fmax(lb, c[i].lb);
		proven = proven || (c[i].proven && i == b);
		if (c[i].note[0] && !note[0])
			snprintf(note, sizeof(note), "%.*s", (int)sizeof(note) - 1, c[i].note); /* a worker note is longer: cut */
	}
	if (b != 0) {
		struct opt_sol t = c[0].best;
		c[0].best = c[b].best, c[b].best = t;
		c[0].used = c[b].used;
	}
	c[0].lb = lb;
	c[0].proven = proven;
	snprintf(r->note, sizeof(r->note), "%s", note);
}

int pd_optimize(pd_plan *plan, const struct pd_opt_params *p, struct pd_opt_result *r, pd_err *e)
{
	memset(r, 0, sizeof(*r));
	r->lower_bound_w = -1;
	/* the limit covers building the instance too, and what the caller did since started_s */
	double t_call = opt_now_s();
	double t0 = p->started_s > 0 && p->started_s <= t_call ? p->started_s : t_call;
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
	 * candidate takes up to ~0.15 s). The workers are killed at the hard deadline whatever they do
	 * (OPT_KILL_MARGIN_S before the limit: reaping, evaluating and writing the plan). */
	double limit_s = p->time_limit_s > 0 ? p->time_limit_s : 60;
	double deadline = t0 + limit_s - fmin(OPT_RESERVE_S, 0.05 * limit_s);
	double kill_at = t0 + limit_s - fmin(OPT_KILL_MARGIN_S, 0.02 * limit_s);
	/* auto: the exact mode starts from the heuristic's plan and only improves it, so it is the
	 * better use of any limit that leaves the heuristic its ~1 s on large sets (measured at 120 XU4
	 * tasks: 28 % gap by the heuristic, 0.02 % by the exact mode in 20 s) */
	bool exact = p->solver == PD_SOLVER_EXACT ||
		     (p->solver == PD_SOLVER_AUTO && (in.n_tasks <= OPT_AUTO_TASKS || limit_s >= OPT_AUTO_LIMIT_S));
	bool cbc = portfolio(&in, p, exact), two_glpk = small_portfolio(&in, p, exact);
	bool hull = hull_portfolio(&in, p, exact);
	size_t n = cbc || two_glpk || hull ? 2 : 1;
	struct ctx c[OPT_MAX_WORKERS];
	struct opt_pub *P[OPT_MAX_WORKERS] = {NULL};
	void *args[OPT_MAX_WORKERS];
	int rc = 0, rcs[OPT_MAX_WORKERS] = {0};
	memset(c, 0, sizeof(c));
	for (size_t i = 0; i < n; i++) {
		c[i] = (struct ctx){.in = &in, .params = *p, .t0 = t0, .deadline = deadline, .exact = exact};
		c[i].p = &c[i].params;
		if (p->backend == PD_BACKEND_AUTO)
			c[i].params.backend = i == 1 && cbc ? PD_BACKEND_CBC : PD_BACKEND_GLPK;
		c[i].precise = two_glpk && i == 1;
		c[i].hull = hull && i == 1;
		c[i].hull_beside = hull && i == 0;
		args[i] = &c[i];
		P[i] = opt_pub_new(&in);
		if (!P[i] || opt_sol_init(&c[i].best, &in))
			rc = pd_err_set(e, PD_EXIT_ENV, "out of memory");
		c[i].pub = P[i];
	}
	/* Untouched pages of the board cost nothing: room for the longest list of either kind. Without
	 * it (no mapping) each worker screens every vector itself, as before. */
	size_t board_cap = OPT_CANON_LIMIT > OPT_VECTOR_LIMIT ? OPT_CANON_LIMIT : OPT_VECTOR_LIMIT;
	struct opt_board *board = two_glpk ? opt_board_new(board_cap) : NULL;
	for (size_t i = 0; two_glpk && i < n; i++)
		c[i].peer = P[1 - i], c[i].board = board;
	if (hull) /* the hull stops once its bound certifies the search's plan; the search reads the
		   * hull's hint (master.c) */
		c[1].peer = P[0], c[0].peer = P[1];
	struct opt_worker_end end[OPT_MAX_WORKERS];
	if (!rc)
		opt_workers_run(n, P, kill_at, work, args, end);
	in.pub = NULL, in.peer = NULL, in.board = NULL; /* set by work() in this process */
	in.precise_bb = false, in.hull_beside = false;
	for (size_t i = 0; !rc && i < n; i++) {
		c[i].best.publish = false;
		pd_err ei = {0};
		rcs[i] = end[i].how == OPT_END_SKIPPED ? PD_EXIT_ENV : collect(&c[i], P[i], &end[i], &ei);
		if (rcs[i] && e && (i == 0 || !e->msg[0]))
			*e = ei;
	}
	if (!rc) {
		merge(c, n, rcs, r);
		rc = rcs[0] && (n < 2 || rcs[1]) ? rcs[0] : 0;
		if (!rc && e)
			memset(e, 0, sizeof(*e));
	}
	for (size_t i = 0; i < n; i++)
		opt_pub_free(P[i]);
	opt_board_free(board);
	r->solve_time_s = opt_now_s() - t_call;
	snprintf(r->solver, sizeof(r->solver), "%s", opt_used_name(c[0].used));
	if (rc)
		goto out;
	double cap_w = p->power_cap_uw >= 0 ? (double)p->power_cap_uw * 1e-6 : INFINITY;
	double lb = c[0].lb;
	bool proven = c[0].proven;
	struct opt_sol best = c[0].best;
	char why[512] = "";
	if (!best.ok || !opt_evaluate(&in, &best, why, sizeof(why))) {
		r->status = PD_STATUS_INFEASIBLE;
		explain(&in, p, r, p->objective == PD_OBJ_SLACK && isfinite(cap_w), !isfinite(lb) && lb > 0);
		rc = PD_EXIT_FAIL;
		goto out;
	}
	r->power_w = best.power_w;
	r->min_relative_slack = best.slack;
	r->lower_bound_w = p->objective != PD_OBJ_SLACK && isfinite(lb) && lb >= 0 ? fmin(lb, best.power_w) : -1;
	/* gap is about power; unknown (-1) without a bound, e.g. for the slack objective */
	r->gap = r->lower_bound_w >= 0 ? (best.power_w - r->lower_bound_w) / best.power_w : -1.0;
	if (r->gap >= 0 && r->gap < 1e-9)
		r->gap = 0;
	r->status = proven || (p->objective != PD_OBJ_SLACK && r->lower_bound_w >= 0 &&
			       r->gap <= fmax(1e-6, p->gap) + OPT_GAP_FLOAT_SLACK)
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
	m->solver = opt_used_name(c[0].used);
	m->gap = r->gap >= 0 ? r->gap : 1.0;
	m->solve_time_s = r->solve_time_s;
	m->power_uw = (int64_t)llround(r->power_w * 1e6);
	m->lower_bound_uw = r->lower_bound_w >= 0 ? (int64_t)floor(r->lower_bound_w * 1e6) : -1;
	m->min_relative_slack = r->min_relative_slack;
	m->power_cap_uw = p->power_cap_uw;
out:
	for (size_t i = 0; i < n; i++)
		opt_sol_free(&c[i].best);
	opt_inst_free(&in);
	return rc;
}
