/* SPDX-License-Identifier: MIT */
/*
 * powerdag optimize - computes a deployment plan (pd_optimize) from a DAG file and a platform file.
 * Exit codes: 0 plan found (written with -o), 1 infeasible (with the reason), 2 bad usage / input.
 */
#include "cli/cli_impl.h"
#include "optimizer/pd_optimizer.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NAME "optimize"

static int parse_seconds(const char *s, double *out)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 1e6)
		return -1;
	*out = v;
	return 0;
}

/* A relative gap: a number in [0, 1), or a percentage such as "0.5%". */
static int parse_gap(const char *s, double *out)
{
	char *end = NULL;
	errno = 0;
	double v = strtod(s, &end);
	if (!errno && end != s && *end == '%' && !end[1])
		v /= 100.0, end++;
	if (errno || end == s || *end || !isfinite(v) || v < 0 || v >= 1)
		return -1;
	*out = v;
	return 0;
}

/* "3.5W", "800mW", or a bare number of watts, read as that many "W" by the exact, checked unit parser
 * (at most PD_MAX_POWER_UW; a double once turned 1e300 into a negative cap). */
static int parse_cap(const char *s, int64_t *uw)
{
	const char *why = NULL;
	char buf[64];
	size_t n = strlen(s);
	if (n > 0 && n + 2 <= sizeof(buf) && s[n - 1] >= '0' && s[n - 1] <= '9') {
		memcpy(buf, s, n);
		memcpy(buf + n, "W", 2);
		s = buf;
	}
	return pd_parse_power_uw(s, uw, &why);
}

static void print_json(const struct pd_opt_result *r, const struct pd_opt_params *p, const char *out)
{
	json_t *o = json_object();
	json_object_set_new(o, "status", json_string(pd_plan_status_name(r->status)));
	json_object_set_new(o, "objective", json_string(pd_plan_objective_name(p->objective)));
	json_object_set_new(o, "solver", json_string(r->solver));
	json_object_set_new(o, "solve_time_s", json_real(r->solve_time_s));
	if (r->status == PD_STATUS_INFEASIBLE) {
		json_object_set_new(o, "power_w", json_null());
		json_object_set_new(o, "lower_bound_w", json_null());
		json_object_set_new(o, "gap", json_null());
		json_object_set_new(o, "min_relative_slack", json_null());
		json_object_set_new(o, "explanation", json_string(r->explain));
	} else {
		json_object_set_new(o, "power_w", json_real(r->power_w));
		json_object_set_new(o, "lower_bound_w",
				    r->lower_bound_w >= 0 && isfinite(r->lower_bound_w) ? json_real(r->lower_bound_w) : json_null());
		json_object_set_new(o, "gap", r->gap >= 0 ? json_real(r->gap) : json_null());
		json_object_set_new(o, "min_relative_slack", json_real(r->min_relative_slack));
	}
	if (p->power_cap_uw >= 0)
		json_object_set_new(o, "power_cap_w", json_real((double)p->power_cap_uw * 1e-6));
	if (r->note[0])
		json_object_set_new(o, "note", json_string(r->note));
	json_object_set_new(o, "plan", out ? json_string(out) : json_null());
	char *txt = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10));
	if (txt)
		printf("%s\n", txt);
	free(txt);
	json_decref(o);
}

static void print_text(const struct pd_opt_result *r, const struct pd_opt_params *p, const char *out)
{
	if (r->status == PD_STATUS_INFEASIBLE) {
		printf("infeasible (%s, %.2f s): %s\n", r->solver, r->solve_time_s, r->explain);
		return;
	}
	printf("status      %s (%s, objective %s)\n", pd_plan_status_name(r->status), r->solver,
	       pd_plan_objective_name(p->objective));
	printf("power       %.6f W\n", r->power_w);
	if (r->lower_bound_w >= 0 && r->gap >= 0)
		printf("lower bound %.6f W (gap %.4f %%)\n", r->lower_bound_w, 100.0 * r->gap);
	printf("min slack   %.4f (relative)\n", r->min_relative_slack);
	printf("solve time  %.3f s\n", r->solve_time_s);
	if (out)
		printf("plan        %s\n", out);
}

