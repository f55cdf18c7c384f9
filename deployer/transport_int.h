/* SPDX-License-Identifier: MIT */
/*
 * transport_int.h - the ops table behind pd_transport (private to deployer/). Each backend fills
 * one; pd_tp_* in transport.c dispatch through it and add the error context.
 */
#ifndef PD_TRANSPORT_INT_H
#define PD_TRANSPORT_INT_H

#include "deployer/pd_deployer.h"

struct pd_tp_ops {
	const char *name;
	int (*connect)(pd_transport *t, pd_err *e);
	void (*disconnect)(pd_transport *t);
	void (*drop)(pd_transport *t);
	int (*exec)(pd_transport *t, const char *const *argv, struct pd_exec_result *r, pd_err *e);
	int (*stat)(pd_transport *t, const char *path, struct pd_tp_stat *st, pd_err *e);
	int (*read_at)(pd_transport *t, const char *path, uint64_t off, size_t max, pd_buf *out, pd_err *e);
	int (*write)(pd_transport *t, const char *path, const void *data, size_t len, unsigned mode, pd_err *e);
	int (*mkdir)(pd_transport *t, const char *path, unsigned mode, pd_err *e);
	int (*rmdir)(pd_transport *t, const char *path, pd_err *e);
	int (*unlink)(pd_transport *t, const char *path, pd_err *e);
	int (*chmod)(pd_transport *t, const char *path, unsigned mode, pd_err *e);
	int (*listdir)(pd_transport *t, const char *path, char ***names, size_t *n, pd_err *e);
};

struct pd_transport {
	const struct pd_tp_ops *ops;
	char *uri;
	char *user, *host;
	unsigned port;
	struct pd_transport_opts opts;
	char *identity, *known_hosts; /* owned copies */
	bool lost;
	void *impl; /* backend state */
};

extern const struct pd_tp_ops pd_tp_local_ops;
extern const struct pd_tp_ops pd_tp_ssh_ops;

#endif
