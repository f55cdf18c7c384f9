/* SPDX-License-Identifier: MIT */
/*
 * Loading a run directory (docs/ARCHITECTURE.md "Run directory") into the run model:
 *
 *   plan.yaml      required: what was deployed; unreadable -> PD_EXIT_USAGE, nothing reported
 *   run.pdlog      the measurements; missing or truncated -> an incomplete report (exit 0), since a
 *                  run that died half-way is exactly when a report is wanted
 *   deploy.json    optional metadata (board, kernel, arch, start/end, restore result)
 *   simulate.json  optional prediction (`powerdag simulate --json`)
 *   agent.stderr   optional; its last lines are quoted when the run is incomplete
 */
#include "reports/pd_reports.h"
#include "reports/run_model_impl.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *path_in(struct rpt_run *r, const char *name)
{
	return pd_arena_printf(r->arena, "%s/%s", r->rundir, name);
}

static bool file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static int load_plan(struct rpt_run *r, pd_err *e)
{
	r->plan_path = path_in(r, "plan.yaml");
	if (!file_exists(r->plan_path))
		return pd_err_set(e, PD_EXIT_USAGE, "%s: no plan in the run directory (%s)", r->plan_path,
				  strerror(errno));
	pd_diags d;
	pd_diags_init(&d);
	r->plan = pd_plan_load_file(r->plan_path, &d);
	if (!r->plan) {
		if (d.n)
			pd_err_setloc(e, PD_EXIT_USAGE, d.v[0].loc, "unreadable plan: %s", d.v[0].msg);
		else
			pd_err_set(e, PD_EXIT_USAGE, "%s: unreadable plan", r->plan_path);
		pd_diags_free(&d);
		return e ? e->code : PD_EXIT_USAGE;
	}
	pd_diags_free(&d);
	r->task_overruns = calloc(pd_dags_task_count(pd_plan_dags(r->plan)) + 1, sizeof(uint64_t));
	return r->task_overruns ? 0 : pd_err_set(e, PD_EXIT_ENV, "out of memory");
}

/* A metadata value as text whatever its JSON type: the deployer's fields are free-form. */
static const char *value_text(struct rpt_run *r, const json_t *v)
{
	if (json_is_string(v))
		return pd_arena_strdup(r->arena, json_string_value(v));
	if (json_is_true(v))
		return "ok";
	if (json_is_false(v))
		return "failed";
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
	const char *c = s ? pd_arena_strdup(r->arena, s) : NULL;
	free(s);
	return c;
}

static const char *json_text(struct rpt_run *r, const json_t *obj, const char *const *keys)
{
	for (; *keys; keys++) {
		const json_t *v = json_object_get(obj, *keys);
		if (v && !json_is_null(v))
			return value_text(r, v);
	}
	return NULL;
}

/* deploy.json "restore": {requested, done, state_equal, left_changed[]} (deployer/deploy.c), or any
 * older scalar form, as one phrase. */
static const char *restore_summary(struct rpt_run *r, const json_t *v)
{
	if (!json_is_object(v))
		return json_is_null(v) ? NULL : value_text(r, v);
	if (json_is_false(json_object_get(v, "requested")))
		return "not requested (--no-restore)";
	if (!json_is_true(json_object_get(v, "done")))
		return "FAILED: the board was not restored";
	const json_t *left = json_object_get(v, "left_changed");
	if (json_is_false(json_object_get(v, "state_equal")) || json_array_size(left) > 0)
		return pd_arena_printf(r->arena, "incomplete: %zu setting(s) left changed (see deploy.json)",
				       json_array_size(left));
	size_t others = json_array_size(json_object_get(v, "changed_meanwhile"));
	if (others)
		return pd_arena_printf(r->arena, "ok (board state as before, but %zu kernel-wide value(s) changed by "
						 "someone else during the run: see deploy.json)", others);
	return "ok (board state as before)";
}

/* A deploy that failed or was interrupted explains a short log; it is said next to the numbers. */
static void deploy_outcome(struct rpt_run *r, const json_t *root)
{
	const char *result = json_string_value(json_object_get(root, "result"));
	const char *err = json_string_value(json_object_get(root, "error"));
	if (result && strcmp(result, "ok") != 0)
		rpt_run_note(r, "deploy result: %s%s%s", result, err ? ": " : "", err ? err : "");
	if (json_is_true(json_object_get(root, "interrupted")))
		rpt_run_mark_incomplete(r, "the deployment was interrupted (deploy.json)");
	const json_t *st = json_object_get(root, "agent_status");
	if (json_is_integer(st) && json_integer_value(st) != 0)
		rpt_run_note(r, "the agent exited with status %lld", (long long)json_integer_value(st));
}

static void load_deploy(struct rpt_run *r)
{
	const char *p = path_in(r, "deploy.json");
	if (!file_exists(p))
		return;
	json_error_t je;
	json_t *root = json_load_file(p, 0, &je);
	if (!json_is_object(root)) {
		rpt_run_note(r, "%s:%d:%d: ignored: %s", p, je.line, je.column,
			     root ? "not a JSON object" : je.text);
		json_decref(root);
		return;
	}
	static const char *const board[] = {"board", "board_uri", "uri", NULL};
	static const char *const kernel[] = {"kernel", "kernel_release", NULL};
	static const char *const arch[] = {"arch", "machine", NULL};
	static const char *const start[] = {"start", "started", "start_time", NULL};
	static const char *const end[] = {"end", "ended", "end_time", NULL};
	static const char *const restore[] = {"restore", "restored", "restore_result", NULL};
	r->board = json_text(r, root, board);
	r->kernel = json_text(r, root, kernel);
	r->arch = json_text(r, root, arch);
	r->started = json_text(r, root, start);
	r->ended = json_text(r, root, end);
	const json_t *rs = NULL;
	for (size_t i = 0; restore[i] && !rs; i++)
		rs = json_object_get(root, restore[i]);
	r->restore = rs ? restore_summary(r, rs) : NULL;
	deploy_outcome(r, root);
	json_decref(root);
}

