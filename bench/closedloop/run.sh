#!/usr/bin/env bash
# bench/closedloop/run.sh - does a plan that `check` and `simulate` call schedulable hold on a board?
#
#   bench/closedloop/run.sh [--build DIR] [--plans N] [--max-draws M] [--duration T] [--boards "local twin"]
#                           [--seed-base S]
#   (root; default build, 10 plans per board, 10s each, both boards, seed base drawn fresh and printed)
#
# Per board: profile the board with the nominal platform (local: a one-island platform of this machine's
# CPUs; twin: the twin's own platform), then fresh `gen` seeds (base+1, base+2, ...) until N plans have
# run on it (at most M = 4N seeds drawn): optimize on the fitted platform, check, simulate for the run
# length, deploy for the run length, report. A set the optimizer calls infeasible on the fitted
# platform is drawn again (the fitted overhead and margin decide how much of a random set fits, and the
# claim is about plans, not sets); the number drawn is printed per board. Prints one row per plan
# (instances, misses predicted by simulate, misses measured) and per board the totals; the claim the
# bench checks is "0 measured misses wherever check and simulate say 0". Exit 1 when a plan has misses
# that neither the replay nor a cause outside the plan explains: unexplained = min(miss - replay,
# none), "none" being the misses with no CPU stall, stretched job, stolen time or other reservation
# beside them (the report's misses_outside_plan). Rows with misses say WCET when the replay predicts them all (the jobs
# took more than their WCET and margin: the inputs, `refit`), HOST when the rest all have an outside
# cause; the totals count every miss.
# Column replay: the misses the simulator predicts when each job executes what it really took (the
# report's replay, docs/REPORTS.md); "beyond" counts measured misses above it, i.e. misses that the
# measured execution times do not explain (stolen vCPU time, release latency, a model gap).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$here/build
plans=10
max_draws=
duration=10s
boards="local twin"
seed_base=$(( $(od -An -N4 -tu4 /dev/urandom) % 1000000 ))
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--plans) plans=$2; shift 2 ;;
	--max-draws) max_draws=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	--boards) boards=$2; shift 2 ;;
	--seed-base) seed_base=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--plans N] [--max-draws M] [--duration T] [--boards \"local twin\"] [--seed-base S]" >&2; exit 2 ;;
	esac
done
case $plans in ''|*[!0-9]*|0) echo "--plans: a positive number" >&2; exit 2 ;; esac
max_draws=${max_draws:-$((4 * plans))}
case $max_draws in ''|*[!0-9]*|0) echo "--max-draws: a positive number" >&2; exit 2 ;; esac
pd=$build/powerdag
[ -x "$pd" ] || { echo "no $pd (build first)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "root needed (SCHED_DEADLINE, the twin)" >&2; exit 2; }
work=$(mktemp -d /tmp/pd-bench-loop.XXXXXX)
state=$work/twin
cleanup() { "$pd" twin down --state "$state" >/dev/null 2>&1 || true; }
trap cleanup EXIT INT TERM
. "$here/bench/closedloop/lib.sh"

echo "seed base $seed_base (seeds base+1, base+2, ... until $plans plans ran, at most $max_draws per board), $duration each; work dir $work"

board_args() { # board -> deploy/profile arguments
	if [ "$1" = local ]; then echo "--board local"
	else echo "--board $(jget "$work/twin.json" "d['uri']") --identity $(jget "$work/twin.json" "d['identity']") --known-hosts $(jget "$work/twin.json" "d['known_hosts']")"
	fi
}

# steal: CPU time the hypervisor took during the deploy (/proc/stat, all CPUs); late: jobs that ended
# after the plan's latest finish (late-instance rule 4 re-anchored their reservation); foreign: misses
# next to another process' SCHED_DEADLINE thread on the plan's CPUs (FOREIGN records, outside the
# model: docs/MODEL.md), "-" when the agent did not scan; stall: misses next to a CPU stall (a job ready
# and waiting while its CPU ran no other job of the plan: docs/REPORTS.md "CPU stalls")
steal_ms() { awk '/^cpu /{print int($9 * 1000 / 100)}' /proc/stat; }
agent=$build/agents/powerdag-agent
printf '%-6s %-8s %5s %6s %10s %10s %10s %10s %7s %8s %6s %7s %5s %5s %s\n' board seed tasks check sim_inst sim_miss inst miss replay steal_ms late foreign stall none result
fail=0
all_p=0; all_i=0; all_m=0; all_u=0
for b in $boards; do
	if [ "$b" = twin ]; then
		"$pd" twin up --state "$state" --netns pdloop$$ --subnet 10.213.$((150 + $$ % 40)).0 --json > "$work/twin.json"
		nominal=$(jget "$work/twin.json" "d['platform']")
		ncpu=$(grep -c '^processor' /proc/cpuinfo)
	else
		nominal=$work/local-nominal.yaml
		local_nominal "$nominal"
	fi
	# shellcheck disable=SC2046
	if ! "$pd" profile $(board_args "$b") --platform "$nominal" -o "$work/$b-fitted.yaml" 2> "$work/$b-profile.log"; then
		echo "$b: profile failed, see $work/$b-profile.log" >&2
		tail -5 "$work/$b-profile.log" >&2
		fail=1
		continue
	fi
	tot_i=0; tot_m=0; tot_s=0; tot_r=0; tot_b=0; tot_st=0; tot_n=0; tot_u=0
	ran=0; drawn=0
	while [ "$ran" -lt "$plans" ] && [ "$drawn" -lt "$max_draws" ]; do
		drawn=$((drawn + 1))
		seed=$((seed_base + drawn))
		set_f=$work/$b-$seed.yaml plan=$work/$b-$seed.plan.yaml run=$work/$b-$seed.run
		# the twin's default islands are one slow little and one big core: lighter sets there
		util=0.4; [ "$b" = twin ] && util=0.25
		"$pd" gen --dags 2 --tasks 3:5 --min-wcet 256us --util "$util" --seed "$seed" -o "$set_f"
		if ! "$pd" optimize "$set_f" "$work/$b-fitted.yaml" --time-limit 5 -o "$plan" >/dev/null 2>&1; then
			printf '%-6s %-8s %5s %6s %s\n' "$b" "$seed" - - "infeasible on this board: skipped"
			continue
		fi
		ntask=$(grep -c 'placement:' "$plan")
		ck=ok; "$pd" check "$plan" >/dev/null 2>&1 || ck=FAIL
		"$pd" simulate "$plan" --duration "$duration" --json > "$work/sim.json"
		si=$(jget "$work/sim.json" "sum(g['instances'] for g in d['dags'])")
		sm=$(jget "$work/sim.json" "d['misses']")
		# shellcheck disable=SC2046
		st0=$(steal_ms)
		drc=0
		"$pd" deploy "$plan" $(board_args "$b") --duration "$duration" --out "$run" >/dev/null 2>"$work/deploy.err" || drc=$?
		st=$(($(steal_ms) - st0))
		if [ ! -s "$run/run.pdlog" ]; then # the board refused the run (busy, admission): not a measurement
			printf '%-6s %-8s %5s %6s %s\n' "$b" "$seed" "$ntask" "$ck" "deploy exit $drc, no run: $(grep -v '^deploy:' "$work/deploy.err" | head -1)"
			continue
		fi
		late=$("$agent" dump "$run/run.pdlog" summary 2>/dev/null | sed -n 's/^late_jobs: //p')
		if "$pd" report "$run" --json > "$work/rep.json" 2>/dev/null; then
			mi=$(jget "$work/rep.json" "d['measured']['instances']")
			mm=$(jget "$work/rep.json" "d['measured']['misses']")
			rm=$(jget "$work/rep.json" "(d['predicted']['replay'] or {}).get('misses', '?')")
			fm=$(jget "$work/rep.json" "(d['measured'].get('foreign_dl') or {}).get('misses_overlapping', '-')")
			sl=$(jget "$work/rep.json" "(d['measured'].get('cpu_stalls') or {}).get('misses_overlapping', '-')")
			nm=$(jget "$work/rep.json" "d['measured']['misses'] - d['measured'].get('misses_outside_plan', 0)")
		else
			mi=0 mm=? rm=? fm=- sl=- nm=?
		fi
		ran=$((ran + 1))
		res=ok
		if [ "$ck" = ok ] && [ "$sm" = 0 ] && [ "$mm" != 0 ]; then
			case "$mm$rm$nm" in
			*[!0-9]*) res=MISSES; fail=1 ;; # a figure missing: nothing explained
			*)
				ux=$((mm - rm)); [ "$ux" -lt 0 ] && ux=0; [ "$nm" -lt "$ux" ] && ux=$nm
				if [ "$ux" -gt 0 ]; then res=MISSES; fail=1; tot_u=$((tot_u + ux))
				elif [ "$rm" -ge "$mm" ]; then res=WCET
				else res=HOST; fi ;;
			esac
		fi
		printf '%-6s %-8s %5s %6s %10s %10s %10s %10s %7s %8s %6s %7s %5s %5s %s\n' "$b" "$seed" "$ntask" "$ck" "$si" "$sm" "$mi" "$mm" \
			"$rm" "$st" "${late:-?}" "$fm" "$sl" "$nm" "$res"
		tot_i=$((tot_i + mi)); [ "$mm" = "?" ] || tot_m=$((tot_m + mm)); tot_s=$((tot_s + st))
		case $sl in ''|*[!0-9]*) ;; *) tot_st=$((tot_st + sl)) ;; esac
		case $nm in ''|*[!0-9]*) ;; *) tot_n=$((tot_n + nm)) ;; esac
		if [ "$mm" != "?" ] && [ "$rm" != "?" ]; then
			tot_r=$((tot_r + rm))
			if [ "$mm" -gt "$rm" ]; then tot_b=$((tot_b + mm - rm)); fi
		fi
	done
	printf '%-6s plans: %d ran of %d seeds drawn (the others infeasible on the fitted platform or refused)\n' "$b" "$ran" "$drawn"
	if [ "$ran" -lt "$plans" ]; then
		printf '%-6s FAILED: only %d of the %d plans asked for ran within %d seeds\n' "$b" "$ran" "$plans" "$max_draws"
		fail=1
	fi
	printf '%-6s total: %d instances measured, %d missed, %d ms stolen by the hypervisor\n' "$b" "$tot_i" "$tot_m" "$tot_s"
	printf '%-6s replay: %d misses predicted from the measured execution times; %d measured misses beyond it\n' "$b" "$tot_r" "$tot_b"
	printf '%-6s stalls: %d of the %d misses came next to a CPU stall (a ready job waiting while its CPU ran none of the plan)\n' \
		"$b" "$tot_st" "$tot_m"
	printf '%-6s causes: %d of the %d misses met no cause outside the plan (CPU stall, stretched job, stolen time, other reservation)\n' \
		"$b" "$tot_n" "$tot_m"
	printf '%-6s verdict: %d misses explained neither by the replay nor by a cause outside the plan\n' "$b" "$tot_u"
	all_p=$((all_p + ran)); all_i=$((all_i + tot_i)); all_m=$((all_m + tot_m)); all_u=$((all_u + tot_u))
	[ "$b" = twin ] && cleanup
done
printf 'all    %d plans, %d instances measured, %d missed, %d unexplained\n' "$all_p" "$all_i" "$all_m" "$all_u"
exit $fail
