/* SPDX-License-Identifier: MIT */
/*
 * run.c - the agent's run on the board: upload the agent and the plan into a private work directory,
 * start it detached (so an SSH drop does not kill it), stream DIR/out/run.pdlog into RUNDIR while it
 * runs, stop it after --duration, fetch its stderr, remove the work directory.
 *
 * The launcher is one constant shell script run as `sh -c SCRIPT sh DIR AGENT ARGS...`: the script
 * text never contains a value, every value is a positional argument quoted by pd_deploy_shell_quote, so no
 * file content or path ever becomes shell syntax. The script records the agent's pid and, when the
 * agent ends, its exit status, in files the deployer reads over SFTP.
 */
#include "deployer/dctx_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char launcher[] =
	"d=$1; shift; ("
	" \"$@\" </dev/null >/dev/null 2>\"$d/agent.stderr\" & p=$!;"
	" echo $p >\"$d/agent.pid.tmp\"; mv \"$d/agent.pid.tmp\" \"$d/agent.pid\";"
	" wait $p; echo $? >\"$d/agent.exit.tmp\"; mv \"$d/agent.exit.tmp\" \"$d/agent.exit\""
	" ) </dev/null >/dev/null 2>&1 &";

int run_upload(struct dctx *c, pd_err *e)
{
	char dir[256];
	snprintf(dir, sizeof(dir), "/tmp/powerdag-run.%ld.%ld", (long)getpid(), (long)time(NULL));
	dctx_set_remote_dir(c, dir);
	int rc = fault_at_step(c, "upload", e);
	if (!rc)
		WITH_RECONNECT(c, rc, pd_deploy_transport_mkdir(c->t, c->remote_dir, 0700, e));
	if (!rc)
		WITH_RECONNECT(c, rc, pd_deploy_transport_mkdir(c->t, c->rp.out, 0755, e));
	if (!rc)
		WITH_RECONNECT(c, rc, pd_deploy_transport_upload(c->t, c->agent, c->rp.agent, 0755, e));
	char other[64] = ""; /* the test seam's plan, uploaded instead of the real one */
	if (!rc)
		rc = fault_admission_plan(c, other, sizeof(other), e);
	if (!rc)
		WITH_RECONNECT(c, rc, pd_deploy_transport_upload(c->t, other[0] ? other : c->plan_file, c->rp.plan, 0644, e));
	if (other[0])
		unlink(other);
	return rc;
}

static int start(struct dctx *c, pd_err *e)
{
	int rc = fault_at_step(c, "start", e);
	if (rc)
		return rc;
	char dur[32];
	snprintf(dur, sizeof(dur), "%.3f", (double)c->duration_ns / 1e9);
	const char *cg = pd_deploy_board_info(c->b)->cgroup_dir;
	const char *argv[16] = {"sh", "-c", launcher, "sh", c->remote_dir, c->rp.agent, "run",
				c->rp.plan, "--out", c->rp.out, "--duration", dur};
	size_t n = 12;
	if (cg[0]) {
		argv[n++] = "--cgroup-root";
		argv[n++] = cg;
	}
	argv[n] = NULL;
	struct pd_deploy_exec_result r;
	WITH_RECONNECT(c, rc, pd_deploy_transport_exec(c->t, argv, &r, e));
	if (rc == 0 && r.status != 0)
		rc = pd_err_set(e, PD_EXIT_ENV, "starting the agent failed (status %d): %s", r.status,
				r.err.data ? r.err.data : "");
	pd_deploy_exec_result_free(&r);
	if (rc)
		return rc;
	/* the pid file appears as soon as the background shell has forked the agent */
	pd_buf pid;
	pd_buf_init(&pid);
	for (int i = 0; i < 100 && c->agent_pid <= 0; i++) {
		pid.len = 0;
		pd_err ig = {0};
		struct pd_deploy_transport_stat st;
		if (pd_deploy_transport_stat(c->t, c->rp.pid, &st, &ig) == 0 && st.exists &&
		    pd_deploy_transport_read(c->t, c->rp.pid, &pid, &ig) == 0 && pid.data)
			c->agent_pid = strtol(pid.data, NULL, 10);
		else if (pd_deploy_transport_lost(c->t) && dctx_reconnect(c))
			break;
		else
			usleep(20000);
	}
	pd_buf_free(&pid);
	if (c->agent_pid <= 0)
		return pd_err_set(e, PD_EXIT_ENV, "the agent did not start on the board (no pid after 2 s)");
	dctx_log(c, "agent running on the board (pid %ld), %s s", c->agent_pid, dur);
	return 0;
}

