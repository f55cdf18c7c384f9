#!/bin/bash
# powerdag farm end to end on a local LAVA farm (scripts/farm-local.sh, docs/FARM.md): PostgreSQL,
# lava-server, scheduler, publisher and a worker as plain processes, three board twins as SSH
# devices that pass their health checks. A matrix of 3 plans x 3 repetitions is submitted and
# followed: all 9 runs are collected into run directories that `powerdag report` reads with zero
# misses, deploy.json names the LAVA job and device. Then a twin is taken down while a run deploys
# to it: only that run is missing, `farm status` names it and why, LAVA marks that device Bad (its
# health check fails), the other runs are collected. `down` leaves no process, namespace, database
# or board file behind. Root and the LAVA packages needed (SKIP with the reason otherwise); a few
# minutes. Run under the machine's e2e lock.
. "$(dirname "$0")/lib/expect.sh"

needs_root "the twins' namespaces, SCHED_DEADLINE"
for c in lava-server lava-worker lavacli gunicorn3 /usr/lib/postgresql/15/bin/initdb; do
	if ! command -v "$c" >/dev/null; then
		echo "SKIP: $c is not installed (scripts/install-deps.sh installs lava-server, lava-dispatcher, lavacli, postgresql)"
		exit 0
	fi
done
# the host's stolen CPU time (ms, all CPUs): the 8th value of /proc/stat's cpu line
steal_ms() { awk '/^cpu /{print int($9 * 1000 / '"$(getconf CLK_TCK)"')}' /proc/stat; }
chmod 755 "$T" # PostgreSQL runs as postgres and keeps its cluster in the farm's state directory
S=$T/farm
PORT=18280
FL="$SRC/scripts/farm-local.sh"
trap '"$FL" down --state "$S" >/dev/null 2>&1; rm -rf "$T"' EXIT

t0=$(date +%s.%N)
"$FL" up --boards 3 --state "$S" --port $PORT --powerdag "$POWERDAG" >"$T/up.out" 2>&1 ||
	{ cat "$T/up.out"; fail "farm-local.sh up"; finish farm_e2e; }
cat "$T/up.out"
LAB=$S/lab.yaml
. "$S/farm.env"
lavacli --uri "$LAVA_URI" devices list >"$T/devs" || fail "lavacli devices list"
[ "$(grep -c 'Idle,Good' "$T/devs")" -eq 3 ] || fail "3 healthy devices expected: $(cat "$T/devs")"

# three plans for the twin (the same platform on every twin: one CPU model, one power model): the
# example set planned for the least power
P=$T/plans
mkdir -p "$P"
expect 0 "$POWERDAG" optimize "$SRC/dags/examples/twin.yaml" "$S/platform-twin.yaml" -o "$P/example.yaml"
# and the same DAG set planned for the most slack under a generous cap, and balanced
expect 0 "$POWERDAG" optimize "$SRC/dags/examples/twin.yaml" "$S/platform-twin.yaml" -o "$P/slack.yaml" \
	--objective slack --power-cap 100W
expect 0 "$POWERDAG" optimize "$SRC/dags/examples/twin.yaml" "$S/platform-twin.yaml" -o "$P/balanced.yaml" \
	--objective balanced

# bad input: nothing written
expect 2 "$POWERDAG" farm submit --lab "$LAB" --out "$T/bad" --device-type zcu102 "$P/example.yaml"
grep -q "no board of that type" "$T/err" || fail "a device type without boards: $(cat "$T/err")"
[ ! -e "$T/bad" ] || fail "farm submit wrote $T/bad on bad input"

# the matrix: 3 plans x 3 repetitions, 2-s runs
F=$T/m1
s0=$(steal_ms)
ts=$(date +%s.%N)
expect 0 "$POWERDAG" farm submit --lab "$LAB" --out "$F" --repeat 3 --duration 2s \
	"$P/example.yaml" "$P/slack.yaml" "$P/balanced.yaml"
