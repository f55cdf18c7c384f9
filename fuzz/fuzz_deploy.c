/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: deploy.json as `powerdag report` reads it (reports/load.c), in a run directory
 * that is otherwise a real twin run (fuzz/rundir/: plan.yaml, run.pdlog); the report is written in
 * every form. Seeds: fuzz/corpus/fuzz_deploy/ (the deployer's own deploy.json and hostile variants).
 */
#include "fuzz/fuzz_rundir.h"

#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_rundir_init(1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_put("deploy.json", data, size);
	fz_report_all();
	return 0;
}
