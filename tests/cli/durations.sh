#!/bin/bash
# Run lengths given on the command line (issue 13 item 5): deploy, simulate and powerdag-agent read
# them with the exact, overflow-checked unit parser and refuse (exit 2, with the option named) zero,
# overflowing values and anything above the 2592000s (30-day) limit. `deploy --duration 18446744074`
# once wrapped to a negative and ran the 10-s default. Nothing here deploys: the values that are
# accepted are shown by simulate only; deploy and the agent get a missing plan after a good duration.
. "$(dirname "$0")/lib/expect.sh"

plan="$SRC/tests/cross/one-task.plan.yaml"
for d in 18446744074 18446744074s 9223372037 2592001 2592001s 2592000.000000001s 0 0s -5 abc 10parsecs; do
	expect 2 "$POWERDAG" deploy "$T/missing.plan.yaml" --board local --duration "$d" --out "$T/run"
	grep -q -- "--duration '$d'" "$T/err" || fail "deploy --duration $d: not refused as a duration: $(cat "$T/err")"
	[ ! -e "$T/run" ] || fail "deploy --duration $d: created the run directory"
	expect 2 "$POWERDAG" simulate "$plan" --duration "$d"
	grep -q -- "--duration '$d'" "$T/err" || fail "simulate --duration $d: not refused: $(cat "$T/err")"
	if [ -n "${POWERDAG_AGENT:-}" ]; then
		expect 2 "$POWERDAG_AGENT" run "$T/missing.plan.yaml" --out "$T/agent" --duration "$d"
		grep -q -- "--duration '$d'" "$T/err" || fail "agent --duration $d: not refused: $(cat "$T/err")"
	fi
done
grep -q "longer than 2592000s" <("$POWERDAG" simulate "$plan" --duration 2592001s 2>&1) || fail "the limit is not stated"
# the limit itself and the usual forms are accepted (simulate: the cheapest way to see it)
for d in 1s 500ms 0.25s; do
	expect 0 "$POWERDAG" simulate "$plan" --duration "$d"
done
# deploy and the agent accept the limit and a bare number of seconds (refused later: missing plan)
for d in 2592000 2592000s 2.5 10; do
	expect 2 "$POWERDAG" deploy "$T/missing.plan.yaml" --board local --duration "$d" --out "$T/run"
	grep -q -- "--duration" "$T/err" && fail "deploy --duration $d refused: $(cat "$T/err")"
	if [ -n "${POWERDAG_AGENT:-}" ]; then
		expect 2 "$POWERDAG_AGENT" run "$T/missing.plan.yaml" --out "$T/agent" --duration "$d"
		grep -q -- "--duration" "$T/err" && fail "agent --duration $d refused: $(cat "$T/err")"
	fi
done
finish durations.sh
