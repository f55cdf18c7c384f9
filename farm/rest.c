/* SPDX-License-Identifier: MIT */
/*
 * Following jobs through LAVA's REST API (GET /api/v0.2/jobs/ID/), with a minimal HTTP/1.0 client
 * over a socket. Why not lavacli here too: `farm collect` asks for every unfinished job about once a
 * second, and each lavacli start is a Python interpreter (~0.6 s of CPU on the development VM) —
 * on a host whose CPUs also run the twins' SCHED_DEADLINE agents that is load the runs would pay
 * for. One GET is ~25 ms of the server's time and almost none of ours. Plain http:// only (a lab's
 * LAVA behind TLS is followed through lavacli instead, lava.c). The answer is capped at 4 MiB and
 * parsed with jansson; the token travels in the Authorization header.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "farm/farm_impl.h"

#define REST_MAX (4u << 20)

struct url {
	char host[256], port[8], prefix[256];
};

static int parse_url(const char *u, struct url *p)
{
	if (strncmp(u, "http://", 7))
		return -1;
	u += 7;
	size_t hl = strcspn(u, ":/");
	if (hl == 0 || hl >= sizeof(p->host))
		return -1;
	memcpy(p->host, u, hl);
	p->host[hl] = 0;
	u += hl;
	snprintf(p->port, sizeof(p->port), "80");
	if (*u == ':') {
		size_t pl = strspn(u + 1, "0123456789");
		if (pl == 0 || pl > 5)
			return -1;
		memcpy(p->port, u + 1, pl);
		p->port[pl] = 0;
		u += 1 + pl;
	}
	if (*u && *u != '/')
		return -1;
	snprintf(p->prefix, sizeof(p->prefix), "%s", *u ? u : "/");
	size_t n = strlen(p->prefix);
	if (n == 0 || p->prefix[n - 1] != '/')
		snprintf(p->prefix + n, sizeof(p->prefix) - n, "/");
	return 0;
}

static int dial(const struct url *p, pd_err *e)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	int g = getaddrinfo(p->host, p->port, &hints, &res);
	if (g)
		return pd_err_set(e, PD_EXIT_ENV, "LAVA %s:%s: %s", p->host, p->port, gai_strerror(g)), -1;
	int fd = -1;
	for (struct addrinfo *a = res; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		struct timeval tv = {10, 0};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		pd_err_set(e, PD_EXIT_ENV, "LAVA %s:%s: cannot connect: %s", p->host, p->port, strerror(errno));
	return fd;
}

/* GET prefix+path; the body of a 200 answer as JSON. */
static json_t *rest_get(const pd_farm_lab *l, const char *path, pd_err *e)
{
	struct url u;
	if (parse_url(l->url, &u))
		return pd_err_set(e, PD_EXIT_USAGE, "LAVA url %s: http://host[:port][/path] expected", l->url), NULL;
	int fd = dial(&u, e);
	if (fd < 0)
		return NULL;
	pd_buf req, ans;
	pd_buf_init(&req);
	pd_buf_init(&ans);
	pd_buf_printf(&req, "GET %s%s HTTP/1.0\r\nHost: %s:%s\r\nAuthorization: Token %s\r\nAccept: application/json\r\n\r\n",
		      u.prefix, path, u.host, u.port, l->token);
	json_t *j = NULL;
	size_t off = 0;
	while (off < req.len) {
		ssize_t w = send(fd, req.data + off, req.len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			pd_err_set(e, PD_EXIT_ENV, "LAVA %s: send: %s", l->url, strerror(errno));
			goto out;
		}
		off += (size_t)w;
	}
	char buf[16384];
	for (;;) {
		ssize_t r = recv(fd, buf, sizeof(buf), 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			pd_err_set(e, PD_EXIT_ENV, "LAVA %s: %s", l->url, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		if (ans.len + (size_t)r > REST_MAX) {
			pd_err_set(e, PD_EXIT_ENV, "LAVA %s: answer larger than 4 MiB", l->url);
			goto out;
		}
		pd_buf_append(&ans, buf, (size_t)r);
	}
	int status = 0;
	const char *body = ans.data ? strstr(ans.data, "\r\n\r\n") : NULL;
	if (!ans.data || sscanf(ans.data, "HTTP/1.%*d %d", &status) != 1 || !body) {
		pd_err_set(e, PD_EXIT_ENV, "LAVA %s: not an HTTP answer", l->url);
		goto out;
	}
	if (status != 200) {
		pd_err_set(e, PD_EXIT_ENV, "LAVA %s%s: HTTP %d", l->url, path, status);
		goto out;
	}
	body += 4;
	json_error_t je;
	j = json_loadb(body, ans.len - (size_t)(body - ans.data), 0, &je);
	if (!j)
		pd_err_set(e, PD_EXIT_ENV, "LAVA %s%s: bad JSON: %s", l->url, path, je.text);
out:
	close(fd);
	memset(req.data, 0, req.len);
	pd_buf_free(&req);
	pd_buf_free(&ans);
	return j;
}

static void jcopy(json_t *o, const char *k, char *out, size_t n)
{
	const char *v = json_string_value(json_object_get(o, k));
	snprintf(out, n, "%s", v ? v : "");
}

int farm_rest_show(pd_farm_lab *l, long job_id, struct farm_job_state *s, pd_err *e)
{
	char path[64];
	snprintf(path, sizeof(path), "api/v0.2/jobs/%ld/", job_id);
	json_t *j = rest_get(l, path, e);
	if (!j)
		return e->code ? e->code : PD_EXIT_ENV;
	jcopy(j, "state", s->state, sizeof(s->state));
	jcopy(j, "health", s->health, sizeof(s->health));
	jcopy(j, "actual_device", s->device, sizeof(s->device));
	jcopy(j, "failure_comment", s->failure, sizeof(s->failure));
	if (s->device[0] && !farm_name_ok(s->device))
		s->device[0] = 0;
	json_decref(j);
	return 0;
}
