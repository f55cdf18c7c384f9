/* SPDX-License-Identifier: MIT */
/*
 * opt_impl.h - private to optimizer/: the solver-side view of a DAG set on a platform (the
 * "instance"), a candidate solution, and the pieces every solver shares. The symbols are those of
 * docs/MODEL.md: runtime_at (Q_i(k, f), the reservation of a CPU task: its WCET plus the island's
 * per-job overhead plus the budget margin, pd_platform_budget_at), demand_at (D_i(k, f) = C + o, what a job
 * executes: power), density (Q/d), finish (F_i), opp. Every schedulability rule uses Q, power uses D.
 *
 * Indices: tasks are the global task indices of pd_dags; islands and accelerators those of
 * pd_platform; cores are numbered island by island (core c belongs to island core_isl[c]); a
 * "server" is one FIFO accelerator queue: a GPU, or one slot of an FPGA.
 */
#ifndef PD_OPT_IMPL_H
#define PD_OPT_IMPL_H

#include "optimizer/pd_optimizer.h"

#include <limits.h>
#include <stdint.h>

struct opt_server {
	size_t accel; /* platform accelerator index */
	int slot;     /* FPGA slot (0 for a GPU) */
	enum pd_accel_kind kind;
};

struct opt_inst {
	const pd_dagset *dags;
	const pd_platform *plat;
	const struct pd_task *tasks; /* pd_dags stores tasks flat: &tasks[i] == pd_dags_task(dags, i) */
	size_t n_tasks, n_dags, n_isl, n_acc, n_srv, n_cores;
	double cap_raw; /* usable density per core: U_max minus the fair-server share */
	double cap;     /* cap_raw * (1 - eta): what the solvers aim for */
	double base_w;
	double rel_gap; /* the searches prune what cannot beat the incumbent by more than this (relative) */
	/* islands */
	size_t *isl_nopp, *isl_ncores, *isl_core0, *core_isl;
	double **idle_w, **busy_w; /* [k][m] per core */
	double **isl_const_w;      /* [k][m] the island with no task: n_k idle + its background's power */
	/* accelerators (GPU OPP tables; an FPGA has one pseudo-OPP) */
	size_t *acc_nopp;
	double **acc_idle_w, **acc_busy_w; /* GPU [a][m]; FPGA: idle_w[a][0] = idle_power, busy = idle */
	/* servers */
	struct opt_server *srv;
	/* tasks */
	size_t *task_dag;
	int64_t *T_ns, *D_ns;
	int64_t *runtime;  /* Q [i][k][m] flattened through wcet_off */
	int64_t *demand;   /* D [i][k][m], same layout */
	size_t *wcet_off;  /* per island: offset of OPP 0 inside a task's block; block size n_isl_opps */
	size_t isl_opps_total;
	int *impl;         /* [i * n_srv + v]: task impl index usable on server v, or -1 */
	double *fpga_pw;   /* [i * n_srv + v]: FPGA busy power of that impl (W) */
	const char **bits; /* [i * n_srv + v]: FPGA bitstream name */
	int64_t *lat_top;  /* [i * n_srv + v]: latency at top OPP */
	double *fast_ns;   /* per task: fastest execution anywhere (top OPP / accelerator alone) */
	double *hi_ns;     /* per task: largest useful deadline (D minus fastest others on its paths) */
	/* per island: the closest lower-numbered identical island, or -1 (symmetry.c) */
	long *isl_prev_twin;
	/* where the solver worker publishes incumbents and bounds (worker.c); NULL: not published */
	struct opt_pub *pub;
	/* the other worker's page in a portfolio (NULL: none): its plan's power tightens the cut-off */
	const struct opt_pub *peer;
	/* the screening bounds shared with the other worker of the small sets' portfolio (board.c;
	 * NULL: none) */
	struct opt_board *board;
	/* the island search's branch and bound solves its LPs to the tighter tolerances
	 * (opt_screen_precise): the second worker of the small sets' portfolio (optimize.c) */
	bool precise_bb;
	/* the OPP hull runs in the other worker (optimize.c, hull_portfolio): its bound is the one that
	 * counts, so this worker's lazy loop gives part of its time to plans */
	bool hull_beside;
};

/* min / max for values that are never NaN: fmin / fmax keep NaN semantics and are library calls
 * (about 7 % of the heuristic's time at 120 tasks, mostly in opt_deadlines_fast). */
static inline double opt_min(double a, double b) { return a < b ? a : b; }
static inline double opt_max(double a, double b) { return a > b ? a : b; }

/* Q_i(k, f_m): what density, path and SCHED_DEADLINE rules use for a CPU task. */
static inline int64_t runtime_at(const struct opt_inst *in, size_t i, size_t k, size_t m)
{
	return in->runtime[i * in->isl_opps_total + in->wcet_off[k] + m];
}

/* D_i(k, f_m) = C + o_k: the CPU time a job takes, hence its busy power (the margin is not used). */
static inline int64_t demand_at(const struct opt_inst *in, size_t i, size_t k, size_t m)
{
	return in->demand[i * in->isl_opps_total + in->wcet_off[k] + m];
}

/* The longest deadline task i can ever get: its period, and D minus the fastest others on its paths. */
static inline double opt_longest_d(const struct opt_inst *in, size_t i)
{
	return in->hi_ns[i] < (double)in->T_ns[i] ? in->hi_ns[i] : (double)in->T_ns[i];
}

/* The placement encoding of opt_sol.where, written only through these three helpers: a core index
 * (>= 0), or -(1 + v) for FIFO server v (GPU, or one FPGA slot). */
