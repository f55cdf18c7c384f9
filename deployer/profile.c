/* SPDX-License-Identifier: MIT */
/*
 * profile.c - `powerdag profile`: measure a board and write a fitted platform (docs/PROFILE.md).
 *
 *   read NOMINAL, check -o → connect → probe, pre-flight (root) → snapshot → find + upload the agent →
 *   plan the steps (what the board can do; the rest skipped with the reason) → per step: pin the
 *   OPP (recorded) and run `powerdag-agent measure ...` → restore → fit → write FITTED atomically.
 *
 * The same transport, board record and restore as `deploy` (pd_deploy_board): every frequency written is
 * recorded first and put back on every exit path once the board was touched, Ctrl-C included (the
 * caller's handler only sets *interrupted; it is looked at between steps). FITTED is written only
 * when every planned step succeeded and the board was restored: nothing is half-written.
 *
 * Nothing here reads what a board twin emulates (its platform file): the board is known only
 * through its files, its rails and the agent's measurements, as a real board would be.
 */
#include "deployer/pd_deployer.h"
#include "deployer/profile_impl.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void profile_log(struct prof *c, const char *fmt, ...)
{
	if (!c->o->log)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(c->o->log, "profile: ");
	vfprintf(c->o->log, fmt, ap);
	fputc('\n', c->o->log);
	va_end(ap);
	fflush(c->o->log);
}

static bool interrupted(const struct prof *c) { return c->o->interrupted && *c->o->interrupted; }

/* ---------------------------------------------------------------- input checks (nothing touched) */

static int load_nominal(struct prof *c, pd_err *e)
{
	pd_diags d;
	pd_diags_init(&d);
	c->nom = pd_platform_load_file(c->o->platform_path, &d);
	if (c->nom)
		c->fit = pd_platform_load_file(c->o->platform_path, &d);
	int rc = 0;
	if (!c->nom || !c->fit) {
		if (c->o->log && d.n > 1)
			pd_diags_print(&d, c->o->log);
		if (!pd_diags_to_err(&d, e))
			pd_err_set(e, PD_EXIT_USAGE, "%s: not a valid platform", c->o->platform_path);
		e->code = PD_EXIT_USAGE;
		rc = PD_EXIT_USAGE;
	}
	pd_diags_free(&d);
	return rc;
}

/* -o must be a file we can create atomically: its directory exists and is writable. */
static int check_output(const char *path, pd_err *e)
{
	struct stat st;
	if (!path || !*path)
		return pd_err_set(e, PD_EXIT_USAGE, "-o FITTED is required");
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return pd_err_set(e, PD_EXIT_USAGE, "-o %s: is a directory", path);
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return pd_err_set(e, PD_EXIT_USAGE, "-o %s: directory %s does not exist", path, dir);
	if (access(dir, W_OK) != 0)
		return pd_err_set(e, PD_EXIT_USAGE, "-o %s: directory %s is not writable: %s", path, dir, strerror(errno));
	return 0;
}

/* ---------------------------------------------------------------- board side */

/* Host name and kernel version, then (optional: a board without them still profiles) the load
 * average and the online CPUs. A fixed command: nothing from a file goes into it. */
static int board_identity(struct prof *c, pd_err *e)
{
	const char *argv[] = {"sh", "-c", "uname -n && uname -v && { cat /proc/loadavg && nproc || true; } 2>/dev/null",
			      NULL};
	struct pd_deploy_exec_result r;
	c->load1 = -1;
	c->cpus_online = -1;
	int rc = pd_deploy_transport_exec(c->t, argv, &r, e);
	if (rc == 0 && r.status == 0 && r.out.data) {
		char *save = NULL, *l1 = strtok_r(r.out.data, "\n", &save), *l2 = strtok_r(NULL, "\n", &save);
		char *l3 = strtok_r(NULL, "\n", &save), *l4 = strtok_r(NULL, "\n", &save);
		snprintf(c->hostname, sizeof(c->hostname), "%s", l1 ? l1 : "?");
		snprintf(c->kernel_version, sizeof(c->kernel_version), "%s", l2 ? l2 : "?");
		double la;
		long n;
		char tail;
		if (l3 && sscanf(l3, "%lf", &la) == 1 && la >= 0 && la < 1e6)
			c->load1 = la;
		if (l4 && sscanf(l4, "%ld%c", &n, &tail) == 1 && n > 0 && n <= 1 << 20)
			c->cpus_online = n;
	}
	pd_deploy_exec_result_free(&r);
	return rc;
}

