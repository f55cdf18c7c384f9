/* SPDX-License-Identifier: MIT */
/* powerdag report - not implemented yet (placeholder until its module lands). */
#include "cli/cli.h"

static int run(int argc, char **argv)
{
	return pd_cli_fail("report", PD_EXIT_ENV, "not implemented yet");
}

const struct pd_cmd pd_cmd_report = {"report", run, "(not implemented yet)", "report"};