static inline int opt_where_server(size_t v) { return -(int)v - 1; }
static inline bool opt_where_is_core(int w) { return w >= 0; }
static inline size_t opt_where_server_of(int w) { return (size_t)(-w - 1); }
/* Not a placement: in a no-good (opt_corepack_cut, opt_screen_nogood), a task the no-good leaves free. */
#define OPT_WHERE_ANY INT_MIN

/* The "where" value of option o (islands, then servers): the island's first core, or -(1 + server). */
static inline int opt_option_where(const struct opt_inst *in, size_t o)
{
	return o < in->n_isl ? (int)in->isl_core0[o] : opt_where_server(o - in->n_isl);
}

/* Can a core hold task i alone with execution time C (ns)? SCHED_DEADLINE's 1024-ns floor, and
 * C / cap within its longest deadline shortened by slack_frac. */
static inline bool opt_core_fits(const struct opt_inst *in, size_t i, double C, double slack_frac)
{
	return C >= 1024 && C / in->cap <= opt_longest_d(in, i) * (1.0 - slack_frac);
}

/* Latency of task i on server v at accelerator OPP m (GPU scaled; FPGA fixed). */
int64_t opt_latency(const struct opt_inst *in, size_t i, size_t v, size_t m);

/* A placement of every task, one OPP per island and accelerator, and the deadlines. */
struct opt_sol {
	size_t *isl_opp; /* per island */
	size_t *acc_opp; /* per accelerator (0 for FPGA) */
	int *where;      /* per task: core index >= 0, or -(1 + server) */
	double *d_ns;    /* per CPU task: relative deadline (continuous) */
	int64_t *dl_ns;  /* finalised integer deadlines (floor of d_ns); accel: response bound */
	double power_w;
	double slack;    /* min relative slack */
	bool ok;         /* passed the exact evaluator */
	bool publish;    /* the search's incumbent: opt_sol_copy into it also publishes it (worker.c) */
};

/* Coordinate c of an OPP vector (islands, then accelerators): its OPP in s, and how many it has. */
static inline size_t *opt_coord_opp(const struct opt_inst *in, struct opt_sol *s, size_t c)
{
	return c < in->n_isl ? &s->isl_opp[c] : &s->acc_opp[c - in->n_isl];
}
static inline size_t opt_coord_nopp(const struct opt_inst *in, size_t c)
{
	return c < in->n_isl ? in->isl_nopp[c] : in->acc_nopp[c - in->n_isl];
}

int opt_inst_build(struct opt_inst *in, const pd_dagset *dags, const pd_platform *plat, double eta, pd_err *e);
void opt_inst_free(struct opt_inst *in);

int opt_sol_init(struct opt_sol *s, const struct opt_inst *in);
void opt_sol_free(struct opt_sol *s);
void opt_sol_copy(struct opt_sol *dst, const struct opt_sol *src, const struct opt_inst *in);

/* Time task i occupies its resource under the placement and OPPs of s (CPU: runtime_at, the
 * reservation Q; accel: latency). */
int64_t opt_exec_ns(const struct opt_inst *in, const struct opt_sol *s, size_t i);
/* Average power of s (docs/MODEL.md "Average power"); independent of cores and deadlines. */
double opt_power_w(const struct opt_inst *in, const struct opt_sol *s);
/* Busy power increment of task i on "where" at the OPPs of s (W). */
double opt_task_busy_w(const struct opt_inst *in, const struct opt_sol *s, size_t i, int where);
/* FIFO response bounds of every accelerated task (R_i) into r_ns (others 0); returns the max
 * server utilisation. */
double opt_fifo_response(const struct opt_inst *in, const struct opt_sol *s, int64_t *r_ns);
/* The reconfiguration a request of i on server v may wait for because j shares v: the slot's rho
 * where v is an FPGA slot and i and j use different bitstreams there, else 0. The plan's rule
 * (opt_fifo_response) and both relaxations (screen.c wait_ms, hull.c pair_wait_ms) ask this. */
int64_t opt_pair_reconfig_ns(const struct opt_inst *in, size_t i, size_t j, size_t v);

/*
 * The exact evaluator: floors d_ns into dl_ns, then checks in integer ns every rule of the model
 * (SCHED_DEADLINE limits, per-core density <= cap_raw, FIFO utilisation, every path <= D) and
 * sets s->ok, power_w and slack. On failure writes a reason into why (may be NULL). Returns ok.
 */
bool opt_evaluate(const struct opt_inst *in, struct opt_sol *s, char *why, size_t n);

/*
 * Deadline assignment for a fixed placement and OPPs (CPU tasks get d_ns; accelerated tasks are
 * fixed delays R_i). fast: weighted sqrt rule with per-core multipliers; returns the largest core
 * density over cap (<= 1 means schedulable), or OPT_PATH_INFEASIBLE / OPT_FIFO_OVERLOAD + amount.
 * When slack_frac > 0, paths must end by (1 - slack_frac) D.
 */
