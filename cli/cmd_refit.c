/* SPDX-License-Identifier: MIT */
/*
 * powerdag refit RUNDIR... -o OUT [--what wcet|power|background] [--quantile Q] [--margin M] [--allow-below-max]
 *                [--min-samples N] [--window DUR] [--min-spread U] [--json]
 *
 * A thin layer over reports/pd_reports.h: the explanation of the fit goes to stderr (or, with --json,
 * one JSON object to stdout); OUT is written atomically, and not at all on bad input (exit 2).
 */
#include "cli/cli_impl.h"
#include "reports/pd_reports.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"refit RUNDIR... -o OUT [--what wcet|power|background] [--quantile Q] [--margin M] [--allow-below-max]\n"
	"        [--min-samples N] [--window DUR] [--min-spread U] [--json]\n\n"
	"  RUNDIR...          run directories written by `powerdag deploy` (plan.yaml + run.pdlog), all of\n"
	"                     one DAG set and one platform\n"
	"  -o, --out OUT      the file to write: a DAG set (--what wcet) or a platform (power, background)\n"
	"  --what WHAT        wcet (default): new WCETs from the measured job execution times;\n"
	"                     power: busy/idle power per island and OPP (and base power) from the measured\n"
	"                     rails at the measured busy fractions, and each island's background_util;\n"
	"                     background: only each island's background_util (the CPU time of software\n"
	"                     beside the plan: the agent's sampler, iiod, sshd), the power table kept;\n"
	"                     every other entry is kept\n"
	"  --quantile Q       wcet: quantile of the samples, in (0, 1] (default 0.999, nearest rank)\n"
	"  --margin M         wcet: factor on the quantile, 6 decimals (default 1.1)\n"
	"  --allow-below-max  wcet: let quantile x margin fall below the largest sample (default: never)\n"
	"  --min-samples N    fewer samples per task (wcet, default 20) or windows per island and OPP\n"
	"                     (power, default 3) is an error\n"
	"  --window DUR       power: observation window (default 1s)\n"
	"  --min-spread U     power: busy-fraction spread (cores) above which busy and idle power are\n"
	"                     fitted separately; below it both are scaled by one factor (default 0.1)\n"
	"  --json             print the fit as one JSON object on stdout (the text goes to stderr)\n\n"
	"The WCETs are taken back to the reference frequency and capacity 1.0 through the inverse of the\n"
	"WCET law (docs/MODEL.md). A truncated run (agent killed) is used for its complete records. Bad\n"
	"input (missing run directory or run log, runs of different DAG sets or platforms, too few\n"
	"samples): exit 2, nothing written. Details: docs/REFIT.md.";

struct opts {
	struct pd_report_refit_opts r;
	const char *out;
	bool json;
};

static int number(const char *s, double *v)
{
	char *end;
	*v = strtod(s, &end);
	return *s && !*end ? 0 : -1;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"out", required_argument, NULL, 'o'},	     {"what", required_argument, NULL, 'w'},
		{"quantile", required_argument, NULL, 'q'},  {"margin", required_argument, NULL, 'm'},
		{"allow-below-max", no_argument, NULL, 'a'}, {"min-samples", required_argument, NULL, 'n'},
		{"window", required_argument, NULL, 'W'},    {"min-spread", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},	     {NULL, 0, NULL, 0}};
	int c, li = -1;
	double v;
	const char *why;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:", lo, &li)) != -1) {
		switch (c) {
		case 'o': o->out = optarg; break;
		case 'w':
			if (strcmp(optarg, "wcet") == 0)
				o->r.what = PD_REPORT_REFIT_WCET;
			else if (strcmp(optarg, "power") == 0)
				o->r.what = PD_REPORT_REFIT_POWER;
			else if (strcmp(optarg, "background") == 0)
				o->r.what = PD_REPORT_REFIT_BACKGROUND;
			else
				return pd_cli_bad_value("refit", lo, li, c, optarg);
			break;
		case 'q':
			if (number(optarg, &o->r.quantile) || !(o->r.quantile > 0 && o->r.quantile <= 1))
				return pd_cli_bad_value("refit", lo, li, c, optarg);
			break;
		case 'm':
			if (number(optarg, &o->r.margin) || !(o->r.margin >= 1e-3 && o->r.margin <= 1000))
				return pd_cli_bad_value("refit", lo, li, c, optarg);
			break;
		case 'a': o->r.allow_below_max = true; break;
		case 'n':
			if (number(optarg, &v) || v < 1 || v > 1e9 || v != (double)(size_t)v)
				return pd_cli_bad_value("refit", lo, li, c, optarg);
			o->r.min_samples = (size_t)v;
			break;
		case 'W':
			if (pd_parse_duration_ns(optarg, &o->r.window_ns, &why) || o->r.window_ns < PD_NS_PER_MS)
				return pd_cli_bad_value("refit", lo, li, c, optarg);
			break;
		case 's':
			if (number(optarg, &o->r.min_spread) || !(o->r.min_spread >= 0))
				return pd_cli_bad_value("refit", lo, li, c, optarg);
			break;
		case 'j': o->json = true; break;
		default:
			return pd_cli_fail("refit", PD_EXIT_USAGE, "unknown or incomplete option '%s' (see --help)",
					   argv[optind - 1]);
		}
		li = -1;
	}
	if (optind >= argc)
		return pd_cli_fail("refit", PD_EXIT_USAGE, "expected at least one RUNDIR (see --help)");
	if (!o->out)
		return pd_cli_fail("refit", PD_EXIT_USAGE, "-o OUT is required (see --help)");
	return 0;
}

static int run(int argc, char **argv)
{
	struct opts o = {0};
	pd_report_refit_defaults(&o.r);
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc;
	pd_buf text, json;
	pd_buf_init(&text);
	pd_buf_init(&json);
	pd_err e = {0};
	rc = pd_report_refit_run((const char *const *)argv + optind, (size_t)(argc - optind), &o.r, o.out, &text,
			  o.json ? &json : NULL, &e);
	if (text.len)
		fwrite(text.data, 1, text.len, stderr);
	if (rc)
		rc = pd_cli_fail("refit", rc, "%s", e.msg);
	else if (o.json && json.len && fwrite(json.data, 1, json.len, stdout) != json.len)
		rc = pd_cli_fail("refit", PD_EXIT_ENV, "cannot write stdout");
	pd_buf_free(&text);
	pd_buf_free(&json);
	return rc;
}

const struct pd_cmd pd_cmd_refit = {"refit", run,
				    "new WCETs or power-table corrections from measured runs (closes the loop)", usage};
