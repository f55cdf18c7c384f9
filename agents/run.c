/* SPDX-License-Identifier: MIT */
/*
 * One run of the agent, in this order (never a half-started run):
 *   1. resolve the plan, check the CPUs exist, prepare cpusets, open the power rails;
 *   2. create every thread (SCHED_OTHER): each enters its CPU's exclusive cpuset and calibrates;
 *   3. admit: SCHED_DEADLINE for every CPU task, or revert all and exit 3 naming the task;
 *   4. open the run log (header with t0), start writer, sampler, monitor; start barrier at t0;
 *   5. wait for the duration or SIGTERM/SIGINT, sampling host steal and busy time meanwhile; stop
 *      releasing, drain, join;
 *   6. END record, close the log, remove the cpusets.
 */
#include "agents/exec_impl.h"
#include "agents/pd_agent.h"
#include "agents/sampler_impl.h"
#include "agents/foreign_impl.h"
#include "agents/steal_impl.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* Ring drain period: bounds what a kill -9 loses (docs/RUNLOG.md promises < 1 s) against the
 * writer's wake-ups. */
#define PD_AGENT_FLUSH_MS 250

void pd_agent_opts_init(struct pd_agent_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sample_hz = 100;
	o->seed = 1;
	o->starve_threshold_ns = PD_NS_PER_S;
}

static const char *work_name(const struct pd_agent_task *t, char *buf, size_t n)
{
	switch (t->work) {
	case PD_AW_SPIN:
		return "builtin:spin";
	case PD_AW_BUSY:
		return "builtin:busy";
	case PD_AW_PLUGIN:
		snprintf(buf, n, "plugin:%s:%s", t->plugin_lib, t->plugin_sym);
		return buf;
	default:
		return "accel";
	}
}

