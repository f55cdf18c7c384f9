/* SPDX-License-Identifier: MIT */
#include "helper_plans.h"
#include "pd_test.h"

#include <stdlib.h>

const char tp_platform_yaml[] = "platform:\n"
				"  name: testboard\n"
				"  reference_frequency: 1000MHz\n"
				"  base_power: 1W\n"
				"  dl: {max_util_per_cpu: 0.95, fair_server: {runtime: 50ms, period: 1s}, job_overhead: 0ns}\n"
				"  islands:\n"
				"    - name: big\n"
				"      cpus: [0, 1]\n"
				"      capacity: 1.0\n"
				"      opps:\n"
				"        - {freq: 500MHz, busy: 300mW, idle: 100mW}\n"
				"        - {freq: 1000MHz, busy: 1W, idle: 200mW}\n"
				"  accelerators:\n"
				"    - {name: gpu0, kind: gpu, opps: [{freq: 1000MHz, busy: 5W, idle: 500mW}]}\n"
				"    - {name: pl, kind: fpga, slots: 2, reconfig_time: 10ms, idle_power: 800mW, manager: fpga0}\n";

pd_plan *tp_plan(const char *dags_yaml, const char *platform_yaml)
{
	const char *dir = pd_test_tmpdir();
	char dpath[4096], ppath[4096];
	snprintf(dpath, sizeof(dpath), "%s", pd_test_write(dir, "dags.yaml", dags_yaml));
	snprintf(ppath, sizeof(ppath), "%s", pd_test_write(dir, "platform.yaml", platform_yaml));
	pd_diags d;
	pd_diags_init(&d);
	pd_dagset *ds = pd_dags_load_file(dpath, &d);
	pd_platform *pl = pd_platform_load_file(ppath, &d);
	if (!ds || !pl) {
		pd_diags_print(&d, stderr);
		abort();
	}
	pd_diags_free(&d);
	pd_plan *p = pd_plan_new(ds, pl);
	if (!p)
		abort();
	return p;
}

struct pd_plan_task *tp_task(pd_plan *p, const char *dag, const char *task)
{
	long i = pd_dags_find_task(pd_plan_dags(p), dag, task);
	if (i < 0)
		abort();
	return pd_plan_task(p, (size_t)i);
}

void tp_cpu(pd_plan *p, const char *dag, const char *task, int cpu, int64_t runtime, int64_t deadline, int64_t period)
{
	long i = pd_dags_find_task(pd_plan_dags(p), dag, task);
	const pd_platform *pl = pd_plan_platform(p);
	long k = pd_platform_island_of_cpu(pl, cpu);
	if (i < 0 || k < 0)
		abort();
	struct pd_plan_task *t = pd_plan_task(p, (size_t)i);
	t->place.kind = PD_PLACE_CPU;
	t->place.cpu = cpu;
	t->place.island = (size_t)k;
	t->wcet_ns = pd_platform_wcet_at(pl, pd_dags_task(pd_plan_dags(p), (size_t)i), (size_t)k, pd_plan_island_opp(p, (size_t)k));
	t->runtime_ns = runtime;
	t->deadline_ns = deadline;
	t->period_ns = period;
	t->response_ns = deadline;
}

void tp_accel(pd_plan *p, const char *dag, const char *task, const char *accel, int slot, size_t impl,
	      int64_t response)
{
	long i = pd_dags_find_task(pd_plan_dags(p), dag, task);
	const pd_platform *pl = pd_plan_platform(p);
	long a = pd_platform_find_accel(pl, accel);
	if (i < 0 || a < 0)
		abort();
	const struct pd_accelerator *ac = pd_platform_accel(pl, (size_t)a);
	const struct pd_task *dt = pd_dags_task(pd_plan_dags(p), (size_t)i);
	struct pd_plan_task *t = pd_plan_task(p, (size_t)i);
	t->place.kind = ac->kind == PD_ACCEL_GPU ? PD_PLACE_GPU : PD_PLACE_FPGA;
	t->place.accel = (size_t)a;
	t->place.slot = slot;
	t->place.impl = impl;
	t->wcet_ns = ac->kind == PD_ACCEL_GPU ? pd_platform_latency_at(ac, dt->impls[impl].latency_ns, pd_plan_accel_opp(p, (size_t)a))
					       : dt->impls[impl].latency_ns;
	t->runtime_ns = t->deadline_ns = t->period_ns = 0;
	t->response_ns = response;
}