/* Scratch space reused across calls (no allocation in the local search's inner loop). */
struct opt_ws {
	size_t n, nc;
	double *e, *w, *ef, *eb, *wf, *wb, *rf, *rb, *mu, *load, *dbest, *keep, *pload;
	double *bload; /* per core: loads of the deadlines opt_deadlines_fast applied last */
	double *load2; /* per core: the proportional rule's loads, beside load (the slack rule's) */
	double *xf, *xb;     /* slack reclaim: the sweeps of the current delays */
	double *dprop;       /* the proportional rule's deadlines */
	/* What opt_deadlines_fast computes before its first multiplier step does not depend on which core
	 * of its island a task runs on (execution times, FIFO responses, their path sweeps, and with every
	 * multiplier at 1 the weights and both rules' deadlines): opt_pack re-packs one island assignment
	 * several times and reuses them. reuse: set by the caller for the next call only, and only when
	 * s has the island assignment, OPPs and slack_frac of the last call on this workspace (which
	 * filled the cache: c_ok). */
	bool reuse, c_ok, c_pok;
	double c_worst;
	double *c_w, *c_wf, *c_wb, *c_ds, *c_dp, *c_wmax;
	/* Per call (they depend on the island assignment only, so a reusing call keeps them): D' per task,
	 * the largest execution sum over the paths through a task (ef + eb - e), the accelerator delays
	 * on them (rf + rb), and the largest of emax / D' ("worst"). wmax: wf + wb - w of the weights
	 * applied last (what both rules and the reclaim divide by). */
	double *dlim, *emax, *rmax, *wmax;
	double worst;
	double *yf, *yb;     /* reclaim of the second rule's deadlines, swept beside the first */
	/* The DAGs' adjacency in topological order (CSR, task indices): the path sweeps read only these. */
	size_t *g_topo, *g_poff, *g_pred, *g_soff, *g_succ;
	int64_t *r;
	void *keys;                  /* pack: 2n (index, density) pairs, the second n its sort's scratch */
	/* pack: per core, the group of cores a task on it may move to: its island (opt_pack), or its
	 * island's pool of identical islands at the same OPP (opt_pack_given); ipool per island scratch */
	size_t *cgrp, *ipool;
	struct opt_sol pbest, ptmp;  /* pack */
};
/* Results >= these mean "a path cannot fit even at d = C" / "a FIFO server is over 100 %"; the
 * amount above tells how far, so that a repair can measure progress. */
#define OPT_PATH_INFEASIBLE 1000.0
#define OPT_FIFO_OVERLOAD 2000.0
struct opt_ws *opt_ws_new(const struct opt_inst *in);
void opt_ws_free(struct opt_ws *w);
double opt_deadlines_fast(const struct opt_inst *in, struct opt_sol *s, struct opt_ws *w, double slack_frac,
			  int iters);
/* After opt_deadlines_fast: the largest sum of execution times over the paths through task i. */
double opt_ws_path_exec(const struct opt_ws *w, size_t i);
/*
 * Exact deadline assignment by an interior point method (deadlines_ipm.c) on the program the deadline
 * LP approximates with tangents. e: execution times (CPU: Q; accelerated: FIFO delay R), as
 * opt_deadlines_fast leaves them in w->e; s->d_ns must fit every path (a start). *best: in, the max
 * density / cap of s->d_ns; out, the best found (s->d_ns then holds those deadlines: interior, every
 * path ends a little before D'). Returns 1 when decided: *best <= stop (then within 0.1 % of the
 * optimum), or the optimum is proven above stop (stop > 0), or reached within 1e-8; 0 when not (no
 * interior, a centring that does not converge, deadline_s passed): the caller then uses the LP.
 */
int opt_deadlines_ipm(const struct opt_inst *in, struct opt_sol *s, const double *e, double slack_frac, double stop,
		      double deadline_s, double *best);
/* Exact: the interior point method above, and where it leaves the question open the LP (GLPK dual
 * simplex) + Kelley tangent cuts minimising the max core density; stops once the max density is
 * <= 1 (slack reclaimed on the interior point's deadlines) or proven above it. */
double opt_deadlines_lp(const struct opt_inst *in, struct opt_sol *s, double slack_frac, double deadline_s);
/* The same LP run to its optimum (Kelley until its bound is within 1e-7 of the best true density):
 * the reference the tests hold the faster methods against. */
double opt_deadlines_lp_min(const struct opt_inst *in, struct opt_sol *s, double slack_frac, double deadline_s);

/* opt_pack with polish runs the deadline LP when the fast rules leave the max density below this
 * (over cap): at high load the fast rules stay up to ~5 % above the LP's optimum (1.052 against 0.998
 * on the cores of a proven-optimal 120-task XU4 plan). 1.10 found the same plans or slightly better
 * ones on Xavier but cost 40 % more instructions there (most of them in GLPK's simplex). */
#define OPT_LP_POLISH_BELOW 1.06

/*
 * Completes an island-level assignment (where[] < 0 for accel tasks; for CPU tasks the island is
 * taken from the core) into core packing + deadlines. Returns the best max density/cap found
 * (<= 1 feasible). polish: also try the LP deadline assignment.
 */
double opt_pack(const struct opt_inst *in, struct opt_sol *s, struct opt_ws *w, double slack_frac, bool polish,
		double deadline_s);

/* Packing when good island-level deadlines are known (s->d_ns of every CPU task, e.g. from the
 * screening LP): worst fit decreasing of those densities, then the exact deadline LP; re-packs with
 * the LP's deadlines and moves tasks off the fullest core while over. Returns max density / cap. */
double opt_pack_given(const struct opt_inst *in, struct opt_sol *s, struct opt_ws *w, double deadline_s);

/* Exact packing (corepack.c) of the island / server assignment of s (CPU tasks: any core of their
 * island) at its OPPs: 1 packed (s has the cores and deadlines and passed the evaluator), 0 proven
 * impossible, -1 not decided by deadline_s. */
