/* SPDX-License-Identifier: MIT */
/*
 * Plugin paths (docs/DEPLOY.md, "Trust model"). The agent runs as root and dlopen()s the plan's
 * plugins: a plugin is code, so whoever can replace the file, or any directory on the way to it,
 * runs code as root. The rules are those OpenSSH applies to authorized_keys (StrictModes): the file
 * and every directory above it belong to root or to us and nobody else can write them. A relative
 * path is relative to the plan's directory only; on a board that directory is the deployer's work
 * directory under /tmp, which /tmp's mode already refuses, so a deployed plan names its plugins by
 * absolute path. The check runs in `check-plugins` (the deployer's pre-flight, before the board is
 * touched) and again right before each dlopen() in `run`.
 */
#include "agents/pd_agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool has_dotdot(const char *p)
{
	for (const char *s = p; (s = strstr(s, "..")); s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
			return true;
	return false;
}

/*
 * path itself (when it is the file) and every directory above it: owner root or us, no g/o write.
 * One exception, as OpenSSH and sudo make it: a sticky directory (/tmp, mode 1777) writable by
 * others, above an entry already checked to be root's or ours, is safe: the sticky bit lets only the
 * entry's owner (or root) remove or rename it, so nobody else can swap what lies below.
 */
static int check_chain(const char *path, pd_buf *why)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	uid_t me = geteuid();
	for (bool below_checked = false;; below_checked = true) {
		struct stat st;
		/* lstat: a link is judged by its own owner (who could re-point it); its target is checked
		 * on its own resolved path by the caller. A link's mode bits mean nothing. */
		if (lstat(p[0] ? p : "/", &st) != 0)
			return pd_buf_printf(why, "%s: %s", p[0] ? p : "/", strerror(errno)), -1;
		if (st.st_uid != 0 && st.st_uid != me)
			return pd_buf_printf(why, "%s is owned by uid %u (neither root nor the agent's user)",
					     p[0] ? p : "/", (unsigned)st.st_uid), -1;
		bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && below_checked;
		if (!S_ISLNK(st.st_mode) && (st.st_mode & (S_IWGRP | S_IWOTH)) && !sticky_dir)
			return pd_buf_printf(why, "%s is writable by %s (mode %04o): anyone there could replace the "
					     "plugin", p[0] ? p : "/", st.st_mode & S_IWOTH ? "others" : "its group",
					     (unsigned)(st.st_mode & 07777)), -1;
		char *slash = strrchr(p, '/');
		if (!slash || !p[0])
			return 0;
		*slash = '\0'; /* "/usr/lib/x.so" -> "/usr/lib" -> "/usr" -> "" (the root) */
	}
}

int pd_agent_plugin_path(const char *lib, const char *dir, char *out, size_t n, pd_buf *why)
{
	if (!lib || !*lib)
		return pd_buf_printf(why, "empty library path"), -1;
	if (has_dotdot(lib))
		return pd_buf_printf(why, "a '..' component is refused (a path may not climb out of where it "
				     "points)"), -1;
	char joined[PATH_MAX], cwd[PATH_MAX];
	if (lib[0] == '/') {
		snprintf(joined, sizeof(joined), "%s", lib);
	} else {
		if (!dir && !getcwd(cwd, sizeof(cwd)))
			return pd_buf_printf(why, "cannot resolve a relative path: %s", strerror(errno)), -1;
		if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", dir ? dir : cwd, lib) >= sizeof(joined))
			return pd_buf_printf(why, "path too long"), -1;
	}
	char real[PATH_MAX];
	if (!realpath(joined, real))
		return pd_buf_printf(why, "%s: %s%s", joined, strerror(errno),
				     lib[0] != '/' ? " (a relative path is relative to the plan's directory)" : ""), -1;
	struct stat st;
	if (stat(real, &st) != 0 || !S_ISREG(st.st_mode))
		return pd_buf_printf(why, "%s is not a regular file", real), -1;
	/* the path as written, from its last entry up (a link is judged by its owner: lstat), and the
	 * file it names */
	if (check_chain(joined, why))
		return -1;
	if (check_chain(real, why))
		return -1;
	if ((size_t)snprintf(out, n, "%s", real) >= n)
		return pd_buf_printf(why, "path too long"), -1;
	return 0;
}

size_t pd_agent_check_plugins(const struct pd_agent_spec *s, pd_buf *problems)
{
	size_t np = 0;
	for (size_t i = 0; i < s->n_tasks; i++) {
		const struct pd_agent_task *t = &s->tasks[i];
		if (t->work != PD_AW_PLUGIN)
			continue;
		char real[PATH_MAX];
		pd_buf why;
		pd_buf_init(&why);
		if (pd_agent_plugin_path(t->plugin_lib, t->plugin_dir, real, sizeof(real), &why) == 0) {
			/* the file passed the rules: loading it now runs its constructors, as the run will */
			void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
			if (!h)
				pd_buf_printf(&why, "cannot load: %s", dlerror());
			else if (!dlsym(h, t->plugin_sym))
				pd_buf_printf(&why, "no symbol '%s' in %s", t->plugin_sym, real);
			if (h)
				dlclose(h);
		}
		if (why.len) {
			pd_buf_printf(problems, "task '%s/%s': plugin %s: %s\n", t->dag_name, t->name, t->plugin_lib, why.data);
			np++;
		}
		pd_buf_free(&why);
	}
	return np;
}
