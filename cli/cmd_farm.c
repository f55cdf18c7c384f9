/* SPDX-License-Identifier: MIT */
/*
 * powerdag farm submit|collect|status - run plans on many boards through a LAVA board farm
 * (farm/pd_farm.h; docs/FARM.md).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_impl.h"
#include "farm/pd_farm.h"

#define MAX_ITEMS 1000

static int submit(int argc, char **argv)
{
	static const struct option lo[] = {
		{"lab", required_argument, NULL, 'l'},     {"out", required_argument, NULL, 'o'},
		{"device-type", required_argument, NULL, 't'}, {"repeat", required_argument, NULL, 'r'},
		{"duration", required_argument, NULL, 'd'}, {"no-follow", no_argument, NULL, 'n'},
		{NULL, 0, NULL, 0},
	};
	const char *types[64];
	struct pd_farm_matrix m = {.device_types = types, .repetitions = 1, .run_ns = 10 * PD_NS_PER_S};
	struct pd_farm_opts o = {.log = stderr};
	const char *out = NULL;
	bool follow = true;
	int c, li = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "l:o:t:r:d:", lo, &li)) != -1) {
		switch (c) {
		case 'l': o.lab_path = optarg; break;
		case 'o': out = optarg; break;
		case 't':
			if (m.n_types >= 64)
				return pd_cli_fail("farm", PD_EXIT_USAGE, "at most 64 --device-type");
			types[m.n_types++] = optarg;
			break;
		case 'r': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 1 || v > 1000)
				return pd_cli_bad_value("farm", lo, li, c, optarg);
			m.repetitions = (int)v;
			break;
		}
		case 'd': {
			const char *why = "";
			if (pd_parse_run_ns(optarg, true, &m.run_ns, &why))
				return pd_cli_fail("farm", PD_EXIT_USAGE, "--duration '%s': %s", optarg, why);
			break;
		}
		case 'n': follow = false; break;
		default: return pd_cli_fail("farm", PD_EXIT_USAGE, "see 'powerdag farm --help'");
		}
		li = -1;
	}
	if (!o.lab_path || !out)
		return pd_cli_fail("farm", PD_EXIT_USAGE, "submit needs --lab LAB.yaml and --out DIR");
	if (optind >= argc)
		return pd_cli_fail("farm", PD_EXIT_USAGE, "submit needs at least one PLAN");
	if (m.n_types == 0)
		types[m.n_types++] = "twin";
	m.plans = (const char *const *)argv + optind;
	m.n_plans = (size_t)(argc - optind);
	pd_err e = {0};
	int rc = pd_farm_submit(&o, &m, out, &e);
	if (rc)
		return pd_cli_fail("farm", rc, "%s", e.msg);
	if (!follow) {
		printf("submitted %zu runs into %s (follow them with: powerdag farm collect %s)\n",
		       m.n_plans * m.n_types * (size_t)m.repetitions, out, out);
		return PD_EXIT_OK;
	}
	o.lab_path = NULL; /* the one farm.json recorded */
	o.interrupted = pd_cli_catch_interrupts();
	rc = pd_farm_collect(&o, out, &e);
	int miss = 0, pend = 0;
	pd_err se = {0};
	pd_farm_status(out, false, stdout, &miss, &pend, &se);
	return rc ? pd_cli_fail("farm", rc, "%s", e.msg) : PD_EXIT_OK;
}

static int collect(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-')
		return pd_cli_fail("farm", PD_EXIT_USAGE, "usage: powerdag farm collect DIR");
	struct pd_farm_opts o = {.log = stderr, .interrupted = pd_cli_catch_interrupts()};
	pd_err e = {0};
	int rc = pd_farm_collect(&o, argv[1], &e);
	int miss = 0, pend = 0;
	pd_err se = {0};
	if (rc != PD_EXIT_USAGE)
		pd_farm_status(argv[1], false, stdout, &miss, &pend, &se);
	return rc ? pd_cli_fail("farm", rc, "%s", e.msg) : PD_EXIT_OK;
}

static int status(int argc, char **argv)
{
	bool json = false;
	const char *dir = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (argv[i][0] != '-' && !dir)
			dir = argv[i];
		else
			return pd_cli_fail("farm", PD_EXIT_USAGE, "usage: powerdag farm status DIR [--json]");
	}
	if (!dir)
		return pd_cli_fail("farm", PD_EXIT_USAGE, "usage: powerdag farm status DIR [--json]");
	int miss = 0, pend = 0;
	pd_err e = {0};
	int rc = pd_farm_status(dir, json, stdout, &miss, &pend, &e);
	if (rc)
		return pd_cli_fail("farm", rc, "%s", e.msg);
	return miss || pend ? PD_EXIT_FAIL : PD_EXIT_OK;
}

static int run(int argc, char **argv)
{
	if (argc < 2)
		return pd_cli_fail("farm", PD_EXIT_USAGE, "expected submit, collect or status (see 'powerdag farm --help')");
	if (!strcmp(argv[1], "submit"))
		return submit(argc - 1, argv + 1);
	if (!strcmp(argv[1], "collect"))
		return collect(argc - 1, argv + 1);
	if (!strcmp(argv[1], "status"))
		return status(argc - 1, argv + 1);
	return pd_cli_fail("farm", PD_EXIT_USAGE, "'%s' is not a farm subcommand (submit, collect, status)", argv[1]);
}

const struct pd_cmd pd_cmd_farm = {
	"farm", run, "run plans on many boards through a LAVA board farm",
	"farm submit --lab LAB.yaml --out DIR [--device-type T]... [--repeat N]\n"
	"                     [--duration T] [--no-follow] PLAN...\n"
	"       powerdag farm collect DIR\n"
	"       powerdag farm status DIR [--json]\n\n"
	"  submit             one LAVA job per run of the matrix PLANs x device types x\n"
	"                     repetitions; DIR (new or empty, yours) gets the plans, the job\n"
	"                     definitions and farm.json; then follows them like collect\n"
	"  --lab LAB.yaml     the LAVA server (url, user, token_file) and the boards powerdag may\n"
	"                     deploy to (LAVA device name, device_type, board URI, identity,\n"
	"                     known_hosts, cpu_group); scripts/farm-local.sh writes one\n"
	"  --device-type T    LAVA device type to run every plan on (repeatable; default twin)\n"
	"  --repeat N         runs of each plan on each device type (1..1000; default 1)\n"
	"  --duration T       each run's length (default 10s)\n"
	"  --no-follow        submit only\n"
	"  collect            follow DIR's jobs: when LAVA holds a board for a run, deploy the\n"
	"                     plan to it (powerdag deploy: configure, run, stream, restore), then\n"
	"                     release the job; each run lands in DIR/runs/RUN (deploy.json names\n"
	"                     the LAVA job and device); one deploy at a time per cpu_group\n"
	"  status             the runs, their LAVA jobs and devices; names the missing runs\n"
	"                     and why (--json: one object)\n\n"
	"Exit codes: 0 every run collected; 1 some run missing (or, for status, not finished);\n"
	"2 bad input (nothing written); 3 environment (LAVA or a board unreachable, Ctrl-C).\n"
	"LAVA is reached with lavacli (token in a private config file) and its REST API;\n"
	"docs/FARM.md describes the lab file, the jobs and a real lab's set-up."};
