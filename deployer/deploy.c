/* SPDX-License-Identifier: MIT */
/*
 * deploy.c - the `powerdag deploy` sequence (docs/DEPLOY.md):
 *
 *   read plan → connect → pre-flight → snapshot → find agent → apply → upload → start agent →
 *   stream run.pdlog → stop → fetch → restore → deploy.json
 *
 * Restore runs on every path once apply has started: success, a failed step, Ctrl-C (the caller's
 * handler only sets *interrupted; the loops here look at it), a dropped SSH connection (reconnect,
 * then restore), an agent that crashed or was refused admission. The run log is streamed during the
 * run by reading the remote file at growing offsets, so what was streamed before a drop is kept and
 * the rest is read after reconnecting.
 *
 * The board's states along pd_deploy_run(), and which exit path restores what:
 *
 *                 arguments, plan, URI checked; RUNDIR made     (a failure: exit 2, nothing written
 *                              |                                 but what RUNDIR already holds)
 *                              v
 *   UNTOUCHED --connect, probe, find+upload agent, pre-flight, snapshot--> (a failure: remote work
 *      |                                                                   dir removed; restored =
 *      | pd_deploy_board_apply() (records every change before making it)          state_equal = true)
 *      v
 *   CONFIGURED --run_agent(): start, stream run.pdlog, stop, fetch--+
 *      |  (a failed apply step is CONFIGURED with a partial record)  |
 *      +<------------------------------------------------------------+
 *      | do_restore(): reconnect (3 tries), undo the record in reverse, read the state back
 *      v
 *   RESTORED (state == snapshot: state_equal)  or  LEFT CHANGED (exit 3, listed in deploy.json)
 *
 * Invariant: once pd_deploy_board_apply() has been called, do_restore() runs exactly once, whatever the
 * run did (Ctrl-C, SSH drop, agent crash); deploy.json is written on every path past RUNDIR.
 */
#include "deployer/board_impl.h"
#include "deployer/dctx_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void iso_now(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Keeps the first error: later failures (during restore) are reported next to it, not over it. */
static void keep_err(struct dctx *c, int rc, const pd_err *e)
{
	if (rc && !c->err.code) {
		c->err = *e;
		c->err.code = rc;
	}
}

/* --cpu-map: from here on the deploy holds the plan on the board's CPU ids (docs/DEPLOY.md "CPU
 * map"); pre-flight, apply, the agent and RUNDIR never see the file's ids. */
static int remap_plan(struct dctx *c, pd_err *e)
{
	pd_diags d;
	pd_diags_init(&d);
	pd_plan *q = pd_plan_remap_cpus(c->plan, c->o->cpu_map, c->o->n_cpu_map, "--cpu-map", &d);
	if (!q) {
		if (!pd_diags_to_err(&d, e))
			pd_err_set(e, PD_EXIT_USAGE, "--cpu-map does not fit the plan's platform");
		e->code = PD_EXIT_USAGE;
		pd_diags_free(&d);
		return PD_EXIT_USAGE;
	}
	pd_diags_free(&d);
	const pd_platform *pf = pd_plan_platform(c->plan);
	c->given_cpus = calloc(c->o->n_cpu_map, sizeof(int));
	if (!c->given_cpus) {
		pd_plan_free(q);
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	}
	for (size_t k = 0, at = 0; k < pd_platform_island_count(pf); k++)
		for (size_t j = 0; j < pd_platform_island(pf, k)->n_cpus; j++)
			c->given_cpus[at++] = pd_platform_island(pf, k)->cpus[j];
	pd_plan_free(c->plan);
	c->plan = q;
	return 0;
}

static int load_plan(struct dctx *c, pd_err *e)
{
	pd_diags d;
	pd_diags_init(&d);
	c->plan = pd_plan_load_file(c->o->plan_path, &d);
	if (!c->plan) {
		if (c->o->log && d.n > 1) /* the first one is the error itself */
			pd_diags_print(&d, c->o->log);
		if (!pd_diags_to_err(&d, e))
			pd_err_set(e, PD_EXIT_USAGE, "%s: not a valid plan", c->o->plan_path);
		pd_diags_free(&d);
		return PD_EXIT_USAGE;
	}
	pd_diags_free(&d);
	c->given_hash = pd_plan_hash(c->plan);
	snprintf(c->plan_file, sizeof(c->plan_file), "%s", c->o->plan_path);
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", c->o->plan_path);
	snprintf(c->plan_dir, sizeof(c->plan_dir), "%s", dirname(tmp));
	return c->o->n_cpu_map ? remap_plan(c, e) : 0;
}

