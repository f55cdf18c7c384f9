/* SPDX-License-Identifier: MIT */
/* Processes: argv-vector commands (never a shell), detached children, /proc inspection. */
#include "twin/twin_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

bool twin_file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

int twin_run(char *const argv[], pd_buf *out, pd_err *e)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0)
		return pd_err_set(e, PD_EXIT_ENV, "pipe: %s", strerror(errno)), -1;
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]), close(fds[1]);
		return pd_err_set(e, PD_EXIT_ENV, "fork: %s", strerror(errno)), -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		dup2(nul, 0);
		dup2(fds[1], 1);
		dup2(fds[1], 2); /* stderr joins stdout: the caller quotes it in its error message */
		close_range(3, ~0U, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	char buf[4096];
	ssize_t r;
	while ((r = read(fds[0], buf, sizeof(buf))) > 0 || (r < 0 && errno == EINTR))
		if (r > 0 && out)
			pd_buf_append(out, buf, (size_t)r);
	close(fds[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return pd_err_set(e, PD_EXIT_ENV, "waitpid: %s", strerror(errno)), -1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		return pd_err_set(e, PD_EXIT_ENV, "cannot run %s", argv[0]), -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

pid_t twin_spawn(char *const argv[], const char *log, pd_err *e)
{
	pid_t pid = fork();
	if (pid < 0) {
		pd_err_set(e, PD_EXIT_ENV, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		int lg = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		dup2(nul, 0);
		dup2(lg >= 0 ? lg : nul, 1);
		dup2(lg >= 0 ? lg : nul, 2);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL); /* the daemon blocks signals for sigwait */
		close_range(3, ~0U, 0);                /* e.g. /dev/fuse stays with the daemon */
		execvp(argv[0], argv); /* PATH lookup for a bare name (ip) */
		_exit(127);
	}
	return pid;
}

unsigned long twin_mntns_of(pid_t pid)
{
	char p[64];
	struct stat st;
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	return stat(p, &st) == 0 ? (unsigned long)st.st_ino : 0;
}

int twin_kill_mntns(unsigned long mntns, int sig)
{
	if (mntns == 0 || mntns == twin_mntns_of(getpid()))
		return 0; /* never the host's namespace */
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 1 || pid == getpid())
			continue;
		if (twin_mntns_of((pid_t)pid) == mntns && kill((pid_t)pid, sig) == 0)
			n++;
	}
	closedir(d);
	return n;
}

unsigned long long twin_starttime(pid_t pid)
{
	char p[64], buf[1024];
	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return 0;
	buf[r] = 0;
	char *s = strrchr(buf, ')'); /* comm may hold spaces */
	if (!s || s[1] != ' ' || s[2] == 'Z' || s[2] == 'X')
		return 0; /* a zombie is not running any more */
	unsigned long long v = 0;
	int field = 2;
	char *save = NULL;
	for (char *t = strtok_r(s + 1, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (++field == 22) {
			v = strtoull(t, NULL, 10);
			break;
		}
	}
	return v;
}

int twin_read_proc_stat(const char *path, uint64_t *busy, uint64_t *total, size_t n)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	char line[512];
	for (size_t i = 0; i < n; i++)
		busy[i] = total[i] = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned cpu;
		unsigned long long v[10] = {0};
		if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
			continue;
		int k = sscanf(line, "cpu%u %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1], &v[2], &v[3],
			       &v[4], &v[5], &v[6], &v[7]);
		if (k < 5 || cpu >= n)
			continue;
		/* user nice system idle iowait irq softirq steal: idle+iowait are not busy */
		uint64_t idle = v[3] + v[4];
		uint64_t all = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
		busy[cpu] = all - idle;
		total[cpu] = all;
	}
	fclose(f);
	return 0;
}

/* ---------------------------------------------------------------- the board's CPU accounting */

int twin_acct_dir(const char *netns, char *buf, size_t n)
{
	if (!twin_file_exists(TWIN_CPUACCT_ROOT "/cpuacct.usage_percpu"))
		return -1;
	int k = snprintf(buf, n, "%s/powerdag-twin.%s", TWIN_CPUACCT_ROOT, netns);
	return k > 0 && (size_t)k < n ? 0 : -1;
}

int twin_acct_join(const char *dir, pid_t pid)
{
	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return -1;
	char p[600], num[32];
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int len = snprintf(num, sizeof(num), "%d", (int)pid);
	int rc = write(fd, num, (size_t)len) == len ? 0 : -1;
	close(fd);
	return rc;
}

int twin_acct_read(const char *dir, int64_t now_ns, uint64_t *busy, uint64_t *total, size_t n)
{
	if (twin_acct_read_ns(dir, "cpuacct.usage_percpu", busy, n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		total[i] = (uint64_t)now_ns; /* ns of CPU time against ns of wall time */
	return 0;
}

int twin_acct_read_ns(const char *dir, const char *file, uint64_t *v, size_t n)
{
	char p[600];
	snprintf(p, sizeof(p), "%s/%s", dir, file);
	FILE *f = fopen(p, "re");
	if (!f)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned long long x = 0;
		v[i] = fscanf(f, "%llu", &x) == 1 ? x : 0;
	}
	fclose(f);
	return 0;
}

void twin_acct_remove(const char *netns)
{
	char dir[400];
	if (twin_acct_dir(netns, dir, sizeof(dir)) != 0 || !twin_file_exists(dir))
		return;
	/* the last tasks may still be exiting after SIGKILL */
	for (int i = 0; i < 50 && rmdir(dir) != 0 && errno == EBUSY; i++)
		usleep(20000);
}
