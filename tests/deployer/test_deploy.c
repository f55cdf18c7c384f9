/* SPDX-License-Identifier: MIT */
/*
 * The deploy sequence with the local transport on a fake sysfs tree. The agent is this test binary
 * itself run as `TEST run PLAN --out DIR --duration S ...` (main() below), because the real agent
 * needs the real kernel's cgroups, which a fake tree cannot give it; the real agent is exercised on
 * the twin by test_fault_e2e. The stand-in streams numbered lines into DIR/run.pdlog, writes to
 * stderr, and misbehaves on request (FAKE_AGENT=admission|crash). As `TEST check-foreign PLAN` it
 * answers the deployer's pre-flight of other SCHED_DEADLINE threads: none, or one with
 * FAKE_AGENT=foreign (the real check runs in agents_test_foreign).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "helper_fakesys.h"
#include "pd_test.h"

static volatile sig_atomic_t stop_agent;
static void on_term(int s) { (void)s; stop_agent = 1; }

static int fake_agent(int argc, char **argv)
{
	const char *out = NULL;
	double dur = 1;
	for (int i = 2; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--out"))
			out = argv[i + 1];
		if (!strcmp(argv[i], "--duration"))
			dur = atof(argv[i + 1]);
	}
	const char *mode = getenv("FAKE_AGENT");
	fprintf(stderr, "fake agent: %s\n", argv[2]);
	if (mode && !strcmp(mode, "admission")) {
		fprintf(stderr, "powerdag-agent: task 'g/a': admission refused (EBUSY)\n");
		return 3;
	}
	signal(SIGTERM, on_term);
	char path[1024];
	snprintf(path, sizeof(path), "%s/run.pdlog", out);
	FILE *f = fopen(path, "w");
	if (!f)
		return 3;
	for (int i = 0; i < dur * 50 && !stop_agent; i++) {
		fprintf(f, "record %d\n", i);
		fflush(f);
		/* another deploy on the same kernel ends (it restores the root's balance it found, 1), or
		 * someone drops a file into /lib/firmware: both while this run lasts */
		const char *fr = getenv("FAKE_ROOT");
		if (mode && fr && i == 5 && (!strcmp(mode, "neighbour") || !strcmp(mode, "firmware"))) {
			char p[1024];
			snprintf(p, sizeof(p), "%s%s", fr, !strcmp(mode, "neighbour") ? "/sys/fs/cgroup/cpuset/cpuset.sched_load_balance"
										     : "/lib/firmware/new.bin");
			FILE *g = fopen(p, "w");
			if (g)
				fputs("1\n", g), fclose(g);
		}
		if (mode && !strcmp(mode, "crash") && i == 10)
			abort();
		usleep(20000);
	}
	fprintf(f, "end\n");
	fclose(f);
	return 0;
}

static char self[1024];
static const char *root;
static char plan_dir[256], plan_path[400], out_dir[400];

static void setup(void)
{
	root = fakesys_make();
	fakesys_set_cur(root, "policy0", "800000");
	fakesys_set_cur(root, "policy2", "200000");
	pd_plan *p = fakesys_plan(plan_dir, sizeof(plan_dir));
	snprintf(plan_path, sizeof(plan_path), "%s/plan.yaml", plan_dir);
	pd_err e = {0};
	ck_assert_msg(pd_plan_write_file(p, plan_path, &e) == 0, "%s", e.msg);
	pd_plan_free(p);
	snprintf(out_dir, sizeof(out_dir), "%s/run", pd_test_tmpdir());
	unsetenv("FAKE_AGENT");
	unsetenv("FAKE_ROOT");
}

static void opts(struct pd_deploy_opts *o, volatile sig_atomic_t *flag)
{
	memset(o, 0, sizeof(*o));
	o->plan_path = plan_path;
	o->board_uri = "local";
	o->duration_ns = 600 * PD_NS_PER_MS;
	o->out_dir = out_dir;
	o->agent_path = self;
	o->board.root = root;
	o->board.plain_files = true;
	o->interrupted = flag;
}

