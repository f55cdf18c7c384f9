/* SPDX-License-Identifier: MIT */
/*
 * The twin daemon (`powerdag twin _daemon`), started by pd_twin_up:
 *
 *   join the twin's network namespace -> private mount namespace -> FUSE model mounted at STATE/fs ->
 *   its subtrees bound over the board's sysfs paths, STATE/firmware over /lib/firmware ->
 *   sshd and iiod started as children (they inherit both namespaces) -> sshd into the board's cpuacct
 *   cgroup, the board's /proc/stat bound over the host's -> "ok" on the ready pipe -> sample the
 *   board's CPU time every TWIN_TICK_NS until SIGTERM/SIGINT, then end sshd/iiod and unmount.
 *
 * Everything it mounts exists only in its mount namespace, which disappears with its last process.
 */
#include "twin/twin_impl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct daemon_args {
	const char *state, *netns, *addr;
	int port, ready_fd;
};

static int parse_args(int argc, char **argv, struct daemon_args *a)
{
	memset(a, 0, sizeof(*a));
	a->ready_fd = -1;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--state") == 0)
			a->state = argv[i + 1];
		else if (strcmp(argv[i], "--netns") == 0)
			a->netns = argv[i + 1];
		else if (strcmp(argv[i], "--addr") == 0)
			a->addr = argv[i + 1];
		else if (strcmp(argv[i], "--port") == 0)
			a->port = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--ready-fd") == 0)
			a->ready_fd = atoi(argv[i + 1]);
		else
			return -1;
	}
	return a->state && a->netns && a->addr && a->port > 0 ? 0 : -1;
}

