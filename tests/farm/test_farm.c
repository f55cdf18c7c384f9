/* SPDX-License-Identifier: MIT */
/*
 * farm/ without LAVA: the job definition (holds a device, the token in the markers, constant shell
 * text), the lab file's checks (file:line:col, exit 2, private token file), and farm status on a
 * farm directory whose record names a missing run. The LAVA end to end is tests/cli/farm_e2e.sh.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "farm/pd_farm.h"
#include "pd_test.h"

static const char *TOK = "0123456789abcdef0123456789abcdef";

static const pd_ynode *seq_item(const pd_ynode *s, size_t i)
{
	ck_assert_int_eq(s->kind, PD_Y_SEQ);
	ck_assert_uint_gt(s->n, i);
	return s->items[i];
}

START_TEST(job_holds_device_with_token)
{
	struct pd_farm_jobspec js = {"p1-twin-r2", "twin", "p1.yaml", TOK, 3 * PD_NS_PER_S, 900};
	pd_buf b;
	pd_buf_init(&b);
	pd_err e = {0};
	ck_assert_int_eq(pd_farm_job_yaml(&js, &b, &e), 0);
	pd_ydoc doc = {0};
	pd_diags d;
	pd_diags_init(&d);
	ck_assert_int_eq(pd_yaml_load(&doc, "job", b.data, b.len, &d), 0);
	const pd_ynode *r = doc.root;
	ck_assert_str_eq(pd_ymap_get(r, "device_type")->str, "twin");
	ck_assert_str_eq(pd_ymap_get(r, "job_name")->str, "powerdag p1-twin-r2");
	ck_assert_str_eq(pd_ymap_get(pd_ymap_get(r, "metadata"), "powerdag.run")->str, "p1-twin-r2");
	const pd_ynode *to = pd_ymap_get(r, "timeouts");
	ck_assert_str_eq(pd_ymap_get(pd_ymap_get(to, "job"), "seconds")->str, "1200");
	ck_assert_str_eq(pd_ymap_get(pd_ymap_get(to, "action"), "seconds")->str, "900");
	const pd_ynode *acts = pd_ymap_get(r, "actions");
	ck_assert_uint_eq(acts->n, 3);
	ck_assert_str_eq(pd_ymap_get(pd_ymap_get(seq_item(acts, 0), "deploy"), "to")->str, "ssh");
	ck_assert_str_eq(pd_ymap_get(pd_ymap_get(seq_item(acts, 1), "boot"), "method")->str, "ssh");
	const pd_ynode *def = seq_item(pd_ymap_get(pd_ymap_get(seq_item(acts, 2), "test"), "definitions"), 0);
	const pd_ynode *steps = pd_ymap_get(pd_ymap_get(pd_ymap_get(def, "repository"), "run"), "steps");
	ck_assert_uint_eq(steps->n, 5);
	/* one command per step: `set -e` would let a failed mkdir on the left of && pass */
	ck_assert_str_eq(seq_item(steps, 0)->str, "mkdir -p /run/powerdag-hold");
	ck_assert_str_eq(seq_item(steps, 1)->str, "touch /run/powerdag-hold/0123456789abcdef0123456789abcdef.held");
	ck_assert_ptr_nonnull(strstr(seq_item(steps, 2)->str, "/run/powerdag-hold/0123456789abcdef0123456789abcdef.done"));
	ck_assert_ptr_nonnull(strstr(seq_item(steps, 3)->str, "lava-test-case powerdag-run"));
	pd_diags_free(&d);
	pd_yaml_free(&doc);
	pd_buf_free(&b);
}
END_TEST

START_TEST(job_refuses_unsafe_values)
{
	pd_buf b;
	pd_buf_init(&b);
	pd_err e = {0};
	struct pd_farm_jobspec js = {"p1;rm -rf /", "twin", "p1.yaml", TOK, PD_NS_PER_S, 0};
	ck_assert_int_eq(pd_farm_job_yaml(&js, &b, &e), PD_EXIT_USAGE);
	js.run_id = "p1";
	js.token = "0123456789abcdef0123456789abcde'"; /* the token reaches shell text: hex only */
	ck_assert_int_eq(pd_farm_job_yaml(&js, &b, &e), PD_EXIT_USAGE);
	js.token = TOK;
	js.device_type = "twin x";
	ck_assert_int_eq(pd_farm_job_yaml(&js, &b, &e), PD_EXIT_USAGE);
	js.device_type = "twin";
	js.run_ns = 0;
	ck_assert_int_eq(pd_farm_job_yaml(&js, &b, &e), PD_EXIT_USAGE);
	pd_buf_free(&b);
}
END_TEST

