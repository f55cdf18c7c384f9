#!/bin/bash
# bench/agent/run.sh [BUILD_DIR] [SECONDS] - powerdag-agent against rt-app, and the power sampler's cost.
#
# 1. The same periodic task set (3 SCHED_DEADLINE tasks on CPU 1: 0.5 ms/5 ms, 1 ms/10 ms, 2 ms/20 ms,
#    budgets 1.5x) runs under powerdag-agent and under rt-app, both inside the same exclusive cpuset
#    (one root domain = CPU 1, made here the way the deployer does). Printed: release latency
#    (job start - theoretical release; rt-app: wu_lat) p50/p99/max, and CPU overhead = process CPU time
#    minus the jobs' configured work (agent: builtin:busy, exact thread CPU time; rt-app: "runtime"
#    events, wall-clock busy loops - so rt-app's figure is optimistic when its jobs are preempted),
#    in % of one CPU.
# 2. The power sampler alone (a 1 % load plan) on 18 fake INA226 rails (local backend, private mount
#    namespace) at 100 Hz and 1 kHz: the sampler thread's CPU time in % of one CPU.
# Needs root, cgroup v1 cpusets, rt-app, python3. Prints one table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${1:-$src/build-agent}
secs=${2:-10}
agent=$build/agents/powerdag-agent
[ -x "$agent" ] || { echo "build powerdag-agent first: cmake --build $build --target powerdag-agent" >&2; exit 2; }
command -v rt-app >/dev/null || { echo "rt-app not installed" >&2; exit 3; }
# hold the agents' cpuset lock: no powerdag-agent of this machine makes partitions meanwhile
exec 9>/run/powerdag-agent.cpuset.lock
flock 9
work=$(mktemp -d /tmp/pdbench.XXXXXX)
cs=/sys/fs/cgroup/cpuset
grp=$cs/pdbench-$$
bal=$(cat $cs/cpuset.sched_load_balance)
cleanup() {
	for t in $(cat "$grp/cpu1/tasks" 2>/dev/null); do echo "$t" > $cs/tasks 2>/dev/null || true; done
	rmdir "$grp/cpu1" "$grp" 2>/dev/null || true
	echo "$bal" > $cs/cpuset.sched_load_balance
	rm -rf "$work"
}
trap cleanup EXIT
mkdir "$grp"; echo 0-1 > "$grp/cpuset.cpus"; cat $cs/cpuset.mems > "$grp/cpuset.mems"
# another tool's exclusive cpuset may exist for a moment (e.g. a deployer test): retry
for i in $(seq 100); do echo 1 2>/dev/null > "$grp/cpuset.cpu_exclusive" && break; sleep 0.2; done
[ "$(cat "$grp/cpuset.cpu_exclusive")" = 1 ] || { echo "cannot make an exclusive cpuset (another one holds the CPUs)" >&2; exit 3; }
echo 0 > "$grp/cpuset.sched_load_balance"
mkdir "$grp/cpu1"; echo 1 > "$grp/cpu1/cpuset.cpus"; cat $cs/cpuset.mems > "$grp/cpu1/cpuset.mems"
echo 1 > "$grp/cpu1/cpuset.cpu_exclusive"; echo 0 > $cs/cpuset.sched_load_balance

# ---- the task set, as a plan (agent) and as an rt-app JSON
plat='  platform:
    name: bench
    reference_frequency: 2000MHz
    islands:
    - name: cpu
      cpus: [0, 1]
      capacity: 1
      opps:
      - {freq: 2000MHz, busy: 1W, idle: 100mW}'
cat > "$work/set.plan.yaml" <<YAML
plan:
  version: 1
  solver: {status: feasible, objective: power, solver: heuristic, gap: 0, solve_time_s: 0}
  predicted: {power: 1W, min_relative_slack: 0.5}
  islands:
  - {name: cpu, freq: 2000MHz}
  tasks:
  - {dag: a, task: t, placement: 'cpu:1', wcet: 500us, runtime: 750us, deadline: 5ms, period: 5ms, reclaim: false}
  - {dag: b, task: t, placement: 'cpu:1', wcet: 1ms, runtime: 1.5ms, deadline: 10ms, period: 10ms, reclaim: false}
  - {dag: c, task: t, placement: 'cpu:1', wcet: 2ms, runtime: 3ms, deadline: 20ms, period: 20ms, reclaim: false}
  dags:
  - {name: a, period: 5ms, tasks: [{name: t, wcet: 500us, work: builtin:busy}]}
  - {name: b, period: 10ms, tasks: [{name: t, wcet: 1ms, work: builtin:busy}]}
  - {name: c, period: 20ms, tasks: [{name: t, wcet: 2ms, work: builtin:busy}]}
$plat
YAML
cat > "$work/set.json" <<JSON
{
  "tasks": {
    "a": {"policy": "SCHED_DEADLINE", "dl-runtime": 750, "dl-period": 5000, "dl-deadline": 5000,
          "loop": -1, "runtime": 500, "timer": {"ref": "ta", "period": 5000}},
    "b": {"policy": "SCHED_DEADLINE", "dl-runtime": 1500, "dl-period": 10000, "dl-deadline": 10000,
          "loop": -1, "runtime": 1000, "timer": {"ref": "tb", "period": 10000}},
    "c": {"policy": "SCHED_DEADLINE", "dl-runtime": 3000, "dl-period": 20000, "dl-deadline": 20000,
          "loop": -1, "runtime": 2000, "timer": {"ref": "tc", "period": 20000}}
  },
  "global": {"duration": $secs, "calibration": 100, "default_policy": "SCHED_OTHER", "lock_pages": false,
             "logdir": "$work/rtapp", "log_basename": "rt", "log_size": 16}
}
JSON
mkdir -p "$work/rtapp"

# ---- runs (each measured with getrusage of the child: user + system CPU)
python3 "$here/stats.py" measure "$work/agent.cpu" -- sh -c "echo \$\$ > $grp/cpu1/tasks && exec $agent run $work/set.plan.yaml --out $work/agent --duration $secs --no-power --cgroup-root $grp 2>/dev/null"
python3 "$here/stats.py" measure "$work/rtapp.cpu" -- sh -c "echo \$\$ > $grp/cpu1/tasks && exec timeout $((secs + 20)) rt-app $work/set.json >/dev/null 2>&1"

"$here/fake_iio.sh" "$work/fake" 18
sensors="    sensors:"
for i in $(seq 0 17); do sensors="$sensors
    - {device: ina226-u$((100 + i)), channel: power2, rail: R$i, measures: board}"; done
cat > "$work/light.plan.yaml" <<YAML
plan:
  version: 1
  solver: {status: feasible, objective: power, solver: heuristic, gap: 0, solve_time_s: 0}
  predicted: {power: 1W, min_relative_slack: 0.5}
  islands:
  - {name: cpu, freq: 2000MHz}
  tasks:
  - {dag: l, task: t, placement: 'cpu:1', wcet: 100us, runtime: 200us, deadline: 10ms, period: 10ms, reclaim: false}
  dags:
  - {name: l, period: 10ms, tasks: [{name: t, wcet: 100us, work: builtin:busy}]}
$plat
$sensors
YAML
for hz in 100 1000; do
	unshare -m sh -c "mount --bind $work/fake/bus /sys/bus && exec $agent run $work/light.plan.yaml --out $work/s$hz --duration $secs --sample-hz $hz --cgroup-root $grp 2>/dev/null"
done
python3 "$here/stats.py" report "$work" "$agent" "$secs"
