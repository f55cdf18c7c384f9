/* SPDX-License-Identifier: MIT */
/*
 * The twin's platform: derived from a source platform for the CPUs this machine really has, so that
 * optimize/deploy plan for exactly what the twin emulates.
 *
 *   - islands: at most one per host CPU; when the source has more islands than the host has CPUs,
 *     the slowest and the fastest (by capacity) are kept first; each kept island gets one core, the
 *     spare host CPUs go to the islands round robin (never more cores than the source island has);
 *     host CPUs are handed out in capacity order (slowest island gets cpu0, or the first of
 *     `--host-cpus`), policy = policy<first>;
 *   - accelerators as in the source (the default source, the XU4 board file, gets two emulated ones);
 *     dl: max_util_per_cpu, and the fair server when the twin's kernel has one;
 *   - sensors: one INA226 rail per island, per accelerator and one for the rest of the board, all
 *     served by the twin's iiod (device = IIO label "ina226-<name>", channel power2, mW -> W).
 * The result is a pd_platform built through a platforms draft, so the one platform writer
 * (platforms/platform_emit.c) writes it and the platform parser checks it.
 */
#include "twin/twin_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The default source: platforms/odroid-xu4.yaml, compiled in by twin/CMakeLists.txt (cmake/PdEmbed.cmake). */
extern const char twin_xu4_yaml[];
extern const size_t twin_xu4_yaml_len;
#define TWIN_XU4_NAME "platforms/odroid-xu4.yaml (built in)"

/* The XU4 board file has no accelerator; the default twin adds two emulated ones so that it exercises
 * every deployer path: a Mali-T628-like GPU (mainline exynos5422 GPU OPPs; its power figures are
 * ESTIMATES - no public model exists) and a ZCU102-like PL slot (reconfiguration 22.664 ms and PL
 * idle 0.812 W from the AMPERE/FRED ZCU102 artefacts). */
static const struct pd_opp default_gpu_opps[] = {
	{177000, 350000, 60000, {0}}, {266000, 480000, 70000, {0}},  {350000, 620000, 80000, {0}},
	{420000, 760000, 90000, {0}}, {480000, 900000, 100000, {0}}, {543000, 1060000, 115000, {0}},
	{600000, 1250000, 130000, {0}},
};
static const struct pd_accelerator default_accels[] = {
	{.name = "gpu0", .kind = PD_ACCEL_GPU, .devfreq = "11800000.gpu", .opps = (struct pd_opp *)default_gpu_opps,
	 .n_opps = sizeof(default_gpu_opps) / sizeof(default_gpu_opps[0])},
	{.name = "pl", .kind = PD_ACCEL_FPGA, .slots = 1, .reconfig_ns = 22664 * PD_NS_PER_US, .idle_uw = 812000,
	 .manager = "fpga0"},
};

static pd_platform *load_source(const char *src_path, pd_err *e)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = NULL;
	if (src_path) {
		p = pd_platform_load_file(src_path, &d);
	} else {
		pd_ydoc doc = {0};
		if (pd_yaml_load(&doc, TWIN_XU4_NAME, twin_xu4_yaml, twin_xu4_yaml_len, &d) == 0 && doc.root)
			p = pd_platform_from_node(pd_ymap_get(doc.root, "platform"), &d);
		if (!p && d.n)
			pd_diags_to_err(&d, e); /* while doc, which its locations name, is alive */
		pd_yaml_free(&doc);
	}
	if (!p) {
		if (src_path && d.n)
			pd_diags_to_err(&d, e);
		else if (!d.n)
			pd_err_set(e, PD_EXIT_USAGE, "%s: not a platform file", src_path ? src_path : TWIN_XU4_NAME);
	}
	pd_diags_free(&d);
	return p;
}

/* Chooses islands (indices into the source, capacity ascending; at most n_cpus of them, so pick and
 * cores hold TWIN_MAX_CPUS entries) and cores per island. Returns how many, or 0 when out of memory. */
