/* SPDX-License-Identifier: MIT */
/*
 * cli_impl.h - the powerdag command table. Each subcommand is cmd_<name>(argc, argv) in cli/cmd_<name>.c,
 * a thin layer over its module's public header: parse options, call the module, print, map errors
 * to the exit codes of the README (0 ok, 1 property fails, 2 bad input, 3 environment). argv[0] is the subcommand name.
 */
#ifndef PD_CLI_IMPL_H
#define PD_CLI_IMPL_H

#include "core/pd_core.h"

#include <signal.h>

struct pd_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage; /* full --help text (options) */
};

void pd_cli_help(const char *name, FILE *out);
/* Prints "powerdag NAME: msg" to stderr; returns code. */
int pd_cli_fail(const char *name, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Installs the SIGINT/SIGTERM/SIGHUP flag handler (and ignores SIGPIPE); returns the flag, which
 * board code polls (pd_deploy_opts.interrupted, pd_deploy_profile_opts.interrupted). cli/interrupt.c */
volatile sig_atomic_t *pd_cli_catch_interrupts(void);
/* True when argv holds -h/--help anywhere (handled before getopt so every command has --help). */
int pd_cli_wants_help(int argc, char **argv);
struct option;
/* Refuses an option's value naming the option: li is getopt_long's longindex for it (-1 when a short
 * option matched; c is then its letter), so "--gap 2" reads "invalid value '2' for --gap". */
int pd_cli_bad_value(const char *name, const struct option *opts, int li, int c, const char *value);

/* `--board twin` (cli/twin_board.c): fills uri and, when NULL, identity and known_hosts with the
 * running twin's (strings in *tb); 0, or the exit code after printing the message. */
struct pd_cli_twin {
	char uri[256], identity[512], known_hosts[512], cgroup[80];
};
/* --board twin: the URI, key, known_hosts and deploy cpuset name (cgroup may be NULL) of the twin that
 * is up, each unless the caller already has one */
int pd_cli_twin_board(const char *cmd, struct pd_cli_twin *tb, const char **uri, const char **identity,
		      const char **known_hosts, const char **cgroup);

/* Defined in cli/cmd_<name>.c, with the command's own usage text. */
extern const struct pd_cmd pd_cmd_validate;
extern const struct pd_cmd pd_cmd_gen;
extern const struct pd_cmd pd_cmd_dot;
extern const struct pd_cmd pd_cmd_optimize;
extern const struct pd_cmd pd_cmd_check;
extern const struct pd_cmd pd_cmd_simulate;
extern const struct pd_cmd pd_cmd_twin;
extern const struct pd_cmd pd_cmd_deploy;
extern const struct pd_cmd pd_cmd_report;
extern const struct pd_cmd pd_cmd_refit;
extern const struct pd_cmd pd_cmd_demo;
extern const struct pd_cmd pd_cmd_profile;
extern const struct pd_cmd pd_cmd_farm;

#endif
