/* SPDX-License-Identifier: MIT */
/*
 * Lifecycle of the twin: up (keys, sshd config, platform file, netns + veth, daemon), down (end every
 * process of the twin's mount namespace by pid, remove veth, netns and state files), status.
 *
 * STATE/twin.json is written before the netns is created and completed once the daemon is ready, so
 * that `down` can always find what an interrupted or crashed `up` left behind.
 *
 * One file (~690 lines) because up, down and status are one state machine over STATE/twin.json:
 * each step of `up` is undone by the matching step of `down` in reverse order, which reads best
 * side by side.
 */
#include "twin/twin_impl.h"
#include "deployer/pd_deployer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * PD_NS_PER_MS};
	nanosleep(&ts, NULL);
}

const char *pd_twin_state_dir(const char *requested, char *buf, size_t n)
{
	const char *env = getenv("POWERDAG_TWIN_DIR");
	snprintf(buf, n, "%s", requested ? requested : env && *env ? env : PD_TWIN_DEFAULT_DIR);
	size_t l = strlen(buf);
	while (l > 1 && buf[l - 1] == '/')
		buf[--l] = 0;
	return buf;
}

int twin_paths_init(struct twin_paths *tp, const char *dir, pd_err *e)
{
	if (dir[0] != '/' || strlen(dir) > 200 || !pd_name_chars_ok(dir, true) || strstr(dir, ".."))
		return pd_err_set(e, PD_EXIT_USAGE,
				  "state dir '%s': must be an absolute path of at most 200 characters from [A-Za-z0-9._/-]",
				  dir);
	memset(tp, 0, sizeof(*tp));
	snprintf(tp->dir, sizeof(tp->dir), "%s", dir);
#define P(field, name) snprintf(tp->field, sizeof(tp->field), "%s/%s", dir, name)
	P(json, "twin.json");
	P(platform, "platform.yaml");
	P(identity, "id_ed25519");
	P(known_hosts, "known_hosts");
	P(ssh_dir, "ssh");
	P(sshd_config, "ssh/sshd_config");
	P(host_key, "ssh/ssh_host_ed25519_key");
	P(authorized, "ssh/authorized_keys");
	P(empty, "ssh/empty");
	P(firmware, "firmware");
	P(fsroot, "fs");
	P(daemon_log, "daemon.log");
	P(sshd_log, "sshd.log");
	P(iiod_log, "iiod.log");
	P(vm_dir, "vm");
#undef P
	return 0;
}

/* ---------------------------------------------------------------- the record (twin.json) */

struct record {
	char uri[128], iio_uri[64], addr[32], host_addr[32], netns[64], veth[32];
	int port;
	pid_t daemon, sshd, iiod;
	unsigned long long daemon_start;
	unsigned long mntns;
	char kind[8], accel[8], kernel[64]; /* kind "vm": daemon is qemu; accel kvm|tcg; the guest's kernel */
	char arch[72];                      /* the board's uname -m: the guest's, or this machine's */
	char cgroup[80];                    /* the deploys' cpuset directory on this twin's kernel */
	int host_cpus[TWIN_MAX_CPUS];       /* --host-cpus: the host CPUs that are the twin's cores */
	size_t n_host_cpus;
	struct twin_host host;              /* kind netns: the host values its deploys may change */
};

static int write_record(const struct twin_paths *tp, const struct record *r, pd_err *e)
{
	json_t *pids = json_pack("{s:i,s:i,s:i}", "daemon", (int)r->daemon, "sshd", (int)r->sshd, "iiod", (int)r->iiod);
	json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:i,s:s,s:s,s:s,s:o,s:I,s:I}", "uri", r->uri, "platform",
			      tp->platform, "identity", tp->identity, "known_hosts", tp->known_hosts, "iio_uri",
			      r->iio_uri, "address", r->addr, "host_address", r->host_addr, "ssh_port", r->port, "netns",
			      r->netns, "veth", r->veth, "state_dir", tp->dir, "pids", pids, "daemon_starttime",
			      (json_int_t)r->daemon_start, "mntns", (json_int_t)r->mntns);
	if (j) {
		bool vm = strcmp(r->kind, "vm") == 0;
		json_object_set_new(j, "kind", json_string(vm ? "vm" : "netns"));
		if (r->arch[0])
			json_object_set_new(j, "arch", json_string(r->arch));
		json_object_set_new(j, "cgroup", json_string(r->cgroup));
		if (r->n_host_cpus) {
			json_t *a = json_array();
			for (size_t i = 0; a && i < r->n_host_cpus; i++)
				json_array_append_new(a, json_integer(r->host_cpus[i]));
			json_object_set_new(j, "host_cpus", a);
		}
		if (vm) {
			json_object_set_new(j, "accel", json_string(r->accel));
			json_object_set_new(j, "kernel", json_string(r->kernel));
		} else if (r->host.taken) {
			json_object_set_new(j, "host", twin_host_json(&r->host));
		}
	}
	char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(j);
	if (!s)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	size_t n = strlen(s);
	char *t = malloc(n + 2);
	int rc = t ? 0 : pd_err_set(e, PD_EXIT_ENV, "out of memory");
	if (t) {
		memcpy(t, s, n);
		t[n] = '\n';
		rc = pd_write_file_atomic(tp->json, t, n + 1, e);
	}
	free(t);
	free(s);
	return rc;
}