static int preflight(struct prof *c, pd_err *e)
{
	const struct pd_deploy_board_info *in = pd_deploy_board_info(c->b);
	if (!in->is_root)
		return pd_err_set(e, PD_EXIT_ENV, "profile needs root on the board (cpufreq writes, SCHED_DEADLINE, "
						 "cpusets); connect as root");
	if (in->cgroup_version) {
		char p[600];
		struct pd_deploy_transport_stat st;
		snprintf(p, sizeof(p), "%s/powerdag", in->cgroup_root);
		int rc = pd_deploy_transport_stat(c->t, pd_deploy_board_path(c->b, p), &st, e);
		if (rc)
			return rc;
		if (st.exists)
			return pd_err_set(e, PD_EXIT_ENV, "%s exists: a deploy is running on this board (or was killed "
							 "before it restored); measure an idle board", p);
	}
	return 0;
}

static int upload_agent(struct prof *c, pd_err *e)
{
	int rc = pd_deploy_find_agent(c->o->agent_path, c->o->self_exe, pd_deploy_board_info(c->b)->arch, c->agent, sizeof(c->agent), e);
	if (rc)
		return rc;
	snprintf(c->remote_dir, sizeof(c->remote_dir), "/tmp/powerdag-profile.%ld.%ld", (long)getpid(), (long)time(NULL));
	rc = pd_deploy_transport_mkdir(c->t, c->remote_dir, 0700, e);
	if (rc) {
		c->remote_dir[0] = '\0';
		return rc;
	}
	snprintf(c->remote_agent, sizeof(c->remote_agent), "%s/powerdag-agent", c->remote_dir);
	return pd_deploy_transport_upload(c->t, c->agent, c->remote_agent, 0755, e);
}

static void remove_workdir(struct prof *c)
{
	if (!c->remote_dir[0])
		return;
	if (pd_deploy_transport_lost(c->t)) {
		pd_err ig = {0};
		pd_deploy_transport_reconnect(c->t, &ig);
	}
	const char *argv[] = {"rm", "-rf", "--", c->remote_dir, NULL};
	struct pd_deploy_exec_result r;
	pd_err ig = {0};
	if (pd_deploy_transport_exec(c->t, argv, &r, &ig) == 0)
		pd_deploy_exec_result_free(&r);
}

