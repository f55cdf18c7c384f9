/* SPDX-License-Identifier: MIT */
/*
 * transport_impl.h - the ops table behind pd_deploy_transport (private to deployer/). Each backend fills
 * one; pd_deploy_transport_* in transport.c dispatch through it and add the error context.
 */
#ifndef PD_TRANSPORT_IMPL_H
#define PD_TRANSPORT_IMPL_H

#include "deployer/pd_deployer.h"

struct pd_deploy_transport_ops {
	const char *name;
	int (*connect)(pd_deploy_transport *t, pd_err *e);
	void (*disconnect)(pd_deploy_transport *t);
	void (*drop)(pd_deploy_transport *t);
	int (*exec)(pd_deploy_transport *t, const char *const *argv, struct pd_deploy_exec_result *r, pd_err *e);
	int (*stat)(pd_deploy_transport *t, const char *path, struct pd_deploy_transport_stat *st, pd_err *e);
	int (*read_at)(pd_deploy_transport *t, const char *path, uint64_t off, size_t max, pd_buf *out, pd_err *e);
	int (*write)(pd_deploy_transport *t, const char *path, const void *data, size_t len, unsigned mode, pd_err *e);
	int (*mkdir)(pd_deploy_transport *t, const char *path, unsigned mode, pd_err *e);
	int (*rmdir)(pd_deploy_transport *t, const char *path, pd_err *e);
	int (*unlink)(pd_deploy_transport *t, const char *path, pd_err *e);
	int (*chmod)(pd_deploy_transport *t, const char *path, unsigned mode, pd_err *e);
	int (*listdir)(pd_deploy_transport *t, const char *path, char ***names, size_t *n, pd_err *e);
};

struct pd_deploy_transport {
	const struct pd_deploy_transport_ops *ops;
	char *uri;
	char *user, *host;
	unsigned port;
	struct pd_deploy_transport_opts opts;
	char *identity, *known_hosts; /* owned copies */
	bool lost;
	void *impl; /* backend state */
};

extern const struct pd_deploy_transport_ops pd_deploy_transport_local_ops;
extern const struct pd_deploy_transport_ops pd_deploy_transport_ssh_ops;

#endif
