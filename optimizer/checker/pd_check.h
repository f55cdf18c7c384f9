/* SPDX-License-Identifier: MIT */
/*
 * pd_check.h - the independent schedulability checker of a deployment plan (`powerdag check`).
 *
 * It reads nothing but the plan (which embeds its DAG set and platform) and never calls optimizer
 * code: the point is to not trust the optimizer. Every quantity is recomputed from the model of
 * docs/MODEL.md and compared with exact arithmetic (int64 / __int128 rationals; long double only
 * with a proven error bound, and a result too close to call counts as a violation), so that no
 * rounding can accept an unschedulable plan. See docs/CHECKER.md for the list of rules.
 *
 * The report lists *every* violation with its numbers, not only the first.
 */
#ifndef PD_CHECK_H
#define PD_CHECK_H

#include "core/pd_core.h"
#include "plan/pd_plan.h"

enum pd_check_kind {
	PD_CK_WCET = 0,          /* plan's wcet_ns below the recomputed C_i(k,f) (or accel latency) */
	PD_CK_DENSITY,           /* per core: sum Q_i/d_i > U_max - fair-server share */
	PD_CK_PATH,              /* a source->sink path: sum d_i + sum R_i > D_g */
	PD_CK_ACCEL_LOAD,        /* per accelerator server: sum L_j/T_j > 1 */
	PD_CK_FIFO,              /* accel task: R_i below the non-preemptive FIFO bound */
	PD_CK_SLOTS,             /* FPGA: slot index >= slots, or more slots used than exist */
	PD_CK_RUNTIME_MIN,       /* SCHED_DEADLINE runtime < 1024 ns */
	PD_CK_RUNTIME_DEADLINE,  /* runtime > deadline */
	PD_CK_DEADLINE_PERIOD,   /* deadline > period */
	PD_CK_PERIOD,            /* reservation period > T_g of the task's DAG */
	PD_CK_PERIOD_RANGE,      /* period outside the kernel's [100 us, 4.194304 s] */
	PD_CK_RUNTIME_BUDGET,    /* runtime < Q_i = ceil((C_i(k,f) + o_k)(1 + m)): the budget cannot cover
				  * the worst case plus the kernel-charged per-job overhead */
	PD_CK_ADMISSION,         /* per CPU: kernel admission sum runtime/period (+ fair server) > U_max */
	PD_CK_DEADLINE_BUDGET,   /* d_i < Q_i */
	PD_CK_OVERHEAD,          /* the plan's recorded overhead differs from the platform's o_k */
	PD_CK_RECLAIM,           /* reclaim: true on a core where GRUB reclaiming is not safe (MODEL.md) */
	PD_CK__COUNT
};

/* Stable lower-case name used in text and JSON ("density", "path", "runtime_min", ...). */
const char *pd_check_kind_name(enum pd_check_kind k);

struct pd_check_violation {
	enum pd_check_kind kind;
	char where[192];  /* "cpu:4", "camera/detect", "dag camera: capture -> detect", "fpga:pl/1" */
	double value;     /* the offending quantity ... */
	double limit;     /* ... and the bound it breaks */
	const char *unit; /* "ns", "density", "utilization", "slots" (static string) */
};

/* Per CPU figures (every CPU of the platform, also those without tasks). */
struct pd_check_core {
	int cpu;
	size_t island;
	size_t n_tasks;
	double density;       /* sum Q_i/d_i (nearest long double, for display) */
	double density_limit; /* U_max - fair share */
	double admission;     /* kernel sum of runtime/period in 2^-20 units, + fair server */
	double admission_limit;
	double reclaimable;   /* U_max - admission: GRUB's extra_bw, what reclaiming tasks may use */
	size_t n_reclaim;     /* tasks with reclaim: true */
	bool reclaim_allowed; /* the core satisfies the reclaim rule (MODEL.md "Reclaiming") */
};

/* Per DAG: the longest finish potential over its sinks, F = max over paths (sum d + sum R). */
struct pd_check_dag {
	size_t dag;
	int64_t finish_ns;
	int64_t deadline_ns;
	double relative_slack; /* (D - F) / D */
};

typedef struct pd_check_report {
	bool schedulable;
	struct pd_check_violation *v;
	size_t n_v, cap_v;
	struct pd_check_core *cores;
	size_t n_cores;
	struct pd_check_dag *dags;
	size_t n_dags;
	double min_relative_slack; /* min over DAGs */
} pd_check_report;

/* Checks a plan. Returns NULL only on out-of-memory or a structurally impossible plan (message in e,
 * code PD_EXIT_USAGE); an unschedulable plan gives a report with schedulable == false. */
pd_check_report *pd_check_plan(const pd_plan *p, pd_err *e);
void pd_check_report_free(pd_check_report *r);

/* Number of violations of one kind (tests, summaries). */
size_t pd_check_count(const pd_check_report *r, enum pd_check_kind k);
/* First violation of a kind, or NULL. */
const struct pd_check_violation *pd_check_find(const pd_check_report *r, enum pd_check_kind k);

/* Human-readable report: one line per violation, then per core and per DAG figures. */
void pd_check_print(const pd_check_report *r, const pd_plan *p, FILE *out);

/* ---------------------------------------------------------------- exact arithmetic (shared with tests) */
/*
 * Decides sum_i num_i/den_i <= lim_num/lim_den exactly (all positive; den > 0). First with long double
 * and a rigorous error bound; when the two sides are closer than that bound, with reduced __int128
 * rationals; when even those would overflow, answers "no" (never accepts what it cannot prove).
 */
bool pd_check_sum_le(const int64_t *num, const int64_t *den, size_t n, int64_t lim_num, int64_t lim_den);

#endif /* PD_CHECK_H */
