/* SPDX-License-Identifier: MIT */
/*
 * pd_platform.h - the platform model (docs/FORMATS.md section 3) and the power model (docs/MODEL.md "Average power").
 *
 * A platform has CPU islands (cores sharing one cpufreq policy, i.e. one frequency), each with a
 * capacity kappa (relative speed at equal frequency) and a table of OPPs giving per-core busy and idle
 * power; accelerators (GPUs with devfreq OPPs, FPGAs with slots and a reconfiguration time); IIO
 * power sensors; the SCHED_DEADLINE admission cap and the fair deadline server.
 *
 * Invariants after a successful parse:
 *   - names unique (islands, accelerators, sensor rails); every CPU id appears in one island only;
 *   - OPPs of each island and GPU sorted by strictly increasing frequency, busy >= idle >= 0;
 *   - 0 < capacity <= 16, 0 < max_util_per_cpu <= 1, fair server runtime < period when present,
 *     and max_util_per_cpu - fair_runtime/fair_period > 0;
 *   - an FPGA has slots >= 1; a GPU has >= 1 OPP;
 *   - capacity is a decimal with at most 6 places (the WCET law uses it exactly, see power.c);
 *   - islands and accelerators share one namespace (placements and sensors name either);
 *   - job_overhead (platform-wide and per island) in [0, PD_JOB_OVERHEAD_MAX_NS]; budget_margin in
 *     [0, 1) with at most 6 decimal places (the budget law uses it exactly, see power.c).
 * Defaults: base_power 0W, capacity 1.0, policy "policy<first cpu>", max_util_per_cpu 0.95, no fair
 * server, job_overhead PD_JOB_OVERHEAD_DEFAULT_NS (absent: has_job_overhead false), budget_margin 0,
 * FPGA idle_power 0W, sensor uri "local:", measures "board", scale 0.001.
 * Locations in the model point at a copy of the file name owned by the platform.
 */
#ifndef PD_PLATFORM_H
#define PD_PLATFORM_H

#include "core/pd_core.h"
#include "dags/pd_dags.h"

/* Limits of the parser, exported because writers of derived platforms and the board twin size
 * their buffers on them (a value past one is a parse error, never truncated). */
#define PD_PLATFORM_MAX_NAME 63       /* island, accelerator and rail names (bytes) */
#define PD_PLATFORM_MAX_COMPONENT 255 /* policy, devfreq, manager: one sysfs path component (bytes) */
#define PD_PLATFORM_MAX_CPU 4095      /* largest Linux CPU id in an island's cpus */
#define PD_PLATFORM_MAX_SLOTS 64      /* FPGA slots */

struct pd_opp {
	int64_t freq_khz;
	int64_t busy_uw; /* per core (CPU) or per device (GPU), while executing */
	int64_t idle_uw; /* per core / device while idle at this OPP */
	struct pd_loc loc;
};

struct pd_island {
	const char *name;
	const int *cpus; /* Linux CPU ids */
	size_t n_cpus;
	double capacity; /* kappa */
	struct pd_opp *opps;
	size_t n_opps;
	const char *policy; /* cpufreq policy directory name, e.g. "policy4"; default "policy<first cpu>" */
	bool has_job_overhead;   /* island-level `job_overhead` given: overrides dl.job_overhead */
	int64_t job_overhead_ns;
	/* cores' worth of CPU time software outside the plan (the agent's power sampler, iiod, sshd,
	 * interrupts) keeps the island busy, at any OPP: its power is in every prediction (power.c) */
	double background_util;
	struct pd_loc loc;
};

struct pd_accelerator {
	const char *name;
	enum pd_accel_kind kind;
	/* GPU */
	const char *devfreq;  /* devfreq device name, e.g. "17000000.gv11b" (NULL: frequency not pinned) */
	struct pd_opp *opps;  /* GPU OPPs (latencies in DAG files are at the top OPP) */
	size_t n_opps;
	/* FPGA */
	int slots;
	int64_t reconfig_ns;
	int64_t idle_uw;      /* FPGA static/idle power while powered (GPU: per OPP instead) */
	const char *manager;  /* FPGA manager name under /sys/class/fpga_manager, e.g. "fpga0" */
	struct pd_loc loc;
};

