/* SPDX-License-Identifier: MIT */
/*
 * powerdag-agent - the on-board runtime (command line contract: docs/ARCHITECTURE.md).
 *
 *   powerdag-agent run PLAN --out DIR [--duration SEC] [--cgroup-root PATH] [--iio URI]
 *                  [--sample-hz N] [--no-power] [--gpio CHIP:LINE] [--seed S] [--starvation-monitor]
 *   powerdag-agent check-plugins PLAN
 *   powerdag-agent check-foreign PLAN
 *   powerdag-agent measure overhead|power ...   (the steps of `powerdag profile`, docs/PROFILE.md)
 *   powerdag-agent --self-test
 *   powerdag-agent --version
 */
#include "agents/pd_agent.h"
#include "runlog/pd_runlog.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: powerdag-agent run PLAN --out DIR [--duration SEC] [--cgroup-root PATH] [--iio URI]\n"
	"                      [--sample-hz N] [--no-power] [--gpio CHIP:LINE] [--seed S] [--starvation-monitor]\n"
	"       powerdag-agent dump RUNLOG [summary|instances|jobs|power|gaps|steal|busy|foreign]\n"
	"       powerdag-agent check-plugins PLAN\n"
	"       powerdag-agent check-foreign PLAN\n"
	"       powerdag-agent measure overhead --cpu N [--jobs N] [--period-us P] [--work-us W]\n"
	"       powerdag-agent measure power --rail URI,DEVICE,CHANNEL,SCALE... [--cpus LIST] [--accel NAME]\n"
	"                      [--latency-us L] [--sampler-cpu N] [--settle-ms S] [--window-ms W] [--hz H]\n"
	"       powerdag-agent --self-test\n"
	"       powerdag-agent --version\n";

static int parse_seconds(const char *s, int64_t *ns, const char **why)
{
	return pd_parse_run_ns(s, true, ns, why); /* seconds ("30", "2.5") or durations with a unit ("30s", "500ms") */
}

static int cmd_run(int argc, char **argv)
{
	struct pd_agent_opts o;
	pd_agent_opts_init(&o);
	o.log = stderr;
	static const struct option lo[] = {{"out", 1, 0, 'o'},       {"duration", 1, 0, 'd'}, {"cgroup-root", 1, 0, 'c'},
					   {"iio", 1, 0, 'i'},       {"sample-hz", 1, 0, 'h'}, {"no-power", 0, 0, 'n'},
					   {"gpio", 1, 0, 'g'},      {"seed", 1, 0, 's'},     {"starvation-monitor", 0, 0, 'm'},
					   {"help", 0, 0, 'H'},      {0, 0, 0, 0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'o':
			o.out_dir = optarg;
			break;
		case 'd': {
			const char *why = "";
			if (parse_seconds(optarg, &o.duration_ns, &why)) {
				fprintf(stderr, "powerdag-agent: --duration '%s': %s (seconds > 0, e.g. 30 or 30s; at most 2592000s)\n",
					optarg, why);
				return PD_EXIT_USAGE;
			}
			break;
		}
		case 'c':
			o.cgroup_root = optarg;
			break;
		case 'i':
			o.iio_uri = optarg;
			break;
		case 'h':
			o.sample_hz = (int)strtol(optarg, &end, 10);
			if (*end || o.sample_hz < 1 || o.sample_hz > 1000) {
				fprintf(stderr, "powerdag-agent: --sample-hz '%s': expected 1..1000\n", optarg);
				return PD_EXIT_USAGE;
			}
			break;
		case 'n':
			o.no_power = true;
			break;
		case 'g':
			o.gpio = optarg;
			break;
		case 's':
			o.seed = strtoull(optarg, &end, 0);
			if (*end) {
				fprintf(stderr, "powerdag-agent: --seed '%s': expected an integer\n", optarg);
				return PD_EXIT_USAGE;
			}
			break;
		case 'm':
			o.starvation_monitor = true;
			break;
		case 'H':
			fputs(usage, stdout);
			return PD_EXIT_OK;
		default:
			fputs(usage, stderr);
			return PD_EXIT_USAGE;
		}
	}
	if (optind != argc - 1 || !o.out_dir) {
		fprintf(stderr, "powerdag-agent: run needs one PLAN and --out DIR\n%s", usage);
		return PD_EXIT_USAGE;
	}
	o.plan_path = argv[optind];
	/* Test only (docs/DEPLOY.md): one injected overrun, from the environment so that no plan and no
	 * command line of a real deployment can carry it. */
	struct pd_inject inj;
	const char *inj_s = getenv("PD_AGENT_INJECT_OVERRUN");
	if (inj_s && *inj_s) {
		const char *why = NULL;
		if (pd_dags_inject_parse(inj_s, &inj, &why)) {
			fprintf(stderr, "powerdag-agent: PD_AGENT_INJECT_OVERRUN '%.80s': %s\n", inj_s, why);
			return PD_EXIT_USAGE;
		}
		o.inject = &inj;
	}
	/* SIGTERM/SIGINT are taken synchronously by the run (sigtimedwait): block them everywhere */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pd_err e = {0};
	int rc = pd_agent_run(&o, &e);
	if (rc)
		fprintf(stderr, "powerdag-agent: %s\n", e.msg);
	return rc;
}

