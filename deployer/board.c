/* SPDX-License-Identifier: MIT */
/*
 * board.c - the pd_deploy_board handle: board paths under a root prefix, probing (kernel, arch, privilege,
 * fair server, cgroup version), the change record and its restore, and the read-only state snapshot.
 *
 * The record is the single source of truth for restore: every write apply makes goes through
 * board_set(), which reads the value first and appends (path, old, new) before writing; a created
 * directory or file is recorded before it is created. Restore walks the record backwards, so that
 * ordering constraints respected while applying (min <= max, runtime <= period, cgroup before its
 * children) are respected again while undoing.
 */
#include "deployer/board_impl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pd_deploy_cgroup_name_check(const char *name, pd_err *e)
{
	bool ok = pd_name_chars_ok(name, false) && strlen(name) <= 63 && name[0] != '.';
	/* cgroup.* and cpuset.* are the kernel's control files in the same directory */
	if (ok && (!strncmp(name, "cgroup.", 7) || !strncmp(name, "cpuset.", 7) || !strcmp(name, "tasks")))
		ok = false;
	if (!ok)
		return pd_err_set(e, PD_EXIT_USAGE,
				  "'%s': a cpuset directory name is 1..63 characters of [A-Za-z0-9._-], not starting "
				  "with '.', and not a cgroup control file's name", name);
	return 0;
}

pd_deploy_board *pd_deploy_board_new(pd_deploy_transport *t, const struct pd_deploy_board_opts *o)
{
	pd_deploy_board *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->t = t;
	const char *root = o && o->root ? o->root : "";
	if (!strcmp(root, "/"))
		root = "";
	b->root = strdup(root);
	size_t rl = strlen(b->root);
	while (rl && b->root[rl - 1] == '/')
		b->root[--rl] = '\0';
	b->plain_files = o && o->plain_files;
	snprintf(b->cgname, sizeof(b->cgname), "%s", o && o->cgroup_name ? o->cgroup_name : PD_DEPLOY_CGROUP_DEFAULT);
	return b;
}

static void rec_free(struct rec *r)
{
	free(r->path);
	free(r->old);
	free(r->newv);
}

void pd_deploy_board_free(pd_deploy_board *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n_rec; i++)
		rec_free(&b->rec[i]);
	free(b->rec);
	free(b->root);
	free(b);
}

const struct pd_deploy_board_info *pd_deploy_board_info(const pd_deploy_board *b) { return &b->info; }
size_t pd_deploy_board_pending(const pd_deploy_board *b) { return b->n_rec; }

const char *pd_deploy_board_path(pd_deploy_board *b, const char *abs)
{
	char *p = b->pathbuf[b->pathrot++ % 4];
	size_t rl = strlen(b->root), al = strlen(abs);
	/* A path that does not fit must not be cut: a prefix of it names another file. The empty path
	 * makes every transport call fail (ENOENT) instead, so nothing is touched. */
	if (rl + al >= sizeof(b->pathbuf[0])) {
		p[0] = '\0';
		return p;
	}
	memcpy(p, b->root, rl);
	memcpy(p + rl, abs, al + 1);
	return p;
}

bool board_word_in(const char *list, const char *word)
{
	size_t wl = strlen(word);
	for (const char *p = list; p && *p;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		const char *q = p;
		while (*q && !isspace((unsigned char)*q))
			q++;
		if ((size_t)(q - p) == wl && !strncmp(p, word, wl))
			return true;
		p = q;
	}
	return false;
}

size_t board_plan_cpus(const pd_plan *p, int *cpus, size_t max)
{
	size_t n = 0, nt = pd_dags_task_count(pd_plan_dags(p));
	for (size_t i = 0; i < nt; i++) {
		const struct pd_plan_task *t = pd_plan_task_c(p, i);
		if (t->place.kind != PD_PLACE_CPU)
			continue;
		size_t j = 0;
		while (j < n && cpus[j] < t->place.cpu)
			j++;
		if (j < n && cpus[j] == t->place.cpu)
			continue;
		if (n == max)
			break;
		memmove(cpus + j + 1, cpus + j, (n - j) * sizeof(int));
		cpus[j] = t->place.cpu;
		n++;
	}
	return n;
}

