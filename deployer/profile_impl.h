/* SPDX-License-Identifier: MIT */
/* profile_impl.h - state of one `powerdag profile`, shared by profile.c (sequence) and
 * profile_steps.c (planning, measuring, fitting, output). Private to deployer/. */
#ifndef PD_PROFILE_IMPL_H
#define PD_PROFILE_IMPL_H

#include <jansson.h>

#include "deployer/pd_deployer.h"

enum pkind { PK_OVERHEAD, PK_POWER, PK_ACCEL, PK_SPREAD };

struct pstep {
	enum pkind kind;
	size_t idx;      /* island or accelerator */
	long opp;        /* OPP pinned for the step; -1: the current frequency (no cpufreq/devfreq) */
	double est_s;    /* planned duration */
	double seconds;  /* measured duration */
	bool failed;
	int retries;     /* measurements taken again after a disturbed one */
	char error[512];
	char *title;
};

/* One OPP's measurement (index n_opps: "the current frequency" when OPPs cannot be stepped). */
struct opp_res {
	bool have_pw, have_rate;
	double idle_w, busy_w;     /* per core (island) or device (GPU), fitted */
	double idle_sd, busy_sd;   /* standard deviation of the same, from the rail samples */
	long n_idle, n_busy;       /* rail samples */
	double busy_frac;          /* busy fraction obtained (sum over the island's cores) */
	double rate;               /* builtin:spin iterations per CPU-ns (median over the cores) */
	double latency_ns, latency_expect_ns; /* GPU: measured and modelled job latency */
	long jobs;
};

struct isl_res {
	long rail;               /* sensor measuring this island alone, -1 none */
	bool cpufreq;            /* its OPPs can be stepped */
	bool have_ov;
	int64_t ov_ns, ov_p50_ns, ov_p99_ns, ov_max_ns, ov_mean_ns;
	long ov_samples;
	struct opp_res *opps;    /* n_opps + 1 */
};

struct prof {
	const struct pd_deploy_profile_opts *o;
	pd_platform *nom, *fit;
	pd_deploy_transport *t;
	pd_deploy_board *b;
	char agent[1024], remote_dir[256], remote_agent[300];
	char hostname[128], kernel_version[256], date[32];
	/* the board's 1-minute load average and online CPUs before the steps (-1: unreadable): the
	 * overhead and margin are measured under whatever else runs there (profile_flag_busy) */
	double load1;
	long cpus_online;
	pd_buf state_before, left;
	int restore_rc;
	bool state_equal, written;
	pd_err err;
	double t_start, seconds, est_total_s;
	struct pstep *steps;
	size_t n_steps;
	struct isl_res *isl;
	struct isl_res *acc; /* per accelerator (GPU) */
	bool have_spread;    /* builtin:spin CPU time over its calibration, every CPU busy */
	double spread_p50, spread_p99, spread_max;
	long spread_jobs;
	json_t *skipped, *flags, *values;
};

void profile_log(struct prof *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int profile_measure(struct prof *c, const char *const *args, json_t **out, pd_err *e);
/* A disagreement between the board and the nominal platform that was not rewritten: kept in the
 * output's flags and logged. */
void profile_flag(struct prof *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* qsort comparator of doubles, ascending (medians of spin speeds and capacities). */
int profile_cmp_double(const void *a, const void *b);
#define MARGIN_MAX 0.5 /* a board that needs more is flagged: its WCETs, not a margin, should say so */
#define ACCEL_LATENCY_US 2000 /* the accel step's job length at the top OPP */
/* profile_steps.c */
int profile_plan_steps(struct prof *c, pd_err *e);
int profile_step_run(struct prof *c, struct pstep *s, pd_err *e);
int profile_fit_and_write(struct prof *c, pd_err *e);
char *profile_summary_text(struct prof *c);

#endif
