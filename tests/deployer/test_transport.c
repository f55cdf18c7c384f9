/* SPDX-License-Identifier: MIT */
/*
 * Transport: shell quoting, the local backend, and the libssh backend against a real sshd on
 * 127.0.0.1 (host key accepted / unknown / changed, argv round trip, exit status, SFTP, reconnect).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deployer/pd_deployer.h"
#include "helper_sshd.h"
#include "pd_test.h"

/* Arguments that would break any naive quoting. */
static const char *const nasty[] = {
	"plain", "two words", "it's", "'", "''", "$(touch /tmp/pd-pwned)", "`id`", "$HOME", "a\nb\nc",
	"\\", "\\'", "\"dq\"", "*", "; rm -rf /", "-n", "tab\there", "trailing\n", "", "é ü 漢",
};
#define N_NASTY (sizeof(nasty) / sizeof(nasty[0]))

START_TEST(quote_exact)
{
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_deploy_shell_quote(&b, "it's $x"), 0);
	ck_assert_str_eq(b.data, "'it'\\''s $x'");
	b.len = 0;
	const char *argv[] = {"printf", "%s", "", NULL};
	ck_assert_int_eq(pd_deploy_shell_quote_argv(&b, argv), 0);
	ck_assert_str_eq(b.data, "'printf' '%s' ''");
	pd_buf_free(&b);
}
END_TEST

/* The quoted word, given to a real /bin/sh, yields the original bytes. */
START_TEST(quote_shell_roundtrip)
{
	for (size_t i = 0; i < N_NASTY; i++) {
		pd_buf cmd;
		pd_buf_init(&cmd);
		pd_buf_printf(&cmd, "printf %%s ");
		pd_deploy_shell_quote(&cmd, nasty[i]);
		FILE *p = popen(cmd.data, "r");
		char out[256] = {0};
		size_t n = fread(out, 1, sizeof(out) - 1, p);
		pclose(p);
		ck_assert_uint_eq(n, strlen(nasty[i]));
		ck_assert_mem_eq(out, nasty[i], n);
		pd_buf_free(&cmd);
	}
	ck_assert_int_ne(access("/tmp/pd-pwned", F_OK), 0);
}
END_TEST

START_TEST(bad_uri)
{
	pd_deploy_transport *t;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_transport_open("ftp://x", NULL, &t, &e), PD_EXIT_USAGE);
	ck_assert_int_eq(pd_deploy_transport_open("ssh://host:99999", NULL, &t, &e), PD_EXIT_USAGE);
	ck_assert_int_eq(pd_deploy_transport_open("ssh://@host", NULL, &t, &e), PD_EXIT_USAGE);
	ck_assert_int_eq(pd_deploy_transport_open("ssh://", NULL, &t, &e), PD_EXIT_USAGE);
	ck_assert_ptr_null(t);
}
END_TEST