static pd_buf state_of(void)
{
	pd_deploy_transport *t;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_transport_open("local", NULL, &t, &e), 0);
	struct pd_deploy_board_opts bo = {.root = root, .plain_files = true};
	pd_deploy_board *b = pd_deploy_board_new(t, &bo);
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *p = pd_plan_load_file(plan_path, &d);
	ck_assert_ptr_nonnull(p);
	pd_buf s;
	pd_buf_init(&s);
	ck_assert_int_eq(pd_deploy_board_state(b, p, &s, &e), 0);
	pd_plan_free(p);
	pd_diags_free(&d);
	pd_deploy_board_free(b);
	pd_deploy_transport_close(t);
	return s;
}

static json_t *meta(void)
{
	char p[600];
	snprintf(p, sizeof(p), "%s/deploy.json", out_dir);
	json_error_t je;
	json_t *j = json_load_file(p, 0, &je);
	ck_assert_msg(j != NULL, "deploy.json: %s", je.text);
	return j;
}

static long file_size(const char *name)
{
	char p[600];
	snprintf(p, sizeof(p), "%s/%s", out_dir, name);
	struct stat st;
	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

START_TEST(deploy_success)
{
	pd_buf before = state_of();
	struct pd_deploy_opts o;
	opts(&o, NULL);
	struct pd_deploy_result r;
	pd_err e = {0};
	ck_assert_msg(pd_deploy_run(&o, &r, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(r.agent_status, 0);
	ck_assert(r.restored);
	pd_buf after = state_of();
	ck_assert_str_eq(before.data, after.data);
	/* every record the agent wrote arrived, in order, ending with "end" */
	char p[600];
	snprintf(p, sizeof(p), "%s/run.pdlog", out_dir);
	char *log;
	size_t n;
	ck_assert_int_eq(pd_read_file(p, &log, &n, 0, &e), 0);
	ck_assert_uint_eq(r.log_bytes, n);
	ck_assert(n > 20 && !strncmp(log, "record 0\nrecord 1\n", 18));
	ck_assert_str_eq(log + n - 4, "end\n");
	free(log);
	ck_assert_int_gt(file_size("agent.stderr"), 10);
	ck_assert_int_gt(file_size("plan.yaml"), 100);
	json_t *j = meta();
	ck_assert_str_eq(json_string_value(json_object_get(j, "result")), "ok");
	ck_assert_str_eq(json_string_value(json_object_get(j, "board")), "local");
	ck_assert_str_eq(json_string_value(json_object_get(j, "arch")), "x86_64");
	json_t *rs = json_object_get(j, "restore");
	ck_assert(json_is_true(json_object_get(rs, "done")));
	ck_assert(json_is_true(json_object_get(rs, "state_equal")));
	ck_assert_uint_gt(json_array_size(json_object_get(j, "changes")), 10);
	/* the board work directory is gone */
	const char *rd = json_string_value(json_object_get(j, "remote_dir"));
	ck_assert_int_ne(access(rd, F_OK), 0);
	json_decref(j);
	pd_buf_free(&before), pd_buf_free(&after);
}
END_TEST

/* A deploy while "someone else" (the fake agent in MODE, at its 6th record) changes the fake board. */
static int run_beside(const char *mode, struct pd_deploy_result *r, pd_err *e)
{
	setenv("FAKE_AGENT", mode, 1);
	setenv("FAKE_ROOT", root, 1);
	struct pd_deploy_opts o;
	opts(&o, NULL);
	return pd_deploy_run(&o, r, e);
}

/* Boards that share one kernel (namespace twins with --host-cpus) deploy at once: a kernel-wide value
 * this deploy found already changed and did not touch, changed back by the other deploy during the
 * run, is listed as changed meanwhile - the restore is not failed for it. */
START_TEST(deploy_excuses_a_kernel_wide_change_by_another)
{
	char p[600];
	snprintf(p, sizeof(p), "%s/sys/fs/cgroup/cpuset/cpuset.sched_load_balance", root);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs("0\n", f); /* the other deploy's P-EDF root domains */
	fclose(f);
	struct pd_deploy_result r;
	pd_err e = {0};
	ck_assert_msg(run_beside("neighbour", &r, &e) == 0, "%s", e.msg);
	ck_assert(r.restored);
	json_t *j = meta();
	json_t *rs = json_object_get(j, "restore");
	ck_assert(json_is_true(json_object_get(rs, "state_equal")));
	json_t *mw = json_object_get(rs, "changed_meanwhile");
	ck_assert_uint_eq(json_array_size(mw), 1);
	ck_assert_str_eq(json_string_value(json_array_get(mw, 0)),
			 "/sys/fs/cgroup/cpuset/cpuset.sched_load_balance=1 (was 0)");
	json_decref(j);
}
END_TEST

/* Anything else that differs after the restore still makes the states unequal. */
START_TEST(deploy_flags_any_other_change)
{
	struct pd_deploy_result r;
	pd_err e = {0};
	run_beside("firmware", &r, &e); /* the verdict is in deploy.json */
	json_t *j = meta();
	json_t *rs = json_object_get(j, "restore");
	ck_assert(json_is_false(json_object_get(rs, "state_equal")));
	ck_assert_uint_eq(json_array_size(json_object_get(rs, "changed_meanwhile")), 0);
	json_decref(j);
}
END_TEST

START_TEST(deploy_no_restore_keeps_config)
{
	struct pd_deploy_opts o;
	opts(&o, NULL);
	o.no_restore = true;
	struct pd_deploy_result r;
	pd_err e = {0};
	ck_assert_msg(pd_deploy_run(&o, &r, &e) == 0, "%s", e.msg);
	char p[600];
	snprintf(p, sizeof(p), "%s/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", root);
	char *g;
	size_t n;
	ck_assert_int_eq(pd_read_file(p, &g, &n, 0, &e), 0);
	ck_assert_str_eq(g, "userspace");
	free(g);
	json_t *j = meta();
	ck_assert(json_is_false(json_object_get(json_object_get(j, "restore"), "requested")));
	json_decref(j);
}
END_TEST

START_TEST(preflight_failure_touches_nothing)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -r %s/sys/class/devfreq/gpu0", root);
	ck_assert_int_eq(system(cmd), 0);
	pd_buf before = state_of();
	struct pd_deploy_opts o;
	opts(&o, NULL);
	struct pd_deploy_result r;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_run(&o, &r, &e), PD_EXIT_ENV);
	ck_assert_ptr_nonnull(strstr(e.msg, "pre-flight found 1 problem"));
	pd_buf after = state_of();
	ck_assert_str_eq(before.data, after.data);
	json_t *j = meta();
	json_t *pr = json_object_get(j, "preflight_problems");
	ck_assert_uint_eq(json_array_size(pr), 1);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(pr, 0)), "gpu0"));
	ck_assert_uint_eq(json_array_size(json_object_get(j, "changes")), 0);
	json_decref(j);
	ck_assert_int_eq(file_size("run.pdlog"), -1);
	pd_buf_free(&before), pd_buf_free(&after);
}
END_TEST

