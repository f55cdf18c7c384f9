/* SPDX-License-Identifier: MIT */
/*
 * `report --csv DIR`: tidy tables (one observation per row, one variable per column) for pandas / R:
 *
 *   instances.csv  dag,seq,release_ns,finish_ns,response_ns,deadline_ns,finished,missed
 *   power.csv      t_ns,rail,power_w            (long form: one row per rail and sample)
 *   tasks.csv      dag,task,place,jobs,overruns,failed,budget_ns,max_exec_ns,mean_exec_ns
 *   jobs.csv       dag,task,seq,cpu,release_ns,start_ns,end_ns,exec_ns,overrun,failed
 *
 * Times are integer ns since t0 (exact); power in W with 6 decimals (exact microwatts). An unknown
 * value is an empty field (NA for both pandas and R). Each file is written atomically.
 */
#include "reports/pd_reports.h"
#include "reports/run_model_impl.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* RFC 4180 field: quoted when it holds a comma, a quote or a line break. */
static void field(pd_buf *b, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		pd_buf_printf(b, "%s", s);
		return;
	}
	pd_buf_append(b, "\"", 1);
	for (; *s; s++)
		pd_buf_append(b, *s == '"' ? "\"\"" : s, *s == '"' ? 2 : 1);
	pd_buf_append(b, "\"", 1);
}

static void opt_i64(pd_buf *b, int64_t v)
{
	if (v >= 0)
		pd_buf_printf(b, "%" PRId64, v);
}

static void csv_instances(const pd_report *rep, pd_buf *b)
{
	const struct rpt_run *r = rep->run;
	const pd_dagset *ds = pd_plan_dags(r->plan);
	pd_buf_printf(b, "dag,seq,release_ns,finish_ns,response_ns,deadline_ns,finished,missed\n");
	for (size_t i = 0; i < r->n_insts; i++) {
		const struct rpt_inst *in = &r->insts[i];
		const struct pd_dag *d = pd_dags_dag(ds, in->dag);
		int64_t resp = rpt_inst_response_ns(in);
		field(b, d->name);
		pd_buf_printf(b, ",%" PRIu64 ",%" PRId64 ",", in->seq, in->release_ns);
		opt_i64(b, in->finish_ns);
		pd_buf_printf(b, ",");
		opt_i64(b, resp);
		pd_buf_printf(b, ",%" PRId64 ",%d,%d\n", d->deadline_ns, resp >= 0,
			      resp < 0 || resp > d->deadline_ns);
	}
}

static void csv_power(const pd_report *rep, pd_buf *b)
{
	const struct rpt_run *r = rep->run;
	pd_buf_printf(b, "t_ns,rail,power_w\n");
	for (size_t k = 0; k < r->n_rails; k++)
		for (size_t i = 0; i < r->rails[k].n; i++) {
			pd_buf_printf(b, "%" PRId64 ",", r->rails[k].t_ns[i]);
			field(b, r->rails[k].name);
			pd_buf_printf(b, ",%.6f\n", (double)r->rails[k].uw[i] / 1e6);
		}
}

static void csv_tasks(const pd_report *rep, pd_buf *b)
{
	const struct rpt_stats *s = &rep->st;
	pd_buf_printf(b, "dag,task,place,jobs,overruns,failed,budget_ns,max_exec_ns,mean_exec_ns\n");
	for (size_t i = 0; i < s->n_tasks; i++) {
		const struct rpt_task_stats *t = &s->tasks[i];
		field(b, t->dag);
		pd_buf_printf(b, ",");
		field(b, t->name);
		pd_buf_printf(b, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",", t->place, t->jobs, t->overruns,
			      t->failed, t->budget_ns);
		opt_i64(b, t->max_exec_ns);
		pd_buf_printf(b, ",");
		if (!isnan(t->mean_exec_ns))
			pd_buf_printf(b, "%.1f", t->mean_exec_ns);
		pd_buf_printf(b, "\n");
	}
}

static void csv_jobs(const pd_report *rep, pd_buf *b)
{
	const struct rpt_run *r = rep->run;
	const pd_dagset *ds = pd_plan_dags(r->plan);
	pd_buf_printf(b, "dag,task,seq,cpu,release_ns,start_ns,end_ns,exec_ns,overrun,failed\n");
	for (size_t i = 0; i < r->n_jobs; i++) {
		const struct rpt_job *j = &r->jobs[i];
		const struct pd_task *t = pd_dags_task(ds, j->task);
		field(b, pd_dags_dag(ds, t->dag)->name);
		pd_buf_printf(b, ",");
		field(b, t->name);
		pd_buf_printf(b, ",%" PRIu64 ",", j->inst);
		if (j->cpu >= 0)
			pd_buf_printf(b, "%d", j->cpu);
		pd_buf_printf(b, ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%d,%d\n", j->release_ns, j->start_ns,
			      j->end_ns, j->exec_ns, j->overrun, j->failed);
	}
}

int pd_report_write_csv(const pd_report *rep, const char *dir, pd_err *e)
{
	/* DIR is created, or must be ours, not a link, not writable by others: a directory someone else
	 * controls (or a link they planted at its name) would receive our files wherever they point */
	int dfd;
	bool created;
	int drc = pd_dir_open_private(dir, true, &dfd, &created, e);
	if (drc) {
		char why[sizeof(e->msg)];
		snprintf(why, sizeof(why), "%s", e->msg);
		return pd_err_set(e, PD_EXIT_ENV, "--csv %s", why);
	}
	static const struct {
		const char *name;
		void (*fn)(const pd_report *, pd_buf *);
	} tables[] = {{"instances.csv", csv_instances}, {"power.csv", csv_power}, {"tasks.csv", csv_tasks},
		      {"jobs.csv", csv_jobs}};
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		pd_buf b;
		pd_buf_init(&b);
		tables[i].fn(rep, &b);
		int rc = b.data ? pd_write_file_at(dfd, tables[i].name, b.data, b.len, e)
				: pd_err_set(e, PD_EXIT_ENV, "out of memory writing %s", tables[i].name);
		pd_buf_free(&b);
		if (rc) {
			close(dfd);
			return rc;
		}
	}
	close(dfd);
	return 0;
}
