/* SPDX-License-Identifier: MIT */
/*
 * powerdag profile --board URI --platform NOMINAL -o FITTED [--json] - measure a board through the
 * agent and write the nominal platform with the measured values (deployer/pd_deployer.h
 * pd_deploy_profile_run; docs/PROFILE.md). Ctrl-C only sets a flag: the current step ends, the board is
 * restored, nothing is written, exit 3.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli_impl.h"
#include "deployer/pd_deployer.h"

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

/* The text summary: steps with their time, then values, skipped steps and flags. */
static void print_text(const char *js, FILE *out)
{
	json_t *j = json_loads(js, 0, NULL);
	if (!j)
		return;
	size_t i;
	json_t *v;
	fprintf(out, "profile of %s (%s, kernel %s) at %s: %.1f s\n", json_string_value(json_object_get(j, "board")),
		json_string_value(json_object_get(j, "hostname")), json_string_value(json_object_get(j, "kernel")),
		json_string_value(json_object_get(j, "date")), json_number_value(json_object_get(j, "seconds")));
	fprintf(out, "\nstep                                                          seconds  status\n");
	json_array_foreach(json_object_get(j, "steps"), i, v)
		fprintf(out, "  %-60s %7.2f  %s\n", json_string_value(json_object_get(v, "step")),
			json_number_value(json_object_get(v, "seconds")), json_string_value(json_object_get(v, "status")));
	fprintf(out, "\nmeasured values\n");
	json_array_foreach(json_object_get(j, "values"), i, v) {
		json_t *x = json_object_get(v, "value");
		char num[64];
		if (json_is_number(x))
			snprintf(num, sizeof(num), "%g", json_number_value(x));
		fprintf(out, "  %-44s %-12s n=%lld", json_string_value(json_object_get(v, "what")),
			json_is_string(x) ? json_string_value(x) : num, (long long)json_integer_value(json_object_get(v, "samples")));
		const char *extra[] = {"spread", "quantile", "p50", "max", "busy_fraction", "capacity", "model", "source", NULL};
		for (size_t k = 0; extra[k]; k++) {
			json_t *y = json_object_get(v, extra[k]);
			if (json_is_string(y))
				fprintf(out, " %s=%s", extra[k], json_string_value(y));
			else if (json_is_number(y))
				fprintf(out, " %s=%g", extra[k], json_number_value(y));
		}
		fputc('\n', out);
	}
	if (json_array_size(json_object_get(j, "skipped")))
		fprintf(out, "\nskipped\n");
	json_array_foreach(json_object_get(j, "skipped"), i, v)
		fprintf(out, "  %s: %s\n", json_string_value(json_object_get(v, "step")),
			json_string_value(json_object_get(v, "reason")));
	if (json_array_size(json_object_get(j, "flags")))
		fprintf(out, "\nflags\n");
	json_array_foreach(json_object_get(j, "flags"), i, v)
		fprintf(out, "  %s\n", json_string_value(v));
	json_decref(j);
}

