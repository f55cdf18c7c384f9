#!/bin/sh
# SPDX-License-Identifier: MIT
# e2e (labels e2e;slow): the VM twin (docs/TWIN.md "The VM twin") end to end on Debian's 6.1 kernel:
# twin up --vm -> status (vm, x86_64, kvm|tcg, 6.1) -> guest snapshot -> deploy a small plan over SSH
# (cgroup v2 partitions recorded in deploy.json) -> report, 0 misses (a run that missed is repeated up
# to twice, tests/vm/lib.sh deploy_on_time) -> nothing bound over the guest's /proc/stat (its kernel's
# own) -> a plan declaring dl.fair_server is refused by pre-flight on that fair-server-less kernel
# (exit 3) -> snapshot unchanged -> twin down leaves no qemu, tap, netns, veth or state.
# Exit 77 (ctest: Skipped, with the reason printed) where it cannot run: not root, no qemu, no image
# and no way to build one. The image is built on first use (~1.5 min, scripts/vm-image.sh) and cached
# in $POWERDAG_VM_CACHE or /var/cache/powerdag/vm.
# usage: vm_e2e.sh POWERDAG_BINARY SOURCE_DIR
set -u
pd=$1
src=$2
. "$src/tests/vm/lib.sh"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $* (files kept in $work)"; "$pd" twin down --state "$st" >/dev/null 2>&1; exit 1; }
[ "$(id -u)" = 0 ] || skip "needs root (netns, tap, qemu)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
[ -e /dev/net/tun ] || skip "/dev/net/tun missing"
cache=${POWERDAG_VM_CACHE:-/var/cache/powerdag/vm}
if [ ! -f "$cache/rootfs.cpio" ]; then
	command -v mmdebstrap >/dev/null || skip "no VM image in $cache and mmdebstrap missing to build one"
fi
st=/tmp/pd-vm-e2e.$$
ns=pdvm-e2e
work=$(mktemp -d /tmp/pd-vm-e2e-work.XXXXXX)
export POWERDAG_TWIN_DIR=$st
t0=$(date +%s)
uri=$("$pd" twin up --vm --state "$st" --netns $ns --subnet 10.213.83.0) || fail "twin up --vm"
echo "twin up --vm: $uri in $(( $(date +%s) - t0 )) s"
status=$("$pd" twin status --state "$st") || fail "twin status"
echo "$status" | head -1
echo "$status" | head -1 | grep -Eq '^twin running \(vm, x86_64, (kvm|tcg), kernel 6\.1\.' || fail "status does not say vm, x86_64, kvm|tcg, 6.1: $status"
key="$st/id_ed25519"
kh="$st/known_hosts"
addr=10.213.83.2
guest_snapshot >"$work/before" || fail "ssh to the guest with strict host-key checking"
grep -q fair_server "$work/before" && fail "the guest shows a fair server: the 6.1 kernel has none"
"$pd" optimize "$src/tests/vm/chain.dags.yaml" "$st/platform.yaml" -o "$work/plan.yaml" --time-limit 5 >/dev/null || fail optimize
deploy_on_time "$work/plan.yaml" "$work/run" 5s
j="$work/run/deploy.json"
grep -q '"kernel": "6\.1\.' "$j" || fail "deploy.json: kernel is not the guest's 6.1"
grep -q '"cgroup_version": 2' "$j" || fail "deploy.json: cgroup_version is not 2"
grep -q '"cpusets": "v2 partitions' "$j" || fail "deploy.json: cpusets are not v2 partitions"
grep -q '"fair_server": false' "$j" || fail "deploy.json: fair_server not false"
grep -q 'cgroup v2' "$work/run/agent.stderr" || fail "the agent did not use the v2 partitions"
echo "deploy: exit 0, cgroup v2 partitions, report produced, 0 deadline misses"
# the agent on its own (as `profile` runs it): it makes its own v2 partitions and must leave none
# behind (its threads, main thread included, sit in them until it moves the process back); a
# partition left there used to make the next deploy's partition over the same CPUs invalid
ssh_vm() { ssh -i "$key" -o UserKnownHostsFile="$kh" -o StrictHostKeyChecking=yes -o BatchMode=yes root@$addr "$@"; }
agent=$(dirname "$pd")/agents/powerdag-agent
scp -q -i "$key" -o UserKnownHostsFile="$kh" -o StrictHostKeyChecking=yes -o BatchMode=yes \
	"$agent" "$work/plan.yaml" root@$addr:/tmp/ || fail "copying the agent into the guest"
ssh_vm /tmp/powerdag-agent run /tmp/plan.yaml --duration 1 --out /tmp/agent-run --no-power >"$work/agent.out" 2>&1 ||
	{ cat "$work/agent.out"; fail "the agent on its own in the guest"; }
grep -q 'cgroup v2' "$work/agent.out" || fail "the agent on its own did not use v2 partitions: $(cat "$work/agent.out")"
left=$(ssh_vm 'ls -d /sys/fs/cgroup/powerdag* 2>/dev/null; rm -rf /tmp/agent-run /tmp/powerdag-agent /tmp/plan.yaml')
[ -z "$left" ] || fail "the agent left its cgroups in the guest: $left"
"$pd" deploy "$work/plan.yaml" --board twin --duration 1s --out "$work/run-after" >"$work/after.log" 2>&1 ||
	{ cat "$work/after.log"; fail "a deploy after the agent's own run"; }
echo "agent on its own: v2 partitions made and removed; a deploy after it ran"
# the guest's /proc/stat is its own kernel's: the namespace twin's board /proc/stat is never bound there
[ "$(ssh_vm "grep -c ' /proc/stat ' /proc/self/mountinfo")" = 0 ] || fail "a file is bound over the guest's /proc/stat"
fair_server_refused
echo "dl.fair_server plan refused by pre-flight on 6.1 (exit 3)"
guest_snapshot >"$work/after" || fail "ssh after the deploys"
diff -u "$work/before" "$work/after" || fail "guest state differs after the deploys"
echo "guest state before == after ($(wc -l <"$work/before") lines)"
down_leaves_nothing
rm -rf "$work"
echo "PASS: VM twin e2e in $(( $(date +%s) - t0 )) s"
