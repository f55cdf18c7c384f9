#!/usr/bin/env bash
# Shell tests of `powerdag gen`, `dot` and `validate` on DAG files: outputs and exit codes
# (0 ok, 2 bad usage / bad input with nothing written). Needs $POWERDAG, $PD_SOURCE_DIR, graphviz.
set -u
P=${POWERDAG:?POWERDAG must name the powerdag binary}
SRC=${PD_SOURCE_DIR:?}
EX=$SRC/dags/examples
T=$(mktemp -d /tmp/pd-cli-dags.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0

# expect CODE DESCRIPTION CMD... : runs CMD, checks its exit status
expect() {
	local want=$1 what=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	local got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL: $what: exit $got, want $want"; sed 's/^/  stderr: /' "$T/err" | head -5
		fails=$((fails + 1))
	else
		echo "ok: $what"
	fi
}
check() { # check DESCRIPTION CONDITION...
	local what=$1
	shift
	if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails + 1)); fi
}

# ---- gen
expect 0 "gen to stdout" "$P" gen --seed 5
check "gen stdout is a DAG file" grep -q '^dags:' "$T/out"
expect 0 "gen -o" "$P" gen --dags 2 --tasks 4:6 --util 0.8 --accel-ratio 0.5 --seed 9 -o "$T/a.yaml"
expect 0 "gen again, same seed" "$P" gen --dags 2 --tasks 4:6 --util 0.8 --accel-ratio 0.5 --seed 9 -o "$T/b.yaml"
check "same seed gives the same bytes" cmp -s "$T/a.yaml" "$T/b.yaml"
expect 0 "gen other seed" "$P" gen --dags 2 --tasks 4:6 --util 0.8 --accel-ratio 0.5 --seed 10 -o "$T/c.yaml"
check "another seed gives another set" bash -c "! cmp -s '$T/a.yaml' '$T/c.yaml'"
check "accelerator implementations generated" grep -q 'kind: fpga' "$T/a.yaml"
check "2 DAGs generated" test "$(grep -c '^- name: dag' "$T/a.yaml")" = 2
expect 0 "generated set validates" "$P" validate "$T/a.yaml"
for s in 1 2 3 4 5 6 7 8 9 10; do
	"$P" gen --seed "$s" --util 1.5 --accel-ratio 0.3 -o "$T/s.yaml" && "$P" validate "$T/s.yaml" >/dev/null ||
		{ echo "FAIL: seed $s does not validate"; fails=$((fails + 1)); }
done
expect 0 "gen --help" "$P" gen --help
check "gen --help lists its options" grep -q -- '--accel-ratio' "$T/out"
expect 2 "gen --dags 0" "$P" gen --dags 0 -o "$T/bad.yaml"
expect 2 "gen --tasks 6:5" "$P" gen --tasks 6:5 -o "$T/bad.yaml"
expect 2 "gen --tasks x" "$P" gen --tasks x -o "$T/bad.yaml"
expect 2 "gen --util abc" "$P" gen --util abc -o "$T/bad.yaml"
check "gen names the option with the bad value" grep -q -- "invalid value 'abc' for --util" "$T/err"
expect 2 "gen --util -1" "$P" gen --util -1 -o "$T/bad.yaml"
expect 2 "gen --accel-ratio 2" "$P" gen --accel-ratio 2 -o "$T/bad.yaml"
expect 2 "gen --seed -3" "$P" gen --seed -3 -o "$T/bad.yaml"
expect 2 "gen --bogus" "$P" gen --bogus
expect 2 "gen stray argument" "$P" gen extra
expect 2 "gen --util without value" "$P" gen --util
expect 2 "gen impossible utilisation" "$P" gen --dags 1 --tasks 3 --layers 3:3 --util 1.5 -o "$T/bad.yaml"
check "nothing written on bad usage" test ! -e "$T/bad.yaml"

# ---- dot
expect 0 "dot of an example" "$P" dot "$EX/automotive.yaml" -o "$T/a.dot"
check "dot has every DAG" grep -q 'cluster_logging' "$T/a.dot"
expect 0 "dot output renders with graphviz" dot -Tsvg "$T/a.dot" -o "$T/a.svg"
check "svg produced" grep -q '<svg' "$T/a.svg"
expect 0 "dot to stdout" "$P" dot "$EX/camera.yaml"
check "dot stdout is a digraph" grep -q '^digraph powerdag' "$T/out"
expect 2 "dot without FILE" "$P" dot
expect 2 "dot with two FILEs" "$P" dot "$EX/camera.yaml" "$EX/twin.yaml"
expect 2 "dot of a missing file" "$P" dot "$T/missing.yaml" -o "$T/bad.dot"
printf 'dags:\n  - name: x\n    period: 40\n    tasks: []\n' >"$T/broken.yaml"
expect 2 "dot of an invalid file" "$P" dot "$T/broken.yaml" -o "$T/bad.dot"
check "diagnostic names file:line:col" grep -q "broken.yaml:3:13: error: 'period'" "$T/err"
check "dot wrote nothing on error" test ! -e "$T/bad.dot"
expect 2 "dot --plan missing" "$P" dot "$EX/camera.yaml" --plan "$T/missing-plan.yaml"

# dot --plan needs a plan from `optimize` (the optimizer module); camera on zcu102 is solved in ms
if "$P" optimize "$EX/camera.yaml" "$SRC/platforms/zcu102.yaml" -o "$T/plan.yaml" --time-limit 30 >/dev/null 2>&1; then
	expect 0 "dot --plan" "$P" dot "$EX/camera.yaml" --plan "$T/plan.yaml" -o "$T/p.dot"
	check "placement in labels" grep -Eq 'label="capture\\nC=1.5ms\\n(cpu:[0-9]|gpu:|fpga:)' "$T/p.dot"
	check "legend present" grep -q 'cluster_legend' "$T/p.dot"
	expect 0 "placed graph renders" dot -Tsvg "$T/p.dot" -o "$T/p.svg"
	expect 0 "dot of the plan itself" "$P" dot "$T/plan.yaml"
	check "plan file drawn with placement" grep -q 'fillcolor="#' "$T/out"
	expect 2 "dot --plan of another DAG set" "$P" dot "$EX/twin.yaml" --plan "$T/plan.yaml"
else
	echo "note: optimize unavailable here; dot --plan not exercised"
fi

# ---- validate on DAG files
expect 0 "validate the examples" "$P" validate "$EX/camera.yaml" "$EX/automotive.yaml" "$EX/set30.yaml" "$EX/twin.yaml"
expect 2 "validate an invalid DAG file" "$P" validate "$T/broken.yaml"
check "validate reports file:line:col" grep -q "broken.yaml:3:13" "$T/err"
printf 'dags:\n  - name: g\n    period: 40ms\n    tasks:\n      - {name: a, wcet: 1ms}\n      - {name: b, wcet: 1ms}\n    edges: [[a, b], [b, a]]\n' >"$T/cycle.yaml"
expect 2 "validate a cyclic DAG" "$P" validate "$T/cycle.yaml"
check "cycle named" grep -q "cycle in DAG 'g': a -> b -> a" "$T/err"

echo "$fails failure(s)"
[ "$fails" = 0 ]
