/* SPDX-License-Identifier: MIT */
/*
 * transport.c - board URIs, the pd_deploy_transport handle and the pd_deploy_transport_* calls,
 * which dispatch to the backend's ops table (transport_local.c, transport_ssh.c) and build
 * upload/download on top of the backend's read_at/write.
 */
#include "deployer/transport_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* "ssh://[user@]host[:port]" (IPv6 as [addr]) → user (may stay NULL), host, port. */
static int parse_ssh_uri(pd_deploy_transport *t, const char *uri, pd_err *e)
{
	const char *p = uri + strlen("ssh://");
	const char *at = strchr(p, '@');
	if (at) {
		t->user = strndup(p, (size_t)(at - p));
		p = at + 1;
	}
	const char *host_end;
	const char *port_s = NULL;
	if (*p == '[') {
		host_end = strchr(p, ']');
		if (!host_end)
			return pd_err_set(e, PD_EXIT_USAGE, "board URI '%s': unterminated '['", uri);
		t->host = strndup(p + 1, (size_t)(host_end - p - 1));
		port_s = host_end[1] == ':' ? host_end + 2 : NULL;
		if (host_end[1] && host_end[1] != ':')
			return pd_err_set(e, PD_EXIT_USAGE, "board URI '%s': junk after ']'", uri);
	} else {
		host_end = strchr(p, ':');
		t->host = host_end ? strndup(p, (size_t)(host_end - p)) : strdup(p);
		port_s = host_end ? host_end + 1 : NULL;
	}
	if (!t->host || !*t->host || strchr(t->host, '/'))
		return pd_err_set(e, PD_EXIT_USAGE, "board URI '%s': expected ssh://[user@]host[:port]", uri);
	t->port = 22;
	if (port_s) {
		char *end;
		errno = 0;
		long v = strtol(port_s, &end, 10);
		if (errno || end == port_s || *end || v < 1 || v > 65535)
			return pd_err_set(e, PD_EXIT_USAGE, "board URI '%s': bad port", uri);
		t->port = (unsigned)v;
	}
	if (t->user && !*t->user)
		return pd_err_set(e, PD_EXIT_USAGE, "board URI '%s': empty user", uri);
	return 0;
}

int pd_deploy_transport_check_uri(const char *uri, pd_err *e)
{
	if (!uri)
		return pd_err_set(e, PD_EXIT_USAGE, "no board URI");
	if (strcmp(uri, "local") == 0 || strcmp(uri, "local:") == 0)
		return 0;
	if (strncmp(uri, "ssh://", 6) != 0)
		return pd_err_set(e, PD_EXIT_USAGE, "board URI '%s': expected 'local' or ssh://[user@]host[:port]", uri);
	pd_deploy_transport t = {0};
	int rc = parse_ssh_uri(&t, uri, e);
	free(t.user);
	free(t.host);
	return rc;
}

int pd_deploy_transport_open(const char *uri, const struct pd_deploy_transport_opts *o, pd_deploy_transport **out, pd_err *e)
{
	*out = NULL;
	pd_deploy_transport *t = calloc(1, sizeof(*t));
	if (!t)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	t->uri = strdup(uri);
	if (o) {
		t->opts = *o;
		t->identity = o->identity ? strdup(o->identity) : NULL;
		t->known_hosts = o->known_hosts ? strdup(o->known_hosts) : NULL;
	}
	t->opts.identity = t->identity;
	t->opts.known_hosts = t->known_hosts;
	if (t->opts.timeout_s <= 0)
		t->opts.timeout_s = 10;
	int rc;
	if (strcmp(uri, "local") == 0 || strcmp(uri, "local:") == 0) {
		t->ops = &pd_deploy_transport_local_ops;
		rc = 0;
	} else if (strncmp(uri, "ssh://", 6) == 0) {
		t->ops = &pd_deploy_transport_ssh_ops;
		rc = parse_ssh_uri(t, uri, e);
	} else {
		rc = pd_err_set(e, PD_EXIT_USAGE, "board URI '%s': expected 'local' or ssh://[user@]host[:port]", uri);
	}
	if (rc == 0)
		rc = t->ops->connect(t, e);
	if (rc) {
		t->ops = t->ops ? t->ops : &pd_deploy_transport_local_ops;
		pd_deploy_transport_close(t);
		return rc;
	}
	*out = t;
	return 0;
}

void pd_deploy_transport_close(pd_deploy_transport *t)
{
	if (!t)
		return;
	if (t->ops && t->impl)
		t->ops->disconnect(t);
	free(t->uri);
	free(t->user);
	free(t->host);
	free(t->identity);
	free(t->known_hosts);
	free(t);
}

const char *pd_deploy_transport_uri(const pd_deploy_transport *t) { return t->uri; }
bool pd_deploy_transport_is_local(const pd_deploy_transport *t) { return t->ops == &pd_deploy_transport_local_ops; }
bool pd_deploy_transport_lost(const pd_deploy_transport *t) { return t->lost; }

