/* SPDX-License-Identifier: MIT */
/*
 * The DAG executor: one thread per task.
 *
 * Job k of a task starts when (source) its DAG's theoretical release t0 + k*T has come, or
 * (otherwise) every predecessor has completed job k: a task "has completed k" when its completed
 * counter exceeds k. Predecessors bump their successors' futex word after publishing completion, so a
 * waiting thread can never miss a wake-up (it re-checks the counters against the word it read).
 * The hot loop (task_main's for) only waits, runs the work, stamps times and pushes one record into
 * the thread's own ring; every configuration decision was taken at set-up.
 *
 * A predecessor wakes a successor only when that successor's job has become ready (all its
 * predecessors completed it): a thread is never woken just to go back to sleep, which under
 * SCHED_DEADLINE would apply the CBS wake-up rule at a time the model (and the simulator) does not.
 *
 * Late-instance policy (docs/MODEL.md "Late instances", identical in simulator/sim_dag.c):
 *   queue  - every job runs, however late;
 *   resync - (1) a job is skipped (not executed; completed for precedence) when its thread is about
 *            to start it and its instance is past its end-to-end deadline or already abandoned;
 *            (2) a job that completes after its instance's deadline, or is skipped, wakes no
 *            successor (they skip it at their next wake-up); (3) a thread that finishes a job and
 *            finds its next job already ready (it fell behind) skips every job that is ready and
 *            sleeps: it never carries a stale reservation (the budget left by a throttled job, its
 *            postponed deadline and period) into the next job, and its next wake-up applies the
 *            CBS rule afresh;
 *            (4) a CPU task whose executed job k ends after the plan's latest finish F_i (k T + F_i)
 *            has a reservation whose period started later than the plan's (a late wake-up, a
 *            throttle), and the kernel keeps that phase for every later wake-up (constrained-
 *            deadline throttle). It must not be woken before A = s_k + (1 + m_k) T - (d - Q), s_k the
 *            job's start, m_k the periods its replenishments moved the reservation on
 *            (pd_plan_reanchor_until): the latest its next period can be, less the laxity a job can
 *            spare. Every job of the task that becomes ready before A is abandoned (its instance
 *            skipped) by whoever makes it ready (a predecessor, or the thread itself for a source's
 *            releases); the first job ready at or after A wakes it into a fresh period at the plan's
 *            phase. When the late job also started too late to fit its window (after k T + F_i -
 *            Q_i: the lateness came from upstream), the DAG re-anchors with it: its sources abandon
 *            the first instance released after the late end, without waking, so no task of the DAG
 *            is woken for that instance and every reservation whose phase drifted without a late
 *            end of its own (a source whose release a stall delayed, say) also wakes next into a
 *            fresh period.
 *
 * SIGXCPU (SCHED_FLAG_DL_OVERRUN) is process-directed but lands on the running, non-blocking thread,
 * i.e. the task that overran: every thread except task threads blocks it, and the handler counts it
 * through a thread-local pointer to that task's counter (the only per-thread global here, forced by
 * the signal interface).
 *
 * One file on purpose (~620 lines): the wake-up protocol and the four late-instance rules hold only
 * together (who wakes whom, who abandons what, in which order the completion is published), and
 * splitting them would put one invariant's halves in two files.
 */
#include "agents/exec_impl.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Thread_local _Atomic uint32_t *tls_sigxcpu;

static void on_sigxcpu(int sig)
{
	(void)sig;
	if (tls_sigxcpu)
		atomic_fetch_add_explicit(tls_sigxcpu, 1, memory_order_relaxed);
}

void exec_install_sigxcpu(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigxcpu;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGXCPU, &sa, NULL);
}

int64_t exec_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
}

static inline int64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec;
}

