/* SPDX-License-Identifier: MIT */
/* plan_impl.h - private to plan/: the layout behind the opaque pd_plan handle. */
#ifndef PD_PLAN_IMPL_H
#define PD_PLAN_IMPL_H

#include "plan/pd_plan.h"

/* Plan file format version written by this code (docs/FORMATS.md). */
#define PD_PLAN_VERSION 1

struct pd_plan {
	pd_arena *arena; /* strings of the meta data (solver name) */
	pd_dagset *dags; /* owned */
	pd_platform *plat; /* owned */
	struct pd_plan_meta meta;
	size_t *island_opp; /* per island: OPP index */
	size_t *accel_opp;  /* per accelerator: OPP index (GPU; 0 for FPGA) */
	struct pd_plan_task *tasks; /* per global task index of dags */
	size_t n_tasks;
};

/* Allocates the per-island / per-accelerator / per-task arrays of a plan over dags and plat (both
 * taken over) with the defaults of pd_plan_new. NULL on allocation failure (both freed). */
pd_plan *pd_plan__alloc(pd_dagset *dags, pd_platform *plat);

#endif
