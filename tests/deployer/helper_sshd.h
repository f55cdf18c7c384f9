/* SPDX-License-Identifier: MIT */
/* A throw-away sshd on 127.0.0.1 for the deployer tests: temporary host key, temporary client key,
 * its own config given with -f; the system's sshd and ~/.ssh are never touched. */
#ifndef PD_TEST_HELPER_SSHD_H
#define PD_TEST_HELPER_SSHD_H

#include <sys/types.h>

struct test_sshd {
	char dir[256];
	int port;
	pid_t pid;
	char uri[128];
	char identity[320];
	char known_hosts[320];      /* holds the server's real host key */
	char host_pub[320];         /* the server's public host key file */
};

/* 0 on success; -1 when sshd cannot run here (the caller skips with a message). */
int test_sshd_start(struct test_sshd *d);
void test_sshd_stop(struct test_sshd *d);
/* Writes a known_hosts file for the server's address holding the key of pub_file (path returned). */
const char *test_sshd_known_hosts(const struct test_sshd *d, const char *name, const char *pub_file);

#endif
