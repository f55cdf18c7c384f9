/* SPDX-License-Identifier: MIT */
/*
 * transport_local.c - the "local" board: this machine. The same operations as the SSH backend, with
 * fork/execvp (no shell at all) and plain file I/O, so that the deployer runs unchanged on a board
 * it is started on, and tests drive the board layer against a fake sysfs tree.
 */
#include "deployer/transport_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int local_connect(pd_deploy_transport *t, pd_err *e)
{
	t->impl = t; /* nothing to hold; non-NULL marks "connected" */
	return 0;
}

static void local_disconnect(pd_deploy_transport *t) { t->impl = NULL; }

/* There is no connection to cut: the transport is marked lost, which exercises the same reconnect
 * path in the deployer as an SSH drop (fault injection). */
static void local_drop(pd_deploy_transport *t) { t->lost = true; }

/* Reads both pipes until both reach EOF, so that a child filling one pipe never blocks forever. */
static int drain(int fd_out, int fd_err, struct pd_deploy_exec_result *r)
{
	struct pollfd p[2] = {{fd_out, POLLIN, 0}, {fd_err, POLLIN, 0}};
	pd_buf *dst[2] = {&r->out, &r->err};
	int open_fds = 2;
	char buf[8192];
	while (open_fds) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(p[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				p[i].fd = -1;
				open_fds--;
				continue;
			}
			if (pd_buf_append(dst[i], buf, (size_t)n) < 0)
				return -1;
		}
	}
	return 0;
}

static int local_exec(pd_deploy_transport *t, const char *const *argv, struct pd_deploy_exec_result *r, pd_err *e)
{
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) < 0)
		return pd_err_set(e, PD_EXIT_ENV, "pipe: %s", strerror(errno));
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return pd_err_set(e, PD_EXIT_ENV, "pipe: %s", strerror(errno));
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		return pd_err_set(e, PD_EXIT_ENV, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execvp(argv[0], (char *const *)argv);
		dprintf(2, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	int drc = drain(po[0], pe[0], r);
	close(po[0]);
	close(pe[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return pd_err_set(e, PD_EXIT_ENV, "waitpid: %s", strerror(errno));
	if (drc < 0)
		return pd_err_set(e, PD_EXIT_ENV, "%s: reading output failed", argv[0]);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

static int local_stat(pd_deploy_transport *t, const char *path, struct pd_deploy_transport_stat *st, pd_err *e)
{
	struct stat s;
	if (stat(path, &s) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return pd_err_set(e, PD_EXIT_ENV, "%s: %s", path, strerror(errno));
	}
	st->exists = true;
	st->is_dir = S_ISDIR(s.st_mode);
	st->size = (uint64_t)s.st_size;
	st->mode = s.st_mode & 07777;
	return 0;
}

static int local_read_at(pd_deploy_transport *t, const char *path, uint64_t off, size_t max, pd_buf *out, pd_err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pd_err_set(e, PD_EXIT_ENV, "%s: %s", path, strerror(errno));
	char buf[65536];
	size_t want = max < sizeof(buf) ? max : sizeof(buf);
	ssize_t n;
	do
		n = pread(fd, buf, want, (off_t)off);
	while (n < 0 && errno == EINTR);
	int saved = errno;
	close(fd);
	if (n < 0)
		return pd_err_set(e, PD_EXIT_ENV, "%s: %s", path, strerror(saved));
	if (n > 0 && pd_buf_append(out, buf, (size_t)n) < 0)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	return 0;
}

static int local_write(pd_deploy_transport *t, const char *path, const void *data, size_t len, unsigned mode,
		       pd_err *e)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return pd_err_set(e, PD_EXIT_ENV, "%s: %s", path, strerror(errno));
	const char *p = data;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int saved = errno;
			close(fd);
			return pd_err_set(e, PD_EXIT_ENV, "%s: write: %s", path, strerror(saved));
		}
		p += w;
		len -= (size_t)w;
	}
	if (close(fd) < 0) /* sysfs may report the store's error at close */
		return pd_err_set(e, PD_EXIT_ENV, "%s: %s", path, strerror(errno));
	/* only an explicit mode (an uploaded executable) is applied: a sysfs attribute keeps its own */
	if (mode != 0644 && chmod(path, mode) < 0)
		return pd_err_set(e, PD_EXIT_ENV, "%s: chmod: %s", path, strerror(errno));
	return 0;
}

#define SIMPLE(name, call)                                                                     \
	static int local_##name(pd_deploy_transport *t, const char *path, pd_err *e)                  \
	{                                                                                      \
		if (call < 0)                                                                  \
			return pd_err_set(e, PD_EXIT_ENV, "%s: %s", path, strerror(errno));    \
		return 0;                                                                      \
	}
SIMPLE(rmdir, rmdir(path))
SIMPLE(unlink, unlink(path))

static int local_mkdir(pd_deploy_transport *t, const char *path, unsigned mode, pd_err *e)
{
	if (mkdir(path, mode) < 0)
		return pd_err_set(e, PD_EXIT_ENV, "%s: mkdir: %s", path, strerror(errno));
	return 0;
}

static int local_chmod(pd_deploy_transport *t, const char *path, unsigned mode, pd_err *e)
{
	if (chmod(path, mode) < 0)
		return pd_err_set(e, PD_EXIT_ENV, "%s: chmod: %s", path, strerror(errno));
	return 0;
}

static int local_listdir(pd_deploy_transport *t, const char *path, char ***names, size_t *n, pd_err *e)
{
	DIR *d = opendir(path);
	if (!d)
		return pd_err_set(e, PD_EXIT_ENV, "%s: %s", path, strerror(errno));
	size_t cap = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 16;
			char **v = realloc(*names, cap * sizeof(char *));
			if (!v)
				break;
			*names = v;
		}
		(*names)[(*n)++] = strdup(de->d_name);
	}
	closedir(d);
	return 0;
}

const struct pd_deploy_transport_ops pd_deploy_transport_local_ops = {
	.name = "local",
	.connect = local_connect,
	.disconnect = local_disconnect,
	.drop = local_drop,
	.exec = local_exec,
	.stat = local_stat,
	.read_at = local_read_at,
	.write = local_write,
	.mkdir = local_mkdir,
	.rmdir = local_rmdir,
	.unlink = local_unlink,
	.chmod = local_chmod,
	.listdir = local_listdir,
};