static int run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"board", required_argument, NULL, 'b'},    {"platform", required_argument, NULL, 'p'},
		{"out", required_argument, NULL, 'o'},      {"json", no_argument, NULL, 'j'},
		{"identity", required_argument, NULL, 'i'}, {"known-hosts", required_argument, NULL, 'k'},
		{"agent", required_argument, NULL, 'a'},    {"overhead-jobs", required_argument, NULL, 'J'},
		{"window", required_argument, NULL, 'w'},   {NULL, 0, NULL, 0},
	};
	struct pd_deploy_profile_opts o = {.log = stderr, .interrupted = NULL} /* set once the arguments are checked */;
	struct pd_cli_twin tb;
	bool json = false;
	int c, li = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "b:p:o:i:", longopts, &li)) != -1) {
		switch (c) {
		case 'b': o.board_uri = optarg; break;
		case 'p': o.platform_path = optarg; break;
		case 'o': o.out_path = optarg; break;
		case 'j': json = true; break;
		case 'i': o.tp.identity = optarg; break;
		case 'k': o.tp.known_hosts = optarg; break;
		case 'a': o.agent_path = optarg; break;
		case 'J':
			if (parse_int(optarg, 100, 100000, &o.overhead_jobs))
				return pd_cli_bad_value("profile", longopts, li, c, optarg);
			break;
		case 'w':
			if (parse_int(optarg, 100, 10000, &o.window_ms))
				return pd_cli_bad_value("profile", longopts, li, c, optarg);
			break;
		default: return pd_cli_fail("profile", PD_EXIT_USAGE, "see 'powerdag profile --help'");
		}
		li = -1;
	}
	if (optind != argc)
		return pd_cli_fail("profile", PD_EXIT_USAGE, "unexpected argument '%s' (see 'powerdag profile --help')",
				   argv[optind]);
	if (!o.board_uri)
		return pd_cli_fail("profile", PD_EXIT_USAGE, "--board URI is required (ssh://[user@]host[:port], local or twin)");
	if (!o.platform_path)
		return pd_cli_fail("profile", PD_EXIT_USAGE, "--platform NOMINAL is required");
	if (!o.out_path)
		return pd_cli_fail("profile", PD_EXIT_USAGE, "-o FITTED is required");
	if (!strcmp(o.board_uri, "twin")) {
		int rc = pd_cli_twin_board("profile", &tb, &o.board_uri, &o.tp.identity, &o.tp.known_hosts, NULL);
		if (rc)
			return rc;
	}
	o.interrupted = pd_cli_catch_interrupts();
	char *summary = NULL;
	pd_err e = {0};
	int rc = pd_deploy_profile_run(&o, &summary, &e);
	if (summary && json)
		printf("%s\n", summary);
	else if (summary && rc != PD_EXIT_USAGE)
		print_text(summary, stdout);
	free(summary);
	if (rc)
		return pd_cli_fail("profile", rc, "%s", e.msg);
	if (!json)
		printf("\nfitted platform written to %s\n", o.out_path);
	return PD_EXIT_OK;
}

const struct pd_cmd pd_cmd_profile = {
	"profile", run, "measure a board (overhead, spin speed, power per OPP) into a fitted platform",
	"profile --board URI --platform NOMINAL -o FITTED [--json]\n"
	"                [--identity KEY] [--known-hosts FILE] [--agent PATH] [--overhead-jobs N] [--window MS]\n\n"
	"  --board URI         ssh://[user@]host[:port], local (this machine), or twin (the board twin\n"
	"                      that is up); the board is configured and restored as by deploy\n"
	"  --platform NOMINAL  the platform file the board is said to be (islands, OPPs, sensors)\n"
	"  -o, --out FITTED    the fitted platform: NOMINAL with the measured dl.budget_margin,\n"
	"                      job_overhead per island, busy/idle power per island (and GPU) OPP, and a\n"
	"                      provenance block; written atomically, only after a complete run with the\n"
	"                      board restored\n"
	"  --json              one JSON object on stdout (steps, seconds, values, skipped, flags)\n"
	"  --identity KEY, --known-hosts FILE, --agent PATH   as for deploy\n"
	"  --overhead-jobs N   jobs per thread of the overhead step (default 1000, 2 ms apart)\n"
	"  --window MS         rail averaging window per phase (default 500)\n\n"
	"Steps: once, every CPU busy, the builtin:spin CPU time over its calibration (budget margin =\n"
	"99th percentile - 1, at most 0.5); per island, the per-job overhead under SCHED_DEADLINE\n"
	"(99.9th percentile) at its lowest OPP; per island and OPP, idle and busy power over IIO and the\n"
	"builtin:spin speed; per GPU with a job interface (the twin's) and OPP, job latency and power.\n"
	"Steps the board cannot do (no cpufreq, no sensor) are skipped with the reason. Progress on\n"
	"stderr. About 1 s once, 2.5 s per island and 2 s per OPP. Exit codes: 0 written; 2 bad NOMINAL,\n"
	"-o or option (nothing touched, nothing written); 3 environment (unreachable, not root, a step\n"
	"failed, interrupted, incomplete restore: nothing "
	"written). See docs/PROFILE.md.",
};