static int enter_namespaces(const char *netns, pd_err *e)
{
	char p[300];
	snprintf(p, sizeof(p), "/run/netns/%s", netns);
	/* "-": already in the board's network (inside the VM twin's guest, twin/vm.c) */
	int fd = strcmp(netns, "-") == 0 ? -2 : open(p, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return pd_err_set(e, PD_EXIT_ENV, "open %s: %s", p, strerror(errno));
	int rc = fd == -2 ? 0 : setns(fd, CLONE_NEWNET);
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		return pd_err_set(e, PD_EXIT_ENV, "setns %s: %s", p, strerror(errno));
	if (unshare(CLONE_NEWNS) != 0)
		return pd_err_set(e, PD_EXIT_ENV, "unshare(CLONE_NEWNS): %s", strerror(errno));
	/* private propagation: nothing mounted here reaches the host, and nothing of the host's later
	 * mounts changes the board's view */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return pd_err_set(e, PD_EXIT_ENV, "make / private: %s", strerror(errno));
	return 0;
}

/* Puts source at parent/name: a plain bind when the directory exists, else a shadow of parent. */
static int place(const char *parent, const char *name, const char *source, pd_err *e)
{
	char dst[512];
	struct stat st;
	snprintf(dst, sizeof(dst), "%s/%s", parent, name);
	if (stat(dst, &st) == 0 && S_ISDIR(st.st_mode))
		return twin_bind(source, dst, e);
	struct twin_overlay o = {name, source};
	return twin_shadow_dir(parent, &o, 1, e);
}

/* /sys/devices/system/cpu/cpuN/cpufreq of every twin core: the kernel's per-CPU view of its policy
 * (a symlink on real kernels). The agent reads the current frequency there to scale builtin:spin
 * work; without it spin work would run at the reference speed whatever OPP the twin emulates, and
 * the rails (computed from the real busy time) would disagree with the plan. */
static int mount_cpu_links(const struct twin_paths *tp, const pd_platform *p, pd_err *e)
{
	for (size_t k = 0; k < pd_platform_island_count(p); k++) {
		const struct pd_island *isl = pd_platform_island(p, k);
		char src[400], parent[200];
		snprintf(src, sizeof(src), "%s/cpufreq/%s", tp->fsroot, isl->policy ? isl->policy : "policy0");
		for (size_t c = 0; c < isl->n_cpus; c++) {
			snprintf(parent, sizeof(parent), "/sys/devices/system/cpu/cpu%d", isl->cpus[c]);
			if (twin_file_exists(parent) && place(parent, "cpufreq", src, e) != 0)
				return -1;
		}
	}
	return 0;
}

/* own_kernel: inside the VM twin's guest, whose real debugfs (a 6.1 kernel: no fair server) stays
 * visible, so that the deployer meets the fair-server-less kernel it is there to meet. */
static int mount_board(const struct twin_paths *tp, bool own_kernel, pd_err *e)
{
	char src[6][400];
	snprintf(src[0], sizeof(src[0]), "%s/cpufreq", tp->fsroot);
	snprintf(src[1], sizeof(src[1]), "%s/class/devfreq", tp->fsroot);
	snprintf(src[2], sizeof(src[2]), "%s/class/fpga_manager", tp->fsroot);
	snprintf(src[3], sizeof(src[3]), "%s/bus/iio", tp->fsroot);
	snprintf(src[4], sizeof(src[4]), "%s/debug", tp->fsroot);
	snprintf(src[5], sizeof(src[5]), "%s/twin", tp->fsroot);
	const struct twin_overlay cls[] = {{"devfreq", src[1]}, {"fpga_manager", src[2]}};
	const struct twin_overlay bus[] = {{"iio", src[3]}};
	const struct twin_overlay krn[] = {{"powerdag-twin", src[5]}, {"debug", src[4]}};
	if (place("/sys/devices/system/cpu", "cpufreq", src[0], e) || twin_shadow_dir("/sys/class", cls, 2, e) ||
	    twin_shadow_dir("/sys/bus", bus, 1, e) || twin_shadow_dir("/sys/kernel", krn, own_kernel ? 1 : 2, e) ||
	    place("/lib", "firmware", tp->firmware, e))
		return -1;
	return 0;
}

/* The board's /proc/stat (twin/procstat.c: the board cgroup's CPU time per twin core) bound over the
 * host's, so that the agent's busy figures count what the rails count. Only for the namespace twin
 * with the board's cgroup: when the rails fall back to the host's /proc/stat (no cpuacct v1), that
 * file already counts exactly what they count, and the VM twin's guest kernel has its own. The FUSE
 * handler runs in this mount namespace too, so it reads the host's file through a descriptor opened
 * before the bind (pread from offset 0 regenerates a seq_file); the daemon keeps it until it ends. */
static int mount_proc_stat(const struct twin_paths *tp, twin_model *m, const char *acct, pd_err *e)
{
	int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pd_err_set(e, PD_EXIT_ENV, "open /proc/stat: %s", strerror(errno));
	twin_model_serve_proc_stat(m, fd, acct);
	char src[400];
	snprintf(src, sizeof(src), "%s/proc/stat", tp->fsroot);
	return twin_bind(src, "/proc/stat", e);
}

static bool port_open(const char *addr, int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return false;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return false;
	bool ok = connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(s);
	return ok;
}

/* The last line of a server's log, for an error that names why it died. */
static void log_tail(const char *path, char *out, size_t n)
{
	out[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char line[256];
	while (fgets(line, sizeof(line), f))
		if (line[0] != '\n')
			snprintf(out, n, "%s", line);
	fclose(f);
	out[strcspn(out, "\n")] = 0;
}

/* 0 while *PID runs; else an error naming NAME, how it ended and its log's last line (*PID is then
 * -1: it was reaped, and its number may already be another process's). */
static int still_running(pid_t *pid, const char *name, const char *log, pd_err *e)
{
	int st;
	if (waitpid(*pid, &st, WNOHANG) != *pid)
		return 0;
	*pid = -1;
	char tail[256];
	log_tail(log, tail, sizeof(tail));
	return pd_err_set(e, PD_EXIT_ENV, "%s ended (%s %d) before listening: %s (%s)", name,
			  WIFSIGNALED(st) ? "signal" : "status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
			  tail[0] ? tail : "its log is empty", log);
}

/* Both servers listen within PD_TWIN_START_S; a server that dies says so at once. The limit is
 * generous because a farm starts its twins while LAVA's Python processes load on the same CPUs. */
static int wait_ports(const struct twin_paths *tp, const char *addr, int ssh_port, pid_t *sshd, pid_t *iiod,
		      pd_err *e)
{
	for (int i = 0; i < PD_TWIN_START_S * 20; i++) { /* 50-ms steps */
		if (still_running(sshd, "sshd", tp->sshd_log, e) || still_running(iiod, "iiod", tp->iiod_log, e))
			return -1;
		if (port_open(addr, ssh_port) && port_open(addr, PD_TWIN_IIOD_PORT))
			return 0;
		struct timespec ts = {0, 50 * PD_NS_PER_MS};
		nanosleep(&ts, NULL);
	}
	return pd_err_set(e, PD_EXIT_ENV, "sshd or iiod did not start listening on %s within %d s (logs: %s, %s)",
			  addr, PD_TWIN_START_S, tp->sshd_log, tp->iiod_log);
}

static int start_servers(const struct twin_paths *tp, const struct daemon_args *a, pid_t *sshd, pid_t *iiod,
			 pd_err *e)
{
	char *ssh_argv[] = {"/usr/sbin/sshd", "-D", "-e", "-f", (char *)tp->sshd_config, NULL};
	char *iiod_argv[] = {"/usr/sbin/iiod", NULL};
	if ((*sshd = twin_spawn(ssh_argv, tp->sshd_log, e)) < 0 || (*iiod = twin_spawn(iiod_argv, tp->iiod_log, e)) < 0)
		return -1;
	return wait_ports(tp, a->addr, a->port, sshd, iiod, e);
}

static void report(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(int fd, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (fd < 0) { /* no starter waiting (the VM twin's guest): the console is the only witness */
		fprintf(stderr, "twin daemon: %s", buf);
		return;
	}
	if (n > 0 && write(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0)
		fprintf(stderr, "twin daemon: cannot report to the starter\n");
	close(fd);
}

static void stop_child(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL); /* sshd and iiod hold no state worth a graceful stop (iiod ignores TERM ~10 s) */
	waitpid(pid, NULL, 0);
}

/* Samples the board's CPU time (its cpuacct cgroup, else /proc/stat) until SIGTERM/SIGINT. Signals
 * are blocked in every thread and taken here. */
static void serve(twin_model *m, const sigset_t *set, pid_t sshd, pid_t iiod, const char *acct)
{
	uint64_t busy[TWIN_MAX_CPUS], total[TWIN_MAX_CPUS];
	struct timespec tick = {0, TWIN_TICK_NS};
	for (;;) {
		int64_t now = twin_now_ns();
		if ((acct ? twin_acct_read(acct, now, busy, total, TWIN_MAX_CPUS)
			  : twin_read_proc_stat("/proc/stat", busy, total, TWIN_MAX_CPUS)) == 0)
			twin_model_tick(m, now, busy, total, TWIN_MAX_CPUS);
		siginfo_t si;
		int sig = sigtimedwait(set, &si, &tick);
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
			return;
		if (sig == SIGCHLD) {
			pid_t p;
			int st;
			while ((p = waitpid(-1, &st, WNOHANG)) > 0)
				if (p == sshd || p == iiod)
					fprintf(stderr, "twin daemon: %s (pid %d) ended\n", p == sshd ? "sshd" : "iiod", (int)p);
		}
	}
}

int pd_twin_daemon_main(int argc, char **argv)
{
	struct daemon_args a;
	struct twin_paths tp;
	pd_err e = {0};
	if (parse_args(argc, argv, &a) != 0) {
		fprintf(stderr, "usage: powerdag twin _daemon --state DIR --netns NAME --addr A --port P [--ready-fd N]\n");
		return PD_EXIT_USAGE;
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM), sigaddset(&set, SIGINT), sigaddset(&set, SIGHUP), sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (twin_paths_init(&tp, a.state, &e) != 0 || enter_namespaces(a.netns, &e) != 0) {
		report(a.ready_fd, "error %s\n", e.msg);
		return PD_EXIT_ENV;
	}
	/* sshd's privilege-separation directory. Created on the host when missing, as Debian's ssh
	 * service does at start (an empty root-owned directory). The board's /run must stay the host's
	 * and writable: the farm's hold markers (/run/powerdag-hold) and the agents' cpuset lock, shared
	 * by every twin of this machine, live there. Only a host whose /run refuses the mkdir gets a
	 * read-only shadow of /run with the directory in it (and then no markers or lock files). */
	if (mkdir("/run/sshd", 0755) != 0 && errno != EEXIST) {
		struct twin_overlay o = {"sshd", tp.empty};
		if (twin_shadow_dir("/run", &o, 1, &e) != 0) {
			report(a.ready_fd, "error %s\n", e.msg);
			return PD_EXIT_ENV;
		}
	}
	pd_diags d;
	pd_diags_init(&d);
	pd_platform *p = pd_platform_load_file(tp.platform, &d);
	if (!p)
		pd_diags_to_err(&d, &e);
	pd_diags_free(&d);
	twin_model *m = p ? twin_model_new(p, "/lib/firmware", &e) : NULL;
	twin_fs *fs = m ? twin_fs_start(m, tp.fsroot, &e) : NULL;
	pid_t sshd = -1, iiod = -1;
	bool own_kernel = strcmp(a.netns, "-") == 0; /* the VM twin's guest */
	if (!fs || mount_board(&tp, own_kernel, &e) != 0 || mount_cpu_links(&tp, p, &e) != 0 ||
	    start_servers(&tp, &a, &sshd, &iiod, &e) != 0) {
		report(a.ready_fd, "error %s\n", e.msg);
		stop_child(sshd), stop_child(iiod);
		twin_fs_stop(fs);
		return PD_EXIT_ENV;
	}
	/* sshd has not accepted a session yet (the starter connects only after "ok"), so every session
	 * and agent is born inside the board's cgroup */
	char acct[400];
	bool have_acct = twin_acct_dir(a.netns, acct, sizeof(acct)) == 0 && twin_acct_join(acct, sshd) == 0;
	if (have_acct && !own_kernel && mount_proc_stat(&tp, m, acct, &e) != 0) {
		report(a.ready_fd, "error %s\n", e.msg);
		stop_child(sshd), stop_child(iiod);
		twin_fs_stop(fs);
		return PD_EXIT_ENV;
	}
	report(a.ready_fd, "ok %d %d\n", (int)sshd, (int)iiod);
	fprintf(stderr, "twin daemon: up (sshd %d, iiod %d), board CPU time from %s%s\n", (int)sshd, (int)iiod,
		have_acct ? acct : "/proc/stat (no cpuacct v1 hierarchy: all host activity counts)",
		have_acct && !own_kernel ? ", served as the board's /proc/stat" : "");
	serve(m, &set, sshd, iiod, have_acct ? acct : NULL);
	stop_child(sshd), stop_child(iiod);
	twin_fs_stop(fs);
	fprintf(stderr, "twin daemon: down\n");
	return 0; /* the model stays allocated: a FUSE worker may still be inside an accelerator run */
}
