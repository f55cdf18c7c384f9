#!/bin/bash
# bench/simulator/run.sh [BUILD_DIR] - simulator throughput: events per second and simulated-to-wall
# ratio for hand-built, check-passing plans of 10, 50 and 200 tasks (gen_plan.sh), one simulated hour
# each (uniform execution times), plus peak RSS for 1 minute vs 1 hour of the 50-task plan (memory must
# not depend on the simulated duration). Prints one table. Build in Release for meaningful numbers:
#   cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release && cmake --build build-rel --target powerdag
#   bench/simulator/run.sh build-rel
# Targets (docs/SIMULATOR.md): >= 5 M events/s; one simulated hour of 50 tasks in < 2 s.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-$HERE/../../build}
PD=$BUILD/powerdag
[ -x "$PD" ] || { echo "no powerdag binary in $BUILD (pass the build directory)" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

field() { # field NAME FILE: a top-level number of the simulate JSON
	sed -n "s/^  \"$1\": \([0-9.e+-]*\),\{0,1\}$/\1/p" "$2" | head -1
}
rss_kb() { # rss_kb CMD...: peak resident set size of CMD in KiB
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1
	else
		echo "?"
	fi
}

printf '%-6s %-8s %12s %10s %14s %12s %8s\n' tasks sim_s events wall_s events_per_s sim/wall misses
for n in 10 50 200; do
	"$HERE/gen_plan.sh" "$n" >"$T/p$n.yaml"
	"$PD" check "$T/p$n.yaml" >/dev/null || { echo "generated plan of $n tasks fails check" >&2; exit 1; }
	"$PD" simulate "$T/p$n.yaml" --duration 3600s --exec uniform --json >"$T/r$n.json"
	ev=$(field events "$T/r$n.json")
	wall=$(field wall_s "$T/r$n.json")
	miss=$(field misses "$T/r$n.json")
	awk -v n="$n" -v ev="$ev" -v w="$wall" -v m="$miss" \
		'BEGIN { printf "%-6d %-8d %12d %10.3f %14.0f %12.0f %8d\n", n, 3600, ev, w, ev / w, 3600 / w, m }'
done
r60=$(rss_kb "$PD" simulate "$T/p50.yaml" --duration 60s --exec uniform)
r3600=$(rss_kb "$PD" simulate "$T/p50.yaml" --duration 3600s --exec uniform)
echo "peak RSS, 50 tasks: 60 s simulated ${r60} KiB, 3600 s simulated ${r3600} KiB"
