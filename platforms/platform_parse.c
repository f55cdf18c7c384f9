/* SPDX-License-Identifier: MIT */
/*
 * The platform parser (docs/FORMATS.md section 3). It reads the value of the "platform:" key field by field, records
 * every problem it finds with the file:line:col of the offending node (never stopping at the first),
 * then checks the cross-field invariants listed in pd_platform.h. Only a platform without a single
 * diagnostic is returned; everything else is freed here.
 */
#include "platforms/platform_impl.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Parser state: the platform under construction and the diagnostics sink. */
struct pp {
	pd_platform *p;
	pd_diags *d;
	const char *src_file; /* the document's file name: diagnostics must outlive a failed model */
};

/* A model location turned into a diagnostic location (the model's copy of the name dies with it). */
static struct pd_loc diag_loc(const struct pp *s, struct pd_loc l)
{
	l.file = s->src_file;
	return l;
}

static struct pd_loc here(struct pp *s, const pd_ynode *n)
{
	struct pd_loc l = n ? n->loc : (struct pd_loc){0};
	l.file = s->p->file;
	return l;
}

static const char *dup(struct pp *s, const char *str)
{
	return str ? pd_arena_strdup(s->p->arena, str) : NULL;
}

static void oom(struct pp *s, const pd_ynode *n)
{
	pd_diags_add(s->d, n ? n->loc : (struct pd_loc){0}, "out of memory");
}

/* A sequence value of key (NULL when absent or not a sequence; diagnostic recorded when required
 * or of the wrong kind). */
static const pd_ynode *get_seq(struct pp *s, const pd_ynode *map, const char *key, bool required)
{
	const pd_ynode *v = pd_ymap_get(map, key);
	if (!v) {
		if (required)
			pd_diags_add(s->d, map->loc, "missing required key '%s'", key);
		return NULL;
	}
	return pd_ynode_expect(v, PD_Y_SEQ, key, s->d) ? v : NULL;
}

/* ------------------------------------------------------------------ names */

/* Island, accelerator and rail names appear in plan placements ("fpga:pl/0"), report columns and
 * thread names: letters, digits, '_', '-', '.' only. */
static bool plain_name(const char *v)
{
	if (strlen(v) > PD_PLATFORM_MAX_NAME)
		return false;
	for (; *v; v++)
		if (!(isalnum((unsigned char)*v) || *v == '_' || *v == '-' || *v == '.'))
			return false;
	return true;
}

/* policy, devfreq and manager become one component of a sysfs path on the board: never a path of
 * their own (no '/', no leading '.', no spaces or control characters). */
static bool path_component(const char *v)
{
	if (v[0] == '.' || strlen(v) > PD_PLATFORM_MAX_COMPONENT)
		return false;
	for (; *v; v++)
		if (*v == '/' || (unsigned char)*v <= ' ' || *v == 0x7f)
			return false;
	return true;
}

/* Reads an optional or required string key that must satisfy ok(); copies it into the model. */
static const char *get_checked(struct pp *s, const pd_ynode *map, const char *key, bool required,
			       bool (*ok)(const char *), const char *rule)
{
	const char *v = NULL;
	if (pd_yget_str(map, key, required, &v, s->d) != 1)
		return NULL;
	if (!ok(v)) {
		pd_diags_add(s->d, pd_ymap_get(map, key)->loc, "'%s' '%.80s' %s", key, v, rule);
		return NULL;
	}
	return dup(s, v);
}

#define STR_(x) #x
#define STR(x) STR_(x)
static const char *const NAME_RULE = "must be at most " STR(PD_PLATFORM_MAX_NAME) " letters, digits, '_', '-' or '.'";
static const char *const COMPONENT_RULE = "must be a plain file name (no '/', spaces or leading '.')";

/* ------------------------------------------------------------------ OPP tables */

static const char *const opp_keys[] = {"freq", "busy", "idle", NULL};

/* Parses one OPP record; returns true when all three fields are valid. */
static bool parse_opp(struct pp *s, const pd_ynode *n, const char *owner, struct pd_opp *o)
{
	if (!pd_ynode_expect(n, PD_Y_MAP, "opps item", s->d))
		return false;
	pd_ymap_check_keys(n, opp_keys, "an OPP", s->d);
	bool ok = pd_yget_freq(n, "freq", true, &o->freq_khz, s->d) == 1;
	ok &= pd_yget_power(n, "busy", true, &o->busy_uw, s->d) == 1;
	ok &= pd_yget_power(n, "idle", true, &o->idle_uw, s->d) == 1;
	o->loc = here(s, n);
	/* A core draws at least its idle power while it executes: busy - idle is the utilisation-
	 * proportional part of the power model and must not be negative. */
	if (ok && o->busy_uw < o->idle_uw) {
		pd_diags_add(s->d, n->loc, "%s: OPP busy power must be >= idle power", owner);
		ok = false;
	}
	return ok;
}