/* Another process' SCHED_DEADLINE thread on the plan's CPUs (the agent's check-foreign on the board):
 * a pre-flight problem, the board untouched, no run. */
START_TEST(foreign_reservation_refused_before_touching)
{
	pd_buf before = state_of();
	setenv("FAKE_AGENT", "foreign", 1);
	struct pd_deploy_opts o;
	opts(&o, NULL);
	struct pd_deploy_result r;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_run(&o, &r, &e), PD_EXIT_ENV);
	ck_assert_msg(strstr(e.msg, "pre-flight found 1 problem"), "%s", e.msg);
	pd_buf after = state_of();
	ck_assert_str_eq(before.data, after.data);
	json_t *j = meta();
	json_t *pr = json_object_get(j, "preflight_problems");
	ck_assert_uint_eq(json_array_size(pr), 1);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(pr, 0)), "thread 77 'rival'"));
	ck_assert_uint_eq(json_array_size(json_object_get(j, "changes")), 0);
	json_decref(j);
	ck_assert_int_eq(file_size("run.pdlog"), -1);
	pd_buf_free(&before), pd_buf_free(&after);
}
END_TEST

START_TEST(wrong_agent_refused_before_touching)
{
	pd_buf before = state_of();
	struct pd_deploy_opts o;
	opts(&o, NULL);
	o.agent_path = plan_path; /* not an ELF binary */
	struct pd_deploy_result r;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_run(&o, &r, &e), PD_EXIT_ENV);
	ck_assert_ptr_nonnull(strstr(e.msg, "not an executable ELF"));
	pd_buf after = state_of();
	ck_assert_str_eq(before.data, after.data);
	pd_buf_free(&before), pd_buf_free(&after);
	/* the search names every place it looked */
	char out[4096];
	ck_assert_int_eq(pd_deploy_find_agent(NULL, "/nonexistent/bin/powerdag", "aarch64", out, sizeof(out), &e),
			 PD_EXIT_ENV);
	ck_assert_ptr_nonnull(strstr(e.msg, "/nonexistent/bin/powerdag-agent-aarch64 (absent)"));
	ck_assert_str_eq(pd_elf_arch(self), "x86_64");
}
END_TEST