/* RUNDIR is created (or checked: empty, ours, not writable by others) and opened once; every file
 * in it is then created relative to that descriptor, with O_EXCL|O_NOFOLLOW or an O_EXCL temp file
 * renamed over the name, so a link planted by someone else is never followed (docs/DEPLOY.md). */
static int make_rundir(struct dctx *c, pd_err *e)
{
	const char *d = c->o->out_dir;
	if (!d)
		return pd_err_set(e, PD_EXIT_USAGE, "no RUNDIR (--out)");
	bool created;
	int rc = pd_dir_open_private(d, c->o->out_dir_ready, &c->out_fd, &created, e);
	if (rc) {
		char why[sizeof(e->msg)];
		snprintf(why, sizeof(why), "%s", e->msg);
		return pd_err_set(e, rc, "--out %s; nothing written", why);
	}
	char *text;
	size_t len;
	if (c->o->n_cpu_map) { /* the plan the board runs, on its CPU ids: what report must compare */
		pd_buf b;
		pd_buf_init(&b);
		rc = pd_plan_format(c->plan, &b, e);
		if (rc == 0)
			rc = pd_write_file_at(c->out_fd, "plan.yaml", b.data, b.len, e);
		pd_buf_free(&b);
		snprintf(c->plan_file, sizeof(c->plan_file), "%s/plan.yaml", d);
	} else if ((rc = pd_read_file(c->o->plan_path, &text, &len, 0, e)) == 0) {
		rc = pd_write_file_at(c->out_fd, "plan.yaml", text, len, e);
		free(text);
	}
	if (rc == 0 && c->o->simulate_json && pd_read_file(c->o->simulate_json, &text, &len, 0, e) == 0) {
		rc = pd_write_file_at(c->out_fd, "simulate.json", text, len, e);
		free(text);
	}
	if (rc && created) { /* nothing half-written: the directory this call made goes again */
		unlinkat(c->out_fd, "plan.yaml", 0);
		unlinkat(c->out_fd, "simulate.json", 0);
		rmdir(d);
	}
	return rc;
}

static bool plan_has_cpu_tasks(const pd_plan *p)
{
	for (size_t i = 0; i < pd_dags_task_count(pd_plan_dags(p)); i++)
		if (pd_plan_task_c(p, i)->place.kind == PD_PLACE_CPU)
			return true;
	return false;
}

static bool plan_has_plugins(const pd_plan *p)
{
	const pd_dagset *ds = pd_plan_dags(p);
	for (size_t i = 0; i < pd_dags_task_count(ds); i++) {
		const char *w = pd_dags_task(ds, i)->work;
		if (w && !strncmp(w, "plugin:", 7) && pd_plan_task_c(p, i)->place.kind == PD_PLACE_CPU)
			return true;
	}
	return false;
}

/* A pre-flight check that only the agent can make on the board (`powerdag-agent CMD PLAN`): its
 * problems (exit 3, one per line on stdout) are appended to c->problems; any other failure is one
 * problem naming what could not be checked. */
static int agent_check(struct dctx *c, const char *cmd, const char *what, pd_err *e)
{
	const char *argv[] = {c->rp.agent, cmd, c->rp.plan, NULL};
	struct pd_deploy_exec_result r;
	int rc = pd_deploy_transport_exec(c->t, argv, &r, e);
	if (rc == 0 && r.status == PD_EXIT_ENV && r.out.len)
		pd_buf_append(&c->problems, r.out.data, r.out.len);
	else if (rc == 0 && r.status != 0) { /* one line: the first of its message */
		const char *m = r.err.data ? r.err.data : "";
		pd_buf_printf(&c->problems, "the agent could not check %s (exit %d): %.*s\n", what, r.status,
			      (int)strcspn(m, "\n"), m);
	}
	pd_deploy_exec_result_free(&r);
	return rc;
}

