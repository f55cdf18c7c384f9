/* SPDX-License-Identifier: MIT */
/*
 * powerdag farm collect: follow a farm directory's LAVA jobs and carry each run (docs/FARM.md).
 *
 * Per run:  submitted --LAVA runs it on a device--> reserved --the job holds the board
 *           (TOKEN.held on it) and the board's CPU group is free--> running (`powerdag deploy`
 *           child) --deploy exits; TOKEN.done = pass|fail--> released --LAVA job finished-->
 *           collected (deploy exit 0) | missing (reason)
 *
 * Invariants: at most one deploy per CPU group at a time (twins of one host share its CPUs: two
 * agents' exclusive cpusets and SCHED_DEADLINE reservations would collide) and per device; farm.json
 * is rewritten after every change; a run whose LAVA job ends before the hold, or whose deploy fails,
 * is `missing` with the reason, never dropped. The deploy is a child process (`powerdag deploy`,
 * argument vector): configuration, restore, streaming and checksums are the deployer's, and
 * a crash of one deploy cannot take the follower down.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "deployer/pd_deployer.h"
#include "farm/farm_impl.h"

struct coll {
	const struct pd_farm_opts *o;
	pd_farm_lab *l;
	struct farm_record r;
	int dfd, logs_fd;
	/* the powerdag binary, held open: a collect runs for hours, and a binary replaced meanwhile (an
	 * upgrade, a rebuild) would leave its path missing or pointing at another version; the deploys
	 * run the very file collect started from (fexecve) */
	int self_fd;
	char dir[PATH_MAX], self[PATH_MAX];
	pd_deploy_transport **t; /* per run, open while reserved or running */
	bool dirty;
};

static void say(struct coll *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct coll *c, const char *fmt, ...)
{
	if (!c->o->log)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pd_esc_fputs(msg, c->o->log);
	fputc('\n', c->o->log);
	fflush(c->o->log);
}

