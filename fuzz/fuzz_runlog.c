/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the run-log reader (runlog/read.c) and everything that reads what it
 * returns: `powerdag-agent dump` in every view, and `powerdag report` in every form on a run directory
 * whose run.pdlog is the input (plan.yaml of a real twin run, fuzz/rundir/). Most inputs libFuzzer
 * makes from the seeds keep their CRCs only by chance, so the seeds include hostile logs with valid
 * CRCs (tests/reports/test_hostile_runlog.c writes the same kinds byte by byte) and real logs from the
 * agent (fuzz/corpus/fuzz_runlog/).
 */
#include "runlog/pd_runlog.h"
#include "fuzz/fuzz_rundir.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_rundir_init(0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null_out;
	if (!null_out && !(null_out = fopen("/dev/null", "w")))
		abort();
	pd_err e = {0};
	pd_runlog *r = pd_runlog_from_bytes(data, size, "fuzz.pdlog", &e);
	if (r) {
		static const char *const views[] = {"summary", "instances", "jobs", "power", "gaps", "steal", "busy", "foreign"};
		for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
			if (pd_runlog_dump(r, null_out, views[i]))
				abort();
		pd_runlog_free(r);
	}
	fz_put("run.pdlog", data, size);
	fz_report_all();
	return 0;
}