static void futex_wait(_Atomic uint32_t *w, uint32_t val, int64_t abs_mono_ns)
{
	if (abs_mono_ns > 0) {
		struct timespec ts = {abs_mono_ns / PD_NS_PER_S, abs_mono_ns % PD_NS_PER_S};
		/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC timeout: a release timer that the
		 * stop path can interrupt. */
		syscall(SYS_futex, w, FUTEX_WAIT_BITSET_PRIVATE, val, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
	} else {
		syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
	}
}

static void futex_wake(_Atomic uint32_t *w, int n)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

static void kick(_Atomic uint32_t *w)
{
	atomic_fetch_add_explicit(w, 1, memory_order_release);
	futex_wake(w, 1);
}

/* ---------------------------------------------------------------- waiting for job k */
static bool preds_done(const struct pd_xtask *xt, uint64_t k)
{
	for (size_t p = 0; p < xt->t->n_preds; p++)
		if (atomic_load_explicit(&xt->preds[p]->completed, memory_order_acquire) <= k)
			return false;
	return true;
}

static bool await_job(struct pd_xtask *xt, uint64_t k, int64_t release_abs)
{
	struct pd_exec *x = xt->x;
	for (;;) {
		uint32_t gen = atomic_load_explicit(&xt->wake, memory_order_acquire);
		if (atomic_load_explicit(&x->abort_all, memory_order_relaxed))
			return false;
		if (xt->t->n_preds == 0) {
			if ((int64_t)k >= atomic_load_explicit(&xt->dag->k_stop, memory_order_acquire))
				return false;
			if (exec_mono_ns() >= release_abs)
				return true;
			futex_wait(&xt->wake, gen, release_abs);
		} else {
			if (preds_done(xt, k))
				return true;
			if ((int64_t)k >= atomic_load_explicit(&xt->dag->k_stop, memory_order_acquire))
				return false;
			futex_wait(&xt->wake, gen, 0);
		}
	}
}

/* ---------------------------------------------------------------- one job */
static void finish_instance(struct pd_xtask *xt, uint64_t k, int64_t end_abs)
{
	struct pd_xdag *d = xt->dag;
	size_t s = k % PD_XSLOTS;
	int64_t cur = atomic_load(&d->finish[s]);
	while (cur < end_abs && !atomic_compare_exchange_weak(&d->finish[s], &cur, end_abs))
		;
	if (atomic_fetch_add(&d->done[s], 1) + 1 < d->n_sinks)
		return;
	int64_t fin = atomic_exchange(&d->finish[s], 0);
	atomic_store(&d->done[s], 0);
	struct pd_exec *x = xt->x;
	int64_t rel = (int64_t)k * d->d->period_ns;
	struct pd_runlog_instance_rec ir = {.dag = (uint32_t)(d - x->dags),
				    .seq = k,
				    .release_ns = rel,
				    .finish_ns = fin - x->t0_ns,
				    .response_ns = fin - x->t0_ns - rel};
	ir.miss = ir.response_ns > d->d->deadline_ns;
	if (atomic_load(&d->skipped[s]) == k + 1) { /* abandoned: no output, a miss */
		ir.miss = 1;
		ir.finish_ns = ir.response_ns = -1;
	}
	pd_runlog_put(xt->ring, PD_RUNLOG_INSTANCE, &ir, sizeof(ir));
	if (x->gpio)
		x->gpio->set(x->gpio->ctx, 0);
}

static int run_accel(struct pd_xtask *xt, uint64_t k, int64_t latency_ns)
{
	struct pd_exec *x = xt->x;
	const struct pd_agent_accel *a = &x->spec->accels[xt->t->accel];
	pthread_mutex_lock(&x->accel_locks[xt->t->accel]);
	int rc = x->accel->run(x->accel->ctx, a, xt->t, k, latency_ns);
	pthread_mutex_unlock(&x->accel_locks[xt->t->accel]);
	return rc;
}

/* Rule 4, the DAG's part: the first instance released after now_rel (ns after t0) is abandoned by the
 * sources without waking, so that no task of the DAG is woken for it and every reservation's next
 * wake-up (one period later) opens a fresh period at the plan's phase. */
static void reanchor_dag(struct pd_xdag *d, int64_t now_rel)
{
	int64_t k = now_rel / d->d->period_ns + 1;
	int64_t cur = atomic_load(&d->reanchor_seq);
	while (cur < k && !atomic_compare_exchange_weak(&d->reanchor_seq, &cur, k))
		;
}

/* Rule 4 applies to this job: a CPU task under resync whose job ended after k T + F_i. */
static bool late_finish(const struct pd_xtask *xt, int64_t release_abs, int64_t end)
{
	return xt->dag->resync && xt->t->cpu >= 0 && xt->t->finish_ns > 0 && end > release_abs + xt->t->finish_ns;
}

/* Resync: instance k is past its end-to-end deadline, or a job of it was skipped. */
static bool instance_over(const struct pd_xtask *xt, uint64_t k, int64_t release_abs)
{
	const struct pd_xdag *d = xt->dag;
	return d->resync && (atomic_load(&d->skipped[k % PD_XSLOTS]) == k + 1 ||
			     exec_mono_ns() >= release_abs + d->d->deadline_ns);
}

/* Job k could start now without waiting (what await_job would find at once). */
static bool job_ready_now(const struct pd_xtask *xt, uint64_t k, int64_t release_abs)
{
	if (xt->t->n_preds)
		return preds_done(xt, k);
	return (int64_t)k < atomic_load_explicit(&xt->dag->k_stop, memory_order_acquire) && exec_mono_ns() >= release_abs;
}

/* Successor su's job k is ready: seq_cst, paired with the seq_cst store of completed in run_job, so
 * that of two predecessors finishing at once at least one sees the other's completion and wakes su. */
static bool succ_ready(const struct pd_xtask *su, uint64_t k)
{
	for (size_t p = 0; p < su->t->n_preds; p++)
		if (atomic_load(&su->preds[p]->completed) <= k)
			return false;
	return true;
}

/* Rule 4: instance k is abandoned because one of its jobs became ready for a thread that must not
 * be woken yet (it is re-anchoring its reservation). */
static void abandon_instance(struct pd_xdag *d, uint64_t k)
{
	atomic_store(&d->skipped[k % PD_XSLOTS], k + 1);
}

/* Resync: job k is abandoned, not executed; successors are not woken for it. */
static void skip_job(struct pd_xtask *xt, uint64_t k, int64_t release_abs)
{
	struct pd_exec *x = xt->x;
	atomic_store(&xt->dag->skipped[k % PD_XSLOTS], k + 1);
	atomic_store(&xt->completed, k + 1);
	int64_t now = exec_mono_ns();
	struct pd_runlog_job_rec j = {.task = (uint32_t)xt->index,
			      .seq = k,
			      .release_ns = release_abs - x->t0_ns,
			      .start_ns = now - x->t0_ns,
			      .end_ns = now - x->t0_ns,
			      .cpu = xt->t->cpu >= 0 ? sched_getcpu() : -1,
			      .flags = PD_RUNLOG_JOB_SKIPPED};
	pd_runlog_put(xt->ring, PD_RUNLOG_JOB, &j, sizeof(j));
	if (xt->t->n_succs == 0)
		finish_instance(xt, k, now);
}

/* Wakes every successor whose job k this completion made ready, unless one of them must not be woken
 * yet (rule 4): then instance k is abandoned and none is woken for it (rule 2: a thread is woken only
 * for work it will do); they skip it at their next real wake-up. */
static void wake_successors(struct pd_xtask *xt, uint64_t k, int64_t now)
{
	for (size_t s = 0; s < xt->t->n_succs; s++)
		if (succ_ready(xt->succs[s], k) && now < atomic_load(&xt->succs[s]->reanchor_until)) {
			abandon_instance(xt->dag, k);
			return;
		}
	for (size_t s = 0; s < xt->t->n_succs; s++)
		if (succ_ready(xt->succs[s], k))
			kick(&xt->succs[s]->wake);
}

/* Test seam (PD_AGENT_INJECT_OVERRUN, exec_test_inject_overrun): job inject_seq of this task runs
 * inject_factor x its drawn demand; nothing happens unless a test asked for it. */
static inline void test_seam_overrun(const struct pd_xtask *xt, uint64_t k, int64_t *demand, int64_t *ref_ns)
{
	if (k != xt->inject_seq)
		return;
	*demand = (int64_t)((double)*demand * xt->inject_factor);
	*ref_ns = (int64_t)((double)*ref_ns * xt->inject_factor);
}

static void run_job(struct pd_xtask *xt, uint64_t k, int64_t release_abs)
{
	struct pd_exec *x = xt->x;
	if (x->gpio && xt->index == xt->dag->marker_task)
		x->gpio->set(x->gpio->ctx, 1);
	uint32_t sig0 = atomic_load_explicit(&xt->sigxcpu, memory_order_relaxed);
	int64_t start = exec_mono_ns();
	int64_t ref_ns;
	int64_t demand = work_draw(&xt->work, &ref_ns);
	test_seam_overrun(xt, k, &demand, &ref_ns);
	int64_t cpu0 = xt->t->work == PD_AW_BUSY ? 0 : thread_cpu_ns(), cpu1 = -1;
	int rc = xt->t->work == PD_AW_ACCEL ? run_accel(xt, k, demand)
					     : work_do(&xt->work, k, demand, ref_ns, &cpu0, &cpu1);
	int64_t end = exec_mono_ns();
	int64_t cpu = (cpu1 >= 0 ? cpu1 : thread_cpu_ns()) - cpu0;
	uint32_t throttles = atomic_load_explicit(&xt->sigxcpu, memory_order_relaxed) - sig0;
	bool late = late_finish(xt, release_abs, end);
	if (late) { /* rule 4: published before completion, so no predecessor of the next job misses it */
		atomic_store(&xt->reanchor_until,
			     pd_plan_reanchor_until(start, cpu + xt->t->overhead_ns, throttles, xt->t->period_ns,
						    xt->t->runtime_ns, xt->t->deadline_ns));
		/* late because it started late, on a constrained reservation (an implicit one leaves no
		 * phase behind: docs/MODEL.md rule 4) */
		if (start > release_abs + xt->t->finish_ns - xt->t->runtime_ns && xt->t->deadline_ns < xt->t->period_ns)
			reanchor_dag(xt->dag, end - x->t0_ns);
	}
	atomic_store(&xt->completed, k + 1);
	if (!instance_over(xt, k, release_abs)) /* resync: late successors skip it when they next wake */
		wake_successors(xt, k, end);
	struct pd_runlog_job_rec j = {.task = (uint32_t)xt->index,
			      .sigxcpu = throttles,
			      .seq = k,
			      .release_ns = release_abs - x->t0_ns,
			      .start_ns = start - x->t0_ns,
			      .end_ns = end - x->t0_ns,
			      .cpu_ns = cpu,
			      .demand_ns = demand,
			      .cpu = xt->t->cpu >= 0 ? sched_getcpu() : -1,
			      .flags = (xt->t->cpu >= 0 && cpu > xt->t->runtime_ns ? PD_RUNLOG_JOB_OVERRUN : 0) |
				       (rc ? PD_RUNLOG_JOB_FAILED : 0) | (late ? PD_RUNLOG_JOB_LATE : 0)};
	pd_runlog_put(xt->ring, PD_RUNLOG_JOB, &j, sizeof(j));
	if (xt->t->n_succs == 0)
		finish_instance(xt, k, end);
}

/* ---------------------------------------------------------------- thread */
static void *task_main(void *arg)
{
	struct pd_xtask *xt = arg;
	struct pd_exec *x = xt->x;
	atomic_store(&xt->tid, (int)gettid());
	int rc = 0;
	if (xt->t->cpu >= 0) {
		rc = pd_agent_cpusets_enter(x->cs, xt->t->cpu);
		if (rc == 0)
			work_calibrate(&xt->work, xt->t->cpu, x->sysfs_root);
	}
	atomic_store(&xt->state, rc ? rc : 1);
	kick(&x->ready);
	for (;;) {
		uint32_t g = atomic_load(&x->go);
		if (g)
			break;
		futex_wait(&x->go, 0, 0);
	}
	if (atomic_load(&x->go) != 1)
		return NULL;
	tls_sigxcpu = &xt->sigxcpu;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGXCPU);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);

	const int64_t period = xt->dag->d->period_ns;
	const bool resync = xt->dag->resync;
	bool behind = false; /* resync: the last job ran (CPU task) and the thread has not slept since */
	for (uint64_t k = 0;; k++) {
		int64_t release = x->t0_ns + (int64_t)k * period;
		if (behind && job_ready_now(xt, k, release)) {
			skip_job(xt, k, release);
			continue;
		}
		behind = false;
		if (xt->t->n_preds == 0 &&
		    (release < atomic_load(&xt->reanchor_until) || (int64_t)k <= atomic_load(&xt->dag->reanchor_seq)) &&
		    (int64_t)k < atomic_load_explicit(&xt->dag->k_stop, memory_order_acquire)) {
			abandon_instance(xt->dag, k); /* rule 4: a release before A, decided without waking */
			skip_job(xt, k, release);
			continue;
		}
		if (!await_job(xt, k, release))
			break;
		if (instance_over(xt, k, release)) {
			skip_job(xt, k, release);
			continue;
		}
		run_job(xt, k, release);
		behind = resync && xt->t->cpu >= 0; /* rule 3 is about a reservation: CPU tasks only */
	}
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	tls_sigxcpu = NULL;
	return NULL;
}