static int read_record(const struct twin_paths *tp, struct record *r, json_t **out)
{
	memset(r, 0, sizeof(*r));
	json_error_t err;
	json_t *j = json_load_file(tp->json, 0, &err);
	if (!j)
		return -1;
	const char *uri = "", *iio = "", *addr = "", *haddr = "", *netns = "", *veth = "", *kind = "", *accel = "",
		   *kernel = "", *arch = "";
	int d = 0, s = 0, i = 0, port = 0;
	json_int_t st = 0, mnt = 0;
	json_unpack(j, "{s?s,s?s,s?s,s?s,s?s,s?s,s?i,s?{s?i,s?i,s?i},s?I,s?I}", "uri", &uri, "iio_uri", &iio, "address",
		    &addr, "host_address", &haddr, "netns", &netns, "veth", &veth, "ssh_port", &port, "pids", "daemon", &d,
		    "sshd", &s, "iiod", &i, "daemon_starttime", &st, "mntns", &mnt);
	const char *cg = PD_DEPLOY_CGROUP_DEFAULT; /* a twin.json of before 2026-12-04 has none */
	json_unpack(j, "{s?s,s?s,s?s,s?s,s?s}", "kind", &kind, "accel", &accel, "kernel", &kernel, "arch", &arch,
		    "cgroup", &cg);
	snprintf(r->cgroup, sizeof(r->cgroup), "%s", cg);
	snprintf(r->arch, sizeof(r->arch), "%s", arch);
	snprintf(r->kind, sizeof(r->kind), "%s", strcmp(kind, "vm") == 0 ? "vm" : "");
	snprintf(r->accel, sizeof(r->accel), "%s", accel);
	snprintf(r->kernel, sizeof(r->kernel), "%s", kernel);
	snprintf(r->uri, sizeof(r->uri), "%s", uri);
	snprintf(r->iio_uri, sizeof(r->iio_uri), "%s", iio);
	snprintf(r->addr, sizeof(r->addr), "%s", addr);
	snprintf(r->host_addr, sizeof(r->host_addr), "%s", haddr);
	snprintf(r->netns, sizeof(r->netns), "%s", netns);
	snprintf(r->veth, sizeof(r->veth), "%s", veth);
	r->port = port, r->daemon = d, r->sshd = s, r->iiod = i;
	r->daemon_start = (unsigned long long)st, r->mntns = (unsigned long)mnt;
	twin_host_from_json(json_object_get(j, "host"), &r->host);
	if (out)
		*out = j;
	else
		json_decref(j);
	return 0;
}

static bool daemon_alive(const struct record *r)
{
	return r->daemon > 0 && r->daemon_start && twin_starttime(r->daemon) == r->daemon_start;
}

/* ---------------------------------------------------------------- up */

static int run_ok(pd_err *e, char *const argv[])
{
	pd_buf out;
	pd_buf_init(&out);
	int rc = twin_run(argv, &out, e);
	if (rc > 0) {
		size_t l = out.len;
		while (l && out.data[l - 1] == '\n')
			out.data[--l] = 0;
		pd_err_set(e, PD_EXIT_ENV, "%s %s failed: %s", argv[0], argv[1], out.data ? out.data : "");
	}
	pd_buf_free(&out);
	return rc == 0 ? 0 : -1;
}

