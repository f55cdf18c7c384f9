/* SPDX-License-Identifier: MIT */
/*
 * check_accel.c - accelerators as non-preemptive FIFO servers (a GPU is one server, every FPGA slot
 * is its own server).
 *
 *   load:  sum_{j on server} (L_j + rho) / T_j <= 1
 *   FIFO:  R_i >= sum_{j on server} (L_j + rho)   with rho = reconfig_time when the slot is shared by
 *          more than one bitstream (a reconfiguration before every request), else rho = 0.
 * (docs/MODEL.md counts the reconfigurations in the load as well: the slot is busy meanwhile.)
 * The FIFO bound holds because every job of the server's tasks finishes by its DAG deadline D <= T
 * (checked by ck_paths), so at most one job of each other task is queued ahead of a request.
 *   slots: every FPGA placement names a slot < slots (one slot holds one bitstream at a time).
 */
#include "optimizer/checker/check_impl.h"

#include <stdlib.h>
#include <string.h>

struct server {
	size_t accel;
	int slot; /* -1 for a GPU */
};

static bool on_server(const struct pd_plan_task *pt, struct server s)
{
	if (pt->place.kind == PD_PLACE_CPU || pt->place.accel != s.accel)
		return false;
	return s.slot < 0 || (pt->place.kind == PD_PLACE_FPGA && pt->place.slot == s.slot);
}

static const char *bitstream_of(const struct ck *c, size_t i)
{
	const struct pd_task *t = pd_dags_task(c->dags, i);
	const struct pd_plan_task *pt = pd_plan_task_c(c->plan, i);
	if (pt->place.impl >= t->n_impls || !t->impls[pt->place.impl].bitstream)
		return "";
	return t->impls[pt->place.impl].bitstream;
}

/* True when the tasks of an FPGA slot need more than one bitstream: then a reconfiguration may
 * precede every request. */
static bool slot_shared(const struct ck *c, struct server s)
{
	const char *first = NULL;
	for (size_t i = 0; s.slot >= 0 && i < c->n_tasks; i++) {
		if (!on_server(pd_plan_task_c(c->plan, i), s))
			continue;
		const char *bs = bitstream_of(c, i);
		if (!first)
			first = bs;
		else if (strcmp(first, bs) != 0)
			return true;
	}
	return false;
}

static void check_server(struct ck *c, struct server s, const char *where, int64_t *num, int64_t *den)
{
	const struct pd_accelerator *a = pd_platform_accel(c->plat, s.accel);
	int64_t rho = slot_shared(c, s) ? a->reconfig_ns : 0;
	size_t n = 0;
	__int128 bound = 0;
	for (size_t i = 0; i < c->n_tasks; i++) {
		if (!on_server(pd_plan_task_c(c->plan, i), s))
			continue;
		const struct pd_task *t = pd_dags_task(c->dags, i);
		num[n] = c->wcet_true[i] + rho; /* the slot is busy reconfiguring too */
		den[n] = pd_dags_dag(c->dags, t->dag)->period_ns;
		bound += num[n];
		n++;
	}
	if (n == 0)
		return;
	if (!pd_check_sum_le(num, den, n, 1, 1)) {
		long double load = 0;
		for (size_t j = 0; j < n; j++)
			load += (long double)num[j] / (long double)den[j];
		ck_add(c, PD_CK_ACCEL_LOAD, (double)load, 1.0, "utilization", "%s", where);
	}
	int64_t b = bound > INT64_MAX / 8 ? INT64_MAX / 8 : (int64_t)bound;
	for (size_t i = 0; i < c->n_tasks; i++) {
		const struct pd_plan_task *pt = pd_plan_task_c(c->plan, i);
		if (!on_server(pt, s))
			continue;
		char nm[160];
		if (pt->response_ns < b)
			ck_add(c, PD_CK_FIFO, (double)pt->response_ns, (double)b, "ns", "%s on %s",
			       ck_task_name(c, i, nm, sizeof(nm)), where);
		if (c->delay_ns[i] < b)
			c->delay_ns[i] = b;
	}
}

static void check_slot_range(struct ck *c, size_t a_idx)
{
	const struct pd_accelerator *a = pd_platform_accel(c->plat, a_idx);
	int max_slot = -1;
	for (size_t i = 0; i < c->n_tasks; i++) {
		const struct pd_plan_task *pt = pd_plan_task_c(c->plan, i);
		if (pt->place.kind == PD_PLACE_FPGA && pt->place.accel == a_idx && pt->place.slot > max_slot)
			max_slot = pt->place.slot;
	}
	for (size_t i = 0; i < c->n_tasks; i++) {
		const struct pd_plan_task *pt = pd_plan_task_c(c->plan, i);
		char nm[160];
		if (pt->place.kind == PD_PLACE_FPGA && pt->place.accel == a_idx &&
		    (pt->place.slot < 0 || pt->place.slot >= a->slots))
			ck_add(c, PD_CK_SLOTS, (double)(max_slot + 1), (double)a->slots, "slots", "%s on fpga:%s/%d",
			       ck_task_name(c, i, nm, sizeof(nm)), a->name, pt->place.slot);
	}
}

void ck_accels(struct ck *c)
{
	int64_t *num = calloc(c->n_tasks + 1, sizeof(int64_t));
	int64_t *den = calloc(c->n_tasks + 1, sizeof(int64_t));
	if (!num || !den) {
		c->oom = true;
		goto out;
	}
	for (size_t a = 0; a < pd_platform_accel_count(c->plat); a++) {
		const struct pd_accelerator *acc = pd_platform_accel(c->plat, a);
		char where[160];
		if (acc->kind == PD_ACCEL_GPU) {
			snprintf(where, sizeof(where), "gpu:%s", acc->name);
			check_server(c, (struct server){a, -1}, where, num, den);
			continue;
		}
		check_slot_range(c, a);
		for (int s = 0; s < acc->slots; s++) {
			snprintf(where, sizeof(where), "fpga:%s/%d", acc->name, s);
			check_server(c, (struct server){a, s}, where, num, den);
		}
	}
out:
	free(num);
	free(den);
}