/* ---------------------------------------------------------------- set-up and tear-down */
int exec_init(struct pd_exec *x, const struct pd_agent_spec *s, uint64_t seed, pd_err *e)
{
	memset(x, 0, sizeof(*x));
	x->spec = s;
	x->sysfs_root = "/sys";
	x->n_tasks = s->n_tasks;
	x->n_dags = s->n_dags;
	x->tasks = calloc(s->n_tasks + 1, sizeof(*x->tasks));
	x->dags = calloc(s->n_dags + 1, sizeof(*x->dags));
	x->accel_locks = calloc(s->n_accels + 1, sizeof(*x->accel_locks));
	if (!x->tasks || !x->dags || !x->accel_locks)
		return pd_err_set(e, PD_EXIT_ENV, "out of memory");
	for (size_t a = 0; a < s->n_accels; a++)
		pthread_mutex_init(&x->accel_locks[a], NULL);
	for (size_t g = 0; g < s->n_dags; g++) {
		struct pd_xdag *d = &x->dags[g];
		d->d = &s->dags[g];
		atomic_store(&d->k_stop, INT64_MAX);
		atomic_store(&d->reanchor_seq, -1);
		d->marker_task = SIZE_MAX;
		d->resync = s->dags[g].late == PD_LATE_RESYNC;
	}
	for (size_t i = 0; i < s->n_tasks; i++) {
		struct pd_xtask *xt = &x->tasks[i];
		const struct pd_agent_task *t = &s->tasks[i];
		xt->t = t;
		xt->index = i;
		xt->x = x;
		xt->dag = &x->dags[t->dag];
		xt->inject_seq = UINT64_MAX;
		if (t->n_succs == 0)
			xt->dag->n_sinks++;
		if (t->n_preds == 0 && xt->dag->marker_task == SIZE_MAX)
			xt->dag->marker_task = i;
		xt->preds = calloc(t->n_preds + 1, sizeof(*xt->preds));
		xt->succs = calloc(t->n_succs + 1, sizeof(*xt->succs));
		if (!xt->preds || !xt->succs)
			return pd_err_set(e, PD_EXIT_ENV, "out of memory");
		for (size_t p = 0; p < t->n_preds; p++)
			xt->preds[p] = &x->tasks[t->preds[p]];
		for (size_t p = 0; p < t->n_succs; p++)
			xt->succs[p] = &x->tasks[t->succs[p]];
		if (work_init(&xt->work, t, seed, i, e))
			return e->code;
	}
	return 0;
}