static void set_missing(struct coll *c, struct farm_run *u, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_missing(struct coll *c, struct farm_run *u, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(u->reason, sizeof(u->reason), fmt, ap);
	va_end(ap);
	u->phase = FARM_MISSING;
	c->dirty = true;
	say(c, "%s: MISSING: %s", u->id, u->reason);
}

static void drop_transport(struct coll *c, size_t i)
{
	if (c->t[i])
		pd_deploy_transport_close(c->t[i]);
	c->t[i] = NULL;
}

static bool group_busy(const struct coll *c, const struct farm_device *dv)
{
	for (size_t i = 0; i < c->r.n; i++) {
		const struct farm_run *u = &c->r.runs[i];
		if (u->phase != FARM_RUNNING)
			continue;
		const struct farm_device *o = farm_lab_device(c->l, u->device);
		if (!strcmp(u->device, dv->name) || (o && dv->group[0] && !strcmp(o->group, dv->group)))
			return true;
	}
	return false;
}

static int spawn_deploy(struct coll *c, struct farm_run *u, const struct farm_device *dv, pd_err *e)
{
	char plan[PATH_MAX], out[PATH_MAX], dur[32], logname[200];
	if (snprintf(plan, sizeof(plan), "%s/plans/%s", c->dir, u->plan) >= (int)sizeof(plan) ||
	    snprintf(out, sizeof(out), "%s/runs/%s", c->dir, u->id) >= (int)sizeof(out))
		return pd_err_set(e, PD_EXIT_USAGE, "%s: path too long", c->dir);
	snprintf(dur, sizeof(dur), "%lldms", (long long)(c->r.run_ns / PD_NS_PER_MS));
	snprintf(logname, sizeof(logname), "%s.deploy.log", u->id);
	int lf = openat(c->logs_fd, logname, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (lf < 0)
		return pd_err_set(e, PD_EXIT_ENV, "logs/%s: %s", logname, strerror(errno));
	const char *argv[20] = {c->self, "deploy", plan, "--board", dv->board, "--identity", dv->identity,
				"--known-hosts", dv->known_hosts, "--duration", dur, "--out", out};
	size_t n = 13;
	if (dv->cgroup[0]) {
		argv[n++] = "--cgroup";
		argv[n++] = dv->cgroup;
	}
	if (dv->cpu_map[0]) {
		argv[n++] = "--cpu-map";
		argv[n++] = dv->cpu_map;
	}
	argv[n] = NULL;
	pid_t pid = fork();
	if (pid < 0) {
		close(lf);
		return pd_err_set(e, PD_EXIT_ENV, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(lf, 1) < 0 || dup2(lf, 2) < 0)
			_exit(127);
		/* the follower's Ctrl-C reaches the deploy through collect, which signals it itself */
		setpgid(0, 0);
		fexecve(c->self_fd, (char *const *)argv, environ);
		dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(lf);
	u->pid = pid;
	return 0;
}

/* The verdict on the board: the job's hold step reads it, reports it as its test case, ends. */
static int release(struct coll *c, size_t i, const char *verdict, pd_err *e)
{
	struct farm_run *u = &c->r.runs[i];
	char path[200];
	snprintf(path, sizeof(path), "%s/%s.done", PD_FARM_HOLD_DIR, u->token);
	if (c->t[i] && pd_deploy_transport_lost(c->t[i]) && pd_deploy_transport_reconnect(c->t[i], e))
		return PD_EXIT_ENV;
	if (!c->t[i])
		return pd_err_set(e, PD_EXIT_ENV, "no connection to the board");
	return pd_deploy_transport_write(c->t[i], path, verdict, strlen(verdict), e);
}

/* The last "powerdag deploy: ..." line of the deploy's log: why it failed. */
static void deploy_error(struct coll *c, const struct farm_run *u, char *out, size_t n)
{
	char name[200];
	snprintf(name, sizeof(name), "%s.deploy.log", u->id);
	snprintf(out, n, "see logs/%s", name);
	int fd = openat(c->logs_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	char buf[65536];
	ssize_t r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return;
	buf[r] = 0;
	char *best = NULL;
	for (char *p = buf; (p = strstr(p, "powerdag deploy: ")); p++)
		best = p;
	if (best) {
		best += strlen("powerdag deploy: ");
		size_t k = strcspn(best, "\n");
		snprintf(out, n, "%.*s", (int)(k > 300 ? 300 : k), best);
	}
}

/* deploy.json of a collected run gains "farm": which LAVA job and device carried it. */
static void amend_deploy_json(struct coll *c, const struct farm_run *u)
{
	char rd[200];
	snprintf(rd, sizeof(rd), "runs/%s", u->id);
	int fd = openat(c->dfd, rd, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	int jf = openat(fd, "deploy.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	json_error_t je;
	json_t *j = jf >= 0 ? json_loadfd(jf, 0, &je) : NULL;
	if (jf >= 0)
		close(jf);
	if (j && json_is_object(j)) {
		json_t *f = json_object();
		json_object_set_new(f, "lava_url", json_string(c->l->url));
		json_object_set_new(f, "lava_job", json_integer(u->job));
		json_object_set_new(f, "device", json_string(u->device));
		json_object_set_new(f, "device_type", json_string(u->type));
		json_object_set_new(f, "run", json_string(u->id));
		json_object_set_new(f, "repetition", json_integer(u->rep));
		json_object_set_new(f, "lava_health", json_string(u->lava_health));
		json_object_set_new(f, "hold_wait_s", json_real(u->hold_wait_s));
		json_object_set_new(j, "farm", f);
		pd_err we = {0};
		if (farm_write_json_at(fd, "deploy.json", j, &we))
			say(c, "farm: %s/deploy.json: the LAVA job id not recorded: %s", rd, we.msg);
	}
	json_decref(j);
	close(fd);
}

static bool finished(const struct farm_job_state *js)
{
	return !strcmp(js->state, "Finished") || !strcmp(js->state, "Canceling");
}

static void step_submitted(struct coll *c, struct farm_run *u, const struct farm_job_state *js)
{
	if (finished(js)) {
		set_missing(c, u, "LAVA job %ld ended %s before it held a board%s%s", u->job, js->health,
			    js->failure[0] ? ": " : "", js->failure);
		return;
	}
	if (strcmp(js->state, "Running") || !js->device[0])
		return;
	snprintf(u->device, sizeof(u->device), "%s", js->device);
	if (!farm_lab_device(c->l, u->device)) {
		pd_err ig = {0};
		farm_lava_cancel(c->l, u->job, &ig);
		set_missing(c, u, "LAVA gave device '%s', which the lab file does not list (job cancelled)", u->device);
		return;
	}
	u->phase = FARM_RESERVED;
	u->t_reserved = farm_now();
	c->dirty = true;
	say(c, "%s: LAVA job %ld runs on %s", u->id, u->job, u->device);
}

static void step_reserved(struct coll *c, size_t i, const struct farm_job_state *js)
{
	struct farm_run *u = &c->r.runs[i];
	if (finished(js)) {
		drop_transport(c, i);
		set_missing(c, u, "LAVA job %ld on %s ended %s before the run could start%s%s", u->job, u->device,
			    js->health, js->failure[0] ? ": " : "", js->failure);
		return;
	}
	const struct farm_device *dv = farm_lab_device(c->l, u->device);
	pd_err e = {0};
	if (!c->t[i]) {
		struct pd_deploy_transport_opts to = {dv->identity, dv->known_hosts, 5};
		if (pd_deploy_transport_open(dv->board, &to, &c->t[i], &e))
			return; /* not reachable yet: LAVA's own login decides whether the board is there */
	}
	char held[200];
	snprintf(held, sizeof(held), "%s/%s.held", PD_FARM_HOLD_DIR, u->token);
	struct pd_deploy_transport_stat st = {0};
	if (pd_deploy_transport_stat(c->t[i], held, &st, &e)) {
		drop_transport(c, i);
		return;
	}
	if (!st.exists || group_busy(c, dv))
		return;
	if (spawn_deploy(c, u, dv, &e)) {
		set_missing(c, u, "%s", e.msg);
		release(c, i, "fail\n", &e);
		drop_transport(c, i);
		return;
	}
	u->hold_wait_s = farm_now() - u->t_reserved;
	u->t_deploy0 = farm_now();
	u->phase = FARM_RUNNING;
	c->dirty = true;
	say(c, "%s: deploying %s to %s (%s)", u->id, u->plan, u->device, dv->board);
}

static void step_running(struct coll *c, size_t i)
{
	struct farm_run *u = &c->r.runs[i];
	int st = 0;
	pid_t w = waitpid(u->pid, &st, WNOHANG);
	if (w == 0 || (w < 0 && errno == EINTR))
		return;
	u->deploy_rc = w < 0 ? 127 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	u->deploy_s = farm_now() - u->t_deploy0;
	u->pid = 0;
	pd_err e = {0};
	if (release(c, i, u->deploy_rc == 0 ? "pass\n" : "fail\n", &e)) {
		/* the hold would wait for its timeout: end the job now */
		pd_err ig = {0};
		farm_lava_cancel(c->l, u->job, &ig);
		say(c, "%s: could not release the board (%s): LAVA job %ld cancelled", u->id, e.msg, u->job);
	}
	drop_transport(c, i);
	u->phase = FARM_RELEASED;
	c->dirty = true;
	say(c, "%s: deploy exit %d after %.1f s", u->id, u->deploy_rc, u->deploy_s);
}

static void step_released(struct coll *c, struct farm_run *u, const struct farm_job_state *js)
{
	if (!finished(js))
		return;
	snprintf(u->lava_health, sizeof(u->lava_health), "%s", js->health);
	char name[200];
	snprintf(name, sizeof(name), "%s.lava.log", u->id);
	pd_err ig = {0};
	farm_lava_log(c->l, u->job, c->logs_fd, name, &ig);
	if (u->deploy_rc == 0) {
		amend_deploy_json(c, u);
		u->phase = FARM_COLLECTED;
		if (strcmp(js->health, "Complete"))
			snprintf(u->reason, sizeof(u->reason), "run collected; the LAVA job ended %s%s%s", js->health,
				 js->failure[0] ? ": " : "", js->failure);
		c->dirty = true;
		say(c, "%s: collected in runs/%s (LAVA job %ld %s)", u->id, u->id, u->job, js->health);
		return;
	}
	char why[400];
	deploy_error(c, u, why, sizeof(why));
	set_missing(c, u, "deploy to %s exit %d: %s (LAVA job %ld %s)", u->device, u->deploy_rc, why, u->job,
		    js->health);
}

static size_t pending(const struct coll *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->r.n; i++)
		n += c->r.runs[i].phase != FARM_COLLECTED && c->r.runs[i].phase != FARM_MISSING;
	return n;
}

static void tick(struct coll *c)
{
	for (size_t i = 0; i < c->r.n; i++) {
		struct farm_run *u = &c->r.runs[i];
		if (u->phase == FARM_RUNNING) {
			step_running(c, i);
			continue;
		}
		if (u->phase == FARM_COLLECTED || u->phase == FARM_MISSING)
			continue;
		if (!u->job) {
			set_missing(c, u, "never submitted (farm submit failed before it)");
			continue;
		}
		struct farm_job_state js;
		pd_err e = {0};
		if (farm_job_state(c->l, u->job, &js, &e))
			continue; /* LAVA unreachable for a moment: ask again next tick */
		if (strcmp(js.state, u->lava_state) || strcmp(js.health, u->lava_health)) {
			snprintf(u->lava_state, sizeof(u->lava_state), "%s", js.state);
			snprintf(u->lava_health, sizeof(u->lava_health), "%s", js.health);
			c->dirty = true;
		}
		if (u->phase == FARM_SUBMITTED)
			step_submitted(c, u, &js);
		else if (u->phase == FARM_RESERVED)
			step_reserved(c, i, &js);
		else if (u->phase == FARM_RELEASED)
			step_released(c, u, &js);
	}
}

/* Ctrl-C: each deploy gets SIGINT (it stops its agent and restores its board), jobs are cancelled. */
static void stop_all(struct coll *c)
{
	for (size_t i = 0; i < c->r.n; i++) {
		struct farm_run *u = &c->r.runs[i];
		if (u->phase == FARM_RUNNING && u->pid > 0) {
			kill(u->pid, SIGINT);
			int st;
			while (waitpid(u->pid, &st, 0) < 0 && errno == EINTR)
				;
			u->pid = 0;
		}
		if (u->phase != FARM_COLLECTED && u->phase != FARM_MISSING) {
			pd_err ig = {0};
			if (u->job)
				farm_lava_cancel(c->l, u->job, &ig);
			drop_transport(c, i);
			set_missing(c, u, "interrupted (farm collect stopped; LAVA job cancelled)");
		}
	}
}

int pd_farm_collect(const struct pd_farm_opts *o, const char *dir, pd_err *e)
{
	struct coll c = {.o = o, .dfd = -1, .logs_fd = -1, .self_fd = -1};
	int rc = 0;
	if (!realpath(dir, c.dir))
		return pd_err_set(e, PD_EXIT_USAGE, "%s: %s", dir, strerror(errno));
	c.dfd = open(c.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c.dfd < 0)
		return pd_err_set(e, PD_EXIT_USAGE, "%s: %s", dir, strerror(errno));
	struct stat st;
	if (fstat(c.dfd, &st) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(c.dfd);
		return pd_err_set(e, PD_EXIT_USAGE, "%s: not a directory of yours, or writable by group or others", dir);
	}
	if ((rc = farm_record_load(c.dfd, dir, &c.r, e)))
		goto out;
	if ((rc = pd_farm_lab_load(o->lab_path ? o->lab_path : c.r.lab_path, &c.l, e)))
		goto out;
	c.logs_fd = openat(c.dfd, "logs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c.logs_fd < 0) {
		rc = pd_err_set(e, PD_EXIT_USAGE, "%s/logs: %s", dir, strerror(errno));
		goto out;
	}
	ssize_t sl = o->self_exe ? (ssize_t)snprintf(c.self, sizeof(c.self), "%s", o->self_exe)
				 : readlink("/proc/self/exe", c.self, sizeof(c.self) - 1);
	if (sl <= 0 || (size_t)sl >= sizeof(c.self)) {
		rc = pd_err_set(e, PD_EXIT_ENV, "cannot find the powerdag executable");
		goto out;
	}
	c.self[sl] = 0;
	c.self_fd = open(o->self_exe ? o->self_exe : "/proc/self/exe", O_PATH | O_CLOEXEC);
	if (c.self_fd < 0) {
		rc = pd_err_set(e, PD_EXIT_ENV, "cannot open the powerdag executable %s: %s", c.self, strerror(errno));
		goto out;
	}
	c.t = calloc(c.r.n ? c.r.n : 1, sizeof(*c.t));
	for (size_t i = 0; i < c.r.n; i++) {
		/* a run caught mid-way by a previous collect that died cannot be resumed safely */
		struct farm_run *u = &c.r.runs[i];
		if (u->phase == FARM_RUNNING || u->phase == FARM_RESERVED)
			set_missing(&c, u, "a previous farm collect stopped while it was %s", farm_phase_name(u->phase));
		else if (u->phase == FARM_RELEASED && u->deploy_rc < 0)
			set_missing(&c, u, "a previous farm collect lost its deploy");
	}
	struct timespec ts = {(o->poll_ms ? o->poll_ms : 1000) / 1000, (long)((o->poll_ms ? o->poll_ms : 1000) % 1000) * 1000000L};
	while (pending(&c)) {
		if (o->interrupted && *o->interrupted) {
			stop_all(&c);
			break;
		}
		tick(&c);
		if (c.dirty) {
			pd_err se = {0};
			if (farm_record_save(c.dfd, &c.r, &se))
				say(&c, "farm.json: %s", se.msg);
			c.dirty = false;
		}
		if (pending(&c))
			nanosleep(&ts, NULL);
	}
	if (c.dirty)
		farm_record_save(c.dfd, &c.r, e);
	size_t missing = 0;
	for (size_t i = 0; i < c.r.n; i++)
		missing += c.r.runs[i].phase == FARM_MISSING;
	rc = o->interrupted && *o->interrupted ? pd_err_set(e, PD_EXIT_ENV, "interrupted")
	     : missing ? pd_err_set(e, PD_EXIT_FAIL, "%zu of %zu runs missing (powerdag farm status %s)", missing, c.r.n, dir)
		       : 0;
out:
	if (c.t)
		for (size_t i = 0; i < c.r.n; i++)
			drop_transport(&c, i);
	free(c.t);
	if (c.logs_fd >= 0)
		close(c.logs_fd);
	if (c.self_fd >= 0)
		close(c.self_fd);
	close(c.dfd);
	farm_record_free(&c.r);
	pd_farm_lab_free(c.l);
	return rc;
}
