#!/usr/bin/env bash
# bench/closedloop/chain.sh - the closed-loop issue's chain on this machine, as a new user runs it:
#
#   bench/closedloop/chain.sh [--build DIR] [--runs N] [--duration T]
#   (root; default build, 3 runs of 10s)
#
# `powerdag profile --board local` with a one-island platform of this machine's online CPUs (one
# OPP, dl.max_util_per_cpu 0.95), then the chain a -> b -> c (WCET 1, 2, 1 ms, T = D = 20 ms,
# tests/cli/chain.dags.yaml) optimized on the fitted platform, checked, simulated and deployed N
# times for T each. One row per run: instances, misses, the replay's misses, and the misses with a
# cause outside the plan (CPU stall, stretched job, stolen time, another reservation: docs/REPORTS.md).
# Exit 1 when a run has a miss that neither the replay nor an outside cause explains, like
# bench/closedloop/run.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$here/build
runs=3
duration=10s
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--runs N] [--duration T]" >&2; exit 2 ;;
	esac
done
case $runs in ''|*[!0-9]*|0) echo "--runs: a positive number" >&2; exit 2 ;; esac
pd=$build/powerdag
[ -x "$pd" ] || { echo "no $pd (build first)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "root needed (SCHED_DEADLINE)" >&2; exit 2; }
work=$(mktemp -d /tmp/pd-bench-chain.XXXXXX)
. "$here/bench/closedloop/lib.sh"

local_nominal "$work/nominal.yaml"
cp "$here/tests/cli/chain.dags.yaml" "$work/chain.yaml"
echo "work dir $work; $runs runs of $duration; load $(cut -d' ' -f1-3 /proc/loadavg)"
"$pd" profile --board local --platform "$work/nominal.yaml" -o "$work/fitted.yaml" > "$work/profile.log" 2>&1 ||
	{ echo "profile failed:" >&2; tail -5 "$work/profile.log" >&2; exit 1; }
grep -E 'job_overhead|budget_margin' "$work/profile.log" | sed 's/^ */profile: /' || true
"$pd" optimize "$work/chain.yaml" "$work/fitted.yaml" -o "$work/plan.yaml" >/dev/null
grep -E 'task: [abc],' "$work/plan.yaml" | sed 's/^ *- */plan: /' || true
ck=ok; "$pd" check "$work/plan.yaml" >/dev/null 2>&1 || ck=FAIL
"$pd" simulate "$work/plan.yaml" --duration "$duration" --json > "$work/sim.json"
echo "check: $ck; simulate: $(jget "$work/sim.json" "d['misses']") misses in $duration"
printf '%-4s %10s %7s %7s %8s %s\n' run instances misses replay outside result
fail=0 tot_i=0 tot_m=0
for i in $(seq 1 "$runs"); do
	run=$work/run$i
	if ! "$pd" deploy "$work/plan.yaml" --board local --duration "$duration" --out "$run" >/dev/null 2> "$work/deploy$i.err"; then
		[ -s "$run/run.pdlog" ] || { echo "run $i: deploy failed: $(tail -1 "$work/deploy$i.err")"; fail=1; continue; }
	fi
	"$pd" report "$run" --json > "$work/rep$i.json"
	mi=$(jget "$work/rep$i.json" "d['measured']['instances']")
	mm=$(jget "$work/rep$i.json" "d['measured']['misses']")
	rm=$(jget "$work/rep$i.json" "(d['predicted']['replay'] or {}).get('misses', 0)")
	om=$(jget "$work/rep$i.json" "d['measured'].get('misses_outside_plan', 0)")
	res=ok
	if [ "$mm" -gt 0 ]; then
		ux=$((mm - rm)); [ $((mm - om)) -lt "$ux" ] && ux=$((mm - om))
		if [ "$ux" -gt 0 ]; then res=MISSES; fail=1
		elif [ "$rm" -ge "$mm" ]; then res=WCET
		else res=HOST; fi
	fi
	[ "$ck" = ok ] || { res="$res (check FAILED)"; fail=1; }
	printf '%-4s %10s %7s %7s %8s %s\n' "$i" "$mi" "$mm" "$rm" "$om" "$res"
	tot_i=$((tot_i + mi)); tot_m=$((tot_m + mm))
done
echo "total: $tot_i instances, $tot_m misses"
exit $fail