static const char *lab_text(const char *dir, const char *extra)
{
	static char t[2048];
	snprintf(t, sizeof(t),
		 "lava:\n  url: http://127.0.0.1:1/\n  user: admin\n  token_file: %s/token\n"
		 "devices:\n  - name: twin-1\n    device_type: twin\n    board: ssh://root@10.0.0.2:22\n"
		 "    identity: /x/id\n    known_hosts: /x/kh\n    cpu_group: host\n%s",
		 dir, extra);
	return t;
}

START_TEST(lab_file_checks)
{
	const char *dir = pd_test_tmpdir();
	const char *tok = pd_test_write(dir, "token", "abc123\n");
	chmod(tok, 0600);
	pd_farm_lab *l = NULL;
	pd_err e = {0};
	const char *p = pd_test_write(dir, "lab.yaml", lab_text(dir, "  - name: xu4-1\n    device_type: odroid-xu4\n"
								     "    board: ssh://root@10.0.0.6\n    identity: /x/id\n"
								     "    known_hosts: /x/kh\n"));
	ck_assert_int_eq(pd_farm_lab_load(p, &l, &e), 0);
	ck_assert_uint_eq(pd_farm_lab_device_count(l), 2);
	ck_assert_uint_eq(pd_farm_lab_type_count(l, "twin"), 1);
	ck_assert_uint_eq(pd_farm_lab_type_count(l, "zcu102"), 0);
	pd_farm_lab_free(l);

	/* an unknown key: file:line:col */
	p = pd_test_write(dir, "lab2.yaml", lab_text(dir, "    colour: red\n"));
	ck_assert_int_eq(pd_farm_lab_load(p, &l, &e), PD_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "lab2.yaml:12:"));
	ck_assert_ptr_nonnull(strstr(e.msg, "colour"));
	/* a bad board URI */
	p = pd_test_write(dir, "lab3.yaml", lab_text(dir, "  - name: b\n    device_type: twin\n    board: ftp://x\n"
							   "    identity: /i\n    known_hosts: /k\n"));
	ck_assert_int_eq(pd_farm_lab_load(p, &l, &e), PD_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "board"));
	/* the same device twice */
	p = pd_test_write(dir, "lab4.yaml", lab_text(dir, "  - name: twin-1\n    device_type: twin\n    board: ssh://r@h\n"
							   "    identity: /i\n    known_hosts: /k\n"));
	ck_assert_int_eq(pd_farm_lab_load(p, &l, &e), PD_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "twice"));
	/* a token others can read is refused, as ssh refuses such a key */
	chmod(tok, 0644);
	p = pd_test_write(dir, "lab5.yaml", lab_text(dir, ""));
	ck_assert_int_eq(pd_farm_lab_load(p, &l, &e), PD_EXIT_USAGE);
	ck_assert_ptr_nonnull(strstr(e.msg, "readable by group or others"));
	ck_assert_ptr_null(l);
}
END_TEST

/* cgroup and cpu_map, the deploy options of boards that share a kernel: deploy's own rules at
 * load time, and a matrix whose plan has another number of cores than a board's map is refused
 * before anything is written or submitted */
