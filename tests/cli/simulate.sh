#!/bin/bash
# powerdag simulate: exit codes (0, 1 with --fail-on-miss, 2 bad usage / input), the JSON keys of docs/SIMULATOR.md,
# the trace file, and that bad input writes nothing.
. "$(dirname "$0")/lib/expect.sh"

OK="$SRC/tests/checker/plan_ok.yaml"
expect 0 "$POWERDAG" simulate "$OK" --duration 2s
grep -q '0 DAG deadline misses' "$T/out" || fail "text summary lacks the miss count"
expect 0 "$POWERDAG" simulate "$OK" --duration 2s --json --exec uniform --seed 3 --background 0.2 --fair-server immediate
for k in power_w energy_j duration_s jobs misses dags name instances max_response_ms p99_response_ms background \
	served_s served_by_server_s; do
	grep -q "\"$k\"" "$T/out" || fail "--json lacks $k"
done
grep -q '"duration_s": 2' "$T/out" || fail "duration_s is not 2"
grep -q '"misses": 0,' "$T/out" || fail "a schedulable plan missed"
grep -q '"fair_server": "immediate"' "$T/out" || fail "fair server mode not reported"

# --fail-on-miss: other/y overruns its 2 ms budget and misses
expect 0 "$POWERDAG" simulate "$OK" --duration 1s --fail-on-miss
expect 1 "$POWERDAG" simulate "$SRC/tests/simulator/plan_overrun.yaml" --duration 1s --fail-on-miss

# one injected overrun: the late-instance policy's cost (docs/MODEL.md), resync (default) vs queue
LATE="$SRC/tests/agents/plans/late.plan.yaml"
expect 0 "$POWERDAG" simulate "$LATE" --duration 2s --json --inject-overrun chain/b:20:1.5
grep -q '"misses": 2,' "$T/out" || fail "resync: one overrun should cost 2 instances"
grep -q '"skipped": 2,' "$T/out" || fail "resync: the 2 lost instances should be skipped"
sed 's/^    deadline: 20ms$/    deadline: 20ms\n    late: queue/' "$LATE" > "$T/late-queue.yaml"
expect 0 "$POWERDAG" simulate "$T/late-queue.yaml" --duration 2s --json --inject-overrun chain/b:20:1.5
grep -q '"misses": 79,' "$T/out" || fail "queue: one overrun should leave the chain behind (79 misses)"
expect 2 "$POWERDAG" simulate "$LATE" --inject-overrun chain/nope:20:1.5
grep -q "chain/nope" "$T/err" || fail "the unknown task is not named"

# trace
expect 0 "$POWERDAG" simulate "$OK" --duration 1s --trace "$T/trace.json" --trace-window 0s:200ms
[ -s "$T/trace.json" ] || fail "no trace written"
grep -q '"traceEvents"' "$T/trace.json" || fail "trace lacks traceEvents"
grep -q '"ph":"X"' "$T/trace.json" || fail "trace has no slices"

# bad usage / input: exit 2, no trace written
for args in "" "--duration 0s $OK" "--duration 10 $OK" "--exec gauss $OK" "--exec overrun:2:1 $OK" \
	"--background 1.5 $OK" "--fair-server sometimes $OK" "--trace-window 0:1s $OK" \
	"--trace $T/t2.json --trace-window 2s:1s $OK" "--jitter 60ms $OK" "--bogus $OK" "$OK $OK" \
	"$T/missing.yaml" "--inject-overrun chain/b $OK" "--inject-overrun chain/b:1:0 $OK"; do
	# shellcheck disable=SC2086
	expect 2 "$POWERDAG" simulate $args
done
[ -e "$T/t2.json" ] && fail "a rejected command wrote its trace"
# an unwritable trace is an environment problem: exit 3, nothing on stdout
expect 3 "$POWERDAG" simulate "$OK" --duration 1s --json --trace "$T/no/such/dir/t.json"
[ -s "$T/out" ] && fail "a failed trace still printed the result"
expect 0 "$POWERDAG" simulate --help

finish simulate.sh