static char *header_json(const struct pd_agent_spec *s, const struct pd_agent_opts *o, int64_t t0_mono,
			 const char *cpusets, pd_power *pw, const char *accel_backend, const int *watch, size_t n_watch,
			 bool foreign)
{
	struct utsname u;
	uname(&u);
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	char hash[32], wb[600];
	snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)s->plan_hash);
	int64_t t0_rt = (int64_t)rt.tv_sec * PD_NS_PER_S + rt.tv_nsec + (t0_mono - exec_mono_ns());
	json_t *h = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:i, s:I, s:s, s:b}", "format",
			      PD_RUNLOG_FORMAT, "version", PD_RUNLOG_VERSION, "plan_hash", hash, "plan",
			      o->plan_path ? o->plan_path : "", "board", s->board ? s->board : "", "kernel", u.release,
			      "kernel_version", u.version, "machine", u.machine, "t0_mono_ns", (json_int_t)t0_mono,
			      "t0_realtime_ns", (json_int_t)t0_rt, "sample_hz", o->no_power ? 0 : o->sample_hz, "seed",
			      (json_int_t)o->seed, "cpusets", cpusets, "starvation_monitor", o->starvation_monitor);
	json_object_set_new(h, "accel_backend", json_string(accel_backend));
	/* 0: not sampled, so that a reader tells "no steal" from "not watched" */
	bool steal = n_watch > 0;
	json_object_set_new(h, "steal_period_ns", json_integer(steal ? PD_AGENT_STEAL_PERIOD_NS : 0));
	/* the same read of /proc/stat gives the busy time of the watched CPUs (BUSY records); a CPU
	 * that never got busy has no record, so the list says which ones were watched */
	json_object_set_new(h, "busy_period_ns", json_integer(steal ? PD_AGENT_STEAL_PERIOD_NS : 0));
	json_t *bc = json_array();
	for (size_t i = 0; i < n_watch; i++)
		json_array_append_new(bc, json_integer(watch[i]));
	json_object_set_new(h, "busy_cpus", bc);
	/* 0: not scanned (no CPU task), so that "no other SCHED_DEADLINE thread" reads as watched */
	json_object_set_new(h, "foreign_period_ns", json_integer(foreign ? PD_AGENT_FOREIGN_PERIOD_NS : 0));
	struct timespec pc;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &pc); /* start-up cost, to tell it from the steady state */
	json_object_set_new(h, "setup_cpu_ns", json_integer((json_int_t)pc.tv_sec * PD_NS_PER_S + pc.tv_nsec));
	json_object_set_new(h, "hostname", json_string(u.nodename));
	json_object_set_new(h, "agent_version", json_string(PD_VERSION));
	if (o->inject) { /* test-only injection: a run that carries one says so */
		char inj[200];
		snprintf(inj, sizeof(inj), "%s/%s:%llu:%g", o->inject->dag, o->inject->task,
			 (unsigned long long)o->inject->seq, o->inject->factor);
		json_object_set_new(h, "inject_overrun", json_string(inj));
	}
	json_t *tasks = json_array();
	for (size_t i = 0; i < s->n_tasks; i++) {
		const struct pd_agent_task *t = &s->tasks[i];
		json_t *o1 = json_pack("{s:s, s:s, s:i, s:I, s:I, s:I, s:I, s:s, s:b}", "name", t->name, "dag", t->dag_name,
				       "cpu", t->cpu, "runtime_ns", (json_int_t)t->runtime_ns, "deadline_ns",
				       (json_int_t)t->deadline_ns, "period_ns", (json_int_t)t->period_ns, "wcet_ns",
				       (json_int_t)t->wcet_ns, "work", work_name(t, wb, sizeof(wb)), "reclaim", t->reclaim);
		if (t->cpu < 0)
			json_object_set_new(o1, "accel", json_string(s->accels[t->accel].name));
		else
			json_object_set_new(o1, "kernel_runtime_ns", json_integer(exec_kernel_runtime(t, "/sys")));
		json_t *pr = json_array();
		for (size_t p = 0; p < t->n_preds; p++)
			json_array_append_new(pr, json_integer((json_int_t)t->preds[p]));
		json_object_set_new(o1, "preds", pr);
		json_array_append_new(tasks, o1);
	}
	json_object_set_new(h, "tasks", tasks);
	json_t *dags = json_array();
	for (size_t g = 0; g < s->n_dags; g++)
		json_array_append_new(dags, json_pack("{s:s, s:I, s:I, s:s}", "name", s->dags[g].name, "period_ns",
						      (json_int_t)s->dags[g].period_ns, "deadline_ns",
						      (json_int_t)s->dags[g].deadline_ns, "late", pd_dags_late_name(s->dags[g].late)));
	json_object_set_new(h, "dags", dags);
	json_t *rails = json_array();
	for (size_t r = 0; o->no_power ? false : r < s->n_rails; r++) {
		const struct pd_agent_rail *ra = &s->rails[r];
		json_array_append_new(rails, json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:s}", "name", ra->rail, "measures",
						       ra->measures, "uri", o->iio_uri ? o->iio_uri : ra->uri, "device",
						       ra->device, "channel", ra->channel, "scale", ra->scale, "state",
						       pw ? pd_agent_power_rail_state(pw, r) : "not sampled"));
	}
	json_object_set_new(h, "rails", rails);
	json_t *isl = json_array();
	for (size_t k = 0; k < s->n_islands; k++)
		json_array_append_new(isl, json_pack("{s:s, s:s, s:I}", "name", s->islands[k].name, "policy",
						     s->islands[k].policy, "plan_freq_khz", (json_int_t)s->islands[k].opp_khz));
	json_object_set_new(h, "islands", isl);
	json_t *acc = json_array();
	for (size_t a = 0; a < s->n_accels; a++)
		json_array_append_new(acc, json_pack("{s:s, s:s, s:I}", "name", s->accels[a].name, "kind",
						     pd_dags_accel_kind_name(s->accels[a].kind), "plan_freq_khz",
						     (json_int_t)s->accels[a].opp_khz));
	json_object_set_new(h, "accelerators", acc);
	char *txt = json_dumps(h, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(h);
	return txt;
}

static int64_t read_khz(const char *path, int64_t div)
{
	FILE *f = fopen(path, "re");
	long long v = -1;
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v < 0 ? -1 : v / div;
}

