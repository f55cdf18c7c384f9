/* SPDX-License-Identifier: MIT */
/*
 * powerdag dot - Graphviz DOT of a DAG set; with a plan, nodes are filled by placement (one colour
 * per CPU, GPU, FPGA slot) and labelled with it, plus a legend. FILE may itself be a plan (its
 * embedded DAG set is drawn, coloured by its own placement).
 */
#include "cli/cli_impl.h"
#include "dags/pd_dags.h"
#include "plan/pd_plan.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define NAME "dot"

static const char *const cpu_colours[] = {"#a6cee3", "#b2df8a", "#fdbf6f", "#cab2d6",
					  "#ffff99", "#fb9a99", "#8dd3c7", "#d9d9d9"};
static const char *const gpu_colours[] = {"#66c2a5", "#1b9e77"};
static const char *const fpga_colours[] = {"#fc8d62", "#e78ac3", "#e5c494", "#ff7f00"};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const char *colour_of(const struct pd_placement *pl)
{
	switch (pl->kind) {
	case PD_PLACE_GPU:
		return gpu_colours[pl->accel % N_OF(gpu_colours)];
	case PD_PLACE_FPGA:
		return fpga_colours[(pl->accel + (size_t)(pl->slot < 0 ? 0 : pl->slot)) % N_OF(fpga_colours)];
	default:
		return cpu_colours[(size_t)(pl->cpu < 0 ? 0 : pl->cpu) % N_OF(cpu_colours)];
	}
}

/* Is the top-level key of the YAML file "plan"? (Then FILE is drawn from its embedded set.) */
static bool is_plan_file(const char *path)
{
	pd_ydoc doc;
	pd_diags d;
	pd_diags_init(&d);
	bool plan = pd_yaml_load_file(&doc, path, &d) == 0 && pd_ymap_get(doc.root, "plan") != NULL;
	pd_yaml_free(&doc);
	pd_diags_free(&d);
	return plan;
}

/* Fills style[] (and notes/legend storage in the arena) from the plan's placement of each task of s,
 * matched by DAG and task name. Returns 0, or 2 when the plan does not cover a task. */
static int style_from_plan(const pd_dagset *s, const pd_plan *plan, struct pd_dot_style *style,
			   const char **legend, pd_arena *a)
{
	const pd_dagset *ps = pd_plan_dags(plan);
	size_t n_leg = 0;
	for (size_t i = 0; i < pd_dags_task_count(s); i++) {
		const struct pd_task *t = pd_dags_task(s, i);
		const char *dag = pd_dags_dag(s, t->dag)->name;
		long j = pd_dags_find_task(ps, dag, t->name);
		if (j < 0)
			return pd_cli_fail(NAME, PD_EXIT_USAGE, "the plan has no task '%s' in DAG '%s'", t->name, dag);
		const struct pd_placement *pl = &pd_plan_task_c(plan, (size_t)j)->place;
		char buf[128];
		style[i].note = pd_arena_strdup(a, pd_plan_placement_fmt(plan, pl, buf, sizeof(buf)));
		style[i].fill = colour_of(pl);
		bool seen = false;
		for (size_t k = 0; k < n_leg; k++)
			seen |= strcmp(legend[2 * k + 1], style[i].note ? style[i].note : "") == 0;
		if (!seen && style[i].note) {
			legend[2 * n_leg] = style[i].fill;
			legend[2 * n_leg + 1] = style[i].note;
			n_leg++;
		}
	}
	legend[2 * n_leg] = NULL;
	return 0;
}

