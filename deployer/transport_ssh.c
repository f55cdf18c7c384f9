/* SPDX-License-Identifier: MIT */
/*
 * transport_ssh.c - the SSH board: libssh with strict host-key verification, public-key auth, exec
 * channels for argv-vector commands (quoted by pd_deploy_shell_quote only) and SFTP for every file.
 *
 * Host keys: the server's key must already be in the known_hosts file given (or ~/.ssh/known_hosts).
 * Unknown, changed or other-type keys are refused with PD_EXIT_ENV; the message holds the server's
 * SHA256 fingerprint and the exact command that accepts the key, so the user checks it out of band.
 * There is no "accept anyway" switch: trust is the user's explicit act.
 *
 * Lost connections: any libssh/SFTP failure on a session that is no longer connected sets t->lost;
 * the deployer then reconnects (pd_deploy_transport_reconnect), which builds a fresh session.
 */
#include "deployer/transport_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <libssh/libssh.h>
#include <libssh/sftp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

struct ssh_impl {
	ssh_session s;
	sftp_session sftp;
};

#define IMPL(t) ((struct ssh_impl *)(t)->impl)

/* Marks the transport lost when the session dropped; returns the PD error in both cases. */
static int fail(pd_deploy_transport *t, pd_err *e, const char *what, const char *path)
{
	struct ssh_impl *im = IMPL(t);
	const char *why = ssh_get_error(im->s);
	if (!ssh_is_connected(im->s) || (im->sftp && sftp_get_error(im->sftp) == SSH_FX_CONNECTION_LOST)) {
		t->lost = true;
		return pd_err_set(e, PD_EXIT_ENV, "%s %s: connection to %s lost (%s)", what, path, t->uri, why);
	}
	return pd_err_set(e, PD_EXIT_ENV, "%s %s: %s", what, path, why && *why ? why : "failed");
}

static const char *sftp_why(int code)
{
	switch (code) {
	case SSH_FX_NO_SUCH_FILE: return "No such file or directory";
	case SSH_FX_PERMISSION_DENIED: return "Permission denied";
	case SSH_FX_FAILURE: return "the board refused the operation (busy, or invalid value)";
	case SSH_FX_BAD_MESSAGE: return "Invalid argument (the board refused the value)";
	case SSH_FX_OP_UNSUPPORTED: return "Operation not supported";
	case SSH_FX_EOF: return "end of file";
	case SSH_FX_FILE_ALREADY_EXISTS: return "File exists";
	case SSH_FX_NO_CONNECTION:
	case SSH_FX_CONNECTION_LOST: return "connection lost";
	default: return "SFTP error (no detail from the server)";
	}
}

static int sftp_fail(pd_deploy_transport *t, pd_err *e, const char *what, const char *path)
{
	struct ssh_impl *im = IMPL(t);
	int code = sftp_get_error(im->sftp);
	if (!ssh_is_connected(im->s) || code == SSH_FX_CONNECTION_LOST || code == SSH_FX_NO_CONNECTION) {
		t->lost = true;
		return pd_err_set(e, PD_EXIT_ENV, "%s %s: connection to %s lost", what, path, t->uri);
	}
	return pd_err_set(e, PD_EXIT_ENV, "%s %s: %s", what, path, sftp_why(code));
}

/* "ssh-ed25519" → "ed25519", "ecdsa-sha2-nistp256" → "ecdsa": the -t value ssh-keyscan expects. */
static const char *keyscan_type(const char *t)
{
	if (!t)
		return "ed25519";
	if (!strncmp(t, "ecdsa", 5))
		return "ecdsa";
	if (!strncmp(t, "ssh-", 4))
		return t + 4;
	return t;
}

/* known_hosts markers, which libssh 0.10 does not know (it reads "@revoked" as a host name that never
 * matches, so a revoked key listed again on a plain line would be accepted):
 *   @revoked PATTERNS TYPE KEY         the key is refused, for every host (stricter than OpenSSH,
 *                                      which applies the line to the hosts it names)
 *   @cert-authority PATTERNS TYPE KEY  host certificates are not supported: such a line never makes a
 *                                      key trusted, and an unknown key says why
 * The files read are the ones libssh verifies against: --known-hosts alone, else ~/.ssh/known_hosts
 * and /etc/ssh/ssh_known_hosts. */
