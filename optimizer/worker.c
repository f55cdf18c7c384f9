/* SPDX-License-Identifier: MIT */
/*
 * The solver worker: every search runs in a forked child, so that nothing a solver library does can
 * take the plan down with it, and so that --time-limit is a hard wall-clock limit.
 *
 * Why a process: GLPK ends the process on an internal error (an assertion such as "teta_lim >= 0.0"
 * in its primal simplex, running out of memory): it calls abort() unless an error hook longjmps out,
 * after which the whole GLPK environment must be freed and may not be touched again, together with
 * every problem object our own structures still point to. A child can simply die. It also cannot
 * overrun: CBC and GLPK check their clocks only between nodes or iterations, and the parent kills
 * the child at the hard deadline whatever it is doing.
 *
 * Protocol (the invariant the parent relies on): the child writes every incumbent it adopts into a
 * shared page (MAP_SHARED | MAP_ANONYMOUS) before it continues, double buffered: the new solution
 * goes into the slot that is not active, and only then is `active` switched to it with one aligned
 * store. Whenever the child stops (normally, crash, kill), `active` names a complete solution that
 * passed the exact evaluator, or none (-1). Lower bounds are published the same way: each one is
 * valid on its own (already taken as min(bound, cut-off at that moment)), so the largest is kept.
 * The parent reads the page only after the child has been reaped, so there is no concurrent access,
 * with one exception: the power of the best plan published (best_w), a single double written with
 * an atomic store, which the other worker of a portfolio and the parent read while it runs.
 *
 *   parent: publish page -> fork -> poll(waitpid, 1 ms) until exit or hard deadline -> SIGKILL -> reap
 *   child:  hooks (GLPK error -> record reason, _exit) -> work -> publish rc, bound -> _exit
 */
#include "optimizer/opt_impl.h"

#include <errno.h>
#include <math.h>
#include <glpk.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Exit code of a child whose GLPK reported an internal error (its message is in reason). */
#define GLPK_ERROR_EXIT 97

struct opt_pub {
	size_t bytes, slot_bytes;
	size_t o_isl, o_acc, o_where, o_d, o_dl; /* offsets inside a slot */
	int active;                            /* -1: no solution yet; else the complete slot */
	/* solutions published so far, counted after active flips: a slot is written only while it is
	 * not active, so a copy of the active slot during which seq did not change is whole (opt_peer_take) */
	unsigned long seq;
	/* the OPP vector the hull's point suggests (hull.c), after the two slots: islands, then
	 * accelerators; hint_seq is odd while it is written (a seqlock: opt_peer_hint) and 0 until the first */
	unsigned long hint_seq;
	/* the power of the best solution published (INFINITY: none), written by the worker alone with
	 * one atomic store after its slot is complete, read at any time by the other worker of a
	 * portfolio (opt_peer_w) and by the parent (opt_workers_run) */
	double best_w;
	double gap; /* the instance's rel_gap (what a combined plan and bound must reach) */
	bool have_lb;
	double lb;
	int used;          /* enum opt_used */
	bool done, proven; /* the work function returned (rc, proven meaningful) */
	int rc;
	pid_t pid;         /* the worker (written by the intermediate process that forked it) */
	int sig;           /* the fatal signal the worker caught, 0 none */
	bool glpk_error;   /* the worker ended through GLPK's error hook */
	char reason[256];  /* child: why it failed (its last GLPK message, or the error text) */
	size_t reason_len;
	unsigned char data[]; /* two slots */
};

struct slot_hdr {
	double power_w, slack;
	int ok;
};

static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

struct opt_pub *opt_pub_new(const struct opt_inst *in)
{
	size_t o = align8(sizeof(struct slot_hdr));
	size_t o_isl = o;
	o = align8(o + in->n_isl * sizeof(size_t));
	size_t o_acc = o;
	o = align8(o + in->n_acc * sizeof(size_t));
	size_t o_where = o;
	o = align8(o + in->n_tasks * sizeof(int));
	size_t o_d = o;
	o = align8(o + in->n_tasks * sizeof(double));
	size_t o_dl = o;
	o = align8(o + in->n_tasks * sizeof(int64_t));
	size_t bytes = sizeof(struct opt_pub) + 2 * o + (in->n_isl + in->n_acc) * sizeof(size_t);
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct opt_pub *P = m;
	memset(P, 0, sizeof(*P));
	P->bytes = bytes, P->slot_bytes = o;
	P->o_isl = o_isl, P->o_acc = o_acc, P->o_where = o_where, P->o_d = o_d, P->o_dl = o_dl;
	P->active = -1;
	P->lb = -INFINITY;
	P->best_w = INFINITY;
	P->gap = in->rel_gap;
	return P;
}