struct pd_sensor {
	const char *uri;      /* libiio context URI: "local:", "ip:host" ... */
	const char *device;   /* IIO device name or label, e.g. "ina226-u79" */
	const char *channel;  /* e.g. "power2" */
	const char *rail;     /* rail name, e.g. "VCCINT" (unique) */
	const char *measures; /* component: an island name, an accelerator name, "ddr", "board", ... */
	double scale;         /* extra multiplier to watts after raw*scale (IIO unit mW -> 0.001); default 0.001 */
	struct pd_loc loc;
};

struct pd_dl {
	double max_util_per_cpu; /* U_max, default 0.95 (sched_rt_runtime_us / sched_rt_period_us) */
	bool has_fair_server;
	int64_t fair_runtime_ns, fair_period_ns;
	/* Kernel-charged time per job beyond the work (wake-up, time stamps, waking successors);
	 * absent: PD_JOB_OVERHEAD_DEFAULT_NS. Islands may override it. */
	bool has_job_overhead;
	int64_t job_overhead_ns;
	/* Budget margin m: reservation runtime = ceil(demand * (1 + m)); 0 when absent. */
	bool has_budget_margin;
	double budget_margin;
};

typedef struct pd_platform pd_platform;

pd_platform *pd_platform_load_file(const char *path, pd_diags *d);
/* From the value of the "platform" key (a mapping). */
pd_platform *pd_platform_from_node(const pd_ynode *map, pd_diags *d);
void pd_platform_free(pd_platform *p);

const char *pd_platform_name(const pd_platform *p);
int64_t pd_platform_ref_freq_khz(const pd_platform *p);
int64_t pd_platform_base_uw(const pd_platform *p);
const struct pd_dl *pd_platform_dl(const pd_platform *p);
size_t pd_platform_island_count(const pd_platform *p);
const struct pd_island *pd_platform_island(const pd_platform *p, size_t k);
size_t pd_platform_accel_count(const pd_platform *p);
const struct pd_accelerator *pd_platform_accel(const pd_platform *p, size_t a);
size_t pd_platform_sensor_count(const pd_platform *p);
const struct pd_sensor *pd_platform_sensor(const pd_platform *p, size_t s);
long pd_platform_find_island(const pd_platform *p, const char *name);
long pd_platform_find_accel(const pd_platform *p, const char *name);
/* Island holding Linux CPU id cpu, or -1. */
long pd_platform_island_of_cpu(const pd_platform *p, int cpu);
/* Total number of cores over all islands. */
size_t pd_platform_core_count(const pd_platform *p);

/* Usable density per core: max_util_per_cpu minus the fair-server share when configured. */
double pd_platform_core_capacity(const pd_platform *p);

/* Setters for writers of derived platforms (`profile`): island -1 sets dl.job_overhead, else the
 * island's override. Return 0, or -1 for an index or value out of range (nothing changed). */
int pd_platform_set_job_overhead(pd_platform *p, long island, int64_t ns);
int pd_platform_set_budget_margin(pd_platform *p, double margin);
/* island background_util: 0 <= util <= the island's CPU count, at most 6 decimal places (rounded). */
int pd_platform_set_background(pd_platform *p, size_t island, double util);
/* dl.fair_server: 0 < runtime < period, and max_util_per_cpu - runtime/period > 0. */
int pd_platform_set_fair_server(pd_platform *p, int64_t runtime_ns, int64_t period_ns);
/* Power-table corrections (`powerdag refit`), keeping the invariants: busy >= idle >= 0 for an
 * existing island OPP, base >= 0; -1 (nothing changed) otherwise. */
int pd_platform_set_opp_power(pd_platform *p, size_t island, size_t opp, int64_t busy_uw, int64_t idle_uw);
int pd_platform_set_base_uw(pd_platform *p, int64_t base_uw);

