/* SPDX-License-Identifier: MIT */
/* powerdag optimize - not implemented yet (placeholder until its module lands). */
#include "cli/cli.h"

static int run(int argc, char **argv)
{
	return pd_cli_fail("optimize", PD_EXIT_ENV, "not implemented yet");
}

const struct pd_cmd pd_cmd_optimize = {"optimize", run, "(not implemented yet)", "optimize"};
