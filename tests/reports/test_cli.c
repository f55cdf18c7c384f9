/* SPDX-License-Identifier: MIT */
/*
 * `powerdag report` as a user runs it: exit codes (0 complete or incomplete, 1 --fail-on-miss with
 * misses, 2 bad usage / run directory / plan, 3 unwritable output), stdout forms and output files.
 */
#include "core/pd_core.h"
#include "helper_rundir.h"
#include "pd_test.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *powerdag(void)
{
	const char *p = pd_test_bin("powerdag");
	ck_assert_msg(access(p, X_OK) == 0, "%s is not built (build the powerdag target first)", p);
	return p;
}

static char out[1 << 16];

START_TEST(complete_run_prints_summary_and_writes_files)
{
	static struct syn_run s;
	syn_write(&s);
	const char *bin = powerdag();
	int rc = pd_test_run(out, sizeof(out), "%s report %s --html %s/r.html --csv %s/csv --perfetto %s/t.json", bin,
			     s.dir, s.dir, s.dir, s.dir);
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(strstr(out, "powerdag report: ") && strstr(out, "cam") && !strstr(out, "INCOMPLETE"), "%s", out);
	char path[4096];
	const char *files[] = {"r.html", "csv/instances.csv", "csv/power.csv", "csv/tasks.csv", "t.json"};
	for (size_t i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/%s", s.dir, files[i]);
		struct stat st;
		ck_assert_msg(stat(path, &st) == 0 && st.st_size > 0, "%s not written", path);
	}
	rc = pd_test_run(out, sizeof(out), "%s report --json %s", bin, s.dir);
	ck_assert_int_eq(rc, 0);
	json_t *j = json_loads(out, 0, NULL);
	ck_assert_msg(j != NULL, "stdout is not one JSON object: %.200s", out);
	ck_assert(json_is_number(json_object_get(json_object_get(j, "measured"), "power_w")));
	ck_assert(json_is_number(json_object_get(json_object_get(j, "predicted"), "power_w")));
	ck_assert(json_is_number(json_object_get(j, "power_error_pct")));
	json_decref(j);
	/* the synthetic run misses deadlines */
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s report --fail-on-miss %s >/dev/null", bin, s.dir), 1);
}
END_TEST

/* issue 13 item 8: board strings (deploy.json's board, kernel, arch; the log's agent version) and the
 * platform name reach the terminal escaped. Before, the report printed them raw: a board could clear
 * the user's screen or retitle the terminal through `uname -r`. */
START_TEST(board_strings_are_escaped_in_text)
{
	static struct syn_run s;
	syn_write(&s);
	pd_test_write(s.dir, "deploy.json",
		      "{\"board\": \"ssh://root@b\\u001b[31m:22\", \"kernel\": \"6.1\\u001b]0;pwned\\u0007\\u001b[2J\", "
		      "\"arch\": \"x86\\u009b1m\\n_64\", \"start\": \"2026-12-03T05:00:00Z\"}\n");
	int rc = pd_test_run(out, sizeof(out), "%s report %s 2>&1", powerdag(), s.dir);
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(strchr(out, '\033') == NULL, "an ESC byte reached the terminal:\n%s", out);
	ck_assert_msg(strstr(out, "\xc2\x9b") == NULL, "a C1 CSI reached the terminal:\n%s", out);
	ck_assert_msg(strstr(out, "kernel 6.1\\e]0;pwned\\x07\\e[2J") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "ssh://root@b\\e[31m:22") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "x86\\u{9B}1m\\n_64") != NULL, "%s", out);
	/* --json keeps the bytes (JSON escapes them itself) */
	rc = pd_test_run(out, sizeof(out), "%s report --json %s", powerdag(), s.dir);
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(strcasestr(out, "6.1\\u001b]0;pwned") != NULL, "%.400s", out);
}
END_TEST

/* issue 13 item 1 for the report's outputs: links planted at --html/--perfetto names and at a --csv
 * file are replaced, never written through; a --csv DIR that is a link is refused (exit 3). */
