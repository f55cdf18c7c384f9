/* SPDX-License-Identifier: MIT */
/*
 * The FUSE shell around the twin model (libfuse3 high-level API, multi-threaded loop in its own
 * thread). Why FUSE and not files on a tmpfs: a store must be able to fail (EINVAL for a frequency
 * the board does not have) and take effect at once, and rail values must be computed when read -
 * exactly what a kernel driver's show/store functions do.
 *
 * Each open snapshots the content once (so a reader that needs two read() calls sees one value),
 * with direct_io so that every open reaches the daemon; a read at offset 0 other than the first
 * takes a new snapshot, as kernfs and seq_file regenerate a file read again from its start (the
 * agent samples /proc/stat with lseek(0) + read on one descriptor); each write() is one store,
 * like sysfs.
 */
#define FUSE_USE_VERSION 312 /* libfuse 3.12+: configurable worker count */
#include "twin/twin_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdlib.h>
#include <string.h>

struct twin_fs {
	twin_model *m;
	struct fuse *f;
	pthread_t thread;
	bool running;
};

/* An open file's content: fresh until the first read, which serves the snapshot taken at open. */
struct handle {
	pthread_mutex_t mu; /* two threads may read one descriptor: one regenerates, one copies */
	pd_buf b;
	bool fresh;
};

static void handle_free(struct handle *h)
{
	pd_buf_free(&h->b);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

static twin_model *model(void) { return ((struct twin_fs *)fuse_get_context()->private_data)->m; }

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->direct_io = 1;
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 1;
	cfg->negative_timeout = 1;
	return fuse_get_context()->private_data;
}

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct twin_stat ts;
	int rc = twin_model_stat(model(), path, &ts);
	if (rc)
		return rc;
	memset(st, 0, sizeof(*st));
	if (ts.kind == TWIN_DIR) {
		st->st_mode = S_IFDIR | ts.mode;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | ts.mode;
		st->st_nlink = 1;
		st->st_size = 4096; /* like sysfs: the real size is known only when read */
	}
	return 0;
}

struct fill_ctx {
	void *buf;
	fuse_fill_dir_t fill;
};

static void fill_one(const char *name, void *arg)
{
	struct fill_ctx *c = arg;
	c->fill(c->buf, name, NULL, 0, 0);
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	struct fill_ctx c = {buf, fill};
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	return twin_model_list(model(), path, fill_one, &c);
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
	struct twin_stat ts;
	int rc = twin_model_stat(model(), path, &ts);
	if (rc)
		return rc;
	if (ts.kind == TWIN_DIR)
		return -EISDIR;
	int acc = fi->flags & O_ACCMODE;
	/* kernfs refuses opening for a direction the attribute has no handler for */
	if ((acc != O_WRONLY && !(ts.mode & 0444)) || (acc != O_RDONLY && !(ts.mode & 0222)))
		return -EACCES;
	fi->direct_io = 1;
	fi->fh = 0;
	if (acc != O_WRONLY) {
		struct handle *h = calloc(1, sizeof(*h));
		if (!h)
			return -ENOMEM;
		pthread_mutex_init(&h->mu, NULL);
		pd_buf_init(&h->b);
		h->fresh = true;
		rc = twin_model_read(model(), path, &h->b);
		if (rc) {
			handle_free(h);
			return rc;
		}
		fi->fh = (uint64_t)(uintptr_t)h;
	}
	return 0;
}

static int op_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	if (!h)
		return -EBADF;
	int rc = 0;
	pthread_mutex_lock(&h->mu);
	if (off == 0 && !h->fresh) {
		pd_buf b;
		pd_buf_init(&b);
		rc = twin_model_read(model(), path, &b);
		if (rc == 0) {
			pd_buf_free(&h->b);
			h->b = b;
		} else {
			pd_buf_free(&b);
		}
	}
	h->fresh = false;
	size_t n = 0;
	if (rc == 0 && off >= 0 && (size_t)off < h->b.len) {
		n = h->b.len - (size_t)off < size ? h->b.len - (size_t)off : size;
		memcpy(buf, h->b.data + off, n);
	}
	pthread_mutex_unlock(&h->mu);
	return rc ? rc : (int)n;
}

static int op_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	int rc = twin_model_write(model(), path, buf, size);
	return rc ? rc : (int)size;
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct twin_stat ts;
	int rc = twin_model_stat(model(), path, &ts);
	if (rc)
		return rc;
	return ts.kind == TWIN_FILE && (ts.mode & 0222) ? 0 : -EACCES; /* O_TRUNC of an attribute: no-op */
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	if (h)
		handle_free(h);
	return 0;
}

static const struct fuse_operations ops = {
	.init = op_init,
	.getattr = op_getattr,
	.readdir = op_readdir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.truncate = op_truncate,
	.release = op_release,
};

/* Up to TWIN_FUSE_THREADS requests at once: writers blocked in accelerator runs or FPGA loads each
 * hold a worker, and rail reads must never wait behind them (libfuse's default is 10). */
#define TWIN_FUSE_THREADS 128

static void *loop(void *arg)
{
	struct twin_fs *fs = arg;
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	if (cfg) {
		fuse_loop_cfg_set_max_threads(cfg, TWIN_FUSE_THREADS);
		fuse_loop_cfg_set_idle_threads(cfg, 8);
	}
	fuse_loop_mt(fs->f, cfg);
	fuse_loop_cfg_destroy(cfg);
	return NULL;
}

twin_fs *twin_fs_start(twin_model *m, const char *mountpoint, pd_err *e)
{
	struct twin_fs *fs = calloc(1, sizeof(*fs));
	if (!fs) {
		pd_err_set(e, PD_EXIT_ENV, "out of memory");
		return NULL;
	}
	fs->m = m;
	char *argv[] = {"powerdag-twin", "-o", "allow_other,fsname=powerdag-twin,subtype=powerdag-twin", NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	fs->f = fuse_new(&args, &ops, sizeof(ops), fs);
	fuse_opt_free_args(&args);
	if (!fs->f) {
		pd_err_set(e, PD_EXIT_ENV, "fuse_new failed");
		free(fs);
		return NULL;
	}
	if (fuse_mount(fs->f, mountpoint) != 0) {
		pd_err_set(e, PD_EXIT_ENV, "cannot mount FUSE on %s (is /dev/fuse there?)", mountpoint);
		fuse_destroy(fs->f);
		free(fs);
		return NULL;
	}
	if (pthread_create(&fs->thread, NULL, loop, fs) != 0) {
		pd_err_set(e, PD_EXIT_ENV, "pthread_create failed");
		fuse_unmount(fs->f);
		fuse_destroy(fs->f);
		free(fs);
		return NULL;
	}
	fs->running = true;
	return fs;
}

/* Detaches the mount; the loop thread ends with the process (a blocked accelerator run may still
 * hold one of its workers, so it is not joined). */
void twin_fs_stop(twin_fs *fs)
{
	if (!fs)
		return;
	fuse_exit(fs->f);
	fuse_unmount(fs->f);
}