/* Parses an "opps" sequence: >= 1 entry, strictly increasing frequency. */
static void parse_opps(struct pp *s, const pd_ynode *map, const char *owner, struct pd_opp **out, size_t *n_out)
{
	const pd_ynode *seq = get_seq(s, map, "opps", true);
	if (!seq)
		return;
	if (seq->n == 0) {
		pd_diags_add(s->d, seq->loc, "%s: 'opps' must list at least one operating point", owner);
		return;
	}
	struct pd_opp *v = pd_arena_calloc(s->p->arena, seq->n, sizeof(*v));
	if (!v)
		return oom(s, seq);
	int64_t prev = -1;
	for (size_t i = 0; i < seq->n; i++) {
		if (!parse_opp(s, seq->items[i], owner, &v[i]))
			continue;
		/* Sorted tables let the optimizer, the deployer and the twin index OPPs by position and
		 * take the last one as the top OPP (latencies in DAG files are given there). */
		if (v[i].freq_khz <= prev)
			pd_diags_add(s->d, seq->items[i]->loc,
				     "%s: OPP frequencies must be strictly increasing (%lld kHz after %lld kHz)", owner,
				     (long long)v[i].freq_khz, (long long)prev);
		prev = v[i].freq_khz;
	}
	*out = v;
	*n_out = seq->n;
}

/* ------------------------------------------------------------------ dl */

static const char *const dl_keys[] = {"max_util_per_cpu", "fair_server", "job_overhead", "budget_margin", NULL};
static const char *const fair_keys[] = {"runtime", "period", NULL};

static void parse_fair_server(struct pp *s, const pd_ynode *fs)
{
	struct pd_dl *dl = &s->p->dl;
	if (!pd_ynode_expect(fs, PD_Y_MAP, "fair_server", s->d))
		return;
	pd_ymap_check_keys(fs, fair_keys, "fair_server", s->d);
	bool ok = pd_yget_duration(fs, "runtime", true, false, &dl->fair_runtime_ns, s->d) == 1;
	ok &= pd_yget_duration(fs, "period", true, false, &dl->fair_period_ns, s->d) == 1;
	if (!ok)
		return;
	if (dl->fair_runtime_ns >= dl->fair_period_ns) {
		pd_diags_add(s->d, fs->loc, "fair_server: runtime must be smaller than period");
		return;
	}
	dl->has_fair_server = true;
}

/* job_overhead (dl or island): a duration >= 0 (0 is allowed: a board measured to charge nothing
 * beyond the work, or a user who accounts for it in the WCETs), bounded so that a unit mistake
 * ("100ms" for "100us") is caught instead of silently eating the cores. */
static void parse_job_overhead(struct pp *s, const pd_ynode *map, bool *has, int64_t *ns)
{
	int64_t v = 0;
	if (pd_yget_duration(map, "job_overhead", false, true, &v, s->d) != 1)
		return;
	if (v > PD_JOB_OVERHEAD_MAX_NS) {
		char b[40];
		pd_diags_add(s->d, pd_ymap_get(map, "job_overhead")->loc, "'job_overhead' must be at most %s",
			     pd_fmt_duration(PD_JOB_OVERHEAD_MAX_NS, b, sizeof(b)));
		return;
	}
	*has = true;
	*ns = v;
}

/* budget_margin: a fraction 0 <= m < 1 with at most 6 decimal places (the budget law uses it
 * exactly as millionths, like capacity). */
static void parse_budget_margin(struct pp *s, const pd_ynode *dln)
{
	struct pd_dl *dl = &s->p->dl;
	double m = 0.0;
	if (pd_yget_double(dln, "budget_margin", false, 0.0, 1.0, &m, s->d) != 1)
		return;
	const pd_ynode *v = pd_ymap_get(dln, "budget_margin");
	double micro = m * (double)PD_CAPACITY_SCALE;
	if (m >= 1.0)
		pd_diags_add(s->d, v->loc, "'budget_margin' must be < 1 (a fraction: 0.05 = +5 %%)");
	else if (fabs(micro - nearbyint(micro)) > 1e-6 * fmax(1.0, micro))
		pd_diags_add(s->d, v->loc, "'budget_margin' must have at most 6 decimal places");
	else {
		dl->has_budget_margin = true;
		dl->budget_margin = m;
	}
}