struct kh_markers {
	char revoked_in[512];  /* file:line of the @revoked line naming the server's key, "" when none */
	char ca_in[512];       /* file:line of the first @cert-authority line, "" when none */
};

static void scan_markers(const char *file, ssh_key server, struct kh_markers *m)
{
	char *text = NULL;
	size_t len;
	pd_err ig = {0};
	if (pd_read_file(file, &text, &len, 16u << 20, &ig))
		return; /* a missing file has no markers; libssh reports the key unknown */
	char *save = NULL;
	unsigned lineno = 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++; /* empty lines are skipped by strtok: numbers count the non-empty ones */
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line != '@')
			continue;
		char marker[32], hosts[1024], type[64], b64[8192];
		if (sscanf(line, "%31s %1023s %63s %8191s", marker, hosts, type, b64) != 4)
			continue;
		if (!strcmp(marker, "@cert-authority") && !m->ca_in[0]) {
			snprintf(m->ca_in, sizeof(m->ca_in), "%s:%u", file, lineno);
		} else if (!strcmp(marker, "@revoked") && !m->revoked_in[0]) {
			ssh_key k = NULL;
			if (ssh_pki_import_pubkey_base64(b64, ssh_key_type_from_name(type), &k) == SSH_OK &&
			    ssh_key_cmp(k, server, SSH_KEY_CMP_PUBLIC) == 0)
				snprintf(m->revoked_in, sizeof(m->revoked_in), "%s:%u", file, lineno);
			ssh_key_free(k);
		}
	}
	free(text);
}

static void find_markers(pd_deploy_transport *t, ssh_key server, struct kh_markers *m)
{
	memset(m, 0, sizeof(*m));
	if (t->known_hosts) {
		scan_markers(t->known_hosts, server, m);
		return;
	}
	const char *home = getenv("HOME");
	char user[1024];
	if (home) {
		snprintf(user, sizeof(user), "%s/.ssh/known_hosts", home);
		scan_markers(user, server, m);
	}
	scan_markers("/etc/ssh/ssh_known_hosts", server, m);
}

static int verify_host_key(pd_deploy_transport *t, pd_err *e)
{
	ssh_session s = IMPL(t)->s;
	ssh_key key = NULL;
	if (ssh_get_server_publickey(s, &key) != SSH_OK)
		return pd_err_set(e, PD_EXIT_ENV, "%s: no host key from server", t->uri);
	unsigned char *hash = NULL;
	size_t hlen = 0;
	char *fp = NULL;
	if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) == 0)
		fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
	const char *type = keyscan_type(ssh_key_type_to_char(ssh_key_type(key)));
	enum ssh_known_hosts_e k = ssh_session_is_known_server(s);
	const char *kh = t->known_hosts ? t->known_hosts : "~/.ssh/known_hosts";
	char hostpat[300];
	if (t->port == 22)
		snprintf(hostpat, sizeof(hostpat), "%s", t->host);
	else
		snprintf(hostpat, sizeof(hostpat), "[%s]:%u", t->host, t->port);
	struct kh_markers mk;
	find_markers(t, key, &mk);
	int rc = 0;
	if (mk.revoked_in[0]) /* whatever else the files say: OpenSSH never accepts a revoked key */
		rc = pd_err_set(e, PD_EXIT_ENV,
				"host key of %s (%s key %s) is REVOKED (@revoked at %s); refusing to connect. A "
				"revoked key means the board's key was compromised or retired: give the board a new "
				"host key and check its fingerprint on the console before accepting it",
				hostpat, type, fp ? fp : "?", mk.revoked_in);
	else switch (k) {
	case SSH_KNOWN_HOSTS_OK:
		break;
	case SSH_KNOWN_HOSTS_CHANGED:
	case SSH_KNOWN_HOSTS_OTHER:
		rc = pd_err_set(e, PD_EXIT_ENV,
				"host key of %s CHANGED (server now presents %s key %s); refusing to connect. "
				"If the board was reinstalled, check the fingerprint on its console, then run: "
				"ssh-keygen -R '%s' -f %s && ssh-keyscan -p %u -t %s %s >> %s",
				hostpat, type, fp ? fp : "?", hostpat, kh, t->port, type, t->host, kh);
		break;
	case SSH_KNOWN_HOSTS_UNKNOWN:
	case SSH_KNOWN_HOSTS_NOT_FOUND:
		rc = pd_err_set(e, PD_EXIT_ENV,
				"host key of %s is unknown (%s key %s); refusing to connect.%s%s%s Check the "
				"fingerprint on the board (ssh-keygen -lf /etc/ssh/ssh_host_%s_key.pub), then accept "
				"it with: ssh-keyscan -p %u -t %s %s >> %s",
				hostpat, type, fp ? fp : "?",
				mk.ca_in[0] ? " The @cert-authority line at " : "", mk.ca_in,
				mk.ca_in[0] ? " is not supported (host certificates are not verified; list the "
					      "board's own key instead)." : "",
				type, t->port, type, t->host, kh);
		break;
	default:
		rc = pd_err_set(e, PD_EXIT_ENV, "cannot verify the host key of %s against %s: %s", hostpat, kh,
				ssh_get_error(s));
	}
	ssh_string_free_char(fp);
	ssh_clean_pubkey_hash(&hash);
	ssh_key_free(key);
	return rc;
}

