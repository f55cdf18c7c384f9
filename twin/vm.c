/* SPDX-License-Identifier: MIT */
/*
 * The VM twin (`twin up --vm`, docs/TWIN.md "The VM twin"): the board is a qemu guest running
 * Debian 12's 6.1 cloud kernel (cgroup v2 only, no fair server) instead of a mount namespace of this
 * machine's kernel.
 *
 *   image (cached, scripts/vm-image.sh)  vmlinuz + rootfs.cpio, built once from Debian packages
 *   per boot (this file)                 STATE/vm/initrd = rootfs.cpio + a second cpio archive with
 *                                        the twin's state (platform, sshd config and keys), this
 *                                        powerdag binary and /powerdag/boot.sh, which runs
 *                                        `powerdag twin _daemon --netns -` in the guest: the same
 *                                        FUSE board files, sshd and iiod as the namespace twin,
 *                                        but on the guest's kernel and its CPUs
 *   network                              the twin's netns holds a bridge joining the veth's board
 *                                        end and a tap; qemu (started in the netns) puts the
 *                                        guest's eth0 on the tap, the guest takes the board address
 *
 * The kernel unpacks concatenated newc archives in order, so the per-boot archive only adds files.
 */
#include "twin/twin_impl.h"

#include <jansson.h>

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

#ifndef PD_VM_IMAGE_SCRIPT
#define PD_VM_IMAGE_SCRIPT "scripts/vm-image.sh"
#endif
#ifndef PD_VM_IMAGE_SCRIPT_ARM64
#define PD_VM_IMAGE_SCRIPT_ARM64 "scripts/vm-image-arm64.sh"
#endif

/* The arm64 guest is emulated (TCG) on an x86-64 host: its boot and the twin daemon's start take
 * longer than the x86-64 guest's, hence its larger boot timeout. Its cores are the board's, not the
 * host's: 3 twin cores + the root cgroup's vCPU = the ZCU102 APU's four Cortex-A53. */
static const struct twin_vm_guest guests[] = {
	{"x86_64", "", "POWERDAG_VM_CACHE", PD_TWIN_VM_DEFAULT_CACHE, "POWERDAG_VM_IMAGE_SCRIPT", PD_VM_IMAGE_SCRIPT,
	 "qemu-system-x86_64", "qemu-system-x86", true, 120, 0},
	{"aarch64", "arm64", "POWERDAG_VM_CACHE_ARM64", PD_TWIN_VM_DEFAULT_CACHE "-arm64", "POWERDAG_VM_IMAGE_SCRIPT_ARM64",
	 PD_VM_IMAGE_SCRIPT_ARM64, "qemu-system-aarch64", "qemu-system-arm", false, 240, 3},
};

const struct twin_vm_guest *twin_vm_guest(const char *arch)
{
	if (!arch || !*arch || !strcmp(arch, "x86_64") || !strcmp(arch, "amd64"))
		return &guests[0];
	if (!strcmp(arch, "aarch64") || !strcmp(arch, "arm64"))
		return &guests[1];
	return NULL;
}

/* Whether path is an executable powerdag for the guest g (its ELF machine is the guest's). */
static bool runs_on(const struct twin_vm_guest *g, const char *path)
{
	const char *m = pd_elf_arch(path);
	return m && strcmp(m, g->arch) == 0 && access(path, X_OK) == 0;
}

