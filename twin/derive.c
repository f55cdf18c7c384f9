/* SPDX-License-Identifier: MIT */
/*
 * The twin's platform: derived from a source platform for the CPUs this machine really has, so that
 * optimize/deploy plan for exactly what the twin emulates.
 *
 *   - islands: at most one per host CPU; when the source has more islands than the host has CPUs,
 *     the slowest and the fastest (by capacity) are kept first; each kept island gets one core, the
 *     spare host CPUs go to the islands round robin (never more cores than the source island has);
 *     host CPUs are handed out in capacity order (slowest island gets cpu0), policy = policy<first>;
 *   - accelerators and dl as in the source;
 *   - sensors: one INA226 rail per island, per accelerator and one for the rest of the board, all
 *     served by the twin's iiod (device = IIO label "ina226-<name>", channel power2, mW -> W).
 */
#include "twin/twin_impl.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The built-in source: ODROID-XU4 islands (figures of platforms/odroid-xu4.yaml: mainline OPPs,
 * AMPERE per-core power, capacities big 1.0 / LITTLE 0.3) plus two emulated accelerators so the
 * twin exercises every deployer path: a Mali-T628-like GPU (mainline exynos5422 GPU OPPs; its power
 * figures are ESTIMATES - no public model exists) and a ZCU102-like PL slot (reconfiguration
 * 22.664 ms and PL idle 0.812 W from the AMPERE/FRED ZCU102 artefacts). */
static const char default_yaml[] =
	"platform:\n"
	"  name: odroid-xu4\n"
	"  reference_frequency: 2000MHz\n"
	"  base_power: 2.1W\n"
	"  dl: {max_util_per_cpu: 0.95, fair_server: {runtime: 50ms, period: 1s}}\n"
	"  islands:\n"
	"    - name: little\n"
	"      cpus: [0, 1, 2, 3]\n"
	"      capacity: 0.3\n"
	"      opps:\n"
	"        - {freq: 200MHz, busy: 24mW, idle: 10mW}\n"
	"        - {freq: 300MHz, busy: 34mW, idle: 12mW}\n"
	"        - {freq: 400MHz, busy: 44mW, idle: 15mW}\n"
	"        - {freq: 500MHz, busy: 53mW, idle: 18mW}\n"
	"        - {freq: 600MHz, busy: 69mW, idle: 22mW}\n"
	"        - {freq: 700MHz, busy: 86mW, idle: 28mW}\n"
	"        - {freq: 800MHz, busy: 106mW, idle: 34mW}\n"
	"        - {freq: 900MHz, busy: 128mW, idle: 41mW}\n"
	"        - {freq: 1000MHz, busy: 153mW, idle: 49mW}\n"
	"        - {freq: 1100MHz, busy: 180mW, idle: 57mW}\n"
	"        - {freq: 1200MHz, busy: 212mW, idle: 67mW}\n"
	"        - {freq: 1300MHz, busy: 251mW, idle: 81mW}\n"
	"        - {freq: 1400MHz, busy: 297mW, idle: 95mW}\n"
	"    - name: big\n"
	"      cpus: [4, 5, 6, 7]\n"
	"      capacity: 1.0\n"
	"      opps:\n"
	"        - {freq: 200MHz, busy: 107mW, idle: 32mW}\n"
	"        - {freq: 300MHz, busy: 151mW, idle: 39mW}\n"
	"        - {freq: 400MHz, busy: 194mW, idle: 47mW}\n"
	"        - {freq: 500MHz, busy: 236mW, idle: 53mW}\n"
	"        - {freq: 600MHz, busy: 279mW, idle: 58mW}\n"
	"        - {freq: 700MHz, busy: 322mW, idle: 65mW}\n"
	"        - {freq: 800MHz, busy: 376mW, idle: 74mW}\n"
	"        - {freq: 900MHz, busy: 432mW, idle: 85mW}\n"
	"        - {freq: 1000MHz, busy: 504mW, idle: 99mW}\n"
	"        - {freq: 1100MHz, busy: 585mW, idle: 114mW}\n"
	"        - {freq: 1200MHz, busy: 674mW, idle: 128mW}\n"
	"        - {freq: 1300MHz, busy: 767mW, idle: 148mW}\n"
	"        - {freq: 1400MHz, busy: 871mW, idle: 166mW}\n"
	"        - {freq: 1500MHz, busy: 984mW, idle: 187mW}\n"
	"        - {freq: 1600MHz, busy: 1133mW, idle: 217mW}\n"
	"        - {freq: 1700MHz, busy: 1229mW, idle: 239mW}\n"
	"        - {freq: 1800MHz, busy: 1399mW, idle: 280mW}\n"
	"        - {freq: 1900MHz, busy: 1649mW, idle: 324mW}\n"
	"        - {freq: 2000MHz, busy: 1982mW, idle: 411mW}\n"
	"  accelerators:\n"
	"    - name: gpu0\n"
	"      kind: gpu\n"
	"      devfreq: 11800000.gpu\n"
	"      opps:\n"
	"        - {freq: 177MHz, busy: 350mW, idle: 60mW}\n"
	"        - {freq: 266MHz, busy: 480mW, idle: 70mW}\n"
	"        - {freq: 350MHz, busy: 620mW, idle: 80mW}\n"
	"        - {freq: 420MHz, busy: 760mW, idle: 90mW}\n"
	"        - {freq: 480MHz, busy: 900mW, idle: 100mW}\n"
	"        - {freq: 543MHz, busy: 1060mW, idle: 115mW}\n"
	"        - {freq: 600MHz, busy: 1250mW, idle: 130mW}\n"
	"    - {name: pl, kind: fpga, slots: 1, reconfig_time: 22664us, idle_power: 812mW, manager: fpga0}\n";