/* Appends the bytes of the remote log past what was already streamed. */
static int stream_once(struct dctx *c, int fd, pd_err *e)
{
	struct pd_deploy_transport_stat st;
	int rc = pd_deploy_transport_stat(c->t, c->rp.log, &st, e);
	if (rc || !st.exists)
		return rc;
	pd_buf chunk;
	pd_buf_init(&chunk);
	while (rc == 0 && c->r->log_bytes < st.size) {
		chunk.len = 0;
		size_t want = st.size - c->r->log_bytes;
		rc = pd_deploy_transport_read_at(c->t, c->rp.log, c->r->log_bytes, want > 65536 ? 65536 : want,
				   &chunk, e);
		if (rc == 0 && chunk.len == 0)
			break;
		if (rc == 0) {
			const char *p = chunk.data;
			size_t left = chunk.len;
			while (left) {
				ssize_t w = write(fd, p, left);
				if (w < 0 && errno == EINTR)
					continue;
				if (w < 0) {
					rc = pd_err_set(e, PD_EXIT_ENV, "writing run.pdlog: %s", strerror(errno));
					break;
				}
				p += w, left -= (size_t)w;
			}
			if (rc == 0)
				c->r->log_bytes += chunk.len;
		}
	}
	pd_buf_free(&chunk);
	return rc;
}

/* Exit status from DIR/agent.exit once the agent ended; -1 while it runs. */
static int agent_exit(struct dctx *c, pd_err *e)
{
	struct pd_deploy_transport_stat st;
	int rc;
	WITH_RECONNECT(c, rc, pd_deploy_transport_stat(c->t, c->rp.exit, &st, e));
	if (rc || !st.exists)
		return -1;
	pd_buf b;
	pd_buf_init(&b);
	int status = -1;
	if (pd_deploy_transport_read(c->t, c->rp.exit, &b, e) == 0 && b.data)
		status = (int)strtol(b.data, NULL, 10);
	pd_buf_free(&b);
	return status;
}

/* Streams until the agent exits, the duration (plus a grace period) passes, or Ctrl-C. */
static int stream_loop(struct dctx *c, int fd, pd_err *e)
{
	double t_end = dctx_now_s() + (double)c->duration_ns / 1e9 + 5.0;
	/* stream-step faults fire once some data has been streamed: at the first round after one that
	 * streamed (a clock would not do: on a loaded machine one round of a 2-s run took so long that
	 * the agent had ended before the fault's time came, and a kill-agent fault found nothing) */
	bool streamed = false;
	int status = -1;
	while (status < 0) {
		if (dctx_interrupted(c)) {
			dctx_log(c, "interrupted: stopping the agent");
			return 0;
		}
		if (dctx_now_s() > t_end) {
			dctx_log(c, "agent still running after its duration: stopping it");
			return 0;
		}
		int rc = 0;
		if (streamed)
			rc = fault_at_step(c, "stream", e);
		if (rc == 0) {
			rc = stream_once(c, fd, e);
			streamed |= rc == 0;
		}
		if (rc == 0)
			status = agent_exit(c, e);
		if (rc && pd_deploy_transport_lost(c->t)) {
			if (dctx_reconnect(c))
				return rc;
			continue;
		}
		if (rc)
			return rc;
		if (status < 0)
			usleep(200000);
	}
	c->r->agent_status = status;
	return 0;
}

static int stop(struct dctx *c, pd_err *e)
{
	int rc = fault_at_step(c, "stop", e);
	if (rc)
		return rc;
	pd_err ig = {0};
	if (dctx_reconnect(c))
		return pd_err_set(e, PD_EXIT_ENV, "cannot reach the board to stop the agent");
	int status = agent_exit(c, &ig);
	const char *sigs[] = {"TERM", "KILL"};
	for (int s = 0; s < 2 && status < 0; s++) {
		dctx_agent_signal(c, sigs[s]);
		for (int i = 0; i < 50 && status < 0; i++) { /* 5 s for a clean stop */
			usleep(100000);
			status = agent_exit(c, &ig);
		}
	}
	if (status < 0)
		return pd_err_set(e, PD_EXIT_ENV, "the agent (pid %ld) did not stop", c->agent_pid);
	c->r->agent_status = status;
	return 0;
}