static void opp_snapshot(const struct pd_agent_spec *s, struct pd_runlog_ring *ring, int64_t t_ns)
{
	char p[512];
	for (size_t k = 0; k < s->n_islands; k++) {
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpufreq/%s/scaling_cur_freq", s->islands[k].policy);
		struct pd_runlog_opp_rec o = {PD_RUNLOG_OPP_ISLAND, (uint32_t)k, t_ns, read_khz(p, 1)};
		pd_runlog_put(ring, PD_RUNLOG_OPP, &o, sizeof(o));
	}
	for (size_t a = 0; a < s->n_accels; a++) {
		int64_t f = -1;
		if (s->accels[a].devfreq) {
			snprintf(p, sizeof(p), "/sys/class/devfreq/%s/cur_freq", s->accels[a].devfreq);
			f = read_khz(p, 1000); /* devfreq is in Hz */
		}
		struct pd_runlog_opp_rec o = {PD_RUNLOG_OPP_ACCEL, (uint32_t)a, t_ns, f};
		pd_runlog_put(ring, PD_RUNLOG_OPP, &o, sizeof(o));
	}
}

static int check_cpus(const struct pd_agent_spec *s, int *cpus, size_t *n, pd_err *e)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	*n = 0;
	for (size_t i = 0; i < s->n_tasks; i++) {
		int c = s->tasks[i].cpu;
		if (c < 0)
			continue;
		if (c >= ncpu || c >= 1024)
			return pd_err_set(e, PD_EXIT_ENV, "task '%s/%s' is placed on cpu%d but this machine has %ld CPUs: "
					  "deploy a plan computed for this board",
					  s->tasks[i].dag_name, s->tasks[i].name, c, ncpu);
		bool seen = false;
		for (size_t k = 0; k < *n; k++)
			seen |= cpus[k] == c;
		if (!seen)
			cpus[(*n)++] = c;
	}
	return 0;
}

/* Whether Linux CPU c is online (cpuN/online reads 1; a CPU without that file, e.g. cpu0 on most
 * kernels, cannot be taken offline). */
static bool cpu_online(int c)
{
	char p[96], b[4] = {0};
	snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/online", c);
	FILE *f = fopen(p, "re");
	if (!f)
		return true;
	bool on = fgets(b, sizeof(b), f) && b[0] == '1';
	fclose(f);
	return on;
}

/* The CPUs whose time the agent samples: the plan's (cpus[0..n)) and every online CPU of an island
 * the platform names. A rail measures its whole island, and the agent's own threads, iiod and sshd
 * may run on an island CPU where the plan places nothing; busy time there is what the rail saw too.
 * Steal keeps its meaning: the report counts it on the plan's CPUs only. */
static size_t watched_cpus(const struct pd_agent_spec *s, const int *cpus, size_t n, int *out)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		out[m++] = cpus[i];
	for (size_t k = 0; k < s->n_islands; k++)
		for (size_t j = 0; j < s->islands[k].n_cpus && m < 1024; j++) {
			int c = s->islands[k].cpus[j];
			bool seen = false;
			for (size_t i = 0; i < m && !seen; i++)
				seen = out[i] == c;
			if (!seen && c >= 0 && c < ncpu && c < 1024 && cpu_online(c))
				out[m++] = c;
		}
	return m;
}

static int ensure_dir(const char *dir, pd_err *e)
{
	if (mkdir(dir, 0755) == 0 || errno == EEXIST)
		return 0;
	return pd_err_set(e, PD_EXIT_ENV, "cannot create --out %s: %s", dir, strerror(errno));
}

/* The main thread's periodic work while the run lasts: host steal and busy time (st) every
 * PD_AGENT_STEAL_PERIOD_NS from t0 (the baseline), other processes' SCHED_DEADLINE threads (fg)
 * every PD_AGENT_FOREIGN_PERIOD_NS. Each on its own grid: a late wake-up skips to the next tick, the
 * counters lose nothing. */
struct periodic {
	pd_steal *st;
	pd_foreign *fg;
	int64_t t0, next_steal, next_foreign;
};

