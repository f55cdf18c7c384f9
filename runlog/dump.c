/* SPDX-License-Identifier: MIT */
/* Text views of a run log: a summary (key: value) and CSV tables, for people and bench scripts. */
#include "runlog/pd_runlog.h"

#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int64_t pct(const int64_t *v, size_t n, double p)
{
	if (!n)
		return 0;
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static int64_t steal_ns_of(const pd_runlog *r, size_t i) { return pd_runlog_steal(r, i)->steal_ns; }
static int64_t busy_ns_of(const pd_runlog *r, size_t i) { return pd_runlog_busy(r, i)->busy_ns; }

/* "NAME_ms: total (records, period)" of per-CPU time records (STEAL or BUSY: the agent samples only
 * the plan's CPUs), or "not sampled" when the header says the agent did not sample them. */
static void cpu_time_line(const pd_runlog *r, FILE *o, const char *name, int64_t period, size_t n,
			  int64_t (*ns_of)(const pd_runlog *, size_t))
{
	if (period <= 0) {
		fprintf(o, "%s_ms: not sampled\n", name);
		return;
	}
	int64_t sum = 0;
	for (size_t i = 0; i < n; i++) { /* each <= 2^60 (reader): saturate the sum */
		int64_t v = ns_of(r, i);
		sum = v > INT64_MAX - sum ? INT64_MAX : sum + v;
	}
	fprintf(o, "%s_ms: %.3f (%zu records, sampled every %.0f ms)\n", name, (double)sum / 1e6, n, (double)period / 1e6);
}

/* A FOREIGN record's comm as one CSV field: terminal-safe (pd_esc) and without the separator (a
 * thread names itself: a comma there would shift the columns). */
static const char *foreign_comm(const struct pd_runlog_foreign_rec *f, char *buf, size_t n)
{
	char raw[PD_RUNLOG_COMM_LEN + 1];
	memcpy(raw, f->comm, PD_RUNLOG_COMM_LEN);
	raw[PD_RUNLOG_COMM_LEN] = '\0';
	pd_esc(raw, buf, n);
	for (char *c = buf; *c; c++)
		if (*c == ',' || *c == '"')
			*c = '_';
	return buf;
}

/* Distinct threads of the FOREIGN records (tids; a reused tid counts once: a scan cannot tell). */
static size_t foreign_threads(const pd_runlog *r)
{
	size_t n = 0;
	for (size_t i = 0; i < pd_runlog_foreign_count(r); i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = pd_runlog_foreign(r, j)->tid == pd_runlog_foreign(r, i)->tid;
		n += !seen;
	}
	return n;
}

/* "foreign_dl: N threads (M records, scanned every P ms)" or "not scanned". */
static void foreign_line(const pd_runlog *r, FILE *o)
{
	int64_t period = pd_runlog_foreign_period_ns(r);
	if (period <= 0)
		fprintf(o, "foreign_dl: not scanned\n");
	else
		fprintf(o, "foreign_dl: %zu threads (%zu records, scanned every %.0f ms)\n", foreign_threads(r),
			pd_runlog_foreign_count(r), (double)period / 1e6);
}

/* -1 when out of memory (nothing printed). */
static int summary(const pd_runlog *r, FILE *o)
{
	size_t ni = pd_runlog_instance_count(r), nj = pd_runlog_job_count(r), misses = 0;
	int64_t *resp = malloc((ni + 1) * sizeof(int64_t)), *lat = malloc((nj + 1) * sizeof(int64_t));
	if (!resp || !lat) {
		free(resp);
		free(lat);
		return -1;
	}
	char board[256], kernel[256]; /* board strings, terminal-safe (core/escape.c) */
	fprintf(o, "version: %d\nboard: %s\nkernel: %s\nplan_hash: %016llx\n", pd_runlog_version(r),
		pd_esc(pd_runlog_meta(r, "board"), board, sizeof(board)),
		pd_esc(pd_runlog_meta(r, "kernel"), kernel, sizeof(kernel)), (unsigned long long)pd_runlog_plan_hash(r));
	for (size_t g = 0; g < pd_runlog_dag_count(r); g++) {
		size_t n = 0, m = 0, unfinished = 0;
		for (size_t i = 0; i < ni; i++) {
			const struct pd_runlog_instance_rec *in = pd_runlog_instance(r, i);
			if (in->dag != g)
				continue;
			m += in->miss != 0;
			if (in->finish_ns < 0) {
				unfinished++;
				continue;
			}
			resp[n++] = in->response_ns;
		}
		qsort(resp, n, sizeof(int64_t), cmp_i64);
		fprintf(o, "dag %s: instances %zu misses %zu unfinished %zu p99_response_us %.1f max_response_us %.1f\n",
			pd_runlog_dag(r, g)->name, n + unfinished, m, unfinished, (double)pct(resp, n, 0.99) / 1e3, n ? (double)resp[n - 1] / 1e3 : 0.0);
		misses += m;
	}
	free(resp);
	fprintf(o, "instances: %zu\nmisses: %zu\n", ni, misses);
	size_t over = 0, sig = 0, ns = 0, skipped = 0, late = 0;
	for (size_t j = 0; j < nj; j++) {
		const struct pd_runlog_job_rec *jb = pd_runlog_job(r, j);
		over += (jb->flags & PD_RUNLOG_JOB_OVERRUN) != 0;
		skipped += (jb->flags & PD_RUNLOG_JOB_SKIPPED) != 0;
		late += (jb->flags & PD_RUNLOG_JOB_LATE) != 0;
		sig += jb->sigxcpu;
	}
	/* release latency = start - theoretical release, over the jobs of source tasks */
	for (size_t j = 0; j < nj; j++) {
		const struct pd_runlog_job_rec *jb = pd_runlog_job(r, j);
		if (jb->task < pd_runlog_task_count(r) && pd_runlog_task(r, jb->task)->n_preds == 0 &&
		    !(jb->flags & PD_RUNLOG_JOB_SKIPPED))
			lat[ns++] = jb->start_ns - jb->release_ns;
	}
	qsort(lat, ns, sizeof(int64_t), cmp_i64);
	fprintf(o, "jobs: %zu\noverruns: %zu\nsigxcpu: %zu\nskipped_jobs: %zu\nlate_jobs: %zu\n", nj, over, sig, skipped,
		late);
	fprintf(o, "release_latency_us: p50 %.1f p99 %.1f max %.1f (n %zu)\n", (double)pct(lat, ns, 0.5) / 1e3,
		(double)pct(lat, ns, 0.99) / 1e3, ns ? (double)lat[ns - 1] / 1e3 : 0.0, ns);
	free(lat);
	size_t np = pd_runlog_power_count(r);
	fprintf(o, "power_samples: %zu\n", np);
	for (size_t k = 0; k < pd_runlog_rail_count(r); k++) {
		double sum = 0;
		size_t n = 0;
		for (size_t i = 0; i < np; i++) {
			int64_t v = pd_runlog_power_uw(r, i, k);
			if (v != PD_RUNLOG_NO_VALUE) {
				sum += (double)v;
				n++;
			}
		}
		fprintf(o, "rail %s (%s): mean_w %.6f samples %zu\n", pd_runlog_rail(r, k)->name, pd_runlog_rail(r, k)->measures,
			n ? sum / (double)n / 1e6 : 0.0, n);
	}
	fprintf(o, "gaps: %zu\nstarvation_interventions: %zu\n", pd_runlog_gap_count(r), pd_runlog_starve_count(r));
	cpu_time_line(r, o, "steal", pd_runlog_steal_period_ns(r), pd_runlog_steal_count(r), steal_ns_of);
	cpu_time_line(r, o, "busy", pd_runlog_busy_period_ns(r), pd_runlog_busy_count(r), busy_ns_of);
	foreign_line(r, o);
	const struct pd_runlog_end_rec *e = pd_runlog_end(r);
	if (e)
		fprintf(o, "end: %s at %.3f s\nsampler_cpu_ms: %.3f\nwriter_cpu_ms: %.3f\nprocess_cpu_ms: %.3f\n",
			e->reason == 1 ? "signal" : e->reason == 0 ? "duration" : "error", (double)e->t_ns / 1e9,
			(double)e->sampler_cpu_ns / 1e6, (double)e->writer_cpu_ns / 1e6, (double)e->process_cpu_ns / 1e6);
	else
		fprintf(o, "end: missing (the agent did not stop cleanly)\n");
	fprintf(o, "ring_drops: %llu\nrecords: %zu\ndropped_bytes: %zu\nunknown_records: %zu\ninvalid_records: %zu\n",
		(unsigned long long)pd_runlog_ring_drops(r), pd_runlog_records(r), pd_runlog_dropped_bytes(r),
		pd_runlog_unknown_records(r), pd_runlog_invalid_records(r));
	return 0;
}

int pd_runlog_dump(const pd_runlog *r, FILE *o, const char *what)
{
	if (!what || strcmp(what, "summary") == 0) {
		if (summary(r, o))
			return -2;
	} else if (strcmp(what, "instances") == 0) {
		fprintf(o, "dag,seq,release_ns,finish_ns,response_ns,miss\n");
		for (size_t i = 0; i < pd_runlog_instance_count(r); i++) {
			const struct pd_runlog_instance_rec *in = pd_runlog_instance(r, i);
			fprintf(o, "%s,%llu,%lld,%lld,%lld,%u\n", pd_runlog_dag(r, in->dag)->name, (unsigned long long)in->seq,
				(long long)in->release_ns, (long long)in->finish_ns, (long long)in->response_ns, in->miss);
		}
	} else if (strcmp(what, "jobs") == 0) {
		fprintf(o, "task,seq,release_ns,start_ns,end_ns,cpu_ns,demand_ns,cpu,sigxcpu,flags\n");
		for (size_t i = 0; i < pd_runlog_job_count(r); i++) {
			const struct pd_runlog_job_rec *j = pd_runlog_job(r, i);
			fprintf(o, "%s/%s,%llu,%lld,%lld,%lld,%lld,%lld,%d,%u,%u\n", pd_runlog_task(r, j->task)->dag,
				pd_runlog_task(r, j->task)->name, (unsigned long long)j->seq, (long long)j->release_ns,
				(long long)j->start_ns, (long long)j->end_ns, (long long)j->cpu_ns, (long long)j->demand_ns, j->cpu,
				j->sigxcpu, j->flags);
		}
	} else if (strcmp(what, "power") == 0) {
		fprintf(o, "t_ns");
		for (size_t k = 0; k < pd_runlog_rail_count(r); k++)
			fprintf(o, ",%s_uw", pd_runlog_rail(r, k)->name);
		fprintf(o, "\n");
		for (size_t i = 0; i < pd_runlog_power_count(r); i++) {
			fprintf(o, "%lld", (long long)pd_runlog_power_t(r, i));
			for (size_t k = 0; k < pd_runlog_rail_count(r); k++) {
				int64_t v = pd_runlog_power_uw(r, i, k);
				if (v == PD_RUNLOG_NO_VALUE)
					fprintf(o, ",");
				else
					fprintf(o, ",%lld", (long long)v);
			}
			fprintf(o, "\n");
		}
	} else if (strcmp(what, "steal") == 0) {
		fprintf(o, "cpu,from_ns,t_ns,steal_ns\n");
		for (size_t i = 0; i < pd_runlog_steal_count(r); i++) {
			const struct pd_runlog_steal_rec *s = pd_runlog_steal(r, i);
			fprintf(o, "%d,%lld,%lld,%lld\n", s->cpu, (long long)s->from_ns, (long long)s->t_ns, (long long)s->steal_ns);
		}
	} else if (strcmp(what, "busy") == 0) {
		fprintf(o, "cpu,from_ns,t_ns,busy_ns\n");
		for (size_t i = 0; i < pd_runlog_busy_count(r); i++) {
			const struct pd_runlog_busy_rec *b = pd_runlog_busy(r, i);
			fprintf(o, "%d,%lld,%lld,%lld\n", b->cpu, (long long)b->from_ns, (long long)b->t_ns, (long long)b->busy_ns);
		}
	} else if (strcmp(what, "foreign") == 0) {
		char comm[4 * PD_RUNLOG_COMM_LEN + 8];
		fprintf(o, "tid,comm,cpu,from_ns,t_ns,runtime_ns,deadline_ns,period_ns\n");
		for (size_t i = 0; i < pd_runlog_foreign_count(r); i++) {
			const struct pd_runlog_foreign_rec *f = pd_runlog_foreign(r, i);
			fprintf(o, "%d,%s,%d,%lld,%lld,%lld,%lld,%lld\n", f->tid, foreign_comm(f, comm, sizeof(comm)), f->cpu,
				(long long)f->from_ns, (long long)f->t_ns, (long long)f->runtime_ns,
				(long long)f->deadline_ns, (long long)f->period_ns);
		}
	} else if (strcmp(what, "gaps") == 0) {
		fprintf(o, "rail,err,start_ns,end_ns\n");
		for (size_t i = 0; i < pd_runlog_gap_count(r); i++) {
			const struct pd_runlog_gap_rec *g = pd_runlog_gap(r, i);
			fprintf(o, "%s,%d,%lld,%lld\n", pd_runlog_rail(r, g->rail)->name, g->err, (long long)g->start_ns,
				(long long)g->end_ns);
		}
	} else {
		return -1;
	}
	return 0;
}