static void last_line(const char *text, char *out, size_t n)
{
	out[0] = '\0';
	if (!text)
		return;
	size_t len = strlen(text);
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	size_t start = len;
	while (start && text[start - 1] != '\n')
		start--;
	snprintf(out, n, "%.*s", (int)(len - start), text + start);
}

static int fetch(struct dctx *c, int fd, pd_err *e)
{
	int rc = fault_at_step(c, "fetch", e);
	if (!rc)
		WITH_RECONNECT(c, rc, stream_once(c, fd, e));
	pd_err fe = {0};
	pd_buf err;
	pd_buf_init(&err);
	int frc;
	WITH_RECONNECT(c, frc, pd_deploy_transport_read(c->t, c->rp.err, &err, &fe));
	if (frc == 0)
		frc = pd_write_file_at(c->out_fd, "agent.stderr", err.data ? err.data : "", err.len, &fe);
	pd_buf_free(&err);
	if (!rc && frc)
		rc = frc, *e = fe;
	return rc;
}

void run_cleanup_remote(struct dctx *c)
{
	if (!c->remote_dir[0] || c->remote_cleaned || dctx_reconnect(c))
		return;
	const char *argv[] = {"rm", "-rf", "--", c->remote_dir, NULL};
	struct pd_deploy_exec_result r;
	pd_err e = {0};
	if (pd_deploy_transport_exec(c->t, argv, &r, &e) == 0 && r.status == 0)
		c->remote_cleaned = true;
	pd_deploy_exec_result_free(&r);
}

/* The agent's verdict as an error: admission refused / missing feature (3), crash (signal). */
static int agent_verdict(struct dctx *c, pd_err *e)
{
	int s = c->r->agent_status;
	if (s == 0)
		return 0;
	char local[1200], line[400] = "";
	snprintf(local, sizeof(local), "%s/agent.stderr", c->o->out_dir);
	char *text = NULL;
	size_t len;
	pd_err ig = {0};
	if (pd_read_file(local, &text, &len, 0, &ig) == 0)
		last_line(text, line, sizeof(line));
	free(text);
	if (s > 128)
		return pd_err_set(e, PD_EXIT_ENV, "the agent crashed (killed by signal %d)%s%s", s - 128,
				  line[0] ? ": " : "", line);
	if (s == PD_EXIT_FAIL)
		return pd_err_set(e, PD_EXIT_FAIL, "the agent reported a failure: %s", line);
	return pd_err_set(e, s == PD_EXIT_USAGE ? PD_EXIT_USAGE : PD_EXIT_ENV, "the agent exited with %d: %s", s,
			  line[0] ? line : "(no message)");
}

int run_agent(struct dctx *c, pd_err *e)
{
	/* appended to while streaming: created once, O_EXCL|O_NOFOLLOW under RUNDIR's descriptor */
	int fd = pd_open_new_at(c->out_fd, "run.pdlog", e);
	if (fd < 0)
		return e->code;
	int rc = start(c, e); /* the work directory was filled before pre-flight (run_upload) */
	c->r->setup_s = dctx_now_s() - c->t_start; /* connect .. agent started: the deploy overhead */
	if (!rc)
		rc = stream_loop(c, fd, e);
	double t_stop = dctx_now_s();
	pd_err se = {0};
	int src = 0;
	if (c->agent_pid > 0)
		src = stop(c, &se);
	pd_err fe = {0};
	int frc = c->remote_dir[0] ? fetch(c, fd, &fe) : 0;
	fsync(fd);
	close(fd);
	run_cleanup_remote(c);
	c->stop_s = dctx_now_s() - t_stop;
	if (!rc && src)
		rc = src, *e = se;
	if (!rc && frc)
		rc = frc, *e = fe;
	if (!rc && dctx_interrupted(c))
		rc = pd_err_set(e, PD_EXIT_ENV, "interrupted; the run was stopped and the data so far kept");
	if (!rc)
		rc = agent_verdict(c, e);
	dctx_log(c, "agent exit status %d, %llu byte(s) of run log", c->r->agent_status,
	     (unsigned long long)c->r->log_bytes);
	return rc;
}