static size_t choose(const pd_platform *p, int n_cpus, size_t *pick, int *cores)
{
	size_t K = pd_platform_island_count(p), n = 0;
	size_t *order = calloc(K, sizeof(size_t)), *seq = calloc(K, sizeof(size_t));
	bool *used = calloc(K, sizeof(bool));
	if (!order || !seq || !used || K == 0) {
		free(order), free(seq), free(used);
		return 0;
	}
	for (size_t k = 0; k < K; k++) { /* insertion sort by capacity, stable */
		size_t i = k;
		while (i > 0 && pd_platform_island(p, order[i - 1])->capacity > pd_platform_island(p, k)->capacity) {
			order[i] = order[i - 1];
			i--;
		}
		order[i] = k;
	}
	size_t want = K < (size_t)n_cpus ? K : (size_t)n_cpus;
	/* slowest and fastest first, then the others in capacity order */
	size_t ns = 0;
	seq[ns++] = order[0];
	if (K > 1)
		seq[ns++] = order[K - 1];
	for (size_t i = 1; i + 1 < K; i++)
		seq[ns++] = order[i];
	for (size_t i = 0; i < want; i++)
		used[seq[i]] = true;
	for (size_t i = 0; i < K; i++)
		if (used[order[i]])
			pick[n++] = order[i];
	free(order), free(seq), free(used);
	for (size_t i = 0; i < n; i++)
		cores[i] = 1;
	int spare = n_cpus - (int)n;
	for (bool progress = true; spare > 0 && progress;) {
		progress = false;
		for (size_t i = n; i-- > 0 && spare > 0;) { /* fastest islands get spare cores first */
			if ((size_t)cores[i] < pd_platform_island(p, pick[i])->n_cpus) {
				cores[i]++, spare--;
				progress = true;
			}
		}
	}
	return n;
}

/* ids: the host CPU of twin core i (NULL: i) */
static void add_islands(pd_platform_draft *dr, const pd_platform *p, const size_t *pick, const int *cores, size_t n,
			const int *ids)
{
	int cpu = 0, cpus[TWIN_MAX_CPUS];
	for (size_t i = 0; i < n; i++) {
		struct pd_island k = *pd_platform_island(p, pick[i]);
		char policy[32];
		snprintf(policy, sizeof(policy), "policy%d", ids ? ids[cpu] : cpu);
		for (int c = 0; c < cores[i]; c++)
			cpus[c] = ids ? ids[cpu + c] : cpu + c;
		k.cpus = cpus;
		k.n_cpus = (size_t)cores[i];
		k.policy = policy;
		k.has_job_overhead = false; /* measured on the source board: says nothing of the host */
		pd_platform_draft_add_island(dr, &k);
		cpu += cores[i];
	}
}

/* The source's accelerators as they are (an FPGA without a manager gets fpga<index>, the name the
 * twin serves), then the default twin's emulated ones when the source is the built-in XU4. */
static void add_accels(pd_platform_draft *dr, const pd_platform *p, bool builtin)
{
	for (size_t i = 0; i < pd_platform_accel_count(p); i++) {
		struct pd_accelerator a = *pd_platform_accel(p, i);
		char mgr[32];
		snprintf(mgr, sizeof(mgr), "fpga%zu", i);
		if (a.kind == PD_ACCEL_FPGA && !a.manager)
			a.manager = mgr;
		pd_platform_draft_add_accel(dr, &a);
	}
	for (size_t i = 0; builtin && i < sizeof(default_accels) / sizeof(default_accels[0]); i++)
		pd_platform_draft_add_accel(dr, &default_accels[i]);
}

/* One INA226 rail served by the twin's iiod: device "ina226-<name>", rail "VDD_<NAME>". */
static void add_sensor(pd_platform_draft *dr, const char *uri, const char *name, const char *measures)
{
	char dev[sizeof("ina226-") + PD_PLATFORM_MAX_NAME], rail[sizeof("VDD_") + PD_PLATFORM_MAX_NAME];
	snprintf(dev, sizeof(dev), "ina226-%s", name);
	snprintf(rail, sizeof(rail), "VDD_%s", name);
	for (char *c = rail; *c; c++)
		*c = (char)(isalnum((unsigned char)*c) ? toupper((unsigned char)*c) : '_');
	struct pd_sensor s = {.uri = uri, .device = dev, .channel = "power2", .rail = rail, .measures = measures,
			      .scale = 0.001};
	pd_platform_draft_add_sensor(dr, &s);
}