START_TEST(bad_plan_is_usage_error)
{
	struct pd_deploy_opts o;
	opts(&o, NULL);
	o.plan_path = pd_test_write(plan_dir, "bad.yaml", "plan: [1, 2\n");
	struct pd_deploy_result r;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_run(&o, &r, &e), PD_EXIT_USAGE);
	ck_assert_int_eq(access(out_dir, F_OK), -1); /* nothing written */
}
END_TEST

/* issue 13 item 1: --out DIR writable by others, with run.pdlog a link to a file outside. Before, the
 * deploy unlinked DIR/run.pdlog and opened the name again following links: the run log overwrote the
 * link's target (exit 0). Now such a DIR is refused (exit 2) and nothing is written anywhere. */
START_TEST(out_dir_writable_by_others_is_refused)
{
	const char *tmp = pd_test_tmpdir();
	const char *victim = pd_test_write(tmp, "victim", "precious\n");
	ck_assert_int_eq(mkdir(out_dir, 0777), 0);
	ck_assert_int_eq(chmod(out_dir, 0777), 0);
	char link[600];
	snprintf(link, sizeof(link), "%s/run.pdlog", out_dir);
	ck_assert_int_eq(symlink(victim, link), 0);
	pd_buf before = state_of();
	struct pd_deploy_opts o;
	opts(&o, NULL);
	struct pd_deploy_result r;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_run(&o, &r, &e), PD_EXIT_USAGE);
	ck_assert_msg(strstr(e.msg, "writable by group or others") != NULL, "%s", e.msg);
	char *text;
	size_t n;
	ck_assert_int_eq(pd_read_file(victim, &text, &n, 0, &e), 0);
	ck_assert_str_eq(text, "precious\n");
	free(text);
	ck_assert_int_eq(file_size("plan.yaml"), -1);
	ck_assert_int_eq(file_size("deploy.json"), -1);
	pd_buf after = state_of();
	ck_assert_str_eq(before.data, after.data); /* the board was not touched either */
	pd_buf_free(&before), pd_buf_free(&after);
	/* a link, a non-empty directory and a file are refused the same way */
	ck_assert_int_eq(chmod(out_dir, 0755), 0);
	ck_assert_int_eq(pd_deploy_run(&o, &r, &e), PD_EXIT_USAGE);
	ck_assert_msg(strstr(e.msg, "not empty") != NULL, "%s", e.msg);
	char ln[600];
	snprintf(ln, sizeof(ln), "%s/outlink", tmp);
	ck_assert_int_eq(symlink(tmp, ln), 0);
	o.out_dir = ln;
	ck_assert_int_eq(pd_deploy_run(&o, &r, &e), PD_EXIT_USAGE);
	ck_assert_msg(strstr(e.msg, "symbolic link") != NULL, "%s", e.msg);
	o.out_dir = victim;
	ck_assert_int_eq(pd_deploy_run(&o, &r, &e), PD_EXIT_USAGE);
}
END_TEST

