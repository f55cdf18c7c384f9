/* SPDX-License-Identifier: MIT */
#include "helper_sshd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pd_test.h"

static int port_free(int port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int ok = bind(s, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(s);
	return ok;
}

static int port_open(int port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int ok = connect(s, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(s);
	return ok;
}

const char *test_sshd_known_hosts(const struct test_sshd *d, const char *name, const char *pub_file)
{
	static char path[8][400];
	static int rot;
	char *p = path[rot++ % 8];
	snprintf(p, 400, "%s/%s", d->dir, name);
	FILE *out = fopen(p, "w");
	if (!out)
		abort();
	if (pub_file) {
		FILE *in = fopen(pub_file, "r");
		char type[64], b64[1024];
		if (!in || fscanf(in, "%63s %1023s", type, b64) != 2)
			abort();
		fclose(in);
		fprintf(out, "[127.0.0.1]:%d %s %s\n", d->port, type, b64);
	}
	fclose(out);
	return p;
}

int test_sshd_start(struct test_sshd *d)
{
	memset(d, 0, sizeof(*d));
	if (access("/usr/sbin/sshd", X_OK) != 0 || access("/usr/bin/ssh-keygen", X_OK) != 0)
		return -1;
	snprintf(d->dir, sizeof(d->dir), "%s", pd_test_tmpdir());
	mkdir("/run/sshd", 0755); /* sshd's privilege-separation directory; harmless when present */
	if (pd_test_run(NULL, 0, "ssh-keygen -q -t ed25519 -N '' -f %s/host_key >/dev/null 2>&1 && "
				 "ssh-keygen -q -t ed25519 -N '' -f %s/id_ed25519 >/dev/null 2>&1 && "
				 "cp %s/id_ed25519.pub %s/authorized_keys && chmod 600 %s/authorized_keys",
			d->dir, d->dir, d->dir, d->dir, d->dir) != 0)
		return -1;
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	for (int tries = 0; tries < 50 && !d->port; tries++) {
		int p = 20000 + rand() % 30000;
		if (port_free(p))
			d->port = p;
	}
	char cfg[400];
	snprintf(cfg, sizeof(cfg), "%s/sshd_config", d->dir);
	FILE *f = fopen(cfg, "w");
	if (!f)
		return -1;
	fprintf(f,
		"Port %d\nListenAddress 127.0.0.1\nHostKey %s/host_key\nPidFile %s/sshd.pid\n"
		"AuthorizedKeysFile %s/authorized_keys\nStrictModes no\nPasswordAuthentication no\n"
		"KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nUsePAM no\n"
		"Subsystem sftp internal-sftp\nMaxStartups 100\nMaxSessions 100\n",
		d->port, d->dir, d->dir, d->dir);
	fclose(f);
	d->pid = fork();
	if (d->pid == 0) {
		setsid();
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 0), dup2(nul, 1), dup2(nul, 2);
		execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-D", "-e", "-f", cfg, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 100 && !port_open(d->port); i++)
		usleep(50000);
	if (!port_open(d->port)) {
		test_sshd_stop(d);
		return -1;
	}
	snprintf(d->uri, sizeof(d->uri), "ssh://root@127.0.0.1:%d", d->port);
	snprintf(d->identity, sizeof(d->identity), "%s/id_ed25519", d->dir);
	snprintf(d->host_pub, sizeof(d->host_pub), "%s/host_key.pub", d->dir);
	snprintf(d->known_hosts, sizeof(d->known_hosts), "%s",
		 test_sshd_known_hosts(d, "known_hosts", d->host_pub));
	return 0;
}

void test_sshd_stop(struct test_sshd *d)
{
	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		waitpid(d->pid, NULL, 0);
		d->pid = 0;
	}
}
