/* SPDX-License-Identifier: MIT */
/*
 * Fault injection on the board twin (root; labelled e2e/slow): the real agent, the real SSH path, the
 * twin's kernel-validated board files. At each step of a deploy a fault is injected (SSH drop, agent
 * killed, admission refused, a failing frequency write, Ctrl-C) and the test asserts that the board
 * state read back after the deploy equals the one read before it, and that RUNDIR holds what was
 * collected (the run log is read back by `powerdag report`).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deployer/pd_deployer.h"
#include "pd_test.h"

static char state_dir[256], netns[32], subnet[32];
static char uri[256], identity[512], known_hosts[512], platform[512], plan_path[512];
static int twin_ok;

static void twin_up(void)
{
	snprintf(state_dir, sizeof(state_dir), "%s/twin", pd_test_tmpdir());
	snprintf(netns, sizeof(netns), "pdfault%d", (int)getpid() % 100000);
	snprintf(subnet, sizeof(subnet), "10.213.%d.0", 100 + (int)getpid() % 100);
	char out[8192] = {0};
	int rc = pd_test_run(out, sizeof(out), "%s twin up --state %s --netns %s --subnet %s --json 2>&1",
			     pd_test_bin("powerdag"), state_dir, netns, subnet);
	if (rc != 0) {
		fprintf(stderr, "twin up failed (%d): %s\n", rc, out);
		return;
	}
	json_error_t je;
	json_t *j = json_loads(out, 0, &je);
	if (!j)
		return;
	snprintf(uri, sizeof(uri), "%s", json_string_value(json_object_get(j, "uri")));
	snprintf(identity, sizeof(identity), "%s", json_string_value(json_object_get(j, "identity")));
	snprintf(known_hosts, sizeof(known_hosts), "%s", json_string_value(json_object_get(j, "known_hosts")));
	snprintf(platform, sizeof(platform), "%s", json_string_value(json_object_get(j, "platform")));
	json_decref(j);
	snprintf(plan_path, sizeof(plan_path), "%s/plan.yaml", state_dir);
	rc = pd_test_run(NULL, 0, "%s optimize %s %s --solver heuristic -o %s >/dev/null 2>&1",
			 pd_test_bin("powerdag"), pd_test_src("dags/examples/twin.yaml"), platform, plan_path);
	twin_ok = rc == 0;
}

static void twin_down(void)
{
	pd_test_run(NULL, 0, "%s twin down --state %s >/dev/null 2>&1", pd_test_bin("powerdag"), state_dir);
}

static pd_buf board_state(void)
{
	struct pd_deploy_transport_opts to = {.identity = identity, .known_hosts = known_hosts};
	pd_deploy_transport *t;
	pd_err e = {0};
	ck_assert_msg(pd_deploy_transport_open(uri, &to, &t, &e) == 0, "%s", e.msg);
	pd_deploy_board *b = pd_deploy_board_new(t, NULL);
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *p = pd_plan_load_file(plan_path, &d);
	ck_assert_ptr_nonnull(p);
	pd_buf s;
	pd_buf_init(&s);
	ck_assert_msg(pd_deploy_board_state(b, p, &s, &e) == 0, "%s", e.msg);
	pd_plan_free(p);
	pd_diags_free(&d);
	pd_deploy_board_free(b);
	pd_deploy_transport_close(t);
	return s;
}

/* The twin shares the host kernel's cpusets: another run on this machine (an agent test, a deploy)
 * may hold exclusive cpusets for a while. Wait until pre-flight passes, at most 60 s, and fail with
 * its problems otherwise. */
static void wait_board_free(void)
{
	struct pd_deploy_transport_opts to = {.identity = identity, .known_hosts = known_hosts};
	pd_deploy_transport *t;
	pd_err e = {0};
	ck_assert_msg(pd_deploy_transport_open(uri, &to, &t, &e) == 0, "%s", e.msg);
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *p = pd_plan_load_file(plan_path, &d);
	ck_assert_ptr_nonnull(p);
	pd_buf pr;
	pd_buf_init(&pr);
	int rc = 1;
	for (int i = 0; i < 120 && rc; i++) {
		pd_deploy_board *b = pd_deploy_board_new(t, NULL);
		pr.len = 0;
		rc = pd_deploy_board_preflight(b, p, ".", &pr, &e);
		pd_deploy_board_free(b);
		if (rc)
			usleep(500000);
	}
	ck_assert_msg(rc == 0, "pre-flight on the twin keeps failing: %s", pr.data ? pr.data : e.msg);
	pd_buf_free(&pr);
	pd_plan_free(p);
	pd_diags_free(&d);
	pd_deploy_transport_close(t);
}