bool board_plan_uses_accel(const pd_plan *p, size_t a)
{
	size_t nt = pd_dags_task_count(pd_plan_dags(p));
	for (size_t i = 0; i < nt; i++) {
		const struct pd_plan_task *t = pd_plan_task_c(p, i);
		if (t->place.kind != PD_PLACE_CPU && t->place.accel == a)
			return true;
	}
	return false;
}

int board_read(pd_deploy_board *b, const char *abs, pd_buf *out, pd_err *e)
{
	int rc = pd_deploy_transport_read(b->t, pd_deploy_board_path(b, abs), out, e);
	if (rc)
		return rc;
	while (out->len && isspace((unsigned char)out->data[out->len - 1]))
		out->data[--out->len] = '\0';
	if (!out->data && pd_buf_append(out, "", 0) < 0)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	return 0;
}

int board_read_ll(pd_deploy_board *b, const char *abs, long long *v, pd_err *e)
{
	pd_buf x;
	pd_buf_init(&x);
	int rc = board_read(b, abs, &x, e);
	if (rc == 0) {
		char *end;
		*v = strtoll(x.data, &end, 0);
		if (end == x.data)
			rc = pd_err_set(e, PD_EXIT_ENV, "%s: expected a number, read '%s'", abs, x.data);
	}
	pd_buf_free(&x);
	return rc;
}

