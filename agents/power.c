/* SPDX-License-Identifier: MIT */
/*
 * Power rails over libiio 0.24. Watts = value * rail.scale, where value is raw * the channel's IIO
 * scale (read once) or the processed input attribute (ina3221x style).
 *
 * Local rails take a fast path: libiio resolves device (id, label or name) and channel once, then the
 * attribute is read directly - libiio's local backend fopen()s the file on every read (~6 us), which
 * alone would cost > 10 % of a CPU for 18 rails at 1 kHz. The file stays open and is re-read with
 * pread(). On sysfs and FUSE (values produced at read time, files never replaced) that is all; on any
 * other filesystem (a fake tree whose values are updated by rename(), as iio.md recommends) an
 * inotify watch on the device directory reports replaced or removed files, which are re-opened
 * relative to the directory before the next read, so a replaced file is never read stale (one
 * non-blocking read of the inotify fd per tick instead of one fstat per rail). Without inotify,
 * fstat() (st_nlink == 0 once replaced) is checked at every read.
 * Network rails go through libiio; after any error the context is destroyed and re-created (a libiio
 * network context is desynchronised after an error and must never be trusted again), at most once
 * per second. A rail that cannot be read is a gap, never a crash.
 */
#include "agents/pd_agent.h"

#include <errno.h>
#include <fcntl.h>
#include <iio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define SYSFS_MAGIC_ 0x62656572
#define FUSE_MAGIC_ 0x65735546
#define RETRY_NS (1000LL * PD_NS_PER_MS)

struct pw_ctx {
	char uri[256];
	struct iio_context *ctx;
	bool local;
	int64_t retry_at;
	int err;
};

struct pw_rail {
	const struct pd_agent_rail *r;
	int ino; /* the power's inotify fd (copied for resolve) */
	struct pw_ctx *c;
	struct iio_channel *ch; /* network: resolved channel; NULL when unresolved */
	const char *attr;       /* "raw" or "input" */
	double iio_scale;
	int fd;                 /* local fast path: the attribute file, kept open */
	int dirfd;              /* local: the device directory, to re-open a replaced file */
	bool check_replaced;    /* not sysfs/FUSE: a rename() may have replaced the file */
	int wd;                 /* inotify watch of the device directory (check_replaced) */
	bool stale;             /* the file was replaced or removed: re-open before reading */
	char fn[128];           /* local: attribute file name */
	bool resolved;
	char state[1200];
};

struct pd_power {
	struct pw_rail *rails;
	size_t n;
	int ino; /* inotify: renames/removals in fake trees' device directories (-1 none) */
	struct pw_ctx *ctxs;
	size_t n_ctx;
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
}

static void ctx_drop(pd_power *p, struct pw_ctx *c, int err)
{
	for (size_t i = 0; i < p->n; i++) {
		struct pw_rail *r = &p->rails[i];
		if (r->c != c)
			continue;
		if (r->fd >= 0)
			close(r->fd);
		if (r->dirfd >= 0)
			close(r->dirfd);
		r->fd = r->dirfd = -1;
		r->ch = NULL;
		r->resolved = false;
	}
	if (c->ctx)
		iio_context_destroy(c->ctx);
	c->ctx = NULL;
	c->err = err;
	c->retry_at = now_ns() + RETRY_NS;
}

static int resolve(struct pw_rail *r)
{
	struct iio_device *dev = iio_context_find_device(r->c->ctx, r->r->device);
	if (!dev) {
		snprintf(r->state, sizeof(r->state), "device '%s' not found at %s", r->r->device, r->c->uri);
		return -ENOENT;
	}
	struct iio_channel *ch = iio_device_find_channel(dev, r->r->channel, false);
	if (!ch) {
		snprintf(r->state, sizeof(r->state), "channel '%s' not found on %s", r->r->channel, r->r->device);
		return -ENOENT;
	}
	r->iio_scale = 1.0;
	if (iio_channel_find_attr(ch, "raw")) {
		r->attr = "raw";
		double s;
		if (iio_channel_find_attr(ch, "scale") && iio_channel_attr_read_double(ch, "scale", &s) == 0)
			r->iio_scale = s;
	} else if (iio_channel_find_attr(ch, "input")) {
		r->attr = "input";
	} else {
		snprintf(r->state, sizeof(r->state), "channel '%s' of %s has neither raw nor input", r->r->channel,
			 r->r->device);
		return -ENOENT;
	}
	r->ch = ch;
	if (r->c->local) {
		const char *fn = iio_channel_attr_get_filename(ch, r->attr);
		char path[512];
		snprintf(path, sizeof(path), "/sys/bus/iio/devices/%s", iio_device_get_id(dev));
		snprintf(r->fn, sizeof(r->fn), "%s", fn ? fn : "?");
		r->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (r->dirfd >= 0)
			r->fd = openat(r->dirfd, r->fn, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			int err = errno;
			snprintf(r->state, sizeof(r->state), "cannot open %s/%s: %s", path, r->fn, strerror(err));
			return -err;
		}
		struct statfs sf;
		r->check_replaced = !(fstatfs(r->fd, &sf) == 0 && (sf.f_type == SYSFS_MAGIC_ || sf.f_type == FUSE_MAGIC_));
		r->wd = -1;
		r->stale = false;
		if (r->check_replaced && r->ino >= 0)
			r->wd = inotify_add_watch(r->ino, path, IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM);
		snprintf(r->state, sizeof(r->state), "local %s %s/%s", r->check_replaced ? "pread+fstat" : "pread", path,
			 r->fn);
	} else {
		snprintf(r->state, sizeof(r->state), "%s %s/%s/%s via libiio", r->c->uri, r->r->device, r->r->channel, r->attr);
	}
	r->resolved = true;
	return 0;
}