/* The twin's platform, checked by the platforms parser (pd_platform_draft_finish). The source's
 * dl.job_overhead and budget_margin are not carried over (measured on the source board, they say
 * nothing of the host); its fair server only when the twin's kernel has one. */
static pd_platform *build(const pd_platform *p, bool builtin, const size_t *pick, const int *cores, size_t n,
			  const int *ids, const char *iio_uri, bool fair_server, pd_err *e)
{
	const struct pd_dl *sdl = pd_platform_dl(p);
	struct pd_dl dl = {.max_util_per_cpu = sdl->max_util_per_cpu};
	if (sdl->has_fair_server && fair_server) {
		dl.has_fair_server = true;
		dl.fair_runtime_ns = sdl->fair_runtime_ns;
		dl.fair_period_ns = sdl->fair_period_ns;
	}
	char name[sizeof("twin-") + 200];
	snprintf(name, sizeof(name), "twin-%s", pd_platform_name(p));
	pd_platform_draft *dr = pd_platform_draft_new(name, pd_platform_ref_freq_khz(p), pd_platform_base_uw(p), &dl);
	if (!dr) {
		pd_err_set(e, PD_EXIT_ENV, "out of memory");
		return NULL;
	}
	add_islands(dr, p, pick, cores, n, ids);
	add_accels(dr, p, builtin);
	for (size_t i = 0; i < n; i++)
		add_sensor(dr, iio_uri, pd_platform_island(p, pick[i])->name, pd_platform_island(p, pick[i])->name);
	for (size_t i = 0; i < pd_platform_accel_count(p); i++)
		add_sensor(dr, iio_uri, pd_platform_accel(p, i)->name, pd_platform_accel(p, i)->name);
	for (size_t i = 0; builtin && i < sizeof(default_accels) / sizeof(default_accels[0]); i++)
		add_sensor(dr, iio_uri, default_accels[i].name, default_accels[i].name);
	add_sensor(dr, iio_uri, "board", "base"); /* the rest of the board: base_power */
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *t = pd_platform_draft_finish(dr, "<twin platform>", &d);
	if (!t)
		pd_diags_to_err(&d, e);
	pd_diags_free(&d);
	return t;
}

int pd_twin_derive_platform(const char *src_path, int n_cpus, const char *iio_uri, pd_buf *yaml, pd_err *e)
{
	return pd_twin_derive_platform_kernel(src_path, n_cpus, iio_uri, true, yaml, e);
}

int pd_twin_derive_platform_kernel(const char *src_path, int n_cpus, const char *iio_uri, bool fair_server,
				   pd_buf *yaml, pd_err *e)
{
	return pd_twin_derive_platform_on(src_path, NULL, n_cpus, iio_uri, fair_server, yaml, e);
}

int pd_twin_derive_platform_on(const char *src_path, const int *cpu_ids, int n_cpus, const char *iio_uri,
			       bool fair_server, pd_buf *yaml, pd_err *e)
{
	if (n_cpus < 1 || n_cpus > TWIN_MAX_CPUS)
		return pd_err_set(e, PD_EXIT_USAGE, "twin: %d CPUs (1..%d supported)", n_cpus, TWIN_MAX_CPUS);
	pd_platform *p = load_source(src_path, e);
	if (!p)
		return e ? e->code : PD_EXIT_USAGE;
	size_t pick[TWIN_MAX_CPUS];
	int cores[TWIN_MAX_CPUS];
	size_t n = choose(p, n_cpus, pick, cores);
	if (n == 0) { /* the parser guarantees at least one island */
		pd_platform_free(p);
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	}
	pd_platform *t = build(p, src_path == NULL, pick, cores, n, cpu_ids, iio_uri, fair_server, e);
	int rc = t ? pd_platform_emit_doc(t, yaml, e) : e->code ? e->code : PD_EXIT_USAGE;
	pd_platform_free(t);
	pd_platform_free(p);
	return rc;
}