/* The one writer of the platform format (canonical: emit(parse(emit(x))) == emit(x)). */
void pd_platform_emit(const pd_platform *p, pd_yemit *y); /* the mapping value of "platform:" */
/* The whole document ("platform:" and its mapping) appended to out; 0, or PD_EXIT_ENV in e. */
int pd_platform_emit_doc(const pd_platform *p, pd_buf *out, pd_err *e);
int pd_platform_write_file(const pd_platform *p, const char *path, pd_err *e);

/* Building a platform in code (the board twin derives one per host from a source platform). A
 * draft collects figures: the add functions copy what they are given (strings, CPU lists, OPP
 * tables; locations are dropped; a NULL string is written as an empty one) and check nothing but
 * memory (-1 when out of memory, reported again by finish). pd_platform_draft_finish writes the draft with the canonical writer and reads
 * it back with the parser, so the platform it returns keeps every invariant above, or it returns
 * NULL with the parser's diagnostics in d (their locations name `file`, which must outlive d, and
 * the emitted text's lines).
 * It frees the draft in both cases. */
typedef struct pd_platform_draft pd_platform_draft;
pd_platform_draft *pd_platform_draft_new(const char *name, int64_t ref_khz, int64_t base_uw, const struct pd_dl *dl);
int pd_platform_draft_add_island(pd_platform_draft *dr, const struct pd_island *k);
int pd_platform_draft_add_accel(pd_platform_draft *dr, const struct pd_accelerator *a);
int pd_platform_draft_add_sensor(pd_platform_draft *dr, const struct pd_sensor *s);
pd_platform *pd_platform_draft_finish(pd_platform_draft *dr, const char *file, pd_diags *d);
void pd_platform_draft_free(pd_platform_draft *dr);

/* The same platform with its cores renumbered (`deploy --cpu-map`, platform_remap.c): the i-th core
 * over all islands in file order becomes board[i] (n must be the core count); an island's policy
 * "policy<its first CPU>" follows its first core, a policy named otherwise stays. Figures,
 * accelerators, sensors and provenance are unchanged. NULL with diagnostics naming `file` (which
 * must outlive d) for a map of the wrong length, an id out of range or a CPU named twice. */
pd_platform *pd_platform_remap_cpus(const pd_platform *p, const int *board, size_t n, const char *file, pd_diags *d);

/* Measured values (`powerdag profile`, docs/PROFILE.md). The `provenance` mapping (docs/FORMATS.md
 * §3) is kept as parsed and written back; the model never reads it. set_provenance copies map (a
 * YAML mapping; NULL removes it). set_gpu_opp_power is set_opp_power for a GPU accelerator's OPP
 * (-1 when not a GPU, out of range, or busy < idle or idle < 0). */
const pd_ynode *pd_platform_provenance(const pd_platform *p);
int pd_platform_set_provenance(pd_platform *p, const pd_ynode *map);
int pd_platform_set_gpu_opp_power(pd_platform *p, size_t accel, size_t opp, int64_t busy_uw, int64_t idle_uw);

/* ---------------------------------------------------------------- power model (docs/MODEL.md "Average power") */
/*
 * WCET at an island and OPP:
 *     C_i(k, f) = C_fixed + (C - C_fixed) * f_ref / (kappa_k * f)
 * rounded up to whole ns (never optimistic): computed exactly in 128-bit integers with kappa taken
 * as a decimal of at most 6 places (the parser enforces it; a computed kappa with more places is
 * rounded down, which only lengthens the WCET). Returns -1 for an island/OPP out of range or invalid
 * numbers (negative times, fixed > wcet, zero frequencies or capacity); saturates at INT64_MAX.
 */
