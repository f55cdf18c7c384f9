#!/bin/bash
# Two namespace twins on disjoint host CPUs deploy at the same time (issue 16: the farm's wall time on
# a host with CPUs for several boards). `twin up --host-cpus N` makes a one-core twin on host CPU N
# whose deploys use their own cpuset directory, powerdag-NETNS (twin.json "cgroup"), so the
# two deploys' exclusive cpusets never meet. Checked: bad input exits 2 and creates nothing; each
# twin's platform names its host CPU, and its /proc/stat that CPU alone; the two 5-s runs overlap in
# time, each is collected with 0 misses and restored; one plan runs on either twin (`deploy
# --cpu-map`); afterwards the host's sched_load_balance, RT cap and cpuset root are as before.
# A run that missed is repeated (both deploys again) up to twice, the rule of the other e2e tests.
# Root only (SKIP otherwise), at least 2 CPUs; about 40 s. Run under the machine's e2e lock.
. "$(dirname "$0")/lib/expect.sh"

needs_root "the twins' namespaces, SCHED_DEADLINE"
needs_cpus 2
down_all() { for i in 0 1; do "$POWERDAG" twin down --state "$T/twin$i" >/dev/null 2>&1; done; }
trap 'down_all; rm -rf "$T"' EXIT
CG=/sys/fs/cgroup/cpuset
[ -e "$CG/cpuset.cpu_exclusive" ] || CG=/sys/fs/cgroup
host_values() { # what a deploy to a namespace twin changes on this machine
	cat /proc/sys/kernel/sched_rt_runtime_us
	[ -e "$CG/cpuset.sched_load_balance" ] && cat "$CG/cpuset.sched_load_balance"
	[ -e /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] && cat /sys/fs/cgroup/cpu/cpu.rt_runtime_us
	ls -d "$CG"/powerdag* 2>/dev/null
	return 0
}
host_values >"$T/host.before"

# bad input: exit 2, nothing created
expect 2 "$POWERDAG" twin up --host-cpus 4096 --state "$T/bad"
grep -q "expected a CPU list" "$T/err" || fail "--host-cpus 4096: $(cat "$T/err")"
expect 2 "$POWERDAG" twin up --host-cpus 1-0 --state "$T/bad"
expect 2 "$POWERDAG" twin up --host-cpus 0 --cpus 1 --state "$T/bad"
expect 2 "$POWERDAG" twin up --vm --host-cpus 0 --state "$T/bad"
[ ! -e "$T/bad" ] || fail "a refused twin up left $T/bad"
expect 2 "$POWERDAG" deploy "$T/none.yaml" --board local --cgroup ../x
grep -q "cpuset directory name" "$T/err" || fail "--cgroup ../x: $(cat "$T/err")"

for i in 0 1; do
	expect 0 "$POWERDAG" twin up --host-cpus "$i" --state "$T/twin$i" --netns "pdshare$i" --subnet "10.213.9$((i + 4)).0"
	grep -q "cpus: \[$i\]" "$T/twin$i/platform.yaml" || fail "twin $i: its platform's island is not on host CPU $i"
	grep -q "\"cgroup\": \"powerdag-pdshare$i\"" "$T/twin$i/twin.json" || fail "twin $i: twin.json has no cgroup powerdag-pdshare$i"
	# the board's /proc/stat (docs/TWIN.md) lists its one core, host CPU $i, and no other
	if [ -e /sys/fs/cgroup/cpuacct/cpuacct.usage_percpu ]; then
		d=$(sed -n 's/.*"daemon": *\([0-9]*\).*/\1/p' "$T/twin$i/twin.json")
		cores=$(grep -o '^cpu[0-9][0-9]*' "/proc/$d/root/proc/stat" | tr '\n' ' ')
		[ "$cores" = "cpu$i " ] || fail "twin $i: its /proc/stat lists '$cores', not cpu$i alone"
	fi
	expect 0 "$POWERDAG" optimize "$SRC/tests/cli/light.dags.yaml" "$T/twin$i/platform.yaml" -o "$T/plan$i.yaml" --time-limit 5
done

