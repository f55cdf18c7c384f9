/* SPDX-License-Identifier: MIT */
/*
 * check_impl.h - private to the checker: the state of one check run, shared by the rule files
 * (check_task.c, check_core.c, check_accel.c, check_path.c).
 */
#ifndef PD_CHECK_IMPL_H
#define PD_CHECK_IMPL_H

#include "optimizer/checker/pd_check.h"

/* Kernel limits of __checkparam_dl (docs/CHECKER.md). */
#define CK_RUNTIME_MIN_NS 1024LL
#define CK_PERIOD_MIN_NS 100000LL
#define CK_PERIOD_MAX_NS 4194304000LL
/* Kernel fixed point of bandwidths: utilisation x 2^20 (BW_SHIFT). */
#define CK_BW_SHIFT 20

struct ck {
	const pd_plan *plan;
	const pd_dagset *dags;
	const pd_platform *plat;
	pd_check_report *r;
	size_t n_tasks;
	int64_t *wcet_true; /* per task: C_i(k,f) recomputed (CPU) or latency at the OPP (accel) */
	int64_t *budget_true; /* per task: Q_i recomputed (CPU: pd_platform_budget_at), = wcet_true (accel) */
	int64_t *delay_ns;  /* per task: its contribution to a path, d_i (CPU) or the FIFO bound / R_i */
	bool oom;
};

void ck_add(struct ck *c, enum pd_check_kind k, double value, double limit, const char *unit, const char *fmt,
	    ...) __attribute__((format(printf, 6, 7)));
/* "dag/task" of task i into buf. */
const char *ck_task_name(const struct ck *c, size_t i, char *buf, size_t n);

void ck_tasks(struct ck *c);  /* WCETs and SCHED_DEADLINE triples */
void ck_cores(struct ck *c);  /* density and admission per CPU */
void ck_accels(struct ck *c); /* accelerator load, FIFO bound, FPGA slots */
void ck_paths(struct ck *c);  /* end-to-end finish potentials */

/* The core capacity U_max - Rf/Pf as an exact fraction num/den (U_max in ppm, the sysctl's grain). */
void ck_capacity(const pd_platform *p, int64_t *num, int64_t *den);
int64_t ck_umax_ppm(const pd_platform *p);

#endif