static int64_t next_tick(int64_t next, int64_t now, int64_t period)
{
	return next + ((now - next) / period + 1) * period;
}

/* Does what is due at now; returns when the next thing is due (INT64_MAX: nothing to do). */
static int64_t periodic_run(struct periodic *p, int64_t now, struct pd_runlog_ring *ring)
{
	if (p->st && now >= p->next_steal) {
		steal_sample(p->st, now - p->t0, ring);
		p->next_steal = next_tick(p->next_steal, now, PD_AGENT_STEAL_PERIOD_NS);
	}
	if (p->fg && now >= p->next_foreign) {
		foreign_sample(p->fg, now - p->t0, ring);
		p->next_foreign = next_tick(p->next_foreign, now, PD_AGENT_FOREIGN_PERIOD_NS);
	}
	int64_t next = INT64_MAX;
	if (p->st)
		next = p->next_steal;
	if (p->fg && p->next_foreign < next)
		next = p->next_foreign;
	return next;
}

/* Blocks until stop_abs (0 = forever) or SIGTERM/SIGINT; returns 1 when a signal stopped the run.
 * Meanwhile does the periodic work of p. */
static int wait_stop(int64_t stop_abs, struct periodic *p, struct pd_runlog_ring *ring)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	for (;;) {
		int64_t now = exec_mono_ns();
		/* the end first: a scan due at the end (500 ms divides most durations) would delay the stop
		 * by its few ms; finish() takes the last steal and busy sample itself */
		if (stop_abs && now >= stop_abs)
			return 0;
		int64_t next = periodic_run(p, now, ring);
		int64_t left = stop_abs ? stop_abs - now : PD_NS_PER_S;
		if (next - now < left)
			left = next - now;
		if (left > PD_NS_PER_S)
			left = PD_NS_PER_S;
		if (left < 0)
			left = 0;
		struct timespec ts = {left / PD_NS_PER_S, left % PD_NS_PER_S};
		int sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT)
			return 1;
	}
}

struct run {
	const struct pd_agent_opts *o;
	struct pd_agent_spec own_spec;
	const struct pd_agent_spec *s;
	struct pd_exec x;
	bool x_init;
	pd_agent_cpusets *cs;
	pd_power *pw;
	pd_runlog_writer *w;
	struct pd_agent_gpio_ops gpio;
	bool gpio_open;
	struct pd_agent_accel_ops accel;
	pd_steal *steal; /* NULL: host steal and busy time not sampled (header steal_period_ns, busy_period_ns 0) */
	pd_foreign *foreign; /* NULL: no CPU task, no scan (header foreign_period_ns 0) */
	int watch[1024]; /* the CPUs steal samples (watched_cpus): header busy_cpus; the plan's first */
	size_t n_watch, n_plan; /* watch[0..n_plan): the plan's CPUs (check_cpus, once) */
};

static int64_t process_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
}

static int load_accel_bitstreams(struct run *r, pd_err *e)
{
	const struct pd_agent_spec *s = r->s;
	for (size_t i = 0; i < s->n_tasks; i++) {
		const struct pd_agent_task *t = &s->tasks[i];
		if (t->work != PD_AW_ACCEL || !t->bitstream)
			continue;
		int rc = r->accel.load(r->accel.ctx, &s->accels[t->accel], t->slot, t->bitstream);
		if (rc)
			return pd_err_set(e, PD_EXIT_ENV, "task '%s/%s': cannot load bitstream %s on %s slot %d: %s",
					  t->dag_name, t->name, t->bitstream, s->accels[t->accel].name, t->slot, strerror(-rc));
	}
	return 0;
}