int pd_deploy_transport_reconnect(pd_deploy_transport *t, pd_err *e)
{
	if (t->impl)
		t->ops->disconnect(t);
	int rc = t->ops->connect(t, e);
	if (rc == 0)
		t->lost = false;
	return rc;
}

void pd_deploy_transport_drop(pd_deploy_transport *t)
{
	if (t->ops->drop)
		t->ops->drop(t);
}

void pd_deploy_exec_result_free(struct pd_deploy_exec_result *r)
{
	pd_buf_free(&r->out);
	pd_buf_free(&r->err);
}

/* Every call refuses to run on a lost connection, so that the deployer notices and reconnects
 * instead of running half of a sequence on a dead session. */
#define LOST_GUARD(t, e, what)                                                                            \
	do {                                                                                              \
		if ((t)->lost)                                                                            \
			return pd_err_set(e, PD_EXIT_ENV, "%s: connection to %s lost", what, (t)->uri); \
	} while (0)

int pd_deploy_transport_exec(pd_deploy_transport *t, const char *const *argv, struct pd_deploy_exec_result *r, pd_err *e)
{
	memset(r, 0, sizeof(*r));
	pd_buf_init(&r->out);
	pd_buf_init(&r->err);
	r->status = -1;
	LOST_GUARD(t, e, argv[0]);
	return t->ops->exec(t, argv, r, e);
}

int pd_deploy_transport_stat(pd_deploy_transport *t, const char *path, struct pd_deploy_transport_stat *st, pd_err *e)
{
	memset(st, 0, sizeof(*st));
	LOST_GUARD(t, e, path);
	return t->ops->stat(t, path, st, e);
}

int pd_deploy_transport_read(pd_deploy_transport *t, const char *path, pd_buf *out, pd_err *e)
{
	out->len = 0;
	if (out->data)
		out->data[0] = '\0';
	LOST_GUARD(t, e, path);
	/* sysfs attributes report size 4096 whatever they hold: read until a short read */
	for (uint64_t off = 0;;) {
		size_t before = out->len;
		int rc = t->ops->read_at(t, path, off, 65536, out, e);
		if (rc)
			return rc;
		size_t got = out->len - before;
		if (got == 0)
			break;
		off += got;
		if (out->len > (64u << 20))
			return pd_err_set(e, PD_EXIT_ENV, "%s: larger than 64 MiB", path);
	}
	return 0;
}

int pd_deploy_transport_read_at(pd_deploy_transport *t, const char *path, uint64_t off, size_t max, pd_buf *out, pd_err *e)
{
	LOST_GUARD(t, e, path);
	return t->ops->read_at(t, path, off, max, out, e);
}

int pd_deploy_transport_write(pd_deploy_transport *t, const char *path, const void *data, size_t len, pd_err *e)
{
	LOST_GUARD(t, e, path);
	return t->ops->write(t, path, data, len, 0644, e);
}

int pd_deploy_transport_mkdir(pd_deploy_transport *t, const char *path, unsigned mode, pd_err *e)
{
	LOST_GUARD(t, e, path);
	return t->ops->mkdir(t, path, mode, e);
}

int pd_deploy_transport_rmdir(pd_deploy_transport *t, const char *path, pd_err *e)
{
	LOST_GUARD(t, e, path);
	return t->ops->rmdir(t, path, e);
}

int pd_deploy_transport_unlink(pd_deploy_transport *t, const char *path, pd_err *e)
{
	LOST_GUARD(t, e, path);
	return t->ops->unlink(t, path, e);
}

int pd_deploy_transport_chmod(pd_deploy_transport *t, const char *path, unsigned mode, pd_err *e)
{
	LOST_GUARD(t, e, path);
	return t->ops->chmod(t, path, mode, e);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int pd_deploy_transport_listdir(pd_deploy_transport *t, const char *path, char ***names, size_t *n, pd_err *e)
{
	*names = NULL;
	*n = 0;
	LOST_GUARD(t, e, path);
	int rc = t->ops->listdir(t, path, names, n, e);
	if (rc == 0 && *n)
		qsort(*names, *n, sizeof(char *), cmp_str);
	return rc;
}

int pd_deploy_transport_upload(pd_deploy_transport *t, const char *local, const char *remote, unsigned mode, pd_err *e)
{
	char *data;
	size_t len;
	pd_err le = {0};
	if (pd_read_file(local, &data, &len, 0, &le))
		return pd_err_set(e, PD_EXIT_ENV, "upload: %s", le.msg);
	LOST_GUARD(t, e, remote);
	int rc = t->ops->write(t, remote, data, len, mode, e);
	free(data);
	return rc;
}

int pd_deploy_transport_download(pd_deploy_transport *t, const char *remote, const char *local, pd_err *e)
{
	pd_buf b;
	pd_buf_init(&b);
	int rc = pd_deploy_transport_read(t, remote, &b, e);
	if (rc == 0)
		rc = pd_write_file_atomic(local, b.data ? b.data : "", b.len, e);
	pd_buf_free(&b);
	return rc;
}
