/* SPDX-License-Identifier: MIT */
/*
 * Mounts inside the twin's private mount namespace (called only by the daemon after unshare).
 *
 * sysfs refuses mkdir, and kernels without IIO/devfreq/FPGA managers have no /sys/bus/iio,
 * /sys/class/devfreq, /sys/class/fpga_manager to bind over. twin_shadow_dir therefore replaces a
 * directory by a tmpfs that re-exposes every original entry through a bind mount (so the real
 * /sys/class/net, /sys/kernel/tracing ... stay visible) plus the twin's own entries, and then makes
 * that tmpfs read-only: the tmpfs only holds mount points, no writable emulated file lives there.
 */
#include "twin/twin_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

int twin_bind(const char *src, const char *dst, pd_err *e)
{
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) != 0)
		return pd_err_set(e, PD_EXIT_ENV, "bind %s on %s: %s", src, dst, strerror(errno));
	return 0;
}

static const char *override_of(const char *name, const struct twin_overlay *over, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(over[i].name, name) == 0)
			return over[i].source;
	return NULL;
}

/* Creates dst like the entry src (directory, file or symlink) and binds src there. */
static int mirror(const char *src, const char *dst, pd_err *e)
{
	struct stat st;
	if (lstat(src, &st) != 0)
		return 0; /* vanished: nothing to mirror */
	if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlink(src, target, sizeof(target) - 1);
		if (n < 0)
			return 0;
		target[n] = 0;
		if (symlink(target, dst) != 0)
			return pd_err_set(e, PD_EXIT_ENV, "symlink %s: %s", dst, strerror(errno));
		return 0;
	}
	if (S_ISDIR(st.st_mode)) {
		if (mkdir(dst, st.st_mode & 07777) != 0)
			return pd_err_set(e, PD_EXIT_ENV, "mkdir %s: %s", dst, strerror(errno));
	} else {
		int fd = open(dst, O_CREAT | O_WRONLY | O_CLOEXEC, st.st_mode & 07777);
		if (fd < 0)
			return pd_err_set(e, PD_EXIT_ENV, "create %s: %s", dst, strerror(errno));
		close(fd);
	}
	return twin_bind(src, dst, e);
}

int twin_shadow_dir(const char *dir, const struct twin_overlay *over, size_t n_over, pd_err *e)
{
	/* The original stays reachable through this fd after the tmpfs covers the path. */
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return pd_err_set(e, PD_EXIT_ENV, "open %s: %s", dir, strerror(errno));
	DIR *d = opendir(dir);
	if (!d) {
		close(fd);
		return pd_err_set(e, PD_EXIT_ENV, "opendir %s: %s", dir, strerror(errno));
	}
	int rc = 0;
	if (mount("twin", dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") != 0)
		rc = pd_err_set(e, PD_EXIT_ENV, "tmpfs on %s: %s", dir, strerror(errno));
	char src[4400], dst[4400];
	struct dirent *de;
	while (rc == 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    override_of(de->d_name, over, n_over))
			continue;
		snprintf(src, sizeof(src), "/proc/self/fd/%d/%s", fd, de->d_name);
		snprintf(dst, sizeof(dst), "%s/%s", dir, de->d_name);
		rc = mirror(src, dst, e);
	}
	closedir(d);
	for (size_t i = 0; rc == 0 && i < n_over; i++) {
		snprintf(dst, sizeof(dst), "%s/%s", dir, over[i].name);
		if (mkdir(dst, 0755) != 0)
			rc = pd_err_set(e, PD_EXIT_ENV, "mkdir %s: %s", dst, strerror(errno));
		else
			rc = twin_bind(over[i].source, dst, e);
	}
	if (rc == 0 && mount("twin", dir, "tmpfs", MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755") != 0)
		rc = pd_err_set(e, PD_EXIT_ENV, "read-only remount of %s: %s", dir, strerror(errno));
	close(fd);
	return rc;
}