int opt_corepack(const struct opt_inst *in, struct opt_sol *s, double deadline_s);
/* The same where identical islands (symmetry.c) at the same OPP in s share their cores (pool): a task
 * placed on any of them may go to any core of all of them. Such cores are interchangeable in every
 * rule of the model (same speed, power and cap), so 0 then means that no plan puts the tasks of
 * each such run of islands onto that run's cores at all, whichever twin each task's island is. */
int opt_corepack_pooled(const struct opt_inst *in, struct opt_sol *s, bool pool, double deadline_s);
/* The projections of opt_corepack alone (each island's tasks packed with the others left to their
 * islands' density rows): 0 when some island alone cannot be packed (so the whole cannot), else 1.
 * For tests; the packers run them between their first and second exact search. */
int opt_corepack_project(const struct opt_inst *in, struct opt_sol *s, double deadline_s);
/* A smaller no-good for the assignment of s, known not to pack: a subset of its tasks that cannot be
 * packed where s has them (islands, or pools as opt_corepack_pooled; servers) whatever the other
 * tasks' placement (each counts on its paths with the least time it takes anywhere at the OPPs of s).
 * 0 found: cut[i] is where[i] for the subset's tasks, OPT_WHERE_ANY for the others (a deletion filter
 * made it small within deadline_s); 1 the projections prove nothing (the whole assignment is the
 * no-good); -1 not decided by deadline_s. */
int opt_corepack_cut(const struct opt_inst *in, struct opt_sol *s, bool pool, int *cut, double deadline_s);

/* Heuristic packing (corepack_search.c) of the island / server assignment of s with the deadlines in
 * s->d_ns (path-feasible: every path fits with them; they fix the densities the search balances),
 * cores of the islands that share a pool (isl_pool[k], as opt_twin_pools) open to each other's
 * tasks: 1 packed (s has the cores and deadlines and passed the exact evaluator), -1 nothing found
 * by deadline_s. Never a verdict that no packing exists. seed: its random kicks. */
int opt_corepack_search(const struct opt_inst *in, struct opt_sol *s, const size_t *isl_pool, uint64_t seed,
			double deadline_s);

/* Island of a core; placement helpers. */
static inline size_t opt_core_island(const struct opt_inst *in, int c) { return in->core_isl[c]; }

double opt_now_s(void);

/* The OPP hull bound (hull.c): one LP over every OPP vector at once, the OPP choice relaxed; its
 * optimum bounds every plan at every vector. Kelley rounds until deadline_s, a stall, or a bound at
 * the peer's plan (in->peer) less the gap; each round's bound is published (opt_pub_bound). Returns
 * the bound (-INFINITY: no LP optimum in time). */
double opt_hull_bound(const struct opt_inst *in, double deadline_s, struct opt_sol *hint);
/* The same on GLPK even where the build has CLP (the tests compare both solvers' bounds). With hint
 * (may be NULL), the vector the last LP point suggests goes into hint's OPPs (hint->ok: there was one;
 * hull.c, hint_from). */
double opt_hull_bound_on(const struct opt_inst *in, double deadline_s, bool glpk, struct opt_sol *hint);
/* n islands spread over nm OPPs as y[0..nm) (sum n): out[j] the OPP where the cumulative y reaches
 * j + 1/2, ascending (the hint's OPPs of a class of n twins). */
void opt_hull_quantiles(const double *y, size_t nm, size_t n, size_t *out);

/* Plans where the OPP hull points (hull_plans.c): from hint (opt_hull_bound's) toward best's vector,
 * a descent over screened bounds, LP roundings at the best vectors met; best improves (published) or
 * stays. Until deadline_s at most. beside: the search worker's variant (its start and order differ
 * from the hull worker's, which searches from the same hint at the same time). */
void opt_hull_plans(const struct opt_inst *in, const struct opt_sol *hint, struct opt_sol *best, double deadline_s,
		    bool beside);

/* The hull's LP (hull_lp.c): CLP where the build has CBC and glpk is false, else GLPK. GLPK's
 * numbering: rows and columns from 1, index and value arrays read from [1]. A side of a bound may be
 * infinite. opt_hlp_solve returns 0 at an optimum (the first call by CLP's barrier or GLPK's primal
 * simplex, later ones by the dual simplex from the last basis), -1 otherwise (out of time, no
 * optimum, or an allocation failed earlier). Rows deleted must be basic, so the basis stays valid. */
struct opt_hlp;
struct opt_hlp *opt_hlp_new(bool glpk);
void opt_hlp_free(struct opt_hlp *L);
const char *opt_hlp_solver(const struct opt_hlp *L);
int opt_hlp_col(struct opt_hlp *L, double lo, double hi, double cost);
int opt_hlp_row(struct opt_hlp *L, double lo, double hi, int n, const int *ind, const double *val);
void opt_hlp_offset(struct opt_hlp *L, double c0);
int opt_hlp_solve(struct opt_hlp *L, bool first, double seconds);
double opt_hlp_obj(const struct opt_hlp *L);
double opt_hlp_prim(const struct opt_hlp *L, int col);
bool opt_hlp_row_basic(const struct opt_hlp *L, int row);
int opt_hlp_rows(const struct opt_hlp *L);
void opt_hlp_del_rows(struct opt_hlp *L, int n, const int *rows);

/* Above this many OPP vectors (islands x GPUs), vectors are searched by coordinate descent and the
 * exact mode solves one master with the OPP binaries free instead of one master per vector. */
