/* SPDX-License-Identifier: MIT */
/*
 * fuzz_rundir.h - shared by the report fuzz targets (fuzz_runlog, fuzz_deploy): a scratch run
 * directory made once per process from fuzz/rundir/ (plan.yaml and run.pdlog of a real deployment on
 * the board twin), in which each input replaces one file before the whole report is loaded and written
 * in every form (text, JSON, CSV, HTML, Perfetto). Every output goes to the scratch directory, removed
 * at exit. Static state is fine here: a fuzz target is one process driven by libFuzzer.
 */
#ifndef PD_FUZZ_RUNDIR_H
#define PD_FUZZ_RUNDIR_H

#include "core/pd_core.h"
#include "reports/pd_reports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fz_dir[64];

static void fz_path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", fz_dir, name);
}

static void fz_put(const char *name, const void *data, size_t len)
{
	char p[128];
	fz_path(p, sizeof(p), name);
	FILE *f = fopen(p, "wb");
	if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f))
		abort();
}

static void fz_copy_seed(const char *name)
{
	char src[4096], *data;
	size_t len;
	pd_err e = {0};
	snprintf(src, sizeof(src), "%s/%s", PD_FUZZ_RUNDIR, name);
	if (pd_read_file(src, &data, &len, (size_t)1 << 26, &e))
		abort();
	fz_put(name, data, len);
	free(data);
}

static void fz_cleanup(void)
{
	static const char *const files[] = {"plan.yaml", "run.pdlog", "deploy.json", "report.html",
					    "trace.json", "csv/instances.csv", "csv/power.csv", "csv/tasks.csv", "csv"};
	char p[128];
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		fz_path(p, sizeof(p), files[i]);
		remove(p);
	}
	rmdir(fz_dir);
}

/* Makes the scratch run directory with the seed's plan.yaml, and its run.pdlog when with_log. */
static void fz_rundir_init(int with_log)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(fz_dir, sizeof(fz_dir), "%.40s/pdfuzz.XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	if (!mkdtemp(fz_dir))
		abort();
	atexit(fz_cleanup);
	fz_copy_seed("plan.yaml");
	if (with_log)
		fz_copy_seed("run.pdlog");
}

/* Loads the report of the scratch directory and writes it in every form. A refusal is fine (bad
 * input); a crash, a sanitizer report or a form that fails on a report that loaded is not. */
static void fz_report_all(void)
{
	pd_err e = {0};
	pd_report *r = pd_report_open(fz_dir, &e);
	if (!r)
		return;
	char p[128];
	pd_buf b;
	pd_buf_init(&b);
	if (pd_report_text(r, &b, &e) || pd_report_json(r, &b, &e))
		abort();
	free(b.data);
	fz_path(p, sizeof(p), "report.html");
	if (pd_report_write_html(r, p, &e))
		abort();
	fz_path(p, sizeof(p), "trace.json");
	if (pd_report_write_perfetto(r, p, &e))
		abort();
	fz_path(p, sizeof(p), "csv");
	if (pd_report_write_csv(r, p, &e))
		abort();
	pd_report_free(r);
}

#endif
