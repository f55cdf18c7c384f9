/* SPDX-License-Identifier: MIT */
/* model_impl.h - the twin model's fields, shared by model.c (state, power) and tree.c (files). */
#ifndef PD_TWIN_MODEL_IMPL_H
#define PD_TWIN_MODEL_IMPL_H

#include "twin/twin_impl.h"

#include <sys/stat.h>

#define TWIN_MAX_ACCELS 16
/* A path of the emulated tree: a directory holding one platform path component (policy, devfreq or
 * FPGA manager name, at most PD_PLATFORM_MAX_COMPONENT bytes) under a short prefix such as
 * "/class/fpga_manager/" (20), then "/" and an attribute name (at most 30): every valid platform fits. */
#define TWIN_PATH (PD_PLATFORM_MAX_COMPONENT + 64)

enum twin_gov { TW_GOV_PERFORMANCE, TW_GOV_POWERSAVE, TW_GOV_USERSPACE, TW_GOV_SIMPLE_ONDEMAND };

struct twin_policy {
	const struct pd_island *isl;
	int64_t min_khz, max_khz, set_khz;
	enum twin_gov gov;
};

struct twin_accel {
	const struct pd_accelerator *a;
	pthread_mutex_t run_lock;
	/* GPU (devfreq, Hz) */
	int64_t min_hz, max_hz, set_hz;
	enum twin_gov gov;
	/* FPGA manager */
	char manager[PD_PLATFORM_MAX_COMPONENT + 1];
	char state[32];
	unsigned long flags;
	char loaded[PD_PLATFORM_MAX_SLOTS][128]; /* one bitstream name per slot */
	int n_loaded, next_slot;
	uint64_t loads;
	/* activity: cumulative extra energy (uW x ns) above idle, for the rails */
	bool running;
	int64_t run_start_ns, run_extra_uw, busy_ns;
	double energy_uwns;
	uint64_t runs;
};

enum twin_rail_kind { TW_RAIL_ISLAND, TW_RAIL_ACCEL, TW_RAIL_BOARD };
struct twin_rail {
	enum twin_rail_kind kind;
	size_t idx;
	const char *name;
	int64_t shunt_uohm;
	int oversampling;
	int async;
};

struct twin_sample {
	int64_t t_ns;
	uint64_t busy[TWIN_MAX_CPUS], total[TWIN_MAX_CPUS];
	double energy[TWIN_MAX_ACCELS];
};

struct twin_node;
typedef int (*twin_read_fn)(twin_model *m, const struct twin_node *n, pd_buf *out);
typedef int (*twin_write_fn)(twin_model *m, const struct twin_node *n, const char *s);
struct twin_node {
	char path[TWIN_PATH];
	enum twin_node_kind kind;
	unsigned mode;
	twin_read_fn rd;
	twin_write_fn wr;
	size_t idx; /* policy / accel / rail / cpu index */
	int attr;   /* which attribute of that object */
};

struct twin_model {
	pthread_mutex_t mu;
	const pd_platform *p;
	char fw_dir[512];
	struct twin_policy *pol;
	size_t n_pol;
	struct twin_accel *acc;
	size_t n_acc;
	int n_cpus;
	int64_t fair_runtime_ns[TWIN_MAX_CPUS], fair_period_ns[TWIN_MAX_CPUS];
	struct twin_rail *rails;
	size_t n_rails;
	struct twin_sample ring[TWIN_WINDOW + 1];
	size_t head, n_samples;
	struct twin_node *nodes;
	size_t n_nodes, cap_nodes;
	/* the board's /proc/stat (procstat.c): stat_mu guards these and serialises its readers */
	pthread_mutex_t stat_mu;
	int stat_fd; /* the host's /proc/stat; -1 until the daemon serves the file */
	char stat_acct[400];
	struct twin_procstat_mono stat_mono;
};

int twin_tree_build(twin_model *m, pd_err *e);
size_t twin_policy_opp(const struct twin_policy *pol);
size_t twin_gpu_opp(const struct twin_accel *ac);
int twin_accel_run(twin_model *m, size_t a, int64_t latency_ns, int64_t power_uw, const char *bitstream);
int twin_fpga_load(twin_model *m, size_t a, const char *name);

#endif