static int authenticate(pd_deploy_transport *t, pd_err *e)
{
	ssh_session s = IMPL(t)->s;
	int rc;
	if (t->identity) {
		ssh_key key = NULL;
		if (ssh_pki_import_privkey_file(t->identity, NULL, NULL, NULL, &key) != SSH_OK)
			return pd_err_set(e, PD_EXIT_ENV, "cannot read identity %s (missing, unreadable or "
							  "passphrase-protected)", t->identity);
		rc = ssh_userauth_publickey(s, NULL, key);
		ssh_key_free(key);
	} else {
		rc = ssh_userauth_publickey_auto(s, NULL, NULL);
	}
	if (rc != SSH_AUTH_SUCCESS)
		return pd_err_set(e, PD_EXIT_ENV, "%s: public-key authentication refused (identity %s)", t->uri,
				  t->identity ? t->identity : "default keys / agent");
	return 0;
}

static void ssh_disconnect_impl(pd_deploy_transport *t)
{
	struct ssh_impl *im = IMPL(t);
	if (!im)
		return;
	if (im->sftp)
		sftp_free(im->sftp);
	if (im->s) {
		if (ssh_is_connected(im->s))
			ssh_disconnect(im->s);
		ssh_free(im->s);
	}
	free(im);
	t->impl = NULL;
}