int exec_test_inject_overrun(struct pd_exec *x, const struct pd_inject *inj, pd_err *e)
{
	for (size_t i = 0; i < x->n_tasks; i++) {
		const struct pd_agent_task *t = x->tasks[i].t;
		if (strcmp(t->dag_name, inj->dag) == 0 && strcmp(t->name, inj->task) == 0) {
			x->tasks[i].inject_seq = inj->seq;
			x->tasks[i].inject_factor = inj->factor;
			return 0;
		}
	}
	return pd_err_set(e, PD_EXIT_USAGE, "overrun injection: the plan has no task '%s/%s'", inj->dag, inj->task);
}

int exec_spawn(struct pd_exec *x, pd_runlog_writer *w, pd_err *e)
{
	for (size_t i = 0; i < x->n_tasks; i++) {
		struct pd_xtask *xt = &x->tasks[i];
		/* per thread ring: ~2 s of records at 1 kHz jobs, 64-byte slots */
		xt->ring = pd_runlog_add_ring(w, 80, 2048);
		if (!xt->ring)
			return pd_err_set(e, PD_EXIT_ENV, "out of memory (run-log ring)");
		int rc = pthread_create(&xt->th, NULL, task_main, xt);
		if (rc)
			return pd_err_set(e, PD_EXIT_ENV, "task '%s/%s': cannot create its thread: %s", xt->t->dag_name,
					  xt->t->name, strerror(rc));
		xt->started = true;
	}
	return 0;
}

