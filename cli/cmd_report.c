/* SPDX-License-Identifier: MIT */
/*
 * powerdag report RUNDIR [--json] [--html FILE] [--csv DIR] [--perfetto FILE] [--fail-on-miss]
 *
 * Prints the summary (or, with --json, the JSON object) on stdout and writes the requested files. An
 * incomplete run (truncated log) is still reported, exit 0, with a warning on stderr. Exit codes:
 * 0 ok, 1 deadline misses with --fail-on-miss, 2 bad usage / missing run directory / unreadable
 * plan (nothing written), 3 cannot write an output.
 */
#include "cli/cli_impl.h"
#include "reports/pd_reports.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"report RUNDIR [--json] [--html FILE] [--csv DIR] [--perfetto FILE] [--fail-on-miss]\n\n"
	"  RUNDIR           a run directory written by `powerdag deploy` (plan.yaml, run.pdlog, ...)\n"
	"  --json           print the report as one JSON object instead of the text summary\n"
	"  --html FILE      write a self-contained HTML report (inline SVG plots)\n"
	"  --csv DIR        write instances.csv, power.csv, tasks.csv, jobs.csv into DIR\n"
	"  --perfetto FILE  write a Chrome/Perfetto trace (ui.perfetto.dev, chrome://tracing)\n"
	"  --fail-on-miss   exit 1 when the run missed a deadline\n\n"
	"A truncated run log (agent killed, board lost) gives a report of what was logged, marked\n"
	"incomplete, exit 0. Definitions of every number: docs/REPORTS.md.";

struct opts {
	bool json, fail_on_miss;
	const char *html, *csv, *perfetto, *rundir;
};

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {{"json", no_argument, NULL, 'j'},     {"html", required_argument, NULL, 'H'},
					   {"csv", required_argument, NULL, 'c'},    {"perfetto", required_argument, NULL, 'p'},
					   {"fail-on-miss", no_argument, NULL, 'f'}, {NULL, 0, NULL, 0}};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'j': o->json = true; break;
		case 'H': o->html = optarg; break;
		case 'c': o->csv = optarg; break;
		case 'p': o->perfetto = optarg; break;
		case 'f': o->fail_on_miss = true; break;
		default:
			return pd_cli_fail("report", PD_EXIT_USAGE, "unknown or incomplete option '%s' (see --help)",
					   argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return pd_cli_fail("report", PD_EXIT_USAGE, "expected exactly one RUNDIR (see --help)");
	o->rundir = argv[optind];
	return 0;
}

/* The directory that will hold path must exist and be writable; checked for every output before
 * any is written, so that a typo in the last option does not leave the first ones behind. */
static int check_parent(const char *opt, const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return pd_cli_fail("report", PD_EXIT_ENV, "out of memory");
	const char *dir = dirname(copy);
	int ok = access(dir, W_OK | X_OK) == 0;
	int rc = ok ? 0 : pd_cli_fail("report", PD_EXIT_ENV, "%s %s: cannot write in %s: %s", opt, path, dir, strerror(errno));
	free(copy);
	return rc;
}

static int preflight(const struct opts *o)
{
	int rc = 0;
	if (o->html)
		rc = check_parent("--html", o->html);
	if (!rc && o->perfetto)
		rc = check_parent("--perfetto", o->perfetto);
	if (!rc && o->csv)
		rc = check_parent("--csv", o->csv);
	return rc;
}

static int write_outputs(const pd_report *r, const struct opts *o, pd_err *e)
{
	if (o->html && pd_report_write_html(r, o->html, e))
		return e->code;
	if (o->csv && pd_report_write_csv(r, o->csv, e))
		return e->code;
	if (o->perfetto && pd_report_write_perfetto(r, o->perfetto, e))
		return e->code;
	pd_buf b;
	pd_buf_init(&b);
	int rc = o->json ? pd_report_json(r, &b, e) : pd_report_text(r, &b, e);
	if (rc == 0 && b.len)
		rc = fwrite(b.data, 1, b.len, stdout) == b.len ? 0 : pd_err_set(e, PD_EXIT_ENV, "cannot write stdout");
	pd_buf_free(&b);
	return rc;
}

static int run(int argc, char **argv)
{
	struct opts o = {0};
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc;
	pd_err e = {0};
	pd_report *r = pd_report_open(o.rundir, &e);
	if (!r)
		return pd_cli_fail("report", e.code ? e.code : PD_EXIT_USAGE, "%s", e.msg);
	if ((rc = preflight(&o)) != 0) {
		pd_report_free(r);
		return rc;
	}
	const char *why;
	if (pd_report_incomplete(r, &why))
		fprintf(stderr, "powerdag report: warning: incomplete run: %s\n", why);
	rc = write_outputs(r, &o, &e);
	if (rc)
		rc = pd_cli_fail("report", rc, "%s", e.msg);
	else if (o.fail_on_miss && pd_report_misses(r) > 0)
		rc = PD_EXIT_FAIL;
	pd_report_free(r);
	return rc;
}

const struct pd_cmd pd_cmd_report = {"report", run, "power and deadline-miss report of a run, predicted vs measured",
				     usage};
