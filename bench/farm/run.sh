#!/usr/bin/env bash
# bench/farm/run.sh - the local LAVA farm's set-up time and the overhead LAVA adds per run.
#
#   bench/farm/run.sh [BUILD_DIR] [BOARDS] [REPEAT] [ROUNDS] [CPUS_EACH] [RUN_S]
#                                          (root; defaults build, 3, 3, 1, none, 2)
#
# ROUNDS times: scripts/farm-local.sh up (PostgreSQL, LAVA services, BOARDS twins health-checked),
# a matrix of 3 plans x REPEAT runs of RUN_S seconds through `powerdag farm submit`, then down. Prints per
# round: set-up s, down s, matrix wall s, and per run (from farm.json and the LAVA jobs): hold wait
# (LAVA starting the job -> the board held: login, overlay, test shell), deploy s (powerdag deploy,
# the run included) and LAVA's whole job minus the deploy; median and worst; and the deploys'
# summed time over the matrix's wall (how many ran at once, on average). CPUS_EACH: the twins get
# that many host CPUs of their own (farm-local.sh --cpus-each) and deploy at once. The plans:
# tests/cli/light.dags.yaml planned for power, slack and balance. Run under the
# machine's e2e lock (it runs the agent).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
boards=${2:-3}
repeat=${3:-3}
rounds=${4:-1}
cpus_each=${5:-}
run_s=${6:-2}
case "$run_s" in ''|*[!0-9]*|0) echo "RUN_S: whole seconds, at least 1" >&2; exit 2 ;; esac
own=()
[ -n "$cpus_each" ] && own=(--cpus-each "$cpus_each")
pd=$build/powerdag
[ -x "$pd" ] || { echo "no $pd (build first)" >&2; exit 2; }
work=$(mktemp -d /tmp/pd-bench-farm.XXXXXX)
chmod 755 "$work" # PostgreSQL (user postgres) keeps its cluster in the farm state below
state=$work/farm
cleanup() { "$here/scripts/farm-local.sh" down --state "$state" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT INT TERM
now() { date +%s.%N; }
printf '%-6s %8s %7s %9s %5s %13s %13s %13s %11s\n' round setup_s down_s matrix_s runs hold_wait_s deploy_s lava_extra_s at_once
for r in $(seq 1 "$rounds"); do
	t0=$(now)
	"$here/scripts/farm-local.sh" up --boards "$boards" ${own[@]+"${own[@]}"} --state "$state" --port 18380 --powerdag "$pd" \
		>"$work/up.log" 2>&1 ||
		{ cat "$work/up.log"; exit 3; }
	t1=$(now)
	plat=$state/platform-twin.yaml
	# the light set planned three ways (power, slack, balance): it fits a twin of one core too (a
	# twin's LITTLE core runs 4.8x slower than the reference; generated sets rarely fit one), so
	# the shared and the own-CPU farms run the same work
	light=$here/tests/cli/light.dags.yaml
	"$pd" optimize "$light" "$plat" -o "$work/power.yaml" >/dev/null
	"$pd" optimize "$light" "$plat" -o "$work/slack.yaml" --objective slack --power-cap 100W >/dev/null
	"$pd" optimize "$light" "$plat" -o "$work/balanced.yaml" --objective balanced >/dev/null
	t2=$(now)
	"$pd" farm submit --lab "$state/lab.yaml" --out "$work/m$r" --repeat "$repeat" --duration "${run_s}s" \
		"$work/power.yaml" "$work/slack.yaml" "$work/balanced.yaml" >"$work/m$r.out" 2>"$work/m$r.err" || true
	t3=$(now)
	. "$state/farm.env"
	stats=$(python3 - "$work/m$r/farm.json" "$LAVA_URL" "$LAVA_TOKEN" <<'PY'
import json, sys, urllib.request, datetime
j = json.load(open(sys.argv[1]))
def med(v): v = sorted(v); return v[len(v) // 2] if v else float("nan")
def ts(s): return datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
hold = [r["hold_wait_s"] for r in j["runs"] if r["phase"] == "collected"]
dep = [r["deploy_s"] for r in j["runs"] if r["phase"] == "collected"]
extra = []
for r in j["runs"]:
    if r["phase"] != "collected":
        continue
    q = urllib.request.Request(sys.argv[2] + "api/v0.2/jobs/%d/" % r["lava_job"], headers={"Authorization": "Token " + sys.argv[3]})
    x = json.load(urllib.request.urlopen(q))
    extra.append((ts(x["end_time"]) - ts(x["start_time"])).total_seconds() - r["deploy_s"])
n = sum(r["phase"] == "collected" for r in j["runs"])
print("%d/%d %.1f/%.1f %.1f/%.1f %.1f/%.1f %.1f" % (n, len(j["runs"]), med(hold), max(hold or [0]), med(dep), max(dep or [0]), med(extra), max(extra or [0]), sum(dep)))
PY
)
	t4=$(now)
	"$here/scripts/farm-local.sh" down --state "$state"
	t5=$(now)
	read -r runs hw dp ex dsum <<<"$stats"
	printf '%-6s %8.1f %7.1f %9.1f %5s %13s %13s %13s %11.2f\n' "$r" "$(echo "$t1 - $t0" | bc)" "$(echo "$t5 - $t4" | bc)" \
		"$(echo "$t3 - $t2" | bc)" "$runs" "$hw" "$dp" "$ex" "$(echo "$dsum / ($t3 - $t2)" | bc -l)"
done
echo "(per-run columns: median/worst; lava_extra = LAVA job start..end minus the deploy: login, overlay, hold"
echo " while the CPU group was busy with other twins' runs, finalize; at_once = summed deploy time / matrix wall)"
