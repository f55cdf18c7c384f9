#!/usr/bin/env bash
# bench/deployer/run.sh - deploy + restore overhead on the board twin, excluding the run itself.
#
#   bench/deployer/run.sh [BUILD_DIR] [RUNS]      (root; default BUILD_DIR=build, RUNS=5)
#
# Starts a private twin, optimises dags/examples/twin.yaml for it, deploys RUNS times with a 1 s run
# and prints, per run, setup (connect, pre-flight, snapshot, apply, upload, start) and teardown (stop,
# fetch, restore) from deploy.json, their sum, and the median. Target: sum < 2 s.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
runs=${2:-5}
pd=$build/powerdag
[ -x "$pd" ] || { echo "no $pd (build first)" >&2; exit 2; }
work=$(mktemp -d /tmp/pd-bench-deploy.XXXXXX)
state=$work/twin
netns=pdbench$$
subnet=10.213.$((200 + $$ % 50)).0
cleanup() { "$pd" twin down --state "$state" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT INT TERM
"$pd" twin up --state "$state" --netns "$netns" --subnet "$subnet" --json > "$work/twin.json"
get() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$@"; }
uri=$(get "$work/twin.json" uri)
"$pd" optimize "$here/dags/examples/twin.yaml" "$(get "$work/twin.json" platform)" --solver heuristic \
	-o "$work/plan.yaml" >/dev/null
printf '%-5s %10s %12s %9s %8s\n' run setup_s teardown_s total_s result
for i in $(seq 1 "$runs"); do
	out=$work/run$i
	"$pd" deploy "$work/plan.yaml" --board "$uri" --identity "$(get "$work/twin.json" identity)" \
		--known-hosts "$(get "$work/twin.json" known_hosts)" --duration 1s --out "$out" >/dev/null 2>&1 || true
	python3 - "$out/deploy.json" "$i" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s, t = d["setup_s"], d["teardown_s"]
print(f'{sys.argv[2]:<5} {s:10.3f} {t:12.3f} {s + t:9.3f} {d["result"] + ("" if d["restore"]["state_equal"] else " (state differs)"):>8}')
PY
done | tee "$work/table"
python3 - "$work/table" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
tot = [float(r[3]) for r in rows]
med = statistics.median(tot)
print(f'median total {med:.3f} s over {len(tot)} runs (target < 2 s): {"OK" if med < 2 else "OVER"}')
PY