long exec_wait_ready(struct pd_exec *x)
{
	for (;;) {
		uint32_t r = atomic_load(&x->ready);
		size_t n = 0;
		for (size_t i = 0; i < x->n_tasks; i++)
			n += x->tasks[i].state != 0;
		if (n == x->n_tasks)
			break;
		futex_wait(&x->ready, r, exec_mono_ns() + 100 * PD_NS_PER_MS);
	}
	for (size_t i = 0; i < x->n_tasks; i++)
		if (x->tasks[i].state < 0)
			return (long)i;
	return -1;
}

static const char *admission_fix(int err)
{
	switch (err) {
	case EBUSY:
		return "admission refused: the SCHED_DEADLINE bandwidth (runtime/period) on this CPU exceeds "
		       "sched_rt_runtime_us/sched_rt_period_us minus the fair server; run `powerdag check` on the plan, "
		       "lower the load or move tasks";
	case EPERM:
		return "permission denied: run as root (or with CAP_SYS_NICE) and give each CPU an exclusive cpuset "
		       "(--cgroup-root, or let the agent create one under /sys/fs/cgroup); a task pinned by affinity "
		       "is refused unless sched_rt_runtime_us is -1";
	case EINVAL:
		return "parameters refused: need 1024ns <= runtime <= deadline <= period and period within "
		       "sched_deadline_period_{min,max}_us";
	case ENOSYS:
		return "this kernel has no sched_setattr (SCHED_DEADLINE needs Linux >= 3.14)";
	default:
		return "cannot switch to SCHED_DEADLINE";
	}
}