void opt_pub_free(struct opt_pub *P)
{
	if (P)
		munmap(P, P->bytes);
}

void opt_pub_sol(const struct opt_inst *in, const struct opt_sol *s)
{
	struct opt_pub *P = in->pub;
	if (!P || !s->ok)
		return;
	int next = P->active == 0 ? 1 : 0;
	unsigned char *b = P->data + (size_t)next * P->slot_bytes;
	struct slot_hdr h = {s->power_w, s->slack, s->ok};
	memcpy(b, &h, sizeof(h));
	memcpy(b + P->o_isl, s->isl_opp, in->n_isl * sizeof(size_t));
	memcpy(b + P->o_acc, s->acc_opp, in->n_acc * sizeof(size_t));
	memcpy(b + P->o_where, s->where, in->n_tasks * sizeof(int));
	memcpy(b + P->o_d, s->d_ns, in->n_tasks * sizeof(double));
	memcpy(b + P->o_dl, s->dl_ns, in->n_tasks * sizeof(int64_t));
	__atomic_store_n(&P->active, next, __ATOMIC_RELEASE); /* the slot is complete from here on */
	__atomic_add_fetch(&P->seq, 1, __ATOMIC_RELEASE);
	double w = s->power_w < P->best_w ? s->power_w : P->best_w; /* only this process writes it */
	__atomic_store(&P->best_w, &w, __ATOMIC_RELEASE);
}

double opt_pub_best_w(const struct opt_pub *P)
{
	double w;
	__atomic_load(&P->best_w, &w, __ATOMIC_ACQUIRE);
	return w;
}

double opt_peer_w(const struct opt_inst *in)
{
	return in->peer ? opt_pub_best_w(in->peer) : INFINITY;
}

void opt_pub_bound(const struct opt_inst *in, double lb)
{
	struct opt_pub *P = in->pub;
	if (!P || isnan(lb))
		return;
	if (!P->have_lb || lb > P->lb)
		P->lb = lb;
	P->have_lb = true;
}

void opt_pub_used(const struct opt_inst *in, enum opt_used u)
{
	if (in->pub)
		in->pub->used = (int)u;
}

bool opt_pub_take(const struct opt_pub *P, const struct opt_inst *in, struct opt_sol *dst)
{
	int a = __atomic_load_n(&P->active, __ATOMIC_ACQUIRE);
	if (a < 0)
		return false;
	const unsigned char *b = P->data + (size_t)a * P->slot_bytes;
	struct slot_hdr h;
	memcpy(&h, b, sizeof(h));
	memcpy(dst->isl_opp, b + P->o_isl, in->n_isl * sizeof(size_t));
	memcpy(dst->acc_opp, b + P->o_acc, in->n_acc * sizeof(size_t));
	memcpy(dst->where, b + P->o_where, in->n_tasks * sizeof(int));
	memcpy(dst->d_ns, b + P->o_d, in->n_tasks * sizeof(double));
	memcpy(dst->dl_ns, b + P->o_dl, in->n_tasks * sizeof(int64_t));
	dst->power_w = h.power_w, dst->slack = h.slack, dst->ok = h.ok != 0;
	return dst->ok;
}

/*
 * The other worker's plan while it runs (in->peer): a copy of its active slot, taken again when a
 * publication completed meanwhile (the slot read may then have been rewritten), then checked by the
 * evaluator, so that only a whole, valid plan comes back. Why: the hull's worker (optimize.c) starts
 * its plans from the better of its own and the search worker's (hull_plans.c); its own heuristic plan
 * was 5 % dearer than the search's on an Xavier 120-task set (seed 8733566).
 */