static void parse_dl(struct pp *s, const pd_ynode *map)
{
	struct pd_dl *dl = &s->p->dl;
	const pd_ynode *n = pd_ymap_get(map, "dl");
	dl->max_util_per_cpu = 0.95; /* the kernel default: sched_rt_runtime_us 950000 / period 1000000 */
	if (!n || !pd_ynode_expect(n, PD_Y_MAP, "dl", s->d))
		return;
	pd_ymap_check_keys(n, dl_keys, "dl", s->d);
	if (pd_yget_double(n, "max_util_per_cpu", false, 0.0, 1.0, &dl->max_util_per_cpu, s->d) == 1 &&
	    dl->max_util_per_cpu <= 0.0)
		pd_diags_add(s->d, pd_ymap_get(n, "max_util_per_cpu")->loc, "'max_util_per_cpu' must be > 0");
	const pd_ynode *fs = pd_ymap_get(n, "fair_server");
	if (fs)
		parse_fair_server(s, fs);
	parse_job_overhead(s, n, &dl->has_job_overhead, &dl->job_overhead_ns);
	parse_budget_margin(s, n);
	/* The fair server reserves runtime/period of every CPU ahead of SCHED_DEADLINE tasks: what is
	 * left per core must stay positive or no task could ever be admitted. */
	if (dl->has_fair_server && pd_platform_core_capacity(s->p) <= 0.0) {
		char a[32], b[32];
		pd_diags_add(s->d, fs->loc, "fair_server share %s leaves no capacity under max_util_per_cpu %s",
			     pd_fmt_double((double)dl->fair_runtime_ns / (double)dl->fair_period_ns, a, sizeof(a)),
			     pd_fmt_double(dl->max_util_per_cpu, b, sizeof(b)));
	}
}

/* ------------------------------------------------------------------ islands */

static const char *const island_keys[] = {"name", "cpus", "capacity", "opps", "policy", "job_overhead", "background_util", NULL};

static void parse_cpus(struct pp *s, const pd_ynode *isl, struct pd_island *k)
{
	const pd_ynode *seq = get_seq(s, isl, "cpus", true);
	if (!seq)
		return;
	if (seq->n == 0) {
		pd_diags_add(s->d, seq->loc, "island '%s': 'cpus' must list at least one CPU", k->name);
		return;
	}
	int *cpus = pd_arena_calloc(s->p->arena, seq->n, sizeof(int));
	if (!cpus)
		return oom(s, seq);
	size_t n = 0;
	for (size_t i = 0; i < seq->n; i++) {
		int64_t c;
		if (pd_ynode_int(seq->items[i], "cpus item", 0, PD_PLATFORM_MAX_CPU, &c, s->d) == 1)
			cpus[n++] = (int)c;
	}
	k->cpus = cpus;
	k->n_cpus = n;
}

/* kappa is read as a decimal with at most 6 places, so that the WCET law can use it exactly as an
 * integer count of millionths (power.c) and no binary rounding of "0.3" ever shortens a WCET. */
static void parse_capacity(struct pp *s, const pd_ynode *isl, struct pd_island *k)
{
	k->capacity = 1.0;
	if (pd_yget_double(isl, "capacity", false, 0.0, 16.0, &k->capacity, s->d) != 1)
		return;
	const pd_ynode *v = pd_ymap_get(isl, "capacity");
	double micro = k->capacity * (double)PD_CAPACITY_SCALE;
	if (k->capacity <= 0.0)
		pd_diags_add(s->d, v->loc, "'capacity' must be > 0");
	else if (fabs(micro - nearbyint(micro)) > 1e-6 * fmax(1.0, micro))
		pd_diags_add(s->d, v->loc, "'capacity' must have at most 6 decimal places");
}

/* background_util: cores' worth, 0 <= b <= the island's CPUs, at most 6 decimal places (as capacity:
 * a platform file round-trips exactly). */
