/* SPDX-License-Identifier: MIT */
/* Instances shared by the optimizer tests. */
#ifndef PD_TEST_HELPER_OPT_H
#define PD_TEST_HELPER_OPT_H

#include "dags/pd_dags.h"
#include "plan/pd_plan.h"
#include "platforms/pd_platform.h"

#include <stdint.h>

/* A plan (no solution yet) from DAG and platform YAML texts; asserts that both load. */
pd_plan *pd_to_load(const char *dags, const char *plat);
/* A plan over a seeded powerdag-gen DAG set on a shipped platform file (path from the source root). */
pd_plan *pd_to_generated(unsigned n_dags, unsigned lo, unsigned hi, double util, double accel, uint64_t seed,
			 const char *platform);

#endif