/* The race: while the deploy runs, another process keeps planting links named like every file the
 * deploy writes in RUNDIR, pointing outside. Whatever wins the race, the deploy never writes through
 * a link (it ends 0, or 3 when a name was taken), and the target stays as it was. Before, the run log
 * went through the planted run.pdlog into the target. */
static const char *race_dir, *race_victim;
static volatile int race_stop;
static void *plant_links(void *arg)
{
	(void)arg;
	const char *names[] = {"run.pdlog", "agent.stderr", "deploy.json", "plan.yaml"};
	char p[700];
	while (!race_stop) {
		for (size_t i = 0; i < 4; i++) {
			snprintf(p, sizeof(p), "%s/%s", race_dir, names[i]);
			/* re-plant a name as soon as it is gone: the window the old code left open */
			(void)symlink(race_victim, p);
		}
		usleep(200);
	}
	return NULL;
}

START_TEST(planted_links_race_writes_nothing_outside)
{
	const char *tmp = pd_test_tmpdir();
	race_victim = pd_test_write(tmp, "victim", "precious\n");
	race_dir = out_dir;
	race_stop = 0;
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, plant_links, NULL), 0);
	struct pd_deploy_opts o;
	opts(&o, NULL);
	struct pd_deploy_result r;
	pd_err e = {0};
	int rc = pd_deploy_run(&o, &r, &e);
	race_stop = 1;
	pthread_join(th, NULL);
	ck_assert_msg(rc == 0 || rc == PD_EXIT_ENV || rc == PD_EXIT_USAGE, "rc %d: %s", rc, e.msg);
	char *text;
	size_t n;
	pd_err re = {0};
	ck_assert_int_eq(pd_read_file(race_victim, &text, &n, 0, &re), 0);
	ck_assert_msg(!strcmp(text, "precious\n"), "the file outside RUNDIR was written (rc %d: %s)", rc, e.msg);
	free(text);
	ck_assert(r.restored);
}
END_TEST

/* issue 13 item 2: the plan's plugins are checked on the board, by the agent that will dlopen() them,
 * before the board is touched: a relative path climbing out of the work directory, a missing
 * library, a library in a directory anyone can write, a missing symbol. Every problem is listed,
 * exit 3, nothing changed. Before, pre-flight never looked at plugins: the board was configured and
 * the agent's refusal came afterwards (exit 2 after touching the board). */
static void plan_with_plugins(const char *work_a, const char *work_b)
{
	char *text;
	size_t n;
	pd_err e = {0};
	ck_assert_int_eq(pd_read_file(plan_path, &text, &n, 0, &e), 0);
	const char *ta = "    - name: a\n      wcet: 2ms\n", *tb = "    - name: b\n      wcet: 2ms\n";
	char *pa = strstr(text, ta), *pb = strstr(text, tb);
	ck_assert(pa && pb && pa < pb);
	pd_buf out;
	pd_buf_init(&out);
	pd_buf_append(&out, text, (size_t)(pa - text) + strlen(ta));
	pd_buf_printf(&out, "      work: '%s'\n", work_a);
	pd_buf_append(&out, pa + strlen(ta), (size_t)(pb - pa) - strlen(ta) + strlen(tb));
	pd_buf_printf(&out, "      work: '%s'\n", work_b);
	pd_buf_printf(&out, "%s", pb + strlen(tb));
	ck_assert_int_eq(pd_write_file_atomic(plan_path, out.data, out.len, &e), 0);
	pd_buf_free(&out);
	free(text);
}