int twin_vm_exe(const struct twin_vm_guest *g, const char *self, char *out, size_t n, pd_err *e)
{
	char env[64];
	snprintf(env, sizeof(env), "POWERDAG_VM_EXE_%s", g->image_arch[0] ? "ARM64" : "X86_64");
	const char *ev = getenv(env);
	if (ev && *ev) { /* named by the user: that one or an error, never a silent fallback */
		if (!runs_on(g, ev))
			return pd_err_set(e, PD_EXIT_ENV,
					  "%s=%s is not an executable %s powerdag (build one with `scripts/cross-build.sh "
					  "%s --full`)", env, ev, g->arch, g->arch);
		snprintf(out, n, "%s", ev);
		return 0;
	}
	if (runs_on(g, self)) {
		snprintf(out, n, "%s", self);
		return 0;
	}
	/* build/powerdag's checkout holds build-<arch>-full/ (cross-build.sh --full); PREFIX/bin/powerdag
	 * has PREFIX/libexec/powerdag/<arch>/powerdag (cross-build.sh --full --install PREFIX) */
	char dir[1024], cand[2][1200];
	snprintf(dir, sizeof(dir), "%s", self);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	snprintf(cand[0], sizeof(cand[0]), "%s/../build-%s-full/powerdag", dir, g->arch);
	snprintf(cand[1], sizeof(cand[1]), "%s/../libexec/powerdag/%s/powerdag", dir, g->arch);
	for (size_t i = 0; i < 2; i++)
		if (runs_on(g, cand[i])) {
			char *real = realpath(cand[i], NULL);
			snprintf(out, n, "%s", real ? real : cand[i]);
			free(real);
			return 0;
		}
	return pd_err_set(e, PD_EXIT_ENV,
			  "no %s powerdag for the %s guest (it runs the twin daemon there): build it with "
			  "`scripts/install-cross-deps.sh --full %s && scripts/cross-build.sh %s --full` or set %s; "
			  "tried %s, %s",
			  g->arch, g->image_arch[0] ? g->image_arch : g->arch, g->arch, g->arch, env, cand[0], cand[1]);
}

static void vm_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * PD_NS_PER_MS};
	nanosleep(&ts, NULL);
}

const char *twin_vm_cache_dir(const struct twin_vm_guest *g, char *buf, size_t n)
{
	const char *env = getenv(g->cache_env);
	snprintf(buf, n, "%s", env && *env ? env : g->cache_default);
	return buf;
}

/* An image is usable when its three parts are there and image.json names the layout this binary
 * boots (PD_TWIN_VM_IMAGE_FORMAT = VM_IMAGE_FORMAT of scripts/vm-image-lib.sh) and the guest's
 * architecture: a cache built by an older script (another /init) is rebuilt, not booted, and a
 * cache variable pointing at the other architecture's image is not booted either. */
static bool image_complete(const struct twin_vm_guest *g, const char *dir)
{
	const char *parts[] = {"vmlinuz", "rootfs.cpio", "image.json"};
	char p[512];
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, parts[i]);
		if (!twin_file_exists(p))
			return false;
	}
	json_t *j = json_load_file(p, 0, NULL);
	json_int_t fmt = j ? json_integer_value(json_object_get(j, "format")) : 0;
	const char *arch = j ? json_string_value(json_object_get(j, "arch")) : NULL;
	bool ok = fmt == PD_TWIN_VM_IMAGE_FORMAT && strcmp(arch ? arch : "", g->image_arch) == 0;
	json_decref(j);
	return ok;
}

int twin_vm_image(const struct twin_vm_guest *g, char *dir, size_t n, char *kernel, size_t kn, pd_err *e)
{
	twin_vm_cache_dir(g, dir, n);
	if (!image_complete(g, dir)) {
		const char *env = getenv(g->script_env);
		char *script = (char *)(env && *env ? env : g->script);
		if (!twin_file_exists(script))
			return pd_err_set(e, PD_EXIT_ENV, "the %s VM image is missing in %s and its build script %s is not there "
					  "(set %s)", g->arch, dir, script, g->script_env);
		fprintf(stderr, "powerdag twin: building the %s VM image in %s (once, a few minutes)\n", g->arch, dir);
		pd_buf out;
		pd_buf_init(&out);
		char *argv[] = {"sh", script, dir, NULL};
		int rc = twin_run(argv, &out, e);
		if (rc != 0 || !image_complete(g, dir)) {
			const char *t = out.data ? out.data : "";
			size_t l = strlen(t);
			if (rc >= 0)
				pd_err_set(e, PD_EXIT_ENV, "building the VM image failed (%s): ...%s", script, l > 600 ? t + l - 600 : t);
			pd_buf_free(&out);
			return -1;
		}
		pd_buf_free(&out);
	}
	char p[512], *js = NULL;
	size_t len;
	snprintf(p, sizeof(p), "%s/image.json", dir);
	if (pd_read_file(p, &js, &len, 1 << 16, e) != 0)
		return -1;
	const char *k = strstr(js, "\"kernel\": \"");
	snprintf(kernel, kn, "%s", k ? k + 11 : "unknown");
	kernel[strcspn(kernel, "\"")] = 0;
	free(js);
	return 0;
}

