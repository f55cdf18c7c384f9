#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Builds the VM board twin's image (docs/TWIN.md, "The VM twin") from Debian packages only:
#
#   OUT/vmlinuz      Debian 12's linux-image-cloud-amd64 kernel (6.1), taken from its .deb
#   OUT/rootfs.cpio  a small Debian 12 root file system (mmdebstrap: openssh-server, iiod, fuse3, the
#                    runtime libraries of powerdag and powerdag-agent, iproute2, kmod, the virtio
#                    modules of that kernel) packed as a newc cpio: the kernel unpacks it as its
#                    initramfs and runs its /init (below) - the initrd *is* the root file system, so
#                    nothing has to be mounted from a disk and the guest needs no block driver
#   OUT/image.json   what was built (kernel version, package list, build seconds)
#
# usage: scripts/vm-image.sh OUT_DIR [MIRROR]
# Needs root (mmdebstrap's root mode), mmdebstrap, cpio, network access to the mirror.
# Writes into OUT_DIR.tmp and renames it at the end: OUT_DIR is complete or absent.
set -eu
VM_LIB_DIR=$(cd "$(dirname "$0")" && pwd)
. "$VM_LIB_DIR/vm-image-lib.sh"

out=${1:?usage: vm-image.sh OUT_DIR [MIRROR]}
mirror=${2:-http://deb.debian.org/debian}
suite=bookworm
start=$(date +%s)

command -v mmdebstrap >/dev/null || { echo "vm-image: mmdebstrap missing (apt-get install mmdebstrap)" >&2; exit 3; }
command -v cpio >/dev/null || { echo "vm-image: cpio missing (apt-get install cpio)" >&2; exit 3; }
[ "$(id -u)" = 0 ] || { echo "vm-image: needs root" >&2; exit 3; }

tmp="$out.tmp"
rm -rf "$tmp"
mkdir -p "$tmp"
root="$tmp/root"

# Runtime libraries of powerdag (the in-guest twin daemon) and powerdag-agent, as ldd lists them on
# Debian 12; the binaries themselves are the host's build, added at boot (twin/vm.c).
libs="libyaml-0-2 libjansson4 libiio0 libgpiod2 libfuse3-3 libglpk40 libssh-4 coinor-libcbc3 libgomp1"
pkgs="openssh-server openssh-sftp-server iiod fuse3 iproute2 kmod procps tini $libs"

mmdebstrap --variant=essential --mode=root \
	--aptopt='APT::Install-Recommends "false"' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
	--include="$(echo $pkgs | tr ' ' ,)" \
	--customize-hook='cd "$1/tmp" && apt-get download -q $(apt-cache depends linux-image-cloud-amd64 | sed -n "s/.*Depends: //p" | head -1)' \
	--customize-hook='mkdir -p "$1/tmp/k" && dpkg-deb -x "$1"/tmp/linux-image-*.deb "$1/tmp/k"' \
	--customize-hook="cp \"\$1\"/tmp/k/boot/vmlinuz-* \"$tmp/vmlinuz\"" \
	--customize-hook='kv=$(ls "$1/tmp/k/lib/modules"); mkdir -p "$1/lib/modules/$kv"; \
		cd "$1/tmp/k/lib/modules/$kv" && cp modules.order modules.builtin modules.builtin.modinfo "$1/lib/modules/$kv/"; \
		for m in $(find kernel -name "virtio*.ko" -o -name "net_failover.ko" -o -name "failover.ko" -o -name "fuse.ko" -o -name "qemu_fw_cfg.ko"); do \
			mkdir -p "$1/lib/modules/$kv/$(dirname $m)"; cp "$m" "$1/lib/modules/$kv/$m"; done; \
		chroot "$1" depmod "$kv"; echo "$kv" > "$1/etc/powerdag-kernel"' \
	--customize-hook='rm -rf "$1"/tmp/k "$1"/tmp/*.deb "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/usr/share/doc "$1"/usr/share/man' \
	"$suite" "$root" "$mirror"

kv=$(cat "$root/etc/powerdag-kernel")

vm_install_init "$root"
mkdir -p "$root/run/sshd" "$root/lib/firmware"

vm_pack "$tmp" "$root" "$out" vm-image ""
