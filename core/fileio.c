/* SPDX-License-Identifier: MIT */
/*
 * Whole-file reads with a size cap, and atomic writes: an output file either appears complete or
 * not at all (temp file beside it, fsync, rename), so that "bad input writes nothing" holds even
 * when a writer fails half-way.
 */
#include "core/pd_core.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int pd_write_file_atomic(const char *path, const void *data, size_t len, pd_err *e)
{
	if (strcmp(path, "-") == 0) {
		if (write_all(STDOUT_FILENO, data, len) < 0)
			return pd_err_set(e, PD_EXIT_ENV, "cannot write to stdout: %s", strerror(errno));
		return 0;
	}
	size_t n = strlen(path);
	char *tmp = malloc(n + 32);
	if (!tmp)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	snprintf(tmp, n + 32, "%s.tmp.XXXXXX", path);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		int r = pd_err_set(e, PD_EXIT_ENV, "cannot create %s: %s", path, strerror(errno));
		free(tmp);
		return r;
	}
	int rc = 0;
	if (write_all(fd, data, len) < 0 || fsync(fd) < 0)
		rc = pd_err_set(e, PD_EXIT_ENV, "cannot write %s: %s", path, strerror(errno));
	if (fchmod(fd, 0644) < 0 && rc == 0)
		rc = pd_err_set(e, PD_EXIT_ENV, "cannot chmod %s: %s", path, strerror(errno));
	close(fd);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = pd_err_set(e, PD_EXIT_ENV, "cannot rename to %s: %s", path, strerror(errno));
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

int pd_read_file(const char *path, char **out, size_t *len, size_t max_bytes, pd_err *e)
{
	if (!max_bytes)
		max_bytes = 64u << 20;
	int fd = strcmp(path, "-") == 0 ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pd_err_set(e, PD_EXIT_USAGE, "%s: cannot open: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return pd_err_set(e, PD_EXIT_USAGE, "%s: is a directory", path);
	}
	pd_buf b;
	pd_buf_init(&b);
	char chunk[65536];
	for (;;) {
		ssize_t r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int c = pd_err_set(e, PD_EXIT_USAGE, "%s: read error: %s", path, strerror(errno));
			close(fd);
			pd_buf_free(&b);
			return c;
		}
		if (r == 0)
			break;
		if (b.len + (size_t)r > max_bytes) {
			close(fd);
			pd_buf_free(&b);
			return pd_err_set(e, PD_EXIT_USAGE, "%s: file larger than %zu bytes", path, max_bytes);
		}
		if (pd_buf_append(&b, chunk, (size_t)r) < 0) {
			close(fd);
			pd_buf_free(&b);
			return pd_err_set(e, PD_EXIT_ENV, "out of memory");
		}
	}
	close(fd);
	if (!b.data && pd_buf_append(&b, "", 0) < 0)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	*out = b.data;
	*len = b.len;
	return 0;
}