static int keygen(const char *path, const char *comment, pd_err *e)
{
	char pub[320];
	snprintf(pub, sizeof(pub), "%s.pub", path);
	unlink(path), unlink(pub);
	char *argv[] = {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", (char *)comment, "-f", (char *)path, NULL};
	return run_ok(e, argv);
}

static int write_text(const char *path, const char *text, mode_t mode, pd_err *e)
{
	if (pd_write_file_atomic(path, text, strlen(text), e) != 0)
		return -1;
	if (chmod(path, mode) != 0)
		return pd_err_set(e, PD_EXIT_ENV, "chmod %s: %s", path, strerror(errno)), -1;
	return 0;
}

static int ssh_files(const struct twin_paths *tp, const struct record *r, pd_err *e)
{
	char *pub = NULL, hostpub[400], idpub[400];
	size_t len;
	snprintf(hostpub, sizeof(hostpub), "%s.pub", tp->host_key);
	snprintf(idpub, sizeof(idpub), "%s.pub", tp->identity);
	if (keygen(tp->host_key, "powerdag-twin-host", e) || keygen(tp->identity, "powerdag-twin-deployer", e))
		return -1;
	if (pd_read_file(idpub, &pub, &len, 0, e) != 0 || write_text(tp->authorized, pub, 0600, e) != 0) {
		free(pub);
		return -1;
	}
	free(pub);
	pub = NULL;
	if (pd_read_file(hostpub, &pub, &len, 0, e) != 0)
		return -1;
	char type[64] = "", key[256] = "", line[512];
	sscanf(pub, "%63s %255s", type, key);
	free(pub);
	if (r->port == 22)
		snprintf(line, sizeof(line), "%s %s %s\n", r->addr, type, key);
	else
		snprintf(line, sizeof(line), "[%s]:%d %s %s\n", r->addr, r->port, type, key);
	if (write_text(tp->known_hosts, line, 0644, e) != 0)
		return -1;
	pd_buf c;
	pd_buf_init(&c);
	pd_buf_printf(&c,
		      "# powerdag twin board sshd (generated; lives in netns %s only)\n"
		      "Port %d\nListenAddress %s\nHostKey %s\nPidFile none\nAuthorizedKeysFile %s\n"
		      "StrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
		      "PubkeyAuthentication yes\nPermitRootLogin prohibit-password\nAllowUsers root\nUsePAM no\n"
		      "Subsystem sftp internal-sftp\nLogLevel INFO\n"
		      /* the readiness probes (daemon and `up` connect and close) leave pre-auth children that
		       * a slow board (the VM twin under TCG) reaps late: the default 10:30:100 then drops
		       * the deployer's first connection */
		      "MaxStartups 100\n",
		      r->netns, r->port, r->addr, tp->host_key, tp->authorized);
	int rc = write_text(tp->sshd_config, c.data, 0600, e);
	pd_buf_free(&c);
	return rc;
}

static int make_dirs(const struct twin_paths *tp, pd_err *e)
{
	const char *dirs[] = {tp->dir, tp->ssh_dir, tp->empty, tp->firmware, tp->fsroot};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (mkdir(dirs[i], i == 0 ? 0700 : 0755) != 0 && errno != EEXIST)
			return pd_err_set(e, PD_EXIT_ENV, "mkdir %s: %s", dirs[i], strerror(errno)), -1;
	return 0;
}

static int platform_file(const struct pd_twin_opts *o, const struct twin_paths *tp, const struct record *r,
			 int n_cpus, pd_err *e)
{
	pd_buf y;
	pd_buf_init(&y);
	/* the VM twin's kernel (Debian 6.1) has no fair deadline server: its platform must not declare
	 * one, as platforms/zcu102.yaml does not for PetaLinux 6.1 */
	int rc = pd_twin_derive_platform_on(o->platform, r->n_host_cpus ? r->host_cpus : NULL, n_cpus, r->iio_uri,
					    !o->vm, &y, e);
	pd_ydoc doc = {0};
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = NULL;
	if (rc == 0 && pd_yaml_load(&doc, tp->platform, y.data, y.len, &d) == 0 && doc.root)
		p = pd_platform_from_node(pd_ymap_get(doc.root, "platform"), &d);
	if (rc == 0 && !p) {
		pd_diags_to_err(&d, e);
		rc = PD_EXIT_USAGE;
	}
	if (p && (rc = pd_platform_write_file(p, tp->platform, e)) != 0)
		rc = PD_EXIT_ENV;
	pd_platform_free(p);
	pd_yaml_free(&doc);
	pd_diags_free(&d);
	pd_buf_free(&y);
	return rc;
}

/* vm: the board address belongs to the guest, behind a bridge (twin_vm_network), not to the veth. */
static int make_network(const struct record *r, bool vm, pd_err *e)
{
	char haddr[48], baddr[48], vb[32];
	snprintf(haddr, sizeof(haddr), "%s/30", r->host_addr);
	snprintf(baddr, sizeof(baddr), "%s/30", r->addr);
	snprintf(vb, sizeof(vb), "%.*sb", (int)strlen(r->veth) - 1, r->veth);
	char *ns = (char *)r->netns, *vh = (char *)r->veth;
	char *c1[] = {"ip", "netns", "add", ns, NULL};
	char *c2[] = {"ip", "link", "add", vh, "type", "veth", "peer", "name", vb, "netns", ns, NULL};
	char *c3[] = {"ip", "addr", "add", haddr, "dev", vh, NULL};
	char *c4[] = {"ip", "link", "set", vh, "up", NULL};
	char *c5[] = {"ip", "-n", ns, "addr", "add", baddr, "dev", vb, NULL};
	char *c6[] = {"ip", "-n", ns, "link", "set", vb, "up", NULL};
	char *c7[] = {"ip", "-n", ns, "link", "set", "lo", "up", NULL};
	char **cmds[] = {c1, c2, c3, c4, c5, c6, c7};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!(vm && cmds[i] == c5) && run_ok(e, cmds[i]) != 0)
			return -1;
	return vm ? twin_vm_network(ns, vb, e) : 0;
}