int64_t exec_kernel_runtime(const struct pd_agent_task *t, const char *sysfs_root)
{
	/* The kernel charges everything the thread does, including the agent's own per-job work
	 * (wake-up, time stamps, the run-log record, waking successors). That is the platform's
	 * job_overhead, which the plan's runtime already covers (runtime = ceil((C + o)(1 + m))) and
	 * which optimize, check and simulate all know: no allowance of the agent's own here. */
	return pd_agent_runtime_for_kernel(t->runtime_ns, t->cpu, t->reclaim, sysfs_root);
}

int exec_admit(struct pd_exec *x, pd_err *e)
{
	for (size_t i = 0; i < x->n_tasks; i++) {
		struct pd_xtask *xt = &x->tasks[i];
		const struct pd_agent_task *t = xt->t;
		if (t->cpu < 0)
			continue;
		struct pd_agent_sched_attr a = {.size = sizeof(a), .sched_policy = PD_SCHED_DEADLINE};
		a.sched_flags = PD_SCHED_FLAG_DL_OVERRUN | PD_SCHED_FLAG_RESET_ON_FORK | (t->reclaim ? PD_SCHED_FLAG_RECLAIM : 0);
		a.sched_runtime = (uint64_t)exec_kernel_runtime(t, x->sysfs_root);
		a.sched_deadline = (uint64_t)t->deadline_ns;
		a.sched_period = (uint64_t)t->period_ns;
		int rc = pd_agent_sched_setattr(atomic_load(&xt->tid), &a);
		if (rc) {
			for (size_t j = 0; j < i; j++)
				if (x->tasks[j].t->cpu >= 0)
					pd_agent_sched_set_other(atomic_load(&x->tasks[j].tid));
			char r[32], d[32], p[32];
			return pd_err_set(e, PD_EXIT_ENV, "task '%s/%s' on cpu%d (runtime %s, deadline %s, period %s): %s: %s",
					  t->dag_name, t->name, t->cpu, pd_fmt_duration((int64_t)a.sched_runtime, r, sizeof(r)),
					  pd_fmt_duration(t->deadline_ns, d, sizeof(d)), pd_fmt_duration(t->period_ns, p, sizeof(p)),
					  strerror(-rc), admission_fix(-rc));
		}
	}
	return 0;
}

