/* SPDX-License-Identifier: MIT */
/* Instances shared by the optimizer tests. */
#ifndef PD_TEST_HELPER_OPT_H
#define PD_TEST_HELPER_OPT_H

#include "dags/pd_dags.h"
#include "plan/pd_plan.h"
#include "platforms/pd_platform.h"

#include <stdint.h>

/* One island of two cores (WCETs at 1000 MHz): 500 MHz busy 0.3 W idle 0.1 W, 1000 MHz busy 1 W
 * idle 0.2 W per core; base 1 W; U_max 0.95, no fair server. */
extern const char *const pd_to_plat2;
/* One island of two cores (1000 MHz: busy 2 W, idle 0.2 W), a GPU (500 MHz: busy 1 W, idle 0.3 W)
 * and a two-slot FPGA (reconfiguration 5 ms, idle 0.4 W); base 1 W, no per-job overhead. */
extern const char *const pd_to_plat_acc;
/* Three identical one-core islands c0..c2 of four OPPs (helper_opt.c). */
extern const char *const pd_to_plat_three;
/* Six independent one-task DAGs, 2 ms per 10 ms (at the reference frequency). */
extern const char *const pd_to_six_2ms;
/* A plan (no solution yet) from DAG and platform YAML texts; asserts that both load. */
pd_plan *pd_to_load(const char *dags, const char *plat);
/* A plan over a seeded powerdag-gen DAG set on a shipped platform file (path from the source root). */
pd_plan *pd_to_generated(unsigned n_dags, unsigned lo, unsigned hi, double util, double accel, uint64_t seed,
			 const char *platform);
/* A set shaped as bench/optimizer/run.sh makes them: utilisation 0.06 per DAG, 5-8 layers, tasks
 * of at least 20 us, no accelerators. */
pd_plan *pd_to_bench_set(unsigned n_dags, unsigned per_dag, uint64_t seed, const char *platform);
/* The same with a share of tasks that also have an accelerator implementation (bench: ZCU102 0.2,
 * Xavier 0.1). */
pd_plan *pd_to_bench_set_accel(unsigned n_dags, unsigned per_dag, uint64_t seed, const char *platform, double accel);

/* n independent one-task DAGs (D = T) of total utilisation util, tasks of at least 20 us, as
 * `powerdag gen --dags n --tasks 1 --util util --min-wcet 20us --seed seed` writes them. */
pd_plan *pd_to_independent(unsigned n, double util, uint64_t seed, const char *platform);

/* One 1-ms task every 10 ms on pd_to_plat2, and its solver instance built into in (eta 1e-5), for
 * the tests of the machinery around the searches (workers, the screening board). */
struct opt_inst;
pd_plan *pd_to_one_task(struct opt_inst *in);

#endif