/* The executable the twin re-runs for its daemon (and copies into a VM guest): o->self_exe when the
 * caller names it (tests), else this process's own binary. */
static int self_exe(const struct pd_twin_opts *o, char *exe, size_t n, pd_err *e)
{
	if (o->self_exe) {
		snprintf(exe, n, "%s", o->self_exe);
		return 0;
	}
	ssize_t len = readlink("/proc/self/exe", exe, n - 1);
	if (len < 0)
		return pd_err_set(e, PD_EXIT_ENV, "readlink /proc/self/exe: %s", strerror(errno)), -1;
	exe[len] = 0;
	return 0;
}

static pid_t start_daemon(const struct pd_twin_opts *o, const struct twin_paths *tp, const struct record *r,
			  int *ready, pd_err *e)
{
	char exe[4096], port[16], fdnum[16];
	if (self_exe(o, exe, sizeof(exe), e) != 0)
		return -1;
	int fds[2];
	if (pipe(fds) != 0)
		return pd_err_set(e, PD_EXIT_ENV, "pipe: %s", strerror(errno)), -1;
	snprintf(port, sizeof(port), "%d", r->port);
	snprintf(fdnum, sizeof(fdnum), "%d", 3);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]), close(fds[1]);
		return pd_err_set(e, PD_EXIT_ENV, "fork: %s", strerror(errno)), -1;
	}
	if (pid == 0) {
		close(fds[0]);
		setsid();
		int nul = open("/dev/null", O_RDWR);
		int lg = open(tp->daemon_log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		dup2(nul, 0), dup2(lg, 1), dup2(lg, 2);
		/* the ready pipe becomes fd 3 and nothing else of the caller's stays open: a daemon that
		 * kept e.g. a command substitution's pipe would hang `URI=$(powerdag twin up)` */
		if (fds[1] != 3) {
			dup2(fds[1], 3);
			close(fds[1]);
		}
		close_range(4, ~0U, 0);
		char *argv[] = {exe,	     "twin",	      "_daemon", "--state", (char *)tp->dir, "--netns",
				(char *)r->netns, "--addr", (char *)r->addr, "--port", port, "--ready-fd", fdnum, NULL};
		execv(exe, argv);
		_exit(127);
	}
	close(fds[1]);
	fcntl(fds[0], F_SETFD, FD_CLOEXEC);
	*ready = fds[0];
	return pid;
}

/* Waits for the daemon's "ok SSHD IIOD" or "error MSG" line: the servers' limit and 10 s for the
 * board's file system and mounts before them. */
static int wait_ready(int fd, pid_t *sshd, pid_t *iiod, pd_err *e)
{
	char buf[1100];
	size_t n = 0;
	int64_t deadline = twin_now_ns() + (PD_TWIN_START_S + 10) * PD_NS_PER_S;
	while (n < sizeof(buf) - 1 && !memchr(buf, '\n', n)) {
		struct pollfd p = {fd, POLLIN, 0};
		int64_t left = (deadline - twin_now_ns()) / PD_NS_PER_MS;
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return pd_err_set(e, PD_EXIT_ENV, "the twin daemon did not get ready within %d s", PD_TWIN_START_S + 10);
		ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	int s = 0, i = 0;
	if (sscanf(buf, "ok %d %d", &s, &i) == 2) {
		*sshd = s, *iiod = i;
		return 0;
	}
	return pd_err_set(e, PD_EXIT_ENV, "twin daemon: %s", strncmp(buf, "error ", 6) == 0 ? buf + 6 : "exited early");
}

static bool host_port_open(const char *addr, int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, addr, &sa.sin_addr);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok = s >= 0 && connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (s >= 0)
		close(s);
	return ok;
}

static bool in_path(const char *prog)
{
	const char *dirs[] = {"/usr/local/bin", "/usr/bin", "/bin"};
	char p[256];
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dirs[i], prog);
		if (access(p, X_OK) == 0)
			return true;
	}
	return false;
}