START_TEST(planted_links_are_not_followed)
{
	static struct syn_run s;
	syn_write(&s);
	char victim[600], cmd[4096];
	snprintf(victim, sizeof(victim), "%s/victim", s.dir);
	pd_test_write(s.dir, "victim", "precious\n");
	snprintf(cmd, sizeof(cmd), "ln -s %s %s/r.html && ln -s %s %s/t.json && mkdir %s/csv && ln -s %s %s/csv/power.csv",
		 victim, s.dir, victim, s.dir, s.dir, victim, s.dir);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s", cmd), 0);
	int rc = pd_test_run(out, sizeof(out), "%s report %s --html %s/r.html --csv %s/csv --perfetto %s/t.json 2>&1",
			     powerdag(), s.dir, s.dir, s.dir, s.dir);
	ck_assert_msg(rc == 0, "%s", out);
	char *text;
	size_t n;
	pd_err e = {0};
	ck_assert_int_eq(pd_read_file(victim, &text, &n, 0, &e), 0);
	ck_assert_str_eq(text, "precious\n");
	free(text);
	const char *names[] = {"r.html", "t.json", "csv/power.csv"};
	for (size_t i = 0; i < 3; i++) {
		char p[700];
		snprintf(p, sizeof(p), "%s/%s", s.dir, names[i]);
		struct stat st;
		ck_assert_msg(lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0, "%s is not our file", p);
	}
	snprintf(cmd, sizeof(cmd), "ln -s %s/csv %s/csvlink", s.dir, s.dir);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s", cmd), 0);
	rc = pd_test_run(out, sizeof(out), "%s report %s --csv %s/csvlink 2>&1", powerdag(), s.dir, s.dir);
	ck_assert_msg(rc == 3 && strstr(out, "symbolic link"), "exit %d: %s", rc, out);
}
END_TEST

START_TEST(truncated_run_is_reported_with_exit_0)
{
	static struct syn_run s;
	syn_write(&s);
	syn_truncate(&s, s.log_bytes * 2 / 3);
	int rc = pd_test_run(out, sizeof(out), "%s report %s 2>&1", powerdag(), s.dir);
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(strstr(out, "warning: incomplete run") && strstr(out, "INCOMPLETE RUN"), "%s", out);
}
END_TEST

START_TEST(bad_usage_and_inputs_exit_2_and_write_nothing)
{
	const char *bin = powerdag();
	const char *tmp = pd_test_tmpdir();
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s report /nonexistent/run --html %s/x.html 2>&1", bin, tmp), 2);
	ck_assert_msg(strstr(out, "no such run directory"), "%s", out);
	char path[4096];
	snprintf(path, sizeof(path), "%s/x.html", tmp);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s report 2>/dev/null", bin), 2);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s report %s --bogus 2>/dev/null", bin, tmp), 2);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s report %s %s 2>/dev/null", bin, tmp, tmp), 2);
	pd_test_write(tmp, "plan.yaml", "plan: [1, 2\n");
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s report %s 2>&1", bin, tmp), 2);
	ck_assert_msg(strstr(out, "plan.yaml:"), "no file:line:col in: %s", out);
}
END_TEST

START_TEST(unwritable_output_exits_3)
{
	static struct syn_run s;
	syn_write(&s);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s report %s --html /nonexistent/dir/r.html >/dev/null 2>&1", powerdag(),
				     s.dir),
			 3);
	/* every output is checked before the first is written: no HTML left behind by a bad --perfetto */
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s report %s --html %s/ok.html --perfetto /nonexistent/t.json 2>&1",
				     powerdag(), s.dir, s.dir),
			 3);
	ck_assert_msg(strstr(out, "--perfetto /nonexistent/t.json"), "%s", out);
	char path[4096];
	snprintf(path, sizeof(path), "%s/ok.html", s.dir);
	ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("reports_cli");
	TCase *tc = tcase_create("cli");
	tcase_add_test(tc, complete_run_prints_summary_and_writes_files);
	tcase_add_test(tc, truncated_run_is_reported_with_exit_0);
	tcase_add_test(tc, board_strings_are_escaped_in_text);
	tcase_add_test(tc, planted_links_are_not_followed);
	tcase_add_test(tc, bad_usage_and_inputs_exit_2_and_write_nothing);
	tcase_add_test(tc, unwritable_output_exits_3);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
