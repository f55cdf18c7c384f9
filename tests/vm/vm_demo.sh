#!/bin/sh
# SPDX-License-Identifier: MIT
# e2e (labels e2e;slow): `powerdag demo --vm` (docs/DEPLOY.md "powerdag demo", docs/TWIN.md "The VM
# twin"): the whole demo loop on a VM twin it brings up and takes down: exit 0, the steps on stdout,
# the RUNDIR of a deploy to the guest's 6.1 kernel with cgroup v2 partitions, the report, and
# nothing left (no twin recorded, no qemu, no netns). Then, with a namespace twin up, `demo --vm`
# is refused (exit 3) before anything is written, and that twin is left as it was.
# Exit 77 (ctest: Skipped, reason printed) where it cannot run, as tests/vm/vm_e2e.sh.
# usage: vm_demo.sh POWERDAG_BINARY
set -u
pd=$1
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (netns, tap, qemu)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
[ -e /dev/net/tun ] || skip "/dev/net/tun missing"
cache=${POWERDAG_VM_CACHE:-/var/cache/powerdag/vm}
if [ ! -f "$cache/rootfs.cpio" ]; then
	command -v mmdebstrap >/dev/null || skip "no VM image in $cache and mmdebstrap missing to build one"
fi
work=$(mktemp -d /tmp/pd-vm-demo.XXXXXX)
export POWERDAG_TWIN_DIR="$work/twin" POWERDAG_TWIN_NETNS=pdvm-demo POWERDAG_TWIN_SUBNET=10.213.87.0
fail() { echo "FAIL: $* (files kept in $work)"; "$pd" twin down >/dev/null 2>&1; exit 1; }
t0=$(date +%s)
(cd "$work" && "$pd" demo --vm --out run >"$work/demo.out" 2>"$work/demo.err")
rc=$?
[ $rc = 0 ] || { tail -20 "$work/demo.err"; fail "demo --vm: exit $rc"; }
echo "demo --vm: exit 0 in $(( $(date +%s) - t0 )) s"
for s in "== demo: twin up --vm" "== demo: optimize" "== demo: check" "== demo: simulate" \
	"== demo: deploy to the twin" "== demo: report" "predicted vs measured" "== demo: twin down"; do
	grep -qF "$s" "$work/demo.out" || fail "demo output lacks '$s'"
done
for f in plan.yaml run.pdlog deploy.json simulate.json agent.stderr; do
	[ -s "$work/run/$f" ] || fail "RUNDIR lacks $f"
done
j="$work/run/deploy.json"
grep -q '"kernel": "6\.1\.' "$j" || fail "deploy.json: kernel is not the guest's 6.1"
grep -q '"cgroup_version": 2' "$j" || fail "deploy.json: cgroup_version is not 2"
grep -q '"fair_server": false' "$j" || fail "deploy.json: fair_server not false"
misses=$(awk '$1 == "all" {print $3}' "$work/demo.out")
echo "demo --vm: deploy to $(sed -n 's/.*"kernel": "\([^"]*\)".*/\1/p' "$j" | head -1), cgroup v2, deadline misses ${misses:-?}" \
	"(not judged here: vm_e2e judges a deploy's misses)"
"$pd" twin status >/dev/null 2>&1
[ $? = 3 ] || fail "a twin is still recorded after demo --vm"
ip netns list | grep -q "^pdvm-demo" && fail "netns pdvm-demo left"
pgrep -f "qemu-system-x86_64.*$work/twin" >/dev/null && fail "qemu left running"

# a namespace twin is up: demo --vm refuses it (exit 3), writes nothing, leaves the twin up
"$pd" twin up >/dev/null || fail "twin up (namespace)"
(cd "$work" && "$pd" demo --vm --out run2 >"$work/demo2.out" 2>"$work/demo2.err")
rc=$?
[ $rc = 3 ] || fail "demo --vm with a namespace twin up: exit $rc, expected 3"
grep -q "namespace twin is up" "$work/demo2.err" || fail "the refusal does not say why: $(cat "$work/demo2.err")"
[ -e "$work/run2" ] && fail "demo --vm wrote $work/run2 although it refused"
"$pd" twin status | head -1 | grep -q '^twin running (netns' || fail "the namespace twin did not stay up"
"$pd" twin down >/dev/null || fail "twin down (namespace)"
rm -rf "$work"
echo "PASS: demo --vm in $(( $(date +%s) - t0 )) s"