both() { # both deploys at once, 5 s each; 0 when both are collected, restored, with 0 misses
	local i ok=0
	for i in 0 1; do
		rm -rf "$T/run$i"
		POWERDAG_TWIN_DIR="$T/twin$i" "$POWERDAG" deploy "$T/plan$i.yaml" --board twin --duration 5s \
			--out "$T/run$i" >"$T/dep$i.out" 2>"$T/dep$i.err" &
		eval "pid$i=\$!"
	done
	wait "$pid0" || { fail "deploy to twin 0: $(tail -3 "$T/dep0.err")"; ok=2; }
	wait "$pid1" || { fail "deploy to twin 1: $(tail -3 "$T/dep1.err")"; ok=2; }
	[ $ok = 0 ] || return 2
	for i in 0 1; do
		"$POWERDAG" report "$T/run$i" >"$T/report$i" || { fail "report $i"; return 2; }
		grep -q 'restore ok' "$T/report$i" || { fail "twin $i: not restored: $(grep restore "$T/report$i")"; return 2; }
		grep -q "powerdag-pdshare$i" "$T/run$i/deploy.json" || { fail "twin $i: deploy.json does not name powerdag-pdshare$i"; return 2; }
		[ "$(awk '$1 == "all" {print $3}' "$T/report$i")" = 0 ] || ok=1
	done
	return $ok
}
for try in 1 2 3; do
	both
	rc=$?
	[ $rc = 1 ] || break
	echo "try $try: misses ($(awk '$1 == "all"' "$T/report0" "$T/report1" | tr '\n' ' ')); both deploys again"
done
[ $rc = 1 ] && fail "deadline misses in each of 3 tries"
if [ $rc = 0 ]; then
	# the runs overlap: each one's start lies before the other's end (report times, 1-s resolution)
	times() { sed -n 's/.*(start \([^,]*\), end \([^)]*\)).*/\1 \2/p' "$1"; }
	read -r s0 e0 <<<"$(times "$T/report0")"
	read -r s1 e1 <<<"$(times "$T/report1")"
	[[ -n "$s0" && -n "$s1" && "$s0" < "$e1" && "$s1" < "$e0" ]] ||
		fail "the two runs did not overlap: $s0..$e0 and $s1..$e1"
	echo "two twins deployed at once: runs $s0..$e0 and $s1..$e1, 0 misses each"
fi
# One plan, either twin (--cpu-map, docs/DEPLOY.md "CPU map"): a plan for twin 0's platform names
# host CPU 0; twin 1 reaches its one core as CPU 1. Its sensors name the board's own iiod
# (127.0.0.1 in whichever twin's netns), as the farm's one platform per device type does.
sed -E "s/'ip:[0-9.]+'/'ip:127.0.0.1'/" "$T/twin0/platform.yaml" >"$T/any.platform.yaml"
expect 0 "$POWERDAG" optimize "$SRC/tests/cli/light.dags.yaml" "$T/any.platform.yaml" -o "$T/any.yaml" --time-limit 5
expect 2 env POWERDAG_TWIN_DIR="$T/twin1" "$POWERDAG" deploy "$T/any.yaml" --board twin --cpu-map 0,1 --out "$T/badmap"
grep -q "a CPU map of 2 CPUs for a platform of 1 cores" "$T/err" || fail "--cpu-map 0,1: $(cat "$T/err")"
[ ! -e "$T/badmap" ] || fail "a refused --cpu-map left $T/badmap"
expect 2 env POWERDAG_TWIN_DIR="$T/twin1" "$POWERDAG" deploy "$T/any.yaml" --board twin --cpu-map 1-0 --out "$T/badmap"
grep -q "backwards" "$T/err" || fail "--cpu-map 1-0: $(cat "$T/err")"
for try in 1 2 3; do
	rm -rf "$T/mapped"
	expect 0 env POWERDAG_TWIN_DIR="$T/twin1" "$POWERDAG" deploy "$T/any.yaml" --board twin --cpu-map 1 --duration 3s \
		--out "$T/mapped"
	expect 0 "$POWERDAG" report "$T/mapped" --json
	python3 - "$T/out" "$T/mapped" <<'PY' && break
import json, sys
j = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2] + "/deploy.json"))
m = d["cpu_map"]
assert m["plan_cpus"] == [0] and m["board_cpus"] == [1], m
assert d["result"] == "ok" and d["restore"]["done"], d
assert j["measured"]["instances"] > 0
assert j["measured"]["misses"] == 0, ("misses", j["measured"]["misses"])
PY
	[ "$try" = 3 ] && fail "the plan mapped onto twin 1: deploy.json or misses in each of 3 tries (above)"
done
grep -q "cpus: \[1\]" "$T/mapped/plan.yaml" || fail "RUNDIR/plan.yaml is not the plan on CPU 1"
grep -q "policy: policy1" "$T/mapped/plan.yaml" || fail "RUNDIR/plan.yaml: the policy did not follow the core"
grep -q "placement: 'cpu:1'" "$T/mapped/plan.yaml" || fail "RUNDIR/plan.yaml: the tasks are not on CPU 1"
for i in 0 1; do
	expect 0 "$POWERDAG" twin down --state "$T/twin$i"
done
host_values >"$T/host.after"
cmp -s "$T/host.before" "$T/host.after" || fail "host values changed: $(diff "$T/host.before" "$T/host.after" | tr '\n' ' ')"
finish twin_shared_e2e
