#!/bin/bash
# A namespace twin taken down in the middle of a deploy (issue 16: "a twin killed mid-matrix costs
# only its running job"). The deploy loses its board: exit 3, deploy.json says so. The twin's cgroup
# tree and /proc/sys are this machine's, so what the deploy changed there (its cpuset, the root
# cpuset's sched_load_balance, the RT cap) cannot be restored over SSH: `twin down` must remove the
# orphaned cpuset and put the host values back, and the next deploy on this machine must pass
# pre-flight. Root only (SKIP otherwise); about 1 minute. Run under the machine's e2e lock.
. "$(dirname "$0")/lib/expect.sh"

needs_root "the twin's namespaces, SCHED_DEADLINE"
export POWERDAG_TWIN_DIR="$T/twin" POWERDAG_TWIN_NETNS=pdkill-e2e POWERDAG_TWIN_SUBNET=10.213.83.0
trap '"$POWERDAG" twin down >/dev/null 2>&1; rm -rf "$T"' EXIT
CG=/sys/fs/cgroup/cpuset
[ -e "$CG/cpuset.cpu_exclusive" ] || CG=/sys/fs/cgroup
host_values() { # what a deploy to the twin changes on this machine
	cat /proc/sys/kernel/sched_rt_runtime_us
	[ -e "$CG/cpuset.sched_load_balance" ] && cat "$CG/cpuset.sched_load_balance"
	[ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] && cat /sys/fs/cgroup/cpu/cpu.rt_runtime_us
	return 0
}
[ ! -e "$CG/powerdag" ] || { fail "$CG/powerdag exists before the test"; finish twin_kill_e2e; }
host_values >"$T/host.before"

expect 0 "$POWERDAG" twin up
expect 0 "$POWERDAG" optimize "$SRC/dags/examples/twin.yaml" "$POWERDAG_TWIN_DIR/platform.yaml" -o "$T/plan.yaml"
"$POWERDAG" deploy "$T/plan.yaml" --board twin --duration 30s --out "$T/run" >"$T/dep.out" 2>"$T/dep.err" &
dep=$!
# the middle of the deploy: the agent's threads are in the deploy's per-CPU cpusets
mid=
for _ in $(seq 1 300); do
	if cat "$CG"/powerdag/cpu*/tasks "$CG"/powerdag/cpu*/cgroup.threads 2>/dev/null | grep -q .; then
		mid=1
		break
	fi
	sleep 0.1
done
[ -n "$mid" ] || fail "the deploy never put a task in $CG/powerdag: $(tail -3 "$T/dep.err")"
host_values >"$T/host.during"
cmp -s "$T/host.before" "$T/host.during" && echo "note: the plan changed no host value but its cpuset"
sleep 1
expect 0 "$POWERDAG" twin down
cat "$T/err"
grep -q "removed $CG/powerdag, left by a deploy killed with the twin" "$T/err" ||
	fail "twin down did not say it removed the deploy's cpuset: $(cat "$T/err")"
[ ! -e "$CG/powerdag" ] || fail "$CG/powerdag is left after twin down: $(ls "$CG/powerdag")"
host_values >"$T/host.after"
cmp -s "$T/host.before" "$T/host.after" ||
	fail "host values not put back: before $(tr '\n' ' ' <"$T/host.before"), after $(tr '\n' ' ' <"$T/host.after")"

wait $dep
rc=$?
[ "$rc" -eq 3 ] || fail "deploy to a twin taken down: exit $rc (want 3): $(tail -3 "$T/dep.err")"
[ -s "$T/run/deploy.json" ] || fail "no deploy.json after the board was lost"
python3 - "$T/run/deploy.json" <<'PY' || fail "deploy.json does not say the board was lost"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["result"] == "error" and j["exit_code"] == 3, (j["result"], j["exit_code"])
print("deploy.json: error:", j["error"])
print("deploy.json: restore:", json.dumps(j["restore"])[:300])
PY

# the machine is usable again: a new twin and a short deploy pass pre-flight and run
expect 0 "$POWERDAG" twin up
expect 0 "$POWERDAG" deploy "$T/plan.yaml" --board twin --duration 2s --out "$T/run2"
[ -s "$T/run2/deploy.json" ] || fail "the deploy after the kill wrote no deploy.json"
expect 0 "$POWERDAG" twin down
[ ! -e "$CG/powerdag" ] || fail "$CG/powerdag left after a clean deploy"
host_values >"$T/host.end"
cmp -s "$T/host.before" "$T/host.end" || fail "host values differ after a clean deploy"
finish twin_kill_e2e