static int setup(struct run *r, pd_err *e)
{
	const struct pd_agent_opts *o = r->o;
	if (o->spec) {
		r->s = o->spec;
	} else {
		if (!o->plan_path)
			return pd_err_set(e, PD_EXIT_USAGE, "no plan given");
		int rc = pd_agent_spec_load(o->plan_path, &r->own_spec, o->log, e);
		if (rc)
			return rc;
		r->s = &r->own_spec;
	}
	if (o->sample_hz < 1 || o->sample_hz > 1000)
		return pd_err_set(e, PD_EXIT_USAGE, "--sample-hz %d: must be 1..1000", o->sample_hz);
	int cpus[1024];
	size_t n_cpus;
	int rc = check_cpus(r->s, cpus, &n_cpus, e);
	if (rc)
		return rc;
	/* before anything is made or changed: a run next to another reservation on its CPUs has no
	 * analysis behind it (foreign.c) */
	if (n_cpus && (rc = foreign_refuse("/proc", cpus, n_cpus, e)))
		return rc;
	if ((rc = ensure_dir(o->out_dir, e)))
		return rc;
	char path[4096];
	snprintf(path, sizeof(path), "%s/run.pdlog", o->out_dir);
	if (access(path, F_OK) == 0)
		return pd_err_set(e, PD_EXIT_USAGE, "%s exists: a run never overwrites a run log; use a fresh --out", path);
	if (o->gpio_ops) {
		r->gpio = *o->gpio_ops;
	} else if (o->gpio) {
		if ((rc = pd_agent_gpio_open_gpiod(o->gpio, &r->gpio, e)))
			return rc;
		r->gpio_open = true;
	}
	r->accel = o->accel_ops ? *o->accel_ops : pd_agent_accel_default(r->s, "/sys");
	if ((rc = load_accel_bitstreams(r, e)))
		return rc;
	r->x_init = true; /* exec_fini also frees a half-initialised executor */
	if ((rc = exec_init(&r->x, r->s, o->seed, e)))
		return rc;
	if (o->inject && (rc = exec_test_inject_overrun(&r->x, o->inject, e)))
		return rc;
	r->x.gpio = (o->gpio_ops || o->gpio) ? &r->gpio : NULL;
	r->x.accel = &r->accel;
	if (n_cpus) {
		r->cs = pd_agent_cpusets_prepare(o->cgroup_root, o->cgroup_base, cpus, n_cpus, e);
		if (!r->cs)
			return e->code;
		r->x.cs = r->cs;
	}
	if (!o->no_power && r->s->n_rails) {
		r->pw = pd_agent_power_open(r->s->rails, r->s->n_rails, o->iio_uri);
		if (!r->pw)
			return pd_err_set(e, PD_EXIT_ENV, "out of memory (power rails)");
	}
	if (n_cpus) { /* steal matters where the plan's reservations run, busy time on their islands */
		pd_err se = {0};
		r->n_watch = watched_cpus(r->s, cpus, n_cpus, r->watch);
		r->n_plan = n_cpus;
		r->steal = steal_open("/proc/stat", r->watch, r->n_watch, &se);
		if (!r->steal)
			fprintf(o->log ? o->log : stderr, "powerdag-agent: host steal and busy time not sampled: %s\n", se.msg);
		if (!(r->foreign = foreign_open("/proc", cpus, n_cpus)))
			return pd_err_set(e, PD_EXIT_ENV, "out of memory (foreign thread scan)");
	}
	return 0;
}

static void teardown(struct run *r)
{
	if (r->x_init)
		exec_fini(&r->x);
	pd_agent_cpusets_free(r->cs);
	pd_agent_power_close(r->pw);
	steal_close(r->steal);
	foreign_close(r->foreign);
	if (r->gpio_open)
		r->gpio.close(r->gpio.ctx);
	if (r->s == &r->own_spec)
		pd_agent_spec_free(&r->own_spec);
}

/* Puts every CPU task back to SCHED_OTHER: the undo of exec_admit, for the paths that stop a run
 * after admission and before its threads ran (a SCHED_DEADLINE thread woken to exit would be charged
 * against a reservation nobody planned for). */
static void revert_admission(struct run *r)
{
	for (size_t i = 0; i < r->x.n_tasks; i++)
		if (r->x.tasks[i].t->cpu >= 0)
			pd_agent_sched_set_other(r->x.tasks[i].tid);
}