/* ---------------------------------------------------------------- newc cpio */

struct cpio {
	FILE *f;
	unsigned ino;
	bool failed;
};

static void cpio_entry(struct cpio *c, const char *name, unsigned mode, const void *data, size_t len)
{
	size_t nl = strlen(name) + 1;
	/* header: magic + 13 fields of 8 hex digits; name and data each padded to 4 bytes */
	if (fprintf(c->f, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X", c->ino++, mode, 0u, 0u, 1u, 0u,
		    (unsigned)len, 0u, 0u, 0u, 0u, (unsigned)nl, 0u) < 0 ||
	    fwrite(name, 1, nl, c->f) != nl)
		c->failed = true;
	static const char zero[4] = {0};
	size_t hn = 110 + nl;
	if (hn % 4 && fwrite(zero, 1, 4 - hn % 4, c->f) != 4 - hn % 4)
		c->failed = true;
	if (len && fwrite(data, 1, len, c->f) != len)
		c->failed = true;
	if (len % 4 && fwrite(zero, 1, 4 - len % 4, c->f) != 4 - len % 4)
		c->failed = true;
}

static void cpio_dir(struct cpio *c, const char *name)
{
	cpio_entry(c, name, 040755, NULL, 0);
}

/* Adds the file at path (≤ 256 MiB) as name with the given mode. */
static int cpio_file(struct cpio *c, const char *name, const char *path, unsigned mode, pd_err *e)
{
	char *data = NULL;
	size_t len = 0;
	if (pd_read_file(path, &data, &len, 256u << 20, e) != 0)
		return -1;
	cpio_entry(c, name, 0100000 | mode, data, len);
	free(data);
	return 0;
}

static int copy_file(const char *from, FILE *to, pd_err *e)
{
	FILE *f = fopen(from, "rb");
	if (!f)
		return pd_err_set(e, PD_EXIT_ENV, "open %s: %s", from, strerror(errno)), -1;
	char buf[1 << 16];
	size_t n;
	int rc = 0;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (fwrite(buf, 1, n, to) != n) {
			rc = -1, pd_err_set(e, PD_EXIT_ENV, "write: %s", strerror(errno));
			break;
		}
	fclose(f);
	return rc;
}

