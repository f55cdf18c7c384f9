/* SPDX-License-Identifier: MIT */
/*
 * powerdag - git-style dispatch: `powerdag NAME [args]` runs the command NAME of the table below.
 * `powerdag --help` lists the commands; `powerdag NAME --help` prints that command's usage.
 */
#include "cli/cli_impl.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const struct pd_cmd *const commands[] = {
	&pd_cmd_validate, &pd_cmd_gen,    &pd_cmd_dot,    &pd_cmd_optimize, &pd_cmd_check,
	&pd_cmd_simulate, &pd_cmd_twin,   &pd_cmd_deploy, &pd_cmd_report,   &pd_cmd_refit, &pd_cmd_demo,
	&pd_cmd_profile, &pd_cmd_farm,
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct pd_cmd *find(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

void pd_cli_help(const char *name, FILE *out)
{
	const struct pd_cmd *c = find(name);
	if (!c)
		return;
	fprintf(out, "usage: powerdag %s\n\n%s\n", c->usage, c->summary);
}

int pd_cli_fail(const char *name, int code, const char *fmt, ...)
{
	/* the message quotes files, arguments and board answers: escaped (core/escape.c), lines kept */
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *msg = n >= 0 ? malloc((size_t)n + 1) : NULL;
	fprintf(stderr, "powerdag %s: ", name);
	if (msg) {
		va_start(ap, fmt);
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
		va_end(ap);
		pd_esc_fputs(msg, stderr);
		free(msg);
	}
	fputc('\n', stderr);
	return code;
}

int pd_cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return 0;
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return 1;
	}
	return 0;
}

int pd_cli_bad_value(const char *name, const struct option *opts, int li, int c, const char *value)
{
	if (li >= 0)
		return pd_cli_fail(name, PD_EXIT_USAGE, "invalid value '%s' for --%s (see --help)", value, opts[li].name);
	return pd_cli_fail(name, PD_EXIT_USAGE, "invalid value '%s' for -%c (see --help)", value, c);
}

static void usage(FILE *out)
{
	fprintf(out, "usage: powerdag [--version] [--help] COMMAND [ARGS]\n\n"
		     "A power-aware deployer of real-time DAGs: optimise a deployment (MILP), simulate it,\n"
		     "deploy it to a board over SSH, and report measured next to predicted power and misses.\n\n"
		     "commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(out, "\nexit codes: 0 ok, 1 property does not hold, 2 bad usage or input, 3 environment.\n"
		     "`powerdag COMMAND --help` for the options of a command; `man powerdag` for the rest.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return PD_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		if (argc > 2 && find(argv[2])) {
			pd_cli_help(argv[2], stdout);
			return PD_EXIT_OK;
		}
		usage(stdout);
		return PD_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("powerdag %s\n", PD_VERSION);
		return PD_EXIT_OK;
	}
	const struct pd_cmd *c = find(argv[1]);
	if (!c) {
		fprintf(stderr, "powerdag: '%s' is not a command. See 'powerdag --help'.\n", argv[1]);
		return PD_EXIT_USAGE;
	}
	if (pd_cli_wants_help(argc - 1, argv + 1)) {
		pd_cli_help(c->name, stdout);
		return PD_EXIT_OK;
	}
	return c->fn(argc - 1, argv + 1);
}
