#!/bin/bash
# An island's background_util (software outside the plan: the agent's sampler, iiod, sshd) is in
# every prediction alike: optimize's predicted power, simulate's power and the report's plan column
# add (P_busy - P_idle) x background_util, and a platform file keeps it through the plan. Bad values:
# file:line:col, exit 2, nothing written.
. "$(dirname "$0")/lib/expect.sh"

cp "$SRC/tests/cli/chain.dags.yaml" "$T/chain.yaml"
plat() { # $1: extra island line
	printf 'platform:\n  name: two\n  reference_frequency: 1000MHz\n  islands:\n    - name: cpu\n      cpus: [0, 1]\n%b      opps:\n        - {freq: 1000MHz, busy: 1W, idle: 0.1W}\n' "$1"
}

# without: 2 x 0.1 + 0.9 x (1.1 + 2.1 + 1.1) / 20 = 0.3935 W (tests/cli/overhead.sh)
plat "" > "$T/p0.yaml"
expect 0 "$POWERDAG" optimize "$T/chain.yaml" "$T/p0.yaml" -o "$T/plan0.yaml"
grep -q 'power: 393.5mW' "$T/plan0.yaml" || fail "predicted power without background is not 0.3935 W: $(grep power: "$T/plan0.yaml")"
grep -q background_util "$T/plan0.yaml" && fail "a platform without background_util gained one"
# with 0.25 cores of background: + 0.9 x 0.25 = 0.225 W
plat "      background_util: 0.25\n" > "$T/p1.yaml"
expect 0 "$POWERDAG" optimize "$T/chain.yaml" "$T/p1.yaml" -o "$T/plan1.yaml"
grep -q 'power: 618.5mW' "$T/plan1.yaml" || fail "predicted power with background is not 0.6185 W: $(grep power: "$T/plan1.yaml")"
grep -q 'background_util: 0.25' "$T/plan1.yaml" || fail "the plan's platform lost background_util"
expect 0 "$POWERDAG" check "$T/plan1.yaml"
expect 0 "$POWERDAG" simulate "$T/plan1.yaml" --duration 10s --fail-on-miss
grep -q 'power 0.618500 W' "$T/out" || fail "simulated power is not 0.6185 W: $(grep power "$T/out")"
# the same jobs: the background is power, not work
expect 0 "$POWERDAG" simulate "$T/plan0.yaml" --duration 10s --fail-on-miss
grep -q 'power 0.393500 W' "$T/out" || fail "simulated power without background is not 0.3935 W"

# bad values: position, exit 2, no plan written
island_value() { plat "      $1\n"; }
refused_by_optimize island_value "background_util: 3:7:24" "background_util: -0.1:7:24" \
	"background_util: 0.1234567:7:24" "background_util: lots:7:24"
finish background
