/* SPDX-License-Identifier: MIT */
/*
 * Explaining infeasibility in the user's terms: a DAG path that cannot meet its deadline even at the
 * top frequency on the fastest resource of every task, a task that alone overloads any core, or more
 * CPU demand than all cores together provide.
 */
#include "optimizer/opt_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Appends the path ending at "end" (following the predecessor with the largest finish) to buf. */
static void describe_path(const struct opt_inst *in, const double *fin, size_t end, char *buf, size_t n)
{
	size_t chain[64], len = 0, i = end;
	for (;;) {
		if (len < 64)
			chain[len++] = i;
		const struct pd_task *t = pd_dags_task(in->dags, i);
		if (!t->n_preds)
			break;
		size_t best = t->preds[0];
		for (size_t p = 1; p < t->n_preds; p++)
			if (fin[t->preds[p]] > fin[best])
				best = t->preds[p];
		i = best;
	}
	size_t used = strlen(buf);
	for (size_t j = len; j-- > 0 && used + 1 < n;) {
		used += (size_t)snprintf(buf + used, n - used, "%s%s", pd_dags_task(in->dags, chain[j])->name,
					 j ? " -> " : "");
		used = strlen(buf);
	}
}

static bool explain_paths(const struct opt_inst *in, char *buf, size_t n)
{
	double *fin = calloc(in->n_tasks ? in->n_tasks : 1, sizeof(double));
	bool found = false;
	for (size_t g = 0; fin && g < in->n_dags && !found; g++) {
		const struct pd_dag *G = pd_dags_dag(in->dags, g);
		double end = pd_dags_longest_path_d(in->dags, g, in->fast_ns, fin, NULL);
		if (end <= (double)G->deadline_ns)
			continue;
		size_t sink = G->first_task;
		for (size_t i = G->first_task; i < G->first_task + G->n_tasks; i++)
			if (fin[i] > fin[sink])
				sink = i;
		snprintf(buf, n, "DAG %s: path ", G->name);
		describe_path(in, fin, sink, buf, n);
		size_t used = strlen(buf);
		snprintf(buf + used, n - used,
			 " needs %.6g ms even at the top frequency on the fastest resource of every task, more than "
			 "its deadline of %.6g ms",
			 end * 1e-6, (double)G->deadline_ns * 1e-6);
		found = true;
	}
	free(fin);
	return found;
}

static bool explain_tasks(const struct opt_inst *in, char *buf, size_t n)
{
	for (size_t i = 0; i < in->n_tasks; i++) {
		bool any = false;
		for (size_t v = 0; v < in->n_srv && !any; v++)
			any = in->impl[i * in->n_srv + v] >= 0 &&
			      (double)in->lat_top[i * in->n_srv + v] <= opt_longest_d(in, i);
		for (size_t k = 0; k < in->n_isl && !any; k++) {
			double C = (double)runtime_at(in, i, k, in->isl_nopp[k] - 1);
			any = C / in->cap <= in->hi_ns[i] && C >= 1024;
		}
		if (any)
			continue;
		const struct pd_task *t = pd_dags_task(in->dags, i);
		snprintf(buf, n,
			 "task %s/%s fits no resource: at the top frequency its density C/d exceeds the per-core "
			 "capacity %.6g (U_max minus the fair-server share) for every deadline its DAG allows, or "
			 "its runtime is below the 1024 ns SCHED_DEADLINE floor",
			 pd_dags_dag(in->dags, t->dag)->name, t->name, in->cap_raw);
		return true;
	}
	return false;
}

/* CPU-only tasks need at least C(top)/T of some island; all cores give n * cap. */
static bool explain_capacity(const struct opt_inst *in, char *buf, size_t n)
{
	double need = 0;
	for (size_t i = 0; i < in->n_tasks; i++) {
		bool accel = false;
		for (size_t v = 0; v < in->n_srv; v++)
			accel = accel || in->impl[i * in->n_srv + v] >= 0;
		if (accel)
			continue;
		double u = INFINITY;
		for (size_t k = 0; k < in->n_isl; k++)
			u = fmin(u, (double)runtime_at(in, i, k, in->isl_nopp[k] - 1) / (double)in->T_ns[i]);
		need += u;
	}
	double have = (double)in->n_cores * in->cap_raw;
	if (need <= have)
		return false;
	snprintf(buf, n,
		 "the CPUs are over capacity: the tasks without an accelerator need a utilisation of at least "
		 "%.4f even at the top frequencies, the %zu cores provide %.4f",
		 need, in->n_cores, have);
	return true;
}

void opt_explain_infeasible(const struct opt_inst *in, char *buf, size_t n)
{
	buf[0] = '\0';
	if (explain_paths(in, buf, n) || explain_tasks(in, buf, n) || explain_capacity(in, buf, n))
		return;
	buf[0] = '\0';
}