bool opt_peer_take(const struct opt_inst *in, struct opt_sol *dst)
{
	const struct opt_pub *P = in->peer;
	for (int tries = 0; P && tries < 4; tries++) {
		unsigned long s1 = __atomic_load_n(&P->seq, __ATOMIC_ACQUIRE);
		if (!opt_pub_take(P, in, dst))
			return false;
		unsigned long s2 = __atomic_load_n(&P->seq, __ATOMIC_ACQUIRE);
		if (s1 == s2)
			return opt_evaluate(in, dst, NULL, 0);
	}
	dst->ok = false;
	return false;
}

static size_t *hint_area(const struct opt_pub *P) { return (size_t *)(void *)(P->data + 2 * P->slot_bytes); }

void opt_pub_hint(const struct opt_inst *in, const struct opt_sol *hint)
{
	struct opt_pub *P = in->pub;
	if (!P || !hint->ok)
		return;
	size_t *h = hint_area(P);
	__atomic_add_fetch(&P->hint_seq, 1, __ATOMIC_ACQ_REL); /* odd: being written */
	for (size_t k = 0; k < in->n_isl; k++)
		__atomic_store_n(&h[k], hint->isl_opp[k], __ATOMIC_RELAXED);
	for (size_t a = 0; a < in->n_acc; a++)
		__atomic_store_n(&h[in->n_isl + a], hint->acc_opp[a], __ATOMIC_RELAXED);
	__atomic_add_fetch(&P->hint_seq, 1, __ATOMIC_RELEASE);
}

bool opt_peer_hint(const struct opt_inst *in, struct opt_sol *dst)
{
	const struct opt_pub *P = in->peer;
	dst->ok = false;
	for (int tries = 0; P && tries < 4 && !dst->ok; tries++) {
		unsigned long s1 = __atomic_load_n(&P->hint_seq, __ATOMIC_ACQUIRE);
		if (!s1)
			return false; /* none yet */
		const size_t *h = hint_area(P);
		for (size_t k = 0; k < in->n_isl; k++)
			dst->isl_opp[k] = __atomic_load_n(&h[k], __ATOMIC_RELAXED);
		for (size_t a = 0; a < in->n_acc; a++)
			dst->acc_opp[a] = __atomic_load_n(&h[in->n_isl + a], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		dst->ok = s1 % 2 == 0 && __atomic_load_n(&P->hint_seq, __ATOMIC_RELAXED) == s1;
	}
	return dst->ok;
}

int opt_pub_fail(const struct opt_inst *in, const char *why)
{
	struct opt_pub *P = in->pub;
	if (P) {
		snprintf(P->reason, sizeof(P->reason), "%s", why);
		P->reason_len = strlen(P->reason);
	}
	return -1;
}

void opt_pub_set_proven(const struct opt_inst *in, bool proven)
{
	if (in->pub)
		in->pub->proven = proven;
}

bool opt_pub_proven(const struct opt_pub *P) { return P->proven; }

double opt_pub_lb(const struct opt_pub *P) { return P->have_lb ? P->lb : -INFINITY; }
enum opt_used opt_pub_used_get(const struct opt_pub *P) { return (enum opt_used)P->used; }

/* ---------------------------------------------------------------- child side */

/* GLPK's terminal output in the child: kept (last bytes) as the failure reason, never printed. */
static int term_hook(void *info, const char *s)
{
	struct opt_pub *P = info;
	size_t n = strlen(s), cap = sizeof(P->reason) - 1;
	if (n >= cap) {
		s += n - cap;
		n = cap;
	}
	if (P->reason_len + n > cap) { /* keep the tail: the error message comes last */
		size_t drop = P->reason_len + n - cap;
		memmove(P->reason, P->reason + drop, P->reason_len - drop);
		P->reason_len -= drop;
	}
	memcpy(P->reason + P->reason_len, s, n);
	P->reason_len += n;
	P->reason[P->reason_len] = 0;
	return 1;
}

/* GLPK calls this on an internal error instead of abort(); its message is already in reason. */
static void error_hook(void *info)
{
	struct opt_pub *P = info;
	P->glpk_error = true;
	_exit(GLPK_ERROR_EXIT);
}

/* The worker is nobody's child to wait for (see opt_workers_run), so it records its own fatal
 * signal for the parent, then dies of it as it would have. Async-signal-safe: one store, raise. */
static struct opt_pub *crash_page; /* the worker process's own page: set once in child(), read here */
static void on_fatal(int sig)
{
	if (crash_page)
		crash_page->sig = sig;
	signal(sig, SIG_DFL);
	raise(sig);
}

static void child(struct opt_pub *P, opt_work_fn fn, void *arg)
{
	P->reason_len = 0;
	P->reason[0] = 0;
	glp_term_hook(term_hook, P);
	glp_error_hook(error_hook, P);
	crash_page = P;
	static const int fatal[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], on_fatal);
	int rc = fn(arg);
	P->rc = rc;
	__atomic_store_n(&P->done, true, __ATOMIC_RELEASE);
	_exit(0); /* _exit: the parent's stdio buffers must not be flushed twice */
}

