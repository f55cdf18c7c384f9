#!/bin/bash
# powerdag validate: exit codes 0/2, "FILE: ok (KIND)" per valid file, file:line:col for every
# problem of every file, clean errors (never a crash) on garbage, truncated and empty input.
. "$(dirname "$0")/lib/expect.sh"

# 1. every shipped file validates, with its kind
shopt -s nullglob
for f in "$SRC"/platforms/*.yaml; do
	expect 0 "$POWERDAG" validate "$f"
	grep -qx "$f: ok (platform)" "$T/out" || fail "no ok line for $f"
done
for f in "$SRC"/dags/examples/*.yaml; do
	expect 0 "$POWERDAG" validate "$f"
	grep -qx "$f: ok (dags)" "$T/out" || fail "no ok line for $f"
done
for f in "$SRC"/tests/plan/*.plan.yaml; do
	expect 0 "$POWERDAG" validate "$f"
	grep -qx "$f: ok (plan)" "$T/out" || fail "no ok line for $f"
done
# all at once
expect 0 "$POWERDAG" validate "$SRC"/platforms/*.yaml "$SRC"/tests/plan/*.plan.yaml
[ "$(grep -c ': ok (' "$T/out")" -ge 6 ] || fail "not every file reported ok"

# 2. bad files: every problem of every file, with positions
cat >"$T/two.yaml" <<'Y'
platform:
  name: two
  reference_frequency: 2GHz
  islands:
    - {name: a, cpus: [0], capacity: 0, opps: [{freq: 1GHz, busy: 1W, idle: 0W}]}
    - {name: b, cpus: [0], opps: [{freq: 1GHz, busy: 1W, idle: 2W}]}
Y
cat >"$T/dag.yaml" <<'Y'
dags:
  - name: g
    period: 10ms
    tasks: [{name: a, wcet: 20}]
Y
expect 2 "$POWERDAG" validate "$T/two.yaml" "$T/dag.yaml"
grep -q "^$T/two.yaml:5:[0-9]*: error: 'capacity' must be > 0" "$T/err" || fail "capacity error missing: $(cat "$T/err")"
grep -q "^$T/two.yaml:6:[0-9]*: error: .*busy power must be >= idle" "$T/err" || fail "busy<idle error missing"
grep -q "^$T/two.yaml:6:[0-9]*: error: CPU 0 listed twice" "$T/err" || fail "CPU twice error missing"
grep -q "^$T/dag.yaml:4:[0-9]*: error: " "$T/err" || fail "DAG error missing: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "ok line printed for an invalid file"

# a good and a bad file: the good one is still reported ok, the exit status is 2
expect 2 "$POWERDAG" validate "$SRC/platforms/zcu102.yaml" "$T/two.yaml"
grep -q "zcu102.yaml: ok (platform)" "$T/out" || fail "good file not reported next to a bad one"

# 3. hostile input: clean errors, exit 2, never a crash
: >"$T/empty.yaml"
printf 'plan:\n  version: 1\n  tasks: [\n' >"$T/trunc.yaml"
printf 'stuff: 1\n' >"$T/unknown.yaml"
printf '\x00\x01\x02\xff\xfe garbage \x7f' >"$T/garbage.yaml"
head -c 1500 "$SRC/platforms/zcu102.yaml" >"$T/cut.yaml"
printf 'a: &x [1]\nb: *x\n' >"$T/alias.yaml"
for f in empty trunc unknown garbage cut alias; do
	expect 2 "$POWERDAG" validate "$T/$f.yaml"
	grep -q "^$T/$f.yaml:[0-9]*:[0-9]*: error: " "$T/err" || fail "$f: no located error: $(cat "$T/err")"
done
grep -q "unknown file kind" <("$POWERDAG" validate "$T/unknown.yaml" 2>&1) || fail "unknown kind not named"
expect 2 "$POWERDAG" validate "$T/does-not-exist.yaml"
grep -q "does-not-exist.yaml: error: cannot open" "$T/err" || fail "missing file message: $(cat "$T/err")"
expect 2 "$POWERDAG" validate "$T"
# truncated prefixes of a plan: each one a clean verdict (0 only for the whole file)
plan=$(ls "$SRC"/tests/plan/*.plan.yaml | head -1)
size=$(wc -c <"$plan")
for n in 1 7 50 200 333 1000 2000 $((size / 2)) $((size - 10)); do
	[ "$n" -lt "$size" ] || continue
	head -c "$n" "$plan" >"$T/prefix.yaml"
	"$POWERDAG" validate "$T/prefix.yaml" >/dev/null 2>&1
	rc=$?
	[ "$rc" -eq 2 ] || [ "$rc" -eq 0 ] || fail "prefix $n of $plan: exit $rc"
done
# standard input
expect 0 "$POWERDAG" validate - <"$SRC/platforms/odroid-xu4.yaml"
grep -qx -- "-: ok (platform)" "$T/out" || fail "stdin not validated"

# 4. usage
expect 2 "$POWERDAG" validate
expect 2 "$POWERDAG" validate --frobnicate "$SRC/platforms/zcu102.yaml"

# 5. --json: one object, all files, all errors
expect 2 "$POWERDAG" validate --json "$SRC/platforms/zcu102.yaml" "$T/two.yaml"
if command -v python3 >/dev/null; then
python3 - "$T/out" "$T/two.yaml" <<'PY' || fail "--json output wrong: $(cat "$T/out")"
import json, sys
o = json.load(open(sys.argv[1]))
assert o["valid"] is False
f = {x["file"]: x for x in o["files"]}
z = [x for x in o["files"] if x["file"].endswith("zcu102.yaml")][0]
assert z["valid"] and z["kind"] == "platform" and z["errors"] == []
t = f[sys.argv[2]]
assert not t["valid"] and t["kind"] == "platform" and len(t["errors"]) == 3
assert all(e["line"] >= 5 and e["col"] >= 1 for e in t["errors"])
PY
else
	grep -q '"valid": false' "$T/out" || fail "--json valid:false missing"
fi
expect 0 "$POWERDAG" validate --json "$SRC/platforms/zcu102.yaml"
grep -q '"valid": true' "$T/out" || fail "--json valid:true missing"

# control characters in the input are echoed escaped (issue 13 item 8): a file cannot clear the
# screen, retitle the terminal or recolour the output through an error message or its own name
printf 'dags:\n  - name: "a\\e]0;pwned\\a\\e[2J"\n    period: 10ms\n    "\\e[31mkey": 1\n' >"$T/esc.yaml"
expect 2 "$POWERDAG" validate "$T/esc.yaml"
LC_ALL=C grep -q $'\033' "$T/err" && fail "validate echoed an ESC byte: $(cat -v "$T/err")"
grep -qF "'a\\e]0;pwned\\x07\\e[2J'" "$T/err" || fail "the DAG name is not shown escaped: $(cat -v "$T/err")"
grep -qF '\e[31mkey' "$T/err" || fail "the unknown key is not shown escaped: $(cat -v "$T/err")"
cp "$SRC/platforms/odroid-xu4.yaml" "$T/"$'\033[1mp.yaml'
expect 0 "$POWERDAG" validate "$T/"$'\033[1mp.yaml'
LC_ALL=C grep -q $'\033' "$T/out" && fail "validate echoed the file name raw: $(cat -v "$T/out")"
grep -qF '\e[1mp.yaml: ok (platform)' "$T/out" || fail "the file name is not shown escaped: $(cat -v "$T/out")"

if [ "$fails" -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "validate.sh: all passed"