static void expect_plugin_refusal(size_t n_problems, const char *const *needles)
{
	pd_buf before = state_of();
	struct pd_deploy_opts o;
	opts(&o, NULL);
	o.agent_path = pd_test_bin("agents/powerdag-agent"); /* the real one: it does the check */
	struct pd_deploy_result r;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_run(&o, &r, &e), PD_EXIT_ENV);
	char want[64];
	snprintf(want, sizeof(want), "pre-flight found %zu problem(s)", n_problems);
	ck_assert_msg(strstr(e.msg, want) != NULL, "%s", e.msg);
	pd_buf after = state_of();
	ck_assert_str_eq(before.data, after.data);
	json_t *j = meta();
	json_t *pr = json_object_get(j, "preflight_problems");
	ck_assert_uint_eq(json_array_size(pr), n_problems);
	char *all = json_dumps(pr, 0);
	for (size_t i = 0; needles[i]; i++)
		ck_assert_msg(strstr(all, needles[i]) != NULL, "'%s' not in %s", needles[i], all);
	free(all);
	ck_assert_uint_eq(json_array_size(json_object_get(j, "changes")), 0);
	/* the work directory on the board is gone again */
	const char *rd = json_string_value(json_object_get(j, "remote_dir"));
	ck_assert_ptr_nonnull(rd);
	ck_assert_int_ne(access(rd, F_OK), 0);
	json_decref(j);
	ck_assert_int_eq(file_size("run.pdlog"), -1);
	pd_buf_free(&before), pd_buf_free(&after);
}

START_TEST(plugin_escape_and_missing_refused_before_touching)
{
	plan_with_plugins("plugin:../x.so:run", "plugin:/nonexistent/libw.so:run");
	const char *needles[] = {"task 'g/a': plugin ../x.so: a '..' component is refused",
				 "task 'g/b': plugin /nonexistent/libw.so: /nonexistent/libw.so: No such file", NULL};
	expect_plugin_refusal(2, needles);
}
END_TEST

START_TEST(plugin_writable_dir_and_missing_symbol_refused)
{
	/* a copy of the test plugin in a directory anyone can write, and the real one without the symbol */
	char ww[600], lib[700], work_a[800], work_b[800];
	snprintf(ww, sizeof(ww), "%s/shared", pd_test_tmpdir());
	ck_assert_int_eq(mkdir(ww, 0777), 0);
	ck_assert_int_eq(chmod(ww, 0777), 0);
	snprintf(lib, sizeof(lib), "%s/libp.so", ww);
	ck_assert_int_eq(pd_test_run(NULL, 0, "cp %s %s", pd_test_bin("agents/pd_agent_test_plugin.so"), lib), 0);
	snprintf(work_a, sizeof(work_a), "plugin:%s:pd_test_work", lib);
	snprintf(work_b, sizeof(work_b), "plugin:%s:no_such_symbol", pd_test_bin("agents/pd_agent_test_plugin.so"));
	plan_with_plugins(work_a, work_b);
	const char *needles[] = {"writable by others (mode 0777)", "no symbol 'no_such_symbol'", NULL};
	expect_plugin_refusal(2, needles);
}
END_TEST

/* Faults at every step: the board ends as it started, RUNDIR holds plan.yaml and deploy.json, and
 * the exit code says what happened. */
struct fault_case {
	const char *spec;
	int rc;             /* expected exit code */
	bool has_log;       /* run data collected */
	const char *agent;  /* FAKE_AGENT */
};
static const struct fault_case cases[] = {
	{"preflight:fail", 3, false, NULL},   {"snapshot:fail", 3, false, NULL},
	{"freq:fail", 3, false, NULL},        {"devfreq:fail", 3, false, NULL},
	{"cpuset:fail", 3, false, NULL},      {"bandwidth:fail", 3, false, NULL},
	{"fpga:fail", 3, false, NULL},        {"upload:fail", 3, false, NULL},
	{"start:fail", 3, false, NULL},       {"stream:fail", 3, true, NULL},
	{"stop:fail", 3, true, NULL},         {"fetch:fail", 3, true, NULL},
	{"freq:drop", 3, false, NULL},        {"cpuset:drop", 3, false, NULL},
	{"upload:drop", 0, true, NULL},       {"stream:drop", 0, true, NULL},
	{"stop:drop", 0, true, NULL},         {"freq:sigint", 3, false, NULL},
	{"stream:sigint", 3, true, NULL},     {"stream:kill-agent", 3, true, NULL},
	{"start:admission", 3, false, "admission"}, {"stream:fail", 3, true, "crash"},
};