#define OPT_VECTOR_LIMIT 20000
/* The exact mode searches vector by vector when the canonical vectors (symmetry.c) are at most this
 * many (Xavier: 4 identical Carmel islands x 29 OPPs and 14 GPU OPPs = 503440 of 9.9 million), since
 * a cheap idle-plus-separable bound leaves only the few near the incumbent to bound further. */
#define OPT_CANON_LIMIT 1000000
/* Up to this many tasks the exact mode's island search (master.c) searches each vector by branch and
 * bound with exact core packing, and what it leaves of the time goes to solving each OPP vector with
 * the core-level master directly (its optimum packs by construction); the larger of the two valid
 * bounds is reported. */
#ifndef OPT_PER_CORE_TASKS /* overridable at build time (-DOPT_PER_CORE_TASKS=0: island search only) */
#define OPT_PER_CORE_TASKS 30
#endif
size_t opt_vector_count(const struct opt_inst *in);
/* Vector id -> the OPPs of s (mixed radix over islands, then accelerators). */
void opt_vector_decode(const struct opt_inst *in, struct opt_sol *s, size_t id);
/* Idle power of the OPPs of s: base power, every core idling at its island's OPP, every accelerator
 * at its OPP (what every plan at that vector pays). */
double opt_vector_idle_w(const struct opt_inst *in, const struct opt_sol *s);
/* Whether option o of task i (islands, then servers) can hold it alone at the OPPs of s: its time
 * fits its longest possible deadline shortened by slack_frac, and on a core also the density cap. */
bool opt_option_fits(const struct opt_inst *in, const struct opt_sol *s, size_t i, size_t o, double slack_frac);
/* The first island of k's class of identical islands (symmetry.c). */
static inline size_t opt_twin_root(const struct opt_inst *in, size_t k)
{
	while (in->isl_prev_twin[k] >= 0)
		k = (size_t)in->isl_prev_twin[k];
	return k;
}

/* Identical islands (symmetry.c): fills in->isl_prev_twin; -1 on allocation failure. A vector is
 * canonical when its OPP indices do not decrease along each class of identical islands; every plan
 * has an equivalent (same power, same schedulability) at a canonical vector, so searching those
 * only is exact. opt_twin_pairs: how many islands have a lower identical one. */
int opt_symmetry_build(struct opt_inst *in);
bool opt_vector_canonical(const struct opt_inst *in, const struct opt_sol *s);
size_t opt_twin_pairs(const struct opt_inst *in);
/* Per island of s: the first island of its run of identical islands (isl_prev_twin) at the same
 * OPP, or itself (a "pool": their cores are interchangeable). */
void opt_twin_pools(const struct opt_inst *in, const struct opt_sol *s, size_t *pool);
/* The canonical vectors' ids in increasing order into ids[0..cap) (ids may be NULL to count);
 * returns their number, or SIZE_MAX when there are more than cap (or on allocation failure). */
size_t opt_canonical_vectors(const struct opt_inst *in, size_t *ids, size_t cap);
/* Time kept back from --time-limit for the final evaluation and the steps that are not interrupted
 * mid-way (optimize.c). */
#define OPT_RESERVE_S 0.25
/* The solver worker is killed this long before --time-limit (at most 2 % of it): reaping it (the
 * kernel frees its memory first), evaluating the plan and writing it take milliseconds on a quiet
 * machine; measured up to 0.09 s past the kill with the 2-CPU VM at load 10 (0.04 s was too short),
 * and once 0.21 s (a Xavier 120-task set, 10.107 s for --time-limit 10, 2026-12-05): so 0.2 s at 10 s,
 * 0.25 s from 12.5 s on. */
#define OPT_KILL_MARGIN_S 0.25
/* The float noise allowed on the gap tolerance when calling a plan proven: the searches close a
 * vector whose bound reaches the cut-off P (1 - gap) and report that cut-off as the bound, and P
 * (1 - gap) computed twice may differ in the last bits (a ZCU102 20-task set ended at a gap of
 * 1.0000007e-4 for --gap 1e-4 and was reported "feasible"). Relative to P; far below any gap asked
 * for (the smallest is 1e-6). */
#define OPT_GAP_FLOAT_SLACK 1e-9
/* --solver auto: exact up to this many tasks, or above it when the time limit is at least this long */
#define OPT_AUTO_TASKS 60
/* --backend auto runs GLPK and CBC at once on platforms with at most this many OPP vectors */
#define OPT_PORTFOLIO_VECTORS 16
#define OPT_AUTO_LIMIT_S 2.0
/* False when even the fastest option of every task at the OPPs of s misses a deadline (tmp: n_tasks). */
bool opt_vector_paths_ok(const struct opt_inst *in, const struct opt_sol *s, double slack_frac, double *tmp);

/* Heuristic: fills best (best->ok) and a certified lower bound. */
struct opt_heur_result {
	double lower_bound_w;
	bool proven; /* the vector search proved best optimal */
};
int opt_heuristic(const struct opt_inst *in, const struct pd_opt_params *p, double deadline_s, double power_cap_w,
		  double slack_frac, struct opt_sol *best, struct opt_heur_result *hr);

/* A weak but valid bound (W) computed in microseconds: base power, each island's and accelerator's
 * cheapest idle power, each task's cheapest busy power anywhere; -INFINITY without memory. */
double opt_quick_bound(const struct opt_inst *in);
/* The smallest idle power of any OPP vector (W): base, plus every island's and accelerator's
 * cheapest idle power. */
double opt_min_idle_w(const struct opt_inst *in);

