/* SPDX-License-Identifier: MIT */
/* Test plans built in code: a small platform and DAG sets, placements set by hand. */
#ifndef PD_TEST_SIMULATOR_PLANS_H
#define PD_TEST_SIMULATOR_PLANS_H

#include "plan/pd_plan.h"

/* Platform "testboard": reference 1000MHz; island big cpus [0,1] capacity 1.0, OPPs 500MHz
 * (300mW/100mW) and 1000MHz (1W/200mW); gpu0 (one OPP 1000MHz, 5W/500mW); FPGA pl with 2 slots,
 * reconfig 10ms, idle 800mW; U_max 0.95, fair server 50ms/1s; base 1W. */
extern const char tp_platform_yaml[];

/* Loads a DAG set and a platform from YAML text into a fresh plan (islands/GPU at their top OPP). */
pd_plan *tp_plan(const char *dags_yaml, const char *platform_yaml);
/* Places dag/task on cpu with the given triple; wcet_ns is the platform law at the island's OPP. */
void tp_cpu(pd_plan *p, const char *dag, const char *task, int cpu, int64_t runtime, int64_t deadline, int64_t period);
/* Places dag/task on accelerator accel (slot for FPGAs, else -1) with implementation impl. */
void tp_accel(pd_plan *p, const char *dag, const char *task, const char *accel, int slot, size_t impl,
	      int64_t response);
struct pd_plan_task *tp_task(pd_plan *p, const char *dag, const char *task);

#endif