static double num_or_nan(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static void load_sim(struct rpt_run *r)
{
	const char *p = path_in(r, "simulate.json");
	if (!file_exists(p))
		return;
	json_error_t je;
	json_t *root = json_load_file(p, 0, &je);
	if (!json_is_object(root) || !json_is_number(json_object_get(root, "power_w"))) {
		rpt_run_note(r, "%s:%d:%d: ignored: %s", p, je.line, je.column,
			     root ? "not `powerdag simulate --json` output (no power_w)" : je.text);
		json_decref(root);
		return;
	}
	r->has_sim = true;
	r->sim_power_w = num_or_nan(root, "power_w");
	r->sim_energy_j = num_or_nan(root, "energy_j");
	r->sim_duration_s = num_or_nan(root, "duration_s");
	double jobs = num_or_nan(root, "jobs"), misses = num_or_nan(root, "misses");
	r->sim_jobs = isnan(jobs) ? -1 : (int64_t)jobs;
	r->sim_misses = isnan(misses) ? 0 : (int64_t)misses;
	const json_t *dags = json_object_get(root, "dags");
	size_t n = json_is_array(dags) ? json_array_size(dags) : 0;
	r->sim_dags = calloc(n + 1, sizeof(*r->sim_dags));
	for (size_t i = 0; r->sim_dags && i < n; i++) {
		const json_t *d = json_array_get(dags, i);
		const json_t *name = json_object_get(d, "name");
		if (!json_is_string(name))
			continue;
		struct rpt_sim_dag *sd = &r->sim_dags[r->n_sim_dags++];
		sd->name = pd_arena_strdup(r->arena, json_string_value(name));
		double in = num_or_nan(d, "instances"), mi = num_or_nan(d, "misses");
		sd->instances = isnan(in) ? -1 : (int64_t)in;
		sd->misses = isnan(mi) ? -1 : (int64_t)mi;
		sd->max_response_ms = num_or_nan(d, "max_response_ms");
		sd->p99_response_ms = num_or_nan(d, "p99_response_ms");
	}
	json_decref(root);
}

/* The last lines of agent.stderr explain most early ends (admission refused, missing privilege). */
static void quote_agent_stderr(struct rpt_run *r)
{
	char *text = NULL;
	size_t len = 0;
	if (pd_read_file(path_in(r, "agent.stderr"), &text, &len, 1 << 20, NULL) != 0 || len == 0) {
		free(text);
		return;
	}
	size_t lines = 0, i = len;
	while (i > 0 && text[i - 1] == '\n')
		text[--i] = '\0';
	while (i > 0 && lines < 3)
		if (text[--i] == '\n')
			lines++;
	rpt_run_note(r, "agent.stderr ends with:\n%s", text + i + (text[i] == '\n'));
	free(text);
}

static int load_run(struct rpt_run *r, const char *rundir, pd_err *e)
{
	struct stat st;
	if (stat(rundir, &st) != 0)
		return pd_err_set(e, PD_EXIT_USAGE, "%s: no such run directory (%s)", rundir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return pd_err_set(e, PD_EXIT_USAGE, "%s: not a directory (expected a run directory)", rundir);
	r->rundir = pd_arena_strdup(r->arena, rundir);
	int rc = load_plan(r, e);
	if (rc)
		return rc;
	load_deploy(r);
	load_sim(r);
	const char *log = path_in(r, "run.pdlog");
	if (!file_exists(log))
		rpt_run_mark_incomplete(r, "%s is missing: the agent never started or its log was not collected",
					log);
	else if ((rc = rpt_import_runlog(r, log, e)) != 0)
		return rc;
	rpt_replay(r);
	if (r->incomplete)
		quote_agent_stderr(r);
	return 0;
}

pd_report *pd_report_open(const char *rundir, pd_err *e)
{
	pd_report *rep = calloc(1, sizeof(*rep));
	if (!rep || !(rep->run = rpt_run_new())) {
		free(rep);
		pd_err_set(e, PD_EXIT_ENV, "out of memory");
		return NULL;
	}
	if (load_run(rep->run, rundir, e) != 0 || rpt_stats_compute(rep->run, &rep->st, e) != 0) {
		rpt_run_free(rep->run);
		free(rep);
		return NULL;
	}
	return rep;
}

void pd_report_free(pd_report *r)
{
	if (!r)
		return;
	rpt_stats_free(&r->st);
	rpt_run_free(r->run);
	free(r);
}

bool pd_report_incomplete(const pd_report *r, const char **why)
{
	if (why)
		*why = r->run->incomplete ? r->run->incomplete_why : NULL;
	return r->run->incomplete;
}

uint64_t pd_report_misses(const pd_report *r)
{
	return r->st.misses;
}