/* The heuristic's local search alone, on s that packs with its own cores and deadlines (max core
 * density <= cap): single-task moves to cheaper options, each keeping it packed (tests). */
void opt_heur_improve(const struct opt_inst *in, struct opt_sol *s, double deadline_s);

/* Pack, repair (power-aware moves) and improve a placement found elsewhere; true when feasible. */
bool opt_heur_polish(const struct opt_inst *in, struct opt_sol *s, double deadline_s);
/* Iterated descent over OPP vectors from best's vector (random raises, then the descent) until
 * deadline_s; best gets every cheaper plan. */
void opt_heur_restarts(const struct opt_inst *in, double deadline_s, struct opt_sol *best, uint64_t seed);

/* Capacity-aware lower bound per OPP vector (bound.c: Lagrangian relaxation of the island density
 * and FIFO utilisation rows with a path-cover bound on densities). */
struct opt_bound;
struct opt_bound *opt_bound_new(const struct opt_inst *in);
void opt_bound_free(struct opt_bound *b);
/* A valid lower bound (W) on every plan at the OPPs of s; INFINITY when some task has no possible
 * option there. target_w (an incumbent's power, or INFINITY) steers the search: a bound above it is
 * not needed. */
double opt_bound_vector(struct opt_bound *b, const struct opt_sol *s, double target_w);

/* Vector screening (screen.c): the continuous relaxation of the island master at one OPP vector,
 * one LP whose rows, tangent pool and basis carry over between vectors. Returns a valid lower bound
 * (W, idle power of the vector included) on every plan at the OPPs of s, -INFINITY when no LP
 * optimum came in time, INFINITY with *infeasible set when no plan exists at that vector (then none
 * exists at any vector that is nowhere faster). Stops refining once the bound reaches target_w. */
struct opt_screen;
struct opt_screen *opt_screen_new(const struct opt_inst *in);
void opt_screen_free(struct opt_screen *S);
double opt_screen_vector(struct opt_screen *S, const struct opt_sol *s, double target_w, double deadline_s,
			 bool *infeasible);
/* Branch and bound on the screening LP of the current vector: option o of task i (islands, then
 * servers) is the only one left open (o < 0: every option that fits is open again); resolve runs
 * the Kelley loop on the LP as it stands; share is option o's value in the last LP optimum. */
void opt_screen_fix(struct opt_screen *S, const struct opt_sol *s, size_t i, long o);
double opt_screen_resolve(struct opt_screen *S, double target_w, double deadline_s, bool *infeasible);
double opt_screen_share(const struct opt_screen *S, size_t i, size_t o);
/* Whether the last opt_screen_vector or opt_screen_resolve ended with its LP at an optimum, a point
 * to round or branch on. False when the clock or the simplex cut its Kelley loop short: the bound it
 * returned is still valid (an earlier round's), but the LP's current point is nobody's optimum, and
 * the LP may even have no point at all (Xavier 120 tasks, seed 6384365: the vector with the best
 * screened bound, cut mid-loop by the descent's deadline, was infeasible once the loop went on). */
bool opt_screen_at_optimum(const struct opt_screen *S);
/* The screening LP's solver: "clp" where the build has CBC and the board identical islands (screen.c,
 * opt_screen_new, says why), else "glpk". opt_screen_use_glpk: GLPK from here on (the tests compare
 * both solvers' bounds). */
const char *opt_screen_solver(const struct opt_screen *S);
void opt_screen_use_glpk(struct opt_screen *S);
/* The screening LP's CLP solves (screen_clp.c; NULL and -1 without CBC): lp (GLPK's problem, the
 * model screen.c edits) copied into CLP and solved by its dual simplex from lp's basis statuses,
 * for at most seconds; returns 0 at an optimum (x[1..cols], y[1..rows] its primal and row duals,
 * *obj its value; lp's statuses set to CLP's basis), 1 when the LP has no point, 2 when the time
 * ran out, -1 on failure. iters: CLP's simplex iterations are added to it. */
struct opt_sclp;
struct glp_prob;
struct opt_sclp *opt_sclp_new(void);
void opt_sclp_free(struct opt_sclp *L);
int opt_sclp_solve(struct opt_sclp *L, struct glp_prob *lp, double seconds, double *x, double *y, double *obj,
		   int *iters);
/* Valid lower bounds (W) from the duals of the last LP, safe against its tolerances: the return value
 * on every point of the LP as it stands (every plan the current fixings admit), out[i * (n_isl +
 * n_srv) + o] on those with task i on option o (INFINITY where that option is closed); -INFINITY when
 * no vector is set. opt_screen_open opens (when it fits) or closes one option of task i. */
double opt_screen_option_bounds(struct opt_screen *S, double *out);
void opt_screen_open(struct opt_screen *S, const struct opt_sol *s, size_t i, size_t o, bool open);
/* A no-good row excluding the island / server assignment where (valid at the current vector only:
 * opt_screen_release frees it before the LP moves to another vector); returns the row. With pool
 * (per island: the first island of its run of twins at equal OPPs, as opt_corepack_pooled shares
 * cores), it excludes every assignment that puts each task into the same run as where does. */
int opt_screen_nogood(struct opt_screen *S, const int *where, const size_t *pool);
/* The density of task i on island k in the last LP optimum (C_ik v_ik, in cores at cap 1). */
double opt_screen_load(const struct opt_screen *S, const struct opt_sol *s, size_t i, size_t k);
/* A core's density row over the tasks with on[i] on the islands with isl[k] (valid at the current
 * vector only, for the plans that put those tasks on one core; freed by opt_screen_release as a
 * no-good is): r > 0 sets that row anew, r <= 0 adds one. Returns the row. */