/* ---------------------------------------------------------------- parent side */

static void why_crashed(struct opt_worker_end *end, const struct opt_pub *P)
{
	char tail[200] = "";
	/* the reason's last line that says something: GLPK ends with "Error detected in file ..." */
	const char *r = P->reason;
	size_t n = strnlen(r, sizeof(P->reason));
	while (n && (r[n - 1] == '\n' || r[n - 1] == ' '))
		n--;
	size_t start = n;
	int lines = 0;
	while (start && lines < 2) {
		start--;
		if (r[start] == '\n' && ++lines == 2)
			start++;
	}
	snprintf(tail, sizeof(tail), "%.*s", (int)(n - start), r + start);
	for (char *c = tail; *c; c++)
		if (*c == '\n')
			*c = ';';
	if (P->glpk_error)
		snprintf(end->reason, sizeof(end->reason), "GLPK internal error: %s", tail[0] ? tail : "(no message)");
	else if (P->sig)
		snprintf(end->reason, sizeof(end->reason), "the solver process died of signal %d (%s)%s%.150s", P->sig,
			 strsignal(P->sig), tail[0] ? "; last solver message: " : "", tail);
	else
		snprintf(end->reason, sizeof(end->reason),
			 "the solver process ended without a result (killed from outside, e.g. for memory)");
}

static void ended(struct opt_worker_end *end, const struct opt_pub *P, bool killed)
{
	if (__atomic_load_n(&P->done, __ATOMIC_ACQUIRE)) {
		end->how = OPT_END_DONE;
		end->rc = P->rc;
		if (P->rc)
			snprintf(end->reason, sizeof(end->reason), "%s", P->reason);
	} else if (killed) {
		end->how = OPT_END_KILLED;
	} else {
		end->how = OPT_END_CRASH;
		why_crashed(end, P);
	}
}

/* Starts worker i as a grandchild: the intermediate process exits at once (reaped here), so the
 * worker is never waited for. Waiting would cost the limit: a killed worker that has been using the
 * CPU may wait long for a CPU to die on (measured 0.35 s past the kill at load 10), while the page
 * is complete the moment it stops running. Its end is seen as EOF on fd (it holds the only write
 * end). Returns the read end, or -1. */
static int start(struct opt_pub *P, opt_work_fn fn, void *arg, double kill_at_s, const int *close_fds, size_t n_close)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	pid_t mid = fork();
	if (mid < 0) {
		close(fd[0]), close(fd[1]);
		return -1;
	}
	if (mid == 0) {
		close(fd[0]);
		for (size_t j = 0; j < n_close; j++)
			close(close_fds[j]);
		pid_t w = fork();
		if (w == 0) {
			/* never outlive the limit by much, even if the parent died and nobody kills it */
			double left = kill_at_s - opt_now_s();
			alarm((unsigned)(left > 0 ? left : 0) + 2);
			child(P, fn, arg);
		}
		P->pid = w; /* < 0: fork failed; the parent then sees EOF with nothing done */
		_exit(0);
	}
	close(fd[1]);
	while (waitpid(mid, NULL, 0) < 0 && errno == EINTR)
		;
	return fd[0];
}

/*
 * Whether a worker that ended decided the instance, so that the others cannot add anything: it
 * proved its plan optimal, or it proved that no plan exists (its bound is +infinity: every vector
 * closed without a plan). Why the second: with --backend auto on the ZCU102 the CBC worker proves
 * some 50-task sets infeasible in 0.02 s while the GLPK worker searches until the limit; the answer
 * then took the whole limit (9.75 s of 10 s, 19.75 s of 20 s) where it was known at once.
 */
