/* SPDX-License-Identifier: MIT */
/*
 * Plugin path rules (agents/plugin_check.c, docs/DEPLOY.md "Trust model") and the agent's
 * check-plugins command: what the root agent refuses to dlopen(), before and at run time.
 */
#include "agents/pd_agent.h"
#include "pd_test.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *plugin(void) { return pd_test_bin("agents/pd_agent_test_plugin.so"); }

static int check(const char *lib, const char *dir, char *why, size_t n)
{
	static char out[PATH_MAX];
	pd_buf w;
	pd_buf_init(&w);
	int rc = pd_agent_plugin_path(lib, dir, out, sizeof(out), &w);
	size_t len = strlen(w.data ? w.data : out);
	memcpy(why, w.data ? w.data : out, len < n ? len + 1 : n);
	why[n - 1] = '\0';
	pd_buf_free(&w);
	return rc;
}

START_TEST(paths)
{
	char why[1024], safe[600], ww[600], cmd[2048];
	/* the build tree's plugin: an absolute path in directories only root (or we) can write */
	ck_assert_msg(check(plugin(), NULL, why, sizeof(why)) == 0, "%s", why);
	/* '..' anywhere, relative or absolute */
	ck_assert_int_eq(check("../x.so", "/usr/lib", why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "'..'"));
	ck_assert_int_eq(check("/usr/lib/../lib/x.so", NULL, why, sizeof(why)), -1);
	ck_assert_int_eq(check("a..b.so", "/nonexistent", why, sizeof(why)), -1); /* not '..': just missing */
	ck_assert_ptr_null(strstr(why, "'..'"));
	/* a relative path is relative to the plan's directory, never the library search path */
	ck_assert_int_eq(check("libc.so.6", "/nonexistent", why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "/nonexistent/libc.so.6") && strstr(why, "relative to the plan"), "%s", why);
	/* a safe directory holds a copy: accepted, relative too. Not under /tmp, which anyone can write:
	 * in the build tree, whose directories are the builder's (mkdtemp: 0700) */
	snprintf(safe, sizeof(safe), "%s/plugin-test.XXXXXX", pd_test_bin("."));
	ck_assert_ptr_nonnull(mkdtemp(safe));
	snprintf(cmd, sizeof(cmd), "cp %s %s/w.so && chmod 0644 %s/w.so", plugin(), safe, safe);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s", cmd), 0);
	ck_assert_msg(check("w.so", safe, why, sizeof(why)) == 0, "%s", why);
	/* the file writable by its group */
	snprintf(cmd, sizeof(cmd), "chmod 0664 %s/w.so", safe);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s", cmd), 0);
	ck_assert_int_eq(check("w.so", safe, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "writable by its group (mode 0664)"), "%s", why);
	/* a link to a good file, in a directory anyone can write (it could be swapped): refused */
	snprintf(ww, sizeof(ww), "%s/tmp", pd_test_tmpdir());
	ck_assert_int_eq(mkdir(ww, 0755), 0);
	ck_assert_int_eq(chmod(ww, 0777), 0);
	snprintf(cmd, sizeof(cmd), "ln -s %s %s/l.so", plugin(), ww);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s", cmd), 0);
	char l[700];
	snprintf(l, sizeof(l), "%s/l.so", ww);
	ck_assert_int_eq(check(l, NULL, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "writable by others (mode 0777)"), "%s", why);
	/* the same directory sticky (like /tmp): only the link's owner (us) may remove or rename it */
	ck_assert_int_eq(chmod(ww, 01777), 0);
	ck_assert_msg(check(l, NULL, why, sizeof(why)) == 0, "%s", why);
	/* a link there owned by someone else could be re-pointed by them: refused */
	ck_assert_int_eq(lchown(l, 12345, 12345), 0);
	ck_assert_int_eq(check(l, NULL, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "owned by uid 12345"), "%s", why);
	/* not a regular file */
	ck_assert_int_eq(check("/usr/lib", NULL, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "not a regular file"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", safe);
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s", cmd), 0);
}
END_TEST

/* chain2 with tasks a..d given the work strings w[0..3] */
static const char *plan_with(const char *dir, const char *const w[4])
{
	char *text;
	size_t n;
	pd_err e = {0};
	ck_assert_int_eq(pd_read_file(pd_test_src("tests/agents/plans/chain2.plan.yaml"), &text, &n, 0, &e), 0);
	pd_buf b;
	pd_buf_init(&b);
	const char *p = text;
	for (int i = 0; i < 4; i++) {
		const char *q = strstr(p, "work: builtin:busy}");
		ck_assert_ptr_nonnull(q);
		pd_buf_append(&b, p, (size_t)(q - p));
		pd_buf_printf(&b, "work: '%s'}", w[i]);
		p = q + strlen("work: builtin:busy}");
	}
	pd_buf_printf(&b, "%s", p);
	free(text);
	const char *path = pd_test_write(dir, "plugins.plan.yaml", b.data);
	pd_buf_free(&b);
	return path;
}

/* powerdag-agent check-plugins PLAN: one line per problem on stdout, exit 3; 0 when all load. */
START_TEST(check_plugins_command)
{
	char tmp[512];
	snprintf(tmp, sizeof(tmp), "%s", pd_test_tmpdir()); /* pd_test_* results rotate */
	static char out[16384];
	char good[700], nosym[700];
	snprintf(good, sizeof(good), "plugin:%s:pd_test_work", plugin());
	snprintf(nosym, sizeof(nosym), "plugin:%s:nope", plugin());
	char agent[600];
	snprintf(agent, sizeof(agent), "%s", pd_test_bin("agents/powerdag-agent"));
	const char *const bad[4] = {good, nosym, "plugin:../escape.so:run", "plugin:missing.so:run"};
	const char *plan = plan_with(tmp, bad);
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s check-plugins %s", agent, plan), PD_EXIT_ENV);
	ck_assert_msg(strstr(out, "task 'chain/b': plugin ") && strstr(out, "no symbol 'nope'"), "%s", out);
	ck_assert_msg(strstr(out, "task 'chain/c': plugin ../escape.so: a '..' component is refused"), "%s", out);
	ck_assert_msg(strstr(out, "task 'chain/d': plugin missing.so: ") && strstr(out, "/missing.so: No such file"),
		      "%s", out);
	ck_assert_msg(!strstr(out, "chain/a"), "%s", out);
	const char *const fine[4] = {good, good, "builtin:busy", "builtin:spin"};
	plan = plan_with(tmp, fine);
	ck_assert_int_eq(pd_test_run(out, sizeof(out), "%s check-plugins %s", agent, plan), 0);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(pd_test_run(NULL, 0, "%s check-plugins %s/missing.yaml 2>/dev/null", agent, tmp), PD_EXIT_USAGE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("agents_plugin_check");
	TCase *tc = tcase_create("plugin_check");
	tcase_add_test(tc, paths);
	tcase_add_test(tc, check_plugins_command);
	suite_add_tcase(s, tc);
	return pd_test_main(s);
}