int opt_screen_core_row(struct opt_screen *S, int r, const struct opt_sol *s, const bool *on, const bool *isl);
void opt_screen_release(struct opt_screen *S, int r);
/* Tighter tolerances for the Kelley loops from here on (on) or the default ones: tangents for any
 * violation above 1e-4 instead of 1e-3, rounds until one gains less than 1e-6 instead of 1e-4.
 * Every bound stays valid either way (tangents under-estimate); only their strength and cost move. */
void opt_screen_precise(struct opt_screen *S, bool on);
/* After opt_screen_vector: every task on its largest LP share (island core 0, or -(1 + server)). */
void opt_screen_round(const struct opt_screen *S, int *where);
/* After opt_screen_vector: task i's deadline (ms) on island k in the LP optimum, when it has a share
 * there. */
bool opt_screen_deadline(const struct opt_screen *S, size_t i, size_t k, double *t_ms);
/* Shrinks the density row of every island k with isl[k] (every island: isl NULL) by frac, the others
 * not (frac 0 restores them all); a shrunk LP gives no valid bound, only roundings that leave room
 * for packing onto cores. */
void opt_screen_shrink(struct opt_screen *S, double frac, const bool *isl);
/* Deletes the generated rows (tangents, freed no-goods) whose slack is basic at the last LP optimum,
 * which stays optimal; returns how many. Row numbers of generated rows change: call it only while no
 * no-good is held. */
int opt_screen_compact(struct opt_screen *S);

/* A snapshot of the screening LP's basis (row and column statuses) in opt_screen_basis_size bytes: the
 * branch and bound starts a node's LP from its parent's basis. Setting it is valid while rows were only
 * added since (those become basic); otherwise it does nothing. */
size_t opt_screen_basis_size(const struct opt_screen *S);
void opt_screen_basis_get(const struct opt_screen *S, unsigned char *b);
void opt_screen_basis_set(struct opt_screen *S, const unsigned char *b);
/* Simplex iterations spent on the screening LP so far. */
int opt_screen_iterations(const struct opt_screen *S);

/* A proof that vector s has no plan, cheaper than the screening LP (pathlag.c): true only when a
 * Lagrangian of the island, server, cardinality and path rows is positive there (then no plan exists
 * at s, nor at any vector nowhere faster). rounds: multiplier updates (each a few passes over the
 * tasks and paths), none past deadline_s; every call starts from the multipliers of the last
 * proof. */
struct opt_pathlag;
struct opt_pathlag *opt_pathlag_new(const struct opt_inst *in);
void opt_pathlag_free(struct opt_pathlag *P);
bool opt_pathlag_no_plan(struct opt_pathlag *P, const struct opt_sol *s, int rounds, double deadline_s);

/* Lazy bound loop over the canonical vectors canon[0..nv) (lazy.c), for platforms with identical
 * islands: every vector starts at the valid bound lb0[pos] (INFINITY: closed) and is refined only
 * while it is the smallest open one (option and Lagrangian bounds, then the screening LP, s as
 * scratch); a screening LP without a point closes every canonical vector nowhere faster. run stops
 * at dl or when the smallest open bound is a screened one, and returns min(that bound, cut): a
 * valid bound on every plan cheaper than cut. It can be run again (a lower cut, a later deadline). */
struct opt_lazy;
struct opt_lazy *opt_lazy_new(const struct opt_inst *in, struct opt_screen *scr, const size_t *canon, size_t nv,
			      const double *lb0);
void opt_lazy_free(struct opt_lazy *L);
double opt_lazy_run(struct opt_lazy *L, double cut, double dl);
/* Vector pos's best valid bound so far (INFINITY: closed), and whether it has no plan at all. */
double opt_lazy_bound(const struct opt_lazy *L, size_t pos);
bool opt_lazy_no_plan(const struct opt_lazy *L, size_t pos);
/* Whether vector pos's bound is its screening LP's (its LP has a point), below the last cut-off. */
bool opt_lazy_screened(const struct opt_lazy *L, size_t pos);
/* Screening LPs solved, Lagrangian bounds computed, vectors closed by the antichain without an LP
 * of their own, size of the antichain of maximal infeasible vectors. */
void opt_lazy_stats(const struct opt_lazy *L, size_t *n_lp, size_t *n_lag, size_t *n_cover, size_t *n_anti);
/* Valid bound of one vector: idle power plus every task on its cheapest option that fits alone
 * (INFINITY: a path or a task cannot be met at all there); uses s->d_ns as scratch. */
double opt_vector_option_bound(const struct opt_inst *in, struct opt_sol *s);
/* Sorts the OPPs of every class of identical islands in s: the canonical equivalent (symmetry.c). */
void opt_vector_sort_twins(const struct opt_inst *in, struct opt_sol *s);

/* Exact island-level master (formulation B) with lazy perspective cuts, then packing repair.
 * incumbent (may be !ok) is improved in place; returns the proven lower bound (W) in *lb and
 * whether the master finished (proved its bound). */
int opt_exact(const struct opt_inst *in, const struct pd_opt_params *p, double deadline_s, struct opt_sol *inc,
	      double *lb, bool *finished);

/* ---------------------------------------------------------------- the solver worker (worker.c) */

/* Which search produced the plan (the plan's meta.solver names it). */
enum opt_used { OPT_USED_HEURISTIC = 0, OPT_USED_BISECTION, OPT_USED_EXACT_GLPK, OPT_USED_EXACT_CBC };
const char *opt_used_name(enum opt_used u);

