/* SPDX-License-Identifier: MIT */
/*
 * powerdag gen - a random, reproducible DAG set (pd_dags_generate), written as a DAG file.
 */
#include "cli/cli_impl.h"
#include "dags/pd_dags.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAME "gen"

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end = NULL;
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_unum(const char *s, double *out)
{
	char *end = NULL;
	if (!s || !*s)
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

/* "MIN:MAX" or a single "N" (= N:N). */
static int parse_range(const char *s, unsigned *lo, unsigned *hi)
{
	char buf[64];
	unsigned long long a, b;
	if (!s || strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	char *colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	if (parse_uint(buf, 100000, &a) || (colon ? parse_uint(colon + 1, 100000, &b) : (b = a, 0)))
		return -1;
	*lo = (unsigned)a;
	*hi = (unsigned)b;
	return 0;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"dags", required_argument, NULL, 'd'},       {"tasks", required_argument, NULL, 't'},
		{"util", required_argument, NULL, 'u'},       {"accel-ratio", required_argument, NULL, 'a'},
		{"seed", required_argument, NULL, 's'},       {"layers", required_argument, NULL, 'l'},
		{"edge-prob", required_argument, NULL, 'p'},  {"min-wcet", required_argument, NULL, 'm'},
		{"output", required_argument, NULL, 'o'},     {NULL, 0, NULL, 0},
	};
	struct pd_gen_params p;
	const char *out = "-", *why = NULL;
	unsigned long long v = 0;
	pd_dags_gen_defaults(&p);
	opterr = 0;
	optind = 1;
	int li = -1;
	for (int c; (c = getopt_long(argc, argv, ":o:", opts, &li)) != -1; li = -1) {
		bool bad = false;
		switch (c) {
		case 'd':
			bad = parse_uint(optarg, 1000000, &v) != 0;
			p.n_dags = (unsigned)v;
			break;
		case 't':
			bad = parse_range(optarg, &p.min_tasks, &p.max_tasks) != 0;
			break;
		case 'l':
			bad = parse_range(optarg, &p.layers_min, &p.layers_max) != 0;
			break;
		case 'u':
			bad = parse_unum(optarg, &p.util) != 0;
			break;
		case 'a':
			bad = parse_unum(optarg, &p.accel_ratio) != 0;
			break;
		case 'p':
			bad = parse_unum(optarg, &p.edge_prob) != 0;
			break;
		case 's':
			bad = parse_uint(optarg, UINT64_MAX, &v) != 0;
			p.seed = v;
			break;
		case 'm':
			bad = pd_parse_duration_ns(optarg, &p.min_wcet_ns, &why) != 0;
			break;
		case 'o':
			out = optarg;
			break;
		case ':':
			return pd_cli_fail(NAME, PD_EXIT_USAGE, "option '%s' needs a value (see --help)", argv[optind - 1]);
		default:
			return pd_cli_fail(NAME, PD_EXIT_USAGE, "unknown option '%s' (see --help)", argv[optind - 1]);
		}
		if (bad)
			return pd_cli_bad_value(NAME, opts, li, c, optarg);
	}
	if (optind < argc)
		return pd_cli_fail(NAME, PD_EXIT_USAGE, "unexpected argument '%s' (see --help)", argv[optind]);

	pd_err e = {0};
	pd_dagset *s = pd_dags_generate(&p, &e);
	if (!s)
		return pd_cli_fail(NAME, e.code ? e.code : PD_EXIT_USAGE, "%s", e.msg);
	int rc = pd_dags_write_file(s, out, &e);
	pd_dags_free(s);
	if (rc)
		return pd_cli_fail(NAME, e.code ? e.code : PD_EXIT_ENV, "%s", e.msg);
	return PD_EXIT_OK;
}

const struct pd_cmd pd_cmd_gen = {
	NAME,
	run,
	"generate a random DAG set (layered DAGs, UUniFast utilisations)",
	"gen [--dags N] [--tasks MIN:MAX] [--util U] [--accel-ratio R] [--seed S] [-o FILE]\n"
	"\n"
	"Writes a random, reproducible DAG set (docs/FORMATS.md section 2) to FILE (default: standard output).\n"
	"Each DAG is layered with exactly one source and one sink, has a period drawn from\n"
	"{20, 25, 40, 50, 80, 100} ms and D = T. The total utilisation U (sum of C/T at the reference\n"
	"frequency on capacity-1.0 cores) is split over DAGs and tasks with UUniFast-Discard, keeping\n"
	"every task's u <= 1 and every DAG's critical path within its deadline (within half of\n"
	"it whenever the utilisation allows, leaving room to share cores). WCETs below --min-wcet are\n"
	"raised to it and the others lowered to keep U: the set's sum of C/T is U within 1 %, or the\n"
	"request is refused (exit 2) when the tasks at the minimum WCET alone exceed U. The same\n"
	"options and seed always give the same bytes.\n"
	"\n"
	"options:\n"
	"  --dags N           number of DAGs (default 3)\n"
	"  --tasks MIN:MAX    tasks per DAG, drawn uniformly (default 5:10; N means N:N)\n"
	"  --util U           total utilisation of the set (default 1.6: the default 30 tasks at most,\n"
	"                     at the 1.024-ms minimum WCET and 20-ms periods, need up to 1.54)\n"
	"  --accel-ratio R    fraction of tasks with a GPU and/or FPGA implementation, 0..1 (default 0)\n"
	"  --seed S           random seed, unsigned 64-bit (default 1)\n"
	"  --layers MIN:MAX   layers per DAG including source and sink (default 3:5)\n"
	"  --edge-prob P      probability of an edge between tasks of adjacent layers (default 0.4)\n"
	"  --min-wcet DUR     smallest WCET (default 1.024ms)\n"
	"  -o, --output FILE  output file, written atomically (default: standard output)\n"
	"\n"
	"exit: 0 written, 2 bad usage or impossible parameters (nothing written), 3 cannot write.\n",
};