static int load_inputs(const char *dpath, const char *ppath, pd_plan **plan)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *dags = pd_dags_load_file(dpath, &d);
	pd_platform *plat = pd_platform_load_file(ppath, &d);
	if (!dags || !plat || d.n) {
		pd_diags_print(&d, stderr);
		pd_diags_free(&d);
		pd_dags_free(dags);
		pd_platform_free(plat);
		return PD_EXIT_USAGE;
	}
	pd_diags_free(&d);
	*plan = pd_plan_new(dags, plat);
	if (!*plan) {
		pd_dags_free(dags);
		pd_platform_free(plat);
		return pd_cli_fail(NAME, PD_EXIT_ENV, "out of memory");
	}
	return 0;
}

static int parse_opts(int argc, char **argv, struct pd_opt_params *p, const char **out, bool *json)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'},     {"objective", required_argument, NULL, 'O'},
		{"power-cap", required_argument, NULL, 'c'},  {"solver", required_argument, NULL, 's'},
		{"backend", required_argument, NULL, 'b'},    {"time-limit", required_argument, NULL, 't'},
		{"gap", required_argument, NULL, 'g'},        {"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0},
	};
	opterr = 0;
	optind = 1;
	int li = -1;
	for (int c; (c = getopt_long(argc, argv, ":o:", opts, &li)) != -1; li = -1) {
		bool bad = false;
		switch (c) {
		case 'o':
			*out = optarg;
			break;
		case 'O':
			bad = pd_plan_objective_parse(optarg, &p->objective) != 0;
			break;
		case 'c':
			bad = parse_cap(optarg, &p->power_cap_uw) != 0 || p->power_cap_uw <= 0;
			break;
		case 's':
			bad = pd_opt_solver_parse(optarg, &p->solver) != 0;
			break;
		case 'b':
			bad = pd_opt_backend_parse(optarg, &p->backend) != 0;
			break;
		case 't':
			bad = parse_seconds(optarg, &p->time_limit_s) != 0;
			break;
		case 'g':
			bad = parse_gap(optarg, &p->gap) != 0;
			break;
		case 'j':
			*json = true;
			break;
		case ':':
			return pd_cli_fail(NAME, PD_EXIT_USAGE, "option '%s' needs a value (see --help)", argv[optind - 1]);
		default:
			return pd_cli_fail(NAME, PD_EXIT_USAGE, "unknown option '%s' (see --help)", argv[optind - 1]);
		}
		if (bad)
			return pd_cli_bad_value(NAME, opts, li, c, optarg);
	}
	if (argc - optind != 2)
		return pd_cli_fail(NAME, PD_EXIT_USAGE, "expects DAGS and PLATFORM files (see --help)");
	if (p->objective == PD_OBJ_SLACK && p->power_cap_uw < 0)
		return pd_cli_fail(NAME, PD_EXIT_USAGE, "--objective slack needs --power-cap W");
	if (p->backend == PD_BACKEND_CBC && !pd_opt_have_cbc())
		return pd_cli_fail(NAME, PD_EXIT_USAGE, "--backend cbc: this build has no CBC (coinor-libcbc-dev)");
	return 0;
}

