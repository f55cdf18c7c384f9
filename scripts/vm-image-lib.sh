# SPDX-License-Identifier: MIT
# Sourced by scripts/vm-image.sh and scripts/vm-image-arm64.sh: what both guest images share.
#
# VM_IMAGE_FORMAT: the image layout twin/vm.c expects (PD_TWIN_VM_IMAGE_FORMAT); an image in the
# cache with another format is rebuilt. Raise both together when the image's contents change.
VM_IMAGE_FORMAT=2

# vm_install_init ROOT: the guests' PID 1 (scripts/vm-guest-init.sh) as ROOT/init
vm_install_init() {
	cp "$VM_LIB_DIR/vm-guest-init.sh" "$1/init"
	chmod 755 "$1/init"
}

# vm_pack TMP ROOT OUT NAME JSON_FIELDS: packs ROOT into TMP/rootfs.cpio (newc: the kernel unpacks
# it as its initramfs, which is the root file system), writes TMP/image.json (JSON_FIELDS, then
# format, kernel, suite, mirror, packages, size, build time from $kv $suite $mirror $pkgs $start),
# removes ROOT and renames TMP to OUT: OUT is complete or absent.
vm_pack() {
	tmp=$1 root=$2 out=$3 name=$4 fields=$5
	(cd "$root" && find . -xdev | cpio -o -H newc --quiet) >"$tmp/rootfs.cpio"
	rm -rf "$root"
	end=$(date +%s)
	size=$(stat -c %s "$tmp/rootfs.cpio")
	printf '{%s"format": %s, "kernel": "%s", "suite": "%s", "mirror": "%s", "packages": "%s", "rootfs_bytes": %s, "build_s": %s}\n' \
		"$fields" "$VM_IMAGE_FORMAT" "$kv" "$suite" "$mirror" "$pkgs" "$size" "$((end - start))" >"$tmp/image.json"
	rm -rf "$out"
	mv "$tmp" "$out"
	echo "$name: $out built in $((end - start)) s (kernel $kv, rootfs $((size / 1048576)) MiB)"
}