/* The plan's plugins as the root agent will load them (`powerdag-agent check-plugins`,
 * agents/plugin_check.c: path rules, then dlopen + dlsym): the deployer cannot judge a board path
 * from here. Other processes' SCHED_DEADLINE threads that may run on the plan's CPUs (`powerdag-agent
 * check-foreign`, agents/foreign.c): their reservations would share the CPUs with the plan's, outside
 * its analysis (docs/MODEL.md); the agent refuses to start next to them anyway, asked here the board
 * is not even touched. */
static int agent_checks(struct dctx *c, pd_err *e)
{
	int rc = plan_has_plugins(c->plan) ? agent_check(c, "check-plugins", "the plan's plugins", e) : 0;
	if (!rc && plan_has_cpu_tasks(c->plan))
		rc = agent_check(c, "check-foreign", "for other SCHED_DEADLINE threads", e);
	return rc;
}

static int do_preflight(struct dctx *c, pd_err *e)
{
	int rc = fault_at_step(c, "preflight", e);
	if (rc)
		return rc;
	size_t before = c->problems.len;
	rc = pd_deploy_board_preflight(c->b, c->plan, c->plan_dir, &c->problems, e);
	if (rc && c->problems.len == before)
		return rc; /* the transport failed: not a list of problems */
	rc = agent_checks(c, e);
	if (rc)
		return rc;
	if (c->problems.len == before)
		return 0;
	size_t lines = 0;
	for (size_t i = before; i < c->problems.len; i++)
		lines += c->problems.data[i] == '\n';
	if (c->o->log)
		pd_esc_fputs(c->problems.data + before, c->o->log);
	return pd_err_set(e, PD_EXIT_ENV, "pre-flight found %zu problem(s) on %s; the board was not touched", lines,
			  pd_deploy_transport_uri(c->t));
}

static int do_snapshot(struct dctx *c, pd_err *e)
{
	int rc = fault_at_step(c, "snapshot", e);
	return rc ? rc : pd_deploy_board_state(c->b, c->plan, &c->state_before, e);
}

/* The kernel-wide values of the snapshot: boards that share one kernel (namespace twins on disjoint
 * CPUs, twin --host-cpus) deploy at once, and each deploy restores only what it changed itself, so
 * the first one to end can find another's change there (twin/hostguard.c). */
static bool kernel_wide(const struct dctx *c, const char *path, size_t n)
{
	static const char *const fixed[] = {"/proc/sys/kernel/sched_rt_runtime_us", "/sys/fs/cgroup/cpu/cpu.rt_runtime_us"};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (n == strlen(fixed[i]) && !memcmp(path, fixed[i], n))
			return true;
	/* the cpuset root's own files (v1, v2) */
	static const char *const root_files[] = {"/cpuset.sched_load_balance", "/cgroup.subtree_control"};
	const char *root = c->b ? pd_deploy_board_info(c->b)->cgroup_root : "";
	size_t rl = strlen(root);
	for (size_t i = 0; rl && i < sizeof(root_files) / sizeof(root_files[0]); i++)
		if (n == rl + strlen(root_files[i]) && !memcmp(path, root, rl) && !memcmp(path + rl, root_files[i], n - rl))
			return true;
	return false;
}

static bool we_changed(const json_t *changes, const char *path, size_t n)
{
	size_t i;
	const json_t *ch;
	json_array_foreach(changes, i, ch) {
		const char *p = json_string_value(json_object_get(ch, "path"));
		if (p && strlen(p) == n && !memcmp(p, path, n))
			return true;
	}
	return false;
}

/* The snapshot after the restore against the one before, line by line ("path=value"). A kernel-wide
 * value that differs although this deploy never changed it was changed by someone else meanwhile:
 * listed in c->meanwhile, not counted as a failed restore. Any other difference is. */
static bool state_compare(struct dctx *c, const char *before, const char *after)
{
	while (*before || *after) {
		const char *nb = strchr(before, '\n'), *na = strchr(after, '\n');
		size_t lb = nb ? (size_t)(nb - before) : strlen(before), la = na ? (size_t)(na - after) : strlen(after);
		if (lb != la || memcmp(before, after, lb)) {
			const char *eq = memchr(before, '=', lb);
			size_t pn = eq ? (size_t)(eq - before) : lb;
			if (!eq || la <= pn || memcmp(after, before, pn + 1) || !kernel_wide(c, before, pn) ||
			    we_changed(c->changes, before, pn))
				return false;
			pd_buf_printf(&c->meanwhile, "%.*s (was %.*s)\n", (int)la, after, (int)(lb - pn - 1), eq + 1);
		}
		before += lb + (nb != NULL);
		after += la + (na != NULL);
	}
	return true;
}