static pd_platform *load_source(const char *src_path, pd_ydoc *doc, pd_err *e)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = NULL;
	if (src_path) {
		p = pd_platform_load_file(src_path, &d);
	} else if (pd_yaml_load(doc, "<built-in twin platform>", default_yaml, strlen(default_yaml), &d) == 0) {
		const pd_ynode *v = doc->root ? pd_ymap_get(doc->root, "platform") : NULL;
		p = v ? pd_platform_from_node(v, &d) : NULL;
	}
	if (!p) {
		if (d.n)
			pd_diags_to_err(&d, e);
		else
			pd_err_set(e, PD_EXIT_USAGE, "%s: not a platform file", src_path ? src_path : "built-in platform");
	}
	pd_diags_free(&d);
	return p;
}

/* Chooses islands (indices into the source, capacity ascending) and cores per island. */
static size_t choose(const pd_platform *p, int n_cpus, size_t *pick, int *cores)
{
	size_t K = pd_platform_island_count(p), order[64], n = 0;
	if (K > 64)
		K = 64;
	for (size_t k = 0; k < K; k++) { /* insertion sort by capacity, stable */
		size_t i = k;
		while (i > 0 && pd_platform_island(p, order[i - 1])->capacity > pd_platform_island(p, k)->capacity) {
			order[i] = order[i - 1];
			i--;
		}
		order[i] = k;
	}
	size_t want = K < (size_t)n_cpus ? K : (size_t)n_cpus;
	bool used[64] = {false};
	/* slowest and fastest first, then the others in capacity order */
	size_t seq[64], ns = 0;
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

static void emit_islands(pd_yemit *y, const pd_platform *p, const size_t *pick, const int *cores, size_t n)
{
	int cpu = 0;
	pd_yemit_key(y, "islands");
	pd_yemit_seq_begin(y, false);
	for (size_t i = 0; i < n; i++) {
		const struct pd_island *isl = pd_platform_island(p, pick[i]);
		char policy[32];
		snprintf(policy, sizeof(policy), "policy%d", cpu);
		pd_yemit_map_begin(y, false);
		pd_yemit_kv_str(y, "name", isl->name);
		pd_yemit_key(y, "cpus");
		pd_yemit_seq_begin(y, true);
		for (int c = 0; c < cores[i]; c++)
			pd_yemit_int(y, cpu + c);
		pd_yemit_seq_end(y);
		pd_yemit_kv_double(y, "capacity", isl->capacity);
		pd_yemit_kv_str(y, "policy", policy);
		pd_platform_emit_opps(y, isl->opps, isl->n_opps);
		pd_yemit_map_end(y);
		cpu += cores[i];
	}
	pd_yemit_seq_end(y);
}

static void emit_accels(pd_yemit *y, const pd_platform *p)
{
	pd_yemit_key(y, "accelerators");
	pd_yemit_seq_begin(y, false);
	for (size_t i = 0; i < pd_platform_accel_count(p); i++) {
		const struct pd_accelerator *a = pd_platform_accel(p, i);
		pd_yemit_map_begin(y, false);
		pd_yemit_kv_str(y, "name", a->name);
		if (a->kind == PD_ACCEL_GPU) {
			pd_yemit_kv_str(y, "kind", "gpu");
			if (a->devfreq)
				pd_yemit_kv_str(y, "devfreq", a->devfreq);
			pd_platform_emit_opps(y, a->opps, a->n_opps);
		} else {
			char mgr[32];
			snprintf(mgr, sizeof(mgr), "fpga%zu", i);
			pd_yemit_kv_str(y, "kind", "fpga");
			pd_yemit_kv_int(y, "slots", a->slots);
			pd_yemit_kv_duration(y, "reconfig_time", a->reconfig_ns);
			pd_yemit_kv_power(y, "idle_power", a->idle_uw);
			pd_yemit_kv_str(y, "manager", a->manager ? a->manager : mgr);
		}
		pd_yemit_map_end(y);
	}
	pd_yemit_seq_end(y);
}

static void emit_sensor(pd_yemit *y, const char *uri, const char *name, const char *measures)
{
	char dev[160], rail[160];
	snprintf(dev, sizeof(dev), "ina226-%s", name);
	snprintf(rail, sizeof(rail), "VDD_%s", name);
	for (char *c = rail; *c; c++)
		*c = (char)(isalnum((unsigned char)*c) ? toupper((unsigned char)*c) : '_');
	pd_yemit_map_begin(y, true);
	pd_yemit_kv_str(y, "uri", uri);
	pd_yemit_kv_str(y, "device", dev);
	pd_yemit_kv_str(y, "channel", "power2");
	pd_yemit_kv_str(y, "rail", rail);
	pd_yemit_kv_str(y, "measures", measures);
	pd_yemit_kv_double(y, "scale", 0.001);
	pd_yemit_map_end(y);
}

static void emit_twin(pd_yemit *y, const pd_platform *p, const size_t *pick, const int *cores, size_t n,
		      const char *iio_uri, bool fair_server)
{
	const struct pd_dl *dl = pd_platform_dl(p);
	char name[200];
	snprintf(name, sizeof(name), "twin-%s", pd_platform_name(p));
	pd_yemit_map_begin(y, false);
	pd_yemit_key(y, "platform");
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "name", name);
	pd_yemit_kv_freq(y, "reference_frequency", pd_platform_ref_freq_khz(p));
	pd_yemit_kv_power(y, "base_power", pd_platform_base_uw(p));
	pd_yemit_key(y, "dl");
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_double(y, "max_util_per_cpu", dl->max_util_per_cpu);
	if (dl->has_fair_server && fair_server) {
		pd_yemit_key(y, "fair_server");
		pd_yemit_map_begin(y, true);
		pd_yemit_kv_duration(y, "runtime", dl->fair_runtime_ns);
		pd_yemit_kv_duration(y, "period", dl->fair_period_ns);
		pd_yemit_map_end(y);
	}
	pd_yemit_map_end(y);
	emit_islands(y, p, pick, cores, n);
	if (pd_platform_accel_count(p))
		emit_accels(y, p);
	pd_yemit_key(y, "sensors");
	pd_yemit_seq_begin(y, false);
	for (size_t i = 0; i < n; i++)
		emit_sensor(y, iio_uri, pd_platform_island(p, pick[i])->name, pd_platform_island(p, pick[i])->name);
	for (size_t i = 0; i < pd_platform_accel_count(p); i++)
		emit_sensor(y, iio_uri, pd_platform_accel(p, i)->name, pd_platform_accel(p, i)->name);
	emit_sensor(y, iio_uri, "board", "base"); /* the rest of the board: base_power */
	pd_yemit_seq_end(y);
	pd_yemit_map_end(y);
	pd_yemit_map_end(y);
}