int twin_vm_initrd(const struct twin_vm_boot *b, pd_err *e)
{
	char rootfs[512];
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs.cpio", b->image);
	FILE *f = fopen(b->initrd, "wb");
	if (!f)
		return pd_err_set(e, PD_EXIT_ENV, "create %s: %s", b->initrd, strerror(errno)), -1;
	struct cpio c = {f, 900000, false};
	int rc = copy_file(rootfs, f, e);
	/* the state directory's files under /powerdag/state: boot.sh copies them to the same path as on
	 * the host (the guest's /run is a tmpfs mounted by /init), so the sshd config stays valid */
	struct {
		const char *name, *path;
		unsigned mode;
	} files[] = {{"powerdag/state/platform.yaml", b->tp->platform, 0644},
		     {"powerdag/state/ssh/sshd_config", b->tp->sshd_config, 0600},
		     {"powerdag/state/ssh/ssh_host_ed25519_key", b->tp->host_key, 0600},
		     {"powerdag/state/ssh/authorized_keys", b->tp->authorized, 0600},
		     {"usr/local/bin/powerdag", b->exe, 0755}}; /* the guest's architecture (twin_vm_exe) */
	if (rc == 0) {
		cpio_dir(&c, "powerdag");
		cpio_dir(&c, "powerdag/state");
		cpio_dir(&c, "powerdag/state/ssh");
		cpio_dir(&c, "powerdag/state/ssh/empty");
		cpio_dir(&c, "powerdag/state/firmware");
		cpio_dir(&c, "powerdag/state/fs");
		/* the kernel creates no missing parents: the arm64 image (packages only extracted) has no
		 * /usr/local; an existing directory is left as it is */
		cpio_dir(&c, "usr");
		cpio_dir(&c, "usr/local");
		cpio_dir(&c, "usr/local/bin");
		for (size_t i = 0; rc == 0 && i < sizeof(files) / sizeof(files[0]); i++)
			rc = cpio_file(&c, files[i].name, files[i].path, files[i].mode, e);
	}
	if (rc == 0) {
		/* every value below was validated by pd_name_chars_ok / inet_pton in life.c: nothing to quote */
		pd_buf s;
		pd_buf_init(&s);
		pd_buf_printf(&s,
			      "#!/bin/sh\n# generated by powerdag twin up --vm\n"
			      "mkdir -p /run/sshd %s && cp -a /powerdag/state/. %s/\n"
			      "exec /usr/local/bin/powerdag twin _daemon --state %s --netns - --addr %s --port %d\n",
			      b->tp->dir, b->tp->dir, b->tp->dir, b->addr, b->port);
		cpio_entry(&c, "powerdag/boot.sh", 0100755, s.data, s.len);
		pd_buf_free(&s);
		cpio_entry(&c, "TRAILER!!!", 0, NULL, 0);
	}
	if (fclose(f) != 0 && rc == 0)
		rc = -1, pd_err_set(e, PD_EXIT_ENV, "write %s: %s", b->initrd, strerror(errno));
	if (rc == 0 && c.failed)
		rc = -1, pd_err_set(e, PD_EXIT_ENV, "write %s failed", b->initrd);
	return rc;
}

/* ---------------------------------------------------------------- network and qemu */

int twin_vm_network(const char *netns, const char *veth_board, pd_err *e)
{
	char *ns = (char *)netns, *vb = (char *)veth_board;
	char *c1[] = {"ip", "-n", ns, "link", "add", TWIN_VM_BRIDGE, "type", "bridge", NULL};
	char *c2[] = {"ip", "-n", ns, "link", "set", vb, "master", TWIN_VM_BRIDGE, NULL};
	char *c3[] = {"ip", "-n", ns, "tuntap", "add", "dev", TWIN_VM_TAP, "mode", "tap", NULL};
	char *c4[] = {"ip", "-n", ns, "link", "set", TWIN_VM_TAP, "master", TWIN_VM_BRIDGE, NULL};
	char *c5[] = {"ip", "-n", ns, "link", "set", TWIN_VM_TAP, "up", NULL};
	char *c6[] = {"ip", "-n", ns, "link", "set", TWIN_VM_BRIDGE, "up", NULL};
	char *c7[] = {"ip", "-n", ns, "link", "set", vb, "up", NULL};
	char **cmds[] = {c1, c2, c3, c4, c5, c6, c7};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		pd_buf out;
		pd_buf_init(&out);
		int rc = twin_run(cmds[i], &out, e);
		if (rc > 0)
			pd_err_set(e, PD_EXIT_ENV, "ip %s %s %s failed: %s", cmds[i][3], cmds[i][4], cmds[i][5],
				   out.data ? out.data : "");
		pd_buf_free(&out);
		if (rc != 0)
			return -1;
	}
	return 0;
}

