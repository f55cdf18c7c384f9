#!/bin/sh
# SPDX-License-Identifier: MIT
# e2e (labels e2e;slow): the arm64 guest (docs/TWIN.md "The arm64 guest", first step of `twin up
# --vm --arch arm64`): Debian 12's arm64 6.1 kernel on an emulated Cortex-A53 (`-M virt`, 4 cores,
# like the ZCU102's APU) boots the image of scripts/vm-image-arm64.sh to SSH; over SSH (strict
# host-key checking): kernel 6.1 arm64, 4 CPUs, cgroup v2 with cpuset, no fair server, sshd serving
# and Debian's arm64 iiod running; the cross-built aarch64 powerdag-agent (scripts/cross-build.sh aarch64) runs natively:
# --self-test passes and SCHED_DEADLINE is admitted by the arm64 kernel. qemu's user-mode network
# forwards a loopback port to the guest's sshd: no netns or tap.
# Exit 77 (ctest: Skipped, reason printed) without root, qemu-system-aarch64, or an image and the
# means to build one. The image is cached in $POWERDAG_VM_CACHE_ARM64 or /var/cache/powerdag/vm-arm64.
# usage: vm_arm64_boot.sh SOURCE_DIR [AGENT_AARCH64]
set -u
src=$1
agent=${2:-$src/build-aarch64/powerdag-agent}
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (image build)"
command -v qemu-system-aarch64 >/dev/null || skip "qemu-system-aarch64 missing (apt-get install qemu-system-arm)"
cache=${POWERDAG_VM_CACHE_ARM64:-/var/cache/powerdag/vm-arm64}
t0=$(date +%s)
fmt=$(sed -n 's/^VM_IMAGE_FORMAT=//p' "$src/scripts/vm-image-lib.sh")
if [ ! -f "$cache/rootfs.cpio" ] || [ ! -f "$cache/vmlinuz" ] || ! grep -q "\"format\": $fmt," "$cache/image.json" 2>/dev/null; then
	command -v mmdebstrap >/dev/null || skip "no arm64 image in $cache and mmdebstrap missing to build one"
	mkdir -p "$(dirname "$cache")"
	sh "$src/scripts/vm-image-arm64.sh" "$cache" || { echo "FAIL: building the arm64 image"; exit 1; }
	echo "arm64 image built in $(( $(date +%s) - t0 )) s"
fi
work=$(mktemp -d /tmp/pd-vm-arm64.XXXXXX)
qpid=
fail() {
	echo "FAIL: $* (files kept in $work)"
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	exit 1
}
# the per-boot archive: host key, authorized key, sshd config, boot.sh (sshd), the agent
mkdir -p "$work/add/powerdag" "$work/add/etc/ssh" "$work/add/root/.ssh" "$work/add/usr/local/bin"
ssh-keygen -q -t ed25519 -N '' -f "$work/id" || fail ssh-keygen
ssh-keygen -q -t ed25519 -N '' -f "$work/add/etc/ssh/ssh_host_ed25519_key" || fail ssh-keygen
cp "$work/id.pub" "$work/add/root/.ssh/authorized_keys"
chmod 700 "$work/add/root/.ssh"
printf '[127.0.0.1]:%s %s\n' PORT "$(cut -d' ' -f1-2 "$work/add/etc/ssh/ssh_host_ed25519_key.pub")" >"$work/kh.in"
cat >"$work/add/etc/ssh/sshd_config" <<'EOF'
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
Subsystem sftp /usr/lib/openssh/sftp-server
MaxStartups 100
EOF
cat >"$work/add/powerdag/boot.sh" <<'EOF'
#!/bin/busybox sh
mkdir -p /run/sshd
exec /usr/sbin/sshd -D -e
EOF
chmod 755 "$work/add/powerdag/boot.sh"
have_agent=0
if [ -x "$agent" ] && file -L "$agent" 2>/dev/null | grep -q aarch64; then
	cp "$agent" "$work/add/usr/local/bin/powerdag-agent" && have_agent=1