static void parse_background(struct pp *s, const pd_ynode *isl, struct pd_island *k)
{
	if (pd_yget_double(isl, "background_util", false, 0.0, (double)PD_PLATFORM_MAX_CPU, &k->background_util, s->d) != 1)
		return;
	const pd_ynode *v = pd_ymap_get(isl, "background_util");
	double micro = k->background_util * (double)PD_CAPACITY_SCALE;
	if (k->n_cpus > 0 && k->background_util > (double)k->n_cpus)
		pd_diags_add(s->d, v->loc, "island '%s': 'background_util' %g exceeds its %zu CPUs (it is in cores' worth)",
			     k->name, k->background_util, k->n_cpus);
	else if (fabs(micro - nearbyint(micro)) > 1e-6 * fmax(1.0, micro))
		pd_diags_add(s->d, v->loc, "'background_util' must have at most 6 decimal places");
}

static void parse_island(struct pp *s, const pd_ynode *n, struct pd_island *k)
{
	k->loc = here(s, n);
	k->name = "?"; /* names are compared by the cross checks even when the item is broken */
	if (!pd_ynode_expect(n, PD_Y_MAP, "islands item", s->d))
		return;
	pd_ymap_check_keys(n, island_keys, "an island", s->d);
	const char *name = get_checked(s, n, "name", true, plain_name, NAME_RULE), *policy;
	k->name = name ? name : "?";
	parse_cpus(s, n, k);
	parse_capacity(s, n, k);
	parse_job_overhead(s, n, &k->has_job_overhead, &k->job_overhead_ns);
	parse_background(s, n, k);
	char owner[160];
	snprintf(owner, sizeof(owner), "island '%s'", k->name);
	parse_opps(s, n, owner, &k->opps, &k->n_opps);
	if (pd_ymap_get(n, "policy"))
		k->policy = (policy = get_checked(s, n, "policy", false, path_component, COMPONENT_RULE)) ? policy : "?";
	else if (k->n_cpus > 0)
		k->policy = pd_arena_printf(s->p->arena, "policy%d", k->cpus[0]);
	else
		k->policy = dup(s, "policy0");
}

static void parse_islands(struct pp *s, const pd_ynode *map)
{
	const pd_ynode *seq = get_seq(s, map, "islands", true);
	if (!seq)
		return;
	if (seq->n == 0) {
		pd_diags_add(s->d, seq->loc, "'islands' must list at least one CPU island");
		return;
	}
	s->p->islands = pd_arena_calloc(s->p->arena, seq->n, sizeof(struct pd_island));
	if (!s->p->islands)
		return oom(s, seq);
	s->p->n_islands = seq->n;
	for (size_t i = 0; i < seq->n; i++)
		parse_island(s, seq->items[i], &s->p->islands[i]);
}

/* ------------------------------------------------------------------ accelerators */

static const char *const accel_keys[] = {"name",	  "kind",	"devfreq", "opps",
					 "slots", "reconfig_time", "idle_power", "manager", NULL};
static const char *const gpu_only[] = {"devfreq", "opps", NULL};
static const char *const fpga_only[] = {"slots", "reconfig_time", "idle_power", "manager", NULL};

/* Keys of the other kind are errors, not silently ignored: a "slots" on a GPU is a typo or a
 * misunderstanding the user must hear about. */
static void refuse_keys(struct pp *s, const pd_ynode *n, const char *const *keys, const char *kind)
{
	for (const char *const *k = keys; *k; k++) {
		for (size_t i = 0; i < n->n; i++)
			if (strcmp(n->items[2 * i]->str, *k) == 0)
				pd_diags_add(s->d, n->items[2 * i]->loc, "'%s' does not apply to a %s accelerator", *k,
					     kind);
	}
}

static void parse_gpu(struct pp *s, const pd_ynode *n, struct pd_accelerator *a)
{
	refuse_keys(s, n, fpga_only, "gpu");
	a->devfreq = get_checked(s, n, "devfreq", false, path_component, COMPONENT_RULE);
	char owner[160];
	snprintf(owner, sizeof(owner), "accelerator '%s'", a->name);
	parse_opps(s, n, owner, &a->opps, &a->n_opps);
}

static void parse_fpga(struct pp *s, const pd_ynode *n, struct pd_accelerator *a)
{
	int64_t slots = 0;
	refuse_keys(s, n, gpu_only, "fpga");
	if (pd_yget_int(n, "slots", true, 1, PD_PLATFORM_MAX_SLOTS, &slots, s->d) == 1)
		a->slots = (int)slots;
	pd_yget_duration(n, "reconfig_time", true, true, &a->reconfig_ns, s->d);
	pd_yget_power(n, "idle_power", false, &a->idle_uw, s->d);
	a->manager = get_checked(s, n, "manager", false, path_component, COMPONENT_RULE);
}