/* Waits for the run's end, drains and joins the threads, writes the END record and closes the log. */
static int finish(struct run *r, pd_runlog_writer *w, struct pd_runlog_ring *main_ring, pd_sampler *smp, pd_starve *stv,
		  int64_t t0, pd_err *e)
{
	const struct pd_agent_opts *o = r->o;
	struct periodic p = {.st = r->steal, .fg = r->foreign, .t0 = t0, .next_steal = t0, .next_foreign = t0};
	int by_signal = wait_stop(o->duration_ns > 0 ? t0 + o->duration_ns : 0, &p, main_ring);
	int64_t stop = exec_mono_ns() - t0;
	exec_stop_at(&r->x, stop);
	int64_t max_d = 0;
	for (size_t g = 0; g < r->s->n_dags; g++)
		if (r->s->dags[g].deadline_ns > max_d)
			max_d = r->s->dags[g].deadline_ns;
	exec_join(&r->x, max_d + PD_NS_PER_S);
	pd_agent_starve_stop(stv);
	int64_t smp_cpu = sampler_stop(smp);
	int64_t end_t = exec_mono_ns() - t0;
	exec_flush_unfinished(&r->x, main_ring, end_t);
	opp_snapshot(r->s, main_ring, end_t);
	if (r->steal)
		steal_sample(r->steal, end_t, main_ring);
	struct pd_runlog_end_rec end = {.t_ns = end_t, .sampler_cpu_ns = smp_cpu, .process_cpu_ns = process_cpu_ns(),
				.reason = by_signal ? 1u : 0u};
	return pd_runlog_writer_close(w, &end, e);
}

/*
 * One clean-up path, unwound in the reverse order of set-up (each label undoes one stage and falls
 * through to the ones below it):
 *
 *   setup()  ------------------------------------------------------------> out_teardown
 *   signals blocked, writer made  -------------------------------------> out_sigmask
 *   threads spawned (maybe some), writer without file  ----------------> out_threads
 *   admitted: every CPU task SCHED_DEADLINE  --------------------------> out_admitted
 *   log open, writer started: the run; finish() joins and closes  -----> out_sigmask
 *
 * Invariant: a path that leaves after exec_admit() succeeded and before the threads ran reverts the
 * admission (out_admitted); exec_admit() reverts its own partial admission.
 */