fi
(cd "$work/add" && find . | cpio -o -H newc --quiet) >"$work/add.cpio" || fail "cpio"
cat "$cache/rootfs.cpio" "$work/add.cpio" >"$work/initrd"
# a free loopback port for the forward
port=$(( 20000 + $$ % 20000 ))
sed "s/PORT/$port/" "$work/kh.in" >"$work/known_hosts"
t1=$(date +%s.%N)
qemu-system-aarch64 -M virt -cpu cortex-a53 -smp 4 -m 1024 -accel tcg,thread=multi -nodefaults -no-user-config \
	-display none -monitor none -serial "file:$work/console.log" -no-reboot \
	-kernel "$cache/vmlinuz" -initrd "$work/initrd" -append "console=ttyAMA0 panic=-1 quiet pd.ip=10.0.2.15/24" \
	-netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$port-:22" -device virtio-net-pci,netdev=n0 \
	>"$work/qemu.log" 2>&1 &
qpid=$!
sshg() {
	ssh -p "$port" -i "$work/id" -o UserKnownHostsFile="$work/known_hosts" -o StrictHostKeyChecking=yes \
		-o BatchMode=yes -o ConnectTimeout=5 root@127.0.0.1 "$@"
}
up=0
for i in $(seq 1 120); do
	kill -0 $qpid 2>/dev/null || fail "qemu exited: $(tail -3 "$work/qemu.log") / $(tail -3 "$work/console.log")"
	if sshg true 2>/dev/null; then up=1; break; fi
	sleep 1
done
[ $up = 1 ] || fail "no SSH within 120 s; console: $(tail -5 "$work/console.log")"
boot=$(echo "$(date +%s.%N) - $t1" | bc)
echo "arm64 guest: boot to SSH in $boot s"
sshg 'uname -r; uname -m; busybox nproc; cat /sys/fs/cgroup/cgroup.controllers; test -d /sys/kernel/debug/sched && echo sched_debugfs; if test -e /sys/kernel/debug/sched/fair_server; then echo fair_server; fi; /usr/sbin/iiod -V 2>&1 | busybox head -1' \
	>"$work/facts" || fail "ssh facts"
echo "guest: $(tr '\n' ' ' <"$work/facts")"
sed -n 1p "$work/facts" | grep -q '^6\.1\..*arm64$' || fail "kernel is not Debian's arm64 6.1"
sed -n 2p "$work/facts" | grep -qx aarch64 || fail "machine is not aarch64"
sed -n 3p "$work/facts" | grep -qx 4 || fail "not 4 CPUs"
sed -n 4p "$work/facts" | grep -qw cpuset || fail "cgroup v2 without the cpuset controller"
grep -qx sched_debugfs "$work/facts" || fail "no /sys/kernel/debug/sched in the guest: the fair-server check would prove nothing"
grep -qx fair_server "$work/facts" && fail "the arm64 6.1 guest shows a fair server"
# iiod serves IIO devices, which the guest gets with the twin daemon's board files (not yet on arm64):
# here it only has to run natively
grep -Eqx '[0-9]+\.[0-9]+' "$work/facts" || fail "iiod -V does not run in the guest"
if [ $have_agent = 1 ]; then
	sshg /usr/local/bin/powerdag-agent --self-test >"$work/selftest" 2>&1 || { cat "$work/selftest"; fail "agent --self-test"; }
	grep -q 'self-test on Linux 6\.1\..*(aarch64)' "$work/selftest" || fail "self-test did not run on the arm64 guest"
	grep -q 'sched_setattr:  ok' "$work/selftest" || { cat "$work/selftest"; fail "SCHED_DEADLINE not admitted on the arm64 kernel"; }
	echo "aarch64 agent: $(head -1 "$work/selftest"); SCHED_DEADLINE admitted"
else
	echo "NOTE: no aarch64 agent at $agent (scripts/cross-build.sh aarch64): agent checks not run"
fi
sshg 'busybox poweroff -f' >/dev/null 2>&1
for i in $(seq 1 50); do kill -0 $qpid 2>/dev/null || break; sleep 0.2; done
kill $qpid 2>/dev/null
wait $qpid 2>/dev/null
rm -rf "$work"
echo "PASS: arm64 guest in $(( $(date +%s) - t0 )) s"