static bool kernel_has_fair_server(const char *release)
{
	int major = 0, minor = 0;
	if (sscanf(release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 12);
}

int board_fair_server(pd_deploy_board *b, int64_t *runtime_ns, int64_t *period_ns)
{
	pd_err e = {0};
	long long rt = 0, per = 0;
	if (b->info.fair_server && board_read_ll(b, "/sys/kernel/debug/sched/fair_server/cpu0/runtime", &rt, &e) == 0 &&
	    board_read_ll(b, "/sys/kernel/debug/sched/fair_server/cpu0/period", &per, &e) == 0 && rt >= 0 && per > 0) {
		*runtime_ns = rt; /* debugfs: ns (sched_fair_server_write) */
		*period_ns = per;
		return 1;
	}
	if (!b->info.fair_server && kernel_has_fair_server(b->info.kernel)) {
		*runtime_ns = BOARD_FAIR_DEFAULT_RUNTIME_NS;
		*period_ns = BOARD_FAIR_DEFAULT_PERIOD_NS;
		return 2;
	}
	return 0;
}

bool board_exists(pd_deploy_board *b, const char *abs)
{
	struct pd_deploy_transport_stat st;
	pd_err e = {0};
	return pd_deploy_transport_stat(b->t, pd_deploy_board_path(b, abs), &st, &e) == 0 && st.exists;
}

int board_record(pd_deploy_board *b, enum rec_kind k, const char *path, const char *old, size_t old_len,
		 const char *newv)
{
	if (b->n_rec == b->cap_rec) {
		size_t cap = b->cap_rec ? 2 * b->cap_rec : 32;
		struct rec *r = realloc(b->rec, cap * sizeof(*r));
		if (!r)
			return -1;
		b->rec = r;
		b->cap_rec = cap;
	}
	struct rec *r = &b->rec[b->n_rec++];
	memset(r, 0, sizeof(*r));
	r->kind = k;
	r->path = strdup(path);
	if (old) {
		r->old = malloc(old_len + 1);
		memcpy(r->old, old, old_len);
		r->old[old_len] = '\0';
		r->old_len = old_len;
	}
	r->newv = newv ? strdup(newv) : NULL;
	return 0;
}

int board_set(pd_deploy_board *b, const char *abs, const char *v, pd_err *e)
{
	pd_buf old;
	pd_buf_init(&old);
	int rc = board_read(b, abs, &old, e);
	if (rc == 0 && strcmp(old.data, v) != 0) {
		if (board_record(b, REC_VALUE, abs, old.data, old.len, v) < 0)
			rc = pd_err_set(e, PD_EXIT_ENV, "out of memory");
		else
			rc = pd_deploy_transport_write(b->t, pd_deploy_board_path(b, abs), v, strlen(v), e);
		if (rc)
			snprintf(e->msg + strlen(e->msg), sizeof(e->msg) - strlen(e->msg), " (writing '%s')", v);
	}
	pd_buf_free(&old);
	return rc;
}

int board_set_ll(pd_deploy_board *b, const char *abs, long long v, pd_err *e)
{
	char s[32];
	snprintf(s, sizeof(s), "%lld", v);
	return board_set(b, abs, s, e);
}

int board_fault(pd_deploy_board *b, const char *step, pd_err *e)
{
	if (!b->fault)
		return 0;
	return pd_deploy_fault_fire(b->fault, step, b->t, b->interrupted, e);
}

/* ---------------------------------------------------------------- probe */

int board_probe(pd_deploy_board *b, pd_err *e)
{
	if (b->probed)
		return 0;
	struct pd_deploy_board_info *in = &b->info;
	/* one round trip for the three facts (a constant script, no values in it) */
	const char *argv[] = {"sh", "-c", "uname -r && uname -m && id -u", NULL};
	struct pd_deploy_exec_result r;
	int rc = pd_deploy_transport_exec(b->t, argv, &r, e);
	if (rc == 0 && r.status != 0)
		rc = pd_err_set(e, PD_EXIT_ENV, "probing the board (uname, id) failed with %d: %s", r.status,
				r.err.data ? r.err.data : "");
	char uid[32] = "";
	if (rc == 0 && r.out.data) {
		char *save = NULL, *l1 = strtok_r(r.out.data, "\n", &save), *l2 = strtok_r(NULL, "\n", &save),
		     *l3 = strtok_r(NULL, "\n", &save);
		if (!l1 || !l2 || !l3)
			rc = pd_err_set(e, PD_EXIT_ENV, "probing the board: unexpected output");
		else {
			snprintf(in->kernel, sizeof(in->kernel), "%s", l1);
			snprintf(in->arch, sizeof(in->arch), "%s", l2);
			snprintf(uid, sizeof(uid), "%s", l3);
		}
	}
	pd_deploy_exec_result_free(&r);
	if (rc)
		return rc;
	in->is_root = strcmp(uid, "0") == 0;
	/* fair server: present and readable (lockdown makes debugfs reads fail with EPERM) */
	pd_buf x;
	pd_buf_init(&x);
	pd_err ig = {0};
	in->fair_server = board_read(b, "/sys/kernel/debug/sched/fair_server/cpu0/runtime", &x, &ig) == 0;
	x.len = 0;
	if (board_read(b, "/sys/fs/cgroup/cgroup.controllers", &x, &ig) == 0 && board_word_in(x.data, "cpuset")) {
		in->cgroup_version = 2;
		snprintf(in->cgroup_root, sizeof(in->cgroup_root), "/sys/fs/cgroup");
	} else if (board_exists(b, "/sys/fs/cgroup/cpuset/cpuset.cpus")) {
		in->cgroup_version = 1;
		snprintf(in->cgroup_root, sizeof(in->cgroup_root), "/sys/fs/cgroup/cpuset");
	}
	pd_buf_free(&x);
	b->probed = true;
	return 0;
}

/* ---------------------------------------------------------------- restore */

static int restore_mkdir(pd_deploy_board *b, const char *abs, pd_err *e)
{
	char tasks[1100];
	snprintf(tasks, sizeof(tasks), "%s/tasks", abs);
	if (!b->plain_files && b->info.cgroup_version == 1 && board_exists(b, tasks)) {
		/* a cgroup with tasks cannot be removed: move any left (a crashed agent's threads are gone
		 * already) back to the root cpuset */
		pd_buf ts;
		pd_buf_init(&ts);
		char roottasks[600];
		snprintf(roottasks, sizeof(roottasks), "%s/tasks", b->info.cgroup_root);
		if (board_read(b, tasks, &ts, e) == 0) {
			char *save = NULL;
			for (char *tok = strtok_r(ts.data, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save))
				pd_deploy_transport_write(b->t, pd_deploy_board_path(b, roottasks), tok, strlen(tok), e);
		}
		pd_buf_free(&ts);
	}
	if (b->plain_files) {
		char dir[sizeof(b->pathbuf[0])]; /* held across the listing: a copy, not the rotating scratch */
		snprintf(dir, sizeof(dir), "%s", pd_deploy_board_path(b, abs));
		char **names;
		size_t n;
		if (pd_deploy_transport_listdir(b->t, dir, &names, &n, e) == 0) {
			for (size_t i = 0; i < n; i++) {
				char f[1400];
				snprintf(f, sizeof(f), "%s/%s", dir, names[i]);
				struct pd_deploy_transport_stat st;
				if (pd_deploy_transport_stat(b->t, f, &st, e) == 0 && st.exists && !st.is_dir)
					pd_deploy_transport_unlink(b->t, f, e);
				free(names[i]);
			}
			free(names);
		}
	}
	return pd_deploy_transport_rmdir(b->t, pd_deploy_board_path(b, abs), e);
}

static int restore_one(pd_deploy_board *b, const struct rec *r, pd_err *e)
{
	switch (r->kind) {
	case REC_VALUE:
		return pd_deploy_transport_write(b->t, pd_deploy_board_path(b, r->path), r->old, r->old_len, e);
	case REC_MKDIR:
		return restore_mkdir(b, r->path, e);
	case REC_FILE_NEW: {
		struct pd_deploy_transport_stat st;
		int rc = pd_deploy_transport_stat(b->t, pd_deploy_board_path(b, r->path), &st, e);
		if (rc || !st.exists)
			return rc;
		return pd_deploy_transport_unlink(b->t, pd_deploy_board_path(b, r->path), e);
	}
	case REC_FILE_REPL:
		return pd_deploy_transport_write(b->t, pd_deploy_board_path(b, r->path), r->old, r->old_len, e);
	}
	return 0;
}

static void describe(const struct rec *r, const char *why, pd_buf *out)
{
	switch (r->kind) {
	case REC_VALUE:
		pd_buf_printf(out, "%s is '%s', was '%s' (%s)\n", r->path, r->newv ? r->newv : "?", r->old, why);
		break;
	case REC_MKDIR:
		pd_buf_printf(out, "directory %s still exists (%s)\n", r->path, why);
		break;
	case REC_FILE_NEW:
		pd_buf_printf(out, "file %s still exists (%s)\n", r->path, why);
		break;
	case REC_FILE_REPL:
		pd_buf_printf(out, "file %s holds the uploaded content, not the original (%s)\n", r->path, why);
		break;
	}
}

int pd_deploy_board_restore(pd_deploy_board *b, pd_buf *left_changed, pd_err *e)
{
	size_t kept = 0;
	struct rec *keep = b->n_rec ? calloc(b->n_rec, sizeof(*keep)) : NULL;
	pd_err first = {0};
	/* every entry is tried, newest first, even after a failure: a partial restore beats none */
	for (size_t i = b->n_rec; i-- > 0;) {
		pd_err re = {0};
		if (restore_one(b, &b->rec[i], &re) == 0) {
			rec_free(&b->rec[i]);
			continue;
		}
		if (!first.code)
			first = re;
		if (left_changed)
			describe(&b->rec[i], re.msg, left_changed);
		keep[kept++] = b->rec[i];
	}
	/* keep the failed ones in their original (oldest first) order for a retry */
	for (size_t i = 0; i < kept; i++)
		b->rec[i] = keep[kept - 1 - i];
	b->n_rec = kept;
	free(keep);
	if (kept)
		return pd_err_set(e, PD_EXIT_ENV, "restore incomplete: %zu change(s) left on the board; first: %s",
				  kept, first.msg);
	return 0;
}

void pd_deploy_board_record_text(const pd_deploy_board *b, pd_buf *out)
{
	static const char *const kinds[] = {"value", "mkdir", "file-new", "file-replaced"};
	for (size_t i = 0; i < b->n_rec; i++) {
		const struct rec *r = &b->rec[i];
		pd_buf_printf(out, "%s\t%s\t%s\t%s\n", kinds[r->kind], r->path,
			      r->kind == REC_VALUE ? r->old : "", r->newv ? r->newv : "");
	}
}

void pd_deploy_board_set_hooks(pd_deploy_board *b, struct pd_deploy_fault *f, volatile sig_atomic_t *interrupted_flag)
{
	b->fault = f;
	b->interrupted = interrupted_flag;
}