static void parse_accel(struct pp *s, const pd_ynode *n, struct pd_accelerator *a)
{
	const char *name, *kind = NULL;
	a->loc = here(s, n);
	a->name = "?";
	if (!pd_ynode_expect(n, PD_Y_MAP, "accelerators item", s->d))
		return;
	pd_ymap_check_keys(n, accel_keys, "an accelerator", s->d);
	if ((name = get_checked(s, n, "name", true, plain_name, NAME_RULE)))
		a->name = name;
	if (pd_yget_str(n, "kind", true, &kind, s->d) != 1)
		return;
	if (strcmp(kind, "gpu") == 0) {
		a->kind = PD_ACCEL_GPU;
		parse_gpu(s, n, a);
	} else if (strcmp(kind, "fpga") == 0) {
		a->kind = PD_ACCEL_FPGA;
		parse_fpga(s, n, a);
	} else {
		pd_diags_add(s->d, pd_ymap_get(n, "kind")->loc, "'kind': unknown accelerator kind '%.40s' (gpu or fpga)",
			     kind);
	}
}

static void parse_accels(struct pp *s, const pd_ynode *map)
{
	const pd_ynode *seq = get_seq(s, map, "accelerators", false);
	if (!seq || seq->n == 0)
		return;
	s->p->accels = pd_arena_calloc(s->p->arena, seq->n, sizeof(struct pd_accelerator));
	if (!s->p->accels)
		return oom(s, seq);
	s->p->n_accels = seq->n;
	for (size_t i = 0; i < seq->n; i++)
		parse_accel(s, seq->items[i], &s->p->accels[i]);
}

/* ------------------------------------------------------------------ sensors */

static const char *const sensor_keys[] = {"uri", "device", "channel", "rail", "measures", "scale", NULL};

static void parse_sensor(struct pp *s, const pd_ynode *n, struct pd_sensor *x)
{
	const char *uri = "local:", *device = NULL, *channel = NULL, *rail = NULL, *measures = "board";
	x->loc = here(s, n);
	x->rail = "?";
	if (!pd_ynode_expect(n, PD_Y_MAP, "sensors item", s->d))
		return;
	pd_ymap_check_keys(n, sensor_keys, "a sensor", s->d);
	pd_yget_str(n, "uri", false, &uri, s->d);
	pd_yget_str(n, "device", true, &device, s->d);
	pd_yget_str(n, "channel", true, &channel, s->d);
	rail = get_checked(s, n, "rail", true, plain_name, NAME_RULE);
	pd_yget_str(n, "measures", false, &measures, s->d);
	/* IIO power channels are in mW after the channel's own scale: 0.001 turns them into W. */
	x->scale = 0.001;
	if (pd_yget_double(n, "scale", false, 0.0, 1e9, &x->scale, s->d) == 1 && x->scale <= 0.0)
		pd_diags_add(s->d, pd_ymap_get(n, "scale")->loc, "'scale' must be > 0");
	x->uri = dup(s, uri);
	x->device = dup(s, device ? device : "?");
	x->channel = dup(s, channel ? channel : "?");
	x->rail = dup(s, rail ? rail : "?");
	x->measures = dup(s, measures);
}

static void parse_sensors(struct pp *s, const pd_ynode *map)
{
	const pd_ynode *seq = get_seq(s, map, "sensors", false);
	if (!seq || seq->n == 0)
		return;
	s->p->sensors = pd_arena_calloc(s->p->arena, seq->n, sizeof(struct pd_sensor));
	if (!s->p->sensors)
		return oom(s, seq);
	s->p->n_sensors = seq->n;
	for (size_t i = 0; i < seq->n; i++)
		parse_sensor(s, seq->items[i], &s->p->sensors[i]);
}

/* ------------------------------------------------------------------ cross-field invariants */

/* Islands and accelerators share one namespace: a sensor's "measures" and a plan's placements name
 * either, so "gpu0" must mean one thing. */