te=$(date +%s.%N)
tail -12 "$T/out"
grep -q "9 runs: 9 collected, 0 missing, 0 pending" "$T/out" || fail "matrix: $(tail -3 "$T/out") $(tail -5 "$T/err")"
expect 0 "$POWERDAG" farm status "$F" --json
python3 - "$T/out" "$F" <<'PY' || fail "farm status --json / run directories (above)"
import json, os, sys
j = json.load(open(sys.argv[1]))
assert j["collected"] == 9 and j["missing"] == 0, j
devs = set()
for r in j["runs"]:
    d = json.load(open(os.path.join(sys.argv[2], r["run_dir"], "deploy.json")))
    assert d["result"] == "ok" and d["farm"]["lava_job"] == r["lava_job"], (r, d.get("farm"))
    assert d["farm"]["device"] == r["device"] and r["lava_health"] == "Complete", r
    devs.add(r["device"])
assert devs == {"twin-1", "twin-2", "twin-3"}, devs
w = sorted(r["hold_wait_s"] for r in j["runs"])
print("hold wait (LAVA start to held) median %.1f s, worst %.1f s" % (w[4], w[8]))
PY
# A run judged by its report: 0 misses, instances, power within 10 % of the model at the measured load
# and of the plan. The host of a CI VM can stall a vCPU for tens of ms (the agents' e2e tests saw it):
# as every test that asserts zero misses does (tests/agents/helper_agents.c), a run that fails is
# repeated, on its own, up to twice, with its report and the host's stolen CPU time printed; an executor
# or model bug fails every repeat.
judge() { # judge RUNDIR: 0 when the run is as promised
	expect 0 "$POWERDAG" report "$1" --json
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
m = j["measured"]
assert m["misses"] == 0, ("misses", m["misses"], "of", m["instances"])
assert m["instances"] > 0
e = j["model_at_measured"]["error_pct"]
assert e is not None and abs(e) <= 10, ("power off the model at the measured load, %", e)
p = j.get("power_error_pct")
assert p is None or abs(p) <= 10, ("power off the plan, %", p)
' "$T/out"
}
rejudge() { # rejudge RUNDIR PLAN DURATION: repeats PLAN up to twice after RUNDIR failed
	local d=$1 plan=$2 dur=$3 k
	"$POWERDAG" report "$d" >&2 || true
	echo "host steal during the matrix: $((s1 - s0)) ms of CPU time; repeating $(basename "$d")" >&2
	for k in 1 2; do
		local s2 rd
		s2=$(steal_ms)
		rm -rf "$T/rep"
		"$POWERDAG" farm submit --lab "$LAB" --out "$T/rep" --repeat 1 --duration "$dur" "$plan" >"$T/rep.out" 2>&1 ||
			{ cat "$T/rep.out"; continue; }
		rd=$(ls -d "$T"/rep/runs/* | head -1)
		if judge "$rd"; then
			echo "repeat $k of $(basename "$d"): as promised ($(($(steal_ms) - s2)) ms stolen)" >&2
			return 0
		fi
		"$POWERDAG" report "$rd" >&2 || true
		echo "repeat $k of $(basename "$d") failed too ($(($(steal_ms) - s2)) ms stolen)" >&2
	done
	return 1
}
s1=$(steal_ms)
for d in "$F"/runs/*; do
	judge "$d" && continue
	plan=$P/$(basename "$d" | sed 's/-twin-r[0-9]*$//').yaml
	rejudge "$d" "$plan" 2s || fail "report $d: misses, no instances or power off the model by > 10 %, in every repeat"
done
printf 'matrix of 9 runs: %.1f s wall\n' "$(echo "$te - $ts" | bc)"

# a twin taken down in the middle of its deploy (the agent's threads in the deploy's cpusets): that
# run only is missing, and said so; `twin down` removes the cpuset the killed deploy left on this
# machine (twin/hostguard.c), so the other runs, which take turns on the twins' one CPU group, deploy
# after it.
F2=$T/m2
CG=/sys/fs/cgroup/cpuset
[ -e "$CG/cpuset.cpu_exclusive" ] || CG=/sys/fs/cgroup
# This collect runs from a copy of powerdag that is deleted as soon as the collect has started (an
# upgrade or a rebuild during a night's matrix): its deploys still run the file it started from
# (farm/collect.c holds it open); the copy's directory holds the agent, where deploy looks first.
B=$T/bin
mkdir -p "$B"
cp "$POWERDAG" "$B/powerdag"
cp "$(dirname "$POWERDAG")/agents/powerdag-agent" "$B/powerdag-agent"
"$B/powerdag" farm submit --lab "$LAB" --out "$F2" --repeat 3 --duration 4s "$P/example.yaml" >"$T/m2.out" 2>"$T/m2.err" &
sub=$!
for _ in $(seq 1 200); do [ -s "$F2/farm.json" ] && break; sleep 0.1; done
rm -f "$B/powerdag"
[ -s "$F2/farm.json" ] && [ ! -e "$B/powerdag" ] || fail "the collect did not start, or its binary is still there"
victim=
for _ in $(seq 1 480); do
	if cat "$CG"/powerdag/cpu*/tasks "$CG"/powerdag/cpu*/cgroup.threads 2>/dev/null | grep -q .; then
		victim=$(python3 -c '
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(0)
for r in j["runs"]:
    if r["phase"] == "running":
        print(r["device"]); break
' "$F2/farm.json" 2>/dev/null)
	fi
	[ -n "$victim" ] && break
	sleep 0.25
done
[ -n "$victim" ] || fail "no run was seen in the middle of its deploy"
[ -n "$victim" ] && { "$POWERDAG" twin down --state "$S/$victim" >/dev/null 2>"$T/down.err" || fail "twin down $victim"; }
[ -n "$victim" ] && { grep -q "removed $CG/powerdag" "$T/down.err" || fail "twin down left the deploy's cpuset: $(cat "$T/down.err")"; }
wait $sub
rc=$?
[ "$rc" -eq 1 ] || fail "farm submit with a twin down: exit $rc (want 1): $(tail -3 "$T/m2.err")"
expect 1 "$POWERDAG" farm status "$F2"
cat "$T/out"
grep -q "3 runs: 2 collected, 1 missing" "$T/out" || fail "twin down: $(tail -2 "$T/out")"
grep -q "^missing: example-twin-r" "$T/out" || fail "status does not name the missing run"
grep "missing " "$T/out" | grep -q "$victim" || fail "the missing run is not the one on $victim"
# LAVA runs the health check on that device, which fails: Bad
for _ in $(seq 1 60); do
	lavacli --uri "$LAVA_URI" devices list >"$T/devs"
	grep -q "$victim (twin): Idle,Bad" "$T/devs" && break
	sleep 1
done
grep -q "$victim (twin): Idle,Bad" "$T/devs" || fail "LAVA did not mark $victim Bad: $(cat "$T/devs")"

# down: nothing left
"$FL" down --state "$S" || fail "farm-local.sh down"
[ ! -e "$S" ] || fail "$S left behind"
ip netns list | grep -q pdfarm- && fail "a farm netns is left: $(ip netns list)"
pgrep -f "$S" >/dev/null && fail "a process of the farm is left: $(pgrep -af "$S")"
pgrep -f '^lava-run' >/dev/null && fail "a LAVA job process is left: $(pgrep -af '^lava-run')"
ls -d /lava-[0-9]* 2>/dev/null && fail "LAVA overlays left on the twins' root"
[ ! -e "$CG/powerdag" ] || fail "a deploy's cpuset is left: $CG/powerdag"
printf 'farm_e2e: %.0f s in all\n' "$(echo "$(date +%s.%N) - $t0" | bc)"
finish farm_e2e