static int check_env(const struct twin_vm_guest *vm, pd_err *e)
{
	if (geteuid() != 0)
		return pd_err_set(e, PD_EXIT_ENV, "twin up needs root (network namespaces, mounts); run it with sudo");
	if (vm) { /* sshd, iiod and FUSE run inside the guest */
		if (!in_path(vm->qemu))
			return pd_err_set(e, PD_EXIT_ENV, "%s is missing: install the Debian package %s", vm->qemu,
					  vm->qemu_pkg);
		if (!twin_file_exists("/dev/net/tun"))
			return pd_err_set(e, PD_EXIT_ENV, "/dev/net/tun is missing: the VM twin needs tap devices (CONFIG_TUN)");
		if (!twin_file_exists("/usr/bin/ssh-keygen"))
			return pd_err_set(e, PD_EXIT_ENV, "/usr/bin/ssh-keygen is missing: install openssh-client");
		return 0;
	}
	const char *need[][2] = {{"/dev/fuse", "the fuse kernel module (CONFIG_FUSE_FS)"},
				 {"/usr/sbin/sshd", "the Debian package openssh-server"},
				 {"/usr/sbin/iiod", "the Debian package iiod"},
				 {"/usr/bin/ssh-keygen", "the Debian package openssh-client"}};
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (!twin_file_exists(need[i][0]))
			return pd_err_set(e, PD_EXIT_ENV, "%s is missing: install %s", need[i][0], need[i][1]);
	return 0;
}

static int fill_record(const struct pd_twin_opts *o, struct record *r, pd_err *e)
{
	const char *ns = o->netns ? o->netns : getenv("POWERDAG_TWIN_NETNS");
	const char *net = o->subnet ? o->subnet : getenv("POWERDAG_TWIN_SUBNET");
	ns = ns && *ns ? ns : PD_TWIN_DEFAULT_NETNS;
	net = net && *net ? net : PD_TWIN_DEFAULT_SUBNET;
	if (!pd_name_chars_ok(ns, false) || strlen(ns) > 48)
		return pd_err_set(e, PD_EXIT_USAGE, "netns name '%s': use at most 48 characters from [A-Za-z0-9._-]", ns);
	struct in_addr a;
	if (inet_pton(AF_INET, net, &a) != 1 || (ntohl(a.s_addr) & 3) != 0)
		return pd_err_set(e, PD_EXIT_USAGE, "subnet '%s': expected the base address of a /30, e.g. %s", net,
				  PD_TWIN_DEFAULT_SUBNET);
	int port = o->ssh_port ? o->ssh_port : 22;
	if (port < 1 || port > 65535 || port == PD_TWIN_IIOD_PORT)
		return pd_err_set(e, PD_EXIT_USAGE, "ssh port %d: expected 1..65535 (not %d, iiod's)", port,
				  PD_TWIN_IIOD_PORT);
	uint32_t base = ntohl(a.s_addr);
	struct in_addr h = {htonl(base + 1)}, b = {htonl(base + 2)};
	memset(r, 0, sizeof(*r));
	inet_ntop(AF_INET, &h, r->host_addr, sizeof(r->host_addr));
	inet_ntop(AF_INET, &b, r->addr, sizeof(r->addr));
	snprintf(r->netns, sizeof(r->netns), "%s", ns);
	/* interface names are limited to 15 characters: derive them from the netns name */
	snprintf(r->veth, sizeof(r->veth), "pdt%08xh", (unsigned)(pd_hash64(ns, strlen(ns)) & 0xffffffffu));
	r->port = port;
	snprintf(r->uri, sizeof(r->uri), "ssh://root@%s:%d", r->addr, port);
	snprintf(r->iio_uri, sizeof(r->iio_uri), "ip:%s", r->addr);
	return 0;
}

/* --host-cpus LIST ("1", "0,2-3"): the host CPUs that are the namespace twin's cores, each one this
 * process may run on, kept ascending without duplicates. The twin's deploys then get their own
 * cpuset directory, powerdag-NETNS: twins on disjoint CPUs deploy at once (pre-flight refuses
 * overlapping exclusive cpusets), where the one shared directory made them take turns. */
static int host_cpus(const struct pd_twin_opts *o, struct record *r, pd_err *e)
{
	snprintf(r->cgroup, sizeof(r->cgroup), "%s", PD_DEPLOY_CGROUP_DEFAULT);
	if (!o->host_cpus)
		return 0;
	if (o->vm)
		return pd_err_set(e, PD_EXIT_USAGE, "--host-cpus is for the namespace twin (a VM's cores are its guest's)");
	if (o->n_cpus > 0)
		return pd_err_set(e, PD_EXIT_USAGE, "--cpus and --host-cpus: give one (the list sets the number of cores)");
	cpu_set_t aff;
	CPU_ZERO(&aff);
	if (sched_getaffinity(0, sizeof(aff), &aff) != 0)
		return pd_err_set(e, PD_EXIT_ENV, "sched_getaffinity: %s", strerror(errno));
	unsigned char set[TWIN_MAX_CPUS];
	if (pd_parse_cpulist(o->host_cpus, set, sizeof(set)) != 0 || !memchr(set, 1, sizeof(set)) ||
	    strpbrk(o->host_cpus, " \t\n"))
		return pd_err_set(e, PD_EXIT_USAGE, "--host-cpus '%s': expected a CPU list such as 1 or 0,2-3 (CPUs 0..%d)",
				  o->host_cpus, TWIN_MAX_CPUS - 1);
	for (int c = 0; c < TWIN_MAX_CPUS; c++)
		if (set[c] && !CPU_ISSET(c, &aff))
			return pd_err_set(e, PD_EXIT_USAGE, "--host-cpus %s: CPU %d is not one this machine lets powerdag "
					  "run on (offline or outside its affinity; see nproc)", o->host_cpus, c);
	for (int c = 0; c < TWIN_MAX_CPUS; c++)
		if (set[c])
			r->host_cpus[r->n_host_cpus++] = c;
	snprintf(r->cgroup, sizeof(r->cgroup), "%s-%s", PD_DEPLOY_CGROUP_DEFAULT, r->netns);
	return 0;
}