/* Restore with reconnection; the board state is read back and compared with the snapshot. */
static void do_restore(struct dctx *c)
{
	pd_err e = {0};
	double t0 = dctx_now_s();
	if (c->o->no_restore) {
		dctx_log(c, "--no-restore: the board keeps the plan's configuration");
		c->r->restored = false;
		return;
	}
	for (int attempt = 0; attempt < 3; attempt++) {
		/* without a connection the restore still runs: every entry then fails and is listed */
		bool unreachable = dctx_reconnect(c) != 0;
		c->left.len = 0;
		if (pd_deploy_board_restore(c->b, &c->left, &e) == 0)
			break;
		if (unreachable || !pd_deploy_transport_lost(c->t))
			break; /* unreachable, or a refusal rather than a drop: retrying will not help */
	}
	c->restore_rc = pd_deploy_board_pending(c->b) ? PD_EXIT_ENV : 0;
	if (c->restore_rc) {
		if (!c->left.len)
			pd_buf_printf(&c->left, "%zu change(s) not restored: %s\n", pd_deploy_board_pending(c->b), e.msg);
		dctx_log(c, "RESTORE INCOMPLETE - left changed on the board:\n%s", c->left.data);
	} else if (c->state_before.len) {
		pd_buf after;
		pd_buf_init(&after);
		pd_err se = {0};
		if (pd_deploy_board_state(c->b, c->plan, &after, &se) == 0) {
			c->state_equal = state_compare(c, c->state_before.data, after.data);
			if (!c->state_equal)
				dctx_log(c, "warning: board state after restore differs from the snapshot");
			else if (c->meanwhile.len)
				dctx_log(c, "note: kernel-wide values changed during the run by someone else (another "
					    "deploy on this kernel?), left as they are:\n%s", c->meanwhile.data);
		}
		pd_buf_free(&after);
	}
	c->r->restored = c->restore_rc == 0;
	c->restore_s = dctx_now_s() - t0;
}

static json_t *lines_json(const char *text)
{
	json_t *a = json_array();
	if (!text)
		return a;
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n)
			json_array_append_new(a, json_stringn(p, n));
		p += n + (nl ? 1 : 0);
	}
	return a;
}

static json_t *record_json(const pd_deploy_board *b)
{
	pd_buf t;
	pd_buf_init(&t);
	pd_deploy_board_record_text(b, &t);
	json_t *a = json_array();
	char *save = NULL;
	for (char *line = t.data ? strtok_r(t.data, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		char *f[4] = {0};
		f[0] = line;
		for (int i = 1; i < 4 && f[i - 1]; i++) {
			char *tab = strchr(f[i - 1], '\t');
			f[i] = tab ? (*tab = '\0', tab + 1) : NULL;
		}
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:s}", "kind", f[0], "path", f[1] ? f[1] : "",
						   "old", f[2] ? f[2] : "", "new", f[3] ? f[3] : ""));
	}
	pd_buf_free(&t);
	return a;
}

/* deploy.json "cpu_map": null, or the plan file's CPU ids, the board's and the given plan's hash
 * (plan_hash is then the hash of the remapped plan, the one in RUNDIR and the run log). */
static json_t *cpu_map_json(const struct dctx *c)
{
	if (!c->o->n_cpu_map || !c->plan)
		return json_null();
	json_t *m = json_object(), *from = json_array(), *to = json_array();
	for (size_t i = 0; i < c->o->n_cpu_map; i++)
		json_array_append_new(to, json_integer(c->o->cpu_map[i]));
	for (size_t i = 0; i < c->o->n_cpu_map; i++)
		json_array_append_new(from, json_integer(c->given_cpus[i]));
	json_object_set_new(m, "plan_cpus", from);
	json_object_set_new(m, "board_cpus", to);
	json_object_set_new(m, "plan_hash", json_sprintf("%016llx", (unsigned long long)c->given_hash));
	return m;
}