pid_t twin_vm_start(const struct twin_vm_boot *b, const char *accel, pd_err *e)
{
	char kernel[512], smp[16], append[200], serial[400], log[400];
	snprintf(kernel, sizeof(kernel), "%s/vmlinuz", b->image);
	/* one vCPU more than the twin's cores: on cgroup v2 the root cgroup (init, sshd, the twin daemon)
	 * must keep a CPU outside the plan's partitions, as a board's Linux keeps one (docs/TWIN.md) */
	snprintf(smp, sizeof(smp), "%d", b->n_cpus + 1);
	snprintf(serial, sizeof(serial), "file:%s/console.log", b->vm_dir);
	snprintf(log, sizeof(log), "%s/qemu.log", b->vm_dir);
	if (strcmp(b->guest->arch, "aarch64") == 0) { /* the ZCU102's Cortex-A53 on qemu's virt board, as tests/vm/vm_arm64_boot.sh */
		snprintf(append, sizeof(append), "console=ttyAMA0 panic=-1 quiet pd.ip=%s/30", b->addr);
		char *argv[] = {"ip", "netns", "exec", (char *)b->netns, (char *)b->guest->qemu, "-nodefaults",
				"-no-user-config", "-name", "powerdag-twin", "-M", "virt", "-accel", "tcg,thread=multi", "-cpu",
				"cortex-a53", "-m", "1024", "-smp", smp, "-display", "none", "-monitor", "none", "-serial",
				serial, "-no-reboot", "-kernel", kernel, "-initrd", (char *)b->initrd, "-append", append,
				"-netdev", "tap,id=n0,ifname=" TWIN_VM_TAP ",script=no,downscript=no", "-device",
				"virtio-net-pci,netdev=n0,mac=52:54:00:70:64:02", NULL};
		return twin_spawn(argv, log, e);
	}
	snprintf(append, sizeof(append), "console=ttyS0 panic=-1 quiet pd.ip=%s/30", b->addr);
	bool kvm = strcmp(accel, "kvm") == 0;
	/* `ip netns exec` puts qemu (same pid) into the twin's netns, where the tap is */
	char *argv[] = {"ip", "netns", "exec", (char *)b->netns, "qemu-system-x86_64", "-nodefaults", "-no-user-config",
			"-name", "powerdag-twin", "-accel", kvm ? "kvm" : "tcg,thread=multi", "-cpu", kvm ? "qemu64" : "max",
			"-m", "1024", "-smp", smp, "-display", "none", "-monitor", "none", "-serial", serial, "-no-reboot",
			"-kernel", kernel, "-initrd", (char *)b->initrd, "-append", append, "-netdev",
			"tap,id=n0,ifname=" TWIN_VM_TAP ",script=no,downscript=no", "-device",
			"virtio-net-pci,netdev=n0,mac=52:54:00:70:64:02", NULL};
	return twin_spawn(argv, log, e);
}

static bool tcp_open(const char *addr, int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, addr, &sa.sin_addr);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return false;
	bool ok = connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (!ok && errno == EINPROGRESS) {
		fd_set w;
		FD_ZERO(&w);
		FD_SET(s, &w);
		struct timeval tv = {0, 300000};
		int err = 1;
		socklen_t el = sizeof(err);
		ok = select(s + 1, NULL, &w, NULL, &tv) == 1 && getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err == 0;
	}
	close(s);
	return ok;
}

bool twin_vm_reachable(const char *addr, int port)
{
	return tcp_open(addr, port) && tcp_open(addr, PD_TWIN_IIOD_PORT);
}

/* What a log says last, for an error message: its last line, and for the guest console its
 * user-space lines (init, the twin daemon: those without a kernel "[ time]" prefix) and a panic. */
static void log_tail(const char *path, char *out, size_t n)
{
	char *s = NULL;
	size_t len = 0, used = 0;
	out[0] = 0;
	if (pd_read_file(path, &s, &len, 16u << 20, NULL) != 0 || !s)
		return;
	char *last = NULL;
	for (char *l = strtok(s, "\r\n"); l; l = strtok(NULL, "\r\n")) {
		last = l;
		if ((l[0] != '[' || strstr(l, "panic")) && used + strlen(l) + 4 < n)
			used += (size_t)snprintf(out + used, n - used, "%s | ", l);
	}
	if (last && !strstr(out, last) && used + strlen(last) + 1 < n)
		snprintf(out + used, n - used, "%s", last);
	free(s);
}

