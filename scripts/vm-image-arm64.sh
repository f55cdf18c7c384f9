#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Builds the arm64 VM guest image (docs/TWIN.md "The arm64 guest"; first step of `twin up --vm
# --arch arm64`) from Debian packages only, on an x86-64 host:
#
#   OUT/vmlinuz      Debian 12's linux-image-arm64 kernel (6.1), from its .deb
#   OUT/rootfs.cpio  a Debian 12 arm64 root file system as a newc cpio (the initramfs is the root)
#   OUT/image.json   what was built (kernel version, packages, build seconds)
#
# The host cannot run arm64 maintainer scripts without qemu-user binfmt_misc registrations (a kernel
# setting this script leaves alone), so the packages are only *extracted* (mmdebstrap
# --variant=extract, dependencies resolved by apt) and what their scripts would have done is done
# here: /etc/passwd and /etc/group (root, sshd's privilege-separation user), modules.dep by the
# host's depmod on the arm64 module tree. busybox-static provides the shell and the small tools of
# /init; sshd and iiod are Debian's. The twin's state (host key, authorized key, sshd config) is
# added per boot as a second cpio archive, as for the x86-64 guest.
#
# usage: scripts/vm-image-arm64.sh OUT_DIR [MIRROR]
# Needs root (mmdebstrap's root mode), mmdebstrap, cpio, depmod, network access to the mirror.
# Writes into OUT_DIR.tmp and renames it at the end: OUT_DIR is complete or absent.
set -eu
VM_LIB_DIR=$(cd "$(dirname "$0")" && pwd)
. "$VM_LIB_DIR/vm-image-lib.sh"

out=${1:?usage: vm-image-arm64.sh OUT_DIR [MIRROR]}
mirror=${2:-http://deb.debian.org/debian}
suite=bookworm
start=$(date +%s)

for t in mmdebstrap cpio depmod dpkg-deb; do
	command -v $t >/dev/null || { echo "vm-image-arm64: $t missing" >&2; exit 3; }
done
[ "$(id -u)" = 0 ] || { echo "vm-image-arm64: needs root" >&2; exit 3; }

tmp="$out.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
root="$tmp/root"

# the runtime libraries of powerdag and powerdag-agent (as in vm-image.sh), for the aarch64 builds
libs="libyaml-0-2 libjansson4 libiio0 libgpiod2 libfuse3-3 libglpk40 libssh-4 libgomp1"
pkgs="openssh-server openssh-sftp-server iiod fuse3 tini busybox-static $libs"

# the kernel is one of the extracted packages (mmdebstrap runs no hooks in the extract variant):
# its vmlinuz is taken out and its module tree cut down to what /init loads
mmdebstrap --variant=extract --mode=root --architectures=arm64 --skip=check/qemu \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
	--include="$(echo $pkgs linux-image-arm64 | tr ' ' ,)" \
	"$suite" "$root" "$mirror"

kv=$(ls "$root/lib/modules")
[ -n "$kv" ] && [ -f "$root/boot/vmlinuz-$kv" ] || { echo "vm-image-arm64: no kernel in the extracted tree" >&2; exit 3; }
mv "$root/boot/vmlinuz-$kv" "$tmp/vmlinuz"
rm -rf "$root/boot"
mv "$root/lib/modules/$kv" "$tmp/modules"
mkdir -p "$root/lib/modules/$kv"
(cd "$tmp/modules" && cp modules.order modules.builtin modules.builtin.modinfo "$root/lib/modules/$kv/" &&
	for m in $(find kernel -name "virtio*.ko" -o -name "net_failover.ko" -o -name "failover.ko" -o -name "fuse.ko"); do
		mkdir -p "$root/lib/modules/$kv/$(dirname "$m")"; cp "$m" "$root/lib/modules/$kv/$m"; done)
rm -rf "$tmp/modules" "$root/var/lib/apt/lists"/* "$root/var/cache/apt"/* "$root/usr/share/doc" "$root/usr/share/man"
depmod -b "$root" "$kv"
echo "$kv" >"$root/etc/powerdag-kernel"
[ -x "$root/usr/sbin/sshd" ] && [ -x "$root/usr/sbin/iiod" ] && [ -x "$root/bin/busybox" ] ||
	{ echo "vm-image-arm64: sshd, iiod or busybox missing in the extracted tree" >&2; exit 3; }

# what the maintainer scripts of base-passwd and openssh-server would have created
printf 'root:x:0:0:root:/root:/bin/sh\nsshd:x:100:65534::/run/sshd:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
printf 'root:*:19000:0:99999:7:::\nsshd:*:19000:0:99999:7:::\n' >"$root/etc/shadow"
chmod 640 "$root/etc/shadow"
mkdir -p "$root/root" "$root/run/sshd" "$root/lib/firmware" "$root/proc" "$root/sys" "$root/dev" "$root/tmp"
# the busybox applets /init uses, where Debian's own tools were not extracted
for a in sh mount mkdir cat ip hostname insmod modprobe sleep ls uname; do
	[ -e "$root/bin/$a" ] || [ -e "$root/usr/bin/$a" ] || [ -e "$root/usr/sbin/$a" ] || [ -e "$root/sbin/$a" ] ||
		ln -s busybox "$root/bin/$a"
done

vm_install_init "$root"

vm_pack "$tmp" "$root" "$out" vm-image-arm64 '"arch": "arm64", '