/* Runs `agent measure ARGS...` on the board; its JSON object in *out. */
int profile_measure(struct prof *c, const char *const *args, json_t **out, pd_err *e)
{
	const char *argv[64];
	size_t n = 0;
	argv[n++] = c->remote_agent;
	argv[n++] = "measure";
	for (size_t i = 0; args[i] && n < 63; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	struct pd_deploy_exec_result r;
	int rc = pd_deploy_transport_exec(c->t, argv, &r, e);
	if (rc)
		return rc;
	*out = NULL;
	if (r.status == 0 && r.out.data)
		*out = json_loads(r.out.data, 0, NULL);
	if (!*out) {
		char *nl = r.err.data ? strrchr(r.err.data, '\n') : NULL;
		if (nl && !nl[1])
			*nl = '\0';
		rc = pd_err_set(e, PD_EXIT_ENV, "the agent's measurement failed (exit %d): %s", r.status,
				r.err.data && *r.err.data ? r.err.data : "no output");
	}
	pd_deploy_exec_result_free(&r);
	return rc;
}

static void do_restore(struct prof *c)
{
	pd_err e = {0};
	for (int attempt = 0; attempt < 3; attempt++) {
		if (pd_deploy_transport_lost(c->t))
			pd_deploy_transport_reconnect(c->t, &e);
		c->left.len = 0;
		if (pd_deploy_board_restore(c->b, &c->left, &e) == 0 || !pd_deploy_transport_lost(c->t))
			break;
	}
	c->restore_rc = pd_deploy_board_pending(c->b) ? PD_EXIT_ENV : 0;
	if (c->restore_rc) {
		profile_log(c, "RESTORE INCOMPLETE - left changed on the board:\n%s", c->left.data ? c->left.data : "");
		return;
	}
	pd_buf after;
	pd_buf_init(&after);
	pd_err se = {0};
	if (pd_deploy_board_state_of(c->b, c->nom, &after, &se) == 0)
		c->state_equal = after.len == c->state_before.len && !memcmp(after.data, c->state_before.data, after.len);
	pd_buf_free(&after);
	if (!c->state_equal)
		profile_log(c, "warning: board state after restore differs from the snapshot");
}

/* ---------------------------------------------------------------- the sequence */

static void keep_err(struct prof *c, int rc, const pd_err *e)
{
	if (rc && !c->err.code) {
		c->err = *e;
		c->err.code = rc;
	}
}

static void run_steps(struct prof *c)
{
	double t0 = now_s(), done_est = 0, total_est = 0;
	for (size_t i = 0; i < c->n_steps; i++)
		total_est += c->steps[i].est_s;
	for (size_t i = 0; i < c->n_steps; i++) {
		if (interrupted(c)) {
			pd_err e = {0};
			pd_err_set(&e, PD_EXIT_ENV, "interrupted before step %zu/%zu", i + 1, c->n_steps);
			keep_err(c, e.code, &e);
			return;
		}
		struct pstep *s = &c->steps[i];
		/* time left: the estimate, scaled by how fast the steps so far really went */
		double spent = now_s() - t0, scale = done_est > 0 ? spent / done_est : 1.0;
		double left = (total_est - done_est) * scale;
		profile_log(c, "step %zu/%zu: %s (about %.0f s left)", i + 1, c->n_steps, s->title, left);
		double ts = now_s();
		pd_err e = {0};
		int rc = profile_step_run(c, s, &e);
		/* a measurement disturbed by the board (a rail read failing, a late wake-up) is taken again;
		 * a lost board or Ctrl-C is not */
		for (int again = 0; rc && again < 2 && !pd_deploy_transport_lost(c->t) && !interrupted(c); again++) {
			profile_log(c, "step %zu/%zu: %s; measuring again", i + 1, c->n_steps, e.msg);
			s->retries++;
			memset(&e, 0, sizeof(e));
			rc = profile_step_run(c, s, &e);
		}
		s->seconds = now_s() - ts;
		done_est += s->est_s;
		if (rc) {
			s->failed = true;
			snprintf(s->error, sizeof(s->error), "%s", e.msg);
			profile_log(c, "step %zu/%zu failed: %s", i + 1, c->n_steps, e.msg);
			keep_err(c, rc, &e);
			if (pd_deploy_transport_lost(c->t))
				return; /* the board is gone: restore after reconnecting */
		}
	}
}

static void free_prof(struct prof *c)
{
	for (size_t i = 0; i < c->n_steps; i++)
		free(c->steps[i].title);
	free(c->steps);
	free(c->isl);
	free(c->acc);
	json_decref(c->skipped);
	json_decref(c->flags);
	json_decref(c->values);
	pd_deploy_board_free(c->b);
	pd_deploy_transport_close(c->t);
	pd_platform_free(c->nom);
	pd_platform_free(c->fit);
	pd_buf_free(&c->state_before);
	pd_buf_free(&c->left);
}

int pd_deploy_profile_run(const struct pd_deploy_profile_opts *o, char **summary_json, pd_err *e)
{
	struct prof c = {.o = o};
	pd_buf_init(&c.state_before);
	pd_buf_init(&c.left);
	c.skipped = json_array();
	c.flags = json_array();
	c.values = json_array();
	c.t_start = now_s();
	time_t wall = time(NULL);
	struct tm tm;
	gmtime_r(&wall, &tm);
	strftime(c.date, sizeof(c.date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (summary_json)
		*summary_json = NULL;
	/* 1. input: nothing touched, nothing written on a failure here */
	int rc = load_nominal(&c, e);
	if (!rc)
		rc = check_output(o->out_path, e);
	if (!rc && !o->board_uri)
		rc = pd_err_set(e, PD_EXIT_USAGE, "--board URI is required");
	if (rc) {
		free_prof(&c);
		return rc;
	}
	/* 2. the board, read only */
	rc = pd_deploy_transport_open(o->board_uri, &o->tp, &c.t, e);
	if (!rc) {
		c.b = pd_deploy_board_new(c.t, &o->board);
		rc = pd_deploy_board_state_of(c.b, c.nom, &c.state_before, e); /* probes too */
	}
	if (!rc)
		rc = board_identity(&c, e);
	if (!rc)
		rc = preflight(&c, e);
	if (!rc)
		rc = profile_plan_steps(&c, e);
	if (!rc) {
		profile_log(&c, "connected to %s (%s, kernel %s, %s): %zu step(s), about %.0f s", o->board_uri, c.hostname,
		     pd_deploy_board_info(c.b)->kernel, pd_deploy_board_info(c.b)->arch, c.n_steps, c.est_total_s);
		rc = upload_agent(&c, e);
	}
	keep_err(&c, rc, e);
	if (!rc) {
		/* 3. measure; the board is touched from here on and restored whatever happens */
		run_steps(&c);
		do_restore(&c);
	}
	remove_workdir(&c);
	if (!c.err.code && c.restore_rc)
		pd_err_set(&c.err, PD_EXIT_ENV, "the board could not be fully restored:\n%s", c.left.data ? c.left.data : "");
	else if (c.err.code && c.restore_rc)
		snprintf(c.err.msg + strlen(c.err.msg), sizeof(c.err.msg) - strlen(c.err.msg),
			 "; and the board could not be fully restored:\n%s", c.left.data ? c.left.data : "");
	c.seconds = now_s() - c.t_start;
	/* 4. fit and write, only after a complete, restored run */
	if (!c.err.code && c.n_steps) {
		pd_err we = {0};
		int wrc = profile_fit_and_write(&c, &we);
		keep_err(&c, wrc, &we);
	} else if (!c.err.code) {
		pd_err_set(&c.err, PD_EXIT_ENV, "the board allows no measurement step (see skipped); %s not written",
			   o->out_path);
	}
	if (summary_json)
		*summary_json = profile_summary_text(&c);
	rc = c.err.code;
	if (rc)
		*e = c.err;
	free_prof(&c);
	return rc;
}
