#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/vm: the VM twin's image build time (scripts/vm-image.sh from Debian's mirror, into a fresh
# directory) and its boot-to-SSH time (`twin up --vm` until sshd and iiod answer), N boots, median
# and worst. Root; takes the machine-wide lock around each boot (flock /tmp/pd-e2e.lock).
# usage: bench/vm/run.sh BUILD_DIR [N=5] [--no-image]
#        bench/vm/run.sh BUILD_DIR [N=5] --arm64   the arm64 guest (tests/vm/vm_arm64_boot.sh): its
#            boot to SSH on -M virt -cpu cortex-a53 -smp 4, N boots with the cached image
#        bench/vm/run.sh BUILD_DIR [N=5] --arm64-twin   `twin up --vm --arch arm64` (the aarch64
#            powerdag as the guest's twin daemon, scripts/cross-build.sh aarch64 --full) until sshd
#            and iiod answer, N boots with the cached arm64 image
set -eu
build=${1:?usage: bench/vm/run.sh BUILD_DIR [N] [--no-image|--arm64|--arm64-twin]}
n=${2:-5}
src=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${3:-}" = --arm64 ]; then
	times=""
	i=0
	while [ $i -lt "$n" ]; do
		i=$((i + 1))
		t=$(flock /tmp/pd-e2e.lock sh "$src/tests/vm/vm_arm64_boot.sh" "$src" | sed -n 's/^arm64 guest: boot to SSH in \([0-9.]*\) s$/\1/p')
		[ -n "$t" ] || { echo "arm64 boot #$i failed" >&2; exit 1; }
		echo "arm64 boot to SSH #$i: $t s"
		times="$times $t"
	done
	echo "$times" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "arm64 boot to SSH (4 x cortex-a53, TCG): median %.1f s, worst %.1f s, n=%d\n", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), a[NR], NR}'
	exit 0
fi
pd="$build/powerdag"
arch=x86_64 what="twin up --vm"
if [ "${3:-}" = --arm64-twin ]; then
	arch=arm64 what="twin up --vm --arch arm64, 4 x cortex-a53, TCG"
	set -- "$1" "$n" --no-image
fi
if [ "${3:-}" != --no-image ]; then
	img=$(mktemp -d /tmp/pd-vm-bench-img.XXXXXX)
	rmdir "$img"
	t0=$(date +%s.%N)
	sh "$src/scripts/vm-image.sh" "$img" >/dev/null
	t1=$(date +%s.%N)
	echo "image build: $(echo "$t1 - $t0" | bc) s ($(du -sh "$img" | cut -f1), $(sed -n 's/.*"kernel": "\([^"]*\)".*/\1/p' "$img/image.json"))"
	export POWERDAG_VM_CACHE="$img"
fi
st=/tmp/pd-vm-bench.$$
times=""
i=0
while [ $i -lt "$n" ]; do
	i=$((i + 1))
	t=$(flock /tmp/pd-e2e.lock sh -c '
		t0=$(date +%s.%N)
		"$1" twin up --vm --arch "$3" --state "$2" --netns pdvm-bench --subnet 10.213.85.0 >/dev/null || exit 1
		t1=$(date +%s.%N)
		"$1" twin status --state "$2" | head -1 >&2
		"$1" twin down --state "$2" 2>/dev/null
		echo "$t1 - $t0" | bc' sh "$pd" "$st" "$arch")
	echo "boot to SSH #$i: $t s"
	times="$times $t"
done
echo "$times" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "boot to SSH ('"$what"', incl. per-boot initrd): median %.1f s, worst %.1f s, n=%d\n", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), a[NR], NR}'
[ "${3:-}" != --no-image ] && rm -rf "$POWERDAG_VM_CACHE"
exit 0