static int write_meta(struct dctx *c, pd_err *e)
{
	const struct pd_deploy_board_info *in = c->b ? pd_deploy_board_info(c->b) : NULL;
	char end[32];
	iso_now(end, sizeof(end));
	json_t *j = json_object();
	json_object_set_new(j, "board", json_string(c->o->board_uri));
	json_object_set_new(j, "transport", json_string(c->t ? (pd_deploy_transport_is_local(c->t) ? "local" : "ssh") : "none"));
	json_object_set_new(j, "kernel", in && in->kernel[0] ? json_string(in->kernel) : json_null());
	json_object_set_new(j, "arch", in && in->arch[0] ? json_string(in->arch) : json_null());
	json_object_set_new(j, "plan", json_string(c->o->plan_path));
	json_object_set_new(j, "plan_hash", json_sprintf("%016llx", (unsigned long long)(c->plan ? pd_plan_hash(c->plan) : 0)));
	json_object_set_new(j, "cpu_map", cpu_map_json(c));
	json_object_set_new(j, "start", json_string(c->start_iso));
	json_object_set_new(j, "end", json_string(end));
	json_object_set_new(j, "duration_s", json_real((double)c->duration_ns / 1e9));
	json_object_set_new(j, "agent", c->agent[0] ? json_string(c->agent) : json_null());
	json_object_set_new(j, "agent_status", json_integer(c->r->agent_status));
	json_object_set_new(j, "remote_dir", c->remote_dir[0] ? json_string(c->remote_dir) : json_null());
	json_object_set_new(j, "cgroup_root", in && in->cgroup_dir[0] ? json_string(in->cgroup_dir) : json_null());
	/* how the exclusive CPU sets were made: v1 cpu_exclusive sets or v2 partitions (cpuset.cpus.partition) */
	json_object_set_new(j, "cgroup_version", in && in->cgroup_version ? json_integer(in->cgroup_version) : json_null());
	json_object_set_new(j, "cpusets",
			    !in || !in->cgroup_dir[0] ? json_null()
			    : json_string(in->cgroup_version == 2 ? "v2 partitions (cpuset.cpus.partition = root)"
								  : "v1 cpu_exclusive"));
	json_object_set_new(j, "fair_server", in && c->b ? json_boolean(in->fair_server) : json_null());
	json_object_set_new(j, "result", json_string(c->err.code ? "error" : "ok"));
	json_object_set_new(j, "exit_code", json_integer(c->err.code ? c->err.code : c->restore_rc));
	json_object_set_new(j, "error", c->err.code ? json_string(c->err.msg) : json_null());
	json_object_set_new(j, "preflight_problems", lines_json(c->problems.data));
	json_object_set_new(j, "log_bytes", json_integer((json_int_t)c->r->log_bytes));
	json_object_set_new(j, "reconnects", json_integer(c->r->reconnects));
	json_object_set_new(j, "interrupted", json_boolean(dctx_interrupted(c)));
	json_object_set_new(j, "setup_s", json_real(c->r->setup_s));
	json_object_set_new(j, "teardown_s", json_real(c->r->teardown_s));
	json_t *rs = json_object();
	json_object_set_new(rs, "requested", json_boolean(!c->o->no_restore));
	json_object_set_new(rs, "done", json_boolean(c->r->restored));
	json_object_set_new(rs, "state_equal", json_boolean(c->state_equal));
	json_object_set_new(rs, "left_changed", lines_json(c->left.data));
	json_object_set_new(rs, "changed_meanwhile", lines_json(c->meanwhile.data));
	json_object_set_new(rs, "seconds", json_real(c->restore_s));
	json_object_set_new(j, "restore", rs);
	json_object_set_new(j, "changes", c->changes ? c->changes : json_array());
	c->changes = NULL;
	json_object_set_new(j, "fault", c->fault.step[0] ? json_sprintf("%s:%s", c->fault.step, c->fault.kind) : json_null());
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(j);
	pd_buf b;
	pd_buf_init(&b);
	pd_buf_printf(&b, "%s\n", text);
	free(text);
	int rc = pd_write_file_at(c->out_fd, "deploy.json", b.data, b.len, e);
	pd_buf_free(&b);
	return rc;
}