int64_t pd_platform_wcet_at(const pd_platform *p, const struct pd_task *t, size_t island, size_t opp);
/* Same law for raw numbers (used by the agent and the twin). */
int64_t pd_platform_wcet_scale(int64_t wcet_ns, int64_t wcet_fixed_ns, int64_t ref_khz, double capacity, int64_t f_khz);
/* Accelerator latency at GPU OPP j: ceil(L_top * f_top / f_j) (the whole latency scales; an opp
 * past the table means the top OPP). FPGA (fixed clocks): L unchanged. -1 when L < 0. */
int64_t pd_platform_latency_at(const struct pd_accelerator *a, int64_t latency_top_ns, size_t opp);
/* Island power with n_k cores idle at OPP j plus busy fraction sum_util (sum of C/T of its tasks):
 *     n_k * P_idle + (P_busy - P_idle) * sum_util        [W] */
double pd_platform_island_power_w(const struct pd_island *isl, size_t opp, double sum_util);
/* What the island's background_util adds to it at OPP j (docs/MODEL.md "Average power"):
 *     (P_busy - P_idle) * background_util                 [W]
 * Every prediction (optimizer, check, simulate, the report's plan column) adds it; a measurement at
 * the measured busy time does not (that time holds the background already). */
double pd_platform_island_background_w(const struct pd_island *isl, size_t opp);
/* Accelerator power. GPU at OPP j with busy fraction sum_util (sum of L/T of its tasks):
 *     P_idle + (P_busy - P_idle) * sum_util                                          [W]
 * FPGA: idle_power only (opp ignored); the caller adds sum(power_i * L_i / T_i) of its tasks, whose
 * power increments live in the DAG file (pd_impl.power_uw). */
double pd_platform_accel_power_w(const struct pd_accelerator *a, size_t opp, double sum_util);

/*
 * Per-job overhead and budget (docs/MODEL.md "Overhead and margin"). A CPU task with work C = C(k, f)
 * on island k really executes, as the kernel charges it, the demand
 *     D = C + o_k        o_k = island job_overhead, else dl.job_overhead, else the default below
 * and gets the reservation runtime
 *     Q = ceil(D * (1 + m))   m = dl.budget_margin (exact: m is a decimal of at most 6 places).
 * Every module (optimizer, evaluator, checker, simulator, power prediction) takes D and Q from here.
 */
/* Default o when a platform measures none: conservative for a VM-hosted or unprofiled board; the
 * figures behind it are in docs/MODEL.md. */
#define PD_JOB_OVERHEAD_DEFAULT_NS (100 * PD_NS_PER_US)
/* Largest accepted job_overhead: more is a unit mistake, not an overhead. */
#define PD_JOB_OVERHEAD_MAX_NS (100 * PD_NS_PER_MS)

struct pd_budget {
	int64_t wcet_ns;     /* C(k, f): the work */
	int64_t overhead_ns; /* o_k */
	int64_t demand_ns;   /* D = C + o_k: executed per job */
	int64_t runtime_ns;  /* Q = ceil(D (1 + m)): the SCHED_DEADLINE runtime */
};

/* o_k of island k (-1 for an index out of range). */
int64_t pd_platform_job_overhead_ns(const pd_platform *p, size_t island);
/* D and Q for work wcet_ns on island k. Returns 0, or -1 (b zeroed) for a bad island or wcet < 0.
 * Saturates at INT64_MAX. */
int pd_platform_budget_of(const pd_platform *p, size_t island, int64_t wcet_ns, struct pd_budget *b);
/* Same with C = pd_platform_wcet_at(p, t, island, opp). */
int pd_platform_budget_at(const pd_platform *p, const struct pd_task *t, size_t island, size_t opp, struct pd_budget *b);
/* Q = ceil(D (1 + m)) for a demand D and a margin m (exact on the 6-place decimal; -1 if D < 0). */
int64_t pd_platform_budget_runtime(int64_t demand_ns, double margin);

/* Index of the OPP with exactly freq_khz in a table, or -1. */
long pd_platform_opp_find(const struct pd_opp *opps, size_t n, int64_t freq_khz);

#endif /* PD_PLATFORM_H */