/* The page shared with the worker: the last incumbent, the best valid bound, how the work ended. */
struct opt_pub;
struct opt_pub *opt_pub_new(const struct opt_inst *in);
void opt_pub_free(struct opt_pub *P);
/* Child side (no-ops when in->pub is NULL): publish an incumbent that passed the evaluator (called
 * by opt_sol_copy into a solution with publish set), a valid lower bound (W; the largest is kept),
 * the search now running. */
void opt_pub_sol(const struct opt_inst *in, const struct opt_sol *s);
void opt_pub_bound(const struct opt_inst *in, double lb);
void opt_pub_used(const struct opt_inst *in, enum opt_used u);
void opt_pub_set_proven(const struct opt_inst *in, bool proven);
/* An internal failure with its reason (what the user reads); returns -1. */
int opt_pub_fail(const struct opt_inst *in, const char *why);
/* Worker side: the other worker's last plan (in->peer), whole and checked by the evaluator (false:
 * none, or none whole after a few tries). */
bool opt_peer_take(const struct opt_inst *in, struct opt_sol *dst);
/* The hull's hint (opt_hull_bound) on this worker's page, and the other worker's last one (false:
 * none yet, or none whole after a few tries); only its OPPs count. */
void opt_pub_hint(const struct opt_inst *in, const struct opt_sol *hint);
bool opt_peer_hint(const struct opt_inst *in, struct opt_sol *dst);
/* Parent side, after the worker ended: the last published incumbent (false: none), bound, search. */
bool opt_pub_take(const struct opt_pub *P, const struct opt_inst *in, struct opt_sol *dst);
double opt_pub_lb(const struct opt_pub *P);
bool opt_pub_proven(const struct opt_pub *P);
enum opt_used opt_pub_used_get(const struct opt_pub *P);
/* Either side, any time: the power of the best plan P's worker has published (INFINITY: none yet). */
double opt_pub_best_w(const struct opt_pub *P);
/* The power of the best plan the other worker of a portfolio has published (INFINITY: none, or no
 * portfolio). */
double opt_peer_w(const struct opt_inst *in);

/* The screening board (board.c): vector bounds shared by two workers, made before they fork. */
struct opt_board;
struct opt_board *opt_board_new(size_t cap);
void opt_board_free(struct opt_board *B);
/* Whether this worker may use B for its list of n positions (canonical: the canonical vectors,
 * else every vector): false when the other worker's list differs or B is NULL or too small. */
bool opt_board_join(struct opt_board *B, size_t n, bool canonical);
/* The bound published at pos (NAN: none yet). */
double opt_board_get(const struct opt_board *B, size_t pos);
/* Claims pos for screening: false when the other worker has claimed or done it. */
bool opt_board_claim(struct opt_board *B, size_t pos);
/* Publishes the claimed pos's bound; NAN gives the claim up (no bound in time). */
void opt_board_put(struct opt_board *B, size_t pos, double lb);
/* Claims the LP rounding at pos: false when the other worker has (a rounding is never given up). */
bool opt_board_claim_rounding(struct opt_board *B, size_t pos);
/* Raises pos's proven bound to lb (a valid lower bound on every plan at that vector) if larger. */
void opt_board_raise(struct opt_board *B, size_t pos, double lb);
/* pos's proven bound (0: none; B NULL too). */
double opt_board_proven(const struct opt_board *B, size_t pos);
/* The split of pos's branch and bound into two parts (master_bb.c): task t in branching group g
 * (part 0) or not (part 1). Records (t, g) unless a split is recorded already, and returns the one
 * recorded in *t and *g; false when B is NULL or pos out of range. */
bool opt_board_split(struct opt_board *B, size_t pos, size_t *t, size_t *g);
/* Claims part p (0 or 1) of pos's split: false when a worker has already. */
bool opt_board_claim_part(struct opt_board *B, size_t pos, int p);
/* Raises part p's proven bound (no plan in that part below lb), as opt_board_raise; 0: none. */
void opt_board_raise_part(struct opt_board *B, size_t pos, int p, double lb);
double opt_board_part(const struct opt_board *B, size_t pos, int p);

typedef int (*opt_work_fn)(void *arg);
struct opt_worker_end {
	/* SKIPPED: not started (fork failed for a second worker) */
	enum { OPT_END_DONE, OPT_END_KILLED, OPT_END_CRASH, OPT_END_INPROC, OPT_END_SKIPPED } how;
	int rc;            /* the work function's result (DONE, INPROC) */
	char reason[320];  /* CRASH: what happened; DONE with rc != 0: the child's message */
};
#define OPT_MAX_WORKERS 2
/* Runs fn(args[i]) in n forked children, child i publishing into P[i] (fn must point in->pub at
 * it), all killed at kill_at_s (opt_now_s clock), or as soon as one of them proved its plan
 * optimal or proved that there is no plan (published bound +infinity), or a finished worker's
 * bound certifies the best published plan within gap (the instance's rel_gap when the pages were
 * made). Without fork it runs fn(args[0]) in this process (OPT_END_INPROC). */
int opt_workers_run(size_t n, struct opt_pub *const *P, double kill_at_s, opt_work_fn fn, void *const *args,
		    struct opt_worker_end *ends);

/* Why nothing is feasible (a path too long at top speed, a resource over capacity); "" if unknown. */
void opt_explain_infeasible(const struct opt_inst *in, char *buf, size_t n);

#endif
