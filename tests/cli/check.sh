#!/bin/bash
# powerdag check: exit 0 for a schedulable plan, 1 for each tampered plan (with the violation kind in
# text and JSON), 2 for bad usage and unreadable plans, never a crash.
. "$(dirname "$0")/lib/expect.sh"

P="$SRC/tests/checker"
expect 0 "$POWERDAG" check "$P/plan_ok.yaml"
grep -q '^schedulable: 0 violations' "$T/out" || fail "plan_ok: no 'schedulable' line"
expect 0 "$POWERDAG" check --json "$P/plan_ok.yaml"
grep -q '"schedulable": true' "$T/out" || fail "plan_ok --json: schedulable is not true"
grep -q '"violations": \[\]' "$T/out" || fail "plan_ok --json: violations not empty"

for pair in density:density path:path runtime_min:runtime_min deadline_period:deadline_gt_period \
	fifo:fifo_bound accel_overload:accel_load; do
	f=${pair%%:*}
	kind=${pair#*:}
	expect 1 "$POWERDAG" check "$P/plan_$f.yaml"
	grep -q '^NOT schedulable' "$T/out" || fail "plan_$f: no 'NOT schedulable' line"
	grep -q "^  $kind " "$T/out" || fail "plan_$f: no $kind line in the text report"
	expect 1 "$POWERDAG" check "$P/plan_$f.yaml" --json
	grep -q '"schedulable": false' "$T/out" || fail "plan_$f --json: schedulable is not false"
	grep -q "\"kind\": \"$kind\"" "$T/out" || fail "plan_$f --json: no violation of kind $kind"
	grep -q '"limit": ' "$T/out" || fail "plan_$f --json: no limit"
done

# bad usage / bad input: exit 2, nothing on stdout
expect 2 "$POWERDAG" check
expect 2 "$POWERDAG" check "$P/plan_ok.yaml" "$P/plan_ok.yaml"
expect 2 "$POWERDAG" check --bogus "$P/plan_ok.yaml"
expect 2 "$POWERDAG" check "$T/missing.yaml"
printf 'plan:\n  version: 1\n' >"$T/partial.yaml"
expect 2 "$POWERDAG" check "$T/partial.yaml"
[ -s "$T/out" ] && fail "a bad plan printed a report"
printf ': : :\n\t-' >"$T/garbage.yaml"
expect 2 "$POWERDAG" check --json "$T/garbage.yaml"
expect 0 "$POWERDAG" check --help
grep -q -- '--json' "$T/out" || fail "--help does not document --json"

finish check.sh
