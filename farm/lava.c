/* SPDX-License-Identifier: MIT */
/*
 * LAVA's API through lavacli (Debian's lavacli 1.2, XML-RPC). Why lavacli and not our own client:
 * libcurl is not a dependency, XML-RPC over a hand-made HTTP client would be a second parser to
 * secure, and lavacli is the client LAVA documents and maintains. It is started with an argument
 * vector (execvp, no shell); the token goes into a private configuration file (a 0700 directory made
 * with mkdtemp, named by XDG_CONFIG_HOME in the child's environment only), never on a command line
 * where `ps` would show it. Answers are read with the YAML loader (`--yaml`).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "farm/farm_impl.h"

#define LAVA_OUT_MAX (4u << 20)

static int make_config(pd_farm_lab *l, pd_err *e)
{
	if (l->cfgdir[0])
		return 0;
	char tmpl[] = "/tmp/pdfarm-lavacli-XXXXXX";
	if (!mkdtemp(tmpl))
		return pd_err_set(e, PD_EXIT_ENV, "lavacli configuration: %s", strerror(errno));
	snprintf(l->cfgdir, sizeof(l->cfgdir), "%s", tmpl);
	pd_buf b, uri;
	pd_buf_init(&b);
	pd_buf_init(&uri);
	size_t n = strlen(l->url);
	pd_buf_printf(&uri, "%s%sRPC2", l->url, n && l->url[n - 1] == '/' ? "" : "/");
	pd_yemit *y = pd_yemit_new(&b);
	pd_yemit_map_begin(y, false);
	pd_yemit_key(y, "powerdag");
	pd_yemit_map_begin(y, false);
	pd_yemit_kv_str(y, "uri", uri.data);
	pd_yemit_kv_str(y, "username", l->user);
	pd_yemit_kv_str(y, "token", l->token);
	pd_yemit_map_end(y);
	pd_yemit_map_end(y);
	int rc = pd_yemit_finish(y, e);
	pd_buf_free(&uri);
	if (rc == 0) {
		int dfd = open(l->cfgdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		rc = dfd < 0 ? pd_err_set(e, PD_EXIT_ENV, "%s: %s", l->cfgdir, strerror(errno))
			     : pd_write_file_at(dfd, "lavacli.yaml", b.data, b.len, e);
		if (dfd >= 0) {
			fchmodat(dfd, "lavacli.yaml", 0600, 0);
			close(dfd);
		}
	}
	memset(b.data, 0, b.len);
	pd_buf_free(&b);
	return rc ? PD_EXIT_ENV : 0;
}

static void first_line(const char *s, char *out, size_t n)
{
	while (*s == '\n' || *s == ' ')
		s++;
	size_t k = strcspn(s, "\n");
	if (k >= n)
		k = n - 1;
	memcpy(out, s, k);
	out[k] = 0;
}

int farm_lava(pd_farm_lab *l, const char *const *args, pd_buf *out, pd_err *e)
{
	if (make_config(l, e))
		return PD_EXIT_ENV;
	const char *argv[32];
	size_t k = 0;
	argv[k++] = "lavacli";
	argv[k++] = "-i";
	argv[k++] = "powerdag";
	for (size_t i = 0; args[i] && k < 31; i++)
		argv[k++] = args[i];
	argv[k] = NULL;
	char errpath[128];
	snprintf(errpath, sizeof(errpath), "%s/stderr", l->cfgdir);
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return pd_err_set(e, PD_EXIT_ENV, "pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return pd_err_set(e, PD_EXIT_ENV, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int ef = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
		int nul = open("/dev/null", O_RDONLY);
		if (ef < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(p[1], 1) < 0 || dup2(ef, 2) < 0)
			_exit(127);
		setenv("XDG_CONFIG_HOME", l->cfgdir, 1);
		execvp(argv[0], (char *const *)argv);
		dprintf(2, "cannot run lavacli: %s (install Debian's lavacli)\n", strerror(errno));
		_exit(127);
	}
	close(p[1]);
	char buf[8192];
	ssize_t r;
	bool over = false;
	while ((r = read(p[0], buf, sizeof(buf))) > 0 || (r < 0 && errno == EINTR))
		if (r > 0 && !over) {
			if (out->len + (size_t)r > LAVA_OUT_MAX)
				over = true;
			else
				pd_buf_append(out, buf, (size_t)r);
		}
	close(p[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || over) {
		char *err = NULL;
		size_t n = 0;
		pd_err ig = {0};
		char line[300] = "";
		if (pd_read_file(errpath, &err, &n, 65536, &ig) == 0)
			first_line(err, line, sizeof(line));
		if (!line[0])
			first_line(out->data ? out->data : "", line, sizeof(line));
		free(err);
		unlink(errpath);
		return pd_err_set(e, PD_EXIT_ENV, "lavacli %s %s: %s", args[0], args[1] ? args[1] : "",
				  over ? "answer too long" : line[0] ? line : "failed");
	}
	unlink(errpath);
	return 0;
}

int farm_lava_submit(pd_farm_lab *l, const char *def_path, long *job_id, pd_err *e)
{
	const char *args[] = {"jobs", "submit", def_path, NULL};
	pd_buf o;
	pd_buf_init(&o);
	int rc = farm_lava(l, args, &o, e);
	if (rc == 0) {
		char *end = NULL;
		long id = o.data ? strtol(o.data, &end, 10) : 0;
		if (id <= 0 || !end || (*end && *end != '\n'))
			rc = pd_err_set(e, PD_EXIT_ENV, "lavacli jobs submit %s: no job id in its answer (%.100s)", def_path,
					o.data ? o.data : "");
		else
			*job_id = id;
	}
	pd_buf_free(&o);
	return rc;
}

static void copy_field(const pd_ynode *m, const char *key, char *out, size_t n)
{
	const pd_ynode *v = pd_ymap_get(m, key);
	out[0] = 0;
	if (v && v->kind == PD_Y_SCALAR && v->str && strcmp(v->str, "null"))
		snprintf(out, n, "%s", v->str);
}

int farm_lava_show(pd_farm_lab *l, long job_id, struct farm_job_state *s, pd_err *e)
{
	char id[32];
	snprintf(id, sizeof(id), "%ld", job_id);
	const char *args[] = {"jobs", "show", id, "--yaml", NULL};
	pd_buf o;
	pd_buf_init(&o);
	int rc = farm_lava(l, args, &o, e);
	if (rc == 0) {
		pd_ydoc doc = {0};
		pd_diags d;
		pd_diags_init(&d);
		if (pd_yaml_load(&doc, "lavacli jobs show", o.data ? o.data : "", o.len, &d) || !doc.root ||
		    doc.root->kind != PD_Y_MAP) {
			rc = pd_err_set(e, PD_EXIT_ENV, "lavacli jobs show %ld: not a YAML mapping", job_id);
		} else {
			copy_field(doc.root, "state", s->state, sizeof(s->state));
			copy_field(doc.root, "health", s->health, sizeof(s->health));
			copy_field(doc.root, "device", s->device, sizeof(s->device));
			copy_field(doc.root, "failure_comment", s->failure, sizeof(s->failure));
			if (s->device[0] && !farm_name_ok(s->device))
				s->device[0] = 0;
		}
		pd_diags_free(&d);
		pd_yaml_free(&doc);
	}
	pd_buf_free(&o);
	return rc;
}

int farm_lava_cancel(pd_farm_lab *l, long job_id, pd_err *e)
{
	char id[32];
	snprintf(id, sizeof(id), "%ld", job_id);
	const char *args[] = {"jobs", "cancel", id, NULL};
	pd_buf o;
	pd_buf_init(&o);
	int rc = farm_lava(l, args, &o, e);
	pd_buf_free(&o);
	return rc;
}

int farm_lava_log(pd_farm_lab *l, long job_id, int dirfd, const char *name, pd_err *e)
{
	char id[32];
	snprintf(id, sizeof(id), "%ld", job_id);
	const char *args[] = {"jobs", "logs", id, NULL};
	pd_buf o;
	pd_buf_init(&o);
	int rc = farm_lava(l, args, &o, e);
	if (rc == 0)
		rc = pd_write_file_at(dirfd, name, o.data ? o.data : "", o.len, e);
	pd_buf_free(&o);
	return rc;
}

int farm_job_state(pd_farm_lab *l, long job_id, struct farm_job_state *s, pd_err *e)
{
	memset(s, 0, sizeof(*s));
	if (!strncmp(l->url, "http://", 7))
		return farm_rest_show(l, job_id, s, e);
	return farm_lava_show(l, job_id, s, e);
}
