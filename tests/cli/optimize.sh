#!/bin/bash
# powerdag optimize: exit 0 with a plan written (and --json keys), 1 for an infeasible set with the
# reason naming the DAG path, 2 for bad usage and bad input (every file:line:col, nothing written).
. "$(dirname "$0")/lib/expect.sh"

cat >"$T/plat.yaml" <<'EOF'
platform:
  name: two
  reference_frequency: 1000MHz
  base_power: 1W
  dl: {max_util_per_cpu: 0.95}
  islands:
    - name: cpu
      cpus: [0, 1]
      opps:
        - {freq: 500MHz, busy: 300mW, idle: 100mW}
        - {freq: 1000MHz, busy: 1W, idle: 200mW}
EOF
cat >"$T/ok.yaml" <<'EOF'
dags:
  - name: cam
    period: 10ms
    tasks: [{name: grab, wcet: 1ms}, {name: proc, wcet: 2ms}]
    edges: [[grab, proc]]
EOF
cat >"$T/slow.yaml" <<'EOF'
dags:
  - name: slow
    period: 10ms
    tasks: [{name: a, wcet: 6ms}, {name: b, wcet: 6ms}]
    edges: [[a, b]]
EOF
cat >"$T/bad.yaml" <<'EOF'
dags:
  - name: cam
    period: 10ms
    tasks: [{name: grab, wcet: 1parsec}, {name: proc, wcet: 2ms, colour: red}]
EOF

# success: plan written, text and JSON
expect 0 "$POWERDAG" optimize "$T/ok.yaml" "$T/plat.yaml" -o "$T/plan.yaml" --time-limit 5
[ -s "$T/plan.yaml" ] || fail "no plan written"
grep -q '^plan:' "$T/plan.yaml" || fail "plan file has no plan: key"
grep -q 'status' "$T/out" || fail "text output lacks the status"
expect 0 "$POWERDAG" optimize "$T/ok.yaml" "$T/plat.yaml" --json --solver exact --time-limit 5
for k in status objective power_w lower_bound_w gap min_relative_slack solve_time_s solver; do
	jq -e "has(\"$k\")" "$T/out" >/dev/null || fail "--json lacks $k: $(cat "$T/out")"
done
[ "$(jq -r .status "$T/out")" = optimal ] || fail "tiny instance not optimal: $(cat "$T/out")"
expect 0 "$POWERDAG" optimize "$T/ok.yaml" "$T/plat.yaml" --json --solver heuristic --objective balanced
expect 0 "$POWERDAG" optimize "$T/ok.yaml" "$T/plat.yaml" --json --objective slack --power-cap 3W
awk -v s="$(jq -r .min_relative_slack "$T/out")" 'BEGIN { exit !(s > 0.5) }' || fail "slack objective: $(cat "$T/out")"
# --backend cbc: a plan (CBC built in) or a clear usage error (built without CBC)
"$POWERDAG" optimize "$T/ok.yaml" "$T/plat.yaml" --backend cbc --solver exact --time-limit 5 --json >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 0 ]; then
	[ "$(jq -r .status "$T/out")" = optimal ] || fail "--backend cbc: $(cat "$T/out")"
else
	[ "$rc" -eq 2 ] && grep -q "no CBC" "$T/err" || fail "--backend cbc: exit $rc $(cat "$T/err")"
fi

# infeasible: exit 1, reason names the DAG and its path, nothing written
rm -f "$T/plan2.yaml"
expect 1 "$POWERDAG" optimize "$T/slow.yaml" "$T/plat.yaml" -o "$T/plan2.yaml"
grep -q "DAG slow: path a -> b" "$T/out" "$T/err" || fail "infeasible reason: $(cat "$T/out" "$T/err")"
[ ! -e "$T/plan2.yaml" ] || fail "plan written for an infeasible set"
expect 1 "$POWERDAG" optimize "$T/slow.yaml" "$T/plat.yaml" --json
[ "$(jq -r .status "$T/out")" = infeasible ] || fail "--json status of an infeasible set"

# optimize -> check on the XU4 (the exact mode's per-core phase): the written plan passes the
# independent checker, and a short --time-limit is honoured (limit + 0.5 s, wall clock)
expect 0 "$POWERDAG" gen --dags 2 --tasks 5:5 --util 0.12 --seed 3 --min-wcet 20us --layers 3:6 -o "$T/xu4set.yaml"
t0=$(date +%s%N)
expect 0 "$POWERDAG" optimize "$T/xu4set.yaml" "$SRC/platforms/odroid-xu4.yaml" --solver exact --time-limit 1 \
	-o "$T/xu4plan.yaml"