static int ssh_connect_impl(pd_deploy_transport *t, pd_err *e)
{
	struct ssh_impl *im = calloc(1, sizeof(*im));
	if (!im)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	t->impl = im;
	im->s = ssh_new();
	if (!im->s)
		return pd_err_set(e, PD_EXIT_ENV, "ssh_new failed");
	int verbosity = SSH_LOG_NOLOG;
	long timeout = t->opts.timeout_s;
	int no = 0;
	ssh_options_set(im->s, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
	/* ~/.ssh/config is not read: what the deployer connects to depends on its arguments only */
	ssh_options_set(im->s, SSH_OPTIONS_PROCESS_CONFIG, &no);
	ssh_options_set(im->s, SSH_OPTIONS_HOST, t->host);
	ssh_options_set(im->s, SSH_OPTIONS_PORT, &t->port);
	ssh_options_set(im->s, SSH_OPTIONS_TIMEOUT, &timeout);
	if (t->user)
		ssh_options_set(im->s, SSH_OPTIONS_USER, t->user);
	if (t->known_hosts) {
		/* only this file decides; the system-wide list is not consulted either */
		ssh_options_set(im->s, SSH_OPTIONS_KNOWNHOSTS, t->known_hosts);
		ssh_options_set(im->s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
	}
	if (ssh_connect(im->s) != SSH_OK)
		return pd_err_set(e, PD_EXIT_ENV, "cannot connect to %s: %s", t->uri, ssh_get_error(im->s));
	int rc = verify_host_key(t, e);
	if (rc == 0)
		rc = authenticate(t, e);
	if (rc)
		return rc;
	im->sftp = sftp_new(im->s);
	if (!im->sftp || sftp_init(im->sftp) != SSH_OK)
		return pd_err_set(e, PD_EXIT_ENV, "%s: SFTP subsystem unavailable: %s", t->uri, ssh_get_error(im->s));
	return 0;
}

static void ssh_drop_impl(pd_deploy_transport *t)
{
	struct ssh_impl *im = IMPL(t);
	if (im && im->s) {
		int fd = ssh_get_fd(im->s);
		if (fd >= 0)
			shutdown(fd, SHUT_RDWR); /* the TCP connection dies under libssh, as on a cable pull */
	}
}

static int ssh_exec_impl(pd_deploy_transport *t, const char *const *argv, struct pd_deploy_exec_result *r, pd_err *e)
{
	struct ssh_impl *im = IMPL(t);
	pd_buf cmd;
	pd_buf_init(&cmd);
	if (pd_deploy_shell_quote_argv(&cmd, argv) < 0)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	ssh_channel ch = ssh_channel_new(im->s);
	int rc = 0;
	if (!ch || ssh_channel_open_session(ch) != SSH_OK || ssh_channel_request_exec(ch, cmd.data) != SSH_OK) {
		rc = fail(t, e, "exec", argv[0]);
		goto out;
	}
	/* Alternate short reads on stdout and stderr until both reach EOF: libssh buffers each stream,
	 * so neither can block the other. */
	char buf[8192];
	/* a command that neither writes nor ends for 3 x timeout is considered hung (every command the
	 * deployer runs is short: the agent itself runs detached) */
	long idle_ms = 0, limit_ms = t->opts.timeout_s * 3000;
	for (;;) {
		if (idle_ms > limit_ms) {
			rc = pd_err_set(e, PD_EXIT_ENV, "%s on %s: no output and no exit for %ld s", argv[0], t->uri,
					limit_ms / 1000);
			goto out;
		}
		int n0 = ssh_channel_read_timeout(ch, buf, sizeof(buf), 0, 10);
		if (n0 > 0)
			pd_buf_append(&r->out, buf, (size_t)n0);
		int n1 = ssh_channel_read_timeout(ch, buf, sizeof(buf), 1, n0 > 0 ? 0 : 10);
		if (n1 > 0)
			pd_buf_append(&r->err, buf, (size_t)n1);
		if (n0 == SSH_ERROR || n1 == SSH_ERROR) {
			rc = fail(t, e, "exec", argv[0]);
			goto out;
		}
		if (n0 <= 0 && n1 <= 0 && ssh_channel_is_eof(ch) &&
		    ssh_channel_poll(ch, 0) <= 0 && ssh_channel_poll(ch, 1) <= 0)
			break;
		idle_ms = n0 > 0 || n1 > 0 ? 0 : idle_ms + 20;
	}
	ssh_channel_send_eof(ch);
	r->status = ssh_channel_get_exit_status(ch);
	if (r->status < 0) {
		rc = fail(t, e, "exec", argv[0]);
		goto out;
	}
out:
	if (ch) {
		ssh_channel_close(ch);
		ssh_channel_free(ch);
	}
	pd_buf_free(&cmd);
	return rc;
}

static int ssh_stat_impl(pd_deploy_transport *t, const char *path, struct pd_deploy_transport_stat *st, pd_err *e)
{
	struct ssh_impl *im = IMPL(t);
	sftp_attributes a = sftp_stat(im->sftp, path);
	if (!a) {
		int code = sftp_get_error(im->sftp);
		if (code == SSH_FX_NO_SUCH_FILE && ssh_is_connected(im->s))
			return 0;
		return sftp_fail(t, e, "stat", path);
	}
	st->exists = true;
	st->is_dir = a->type == SSH_FILEXFER_TYPE_DIRECTORY;
	st->size = a->size;
	st->mode = a->permissions & 07777;
	sftp_attributes_free(a);
	return 0;
}

static int ssh_read_at_impl(pd_deploy_transport *t, const char *path, uint64_t off, size_t max, pd_buf *out, pd_err *e)
{
	struct ssh_impl *im = IMPL(t);
	sftp_file f = sftp_open(im->sftp, path, O_RDONLY, 0);
	if (!f)
		return sftp_fail(t, e, "read", path);
	int rc = 0;
	char buf[32768];
	size_t want = max < sizeof(buf) ? max : sizeof(buf);
	if (off && sftp_seek64(f, off) < 0) {
		rc = sftp_fail(t, e, "seek", path);
	} else {
		ssize_t n = sftp_read(f, buf, want);
		if (n < 0)
			rc = sftp_fail(t, e, "read", path);
		else if (n > 0 && pd_buf_append(out, buf, (size_t)n) < 0)
			rc = pd_err_set(e, PD_EXIT_ENV, "out of memory");
	}
	sftp_close(f);
	return rc;
}

static int ssh_write_impl(pd_deploy_transport *t, const char *path, const void *data, size_t len, unsigned mode,
			  pd_err *e)
{
	struct ssh_impl *im = IMPL(t);
	sftp_file f = sftp_open(im->sftp, path, O_WRONLY | O_CREAT | O_TRUNC, (mode_t)mode);
	if (!f)
		return sftp_fail(t, e, "write", path);
	const char *p = data;
	int rc = 0;
	while (len) {
		size_t chunk = len < 32768 ? len : 32768;
		ssize_t w = sftp_write(f, p, chunk);
		if (w <= 0) {
			rc = sftp_fail(t, e, "write", path);
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	if (sftp_close(f) != SSH_NO_ERROR && rc == 0)
		rc = sftp_fail(t, e, "write", path);
	if (rc == 0 && mode != 0644 && sftp_chmod(im->sftp, path, (mode_t)mode) < 0)
		rc = sftp_fail(t, e, "chmod", path);
	return rc;
}

static int ssh_mkdir_impl(pd_deploy_transport *t, const char *path, unsigned mode, pd_err *e)
{
	return sftp_mkdir(IMPL(t)->sftp, path, (mode_t)mode) < 0 ? sftp_fail(t, e, "mkdir", path) : 0;
}

static int ssh_rmdir_impl(pd_deploy_transport *t, const char *path, pd_err *e)
{
	return sftp_rmdir(IMPL(t)->sftp, path) < 0 ? sftp_fail(t, e, "rmdir", path) : 0;
}

static int ssh_unlink_impl(pd_deploy_transport *t, const char *path, pd_err *e)
{
	return sftp_unlink(IMPL(t)->sftp, path) < 0 ? sftp_fail(t, e, "unlink", path) : 0;
}

static int ssh_chmod_impl(pd_deploy_transport *t, const char *path, unsigned mode, pd_err *e)
{
	return sftp_chmod(IMPL(t)->sftp, path, (mode_t)mode) < 0 ? sftp_fail(t, e, "chmod", path) : 0;
}

static int ssh_listdir_impl(pd_deploy_transport *t, const char *path, char ***names, size_t *n, pd_err *e)
{
	struct ssh_impl *im = IMPL(t);
	sftp_dir d = sftp_opendir(im->sftp, path);
	if (!d)
		return sftp_fail(t, e, "opendir", path);
	size_t cap = 0;
	sftp_attributes a;
	while ((a = sftp_readdir(im->sftp, d))) {
		if (strcmp(a->name, ".") && strcmp(a->name, "..")) {
			if (*n == cap) {
				cap = cap ? 2 * cap : 16;
				char **v = realloc(*names, cap * sizeof(char *));
				if (!v) {
					sftp_attributes_free(a);
					break;
				}
				*names = v;
			}
			(*names)[(*n)++] = strdup(a->name);
		}
		sftp_attributes_free(a);
	}
	int rc = sftp_dir_eof(d) ? 0 : sftp_fail(t, e, "readdir", path);
	sftp_closedir(d);
	return rc;
}

const struct pd_deploy_transport_ops pd_deploy_transport_ssh_ops = {
	.name = "ssh",
	.connect = ssh_connect_impl,
	.disconnect = ssh_disconnect_impl,
	.drop = ssh_drop_impl,
	.exec = ssh_exec_impl,
	.stat = ssh_stat_impl,
	.read_at = ssh_read_at_impl,
	.write = ssh_write_impl,
	.mkdir = ssh_mkdir_impl,
	.rmdir = ssh_rmdir_impl,
	.unlink = ssh_unlink_impl,
	.chmod = ssh_chmod_impl,
	.listdir = ssh_listdir_impl,
};