static void check_unique_names(struct pp *s)
{
	const pd_platform *p = s->p;
	size_t n = p->n_islands + p->n_accels;
	for (size_t i = 0; i < n; i++) {
		const char *a = i < p->n_islands ? p->islands[i].name : p->accels[i - p->n_islands].name;
		struct pd_loc la = i < p->n_islands ? p->islands[i].loc : p->accels[i - p->n_islands].loc;
		for (size_t j = 0; j < i; j++) {
			const char *b = j < p->n_islands ? p->islands[j].name : p->accels[j - p->n_islands].name;
			struct pd_loc lb = j < p->n_islands ? p->islands[j].loc : p->accels[j - p->n_islands].loc;
			if (strcmp(a, "?") != 0 && strcmp(a, b) == 0) {
				pd_diags_add(s->d, diag_loc(s, la), "duplicate name '%s' (first at line %d)", a, lb.line);
				break;
			}
		}
	}
	for (size_t i = 0; i < p->n_sensors; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->sensors[i].rail, "?") != 0 && strcmp(p->sensors[i].rail, p->sensors[j].rail) == 0) {
				pd_diags_add(s->d, diag_loc(s, p->sensors[i].loc), "duplicate sensor rail '%s' (first at line %d)",
					     p->sensors[i].rail, p->sensors[j].loc.line);
				break;
			}
}

/* A CPU belongs to exactly one cpufreq policy, hence to one island. */
static void check_unique_cpus(struct pp *s)
{
	const pd_platform *p = s->p;
	for (size_t k = 0; k < p->n_islands; k++)
		for (size_t c = 0; c < p->islands[k].n_cpus; c++) {
			int cpu = p->islands[k].cpus[c];
			for (size_t k2 = 0; k2 <= k; k2++) {
				size_t lim = k2 == k ? c : p->islands[k2].n_cpus;
				bool dupl = false;
				for (size_t c2 = 0; c2 < lim && !dupl; c2++)
					dupl = p->islands[k2].cpus[c2] == cpu;
				if (dupl) {
					pd_diags_add(s->d, diag_loc(s, p->islands[k].loc), "CPU %d listed twice (island '%s' and '%s')",
						     cpu, p->islands[k2].name, p->islands[k].name);
					k2 = k; /* report once per occurrence */
				}
			}
		}
}

/* ------------------------------------------------------------------ entry points */

static const char *const platform_keys[] = {"name",	"reference_frequency", "base_power", "dl", "islands",
					    "accelerators", "sensors",		    "provenance", NULL};

pd_platform *pd_platform_from_node(const pd_ynode *map, pd_diags *d)
{
	size_t before = d->n + d->dropped;
	if (!map) {
		pd_diags_add(d, (struct pd_loc){0}, "missing platform description");
		return NULL;
	}
	if (!pd_ynode_expect(map, PD_Y_MAP, "platform", d))
		return NULL;
	pd_platform *p = calloc(1, sizeof(*p));
	if (!p || !(p->arena = pd_arena_new())) {
		free(p);
		pd_diags_add(d, map->loc, "out of memory");
		return NULL;
	}
	struct pp s = {p, d, map->loc.file};
	const char *name = NULL;
	p->file = dup(&s, map->loc.file ? map->loc.file : "<input>");
	p->loc = here(&s, map);
	pd_ymap_check_keys(map, platform_keys, "platform", d);
	pd_yget_str(map, "name", true, &name, d);
	p->name = dup(&s, name ? name : "?");
	pd_yget_freq(map, "reference_frequency", true, &p->ref_khz, d);
	pd_yget_power(map, "base_power", false, &p->base_uw, d);
	parse_dl(&s, map);
	parse_islands(&s, map);
	parse_accels(&s, map);
	parse_sensors(&s, map);
	platform_parse_provenance(p, map, d);
	check_unique_names(&s);
	check_unique_cpus(&s);
	if (d->n + d->dropped != before) {
		pd_platform_free(p);
		return NULL;
	}
	return p;
}

static const char *const file_keys[] = {"platform", NULL};

pd_platform *pd_platform_load_file(const char *path, pd_diags *d)
{
	pd_ydoc doc;
	size_t before = d->n;
	pd_platform *p = NULL;
	if (pd_yaml_load_file(&doc, path, d) == 0) {
		if (doc.root->kind != PD_Y_MAP || !pd_ymap_get(doc.root, "platform"))
			pd_diags_add(d, doc.root->loc, "not a platform file: expected a top-level 'platform:' key");
		else if (pd_ymap_check_keys(doc.root, file_keys, "a platform file", d) == 0)
			p = pd_platform_from_node(pd_ymap_get(doc.root, "platform"), d);
	}
	pd_diags_rebase(d, before, doc.file, path);
	pd_yaml_free(&doc);
	return p;
}
