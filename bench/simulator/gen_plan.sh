#!/bin/bash
# gen_plan.sh N [SEED] - writes to stdout a schedulable hand-built plan with N tasks (N/5 DAGs of 5
# tasks: t0 -> {t1, t2} -> t3 -> t4) on an 8-core platform, for the simulator benchmark. Every task
# gets d = T/4 (4 tasks on the longest path, so every path sums to exactly D = T), tasks are spread
# round-robin over the cores, and each core's density stays at 0.6 (<= 0.95 - 0.05), so
# `powerdag check` accepts the plan. Periods cycle through 20, 25, 40, 50, 100 ms.
set -eu
N=${1:?usage: gen_plan.sh N [SEED]}
SEED=${2:-1}
awk -v N="$N" -v SEED="$SEED" 'BEGIN {
	ncores = 8; per = 5; ndags = int((N + per - 1) / per)
	split("20 25 40 50 100", P, " ")
	k = int((N + ncores - 1) / ncores)       # most tasks on one core
	dens = 0.6 / k
	srand(SEED)
	print "plan:"
	print "  version: 1"
	print "  solver: {status: feasible, objective: power, solver: hand-built, gap: 0, solve_time_s: 0}"
	print "  predicted: {power: 0W, min_relative_slack: 0}"
	print "  islands:"
	print "  - {name: big, freq: 1000MHz}"
	print "  tasks:"
	core = 0
	for (g = 0; g < ndags; g++) {
		T = P[(g % 5) + 1] * 1000000
		d = int(T / 4)
		for (j = 0; j < per; j++) {
			c = int(dens * d * (0.7 + 0.3 * rand()))
			if (c < 2048) c = 2048
			wcet[g, j] = c
			printf "  - {dag: g%d, task: t%d, placement: \047cpu:%d\047, wcet: %dns, runtime: %dns, deadline: %dns, period: %dns, reclaim: false}\n", g, j, core, c, c, d, T
			core = (core + 1) % ncores
		}
	}
	print "  dags:"
	for (g = 0; g < ndags; g++) {
		T = P[(g % 5) + 1] * 1000000
		printf "  - name: g%d\n    period: %dns\n    tasks:\n", g, T
		for (j = 0; j < per; j++)
			printf "    - {name: t%d, wcet: %dns, bcet: %dns}\n", j, wcet[g, j], int(wcet[g, j] / 2)
		print "    edges: [[t0, t1], [t0, t2], [t1, t3], [t2, t3], [t3, t4]]"
	}
	print "  platform:"
	print "    name: bench8"
	print "    reference_frequency: 1000MHz"
	print "    base_power: 1W"
	print "    dl: {max_util_per_cpu: 0.95, fair_server: {runtime: 50ms, period: 1s}}"
	print "    islands:"
	print "    - name: big"
	print "      cpus: [0, 1, 2, 3, 4, 5, 6, 7]"
	print "      capacity: 1"
	print "      opps:"
	print "      - {freq: 1000MHz, busy: 1W, idle: 200mW}"
}'