static int draw(const pd_dagset *s, const pd_plan *plan, const char *out)
{
	size_t n = pd_dags_task_count(s);
	struct pd_dot_style *style = plan ? calloc(n, sizeof(*style)) : NULL;
	const char **legend = plan ? calloc(2 * n + 2, sizeof(char *)) : NULL;
	pd_arena *a = pd_arena_new();
	pd_buf b;
	pd_err e = {0};
	int rc = PD_EXIT_ENV;
	pd_buf_init(&b);
	if (!a || (plan && (!style || !legend))) {
		pd_cli_fail(NAME, rc, "out of memory");
		goto out;
	}
	if (plan && (rc = style_from_plan(s, plan, style, legend, a)) != 0)
		goto out;
	if (pd_dags_to_dot(s, style, legend, &b) < 0) {
		rc = pd_cli_fail(NAME, PD_EXIT_ENV, "out of memory");
		goto out;
	}
	rc = pd_write_file_atomic(out, b.data, b.len, &e) ? pd_cli_fail(NAME, PD_EXIT_ENV, "%s", e.msg) : PD_EXIT_OK;
out:
	pd_buf_free(&b);
	pd_arena_free(a);
	free(style);
	free(legend);
	return rc;
}

static int run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"plan", required_argument, NULL, 'p'},
		{"output", required_argument, NULL, 'o'},
		{NULL, 0, NULL, 0},
	};
	const char *plan_path = NULL, *out = "-";
	opterr = 0;
	optind = 1;
	for (int c; (c = getopt_long(argc, argv, ":o:", opts, NULL)) != -1;) {
		if (c == 'p')
			plan_path = optarg;
		else if (c == 'o')
			out = optarg;
		else if (c == ':')
			return pd_cli_fail(NAME, PD_EXIT_USAGE, "option '%s' needs a value (see --help)", argv[optind - 1]);
		else
			return pd_cli_fail(NAME, PD_EXIT_USAGE, "unknown option '%s' (see --help)", argv[optind - 1]);
	}
	if (argc - optind != 1)
		return pd_cli_fail(NAME, PD_EXIT_USAGE, "expects exactly one DAG (or plan) FILE (see --help)");
	const char *file = argv[optind];

	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *s = NULL;
	pd_plan *own = NULL, *plan = NULL;
	int rc = PD_EXIT_USAGE;
	if (is_plan_file(file)) {
		own = pd_plan_load_file(file, &d);
		if (own && !plan_path)
			plan = own;
	} else {
		s = pd_dags_load_file(file, &d);
	}
	if (plan_path && (own || s))
		plan = pd_plan_load_file(plan_path, &d);
	if (d.n || d.dropped || (!s && !own) || (plan_path && !plan)) {
		pd_diags_print(&d, stderr);
		if (!d.n && !d.dropped)
			pd_cli_fail(NAME, rc, "cannot load '%s'", file);
		goto out;
	}
	rc = draw(s ? s : pd_plan_dags(own), plan, out);
out:
	if (plan && plan != own)
		pd_plan_free(plan);
	pd_plan_free(own);
	pd_dags_free(s);
	pd_diags_free(&d);
	return rc;
}

const struct pd_cmd pd_cmd_dot = {
	NAME,
	run,
	"Graphviz DOT of a DAG set, coloured by placement when a plan is given",
	"dot FILE [--plan PLAN] [-o FILE]\n"
	"\n"
	"Writes a Graphviz digraph of the DAG set in FILE: one cluster per DAG (labelled with its period\n"
	"T and deadline D), one box per task (name, WCET C, accelerator kinds), sources and sinks drawn\n"
	"with a thicker border. With --plan, every task is filled with the colour of its placement in\n"
	"PLAN (one colour per CPU, GPU and FPGA slot), labelled with it (cpu:4, gpu:gpu0, fpga:pl/1),\n"
	"and a legend is added. FILE may itself be a plan: its embedded DAG set is drawn, coloured by\n"
	"its own placement. Render with e.g. `dot -Tsvg out.dot -o out.svg`.\n"
	"\n"
	"options:\n"
	"  --plan PLAN        colour tasks by the placement in this plan (tasks matched by DAG/task name)\n"
	"  -o, --output FILE  output file, written atomically (default: standard output)\n"
	"\n"
	"exit: 0 written, 2 bad usage or invalid input (diagnostics on stderr), 3 cannot write.\n",
};