/* Everything between "board touched" and "agent stopped"; errors land in c->err. */
static void configure_and_run(struct dctx *c)
{
	pd_err e = {0};
	int rc = pd_deploy_board_apply(c->b, c->plan, c->plan_dir, &e);
	/* the record is what apply changed, whether it completed or not */
	c->changes = record_json(c->b);
	keep_err(c, rc, &e);
	if (rc)
		return;
	dctx_log(c, "board configured (%zu change(s) recorded)", pd_deploy_board_pending(c->b));
	rc = run_agent(c, &e);
	keep_err(c, rc, &e);
}

int pd_deploy_run(const struct pd_deploy_opts *o, struct pd_deploy_result *r, pd_err *e)
{
	struct dctx c = {.o = o, .r = r, .reconnect_s = 30, .out_fd = -1};
	memset(r, 0, sizeof(*r));
	r->agent_status = -1;
	c.duration_ns = o->duration_ns > 0 ? o->duration_ns : 10 * PD_NS_PER_S;
	pd_buf_init(&c.problems);
	pd_buf_init(&c.state_before);
	pd_buf_init(&c.left);
	pd_buf_init(&c.meanwhile);
	iso_now(c.start_iso, sizeof(c.start_iso));
	c.t_start = dctx_now_s();
	int rc = pd_deploy_fault_parse(o->fault, &c.fault, e);
	if (!rc)
		rc = load_plan(&c, e);
	if (!rc) /* every argument is checked before the first write (RUNDIR) */
		rc = pd_deploy_transport_check_uri(o->board_uri, e);
	if (!rc)
		rc = make_rundir(&c, e);
	if (rc) /* nothing touched, nothing to record */
		goto out;
	rc = pd_deploy_transport_open(o->board_uri, &o->tp, &c.t, e);
	if (!rc) {
		c.b = pd_deploy_board_new(c.t, &o->board);
		pd_deploy_board_set_hooks(c.b, &c.fault, o->interrupted);
		dctx_log(&c, "connected to %s", o->board_uri);
		rc = board_probe(c.b, e);
	}
	/* the agent goes into the work directory first: pre-flight asks it about the plan's plugins */
	if (!rc) {
		rc = pd_deploy_find_agent(o->agent_path, o->self_exe, pd_deploy_board_info(c.b)->arch, c.agent, sizeof(c.agent), e);
		if (!rc)
			dctx_log(&c, "agent %s for %s", c.agent, pd_deploy_board_info(c.b)->arch);
	}
	if (!rc)
		rc = run_upload(&c, e);
	if (!rc)
		rc = do_preflight(&c, e);
	if (!rc)
		rc = do_snapshot(&c, e);
	keep_err(&c, rc, e);
	if (rc) { /* failed before apply: the board was not touched */
		r->restored = true;
		c.state_equal = true;
	} else {
		configure_and_run(&c);
		if (!r->setup_s)
			r->setup_s = dctx_now_s() - c.t_start;
		double t1 = dctx_now_s();
		do_restore(&c);
		r->teardown_s = c.stop_s + (dctx_now_s() - t1);
	}
	if (c.t) /* the one removal of the work directory on a path that did not reach or finish the run */
		run_cleanup_remote(&c);
	if (c.b && !c.changes)
		c.changes = json_array();
	pd_err me = {0};
	if (write_meta(&c, &me) && !c.err.code)
		keep_err(&c, me.code, &me);
	rc = c.err.code ? c.err.code : c.restore_rc;
	if (c.err.code)
		*e = c.err;
	else if (c.restore_rc)
		pd_err_set(e, PD_EXIT_ENV, "the run finished but the board could not be fully restored:\n%s",
			   c.left.data);
	if (c.err.code && c.restore_rc) /* both: say both */
		snprintf(e->msg + strlen(e->msg), sizeof(e->msg) - strlen(e->msg),
			 "; and the board could not be fully restored (see deploy.json restore.left_changed)");
out:
	if (c.out_fd >= 0)
		close(c.out_fd);
	json_decref(c.changes);
	pd_deploy_board_free(c.b);
	pd_deploy_transport_close(c.t);
	pd_plan_free(c.plan);
	free(c.given_cpus);
	pd_buf_free(&c.problems);
	pd_buf_free(&c.state_before);
	pd_buf_free(&c.left);
	pd_buf_free(&c.meanwhile);
	return rc;
}
