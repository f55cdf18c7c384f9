/* SPDX-License-Identifier: MIT */
/*
 * `powerdag demo` end to end (root; e2e): a private twin (POWERDAG_TWIN_DIR/NETNS/SUBNET), optimize,
 * check, simulate, deploy over SSH, report, twin down. Asserts the exit code, the RUNDIR layout, the
 * report on stdout, and that no twin is left running; then refit --what power measures each island's
 * background (the agent's sampler, iiod and sshd run on the twin's cores beside the jobs).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pd_test.h"

static long size_of(const char *dir, const char *name)
{
	char p[600];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	struct stat st;
	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

START_TEST(demo_runs_and_cleans_up)
{
	const char *tmp = pd_test_tmpdir();
	char out[400], twin[400];
	snprintf(out, sizeof(out), "%s/demo", tmp);
	snprintf(twin, sizeof(twin), "%s/twin", tmp);
	static char stdout_text[1 << 16];
	int rc = pd_test_run(stdout_text, sizeof(stdout_text),
			     "cd %s && POWERDAG_TWIN_DIR=%s POWERDAG_TWIN_NETNS=pddemo%d POWERDAG_TWIN_SUBNET=10.213.%d.0 "
			     "%s demo --out %s 2>%s/demo.err",
			     tmp, twin, (int)getpid() % 100000, 150 + (int)getpid() % 40, pd_test_bin("powerdag"), out, tmp);
	ck_assert_msg(rc == 0, "demo exit %d; stderr in %s/demo.err", rc, tmp);
	ck_assert_ptr_nonnull(strstr(stdout_text, "== demo: twin up"));
	ck_assert_ptr_nonnull(strstr(stdout_text, "predicted vs measured"));
	ck_assert_ptr_nonnull(strstr(stdout_text, "== demo: twin down"));
	const char *files[] = {"plan.yaml", "run.pdlog", "deploy.json", "simulate.json", "agent.stderr", "report.json"};
	for (size_t i = 0; i < 6; i++)
		ck_assert_msg(size_of(out, files[i]) > 0, "%s/%s missing or empty", out, files[i]);
	/* the loop closed once: run 2 in RUNDIR/refit on the platform refit wrote there, and both runs'
	 * error against their plans, rail by rail and in total */
	char out2[420];
	snprintf(out2, sizeof(out2), "%s/refit", out);
	const char *files2[] = {"platform.yaml", "plan.yaml", "run.pdlog", "deploy.json", "report.json"};
	for (size_t i = 0; i < 5; i++)
		ck_assert_msg(size_of(out2, files2[i]) > 0, "%s/%s missing or empty", out2, files2[i]);
	const char *loop = strstr(stdout_text, "== demo: closed loop: each run against its plan");
	ck_assert_msg(loop, "no closed-loop table in\n%s", stdout_text);
	ck_assert_msg(strstr(loop, "VDD_LITTLE") && strstr(loop, "VDD_BIG") && strstr(loop, "total"), "%s", loop);
	ck_assert_msg(strstr(stdout_text, "== demo: twin down") > loop, "the twin went down before run 2 ended");
	/* the twin is gone: status reports nothing running (exit 3) */
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s twin status --state %s >/dev/null 2>&1", pd_test_bin("powerdag"), twin), 3);
	/* the run's BUSY records against its jobs: a background on both islands, a few % of a core (the
	 * sampler wakes on every plan CPU at 100 Hz; 0.010-0.020 measured), never more than its CPUs */
	rc = pd_test_run(stdout_text, sizeof(stdout_text), "%s refit %s --what power -o %s/fitted.yaml --json 2>%s/refit.err",
			 pd_test_bin("powerdag"), out, tmp, tmp);
	ck_assert_msg(rc == 0, "refit exit %d; stderr in %s/refit.err", rc, tmp);
	json_t *j = json_loads(stdout_text, 0, NULL);
	ck_assert_msg(j != NULL, "refit --json: %.300s", stdout_text);
	json_t *bg = json_object_get(j, "background");
	ck_assert_uint_eq(json_array_size(bg), 2); /* little and big: the plan places tasks on both */
	for (size_t i = 0; i < json_array_size(bg); i++) {
		double b = json_real_value(json_object_get(json_array_get(bg, i), "new"));
		ck_assert_msg(b > 0.001 && b < 0.5, "island %s background %g",
			      json_string_value(json_object_get(json_array_get(bg, i), "island")), b);
	}
	json_decref(j);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("deployer_demo_e2e");
	TCase *tc = tcase_create("demo");
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, demo_runs_and_cleans_up);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