struct fcase {
	const char *fault;
	int rc;
	bool has_log;
	const char *msg; /* expected in the error */
};
static const struct fcase cases[] = {
	{NULL, 0, true, NULL},
	{"freq:fail", 3, false, "injected fault"},        /* a frequency write fails mid-way */
	{"freq:drop", 3, false, "lost"},                  /* SSH drop while configuring */
	{"cpuset:drop", 3, false, "lost"},
	{"bandwidth:fail", 3, false, "injected fault"},
	{"upload:drop", 0, true, NULL},                   /* reconnect, carry on */
	{"start:admission", 3, false, "agent exited with 3"}, /* the kernel refuses the bandwidth */
	{"stream:drop", 0, true, NULL},                   /* drop during the run: nothing lost */
	{"stream:kill-agent", 3, true, "killed by signal 9"},
	{"stream:sigint", 3, true, "interrupted"},
	{"stop:drop", 0, true, NULL},
	{"fetch:fail", 3, true, "injected fault"},
};

START_TEST(fault_on_twin)
{
	ck_assert_msg(twin_ok, "the twin could not be started (root, netns, sshd, fuse needed)");
	const struct fcase *fc = &cases[_i];
	wait_board_free();
	pd_buf before = board_state();
	char out[512];
	snprintf(out, sizeof(out), "%s/run", pd_test_tmpdir());
	volatile sig_atomic_t flag = 0;
	struct pd_deploy_opts o = {
		.plan_path = plan_path,
		.board_uri = uri,
		.duration_ns = 2 * PD_NS_PER_S,
		.out_dir = out,
		.tp = {.identity = identity, .known_hosts = known_hosts},
		.agent_path = pd_test_bin("agents/powerdag-agent"),
		.fault = fc->fault,
		.interrupted = &flag,
	};
	struct pd_deploy_result r;
	pd_err e = {0};
	int rc = pd_deploy_run(&o, &r, &e);
	ck_assert_msg(rc == fc->rc, "%s: exit %d (%s)", fc->fault ? fc->fault : "none", rc, e.msg);
	if (fc->msg)
		ck_assert_msg(strstr(e.msg, fc->msg) != NULL, "%s: '%s' lacks '%s'", fc->fault, e.msg, fc->msg);
	ck_assert(r.restored);
	pd_buf after = board_state();
	ck_assert_str_eq(before.data, after.data);
	char p[700];
	struct stat st;
	snprintf(p, sizeof(p), "%s/deploy.json", out);
	ck_assert_int_eq(stat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/plan.yaml", out);
	ck_assert_int_eq(stat(p, &st), 0);
	if (fc->has_log) {
		/* what was collected is a readable run: the report finds job instances in it */
		char rep[65536] = {0};
		pd_test_run(rep, sizeof(rep), "%s report %s --json 2>/dev/null", pd_test_bin("powerdag"), out);
		json_error_t je;
		json_t *j = json_loads(rep, 0, &je);
		ck_assert_msg(j != NULL, "%s: report --json: %s", fc->fault, je.text);
		json_int_t inst = json_integer_value(json_object_get(json_object_get(j, "measured"), "instances"));
		ck_assert_msg(inst > 0, "%s: no instances in the collected run", fc->fault);
		json_decref(j);
	}
	if (fc->fault && strstr(fc->fault, "drop") && fc->rc == 0)
		ck_assert_int_ge(r.reconnects, 1);
	pd_buf_free(&before), pd_buf_free(&after);
}
END_TEST

/* issue 13 item 7 on the twin: its host key listed in known_hosts and also on an "@revoked" line. The
 * CLI refuses to connect (exit 3, the message names the line), the board is not touched and RUNDIR
 * holds only what a refused connection leaves (plan.yaml, deploy.json). Before, libssh's parser skipped
 * the marker line and the deploy ran. */
START_TEST(revoked_twin_key_refused)
{
	ck_assert_msg(twin_ok, "the twin could not be started (root, netns, sshd, fuse needed)");
	wait_board_free();
	pd_buf before = board_state();
	const char *tmp = pd_test_tmpdir();
	char kh[600], out[600], cmd[4096], text[8192] = {0};
	snprintf(kh, sizeof(kh), "%s/known_hosts", tmp);
	snprintf(out, sizeof(out), "%s/run", tmp);
	/* the twin's line, then the same key revoked */
	snprintf(cmd, sizeof(cmd), "cp %s %s && awk '{print \"@revoked * \" $2 \" \" $3}' %s >> %s", known_hosts, kh,
		 known_hosts, kh);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s", cmd), 0);
	int rc = pd_test_run(text, sizeof(text), "%s deploy %s --board %s --identity %s --known-hosts %s --agent %s "
				     "--duration 1s --out %s 2>&1",
			     pd_test_bin("powerdag"), plan_path, uri, identity, kh, pd_test_bin("agents/powerdag-agent"), out);
	ck_assert_msg(rc == PD_EXIT_ENV, "exit %d: %s", rc, text);
	ck_assert_msg(strstr(text, "REVOKED") && strstr(text, "known_hosts:2"), "%s", text);
	pd_buf after = board_state();
	ck_assert_str_eq(before.data, after.data);
	char p[700];
	snprintf(p, sizeof(p), "%s/run.pdlog", out);
	ck_assert_int_ne(access(p, F_OK), 0);
	pd_buf_free(&before), pd_buf_free(&after);
}
END_TEST

/* issue 13 item 2 on the twin: a plan whose plugin climbs out of the work directory
 * (plugin:../x.so:run, /tmp/x.so being writable by anyone on the board) and one naming a missing
 * library are refused by pre-flight, which asks the agent on the board; exit 3, board untouched. */
START_TEST(plugin_escape_refused_on_twin)
{
	ck_assert_msg(twin_ok, "the twin could not be started (root, netns, sshd, fuse needed)");
	wait_board_free();
	pd_buf before = board_state();
	const char *tmp = pd_test_tmpdir();
	char plan[600], out[600];
	snprintf(plan, sizeof(plan), "%s/plugin.plan.yaml", tmp);
	snprintf(out, sizeof(out), "%s/run", tmp);
	ck_assert_int_eq(pd_test_run(NULL, 0, "sed -e '0,/work: builtin:spin/s//work: \"plugin:..\\/x.so:run\"/' "
				     "-e '0,/work: builtin:spin/s//work: \"plugin:\\/nonexistent\\/w.so:run\"/' %s > %s",
				     plan_path, plan), 0);
	struct pd_deploy_opts o = {
		.plan_path = plan,
		.board_uri = uri,
		.duration_ns = PD_NS_PER_S,
		.out_dir = out,
		.tp = {.identity = identity, .known_hosts = known_hosts},
		.agent_path = pd_test_bin("agents/powerdag-agent"),
	};
	struct pd_deploy_result r;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_run(&o, &r, &e), PD_EXIT_ENV);
	ck_assert_msg(strstr(e.msg, "pre-flight found 2 problem(s)"), "%s", e.msg);
	char p[700], *text;
	size_t n;
	snprintf(p, sizeof(p), "%s/deploy.json", out);
	ck_assert_int_eq(pd_read_file(p, &text, &n, 0, &e), 0);
	ck_assert_msg(strstr(text, "plugin ../x.so: a '..' component is refused") &&
			      strstr(text, "/nonexistent/w.so: No such file"), "%s", text);
	free(text);
	pd_buf after = board_state();
	ck_assert_str_eq(before.data, after.data);
	pd_buf_free(&before), pd_buf_free(&after);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("deployer_fault_e2e");
	TCase *tc = tcase_create("twin");
	tcase_add_unchecked_fixture(tc, twin_up, twin_down);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, revoked_twin_key_refused);
	tcase_add_test(tc, plugin_escape_refused_on_twin);
	tcase_add_loop_test(tc, fault_on_twin, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
