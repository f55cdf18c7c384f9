/* SPDX-License-Identifier: MIT */
/*
 * Vector screening (optimizer/screen.c), the exact mode's per-vector relaxation: its bound is exact
 * where the relaxation is (one island, every task placed), it reports infeasible vectors, its
 * infeasibility is monotone in the OPPs (what the exact mode's dominance pruning relies on), held-back
 * capacity makes a barely feasible vector infeasible, and on random sets its bound at a proven
 * optimum's vector never exceeds that optimum.
 */
#include "helper_opt.h"
#include "optimizer/opt_impl.h"
#include "pd_test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct fixture {
	pd_plan *plan;
	struct opt_inst in;
	struct opt_sol s;
	struct opt_screen *S;
};

static void setup(struct fixture *f, pd_plan *plan)
{
	f->plan = plan;
	pd_err e = {0};
	ck_assert_msg(opt_inst_build(&f->in, pd_plan_dags(plan), pd_plan_platform(plan), 1e-5, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(opt_sol_init(&f->s, &f->in), 0);
	f->S = opt_screen_new(&f->in);
	ck_assert_ptr_nonnull(f->S);
}

static void teardown(struct fixture *f)
{
	opt_screen_free(f->S);
	opt_sol_free(&f->s);
	opt_inst_free(&f->in);
	pd_plan_free(f->plan);
}

static double screen(struct fixture *f, size_t opp, bool *inf)
{
	f->s.isl_opp[0] = opp;
	return opt_screen_vector(f->S, &f->s, INFINITY, opt_now_s() + 5.0, inf);
}

/* Three tasks C = 4 ms, T = D = 10 ms: at 500 MHz they need density 2.4 > 2 x 0.95 (no plan), at
 * 1000 MHz every plan costs 1 + 2 x 0.2 + 3 x 0.8 x 0.4 = 2.36 W, and so does the relaxation. */
START_TEST(one_island_bound_is_exact)
{
	struct fixture f;
	setup(&f, pd_to_load("dags:\n"
			     "  - {name: a, period: 10ms, tasks: [{name: t, wcet: 4ms}]}\n"
			     "  - {name: b, period: 10ms, tasks: [{name: t, wcet: 4ms}]}\n"
			     "  - {name: c, period: 10ms, tasks: [{name: t, wcet: 4ms}]}\n",
			     pd_to_plat2));
	bool inf = false;
	ck_assert(isinf(screen(&f, 0, &inf)));
	ck_assert(inf);
	ck_assert_double_eq_tol(screen(&f, 1, &inf), 2.36, 1e-9);
	ck_assert(!inf);
	opt_screen_round(f.S, f.s.where);
	for (size_t i = 0; i < 3; i++)
		ck_assert_int_eq(f.s.where[i], 0); /* the island's first core */
	/* the same LP again (rows and cut pool kept): same answer */
	ck_assert(isinf(screen(&f, 0, &inf)));
	ck_assert_double_eq_tol(screen(&f, 1, &inf), 2.36, 1e-9);
	teardown(&f);
}
END_TEST

/* Screens f's vector 0, which must have a point, and sets p up at that vector with tasks 0 and 1 on
 * server 0 (their deadlines, power and verdict are the caller's to check); returns the bound. */
static double screen_both_on_server0(struct fixture *f, struct opt_sol *p)
{
	bool inf = true;
	double lb = screen(f, 0, &inf);
	ck_assert(!inf);
	ck_assert_int_eq(opt_sol_init(p, &f->in), 0);
	p->isl_opp[0] = 0;
	p->where[0] = p->where[1] = opt_where_server(0);
	return lb;
}

/* A chain a -> b whose tasks fit only the GPU (9 ms on the CPU, 2 ms there): each request waits for
 * the other on the FIFO server, so the path takes 4 + 4 ms. With D = 10 ms the plan "both on the
 * GPU" exists and the relaxation's bound stays at or below its power; with D = 7 ms no plan exists,
 * and the relaxation must see it (without the FIFO pairs it took each request's own 2 ms: 4 ms). */
static pd_plan *gpu_chain(const char *deadline)
{
	char dags[512];
	snprintf(dags, sizeof(dags),
		 "dags:\n"
		 "  - name: v\n"
		 "    period: 10ms\n"
		 "    deadline: %s\n"
		 "    tasks:\n"
		 "      - {name: a, wcet: 9ms, accel: [{kind: gpu, latency: 2ms}]}\n"
		 "      - {name: b, wcet: 9ms, accel: [{kind: gpu, latency: 2ms}]}\n"
		 "    edges: [[a, b]]\n",
		 deadline);
	return pd_to_load(dags, pd_to_plat_acc);
}

START_TEST(fifo_requests_wait_for_each_other)
{
	struct fixture f;
	setup(&f, gpu_chain("10ms"));
	ck_assert_uint_eq(f.in.n_srv, 3); /* the GPU, then the FPGA's two slots */
	struct opt_sol p;
	double lb = screen_both_on_server0(&f, &p);
	char why[256] = "";
	ck_assert_msg(opt_evaluate(&f.in, &p, why, sizeof(why)), "both on the GPU: %s", why);
	ck_assert_msg(lb <= p.power_w * (1 + 1e-9), "bound %.9f above the plan's %.9f W", lb, p.power_w);
	opt_sol_free(&p);
	teardown(&f);

	setup(&f, gpu_chain("7ms"));
	bool inf = false;
	screen(&f, 0, &inf);
	ck_assert_msg(inf, "D = 7 ms: the FIFO path (8 ms) cannot fit, the relaxation has a point");
	teardown(&f);
}
END_TEST

/* A chain a -> b on a board with one FPGA slot (reconfiguration 5 ms): both tasks have a 1-ms
 * bitstream of their own and 8 ms on the CPU (8.4 at U_max 0.95), D = 10 ms. Both on the slot share
 * it, so each request waits 2 x (1 + 5) ms and the path takes 12 ms: no plan; the cheapest plan runs
 * one task on the CPU (8.4 + 1 ms). The relaxation must stay at or below that plan and above "both on
 * the slot" (without the reconfiguration in its pairs it took that assignment's 4-ms path as
 * feasible, its bound that assignment's power). */
static const char *const one_slot_plat = "platform:\n"
					 "  name: slot\n"
					 "  reference_frequency: 1000MHz\n"
					 "  base_power: 1W\n"
					 "  dl: {job_overhead: 0ns}\n"
					 "  islands:\n"
					 "    - {name: cpu, cpus: [0, 1],\n"
					 "       opps: [{freq: 1000MHz, busy: 2W, idle: 200mW}]}\n"
					 "  accelerators:\n"
					 "    - {name: pl, kind: fpga, slots: 1, reconfig_time: 5ms,\n"
					 "       idle_power: 400mW}\n";

START_TEST(fpga_reconfiguration_in_pairs)
{
	struct fixture f;
	setup(&f, pd_to_load("dags:\n"
			     "  - name: v\n"
			     "    period: 10ms\n"
			     "    tasks:\n"
			     "      - {name: a, wcet: 8ms,\n"
			     "         accel: [{kind: fpga, latency: 1ms, bitstream: a.bin, power: 100mW}]}\n"
			     "      - {name: b, wcet: 8ms,\n"
			     "         accel: [{kind: fpga, latency: 1ms, bitstream: b.bin, power: 100mW}]}\n"
			     "    edges: [[a, b]]\n",
			     one_slot_plat));
	ck_assert_uint_eq(f.in.n_srv, 1);
	struct opt_sol p;
	double lb = screen_both_on_server0(&f, &p);
	char why[256] = "";
	ck_assert(!opt_evaluate(&f.in, &p, why, sizeof(why))); /* both on the slot: 12 ms */
	double both = opt_power_w(&f.in, &p);
	p.where[0] = 0, p.d_ns[0] = 9e6; /* a on the CPU (density 0.89), b alone on the slot */
	ck_assert_msg(opt_evaluate(&f.in, &p, why, sizeof(why)), "a on the CPU: %s", why);
	ck_assert_msg(lb <= p.power_w * (1 + 1e-9), "bound %.9f above the plan's %.9f W", lb, p.power_w);
	ck_assert_msg(lb > both + 0.1, "bound %.9f: the shared slot's reconfiguration is missing (%.9f W)", lb, both);
	opt_sol_free(&p);
	teardown(&f);
}
END_TEST

/* Six tasks C = 3 ms at 1000 MHz need density >= 1.8 of the island's 1.9 (three per core, 0.9 each):
 * feasible, but not once 10 % of the capacity is held back (1.71); restoring it makes the vector
 * feasible again. */
START_TEST(shrink_holds_capacity_back)
{
	struct fixture f;
	setup(&f, pd_to_load("dags:\n"
			     "  - {name: a, period: 10ms, tasks: [{name: t, wcet: 3ms}]}\n"
			     "  - {name: b, period: 10ms, tasks: [{name: t, wcet: 3ms}]}\n"
			     "  - {name: c, period: 10ms, tasks: [{name: t, wcet: 3ms}]}\n"
			     "  - {name: d, period: 10ms, tasks: [{name: t, wcet: 3ms}]}\n"
			     "  - {name: e, period: 10ms, tasks: [{name: t, wcet: 3ms}]}\n"
			     "  - {name: f, period: 10ms, tasks: [{name: t, wcet: 3ms}]}\n",
			     pd_to_plat2));
	bool inf = false;
	ck_assert(isfinite(screen(&f, 1, &inf)));
	opt_screen_shrink(f.S, 0.10, NULL);
	ck_assert(isinf(screen(&f, 1, &inf)));
	ck_assert(inf);
	opt_screen_shrink(f.S, 0.04, NULL); /* 1.824 >= 1.8 */
	ck_assert(isfinite(screen(&f, 1, &inf)));
	opt_screen_shrink(f.S, 0, NULL);
	ck_assert(isfinite(screen(&f, 1, &inf)));
	teardown(&f);
}
END_TEST

/* Held back on one island only (the LP roundings above 30 tasks, master.c): six tasks of 2 ms per
 * 10 ms on three one-core islands at 1000 MHz need density 1.2 of 2.85. With 60 % held back on every
 * island (3 x 0.38 = 1.14) there is no point; with 60 % held back on island 0 alone (0.38 + 2 x 0.95)
 * there is one, and island 0 then holds at most 0.38 of the load; released, the bound is the plain
 * LP's again. */
START_TEST(shrink_one_island)
{
	struct fixture f;
	setup(&f, pd_to_load(pd_to_six_2ms, pd_to_plat_three));
	for (size_t k = 0; k < 3; k++)
		f.s.isl_opp[k] = 3;
	bool inf = false, one[3] = {true, false, false};
	double lb = opt_screen_vector(f.S, &f.s, INFINITY, opt_now_s() + 5.0, &inf);
	ck_assert(isfinite(lb) && !inf);
	opt_screen_shrink(f.S, 0.6, NULL);
	ck_assert(isinf(opt_screen_vector(f.S, &f.s, INFINITY, opt_now_s() + 5.0, &inf)));
	ck_assert(inf);
	opt_screen_shrink(f.S, 0.6, one);
	ck_assert(isfinite(opt_screen_vector(f.S, &f.s, INFINITY, opt_now_s() + 5.0, &inf)));
	ck_assert(!inf);
	double on0 = 0;
	for (size_t i = 0; i < 6; i++) {
		double t;
		if (opt_screen_share(f.S, i, 0) > 1e-9 && opt_screen_deadline(f.S, i, 0, &t))
			on0 += opt_screen_share(f.S, i, 0) * 2.0 / t; /* C / d of the share */
	}
	ck_assert_msg(on0 <= 0.38 * 1.002, "island 0 holds %.6f of density", on0);
	opt_screen_shrink(f.S, 0, NULL);
	ck_assert_double_eq_tol(opt_screen_vector(f.S, &f.s, INFINITY, opt_now_s() + 5.0, &inf), lb, 1e-9);
	teardown(&f);
}
END_TEST

/* Three tasks C = 6 ms per 10 ms at 1000 MHz fit the island's aggregate capacity (1.8 of 1.9), but
 * each needs more than half a core, so no two share one of the two cores: the cardinality rows make
 * the relaxation infeasible (before them its bound was finite); with one task less it is feasible. */
START_TEST(cardinality_rows_see_half_core_tasks)
{
	struct fixture f;
	setup(&f, pd_to_load("dags:\n"
			     "  - {name: a, period: 10ms, tasks: [{name: t, wcet: 6ms}]}\n"
			     "  - {name: b, period: 10ms, tasks: [{name: t, wcet: 6ms}]}\n"
			     "  - {name: c, period: 10ms, tasks: [{name: t, wcet: 6ms}]}\n",
			     pd_to_plat2));
	bool inf = false;
	ck_assert(isinf(screen(&f, 1, &inf)));
	ck_assert(inf);
	teardown(&f);
	setup(&f, pd_to_load("dags:\n"
			     "  - {name: a, period: 10ms, tasks: [{name: t, wcet: 6ms}]}\n"
			     "  - {name: b, period: 10ms, tasks: [{name: t, wcet: 6ms}]}\n",
			     pd_to_plat2));
	ck_assert_double_eq_tol(screen(&f, 1, &inf), 1 + 2 * 0.2 + 2 * 0.8 * 0.6, 1e-9);
	ck_assert(!inf);
	teardown(&f);
}
END_TEST

/* Two tasks at half a core or more (5 ms every 10 ms at 1000 MHz) and a small one on pd_to_plat2's
 * island of two cores: the island rows let the two large ones share its cores, and so does the LP
 * (one each). A core row holding both leaves no point (1.0 > cap); one holding a large and the
 * small task changes nothing (0.6 <= cap): nor does the power (it does not depend on the cores).
 * Released, the LP is as before. opt_screen_load gives each task's density (C v) at least C / T. */
START_TEST(core_row_holds_tasks_on_one_core)
{
	struct fixture f;
	setup(&f, pd_to_load("dags:\n"
			     "  - {name: a, period: 10ms, tasks: [{name: t, wcet: 5ms}]}\n"
			     "  - {name: b, period: 10ms, tasks: [{name: t, wcet: 5ms}]}\n"
			     "  - {name: c, period: 10ms, tasks: [{name: t, wcet: 1ms}]}\n",
			     pd_to_plat2));
	bool inf = false, on[3] = {true, true, false}, isl[1] = {true};
	double z0 = screen(&f, 1, &inf);
	ck_assert(!inf && isfinite(z0));
	ck_assert_double_ge(opt_screen_load(f.S, &f.s, 0, 0), 0.5 * (1 - 1e-3));
	ck_assert_double_ge(opt_screen_load(f.S, &f.s, 2, 0), 0.1 * (1 - 1e-3));
	for (size_t i = 0; i < 3; i++)
		opt_screen_fix(f.S, &f.s, i, 0);
	int r = opt_screen_core_row(f.S, 0, &f.s, on, isl);
	ck_assert_int_gt(r, 0);
	opt_screen_resolve(f.S, INFINITY, opt_now_s() + 5.0, &inf);
	ck_assert(inf);
	on[1] = false, on[2] = true; /* the same row, now a large task and the small one */
	ck_assert_int_eq(opt_screen_core_row(f.S, r, &f.s, on, isl), r);
	double z1 = opt_screen_resolve(f.S, INFINITY, opt_now_s() + 5.0, &inf);
	ck_assert(!inf);
	ck_assert_double_eq_tol(z1, z0, 1e-9 * z0);
	ck_assert_double_le(opt_screen_load(f.S, &f.s, 0, 0) + opt_screen_load(f.S, &f.s, 2, 0), f.in.cap * (1 + 1e-9));
	on[1] = true; /* all three: no point again, and none once more after the release */
	opt_screen_core_row(f.S, r, &f.s, on, isl);
	opt_screen_resolve(f.S, INFINITY, opt_now_s() + 5.0, &inf);
	ck_assert(inf);
	opt_screen_release(f.S, r);
	double z2 = opt_screen_resolve(f.S, INFINITY, opt_now_s() + 5.0, &inf);
	ck_assert(!inf);
	ck_assert_double_eq_tol(z2, z0, 1e-9 * z0);
	teardown(&f);
}
END_TEST

/* Infeasibility only spreads downwards: on a loaded XU4 set, a vector reported infeasible has
 * infeasible neighbours below it on both islands, and some vectors are infeasible and some not.
 * The verdict does not depend on the target (the exact mode screens with its cut-off, and its line
 * probes close slower vectors on a faster one's verdict): a target of 0 W, which stops the Kelley
 * loop at its first LP, gives the same verdicts. */
START_TEST(infeasibility_is_monotone)
{
	struct fixture f;
	setup(&f, pd_to_generated(3, 6, 6, 1.0, 0.0, 7, "platforms/odroid-xu4.yaml"));
	ck_assert_uint_eq(f.in.n_isl, 2);
	size_t n0 = f.in.isl_nopp[0], n1 = f.in.isl_nopp[1];
	bool inf[32][32];
	size_t n_inf = 0;
	for (size_t a = 0; a < n0; a++)
		for (size_t b = 0; b < n1; b++) {
			f.s.isl_opp[0] = a, f.s.isl_opp[1] = b;
			double lb = opt_screen_vector(f.S, &f.s, INFINITY, opt_now_s() + 5.0, &inf[a][b]);
			ck_assert(inf[a][b] ? isinf(lb) : isfinite(lb));
			n_inf += inf[a][b];
			bool inf0;
			double lb0 = opt_screen_vector(f.S, &f.s, 0.0, opt_now_s() + 5.0, &inf0);
			ck_assert_msg(inf0 == inf[a][b], "%zu/%zu: verdict %d with target 0, %d without", a, b, inf0,
				      inf[a][b]);
			ck_assert(inf0 ? isinf(lb0) : isfinite(lb0));
		}
	ck_assert_uint_gt(n_inf, 0);
	ck_assert_uint_lt(n_inf, n0 * n1);
	for (size_t a = 0; a < n0; a++)
		for (size_t b = 0; b < n1; b++)
			if (inf[a][b]) {
				ck_assert_msg(!a || inf[a - 1][b], "%zu/%zu infeasible, %zu/%zu not", a, b, a - 1, b);
				ck_assert_msg(!b || inf[a][b - 1], "%zu/%zu infeasible, %zu/%zu not", a, b, a, b - 1);
			}
	teardown(&f);
}
END_TEST

/* On random sets of both boards, the screening bound at the vector of a plan the exact mode proved
 * optimal is at most that plan's power (a valid relaxation), and within 10 % of it. */
START_TEST(bound_below_proven_optimum)
{
	const char *plats[] = {"platforms/odroid-xu4.yaml", "platforms/zcu102.yaml"};
	int compared = 0;
	for (uint64_t seed = 21; seed <= 26; seed++) {
		pd_plan *plan = pd_to_generated(2, 3, 5, 0.6, seed % 2 ? 0.3 : 0.0, seed, plats[seed % 2]);
		struct pd_opt_params p;
		pd_opt_defaults(&p);
		p.solver = PD_SOLVER_EXACT;
		p.time_limit_s = 2.0;
		struct pd_opt_result r;
		pd_err e = {0};
		if (pd_optimize(plan, &p, &r, &e) != 0 || r.status != PD_STATUS_OPTIMAL) {
			pd_plan_free(plan);
			continue;
		}
		struct fixture f;
		setup(&f, plan);
		for (size_t k = 0; k < f.in.n_isl; k++)
			f.s.isl_opp[k] = pd_plan_island_opp(plan, k);
		for (size_t a = 0; a < f.in.n_acc; a++)
			f.s.acc_opp[a] = pd_plan_accel_opp(plan, a);
		bool inf;
		double lb = opt_screen_vector(f.S, &f.s, INFINITY, opt_now_s() + 5.0, &inf);
		ck_assert(!inf);
		ck_assert_msg(lb <= r.power_w * (1 + 1e-9), "seed %d: screening %.9f W above the optimum %.9f W",
			      (int)seed, lb, r.power_w);
		ck_assert_msg(lb >= r.power_w * 0.9, "seed %d: screening %.9f W, optimum %.9f W", (int)seed, lb,
			      r.power_w);
		compared++;
		teardown(&f);
	}
	ck_assert_int_ge(compared, 3);
}
END_TEST

/* Three identical one-core islands (500 / 1000 MHz) and three independent tasks of 6, 5, 4 ms per
 * 10 ms: the canonical vectors are the 4 sorted ones of 8 (the enumerator agrees with a brute force
 * over all ids), and at every canonical vector the screening bound, with its symmetry rows for the
 * islands at equal OPPs, is finite exactly where some assignment fits and never above the best
 * assignment found by enumerating all 27 (one core per island and no precedences: an island's tasks
 * fit iff their runtimes over the period sum to at most cap). At 1000 MHz the 6- and 5-ms tasks need
 * more than half a core and all three more than a third, so the cardinality rows (at most one / two
 * of them per core) are in play too. Seen failing with the symmetry row written over the wrong twin
 * (a_ik <= sum_{j<i} a_jk) and with the cardinality rows' limit one lower: (1, 1, 1) became
 * infeasible. */
START_TEST(symmetric_islands_canonical_and_valid)
{
	char plat[1024];
	int n = snprintf(plat, sizeof(plat), "platform:\n  name: three\n  reference_frequency: 1000MHz\n  base_power: 1W\n"
					     "  dl: {max_util_per_cpu: 0.95, job_overhead: 0ns}\n  islands:\n");
	for (int k = 0; k < 3; k++)
		n += snprintf(plat + n, sizeof(plat) - (size_t)n,
			      "    - {name: c%d, cpus: [%d], opps: [{freq: 500MHz, busy: 300mW, idle: 100mW}, "
			      "{freq: 1000MHz, busy: 1W, idle: 200mW}]}\n", k, k);
	struct fixture f;
	setup(&f, pd_to_load("dags:\n"
			     "  - {name: a, period: 10ms, tasks: [{name: t, wcet: 6ms}]}\n"
			     "  - {name: b, period: 10ms, tasks: [{name: t, wcet: 5ms}]}\n"
			     "  - {name: c, period: 10ms, tasks: [{name: t, wcet: 4ms}]}\n",
			     plat));
	ck_assert_uint_eq(opt_twin_pairs(&f.in), 2);
	size_t ids[8];
	ck_assert_uint_eq(opt_canonical_vectors(&f.in, ids, 8), 4);
	ck_assert_uint_eq(opt_canonical_vectors(&f.in, ids, 3), SIZE_MAX);
	size_t nc = 0;
	for (size_t id = 0; id < opt_vector_count(&f.in); id++) {
		opt_vector_decode(&f.in, &f.s, id);
		if (opt_vector_canonical(&f.in, &f.s))
			ck_assert_uint_eq(ids[nc++], id);
	}
	ck_assert_uint_eq(nc, 4);
	for (size_t c = 0; c < nc; c++) {
		opt_vector_decode(&f.in, &f.s, ids[c]);
		double best = INFINITY;
		for (int a = 0; a < 27; a++) {
			int isl[3] = {a % 3, a / 3 % 3, a / 9};
			double load[3] = {0, 0, 0}, p = opt_vector_idle_w(&f.in, &f.s);
			for (size_t i = 0; i < 3; i++) {
				size_t k = (size_t)isl[i];
				load[k] += (double)runtime_at(&f.in, i, k, f.s.isl_opp[k]) / (double)f.in.T_ns[i];
				p += opt_task_busy_w(&f.in, &f.s, i, (int)f.in.isl_core0[k]);
			}
			if (load[0] <= f.in.cap && load[1] <= f.in.cap && load[2] <= f.in.cap)
				best = fmin(best, p);
		}
		bool inf;
		double lb = opt_screen_vector(f.S, &f.s, INFINITY, opt_now_s() + 5.0, &inf);
		ck_assert_msg(inf == !isfinite(best), "vector %zu: infeasible %d, best %.9f W", ids[c], inf, best);
		if (isfinite(best))
			ck_assert_msg(lb <= best * (1 + 1e-9), "vector %zu: bound %.9f W above %.9f W", ids[c], lb, best);
	}
	/* all three at 1000 MHz: every assignment costs the same, and the bound is that cost */
	f.s.isl_opp[0] = f.s.isl_opp[1] = f.s.isl_opp[2] = 1;
	bool inf;
	ck_assert_double_eq_tol(opt_screen_vector(f.S, &f.s, INFINITY, opt_now_s() + 5.0, &inf),
				1 + 3 * 0.2 + 0.8 * 1.5, 1e-9);
	teardown(&f);
}
END_TEST

/* The cheapest plan (W) at the vector of f->s with every task on the option (islands, then servers)
 * its digit in a gives, INFINITY when that assignment has no plan (exact core packing decides). */
static double assignment_power(struct fixture *f, size_t a, size_t no, struct opt_sol *t)
{
	opt_sol_copy(t, &f->s, &f->in);
	for (size_t i = 0; i < f->in.n_tasks; i++, a /= no) {
		size_t o = a % no;
		if (o >= f->in.n_isl && f->in.impl[i * f->in.n_srv + (o - f->in.n_isl)] < 0)
			return INFINITY;
		t->where[i] = opt_option_where(&f->in, o);
	}
	int r = opt_corepack(&f->in, t, opt_now_s() + 10.0);
	ck_assert_int_ge(r, 0);
	return r == 1 ? opt_power_w(&f->in, t) : INFINITY;
}

/* Checks the option bounds of the LP at the vector of f->s, with task fix_i's option fix_o the only
 * one open (fix_i = SIZE_MAX: none fixed), against every assignment (power[a]: its cheapest plan,
 * INFINITY without one): each bound at most the cheapest plan with that task on that option, the bound
 * on every point at most the cheapest plan. Returns how many option bounds lie above the LP's own
 * bound (by 0.01 mW: more than rounding). */
static int check_option_bounds(struct fixture *f, const double *power, size_t fix_i, size_t fix_o)
{
	size_t no = f->in.n_isl + f->in.n_srv, n = f->in.n_tasks, na = 1;
	for (size_t i = 0; i < n; i++)
		na *= no;
	double best[64], ob[64], all = INFINITY;
	ck_assert_uint_le(n * no, 64);
	for (size_t io = 0; io < n * no; io++)
		best[io] = INFINITY;
	for (size_t a = 0; a < na; a++) {
		size_t dig = a;
		for (size_t i = 0; i < fix_i && i < n; i++)
			dig /= no;
		if (fix_i < n && dig % no != fix_o)
			continue;
		all = fmin(all, power[a]);
		dig = a;
		for (size_t i = 0; i < n; i++, dig /= no)
			best[i * no + dig % no] = fmin(best[i * no + dig % no], power[a]);
	}
	bool inf;
	if (fix_i < n)
		opt_screen_fix(f->S, &f->s, fix_i, (long)fix_o);
	double lb = opt_screen_resolve(f->S, INFINITY, opt_now_s() + 5.0, &inf);
	int above = 0;
	if (!inf) {
		double base = opt_screen_option_bounds(f->S, ob);
		ck_assert(isfinite(base));
		ck_assert_msg(base <= lb + 1e-9 && base <= all * (1 + 1e-9), "bound %.9f W: LP %.9f, best plan %.9f", base, lb, all);
		for (size_t io = 0; io < n * no; io++) {
			ck_assert_msg(ob[io] >= base - 1e-9, "task %zu option %zu: %.9f below %.9f", io / no, io % no, ob[io], base);
			ck_assert_msg(ob[io] <= best[io] * (1 + 1e-9), "task %zu option %zu: bound %.9f W above the best plan %.9f W",
				      io / no, io % no, ob[io], best[io]);
			above += isfinite(ob[io]) && ob[io] > lb + 1e-5;
		}
	} else {
		ck_assert_msg(!isfinite(all), "LP without a point, a plan of %.9f W", all);
	}
	if (fix_i < n)
		opt_screen_fix(f->S, &f->s, fix_i, -1);
	return above;
}

/* The branch and bound closes an option of a task in a node's subtree when the safe dual bound of the
 * node's LP with that option at 1 reaches the cut-off (opt_screen_option_bounds). On random 5-task
 * sets of the XU4 (2 islands) and the ZCU102 (1 island, 2 FPGA slots), at every vector and with each
 * task fixed to each option in turn, every such bound is at most the cheapest plan that puts the task
 * there (all assignments, packed exactly), and many are above the LP's own bound (they close
 * something). Seen failing with the reduced costs taken with the wrong sign (+ A^T y). */
START_TEST(option_bounds_below_every_plan)
{
	const char *plats[] = {"platforms/odroid-xu4.yaml", "platforms/zcu102.yaml"};
	int above = 0, checked = 0;
	for (uint64_t seed = 1; seed <= 4; seed++) {
		struct fixture f;
		setup(&f, pd_to_generated(1, 5, 5, 0.5, seed % 2 ? 0.0 : 0.4, seed, plats[seed % 2 ? 0 : 1]));
		size_t nv = opt_vector_count(&f.in), no = f.in.n_isl + f.in.n_srv, na = 1;
		for (size_t i = 0; i < f.in.n_tasks; i++)
			na *= no;
		double *power = malloc(na * sizeof(double));
		struct opt_sol t;
		ck_assert_ptr_nonnull(power);
		ck_assert_int_eq(opt_sol_init(&t, &f.in), 0);
		for (size_t id = 0; id < nv; id += nv > 8 ? nv / 7 : 1) {
			opt_vector_decode(&f.in, &f.s, id);
			for (size_t a = 0; a < na; a++)
				power[a] = assignment_power(&f, a, no, &t);
			bool inf;
			opt_screen_vector(f.S, &f.s, INFINITY, opt_now_s() + 5.0, &inf);
			above += check_option_bounds(&f, power, SIZE_MAX, 0);
			for (size_t i = 0; i < f.in.n_tasks; i += 2)
				for (size_t o = 0; o < no; o++)
					above += check_option_bounds(&f, power, i, o);
			checked++;
		}
		free(power);
		opt_sol_free(&t);
		teardown(&f);
	}
	printf("option bounds: %d vectors, %d bounds above the LP's\n", checked, above);
	ck_assert_int_ge(checked, 8);
	ck_assert_int_ge(above, 10);
}
END_TEST

/* Steps *id down the vectors of f (from nv - 1 on the first call, *id = nv), by a twelfth of them,
 * to the next one whose screening LP has a point, and screens it; false when none is left. Then
 * returns that LP's optimum as it stands: a target of -inf stops the Kelley loop after one LP. */
static bool next_screened(struct fixture *f, size_t nv, size_t *id, double *lp)
{
	for (;;) {
		size_t step = *id == nv ? 1 : (nv > 24 ? nv / 12 : 1);
		if (*id <= step) /* vector 0 is not visited */
			return false;
		*id -= step;
		opt_vector_decode(&f->in, &f->s, *id);
		bool inf;
		double lb = opt_screen_vector(f->S, &f->s, INFINITY, opt_now_s() + 5.0, &inf);
		if (inf || !isfinite(lb))
			continue;
		*lp = opt_screen_resolve(f->S, -INFINITY, opt_now_s() + 5.0, &inf);
		return true;
	}
}

/* Where the build has CBC and the board identical islands, the screening LP is solved by CLP
 * (screen_clp.c), a copy of GLPK's problem per solve: its verdicts and bounds must be GLPK's. On a
 * 20-task and a 30-task Xavier set (the second with GPU tasks: FIFO rows), every twelfth vector is
 * screened by both (precise Kelley loops, whose optima differ only by the tangents each loop added):
 * the same "no plan" verdicts, bounds within 0.1 %. XU4 (no identical islands) keeps GLPK. */
START_TEST(clp_and_glpk_agree)
{
	int compared = 0, infeasible = 0;
	for (int which = 0; which < 2; which++) {
		struct fixture f, g;
		pd_plan *(*make)(unsigned, unsigned, uint64_t, const char *, double) = pd_to_bench_set_accel;
		setup(&f, which ? make(3, 10, 7, "platforms/xavier-agx.yaml", 0.1) : make(2, 10, 5, "platforms/xavier-agx.yaml", 0));
		setup(&g, which ? make(3, 10, 7, "platforms/xavier-agx.yaml", 0.1) : make(2, 10, 5, "platforms/xavier-agx.yaml", 0));
		opt_screen_use_glpk(g.S);
		ck_assert_str_eq(opt_screen_solver(f.S), pd_opt_have_cbc() ? "clp" : "glpk");
		ck_assert_str_eq(opt_screen_solver(g.S), "glpk");
		opt_screen_precise(f.S, true);
		opt_screen_precise(g.S, true);
		size_t nv = opt_vector_count(&f.in);
		for (size_t id = nv - 1; id > 0; id -= nv > 24 ? (id > nv / 12 ? nv / 12 : id) : 1) {
			opt_vector_decode(&f.in, &f.s, id);
			opt_vector_decode(&g.in, &g.s, id);
			bool fi, gi;
			double a = opt_screen_vector(f.S, &f.s, INFINITY, opt_now_s() + 10.0, &fi);
			double b = opt_screen_vector(g.S, &g.s, INFINITY, opt_now_s() + 10.0, &gi);
			ck_assert_msg(fi == gi, "vector %zu: CLP says %s, GLPK %s", id, fi ? "no plan" : "a point",
				      gi ? "no plan" : "a point");
			infeasible += fi;
			if (fi)
				continue;
			ck_assert(isfinite(a) && isfinite(b));
			ck_assert_msg(fabs(a - b) <= 1e-3 * b, "vector %zu: CLP %.9f W, GLPK %.9f W", id, a, b);
			compared++;
		}
		teardown(&g);
		teardown(&f);
	}
	printf("CLP and GLPK: %d bounds compared, %d vectors without a plan\n", compared, infeasible);
	struct fixture x; /* XU4: no identical islands, GLPK */
	setup(&x, pd_to_bench_set(2, 10, 5, "platforms/odroid-xu4.yaml"));
	ck_assert_str_eq(opt_screen_solver(x.S), "glpk");
	teardown(&x);
	ck_assert_int_ge(compared, 12);
	ck_assert_int_ge(infeasible, 1);
}
END_TEST

/* The branch and bound deletes the generated rows that are slack at its root's optimum
 * (opt_screen_compact): the LP's optimum must stay what it was, and on a 20-task XU4 set screened
 * vector after vector most of the pool is slack. Seen failing with every generated row deleted (the
 * first LP after it then lies 0.2 % lower). */
START_TEST(compaction_keeps_the_optimum)
{
	struct fixture f;
	setup(&f, pd_to_bench_set(2, 10, 5, "platforms/odroid-xu4.yaml"));
	size_t nv = opt_vector_count(&f.in), id = nv;
	int compared = 0, deleted = 0;
	double before;
	while (compared < 6 && next_screened(&f, nv, &id, &before)) {
		bool inf;
		int n = opt_screen_compact(f.S);
		double after = opt_screen_resolve(f.S, -INFINITY, opt_now_s() + 5.0, &inf);
		ck_assert(!inf);
		ck_assert_msg(fabs(after - before) <= 1e-9 * before, "vector %zu: LP %.12f W, after compaction %.12f W",
			      id, before, after);
		deleted += n;
		compared++;
	}
	ck_assert_int_ge(compared, 3);
	ck_assert_int_ge(deleted, 20 * compared);
	teardown(&f);
}
END_TEST

/* The branch and bound starts an open node's LP from its parent's basis (opt_screen_basis_get /
 * _set): after a fixing and its undoing, the restored basis is optimal again (no pivot), with a row
 * added in between (a no-good, basic when restored) as well; without the restore the LP needs pivots
 * to come back. Seen failing with the added rows left non-basic (GLPK then refuses the basis and
 * starts from the slack basis). */
START_TEST(restored_basis_is_optimal)
{
	struct fixture f;
	setup(&f, pd_to_bench_set(2, 10, 5, "platforms/odroid-xu4.yaml"));
	size_t nv = opt_vector_count(&f.in), id = nv;
	int checked = 0, moved = 0;
	double z0;
	while (checked < 4 && next_screened(&f, nv, &id, &z0)) {
		bool inf;
		unsigned char *b = malloc(opt_screen_basis_size(f.S));
		ck_assert_ptr_nonnull(b);
		opt_screen_basis_get(f.S, b);
		/* task 0 onto the option its LP share is smallest on (that moves the optimum) */
		size_t no = f.in.n_isl + f.in.n_srv, o_min = 0;
		for (size_t o = 1; o < no; o++)
			if (opt_screen_share(f.S, 0, o) < opt_screen_share(f.S, 0, o_min))
				o_min = o;
		opt_screen_fix(f.S, &f.s, 0, (long)o_min);
		opt_screen_resolve(f.S, -INFINITY, opt_now_s() + 5.0, &inf);
		int where[64];
		ck_assert_uint_le(f.in.n_tasks, 64);
		opt_screen_round(f.S, where);
		int ng = opt_screen_nogood(f.S, where, NULL);
		opt_screen_fix(f.S, &f.s, 0, -1);
		int it0 = opt_screen_iterations(f.S);
		double z1 = opt_screen_resolve(f.S, -INFINITY, opt_now_s() + 5.0, &inf);
		moved += opt_screen_iterations(f.S) > it0;
		/* the LP moved away again, then back from the saved basis: no pivot */
		opt_screen_fix(f.S, &f.s, 0, (long)o_min);
		opt_screen_resolve(f.S, -INFINITY, opt_now_s() + 5.0, &inf);
		opt_screen_fix(f.S, &f.s, 0, -1);
		opt_screen_basis_set(f.S, b);
		it0 = opt_screen_iterations(f.S);
		double z2 = opt_screen_resolve(f.S, -INFINITY, opt_now_s() + 5.0, &inf);
		opt_screen_release(f.S, ng);
		free(b);
		if (z1 > z0 * (1 + 1e-9)) /* the no-good cut the old optimum: its basis is not optimal */
			continue;
		ck_assert_int_eq(opt_screen_iterations(f.S), it0);
		ck_assert_double_eq_tol(z2, z0, 1e-9 * z0);
		checked++;
	}
	ck_assert_int_ge(checked, 3);
	ck_assert_int_ge(moved, 1); /* without the restore it pivots */
	teardown(&f);
}
END_TEST

/* A no-good that names some tasks only (the branch and bound's cuts, opt_corepack_cut: the others
 * are OPT_WHERE_ANY): naming task t alone on the island where the LP's optimum gives it most share,
 * the LP moves t off that island (its share there 0) and does not fall; naming nobody adds no row;
 * released, the LP is back at its optimum. */
START_TEST(partial_nogood_names_only_its_tasks)
{
	struct fixture f;
	setup(&f, pd_to_bench_set(2, 10, 5, "platforms/odroid-xu4.yaml"));
	size_t nv = opt_vector_count(&f.in), id = nv;
	int checked = 0, moved = 0;
	double z0;
	int where[64];
	ck_assert_uint_le(f.in.n_tasks, 64);
	while (checked < 3 && next_screened(&f, nv, &id, &z0)) {
		bool inf;
		for (size_t i = 0; i < f.in.n_tasks; i++)
			where[i] = OPT_WHERE_ANY;
		ck_assert_int_eq(opt_screen_nogood(f.S, where, NULL), 0);
		size_t t = f.in.n_tasks / 2, k = 0;
		for (size_t q = 1; q < f.in.n_isl; q++)
			if (opt_screen_share(f.S, t, q) > opt_screen_share(f.S, t, k))
				k = q;
		where[t] = (int)f.in.isl_core0[k];
		int ng = opt_screen_nogood(f.S, where, NULL);
		ck_assert_int_gt(ng, 0);
		double z1 = opt_screen_resolve(f.S, -INFINITY, opt_now_s() + 5.0, &inf);
		if (!inf) { /* t may fit nowhere else at this vector: then the vector is closed */
			ck_assert_double_le(opt_screen_share(f.S, t, k), 1e-7);
			ck_assert_double_ge(z1, z0 * (1 - 1e-9));
			moved++;
		}
		opt_screen_release(f.S, ng);
		double z2 = opt_screen_resolve(f.S, -INFINITY, opt_now_s() + 5.0, &inf);
		ck_assert(!inf);
		ck_assert_double_eq_tol(z2, z0, 1e-7 * z0);
		checked++;
	}
	ck_assert_int_ge(checked, 3);
	ck_assert_int_ge(moved, 2); /* the row was seen to move the LP, not only to close vectors */
	teardown(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("optimizer_screen");
	TCase *tc = tcase_create("screen");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, one_island_bound_is_exact);
	tcase_add_test(tc, fifo_requests_wait_for_each_other);
	tcase_add_test(tc, fpga_reconfiguration_in_pairs);
	tcase_add_test(tc, shrink_holds_capacity_back);
	tcase_add_test(tc, shrink_one_island);
	tcase_add_test(tc, cardinality_rows_see_half_core_tasks);
	tcase_add_test(tc, core_row_holds_tasks_on_one_core);
	tcase_add_test(tc, infeasibility_is_monotone);
	tcase_add_test(tc, bound_below_proven_optimum);
	tcase_add_test(tc, symmetric_islands_canonical_and_valid);
	tcase_add_test(tc, option_bounds_below_every_plan);
	tcase_add_test(tc, compaction_keeps_the_optimum);
	tcase_add_test(tc, partial_nogood_names_only_its_tasks);
	tcase_add_test(tc, restored_basis_is_optimal);
	tcase_add_test(tc, clp_and_glpk_agree);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