/* powerdag-agent check-plugins|check-foreign PLAN: a pre-flight check of the deployer's, run on the
 * board (plugin_check.c: the plan's plugins; foreign.c: other processes' SCHED_DEADLINE threads on the
 * plan's CPUs). One problem per line on stdout; exit 0 none, 3 some, 2 bad plan. */
static int cmd_check(const char *plan, size_t (*check)(const struct pd_agent_spec *, pd_buf *))
{
	struct pd_agent_spec s = {0}; /* freed on every path, also when the load fails early */
	pd_err e = {0};
	if (pd_agent_spec_load(plan, &s, stderr, &e)) {
		fprintf(stderr, "powerdag-agent: %s\n", e.msg);
		pd_agent_spec_free(&s);
		return e.code ? e.code : PD_EXIT_USAGE;
	}
	pd_buf problems;
	pd_buf_init(&problems);
	size_t n = check(&s, &problems);
	if (n)
		fputs(problems.data, stdout);
	pd_buf_free(&problems);
	pd_agent_spec_free(&s);
	return n ? PD_EXIT_ENV : PD_EXIT_OK;
}

/* powerdag-agent dump RUNLOG [summary|instances|jobs|power|gaps|steal|busy|foreign]: read a run log on the board */
static int cmd_dump(const char *path, const char *what)
{
	pd_err e = {0};
	pd_runlog *r = pd_runlog_open(path, &e);
	if (!r) {
		fprintf(stderr, "powerdag-agent: %s\n", e.msg);
		return e.code ? e.code : PD_EXIT_USAGE;
	}
	int rc = pd_runlog_dump(r, stdout, what);
	pd_runlog_free(r);
	if (rc == -2) {
		fprintf(stderr, "powerdag-agent: dump: out of memory\n");
		return PD_EXIT_ENV;
	}
	if (rc) {
		fprintf(stderr, "powerdag-agent: dump: unknown view '%s' (summary, instances, jobs, power, gaps, steal, busy, foreign)\n", what);
		return PD_EXIT_USAGE;
	}
	return PD_EXIT_OK;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		printf("powerdag-agent %s\n", PD_VERSION);
		return PD_EXIT_OK;
	}
	if (argc >= 2 && strcmp(argv[1], "--self-test") == 0)
		return pd_agent_self_test(stdout) ? PD_EXIT_ENV : PD_EXIT_OK;
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(usage, stdout);
		return PD_EXIT_OK;
	}
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (argc == 3 && strcmp(argv[1], "check-plugins") == 0)
		return cmd_check(argv[2], pd_agent_check_plugins);
	if (argc == 3 && strcmp(argv[1], "check-foreign") == 0)
		return cmd_check(argv[2], pd_agent_check_foreign);
	if (argc >= 2 && strcmp(argv[1], "measure") == 0)
		return pd_agent_measure_main(argc - 1, argv + 1);
	if (argc >= 3 && strcmp(argv[1], "dump") == 0)
		return cmd_dump(argv[2], argc >= 4 ? argv[3] : "summary");
	fputs(usage, stderr);
	return PD_EXIT_USAGE;
}
