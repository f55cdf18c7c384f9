#!/bin/sh
# SPDX-License-Identifier: MIT
#
# /init of the VM board twin's guests (PID 1), x86-64 and arm64 alike: scripts/vm-image.sh and
# scripts/vm-image-arm64.sh install this file as the root file system's /init. Written for both
# shells it meets: Debian's dash (x86-64 image) and busybox sh, whose applets stand in for the tools
# the arm64 image only extracts (its script links them).
# Mounts the kernel file systems (cgroup2 only, like systemd-based Debian images), loads the virtio
# network and fuse modules, brings up eth0 with the address on the kernel command line (pd.ip=), then
# runs the per-boot script that twin/vm.c appends to the initramfs (/powerdag/boot.sh: the twin
# daemon, which starts sshd and iiod). tini reaps orphans (agents and SSH sessions end up as PID 1's
# children).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm /run /tmp
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
for m in virtio_pci virtio_net fuse; do modprobe -q $m 2>/dev/null; done
ip=
for a in $(cat /proc/cmdline); do
	case "$a" in pd.ip=*) ip=${a#pd.ip=} ;; esac
done
ip link set lo up
ip link set eth0 up
[ -n "$ip" ] && ip addr add "$ip" dev eth0
hostname powerdag-vm
echo "powerdag-vm: init done, kernel $(uname -r) $(uname -m)" >/dev/console
if [ -x /powerdag/boot.sh ]; then
	exec tini -s -- /powerdag/boot.sh
fi
exec tini -s -- sleep 2147483647
