/* SPDX-License-Identifier: MIT */
/*
 * Whole-file reads with a size cap, and atomic writes: an output file either appears complete or
 * not at all (temp file beside it, fsync, rename), so that "bad input writes nothing" holds even
 * when a writer fails half-way.
 */
#include "core/pd_core.h"

#include <errno.h>
#include <dirent.h>
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

/* An output that is a character device or a pipe (-o /dev/null, a named pipe) is written into: the
 * rename below would replace the node with a regular file (it once turned a machine's /dev/null into
 * one). O_NOFOLLOW: the node itself, never a link to one. No fsync: not a file. */
static int write_into_node(const char *path, const void *data, size_t len, pd_err *e)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pd_err_set(e, PD_EXIT_ENV, "cannot open %s: %s", path, strerror(errno));
	int rc = write_all(fd, data, len) < 0 ? pd_err_set(e, PD_EXIT_ENV, "cannot write %s: %s", path, strerror(errno)) : 0;
	close(fd);
	return rc;
}

/* What an existing output path is: 1 a device or pipe to write into, 0 a file (or nothing yet, or a
 * link to a file) to replace atomically, -1 refused with e set (a directory, a block device, a
 * socket, or a link to anything but a file: write to "-" for stdout). */
static int output_kind(const char *path, pd_err *e)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0; /* not there yet (or unreadable: creating the temp file beside it says why) */
	if (S_ISREG(st.st_mode))
		return 0;
	if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
		return 1;
	if (S_ISLNK(st.st_mode)) {
		struct stat t;
		if (stat(path, &t) < 0 || S_ISREG(t.st_mode))
			return 0; /* the link is replaced, never written through */
		pd_err_set(e, PD_EXIT_USAGE, "%s: a link to a device, pipe or directory; give \"-\" to write to stdout", path);
		return -1;
	}
	pd_err_set(e, PD_EXIT_USAGE, "%s: %s, not a file to write", path, S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
	return -1;
}

int pd_write_file_atomic(const char *path, const void *data, size_t len, pd_err *e)
{
	if (strcmp(path, "-") == 0) {
		if (write_all(STDOUT_FILENO, data, len) < 0)
			return pd_err_set(e, PD_EXIT_ENV, "cannot write to stdout: %s", strerror(errno));
		return 0;
	}
	int kind = output_kind(path, e);
	if (kind < 0)
		return e ? e->code : PD_EXIT_USAGE;
	if (kind == 1)
		return write_into_node(path, data, len, e);
	size_t n = strlen(path);
	char *tmp = malloc(n + 32);
	if (!tmp)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	snprintf(tmp, n + 32, "%s.tmp.XXXXXX", path);
	/* O_EXCL (mkostemp): a link planted at the temp name is a collision, never followed; the rename
	 * below replaces a link planted at path itself instead of writing through it */
	int fd = mkostemp(tmp, O_CLOEXEC);
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

int pd_dir_open_private(const char *path, bool allow_nonempty, int *dirfd, bool *created, pd_err *e)
{
	*dirfd = -1;
	*created = false;
	if (mkdir(path, 0755) == 0)
		*created = true;
	else if (errno != EEXIST)
		return pd_err_set(e, errno == ENOENT || errno == ENOTDIR ? PD_EXIT_USAGE : PD_EXIT_ENV,
				  "cannot create %s: %s", path, strerror(errno));
	/* O_NOFOLLOW: a link named path (planted, or the user's) is refused, not followed */
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pd_err_set(e, PD_EXIT_USAGE, "%s: %s", path,
				  errno == ELOOP || errno == ENOTDIR ? "exists and is not a directory (or is a symbolic link)"
								     : strerror(errno));
	struct stat st;
	const char *why = NULL;
	if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (st.st_uid != geteuid())
		why = "exists and is owned by another user";
	else if (st.st_mode & (S_IWGRP | S_IWOTH))
		why = "exists and is writable by group or others (anyone could plant a link in it)";
	if (!why && !*created && !allow_nonempty) {
		int dfd = dup(fd);
		DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
		if (!d) {
			if (dfd >= 0)
				close(dfd);
			why = strerror(errno);
		} else {
			struct dirent *de;
			while (!why && (de = readdir(d)))
				if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
					why = "exists and is not empty (give a new directory)";
			closedir(d);
		}
	}
	if (why) {
		close(fd);
		return pd_err_set(e, PD_EXIT_USAGE, "%s: %s", path, why);
	}
	*dirfd = fd;
	return 0;
}

int pd_open_new_at(int dirfd, const char *name, pd_err *e)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		pd_err_set(e, PD_EXIT_ENV, "cannot create %s: %s", name, strerror(errno));
	return fd;
}

int pd_write_file_at(int dirfd, const char *name, const void *data, size_t len, pd_err *e)
{
	char tmp[300];
	int fd = -1;
	/* a fresh name each try; O_EXCL makes a planted file or link a collision, never a target */
	for (unsigned i = 0; i < 100 && fd < 0; i++) {
		snprintf(tmp, sizeof(tmp), ".%.200s.tmp.%ld.%u", name, (long)getpid(), i);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return pd_err_set(e, PD_EXIT_ENV, "cannot create %s: %s", name, strerror(errno));
	int rc = 0;
	if (write_all(fd, data, len) < 0 || fsync(fd) < 0)
		rc = pd_err_set(e, PD_EXIT_ENV, "cannot write %s: %s", name, strerror(errno));
	close(fd);
	if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		rc = pd_err_set(e, PD_EXIT_ENV, "cannot rename to %s: %s", name, strerror(errno));
	if (rc)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

const char *pd_elf_arch(const char *path)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	ssize_t n = read(fd, h, sizeof(h));
	close(fd);
	if (n < 20 || memcmp(h, "\177ELF", 4) != 0)
		return NULL;
	/* e_machine at offset 18, in the byte order EI_DATA (offset 5) names: 2 big-endian */
	unsigned machine = h[5] == 2 ? (unsigned)(h[18] << 8 | h[19]) : (unsigned)(h[19] << 8 | h[18]);
	switch (machine) {
	case 62: return "x86_64";
	case 183: return "aarch64";
	case 40: return "arm";
	case 3: return "i386";
	case 243: return "riscv64";
	default: return "unknown";
	}
}