/* The same checks on any backend: argv round trip, status/stdout/stderr, every file operation. */
static void exercise(pd_deploy_transport *t)
{
	pd_err e = {0};
	struct pd_deploy_exec_result r;
	for (size_t i = 0; i < N_NASTY; i++) {
		const char *argv[] = {"printf", "%s", nasty[i], NULL};
		ck_assert_int_eq(pd_deploy_transport_exec(t, argv, &r, &e), 0);
		ck_assert_int_eq(r.status, 0);
		ck_assert_uint_eq(r.out.len, strlen(nasty[i]));
		if (r.out.len)
			ck_assert_mem_eq(r.out.data, nasty[i], r.out.len);
		pd_deploy_exec_result_free(&r);
	}
	/* several arguments stay separate, none is split or joined */
	const char *multi[] = {"printf", "<%s>", "a b", "", "c'd", NULL};
	ck_assert_int_eq(pd_deploy_transport_exec(t, multi, &r, &e), 0);
	ck_assert_str_eq(r.out.data, "<a b><><c'd>");
	pd_deploy_exec_result_free(&r);
	const char *sh[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
	ck_assert_int_eq(pd_deploy_transport_exec(t, sh, &r, &e), 0);
	ck_assert_int_eq(r.status, 3);
	ck_assert_str_eq(r.out.data, "out\n");
	ck_assert_str_eq(r.err.data, "err\n");
	pd_deploy_exec_result_free(&r);
	const char *missing[] = {"/nonexistent/prog", NULL};
	ck_assert_int_eq(pd_deploy_transport_exec(t, missing, &r, &e), 0);
	ck_assert_int_eq(r.status, 127);
	pd_deploy_exec_result_free(&r);

	char dir[256];
	snprintf(dir, sizeof(dir), "%s/sub dir 'q'", pd_test_tmpdir());
	struct pd_deploy_transport_stat st;
	ck_assert_int_eq(pd_deploy_transport_stat(t, dir, &st, &e), 0);
	ck_assert(!st.exists);
	ck_assert_int_eq(pd_deploy_transport_mkdir(t, dir, 0700, &e), 0);
	ck_assert_int_eq(pd_deploy_transport_stat(t, dir, &st, &e), 0);
	ck_assert(st.exists && st.is_dir);
	char f[400];
	snprintf(f, sizeof(f), "%s/file", dir);
	ck_assert_int_eq(pd_deploy_transport_write(t, f, "hello $(x)\n", 11, &e), 0);
	pd_buf b;
	pd_buf_init(&b);
	ck_assert_int_eq(pd_deploy_transport_read(t, f, &b, &e), 0);
	ck_assert_str_eq(b.data, "hello $(x)\n");
	b.len = 0;
	ck_assert_int_eq(pd_deploy_transport_read_at(t, f, 6, 4, &b, &e), 0);
	ck_assert_uint_eq(b.len, 4);
	ck_assert_mem_eq(b.data, "$(x)", 4);
	b.len = 0;
	ck_assert_int_eq(pd_deploy_transport_read_at(t, f, 11, 100, &b, &e), 0);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_int_eq(pd_deploy_transport_stat(t, f, &st, &e), 0);
	ck_assert_uint_eq(st.size, 11);
	/* upload / download of a binary blob bigger than one SFTP packet */
	char *blob = malloc(200000);
	for (int i = 0; i < 200000; i++)
		blob[i] = (char)(i * 7 + i / 255);
	char local[400], back[400], remote[400];
	snprintf(local, sizeof(local), "%s/blob", pd_test_tmpdir());
	snprintf(back, sizeof(back), "%s/blob.back", pd_test_tmpdir());
	snprintf(remote, sizeof(remote), "%s/blob", dir);
	FILE *lf = fopen(local, "wb");
	fwrite(blob, 1, 200000, lf);
	fclose(lf);
	ck_assert_int_eq(pd_deploy_transport_upload(t, local, remote, 0755, &e), 0);
	ck_assert_int_eq(pd_deploy_transport_stat(t, remote, &st, &e), 0);
	ck_assert_uint_eq(st.size, 200000);
	ck_assert_uint_eq(st.mode, 0755);
	ck_assert_int_eq(pd_deploy_transport_download(t, remote, back, &e), 0);
	char *got;
	size_t n;
	ck_assert_int_eq(pd_read_file(back, &got, &n, 0, &e), 0);
	ck_assert_uint_eq(n, 200000);
	ck_assert_mem_eq(got, blob, n);
	free(got);
	free(blob);
	char **names;
	size_t nn;
	ck_assert_int_eq(pd_deploy_transport_listdir(t, dir, &names, &nn, &e), 0);
	ck_assert_uint_eq(nn, 2);
	ck_assert_str_eq(names[0], "blob");
	ck_assert_str_eq(names[1], "file");
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	/* a refused write is an error carrying the path */
	char ro[400];
	snprintf(ro, sizeof(ro), "%s/nodir/x", dir);
	ck_assert_int_eq(pd_deploy_transport_write(t, ro, "1", 1, &e), PD_EXIT_ENV);
	ck_assert_ptr_nonnull(strstr(e.msg, "nodir"));
	ck_assert_int_eq(pd_deploy_transport_rmdir(t, dir, &e), PD_EXIT_ENV); /* not empty */
	ck_assert_int_eq(pd_deploy_transport_unlink(t, f, &e), 0);
	ck_assert_int_eq(pd_deploy_transport_unlink(t, remote, &e), 0);
	ck_assert_int_eq(pd_deploy_transport_rmdir(t, dir, &e), 0);
	ck_assert(!pd_deploy_transport_lost(t));
	pd_buf_free(&b);
}

START_TEST(local_backend)
{
	pd_deploy_transport *t;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_transport_open("local", NULL, &t, &e), 0);
	ck_assert(pd_deploy_transport_is_local(t));
	exercise(t);
	pd_deploy_transport_close(t);
}
END_TEST

static struct test_sshd sshd;
static int have_sshd;

static void sshd_up(void) { have_sshd = test_sshd_start(&sshd) == 0; }
static void sshd_down(void) { test_sshd_stop(&sshd); }

static struct pd_deploy_transport_opts opts_with(const char *kh)
{
	struct pd_deploy_transport_opts o = {.identity = sshd.identity, .known_hosts = kh, .timeout_s = 5};
	return o;
}