static int run(int argc, char **argv)
{
	struct pd_opt_params p;
	const char *out = NULL;
	bool json = false;
	pd_opt_defaults(&p);
	/* --time-limit is the user's wall-clock budget for the command: its clock starts before the
	 * inputs are parsed (a 120-task set and its platform take tens of ms, more on a loaded machine) */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	p.started_s = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
	int rc = parse_opts(argc, argv, &p, &out, &json);
	if (rc)
		return rc;
	pd_plan *plan = NULL;
	rc = load_inputs(argv[optind], argv[optind + 1], &plan);
	if (rc)
		return rc;
	struct pd_opt_result r;
	pd_err e = {0};
	rc = pd_optimize(plan, &p, &r, &e);
	if (rc && rc != PD_EXIT_FAIL) {
		pd_plan_free(plan);
		return pd_cli_fail(NAME, rc, "%s", e.msg);
	}
	if (rc == 0) {
		char why[512];
		/* belt and braces: the plan as it will be written passes the optimizer's own evaluator */
		if (!pd_opt_verify_plan(plan, NULL, NULL, why, sizeof(why))) {
			pd_plan_free(plan);
			return pd_cli_fail(NAME, PD_EXIT_ENV, "internal error, the plan fails its own check: %s", why);
		}
		if (out && pd_plan_write_file(plan, out, &e)) {
			pd_plan_free(plan);
			return pd_cli_fail(NAME, e.code ? e.code : PD_EXIT_ENV, "%s", e.msg);
		}
	}
	if (json)
		print_json(&r, &p, rc == 0 ? out : NULL);
	else
		print_text(&r, &p, rc == 0 ? out : NULL);
	if (rc == PD_EXIT_FAIL && !json)
		fprintf(stderr, "powerdag optimize: infeasible: %s\n", r.explain);
	if (r.note[0])
		fprintf(stderr, "powerdag optimize: warning: %s\n", r.note);
	pd_plan_free(plan);
	return rc;
}

const struct pd_cmd pd_cmd_optimize = {
	"optimize",
	run,
	"compute a power-minimal deployment plan (MILP + heuristic)",
	"optimize DAGS PLATFORM [-o PLAN] [--objective power|slack|balanced] [--power-cap W]\n"
	"                [--solver exact|heuristic|auto] [--backend auto|glpk|cbc] [--time-limit S] [--gap G]\n"
	"                [--json]\n\n"
	"  -o, --output PLAN   write the plan (atomically); nothing is written unless a plan is found\n"
	"  --objective OBJ     power (default): minimise average power;\n"
	"                      slack: maximise the minimum relative slack subject to --power-cap;\n"
	"                      balanced: minimise power, then maximise slack within 1 % of it\n"
	"  --power-cap W       power budget for --objective slack (e.g. 3.5W, 800mW; a bare number\n"
	"                      is watts), at most 1000000W\n"
	"  --solver S          exact: heuristic warm start, a relaxation per OPP vector, branch and bound\n"
	"                      with exact core packing, MILPs with lazy cuts (proves optimality within\n"
	"                      --gap, or a certified gap); heuristic: fast, with a valid lower bound;\n"
	"                      auto (default): exact up to 60 tasks or with --time-limit >= 2 s,\n"
	"                      heuristic otherwise\n"
	"  --backend B         auto (default): GLPK and CBC at once (two processes, best plan and\n"
	"                      bound kept) for the exact power search when CBC is built in, two CPUs\n"
	"                      are online and the platform has at most 16 OPP vectors (e.g. ZCU102);\n"
	"                      else, up to 30 tasks on two CPUs, two GLPK searches at once (each\n"
	"                      prunes at the better plan of both); above 30 tasks on two CPUs on\n"
	"                      platforms with identical islands (Xavier), GLPK's search beside a\n"
	"                      bound over all OPP vectors at once (the larger bound kept; both\n"
	"                      then search plans where that bound's LP points); else GLPK;\n"
	"                      glpk or cbc: that one only\n"
	"  --time-limit S      wall-clock limit in seconds for the whole command, reading the inputs\n"
	"                      included (default 60), hard: the searches run in a child process\n"
	"                      that is stopped before the limit; whatever a solver library\n"
	"                      does (error, crash), the best plan found so far is returned with its\n"
	"                      certified gap (and a warning saying what happened)\n"
	"  --gap G             optimality tolerance, relative (1e-4, default) or in percent (0.5%):\n"
	"                      the exact search stops once no plan can be more than G cheaper, and\n"
	"                      the status is then optimal; 0: as exact as the arithmetic allows\n"
	"  --json              one JSON object: status, objective, power_w, lower_bound_w, gap,\n"
	"                      min_relative_slack, solve_time_s, solver\n\n"
	"exit: 0 plan found, 1 infeasible (the reason names the DAG path or resource), 2 bad input"};
