/* SPDX-License-Identifier: MIT */
/* Instances shared by the optimizer tests. */
#include "helper_opt.h"
#include "optimizer/opt_impl.h"
#include "pd_test.h"

#include <stdio.h>

/* One island of two cores; WCETs at 1000 MHz. Per core: 500 MHz busy 0.3 W idle 0.1 W, 1000 MHz
 * busy 1.0 W idle 0.2 W; base 1 W; U_max 0.95, no fair server, no per-job overhead (the values
 * below are derived by hand from the WCETs alone; test_budget.c covers the overhead). */
const char *const pd_to_plat2 = "platform:\n"
				 "  name: two\n"
				 "  reference_frequency: 1000MHz\n"
				 "  base_power: 1W\n"
				 "  dl: {max_util_per_cpu: 0.95, job_overhead: 0ns}\n"
				 "  islands:\n"
				 "    - name: cpu\n"
				 "      cpus: [0, 1]\n"
				 "      capacity: 1.0\n"
				 "      opps:\n"
				 "        - {freq: 500MHz, busy: 300mW, idle: 100mW}\n"
				 "        - {freq: 1000MHz, busy: 1W, idle: 200mW}\n";

const char *const pd_to_plat_acc = "platform:\n"
				   "  name: acc\n"
				   "  reference_frequency: 1000MHz\n"
				   "  base_power: 1W\n"
				   "  dl: {job_overhead: 0ns}\n"
				   "  islands:\n"
				   "    - {name: cpu, cpus: [0, 1], opps: [{freq: 1000MHz, busy: 2W, idle: 200mW}]}\n"
				   "  accelerators:\n"
				   "    - {name: gpu0, kind: gpu, opps: [{freq: 500MHz, busy: 1W, idle: 300mW}]}\n"
				   "    - {name: pl, kind: fpga, slots: 2, reconfig_time: 5ms, idle_power: 400mW}\n";

/* Three identical one-core islands (a canonical list of OPP vectors: test_lazy.c, test_pathlag.c),
 * 250-1000 MHz in four OPPs; base 1 W; U_max 0.95, no per-job overhead. */
#define PD_TO_THREE_ISLAND(k)                                                                                   \
	"    - {name: c" #k ", cpus: [" #k "], opps: [{freq: 250MHz, busy: 200mW, idle: 50mW}, "                  \
	"{freq: 500MHz, busy: 400mW, idle: 100mW}, {freq: 750MHz, busy: 700mW, idle: 150mW}, "                       \
	"{freq: 1000MHz, busy: 1W, idle: 200mW}]}\n"
const char *const pd_to_plat_three = "platform:\n  name: three\n  reference_frequency: 1000MHz\n  base_power: 1W\n"
				     "  dl: {max_util_per_cpu: 0.95, job_overhead: 0ns}\n  islands:\n" PD_TO_THREE_ISLAND(0)
					     PD_TO_THREE_ISLAND(1) PD_TO_THREE_ISLAND(2);

const char *const pd_to_six_2ms = "dags:\n"
				  "  - {name: a, period: 10ms, tasks: [{name: t, wcet: 2ms}]}\n"
				  "  - {name: b, period: 10ms, tasks: [{name: t, wcet: 2ms}]}\n"
				  "  - {name: c, period: 10ms, tasks: [{name: t, wcet: 2ms}]}\n"
				  "  - {name: d, period: 10ms, tasks: [{name: t, wcet: 2ms}]}\n"
				  "  - {name: e, period: 10ms, tasks: [{name: t, wcet: 2ms}]}\n"
				  "  - {name: f, period: 10ms, tasks: [{name: t, wcet: 2ms}]}\n";

pd_plan *pd_to_load(const char *dags, const char *plat)
{
	const char *dir = pd_test_tmpdir();
	const char *dp = pd_test_write(dir, "d.yaml", dags);
	char dpath[4096];
	snprintf(dpath, sizeof(dpath), "%s", dp);
	const char *pp = pd_test_write(dir, "p.yaml", plat);
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = pd_dags_load_file(dpath, &d);
	pd_platform *p = pd_platform_load_file(pp, &d);
	if (d.n)
		pd_diags_print(&d, stderr);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(p);
	pd_diags_free(&d);
	pd_plan *plan = pd_plan_new(s, p);
	ck_assert_ptr_nonnull(plan);
	return plan;
}

static pd_plan *plan_of(const struct pd_gen_params *g, const char *platform)
{
	pd_err e = {0};
	pd_dagset *s = pd_dags_generate(g, &e);
	ck_assert_msg(s != NULL, "gen: %s", e.msg);
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = pd_platform_load_file(pd_test_src(platform), &d);
	ck_assert_ptr_nonnull(p);
	pd_diags_free(&d);
	return pd_plan_new(s, p);
}

pd_plan *pd_to_generated(unsigned n_dags, unsigned lo, unsigned hi, double util, double accel, uint64_t seed,
			 const char *platform)
{
	struct pd_gen_params g;
	pd_dags_gen_defaults(&g);
	g.n_dags = n_dags;
	g.min_tasks = lo;
	g.max_tasks = hi;
	g.util = util;
	g.accel_ratio = accel;
	g.seed = seed;
	return plan_of(&g, platform);
}

pd_plan *pd_to_bench_set(unsigned n_dags, unsigned per_dag, uint64_t seed, const char *platform)
{
	return pd_to_bench_set_accel(n_dags, per_dag, seed, platform, 0);
}

pd_plan *pd_to_bench_set_accel(unsigned n_dags, unsigned per_dag, uint64_t seed, const char *platform, double accel)
{
	struct pd_gen_params g;
	pd_dags_gen_defaults(&g);
	g.n_dags = n_dags;
	g.min_tasks = g.max_tasks = per_dag;
	g.util = 0.06 * n_dags;
	g.accel_ratio = accel;
	g.seed = seed;
	g.layers_min = 5;
	g.layers_max = 8;
	g.min_wcet_ns = 20000;
	return plan_of(&g, platform);
}

pd_plan *pd_to_independent(unsigned n, double util, uint64_t seed, const char *platform)
{
	struct pd_gen_params g;
	pd_dags_gen_defaults(&g);
	g.n_dags = n;
	g.min_tasks = g.max_tasks = 1;
	g.util = util;
	g.seed = seed;
	g.min_wcet_ns = 20000;
	return plan_of(&g, platform);
}

pd_plan *pd_to_one_task(struct opt_inst *in)
{
	pd_plan *plan = pd_to_load("dags:\n"
				   "  - {name: a, period: 10ms, tasks: [{name: t, wcet: 1ms}]}\n",
				   pd_to_plat2);
	pd_err e = {0};
	ck_assert_msg(opt_inst_build(in, pd_plan_dags(plan), pd_plan_platform(plan), 1e-5, &e) == 0, "%s", e.msg);
	return plan;
}