int twin_vm_wait(pid_t qemu, const char *vm_dir, const char *addr, int port, int timeout_s, pd_err *e)
{
	int64_t deadline = twin_now_ns() + (int64_t)timeout_s * PD_NS_PER_S;
	char p[400], l1[300], l2[1500];
	while (twin_now_ns() < deadline) {
		if (waitpid(qemu, NULL, WNOHANG) == qemu) {
			snprintf(p, sizeof(p), "%s/qemu.log", vm_dir);
			log_tail(p, l1, sizeof(l1));
			snprintf(p, sizeof(p), "%s/console.log", vm_dir);
			log_tail(p, l2, sizeof(l2));
			return pd_err_set(e, PD_EXIT_ENV, "qemu exited during boot: %s / guest console: %s", l1, l2);
		}
		if (twin_vm_reachable(addr, port))
			return 0;
		vm_sleep_ms(200);
	}
	snprintf(p, sizeof(p), "%s/console.log", vm_dir);
	log_tail(p, l2, sizeof(l2));
	return pd_err_set(e, PD_EXIT_ENV, "the VM twin's sshd/iiod at %s did not answer within %d s; guest console: %s",
			  addr, timeout_s, l2);
}

void twin_vm_kill(pid_t qemu)
{
	if (qemu <= 0)
		return;
	kill(qemu, SIGTERM);
	for (int i = 0; i < 100; i++) {
		if (waitpid(qemu, NULL, WNOHANG) == qemu)
			return;
		vm_sleep_ms(20);
	}
	kill(qemu, SIGKILL);
	waitpid(qemu, NULL, 0);
}

/* A /dev/kvm served by kvm_pvm alone (PVM, "pagetable-based virtual machine": KVM without VT-x or
 * AMD-V, e.g. in a cloud VM without nested virtualisation) runs only kernels built as PVM guests;
 * Debian's kernel there executes in KVM's instruction emulator, far slower than TCG (TWIN.md "KVM"). */
static bool kvm_is_pvm_only(void)
{
	return twin_file_exists("/sys/module/kvm_pvm") && !twin_file_exists("/sys/module/kvm_intel") &&
	       !twin_file_exists("/sys/module/kvm_amd");
}

/* KVM or TCG: TCG for a foreign architecture; POWERDAG_VM_ACCEL forces one; TCG without /dev/kvm or where KVM is PVM only;
 * otherwise the outcome of the first KVM boot on this machine, cached in the image directory. */
const char *twin_vm_accel_cached(const struct twin_vm_guest *g, const char *image, char *buf, size_t n)
{
	if (!g->kvm) /* another architecture than the host's: emulated whatever POWERDAG_VM_ACCEL says */
		return snprintf(buf, n, "tcg"), buf;
	const char *env = getenv("POWERDAG_VM_ACCEL");
	if (env && (strcmp(env, "kvm") == 0 || strcmp(env, "tcg") == 0))
		return snprintf(buf, n, "%s", env), buf;
	if (!twin_file_exists("/dev/kvm") || kvm_is_pvm_only())
		return snprintf(buf, n, "tcg"), buf;
	char p[512], *s = NULL;
	size_t len;
	snprintf(p, sizeof(p), "%s/accel", image);
	if (pd_read_file(p, &s, &len, 64, NULL) != 0)
		return NULL; /* not probed yet */
	snprintf(buf, n, "%s", strncmp(s, "kvm", 3) == 0 ? "kvm" : "tcg");
	free(s);
	return buf;
}

void twin_vm_accel_store(const char *image, const char *accel)
{
	char p[512], line[8];
	snprintf(p, sizeof(p), "%s/accel", image);
	snprintf(line, sizeof(line), "%s\n", accel);
	pd_write_file_atomic(p, line, strlen(line), NULL);
}