static int refuse_if_up(const struct twin_paths *tp, const struct record *want, pd_err *e)
{
	struct record old;
	char p[128];
	if (read_record(tp, &old, NULL) == 0) {
		if (daemon_alive(&old))
			return pd_err_set(e, PD_EXIT_ENV, "a twin is already up in %s (%s, daemon pid %d); `powerdag twin down` first",
					  tp->dir, old.uri, (int)old.daemon);
		return pd_err_set(e, PD_EXIT_ENV, "%s records a twin that is not running (crashed?); clean it with `powerdag twin down`",
				  tp->json);
	}
	snprintf(p, sizeof(p), "/run/netns/%s", want->netns);
	if (twin_file_exists(p))
		return pd_err_set(e, PD_EXIT_ENV,
				  "network namespace %s already exists (another twin?); choose --netns or take it down", want->netns);
	/* the /30 must be free on this machine, or the twin's address would be ambiguous */
	pd_buf out;
	pd_buf_init(&out);
	char *argv[] = {"ip", "-o", "-4", "addr", "show", NULL}, needle[48];
	int rc = twin_run(argv, &out, e);
	snprintf(needle, sizeof(needle), " %s/", want->host_addr);
	bool used = rc == 0 && out.data && strstr(out.data, needle);
	pd_buf_free(&out);
	if (rc != 0)
		return rc < 0 ? PD_EXIT_ENV : pd_err_set(e, PD_EXIT_ENV, "`ip addr show` failed: is iproute2 installed?");
	if (used)
		return pd_err_set(e, PD_EXIT_ENV, "address %s is already in use on this machine; choose another --subnet",
				  want->host_addr);
	return 0;
}

/* The VM twin's board: image (built when missing), per-boot initrd, qemu in the netns. KVM is
 * probed once per machine by a boot that must reach SSH within 20 s; otherwise TCG (TWIN.md). */
static int up_vm(const struct twin_vm_guest *g, const char *exe, const struct twin_paths *tp, struct record *r,
		 int n_cpus, pd_err *e)
{
	char image[256], initrd[340], abuf[8];
	snprintf(initrd, sizeof(initrd), "%s/initrd", tp->vm_dir);
	if (mkdir(tp->vm_dir, 0700) != 0 && errno != EEXIST)
		return pd_err_set(e, PD_EXIT_ENV, "mkdir %s: %s", tp->vm_dir, strerror(errno)), -1;
	if (twin_vm_image(g, image, sizeof(image), r->kernel, sizeof(r->kernel), e) != 0)
		return -1;
	struct twin_vm_boot b = {g, tp, image, tp->vm_dir, initrd, exe, r->netns, r->addr, r->port, n_cpus};
	if (twin_vm_initrd(&b, e) != 0)
		return -1;
	const char *accel = twin_vm_accel_cached(g, image, abuf, sizeof(abuf));
	bool probe = accel == NULL;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (!accel)
			accel = "kvm";
		snprintf(r->accel, sizeof(r->accel), "%s", accel);
		r->daemon = twin_vm_start(&b, accel, e);
		if (r->daemon <= 0)
			return -1;
		r->daemon_start = twin_starttime(r->daemon);
		r->mntns = twin_mntns_of(r->daemon);
		write_record(tp, r, NULL); /* so that down finds qemu whatever happens next */
		if (twin_vm_wait(r->daemon, tp->vm_dir, r->addr, r->port, probe && attempt == 0 ? 20 : g->boot_timeout_s,
				  e) == 0) {
			if (probe)
				twin_vm_accel_store(image, accel);
			return 0;
		}
		twin_vm_kill(r->daemon);
		r->daemon = 0, r->daemon_start = 0;
		if (!probe || strcmp(accel, "kvm") != 0)
			return -1;
		fprintf(stderr, "powerdag twin: the guest did not come up under KVM (%s); using TCG from now on\n", e->msg);
		twin_vm_accel_store(image, "tcg");
		accel = "tcg";
	}
	return -1;
}