took_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$took_ms" -le 1500 ] || fail "optimize took $took_ms ms for --time-limit 1"
expect 0 "$POWERDAG" check "$T/xu4plan.yaml"

# bad input: every error with file:line:col, exit 2, nothing written
expect 2 "$POWERDAG" optimize "$T/bad.yaml" "$T/plat.yaml" -o "$T/plan3.yaml"
grep -q "bad.yaml:4:[0-9]*: " "$T/err" || fail "no file:line:col for the bad wcet: $(cat "$T/err")"
[ "$(grep -c 'bad.yaml:' "$T/err")" -ge 2 ] || fail "not every error reported: $(cat "$T/err")"
[ ! -e "$T/plan3.yaml" ] || fail "plan written for bad input"
expect 2 "$POWERDAG" optimize "$T/ok.yaml" "$T/missing.yaml"
# bad usage
expect 2 "$POWERDAG" optimize "$T/ok.yaml"
expect 2 "$POWERDAG" optimize "$T/ok.yaml" "$T/plat.yaml" --solver magic
expect 2 "$POWERDAG" optimize "$T/ok.yaml" "$T/plat.yaml" --objective slack
expect 2 "$POWERDAG" optimize "$T/ok.yaml" "$T/plat.yaml" --time-limit -1
expect 2 "$POWERDAG" optimize "$T/ok.yaml" "$T/plat.yaml" --bogus
for g in -0.1 1 150% abc 1e-4x; do
	expect 2 "$POWERDAG" optimize "$T/ok.yaml" "$T/plat.yaml" --gap "$g" -o "$T/plan4.yaml"
	[ ! -e "$T/plan4.yaml" ] || fail "plan written for --gap $g"
	grep -q -- "invalid value '$g' for --gap" "$T/err" || fail "--gap $g: the error does not name the option: $(cat "$T/err")"
done
# --gap in percent: status optimal with a certified gap of at most 5 %
expect 0 "$POWERDAG" optimize "$T/xu4set.yaml" "$SRC/platforms/odroid-xu4.yaml" --solver exact --gap 5% --json
jq -e '.status == "optimal" and .gap <= 0.05' "$T/out" >/dev/null || fail "--gap 5%: $(cat "$T/out")"
expect 0 "$POWERDAG" optimize --help

# power limits (issue 13 item 5): a power beyond 1000000W is refused where it is read, a solution whose
# model power sums above it is not written (it would print a negative power no reader accepts), and a
# plan at the limit reads back
sed 's/base_power: 1W/base_power: 9223372036854775807uW/' "$T/plat.yaml" >"$T/huge.yaml"
expect 2 "$POWERDAG" optimize "$T/ok.yaml" "$T/huge.yaml" -o "$T/plan5.yaml"
grep -q "huge.yaml:4:15: error: 'base_power'.*more than 1000000W" "$T/err" || fail "huge base power: $(cat "$T/err")"
sed 's/base_power: 1W/base_power: 1000000W/' "$T/plat.yaml" >"$T/limit.yaml"
expect 2 "$POWERDAG" optimize "$T/ok.yaml" "$T/limit.yaml" -o "$T/plan5.yaml"
grep -q "above 1000000W, the largest power a plan may state" "$T/err" || fail "sum above the limit: $(cat "$T/err")"
[ ! -e "$T/plan5.yaml" ] || fail "plan written with a power above the limit"
sed 's/base_power: 1W/base_power: 999998W/' "$T/plat.yaml" >"$T/near.yaml"
expect 0 "$POWERDAG" optimize "$T/ok.yaml" "$T/near.yaml" -o "$T/plan6.yaml"
grep -q '^    power: 999998.[0-9]*W$' "$T/plan6.yaml" || fail "plan near the limit: $(grep power: "$T/plan6.yaml")"
for c in 1e300 9223372036854 1000000.000001W -1W; do
	expect 2 "$POWERDAG" optimize "$T/ok.yaml" "$T/plat.yaml" --objective slack --power-cap "$c" -o "$T/plan7.yaml"
	[ ! -e "$T/plan7.yaml" ] || fail "plan written for --power-cap $c"
done
expect 0 "$POWERDAG" optimize "$T/ok.yaml" "$T/plat.yaml" --objective slack --power-cap 1000000 -o "$T/plan7.yaml"

# every plan this test made the optimizer write reads back: validate and check accept each one
n=0
for p in "$T"/*plan*.yaml; do
	[ -e "$p" ] || continue
	n=$((n + 1))
	expect 0 "$POWERDAG" validate "$p"
	expect 0 "$POWERDAG" check "$p"
done
[ "$n" -ge 4 ] || fail "only $n plans were written"

finish optimize.sh