START_TEST(lab_deploy_fields)
{
	const char *dir = pd_test_tmpdir();
	chmod(pd_test_write(dir, "token", "abc123\n"), 0600);
	pd_farm_lab *l = NULL;
	pd_err e = {0};
	const char *p = pd_test_write(dir, "labm.yaml", lab_text(dir, "    cgroup: powerdag-pdfarm-1\n    cpu_map: 1\n"));
	ck_assert_int_eq(pd_farm_lab_load(p, &l, &e), 0);
	pd_farm_lab_free(l);
	l = NULL;
	static const struct {
		const char *extra, *msg;
	} bad[] = {{"    cgroup: ../x\n", "labb.yaml:12:13: cgroup '../x'"},
		   {"    cgroup: cgroup.procs\n", "cgroup 'cgroup.procs'"},
		   {"    cpu_map: 1,1\n", "labb.yaml:12:14: cpu_map '1,1': a CPU is named twice"},
		   {"    cpu_map: 0-4096\n", "each 0-4095"},
		   {"    cpu_map: [1]\n", "cpu_map"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = pd_test_write(dir, "labb.yaml", lab_text(dir, bad[i].extra));
		ck_assert_int_eq(pd_farm_lab_load(p, &l, &e), PD_EXIT_USAGE);
		ck_assert_msg(strstr(e.msg, bad[i].msg), "'%s': %s", bad[i].extra, e.msg);
		ck_assert_ptr_null(l);
	}
	/* a board mapping 2 CPUs, a plan of 8 cores (twin-xu4.plan.yaml: XU4's two islands of 4) */
	p = pd_test_write(dir, "labm2.yaml", lab_text(dir, "    cpu_map: 0,1\n"));
	const char *plans[] = {pd_test_src("tests/plan/twin-xu4.plan.yaml")}, *types[] = {"twin"};
	struct pd_farm_matrix m = {plans, 1, types, 1, 1, PD_NS_PER_S};
	struct pd_farm_opts o = {.lab_path = p};
	char out[4200];
	snprintf(out, sizeof(out), "%s/farmdir", dir);
	ck_assert_int_eq(pd_farm_submit(&o, &m, out, &e), PD_EXIT_USAGE);
	ck_assert_msg(strstr(e.msg, "has 8 cores; board twin-1's cpu_map '0,1' names 2 CPUs"), "%s", e.msg);
	ck_assert_int_eq(access(out, F_OK), -1);
}
END_TEST

START_TEST(status_names_missing_runs)
{
	const char *dir = pd_test_tmpdir();
	pd_test_write(dir, "farm.json",
		      "{\"format\": \"powerdag-farm 1\", \"lab\": \"/nonexistent/lab.yaml\", \"created\": \"x\", \"run_s\": 3,"
		      " \"runs\": ["
		      "{\"id\": \"p1-twin-r1\", \"plan\": \"p1.yaml\", \"device_type\": \"twin\", \"repetition\": 1,"
		      " \"token\": \"0123456789abcdef0123456789abcdef\", \"lava_job\": 7, \"phase\": \"collected\","
		      " \"device\": \"twin-1\", \"lava_state\": \"Finished\", \"lava_health\": \"Complete\", \"deploy_exit\": 0},"
		      "{\"id\": \"p1-twin-r2\", \"plan\": \"p1.yaml\", \"device_type\": \"twin\", \"repetition\": 2,"
		      " \"token\": \"0123456789abcdef0123456789abcdee\", \"lava_job\": 8, \"phase\": \"missing\","
		      " \"device\": \"twin-2\", \"lava_state\": \"Finished\", \"lava_health\": \"Incomplete\", \"deploy_exit\": 3,"
		      " \"reason\": \"deploy to twin-2 exit 3: board unreachable\"}]}\n");
	char out[8192];
	FILE *f = fmemopen(out, sizeof(out), "w");
	int miss = -1, pend = -1;
	pd_err e = {0};
	ck_assert_int_eq(pd_farm_status(dir, false, f, &miss, &pend, &e), 0);
	fclose(f);
	ck_assert_int_eq(miss, 1);
	ck_assert_int_eq(pend, 0);
	ck_assert_ptr_nonnull(strstr(out, "2 runs: 1 collected, 1 missing, 0 pending"));
	ck_assert_ptr_nonnull(strstr(out, "missing: p1-twin-r2\n"));
	ck_assert_ptr_nonnull(strstr(out, "board unreachable"));
	ck_assert_ptr_nonnull(strstr(out, "runs/p1-twin-r1"));
	/* not a farm directory: exit 2 */
	ck_assert_int_eq(pd_farm_status(pd_test_tmpdir(), false, stdout, &miss, &pend, &e), PD_EXIT_USAGE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("farm");
	TCase *tc = tcase_create("farm");
	tcase_add_test(tc, job_holds_device_with_token);
	tcase_add_test(tc, job_refuses_unsafe_values);
	tcase_add_test(tc, lab_file_checks);
	tcase_add_test(tc, lab_deploy_fields);
	tcase_add_test(tc, status_names_missing_runs);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
