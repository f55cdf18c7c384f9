/* SPDX-License-Identifier: MIT */
/* powerdag check - not implemented yet (placeholder until its module lands). */
#include "cli/cli.h"

static int run(int argc, char **argv)
{
	return pd_cli_fail("check", PD_EXIT_ENV, "not implemented yet");
}

const struct pd_cmd pd_cmd_check = {"check", run, "(not implemented yet)", "check"};