int pd_twin_up(const struct pd_twin_opts *o, char *uri, size_t uri_n, pd_err *e)
{
	char dir[256];
	struct twin_paths tp;
	struct record r;
	pd_twin_state_dir(o->state_dir, dir, sizeof(dir));
	if (twin_paths_init(&tp, dir, e) || fill_record(o, &r, e) || host_cpus(o, &r, e))
		return e->code ? e->code : PD_EXIT_USAGE;
	/* the guest and its powerdag before anything is created: a wrong --arch or a missing cross build
	 * leaves no state behind */
	const struct twin_vm_guest *guest = o->vm ? twin_vm_guest(o->arch) : NULL;
	if (o->vm && !guest)
		return pd_err_set(e, PD_EXIT_USAGE, "--arch %s: unknown guest architecture (x86_64 or arm64)", o->arch);
	if (!o->vm && o->arch)
		return pd_err_set(e, PD_EXIT_USAGE, "--arch needs --vm (the namespace twin runs this machine's kernel)");
	/* One twin core per host CPU by default, and never more than the guest's board has (the
	 * ZCU102's 3 plan cores of arm64): each core of a TCG guest is a host thread, and more busy
	 * vCPUs than host CPUs deschedule jobs mid-run (4 vCPUs on 2 host CPUs: 20-36 misses per 5 s,
	 * 3 vCPUs: none), which is the host's shortfall, not the board's timing. --cpus overrides it. */
	int n_cpus = o->n_cpus > 0 ? o->n_cpus : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (o->n_cpus <= 0 && guest && guest->default_cpus > 0 && guest->default_cpus < n_cpus)
		n_cpus = guest->default_cpus;
	if (r.n_host_cpus)
		n_cpus = (int)r.n_host_cpus;
	pd_buf probe; /* bad platform input is reported before anything is created */
	pd_buf_init(&probe);
	int rc = pd_twin_derive_platform_on(o->platform, r.n_host_cpus ? r.host_cpus : NULL, n_cpus, r.iio_uri, true,
					    &probe, e);
	pd_buf_free(&probe);
	if (rc)
		return rc;
	char self[4096], exe[4096] = "";
	if (self_exe(o, self, sizeof(self), e) != 0)
		return PD_EXIT_ENV;
	if (guest && twin_vm_exe(guest, self, exe, sizeof(exe), e) != 0)
		return PD_EXIT_ENV;
	if (check_env(guest, e) || refuse_if_up(&tp, &r, e))
		return PD_EXIT_ENV;
	if (make_dirs(&tp, e) || (rc = platform_file(o, &tp, &r, n_cpus, e)) != 0 || ssh_files(&tp, &r, e) ||
	    write_record(&tp, &r, e))
		return rc ? rc : PD_EXIT_ENV;
	int ready = -1;
	bool ok;
	if (o->vm) {
		snprintf(r.kind, sizeof(r.kind), "vm");
		snprintf(r.arch, sizeof(r.arch), "%s", guest->arch);
		ok = write_record(&tp, &r, e) == 0 && make_network(&r, true, e) == 0 &&
		     up_vm(guest, exe, &tp, &r, n_cpus, e) == 0;
		if (ok && write_record(&tp, &r, e) == 0) {
			snprintf(uri, uri_n, "%s", r.uri);
			return 0;
		}
		pd_err saved = *e;
		pd_twin_down(dir, NULL, NULL);
		*e = saved;
		return PD_EXIT_ENV;
	}
	struct utsname u;
	snprintf(r.arch, sizeof(r.arch), "%s", uname(&u) == 0 ? u.machine : "");
	twin_host_take(&r.host);
	ok = make_network(&r, false, e) == 0 && (r.daemon = start_daemon(o, &tp, &r, &ready, e)) > 0 &&
	     wait_ready(ready, &r.sshd, &r.iiod, e) == 0;
	if (ready >= 0)
		close(ready);
	if (ok) {
		r.daemon_start = twin_starttime(r.daemon);
		r.mntns = twin_mntns_of(r.daemon);
		int i = 0;
		while (i++ < 100 && !(host_port_open(r.addr, r.port) && host_port_open(r.addr, PD_TWIN_IIOD_PORT)))
			sleep_ms(50);
		ok = i <= 100 || pd_err_set(e, PD_EXIT_ENV, "the twin at %s is not reachable from the host", r.addr) == 0;
	}
	if (ok && write_record(&tp, &r, e) == 0) {
		snprintf(uri, uri_n, "%s", r.uri);
		return 0;
	}
	pd_err saved = *e;
	if (r.daemon > 0 && !r.daemon_start) { /* record it so down can end it */
		r.daemon_start = twin_starttime(r.daemon);
		r.mntns = twin_mntns_of(r.daemon);
		write_record(&tp, &r, NULL);
	}
	pd_twin_down(dir, NULL, NULL);
	*e = saved;
	return PD_EXIT_ENV;
}

/* ---------------------------------------------------------------- down */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(flag == FTW_DP ? rmdir : unlink)(path);
	return 0;
}