static bool decided(const struct opt_worker_end *end, const struct opt_pub *P)
{
	if (end->how != OPT_END_DONE || end->rc)
		return false;
	return P->proven || (P->have_lb && isinf(P->lb) && P->lb > 0);
}

/*
 * Whether the workers decided the instance together: the bound of a worker that ended normally
 * certifies the best plan any of them has published within the gap. Why: in the small sets'
 * portfolio (optimize.c) one worker's search closes every vector against the other's plan
 * (cut_w); it then ends with that plan's cut-off as its bound but is not "proven" itself (its own
 * plan is dearer), and the other one, whose plan it is, may never close its own hardest vector.
 * The bound of a worker still running is not read (the parent reads its page only once it ended);
 * the plans' powers are, through their atomic field.
 */
static bool decided_together(size_t n, struct opt_pub *const *P, const struct opt_worker_end *ends, const bool *over)
{
	double best = INFINITY, lb = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		best = fmin(best, opt_pub_best_w(P[i]));
		if (over[i] && ends[i].how == OPT_END_DONE && !ends[i].rc && P[i]->have_lb)
			lb = fmax(lb, P[i]->lb);
	}
	return isfinite(best) && lb >= best * (1 - P[0]->gap - OPT_GAP_FLOAT_SLACK);
}

int opt_workers_run(size_t n, struct opt_pub *const *P, double kill_at_s, opt_work_fn fn, void *const *args,
		    struct opt_worker_end *ends)
{
	int fds[OPT_MAX_WORKERS];
	struct pollfd pf[OPT_MAX_WORKERS];
	size_t left = 0;
	if (n > OPT_MAX_WORKERS)
		n = OPT_MAX_WORKERS;
	fflush(NULL); /* the workers inherit the buffers; they never flush them, but be tidy */
	for (size_t i = 0; i < n; i++) {
		memset(&ends[i], 0, sizeof(ends[i]));
		fds[i] = start(P[i], fn, args[i], kill_at_s, fds, i);
		pf[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		if (fds[i] >= 0 && P[i]->pid > 0) {
			left++;
			continue;
		}
		if (fds[i] >= 0)
			close(fds[i]), fds[i] = -1, pf[i].fd = -1;
		ends[i].how = OPT_END_SKIPPED;
		snprintf(ends[i].reason, sizeof(ends[i].reason), "fork: %s", strerror(errno));
		if (i == 0) { /* no process to spare: run in this one (no crash isolation, no hard kill) */
			ends[0].how = OPT_END_INPROC;
			ends[0].rc = fn(args[0]);
			for (size_t j = 1; j < n; j++)
				ends[j].how = OPT_END_SKIPPED;
			return 0;
		}
	}
	bool stop_all = false, over[OPT_MAX_WORKERS] = {false};
	while (left) {
		double rest = kill_at_s - opt_now_s();
		if (rest <= 0 || stop_all)
			break;
		int ms = (int)ceil(rest * 1000.0);
		if (poll(pf, n, ms) < 0 && errno != EINTR)
			break;
		for (size_t i = 0; i < n; i++) {
			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			char b;
			if (read(pf[i].fd, &b, 1) > 0) /* nobody writes; only EOF matters */
				continue;
			close(pf[i].fd);
			pf[i].fd = fds[i] = -1;
			left--;
			ended(&ends[i], P[i], false);
			over[i] = true;
			stop_all = stop_all || decided(&ends[i], P[i]) || decided_together(n, P, ends, over);
		}
	}
	if (left) { /* the hard deadline: kill, and do not wait for them to be gone */
		for (size_t i = 0; i < n; i++)
			if (fds[i] >= 0)
				kill(P[i]->pid, SIGKILL);
		/* A killed process runs no more user code (SIGKILL is acted on before any return to user
		 * space, and a running one is interrupted at once); 1 ms covers the interrupt. The page
		 * is consistent whenever the writer is stopped (double buffer, opt_pub_sol). */
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
		for (size_t i = 0; i < n; i++)
			if (fds[i] >= 0) {
				close(fds[i]);
				ended(&ends[i], P[i], true);
			}
	}
	return 0;
}