START_TEST(fault_restores_board)
{
	const struct fault_case *fc = &cases[_i];
	if (fc->agent)
		setenv("FAKE_AGENT", fc->agent, 1);
	pd_buf before = state_of();
	volatile sig_atomic_t flag = 0;
	struct pd_deploy_opts o;
	opts(&o, &flag);
	o.duration_ns = 800 * PD_NS_PER_MS; /* stream faults fire after 0.4 s */
	o.fault = fc->spec;
	struct pd_deploy_result r;
	pd_err e = {0};
	int rc = pd_deploy_run(&o, &r, &e);
	ck_assert_msg(rc == fc->rc, "%s: rc %d, %s", fc->spec, rc, e.msg);
	ck_assert_msg(r.restored, "%s: not restored", fc->spec);
	pd_buf after = state_of();
	ck_assert_str_eq(before.data, after.data);
	ck_assert_int_gt(file_size("plan.yaml"), 100);
	json_t *j = meta();
	ck_assert_str_eq(json_string_value(json_object_get(j, "fault")), fc->spec);
	ck_assert(json_is_true(json_object_get(json_object_get(j, "restore"), "done")));
	json_decref(j);
	if (fc->has_log)
		ck_assert_msg(file_size("run.pdlog") > 30, "%s: run.pdlog %ld", fc->spec, file_size("run.pdlog"));
	if (strstr(fc->spec, "drop") && fc->rc == 0)
		ck_assert_int_ge(r.reconnects, 1);
	if (!strcmp(fc->spec, "stream:kill-agent"))
		ck_assert_msg(strstr(e.msg, "killed by signal 9") != NULL, "%s", e.msg);
	if (fc->agent && !strcmp(fc->agent, "admission"))
		ck_assert_msg(strstr(e.msg, "admission refused") != NULL, "%s", e.msg);
	pd_buf_free(&before), pd_buf_free(&after);
}
END_TEST

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "run"))
		return fake_agent(argc, argv);
	if (argc == 3 && !strcmp(argv[1], "check-foreign")) {
		const char *mode = getenv("FAKE_AGENT");
		if (!mode || strcmp(mode, "foreign"))
			return 0;
		printf("SCHED_DEADLINE thread 77 'rival' (process 77) may run on the plan's CPU 0 with 1.000 ms every "
		       "10.000 ms: its reservation would take turns with the plan's, outside the plan's analysis\n");
		return 3;
	}
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[l > 0 ? l : 0] = '\0';
	Suite *s = suite_create("deployer_deploy");
	TCase *tc = tcase_create("deploy");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, deploy_success);
	tcase_add_test(tc, deploy_excuses_a_kernel_wide_change_by_another);
	tcase_add_test(tc, deploy_flags_any_other_change);
	tcase_add_test(tc, deploy_no_restore_keeps_config);
	tcase_add_test(tc, preflight_failure_touches_nothing);
	tcase_add_test(tc, foreign_reservation_refused_before_touching);
	tcase_add_test(tc, wrong_agent_refused_before_touching);
	tcase_add_test(tc, bad_plan_is_usage_error);
	tcase_add_test(tc, out_dir_writable_by_others_is_refused);
	tcase_add_test(tc, planted_links_race_writes_nothing_outside);
	tcase_add_test(tc, plugin_escape_and_missing_refused_before_touching);
	tcase_add_test(tc, plugin_writable_dir_and_missing_symbol_refused);
	tcase_add_loop_test(tc, fault_restores_board, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
