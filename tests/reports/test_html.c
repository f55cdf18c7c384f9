/* SPDX-License-Identifier: MIT */
/*
 * The HTML report: self-contained (no script, no fetch), one plot per rail / DAG plus the misses,
 * Gantt and DAG views, the incomplete banner; and it renders in headless Chromium without console
 * errors. Without Chromium installed the rendering test says so and is skipped (apt-get install
 * chromium).
 */
#include "helper_rundir.h"
#include "pd_test.h"
#include "reports/pd_reports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *write_html(const char *dir, const char *name)
{
	pd_err e = {0};
	pd_report *r = pd_report_open(dir, &e);
	ck_assert_msg(r != NULL, "%s", e.msg);
	static char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(pd_report_write_html(r, path, &e), 0);
	pd_report_free(r);
	char *text;
	size_t len;
	ck_assert_int_eq(pd_read_file(path, &text, &len, 0, &e), 0);
	return text;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

START_TEST(html_is_self_contained_with_every_plot)
{
	static struct syn_run s;
	syn_write(&s);
	char *html = write_html(s.dir, "report.html");
	ck_assert(strncmp(html, "<!DOCTYPE html>", 15) == 0);
	ck_assert_uint_eq(count(html, "<script"), 0);
	ck_assert_uint_eq(count(html, "<link"), 0);
	ck_assert_uint_eq(count(html, " src="), 0);
	/* the only URL is the SVG namespace name, which is never fetched */
	ck_assert_uint_eq(count(html, "http"), count(html, "http://www.w3.org/2000/svg"));
	/* 3 rails + total, 2 CDFs, misses, Gantt, 2 DAG layouts */
	ck_assert_uint_eq(count(html, "<svg"), 4 + 2 + 1 + 1 + 2);
	ck_assert_uint_eq(count(html, "<svg"), count(html, "</svg>"));
	ck_assert_ptr_nonnull(strstr(html, "D = 8 ms"));       /* cam's deadline line */
	ck_assert_ptr_nonnull(strstr(html, "predicted 0.480 W")); /* VDD_CPU's model level */
	ck_assert_ptr_nonnull(strstr(html, "predicted 0.575 W")); /* VDD_GPU's */
	ck_assert_ptr_nonnull(strstr(html, "<title>ctl/law #")); /* a GPU job in the Gantt window */
	ck_assert_ptr_nonnull(strstr(html, "id='predicted'"));
	ck_assert_ptr_null(strstr(html, "id='incomplete'"));
	/* every job in the Gantt window is a rect with a tooltip naming it */
	ck_assert_uint_gt(count(html, "<title>cam/detect #"), 0);
	free(html);

	syn_truncate(&s, s.end_record_offset / 2);
	html = write_html(s.dir, "partial.html");
	ck_assert_ptr_nonnull(strstr(html, "id='incomplete'"));
	free(html);
}
END_TEST

static const char *find_chromium(void)
{
	static const char *const cands[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"};
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (access(cands[i], X_OK) == 0)
			return cands[i];
	return NULL;
}

/* Width and height from a PNG's IHDR chunk (big endian at offsets 16 and 20). */
static void png_size(const char *path, unsigned *w, unsigned *h, long *bytes)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "no screenshot %s", path);
	unsigned char b[24];
	ck_assert_int_eq(fread(b, 1, 24, f), 24);
	ck_assert(memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0);
	*w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 | b[19];
	*h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 | b[23];
	fseek(f, 0, SEEK_END);
	*bytes = ftell(f);
	fclose(f);
}

START_TEST(html_renders_in_headless_chromium)
{
	const char *chromium = find_chromium();
	if (!chromium) {
		fprintf(stderr, "SKIPPED html_renders_in_headless_chromium: chromium is not installed "
				"(apt-get install -y chromium; the CI must install it in .ci/run)\n");
		return;
	}
	static struct syn_run s;
	syn_write(&s);
	free(write_html(s.dir, "report.html"));
	char out[256];
	int rc = pd_test_run(out, sizeof(out),
			     "cd %s && %s --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
			     "--disable-background-networking --disable-component-update --disable-sync "
			     "--user-data-dir=%s/profile --enable-logging=stderr --v=0 --screenshot=%s/shot.png "
			     "--window-size=1280,2000 file://%s/report.html 2>%s/chromium.log",
			     s.dir, chromium, s.dir, s.dir, s.dir, s.dir);
	ck_assert_msg(rc == 0, "chromium exited %d (see %s/chromium.log)", rc, s.dir);
	unsigned w, h;
	long bytes;
	char path[4096];
	snprintf(path, sizeof(path), "%s/shot.png", s.dir);
	png_size(path, &w, &h, &bytes);
	ck_assert_uint_eq(w, 1280);
	ck_assert_uint_eq(h, 2000);
	/* a blank or unstyled page compresses to a few kB; the plots make it far larger */
	ck_assert_msg(bytes > 60000, "screenshot only %ld bytes: nothing drawn?", bytes);
	/* console messages are logged as "CONSOLE(line)"; page errors as "Uncaught" */
	char *log;
	size_t len;
	pd_err e = {0};
	snprintf(path, sizeof(path), "%s/chromium.log", s.dir);
	ck_assert_int_eq(pd_read_file(path, &log, &len, 0, &e), 0);
	ck_assert_msg(!strstr(log, "CONSOLE") && !strstr(log, "Uncaught"), "console output:\n%s", log);
	free(log);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("reports_html");
	TCase *tc = tcase_create("html");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, html_is_self_contained_with_every_plot);
	tcase_add_test(tc, html_renders_in_headless_chromium);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
