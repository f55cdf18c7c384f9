/* SPDX-License-Identifier: MIT */
/*
 * pd_optimizer.h - computes a deployment plan (docs/MODEL.md "Average power", docs/MODEL.md): the placement of every task
 * (a core of an island, a GPU, or an FPGA slot), one OPP per island and GPU, and a relative deadline
 * for every CPU task, minimising average power (or maximising the minimum relative slack under a
 * power cap, or both lexicographically).
 *
 * Solvers: "heuristic" (OPP-vector enumeration with a valid bound, greedy placement + repair + local
 * search, sqrt-weighted deadlines, worst-fit packing, LP deadline polish); "exact" (the heuristic as
 * incumbent, then the island-level MILP with lazily generated perspective cuts in GLPK, or an
 * outer-approximation loop with CBC, and a packing repair of its solutions); "auto" picks by size.
 *
 * The searches run in a worker process killed at --time-limit (docs/MODEL.md, "Solver runs that
 * cannot crash or overrun"): whatever a solver library does, the best plan found so far comes back
 * with its certified gap, and r->note says what stopped the search early.
 *
 * Every plan written is checked by the optimizer's own exact evaluator in integer ns before it is
 * returned (per-core density <= U_max minus the fair share, FIFO accelerator bounds, every path
 * <= D, SCHED_DEADLINE limits).
 */
#ifndef PD_OPTIMIZER_H
#define PD_OPTIMIZER_H

#include "core/pd_core.h"
#include "plan/pd_plan.h"

enum pd_solver { PD_SOLVER_AUTO = 0, PD_SOLVER_EXACT, PD_SOLVER_HEURISTIC };
/* auto: with CBC built in and at least two CPUs, the exact power search runs GLPK and CBC at once
 * (two processes; the best plan and the larger valid bound win); otherwise GLPK. */
enum pd_backend { PD_BACKEND_GLPK = 0, PD_BACKEND_CBC, PD_BACKEND_AUTO };
/* Tests only: make the solver worker fail where the exact phase would start (after the heuristic
 * published its plan), the way a solver library can: a GLPK internal error, abort(), or a hang that
 * ignores every clock. pd_optimize must still return the heuristic's plan with an honest gap, on
 * time. */
enum pd_opt_fault { PD_OPT_FAULT_NONE = 0, PD_OPT_FAULT_GLPK_ERROR, PD_OPT_FAULT_ABORT, PD_OPT_FAULT_HANG };

struct pd_opt_params {
	enum pd_objective objective; /* default power */
	enum pd_solver solver;       /* default auto */
	enum pd_backend backend;     /* default auto */
	double time_limit_s;         /* wall clock for the whole solve, default 60 */
	double started_s;            /* CLOCK_MONOTONIC seconds at which time_limit_s started to run: a
				      * command's start, so that reading its inputs counts against the
				      * user's limit; 0 (default), or a time in the future: the call */
	int64_t power_cap_uw;        /* slack objective: P <= cap; -1 none */
	double eta;                  /* capacity shrink that makes incumbents exactly schedulable, 1e-5 */
	double gap;                  /* relative optimality tolerance: the exact search stops, and the
				      * status is optimal, once (P - LB) / P <= gap; default 1e-4 (the
				      * MILP solvers' customary default), 0 = as exact as floats allow */
	enum pd_opt_fault fault;     /* tests only (see above); default none */
};

struct pd_opt_result {
	enum pd_status status;
	double power_w;            /* predicted average power (docs/MODEL.md "Average power") of the plan */
	double lower_bound_w;      /* proven lower bound on the power of any feasible plan; -1 unknown */
	double gap;                /* power objective: (power - bound) / power */
	double min_relative_slack; /* min over DAGs of (D - F_sink) / D */
	double solve_time_s;
	char solver[64];           /* e.g. "exact/glpk", "heuristic" */
	char explain[1024];        /* why infeasible (status infeasible) */
	char note[400];            /* non-empty when the search stopped early for another reason than
				    * the time limit (e.g. a solver library failed): what happened; the
				    * plan is then the best one found before, with its certified gap */
};

void pd_opt_defaults(struct pd_opt_params *p);
int pd_opt_solver_parse(const char *s, enum pd_solver *out);
int pd_opt_backend_parse(const char *s, enum pd_backend *out);
/* True when this build has the CBC backend. */
bool pd_opt_have_cbc(void);

/*
 * Solves for the DAG set and platform the plan owns and fills the plan (placements, OPPs, triples,
 * meta). Returns 0 with r->status optimal/feasible, PD_EXIT_FAIL with r->status infeasible and
 * r->explain set (the plan is then left untouched), or another PD_EXIT_* with e set.
 */
int pd_optimize(pd_plan *plan, const struct pd_opt_params *p, struct pd_opt_result *r, pd_err *e);

/*
 * The optimizer's own exact evaluator applied to a plan (used before writing and by tests):
 * returns true when every rule of docs/MODEL.md holds in integer ns; on false, why names the first
 * violation. power_w / slack receive the model's power and minimum relative slack (may be NULL).
 */
bool pd_opt_verify_plan(const pd_plan *plan, double *power_w, double *slack, char *why, size_t n);

#endif /* PD_OPTIMIZER_H */