START_TEST(ssh_known_key)
{
	if (!have_sshd)
		ck_abort_msg("sshd could not be started on 127.0.0.1");
	pd_deploy_transport *t;
	pd_err e = {0};
	struct pd_deploy_transport_opts o = opts_with(sshd.known_hosts);
	ck_assert_msg(pd_deploy_transport_open(sshd.uri, &o, &t, &e) == 0, "%s", e.msg);
	ck_assert(!pd_deploy_transport_is_local(t));
	exercise(t);
	pd_deploy_transport_close(t);
}
END_TEST

START_TEST(ssh_unknown_key)
{
	ck_assert(have_sshd);
	pd_deploy_transport *t;
	pd_err e = {0};
	struct pd_deploy_transport_opts o = opts_with(test_sshd_known_hosts(&sshd, "empty_kh", NULL));
	ck_assert_int_eq(pd_deploy_transport_open(sshd.uri, &o, &t, &e), PD_EXIT_ENV);
	ck_assert_ptr_null(t);
	ck_assert_ptr_nonnull(strstr(e.msg, "unknown"));
	/* the fingerprint printed is the server's, as ssh-keygen computes it */
	char fp[256] = {0};
	pd_test_run(fp, sizeof(fp), "ssh-keygen -lf %s | awk '{printf \"%%s\", $2}'", sshd.host_pub);
	ck_assert_ptr_nonnull(strstr(fp, "SHA256:"));
	ck_assert_msg(strstr(e.msg, fp) != NULL, "%s lacks %s", e.msg, fp);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "ssh-keyscan -p %d -t ed25519 127.0.0.1 >> ", sshd.port);
	ck_assert_msg(strstr(e.msg, cmd) != NULL, "%s", e.msg);
}
END_TEST

START_TEST(ssh_changed_key)
{
	ck_assert(have_sshd);
	char other[400];
	snprintf(other, sizeof(other), "%s/other_key", sshd.dir);
	pd_test_run(NULL, 0, "ssh-keygen -q -t ed25519 -N '' -f %s >/dev/null 2>&1", other);
	strcat(other, ".pub");
	pd_deploy_transport *t;
	pd_err e = {0};
	struct pd_deploy_transport_opts o = opts_with(test_sshd_known_hosts(&sshd, "changed_kh", other));
	ck_assert_int_eq(pd_deploy_transport_open(sshd.uri, &o, &t, &e), PD_EXIT_ENV);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(e.msg, "CHANGED") != NULL, "%s", e.msg);
	ck_assert_ptr_nonnull(strstr(e.msg, "ssh-keygen -R"));
}
END_TEST

/* issue 13 item 7: "@revoked" lines. libssh reads "@revoked" as a host name that never matches, so
 * before this change the key below (revoked, and still listed on a plain line) was accepted. */
static const char *kh_with(const char *name, const char *extra_lines, bool plain_line)
{
	const char *p = test_sshd_known_hosts(&sshd, name, plain_line ? sshd.host_pub : NULL);
	FILE *f = fopen(p, "a");
	ck_assert_ptr_nonnull(f);
	fputs(extra_lines, f);
	fclose(f);
	return p;
}

static void pub_line(const char *pub, char *out, size_t n)
{
	FILE *in = fopen(pub, "r");
	char type[64], b64[1024];
	ck_assert(in && fscanf(in, "%63s %1023s", type, b64) == 2);
	fclose(in);
	snprintf(out, n, "%s %s", type, b64);
}

START_TEST(ssh_revoked_key)
{
	ck_assert(have_sshd);
	char key[1200], lines[2600];
	pub_line(sshd.host_pub, key, sizeof(key));
	/* the same key revoked under another host pattern: refused for every host */
	snprintf(lines, sizeof(lines), "# retired after the board was stolen\n@revoked *.example.org %s\n", key);
	struct pd_deploy_transport_opts o = opts_with(kh_with("revoked_kh", lines, true));
	pd_deploy_transport *t;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_transport_open(sshd.uri, &o, &t, &e), PD_EXIT_ENV);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(e.msg, "REVOKED") && strstr(e.msg, "revoked_kh:3"), "%s", e.msg);
	/* a revoked line for another key does not get in the way */
	char other[400], okey[1200];
	snprintf(other, sizeof(other), "%s/other_rev", sshd.dir);
	pd_test_run(NULL, 0, "ssh-keygen -q -t ed25519 -N '' -f %s >/dev/null 2>&1", other);
	strcat(other, ".pub");
	pub_line(other, okey, sizeof(okey));
	snprintf(lines, sizeof(lines), "@revoked * %s\n", okey);
	o = opts_with(kh_with("revoked_other_kh", lines, true));
	ck_assert_msg(pd_deploy_transport_open(sshd.uri, &o, &t, &e) == 0, "%s", e.msg);
	pd_deploy_transport_close(t);
}
END_TEST

