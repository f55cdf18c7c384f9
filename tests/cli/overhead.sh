#!/bin/bash
# The issue's chain a -> b -> c (WCET 1, 2, 1 ms, T = D = 20 ms) on a 2-CPU one-OPP platform: optimize
# puts the per-job overhead and margin into every runtime and records them, check accepts its plan
# and refuses the old runtime = WCET plan (runtime_lt_budget, exit 1), simulate executes the
# overhead (busy = (C + o)/T) without a miss. Bad overhead / margin values: file:line:col, exit 2,
# nothing written.
. "$(dirname "$0")/lib/expect.sh"

cp "$SRC/tests/cli/chain.dags.yaml" "$T/chain.yaml"
plat() { # $1: extra dl keys
	printf 'platform:\n  name: two\n  reference_frequency: 1000MHz\n  dl: {max_util_per_cpu: 0.95%s}\n  islands:\n    - name: cpu\n      cpus: [0, 1]\n      opps:\n        - {freq: 1000MHz, busy: 1W, idle: 0.1W}\n' "$1"
}

# no job_overhead: the 100-us default, no margin
plat "" > "$T/plat.yaml"
expect 0 "$POWERDAG" optimize "$T/chain.yaml" "$T/plat.yaml" -o "$T/plan.yaml"
for t in "a, placement: 'cpu:[01]', wcet: 1ms, overhead: 100us, runtime: 1.1ms" \
	"b, placement: 'cpu:[01]', wcet: 2ms, overhead: 100us, runtime: 2.1ms" \
	"c, placement: 'cpu:[01]', wcet: 1ms, overhead: 100us, runtime: 1.1ms"; do
	grep -q "task: $t," "$T/plan.yaml" || fail "plan lacks '$t'"
done
expect 0 "$POWERDAG" check "$T/plan.yaml"
grep -q '^schedulable: 0 violations' "$T/out" || fail "check does not accept the optimizer's plan"
grep -q 'overhead cpu 100us (default, not measured)' "$T/out" || fail "check does not show the default overhead"
grep -q 'reclaimable 0\.6' "$T/out" || fail "check does not report the reclaimable share"
expect 0 "$POWERDAG" check --json "$T/plan.yaml"
grep -q '"reclaimable":' "$T/out" || fail "check --json lacks reclaimable"
# busy per core: b alone 2.1/20, a and c 2.2/20; power 2 x 0.1 + 0.9 x 4.3/20 = 0.3935 W
expect 0 "$POWERDAG" simulate "$T/plan.yaml" --duration 10s --fail-on-miss
grep -q '0 DAG deadline misses' "$T/out" || fail "simulate missed"
grep -q 'power 0.393500 W' "$T/out" || fail "simulated power is not 0.3935 W (overhead not executed?)"
grep -Eq 'busy  10.50 %' "$T/out" || fail "b's core is not busy (2 ms + 100 us) / 20 ms"
grep -Eq 'busy  11.00 %' "$T/out" || fail "a and c's core is not busy 2 x 1.1 ms / 20 ms"

# the plan that misses on the board (runtime = WCET) is refused
sed -e 's/overhead: 100us, runtime: 1.1ms/runtime: 1ms/' -e 's/overhead: 100us, runtime: 2.1ms/runtime: 2ms/' \
	"$T/plan.yaml" > "$T/old.yaml"
expect 1 "$POWERDAG" check "$T/old.yaml"
[ "$(grep -c 'runtime_lt_budget' "$T/out")" = 3 ] || fail "check does not refuse all three runtimes below Q"
grep -q 'runtime_lt_budget    chain/b: 2ms < minimum 2.1ms' "$T/out" || fail "wrong runtime_lt_budget line"
# GRUB reclaiming (the optimizer set it: b is alone on its core, a and c are one path of one DAG)
# lets every job finish its overhead on the core's spare bandwidth; without it (the issue's plan)
# every job is throttled into its next period and every instance misses
expect 0 "$POWERDAG" simulate "$T/old.yaml" --duration 2s --fail-on-miss
sed -i 's/reclaim: true/reclaim: false/' "$T/old.yaml"
expect 1 "$POWERDAG" simulate "$T/old.yaml" --duration 2s --fail-on-miss
grep -Eq '^chain +(9[0-9]|100) +\1 ' "$T/out" || fail "without reclaiming not every instance misses: $(grep chain "$T/out")"

# measured overhead 30 us and a 5 % margin: runtime = ceil((C + 30 us) x 1.05)
plat ", job_overhead: 30us, budget_margin: 0.05" > "$T/plat30.yaml"
expect 0 "$POWERDAG" optimize "$T/chain.yaml" "$T/plat30.yaml" -o "$T/plan30.yaml"
grep -q "task: b, placement: 'cpu:[01]', wcet: 2ms, overhead: 30us, runtime: 2131.5us," "$T/plan30.yaml" ||
	fail "runtime is not (2 ms + 30 us) x 1.05"
expect 0 "$POWERDAG" check "$T/plan30.yaml"

# bad values: position, exit 2, no plan written
dl_value() { plat ", $1"; }
refused_by_optimize dl_value "job_overhead: 200ms:4:46" "job_overhead: 5:4:46" "budget_margin: 1:4:47" \
	"budget_margin: -0.5:4:47" "budget_margin: 0.1234567:4:47"
finish overhead