int64_t exec_longest_period(const struct pd_exec *x)
{
	int64_t p = 0;
	for (size_t i = 0; i < x->n_tasks; i++) {
		const struct pd_agent_task *t = x->tasks[i].t;
		if (t->cpu >= 0 && t->period_ns > p)
			p = t->period_ns;
	}
	return p;
}

void exec_go(struct pd_exec *x, int64_t t0_ns)
{
	x->t0_ns = t0_ns;
	atomic_store(&x->go, 1);
	futex_wake(&x->go, INT32_MAX);
}

void exec_abort(struct pd_exec *x)
{
	atomic_store(&x->go, 2);
	futex_wake(&x->go, INT32_MAX);
}

void exec_stop_at(struct pd_exec *x, int64_t stop_ns)
{
	for (size_t g = 0; g < x->n_dags; g++) {
		struct pd_xdag *d = &x->dags[g];
		int64_t T = d->d->period_ns;
		int64_t k = stop_ns <= 0 ? 0 : (stop_ns + T - 1) / T; /* releases strictly before stop_ns */
		int64_t cur = atomic_load(&d->k_stop);
		if (k < cur)
			atomic_store(&d->k_stop, k);
	}
	for (size_t i = 0; i < x->n_tasks; i++)
		kick(&x->tasks[i].wake);
}

void exec_join(struct pd_exec *x, int64_t drain_ns)
{
	int64_t limit = exec_mono_ns() + drain_ns;
	for (size_t i = 0; i < x->n_tasks; i++) {
		struct pd_xtask *xt = &x->tasks[i];
		if (!xt->started)
			continue;
		int64_t now = exec_mono_ns();
		if (now < limit && !atomic_load(&x->abort_all)) {
			int64_t l = limit;
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			int64_t rt = (int64_t)ts.tv_sec * PD_NS_PER_S + ts.tv_nsec + (l - now);
			ts.tv_sec = rt / PD_NS_PER_S;
			ts.tv_nsec = rt % PD_NS_PER_S;
			if (pthread_timedjoin_np(xt->th, NULL, &ts) == 0) {
				xt->started = false;
				continue;
			}
		}
		/* drain timeout: a thread still waits for a predecessor that will never come */
		atomic_store(&x->abort_all, 1);
		for (size_t j = 0; j < x->n_tasks; j++)
			kick(&x->tasks[j].wake);
		pthread_join(xt->th, NULL);
		xt->started = false;
	}
}

void exec_flush_unfinished(struct pd_exec *x, struct pd_runlog_ring *ring, int64_t end_ns)
{
	for (size_t g = 0; g < x->n_dags; g++) {
		struct pd_xdag *d = &x->dags[g];
		/* sinks complete in order: instances [min completed, k_stop) never finished */
		uint64_t k = UINT64_MAX;
		for (size_t i = d->d->first_task; i < d->d->first_task + d->d->n_tasks; i++)
			if (x->tasks[i].t->n_succs == 0 && atomic_load(&x->tasks[i].completed) < k)
				k = atomic_load(&x->tasks[i].completed);
		int64_t k_stop = atomic_load(&d->k_stop);
		for (; k != UINT64_MAX && (int64_t)k < k_stop; k++) {
			int64_t rel = (int64_t)k * d->d->period_ns;
			if (rel + d->d->deadline_ns > end_ns)
				break; /* still within its deadline when the run stopped: not judged */
			struct pd_runlog_instance_rec ir = {.dag = (uint32_t)g, .miss = 1, .seq = k, .release_ns = rel,
						    .finish_ns = -1, .response_ns = -1};
			pd_runlog_put(ring, PD_RUNLOG_INSTANCE, &ir, sizeof(ir));
		}
	}
}

void exec_fini(struct pd_exec *x)
{
	for (size_t i = 0; i < x->n_tasks && x->tasks; i++) {
		work_fini(&x->tasks[i].work);
		free(x->tasks[i].preds);
		free(x->tasks[i].succs);
	}
	for (size_t a = 0; x->accel_locks && a < x->spec->n_accels; a++)
		pthread_mutex_destroy(&x->accel_locks[a]);
	free(x->accel_locks);
	free(x->tasks);
	free(x->dags);
	memset(x, 0, sizeof(*x));
}