int pd_twin_derive_platform(const char *src_path, int n_cpus, const char *iio_uri, pd_buf *yaml, pd_err *e)
{
	return pd_twin_derive_platform_kernel(src_path, n_cpus, iio_uri, true, yaml, e);
}

int pd_twin_derive_platform_kernel(const char *src_path, int n_cpus, const char *iio_uri, bool fair_server,
				   pd_buf *yaml, pd_err *e)
{
	if (n_cpus < 1 || n_cpus > TWIN_MAX_CPUS)
		return pd_err_set(e, PD_EXIT_USAGE, "twin: %d CPUs (1..%d supported)", n_cpus, TWIN_MAX_CPUS);
	pd_ydoc doc = {0};
	pd_platform *p = load_source(src_path, &doc, e);
	if (!p) {
		pd_yaml_free(&doc);
		return e ? e->code : PD_EXIT_USAGE;
	}
	size_t pick[64];
	int cores[64];
	size_t n = choose(p, n_cpus, pick, cores);
	pd_yemit *y = pd_yemit_new(yaml);
	int rc;
	if (!y) {
		rc = pd_err_set(e, PD_EXIT_ENV, "out of memory");
	} else {
		emit_twin(y, p, pick, cores, n, iio_uri, fair_server);
		rc = pd_yemit_finish(y, e) == 0 ? 0 : PD_EXIT_ENV;
	}
	pd_platform_free(p);
	pd_yaml_free(&doc);
	return rc;
}
