/* SPDX-License-Identifier: MIT */
/*
 * `report --perfetto FILE`: Chrome trace-event JSON (the "JSON trace format" that ui.perfetto.dev and
 * chrome://tracing load). Layout:
 *
 *   pid 1 "CPUs"          one thread per Linux CPU; every CPU job is a complete slice ("X")
 *   pid 2 "accelerators"  one thread per accelerator of the platform; accelerated jobs as slices
 *   pid 3 "DAG instances" one async track per DAG ("b"/"e", id = instance), misses as instants ("i")
 *   pid 4 "power"         one counter ("C") per rail, in W
 *
 * Timestamps are microseconds since t0 (the format's unit), as reals so no ns is lost.
 */
#include "reports/pd_reports.h"
#include "reports/run_model_impl.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

enum { PID_CPU = 1, PID_ACCEL = 2, PID_DAG = 3, PID_POWER = 4 };

static double us(int64_t ns)
{
	return (double)ns / 1e3;
}

static void meta(json_t *ev, const char *what, int pid, int tid, const char *name)
{
	json_array_append_new(ev, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", what, "ph", "M", "pid", pid,
					    "tid", tid, "args", "name", name));
}

static void tracks(const struct rpt_run *r, json_t *ev)
{
	const pd_platform *pf = pd_plan_platform(r->plan);
	meta(ev, "process_name", PID_CPU, 0, "CPUs");
	meta(ev, "process_name", PID_ACCEL, 0, "accelerators");
	meta(ev, "process_name", PID_DAG, 0, "DAG instances");
	meta(ev, "process_name", PID_POWER, 0, "power");
	for (size_t k = 0; k < pd_platform_island_count(pf); k++) {
		const struct pd_island *isl = pd_platform_island(pf, k);
		for (size_t c = 0; c < isl->n_cpus; c++) {
			char name[96];
			snprintf(name, sizeof(name), "cpu%d (%s)", isl->cpus[c], isl->name);
			meta(ev, "thread_name", PID_CPU, isl->cpus[c], name);
		}
	}
	for (size_t a = 0; a < pd_platform_accel_count(pf); a++)
		meta(ev, "thread_name", PID_ACCEL, (int)a + 1, pd_platform_accel(pf, a)->name);
}

static void jobs(const struct rpt_run *r, json_t *ev)
{
	const pd_dagset *ds = pd_plan_dags(r->plan);
	for (size_t i = 0; i < r->n_jobs; i++) {
		const struct rpt_job *j = &r->jobs[i];
		const struct pd_task *t = pd_dags_task(ds, j->task);
		const struct pd_plan_task *pt = pd_plan_task_c(r->plan, j->task);
		char name[160];
		snprintf(name, sizeof(name), "%s/%s", pd_dags_dag(ds, t->dag)->name, t->name);
		bool on_cpu = j->cpu >= 0;
		int pid = on_cpu ? PID_CPU : PID_ACCEL;
		int tid = on_cpu ? j->cpu : (int)pt->place.accel + 1;
		json_array_append_new(
			ev, json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i, s:{s:I, s:f, s:b, s:b}}", "name", name, "cat",
				      "job", "ph", "X", "ts", us(j->start_ns), "dur", us(j->end_ns - j->start_ns), "pid",
				      pid, "tid", tid, "args", "instance", (json_int_t)j->inst, "exec_ms",
				      (double)j->exec_ns / 1e6, "overrun", j->overrun, "failed", j->failed));
	}
}

static void instances(const struct rpt_run *r, json_t *ev)
{
	const pd_dagset *ds = pd_plan_dags(r->plan);
	for (size_t i = 0; i < r->n_insts; i++) {
		const struct rpt_inst *in = &r->insts[i];
		const struct pd_dag *d = pd_dags_dag(ds, in->dag);
		/* ids must be unique per (cat, name): DAG index in the high bits, sequence below */
		json_int_t id = (json_int_t)(((uint64_t)in->dag << 40) | (in->seq & ((1ULL << 40) - 1)));
		int64_t end = in->finish_ns >= 0 ? in->finish_ns : r->duration_ns;
		bool missed = in->finish_ns < 0 || in->finish_ns - in->release_ns > d->deadline_ns;
		json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:I, s:f, s:i, s:i, s:{s:I, s:b}}", "name", d->name,
						    "cat", "dag", "ph", "b", "id", id, "ts", us(in->release_ns), "pid",
						    PID_DAG, "tid", 0, "args", "seq", (json_int_t)in->seq, "missed", missed));
		json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:I, s:f, s:i, s:i}", "name", d->name, "cat", "dag",
						    "ph", "e", "id", id, "ts", us(end), "pid", PID_DAG, "tid", 0));
		if (missed)
			json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:s, s:f, s:i, s:i}", "name", "deadline miss",
							    "cat", "miss", "ph", "i", "s", "p", "ts",
							    us(in->release_ns + d->deadline_ns), "pid", PID_DAG, "tid", 0));
	}
}

static void power(const struct rpt_run *r, json_t *ev)
{
	for (size_t k = 0; k < r->n_rails; k++) {
		const struct rpt_rail *rl = &r->rails[k];
		for (size_t i = 0; i < rl->n; i++)
			json_array_append_new(ev, json_pack("{s:s, s:s, s:f, s:i, s:i, s:{s:f}}", "name", rl->name, "ph",
							    "C", "ts", us(rl->t_ns[i]), "pid", PID_POWER, "tid", 0,
							    "args", "W", (double)rl->uw[i] / 1e6));
	}
}

int pd_report_write_perfetto(const pd_report *rep, const char *path, pd_err *e)
{
	json_t *ev = json_array();
	if (!ev)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	tracks(rep->run, ev);
	jobs(rep->run, ev);
	instances(rep->run, ev);
	power(rep->run, ev);
	json_t *root = json_pack("{s:o, s:s, s:{s:s, s:b}}", "traceEvents", ev, "displayTimeUnit", "ms", "otherData",
				 "rundir", rep->run->rundir, "complete", !rep->run->incomplete);
	char *text = root ? json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
	json_decref(root);
	if (!text)
		return pd_err_set(e, PD_EXIT_ENV, "cannot build the Perfetto trace (out of memory)");
	int rc = pd_write_file_atomic(path, text, strlen(text), e);
	free(text);
	return rc;
}