/* @cert-authority is not supported: it never makes a key trusted, and the refusal says so. */
START_TEST(ssh_cert_authority_refused)
{
	ck_assert(have_sshd);
	char key[1200], lines[2600];
	pub_line(sshd.host_pub, key, sizeof(key));
	snprintf(lines, sizeof(lines), "@cert-authority * %s\n", key);
	struct pd_deploy_transport_opts o = opts_with(kh_with("ca_kh", lines, false));
	pd_deploy_transport *t;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_transport_open(sshd.uri, &o, &t, &e), PD_EXIT_ENV);
	ck_assert_ptr_null(t);
	ck_assert_msg(strstr(e.msg, "unknown") && strstr(e.msg, "@cert-authority line at") &&
			      strstr(e.msg, "ca_kh:1") && strstr(e.msg, "not supported"),
		      "%s", e.msg);
}
END_TEST

START_TEST(ssh_bad_identity)
{
	ck_assert(have_sshd);
	char id[400];
	snprintf(id, sizeof(id), "%s/stranger", sshd.dir);
	pd_test_run(NULL, 0, "ssh-keygen -q -t ed25519 -N '' -f %s >/dev/null 2>&1", id);
	struct pd_deploy_transport_opts o = {.identity = id, .known_hosts = sshd.known_hosts, .timeout_s = 5};
	pd_deploy_transport *t;
	pd_err e = {0};
	ck_assert_int_eq(pd_deploy_transport_open(sshd.uri, &o, &t, &e), PD_EXIT_ENV);
	ck_assert_ptr_nonnull(strstr(e.msg, "authentication refused"));
}
END_TEST

START_TEST(ssh_drop_reconnect)
{
	ck_assert(have_sshd);
	pd_deploy_transport *t;
	pd_err e = {0};
	struct pd_deploy_transport_opts o = opts_with(sshd.known_hosts);
	ck_assert_int_eq(pd_deploy_transport_open(sshd.uri, &o, &t, &e), 0);
	pd_deploy_transport_drop(t);
	struct pd_deploy_transport_stat st;
	ck_assert_int_eq(pd_deploy_transport_stat(t, "/", &st, &e), PD_EXIT_ENV);
	ck_assert(pd_deploy_transport_lost(t));
	ck_assert_int_eq(pd_deploy_transport_stat(t, "/", &st, &e), PD_EXIT_ENV); /* refused while lost */
	ck_assert_msg(pd_deploy_transport_reconnect(t, &e) == 0, "%s", e.msg);
	ck_assert(!pd_deploy_transport_lost(t));
	ck_assert_int_eq(pd_deploy_transport_stat(t, "/", &st, &e), 0);
	ck_assert(st.is_dir);
	pd_deploy_transport_close(t);
}
END_TEST

START_TEST(ssh_unreachable)
{
	pd_deploy_transport *t;
	pd_err e = {0};
	struct pd_deploy_transport_opts o = {.known_hosts = "/dev/null", .timeout_s = 2};
	ck_assert_int_eq(pd_deploy_transport_open("ssh://root@127.0.0.1:1", &o, &t, &e), PD_EXIT_ENV);
	ck_assert_ptr_nonnull(strstr(e.msg, "cannot connect"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("deployer_transport");
	TCase *q = tcase_create("quote");
	tcase_add_test(q, quote_exact);
	tcase_add_test(q, quote_shell_roundtrip);
	tcase_add_test(q, bad_uri);
	tcase_add_test(q, local_backend);
	tcase_add_test(q, ssh_unreachable);
	suite_add_tcase(s, q);
	TCase *ssh = tcase_create("ssh");
	tcase_add_unchecked_fixture(ssh, sshd_up, sshd_down);
	tcase_add_test(ssh, ssh_known_key);
	tcase_add_test(ssh, ssh_unknown_key);
	tcase_add_test(ssh, ssh_changed_key);
	tcase_add_test(ssh, ssh_bad_identity);
	tcase_add_test(ssh, ssh_revoked_key);
	tcase_add_test(ssh, ssh_cert_authority_refused);
	tcase_add_test(ssh, ssh_drop_reconnect);
	suite_add_tcase(s, ssh);
	return pd_test_main(s);
}