static int ctx_open(pd_power *p, struct pw_ctx *c)
{
	char uri[256]; /* libiio 0.24 writes into the URI when it has a port: always pass a copy */
	snprintf(uri, sizeof(uri), "%s", c->uri);
	c->ctx = iio_create_context_from_uri(uri);
	if (!c->ctx) {
		int err = errno ? errno : EIO;
		ctx_drop(p, c, err);
		for (size_t i = 0; i < p->n; i++)
			if (p->rails[i].c == c)
				snprintf(p->rails[i].state, sizeof(p->rails[i].state), "no IIO context %s: %s", c->uri,
					 strerror(err));
		return -err;
	}
	if (!c->local)
		iio_context_set_timeout(c->ctx, 1000);
	for (size_t i = 0; i < p->n; i++)
		if (p->rails[i].c == c)
			resolve(&p->rails[i]);
	return 0;
}

pd_power *pd_agent_power_open(const struct pd_agent_rail *rails, size_t n, const char *uri_override)
{
	pd_power *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->rails = calloc(n + 1, sizeof(*p->rails));
	p->ctxs = calloc(n + 1, sizeof(*p->ctxs));
	if (!p->rails || !p->ctxs) {
		pd_agent_power_close(p);
		return NULL;
	}
	p->n = n;
	p->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	for (size_t i = 0; i < n; i++) {
		struct pw_rail *r = &p->rails[i];
		r->r = &rails[i];
		r->ino = p->ino;
		r->wd = -1;
		r->fd = r->dirfd = -1;
		const char *uri = uri_override ? uri_override : (rails[i].uri && rails[i].uri[0] ? rails[i].uri : "local:");
		struct pw_ctx *c = NULL;
		for (size_t k = 0; k < p->n_ctx && !c; k++)
			if (strcmp(p->ctxs[k].uri, uri) == 0)
				c = &p->ctxs[k];
		if (!c) {
			c = &p->ctxs[p->n_ctx++];
			snprintf(c->uri, sizeof(c->uri), "%s", uri);
			c->local = strncmp(uri, "local:", 6) == 0;
		}
		r->c = c;
	}
	for (size_t k = 0; k < p->n_ctx; k++)
		ctx_open(p, &p->ctxs[k]);
	return p;
}

static int read_local(struct pw_rail *r, double *v)
{
	char buf[64];
	if (r->check_replaced) {
		struct stat st;
		bool reopen = r->fd < 0 || r->stale ||
			      (r->wd < 0 && (fstat(r->fd, &st) != 0 || st.st_nlink == 0)); /* no inotify */
		if (reopen) {
			if (r->fd >= 0)
				close(r->fd);
			r->fd = openat(r->dirfd, r->fn, O_RDONLY | O_CLOEXEC);
			if (r->fd < 0)
				return -errno; /* gone: a gap until it comes back (stale stays set) */
			r->stale = false;
		}
	}
	ssize_t n = pread(r->fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return n < 0 ? -errno : -EIO; /* an empty file is a rewrite in progress, as libiio says */
	buf[n] = '\0';
	char *end;
	*v = strtod(buf, &end);
	return end == buf ? -EINVAL : 0;
}

/* Marks rails whose files were replaced or removed since the last tick. */
static void drain_inotify(pd_power *p)
{
	if (p->ino < 0)
		return;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while ((n = read(p->ino, buf, sizeof(buf))) > 0) {
		for (char *c = buf; c < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)c;
			for (size_t i = 0; i < p->n; i++) {
				struct pw_rail *r = &p->rails[i];
				if ((ev->mask & IN_Q_OVERFLOW) || (r->wd == ev->wd && ev->len && strcmp(ev->name, r->fn) == 0))
					r->stale = true;
			}
			c += sizeof(*ev) + ev->len;
		}
	}
}

size_t pd_agent_power_read(pd_power *p, struct pd_agent_power_sample *out)
{
	int64_t now = now_ns();
	for (size_t k = 0; k < p->n_ctx; k++) {
		struct pw_ctx *c = &p->ctxs[k];
		if (!c->ctx && now >= c->retry_at)
			ctx_open(p, c);
	}
	drain_inotify(p);
	size_t ok = 0;
	for (size_t i = 0; i < p->n; i++) {
		struct pw_rail *r = &p->rails[i];
		out[i].uw = INT64_MIN;
		out[i].err = 0;
		if (!r->resolved) {
			out[i].err = r->c->ctx ? ENOENT : (r->c->err ? r->c->err : EIO);
			continue;
		}
		double v;
		int rc = r->c->local ? read_local(r, &v) : iio_channel_attr_read_double(r->ch, r->attr, &v);
		if (rc < 0) {
			out[i].err = -rc;
			if (!r->c->local)
				ctx_drop(p, r->c, -rc); /* reconnect: never trust this context again */
			continue;
		}
		out[i].uw = (int64_t)(v * r->iio_scale * r->r->scale * 1e6 + (v >= 0 ? 0.5 : -0.5));
		ok++;
	}
	return ok;
}

const char *pd_agent_power_rail_state(const pd_power *p, size_t i) { return p->rails[i].state; }

void pd_agent_power_close(pd_power *p)
{
	if (!p)
		return;
	for (size_t k = 0; k < p->n_ctx; k++) {
		struct pw_ctx *c = &p->ctxs[k];
		for (size_t i = 0; i < p->n; i++)
			if (p->rails[i].c == c) {
				if (p->rails[i].fd >= 0)
					close(p->rails[i].fd);
				if (p->rails[i].dirfd >= 0)
					close(p->rails[i].dirfd);
			}
		if (c->ctx)
			iio_context_destroy(c->ctx);
	}
	if (p->ino >= 0)
		close(p->ino);
	free(p->rails);
	free(p->ctxs);
	free(p);
}