int pd_agent_run(const struct pd_agent_opts *o, pd_err *e)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	r.o = o;
	FILE *log = o->log ? o->log : stderr;
	int rc = setup(&r, e);
	if (rc)
		goto out_teardown;
	exec_install_sigxcpu();
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old); /* threads inherit: only task threads unblock SIGXCPU */

	/* rings are registered on a writer without a file: the header needs t0, known after admission */
	pd_runlog_writer *w = pd_runlog_writer_new();
	if (!w) {
		rc = pd_err_set(e, PD_EXIT_ENV, "out of memory");
		goto out_sigmask;
	}
	struct pd_runlog_ring *main_ring = pd_runlog_add_ring(w, 80, 8192);
	struct pd_runlog_ring *pw_ring = pd_runlog_add_ring(w, 520, 4096);
	struct pd_runlog_ring *starve_ring = pd_runlog_add_ring(w, 80, 256);
	int64_t spawn_t = exec_mono_ns();
	rc = exec_spawn(&r.x, w, e);
	long bad = rc ? -1 : exec_wait_ready(&r.x);
	if (!rc && bad >= 0) {
		const struct pd_agent_task *t = r.x.tasks[bad].t;
		rc = pd_err_set(e, PD_EXIT_ENV, "task '%s/%s': cannot enter the cpuset of cpu%d (%s): %s", t->dag_name,
				t->name, t->cpu, pd_agent_cpusets_describe(r.cs), strerror(-r.x.tasks[bad].state));
	}
	if (!rc && r.cs)
		rc = pd_agent_cpusets_activate(r.cs, e);
	if (!rc)
		rc = exec_admit(&r.x, e);
	if (rc)
		goto out_threads;
	/* admitted. The board's OPPs as the run starts (recorded at t = 0) are read before t0 is fixed:
	 * files served by a board daemon (the twins' FUSE, a loaded board's sysfs) took 141 ms under TCG,
	 * which made the first two instances late when they were read after it. */
	opp_snapshot(r.s, main_ring, 0);
	/* t0 leaves every thread time to reach its first wait, and the rest of the start (the log's
	 * file, the writer, sampler and monitor threads) time to run before the first release: as long
	 * as spawning and admitting took on this board (a slow board is slow at both), at least 50 ms.
	 * A first release before exec_go() would be late by the agent's own start, not by the plan. */
	int64_t now = exec_mono_ns();
	int64_t lead = now - spawn_t > 50 * PD_NS_PER_MS ? now - spawn_t : 50 * PD_NS_PER_MS;
	/* exec_go wakes the admitted threads, which sleep again until their first release. That wake-up
	 * opens a CBS period for each reservation (deadline t_go + D_i, period end t_go + P_i), and the
	 * kernel throttles a constrained one (D_i < P_i) woken again after its deadline but before its
	 * period's end until that end (dl_check_constrained_dl), or cuts its budget to its density times
	 * the time left when woken before its deadline (the revised wake-up rule). So t0 is at least the
	 * longest period after the go: every period the go opened is over by the first release, which
	 * then gets a full budget and deadline t0 + D_i. Before, with t0 49.5 ms after the go, the
	 * source of a D = 30 ms, P = 100 ms DAG waited 51 ms on an idle CPU for its first job
	 * (tests/agents/plans/e2e.plan.yaml on Linux 6.18; a start slower than a period hid it). */
	int64_t t0 = now + lead + exec_longest_period(&r.x);
	char *hdr = header_json(r.s, o, t0, r.cs ? pd_agent_cpusets_describe(r.cs) : "none", r.pw, r.accel.name,
				r.watch, r.steal ? r.n_watch : 0, r.foreign != NULL);
	char final_path[4096];
	snprintf(final_path, sizeof(final_path), "%s/run.pdlog", o->out_dir);
	rc = pd_runlog_writer_open(w, final_path, hdr, e);
	free(hdr);
	if (!rc)
		rc = pd_runlog_writer_start(w, PD_AGENT_FLUSH_MS, e);
	if (rc)
		goto out_admitted;
	int64_t t_log = exec_mono_ns();
	pd_sampler *smp = r.pw ? sampler_start(r.pw, r.s->n_rails, o->sample_hz, t0, pw_ring, r.cs, r.watch, r.n_plan, e)
			       : NULL;
	int64_t t_smp = exec_mono_ns();
	pd_starve *stv = NULL;
	if (o->starvation_monitor) {
		stv = pd_agent_starve_start(r.watch, r.n_plan, o->starve_threshold_ns, t0, starve_ring, e);
		if (!stv)
			fprintf(log, "powerdag-agent: starvation monitor not started: %s\n", e->msg);
	}
	if (o->duration_ns > 0)
		exec_stop_at(&r.x, o->duration_ns);
	int64_t t_go = exec_mono_ns();
	if (t_go > t0) /* said, so that a late first instance is not read as the plan's */
		fprintf(log,
			"powerdag-agent: the start ended %.1f ms after the first release (lead %.1f ms: log %.1f, "
			"sampler %.1f, monitor %.1f ms): the first instances may be late\n",
			(double)(t_go - t0) / 1e6, (double)lead / 1e6, (double)(t_log - now) / 1e6,
			(double)(t_smp - t_log) / 1e6, (double)(t_go - t_smp) / 1e6);
	exec_go(&r.x, t0);
	fprintf(log, "powerdag-agent: running %zu tasks of %zu DAGs (%s)\n", r.s->n_tasks, r.s->n_dags,
		r.cs ? pd_agent_cpusets_describe(r.cs) : "no CPU tasks");
	rc = finish(&r, w, main_ring, smp, stv, t0, e);
	goto out_sigmask;

out_admitted:
	revert_admission(&r);
out_threads:
	exec_abort(&r.x);
	exec_join(&r.x, PD_NS_PER_S);
	pd_runlog_writer_close(w, NULL, NULL);
out_sigmask:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
out_teardown:
	teardown(&r);
	return rc ? rc : PD_EXIT_OK;
}