static void remove_state(const struct twin_paths *tp)
{
	const char *trees[] = {tp->ssh_dir, tp->firmware, tp->fsroot, tp->vm_dir};
	for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++)
		if (twin_file_exists(trees[i])) /* FTW_MOUNT: never descend into anything mounted there */
			nftw(trees[i], rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	char pub[320];
	snprintf(pub, sizeof(pub), "%s.pub", tp->identity);
	const char *files[] = {tp->platform, tp->identity, pub, tp->known_hosts, tp->daemon_log, tp->sshd_log,
			       tp->iiod_log, tp->json};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		unlink(files[i]);
	rmdir(tp->dir); /* only when empty: anything else there is not ours */
}

static void end_processes(const struct record *r)
{
	if (daemon_alive(r)) {
		kill(r->daemon, SIGTERM);
		for (int i = 0; i < 60 && daemon_alive(r); i++)
			sleep_ms(50);
	}
	/* everything left in the board's mount namespace: sshd sessions, agents, a crashed daemon's
	 * children. Repeat: a process may fork while we scan. */
	for (int i = 0; i < 100 && twin_kill_mntns(r->mntns, SIGKILL) > 0; i++)
		sleep_ms(20);
	if (daemon_alive(r))
		kill(r->daemon, SIGKILL);
	for (int i = 0; i < 100 && (daemon_alive(r) || twin_kill_mntns(r->mntns, 0) > 0); i++)
		sleep_ms(20);
	if (r->daemon > 0)
		waitpid(r->daemon, NULL, WNOHANG); /* reap when we are its parent (a failed up) */
}

int pd_twin_down(const char *state_dir, bool *was_up, pd_err *e)
{
	char dir[256], p[300];
	struct twin_paths tp;
	struct record r;
	pd_twin_state_dir(state_dir, dir, sizeof(dir));
	if (was_up)
		*was_up = false;
	if (twin_paths_init(&tp, dir, e))
		return PD_EXIT_USAGE;
	if (read_record(&tp, &r, NULL) != 0)
		return 0; /* nothing recorded: nothing to do */
	if (was_up)
		*was_up = true;
	end_processes(&r);
	snprintf(p, sizeof(p), "/sys/class/net/%s", r.veth);
	if (r.veth[0] && twin_file_exists(p)) {
		char *c[] = {"ip", "link", "del", r.veth, NULL};
		run_ok(NULL, c);
	}
	snprintf(p, sizeof(p), "/run/netns/%s", r.netns);
	if (r.netns[0] && twin_file_exists(p)) {
		char *c[] = {"ip", "netns", "del", r.netns, NULL};
		if (run_ok(e, c) != 0)
			return PD_EXIT_ENV;
	}
	if (twin_kill_mntns(r.mntns, 0) > 0)
		return pd_err_set(e, PD_EXIT_ENV, "processes of the twin's namespace survived SIGKILL");
	if (strcmp(r.kind, "vm") != 0) { /* a VM's deploys change its own kernel only */
		pd_buf said;
		pd_buf_init(&said);
		int hrc = twin_host_clean(&r.host, r.cgroup[0] ? r.cgroup : PD_DEPLOY_CGROUP_DEFAULT, &said);
		for (char *l = said.data, *nl; l && *l; l = nl + 1) { /* one prefixed line per thing done */
			nl = strchr(l, '\n');
			fprintf(stderr, "powerdag twin down: %.*s\n", nl ? (int)(nl - l) : (int)strlen(l), l);
			if (!nl)
				break;
		}
		pd_buf_free(&said);
		if (hrc)
			return pd_err_set(e, PD_EXIT_ENV, "a deploy's cpuset is left on this machine (above)");
	}
	if (r.netns[0])
		twin_acct_remove(r.netns);
	remove_state(&tp);
	return 0;
}

/* ---------------------------------------------------------------- status */

int pd_twin_status_json(const char *state_dir, char **json, bool *running, pd_err *e)
{
	char dir[256];
	struct twin_paths tp;
	struct record r;
	json_t *j = NULL;
	pd_twin_state_dir(state_dir, dir, sizeof(dir));
	if (twin_paths_init(&tp, dir, e))
		return PD_EXIT_USAGE;
	if (read_record(&tp, &r, &j) != 0)
		return pd_err_set(e, PD_EXIT_ENV, "no twin is up in %s (`powerdag twin up`)", dir);
	if (strcmp(r.kind, "vm") == 0) /* sshd and iiod are the guest's: ask them over the network */
		*running = daemon_alive(&r) && twin_vm_reachable(r.addr, r.port);
	else
		*running = daemon_alive(&r) && r.sshd > 0 && kill(r.sshd, 0) == 0 && r.iiod > 0 && kill(r.iiod, 0) == 0;
	json_object_set_new(j, "running", json_boolean(*running));
	*json = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(j);
	return *json ? 0 : pd_err_set(e, PD_EXIT_ENV, "out of memory");
}
