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

# /init: PID 1 of the guest. Mounts the kernel file systems (cgroup2 only, like systemd-based
# Debian images), brings up eth0 with the address on the command line, then runs the per-boot
# script that twin/vm.c appends to the initramfs (/powerdag/boot.sh: the twin daemon, which starts
# sshd and iiod). tini reaps orphans (agents and SSH sessions end up as PID 1's children).
cat >"$root/init" <<'EOF'
#!/bin/sh
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
ip=; gw=
for a in $(cat /proc/cmdline); do
	case "$a" in pd.ip=*) ip=${a#pd.ip=} ;; esac
done
ip link set lo up
ip link set eth0 up
[ -n "$ip" ] && ip addr add "$ip" dev eth0
hostname powerdag-vm
echo "powerdag-vm: init done, kernel $(uname -r)" > /dev/console
if [ -x /powerdag/boot.sh ]; then
	exec tini -s -- /powerdag/boot.sh
fi
exec tini -s -- sleep infinity
EOF
chmod 755 "$root/init"
mkdir -p "$root/run/sshd" "$root/lib/firmware"

(cd "$root" && find . -xdev | cpio -o -H newc --quiet) >"$tmp/rootfs.cpio"
rm -rf "$root"
end=$(date +%s)
size=$(stat -c %s "$tmp/rootfs.cpio")
printf '{"kernel": "%s", "suite": "%s", "mirror": "%s", "packages": "%s", "rootfs_bytes": %s, "build_s": %s}\n' \
	"$kv" "$suite" "$mirror" "$pkgs" "$size" "$((end - start))" >"$tmp/image.json"
rm -rf "$out"
mv "$tmp" "$out"
echo "vm-image: $out built in $((end - start)) s (kernel $kv, rootfs $((size / 1048576)) MiB)"
