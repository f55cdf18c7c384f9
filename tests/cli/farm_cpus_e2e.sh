#!/bin/bash
# The local LAVA farm with twins on CPUs of their own (`farm-local.sh up --cpus-each 1`, docs/FARM.md
# "Concurrency and queueing"): two twins, each on one host CPU, registered as one device type with
# one platform; each device has its own CPU group, cpuset directory (cgroup) and cpu_map in the lab
# file. A matrix of 2 plans x 2 repetitions: every run is collected with 0 misses and power within
# 10 % of the model, runs on the two twins overlap in time, and each ran on its twin's CPU (deploy.json
# cpu_map: the plan's CPU 0 is host CPU 0 or 1). A matrix is repeated once when a run missed (a
# stalled vCPU; the rule of the other e2e tests). Bad usage of --cpus-each exits 2 with nothing
# started. `down` leaves no twin, cpuset or process. Root, 2 CPUs, the LAVA packages (SKIP otherwise);
# about 3 minutes. Run under the machine's e2e lock.
. "$(dirname "$0")/lib/expect.sh"

needs_root "the twins' namespaces, SCHED_DEADLINE"
needs_cpus 2
needs_cmds lava-server lava-worker lavacli gunicorn3 jq /usr/lib/postgresql/15/bin/initdb
chmod 755 "$T" # PostgreSQL runs as postgres and keeps its cluster in the farm's state directory
S=$T/farm
PORT=18480
FL="$SRC/scripts/farm-local.sh"
trap '"$FL" down --state "$S" >/dev/null 2>&1; rm -rf "$T"' EXIT
CG=/sys/fs/cgroup/cpuset
[ -e "$CG/cpuset.cpu_exclusive" ] || CG=/sys/fs/cgroup

# bad usage: more CPUs than the machine has, or none; nothing started
expect 2 "$FL" up --boards 2 --cpus-each "$(nproc)" --state "$S" --port $PORT --powerdag "$POWERDAG"
grep -q "CPUs each need" "$T/err" || fail "--cpus-each beyond the machine: $(cat "$T/err")"
expect 2 "$FL" up --boards 2 --cpus-each 0 --state "$S" --port $PORT --powerdag "$POWERDAG"
[ ! -e "$S" ] || fail "a refused up left $S"

expect 0 "$FL" up --boards 2 --cpus-each 1 --state "$S" --port $PORT --powerdag "$POWERDAG"
cat "$T/out"
LAB=$S/lab.yaml
for i in 1 2; do
	grep -A7 "name: twin-$i\$" "$LAB" | grep -q "cpu_map: \"$((i - 1))\"" || fail "twin-$i has no cpu_map $((i - 1)): $(cat "$LAB")"
	grep -A7 "name: twin-$i\$" "$LAB" | grep -q "cpu_group: twin-$i" || fail "twin-$i is not a CPU group of its own"
done

P=$T/plans
mkdir -p "$P"
expect 0 "$POWERDAG" optimize "$SRC/tests/cli/light.dags.yaml" "$S/platform-twin.yaml" -o "$P/power.yaml" --time-limit 5
expect 0 "$POWERDAG" optimize "$SRC/tests/cli/light.dags.yaml" "$S/platform-twin.yaml" -o "$P/slack.yaml" \
	--objective slack --power-cap 100W --time-limit 5

matrix() { # matrix DIR: 0 when all 4 runs are as promised and the twins ran at once
	local F=$1
	"$POWERDAG" farm submit --lab "$LAB" --out "$F" --repeat 2 --duration 3s "$P/power.yaml" "$P/slack.yaml" \
		>"$T/m.out" 2>"$T/m.err" || { tail -8 "$T/m.out" "$T/m.err"; return 2; }
	tail -6 "$T/m.out"
	grep -q "4 runs: 4 collected, 0 missing, 0 pending" "$T/m.out" || return 2
	for d in "$F"/runs/*; do
		"$POWERDAG" report "$d" --json >"$d.report.json" || return 2
	done
	python3 - "$F" <<'PY'
import glob, json, sys
F = sys.argv[1]
spans, bad = {}, []
for d in sorted(glob.glob(F + "/runs/*/")):
    j = json.load(open(d.rstrip("/") + ".report.json"))
    dep = json.load(open(d + "deploy.json"))
    dev = dep["farm"]["device"]
    want = int(dev.split("-")[1]) - 1  # twin-1 on host CPU 0, twin-2 on 1
    assert dep["result"] == "ok" and dep["restore"]["done"], (d, dep["result"])
    assert dep["cpu_map"]["plan_cpus"] == [0] and dep["cpu_map"]["board_cpus"] == [want], (d, dep["cpu_map"])
    assert j["measured"]["instances"] > 0, d
    e = j["model_at_measured"]["error_pct"]
    assert e is not None and abs(e) <= 10, (d, "power off the model by %s %%" % e)
    if j["measured"]["misses"]:
        bad.append((d, j["measured"]["misses"]))
    spans.setdefault(dev, []).append((dep["start"], dep["end"]))
assert sorted(spans) == ["twin-1", "twin-2"], spans
# ISO times of one clock compare as strings: some run on twin-1 overlaps some run on twin-2
overlap = any(a0 < b1 and b0 < a1 for a0, a1 in spans["twin-1"] for b0, b1 in spans["twin-2"])
assert overlap, ("the twins never deployed at once", spans)
print("runs on twin-1 %s, on twin-2 %s" % (spans["twin-1"], spans["twin-2"]))
if bad:
    print("misses:", bad)
    sys.exit(1)
PY
}
matrix "$T/m1"
rc=$?
if [ $rc = 1 ]; then
	echo "a run missed (above): the matrix once more"
	matrix "$T/m2"
	rc=$?
fi
[ $rc = 0 ] || fail "matrix on two twins with CPUs of their own (above)"

"$FL" down --state "$S" || fail "farm-local.sh down"
[ ! -e "$S" ] || fail "$S left behind"
ip netns list | grep -q pdfarm- && fail "a farm netns is left: $(ip netns list)"
pgrep -f "$S" >/dev/null && fail "a process of the farm is left: $(pgrep -af "$S")"
ls -d "$CG"/powerdag* 2>/dev/null && fail "a deploy's cpuset is left"
finish farm_cpus_e2e
