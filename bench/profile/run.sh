#!/usr/bin/env bash
# bench/profile/run.sh - how long `powerdag profile` takes per step, and how well it recovers a power
# table it was not told.
#
#   bench/profile/run.sh [BUILD_DIR] [RUNS]      (root; default BUILD_DIR=build, RUNS=1; run it under the
#                                                 machine's e2e lock: it runs SCHED_DEADLINE threads)
#
# 1. `profile --board local` with a one-island platform of this machine's CPUs (no cpufreq, no rails:
#    overhead and spin speed only).
# 2. RUNS times: a private board twin started from the built-in board's platform with every power
#    entry perturbed by -20..+25 % (a fresh seed each run, printed), profiled with the nominal
#    platform: the recovered table against the truth (median and worst error over every island and GPU
#    power entry; the nominal table's error for comparison).
# Prints one table per profile: step, seconds (median over the steps of one kind per island and OPP at
# the end), then a summary.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
runs=${2:-1}
pd=$build/powerdag
pt=$here/tests/cli/lib/power_table.py
[ -x "$pd" ] || { echo "no $pd (build first)" >&2; exit 2; }
work=$(mktemp -d /tmp/pd-bench-profile.XXXXXX)
export POWERDAG_TWIN_DIR=$work/twin POWERDAG_TWIN_NETNS=pdbprof$$ POWERDAG_TWIN_SUBNET=10.213.$((150 + $$ % 50)).0
cleanup() { "$pd" twin down >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT INT TERM

table() { # profile --json output -> per-step table and per-kind medians
	python3 - "$1" <<'PY'
import json, statistics, sys
j = json.load(open(sys.argv[1]))
print(f'  {"step":<66} {"s":>6}')
for s in j["steps"]:
    print(f'  {s["step"]:<66} {s["seconds"]:6.2f}' + (f'  (measured {1 + s.get("retries", 0)} times)' if s.get("retries") else ''))
by = {}
for s in j["steps"]:
    by.setdefault(s["kind"], []).append(s["seconds"])
print('  per kind: ' + ', '.join(f'{k} median {statistics.median(v):.2f} s worst {max(v):.2f} s (n={len(v)})' for k, v in by.items()))
print(f'  total {j["seconds"]:.1f} s, {len(j["steps"])} steps, {len(j["skipped"])} skipped, {len(j["flags"])} flags; restore: {j["restore"]}')
PY
}

ncpu=$(nproc)
cpus=$(seq -s, 0 $((ncpu - 1)))
cat > "$work/local.yaml" <<YAML
platform:
  name: local
  reference_frequency: 2GHz
  islands:
    - {name: cpus, cpus: [$cpus], opps: [{freq: 2GHz, busy: 1W, idle: 100mW}]}
YAML
echo "== profile --board local ($ncpu CPUs)"
"$pd" profile --board local --platform "$work/local.yaml" -o "$work/local-fit.yaml" --json >"$work/local.json" 2>"$work/local.err" ||
	{ tail -3 "$work/local.err"; exit 3; }
table "$work/local.json"

"$pd" twin up >/dev/null
cp "$POWERDAG_TWIN_DIR/platform.yaml" "$work/nominal.yaml"
"$pd" twin down >/dev/null
for i in $(seq 1 "$runs"); do
	seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	python3 "$pt" perturb "$work/nominal.yaml" "$seed" "$work/truth-src.yaml"
	"$pd" twin up "$work/truth-src.yaml" >/dev/null
	cp "$POWERDAG_TWIN_DIR/platform.yaml" "$work/truth.yaml"
	echo "== profile --board twin, run $i (power table perturbed, seed $seed)"
	"$pd" profile --board twin --platform "$work/nominal.yaml" -o "$work/fit.yaml" --json >"$work/twin.json" 2>"$work/twin.err" ||
		{ tail -3 "$work/twin.err"; exit 3; }
	"$pd" twin down >/dev/null
	table "$work/twin.json"
	echo "  recovered: $(python3 "$pt" compare "$work/truth.yaml" "$work/fit.yaml" | sed -n 1p) (percent)"
	echo "  nominal:   $(python3 "$pt" compare "$work/truth.yaml" "$work/nominal.yaml" | sed -n 1p) (percent)"
done
