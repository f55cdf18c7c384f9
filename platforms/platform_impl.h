/* SPDX-License-Identifier: MIT */
/*
 * platform_impl.h - private to platforms/: the layout behind the opaque pd_platform handle.
 * Everything a platform points to (names, CPU lists, OPP tables, the file name of its locations)
 * lives in its arena, so one pd_platform_free releases it on every path.
 */
#ifndef PD_PLATFORM_IMPL_H
#define PD_PLATFORM_IMPL_H

#include "platforms/pd_platform.h"

struct pd_platform {
	pd_arena *arena;
	const char *file; /* arena copy of the source file name (locations point here) */
	const char *name;
	int64_t ref_khz;
	int64_t base_uw;
	struct pd_dl dl;
	struct pd_island *islands;
	size_t n_islands;
	struct pd_accelerator *accels;
	size_t n_accels;
	struct pd_sensor *sensors;
	size_t n_sensors;
	pd_ynode *provenance; /* arena copy of the `provenance` mapping, NULL when absent (provenance.c) */
	struct pd_loc loc;
};

/* provenance.c */
int platform_parse_provenance(pd_platform *p, const pd_ynode *platform_map, pd_diags *d);
void platform_emit_provenance(const pd_platform *p, pd_yemit *y);

/* Capacity kappa as an exact count of millionths (see power.c: the WCET law is computed on it). */
#define PD_CAPACITY_SCALE 1000000LL

#endif
