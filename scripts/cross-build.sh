#!/usr/bin/env bash
# Cross-builds the board agent on an x86-64 Debian 12 host.
#
#   scripts/cross-build.sh aarch64|armhf [--full] [--install PREFIX] [--build-dir DIR] [--clean]
#
#   aarch64  ZCU102 (PetaLinux), Jetson AGX Xavier (L4T)   -> build-aarch64/powerdag-agent
#   armhf    ODROID-XU4 (Ubuntu, Hardkernel kernel)        -> build-armhf/powerdag-agent
#
# build-<arch>/ is next to this repository's CMakeLists.txt, where `powerdag deploy` run from a
# build tree of the same checkout finds it. --install PREFIX also copies it to
# PREFIX/libexec/powerdag/<arch>/powerdag-agent, where an installed PREFIX/bin/powerdag finds it.
# --build-dir DIR builds in DIR instead (the tests do). Only the powerdag-agent target is built, in
# Release, with warnings not fatal (PD_CROSS_WERROR=ON makes them fatal, as in the host build).
# --full builds the whole powerdag instead (build-<arch>-full/powerdag, --install: PREFIX/libexec/
# powerdag/<arch>/powerdag): the binary `twin up --vm --arch arm64` runs as the twin daemon inside
# its arm64 guest. It links the target's shared libraries (the guest image has their runtime
# packages); prerequisites: scripts/install-cross-deps.sh --full <arch>.
# Prerequisites: scripts/install-cross-deps.sh <arch>. Exit 3 when they are missing.
# PD_CROSS_SYSROOT=/path/to/board/rootfs builds against a board's own libraries (docs/BOARDS.md).
set -euo pipefail

usage() { echo "usage: scripts/cross-build.sh aarch64|armhf [--full] [--install PREFIX] [--build-dir DIR] [--clean]" >&2; exit 2; }
[ $# -ge 1 ] || usage
arch=$1; shift
case "$arch" in
  aarch64|arm64) arch=aarch64 triplet=aarch64-linux-gnu deb=arm64 ;;
  armhf|arm|armv7l) arch=armhf triplet=arm-linux-gnueabihf deb=armhf ;;
  -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
  *) echo "cross-build.sh: unknown architecture '$arch' (use aarch64 or armhf)" >&2; usage ;;
esac
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bdir="" prefix="" clean=0 full=0
while [ $# -gt 0 ]; do
  case "$1" in
    --full) full=1; shift ;;
    --install) [ $# -ge 2 ] || usage; prefix=$2; shift 2 ;;
    --build-dir) [ $# -ge 2 ] || usage; bdir=$2; shift 2 ;;
    --clean) clean=1; shift ;;
    *) usage ;;
  esac
done
if [ -z "$bdir" ]; then
  bdir="$src/build-$arch"
  [ $full = 0 ] || bdir="$bdir-full"
fi
mkdir -p "$(dirname "$bdir")"
bdir=$(cd "$(dirname "$bdir")" && pwd)/$(basename "$bdir")

# Refuse early, with the fix, rather than in the middle of a CMake configure.
if ! command -v "$triplet-gcc" >/dev/null; then
  echo "cross-build.sh: $triplet-gcc not found; install the cross toolchain first:" >&2
  echo "  scripts/install-cross-deps.sh $arch" >&2
  exit 3
fi
if [ -z "${PD_CROSS_SYSROOT:-}" ] && [ ! -e "/usr/lib/$triplet/pkgconfig/yaml-0.1.pc" ]; then
  echo "cross-build.sh: the $deb libraries are missing (no /usr/lib/$triplet/pkgconfig/yaml-0.1.pc);" >&2
  echo "  scripts/install-cross-deps.sh $arch" >&2
  exit 3
fi
if [ $full = 1 ] && [ -z "${PD_CROSS_SYSROOT:-}" ]; then
  for pc in libssh check fuse3; do
    [ -e "/usr/lib/$triplet/pkgconfig/$pc.pc" ] && continue
    echo "cross-build.sh: --full needs the $deb -dev packages of the whole powerdag (no $pc.pc);" >&2
    echo "  scripts/install-cross-deps.sh --full $arch" >&2
    exit 3
  done
fi

# The root CMakeLists.txt must be able to skip the host-only modules and their libraries (libssh,
# check, GLPK, fuse3), which the target architecture need not have.
if ! grep -q 'PD_AGENT_ONLY' "$src/CMakeLists.txt"; then
  echo "cross-build.sh: $src/CMakeLists.txt has no option PD_AGENT_ONLY (configure the agent alone);" >&2
  echo "  a cross build cannot skip the host-only packages without it" >&2
  exit 3
fi

# finish NAME WHO WHEN: checks build-dir/NAME was produced, installs it under --install PREFIX, and
# prints where it is, its ELF kind and the shared libraries WHO (the board, the guest) must have.
finish() {
  local bin="$bdir/$1"
  [ -x "$bin" ] || { echo "cross-build.sh: $bin was not produced" >&2; exit 1; }
  if [ -n "$prefix" ]; then
    install -D -m 0755 "$bin" "$prefix/libexec/powerdag/$arch/$1"
    bin="$prefix/libexec/powerdag/$arch/$1"
  fi
  echo "cross-build.sh: $bin ($3)"
  command -v file >/dev/null && file -b "$bin" | cut -d, -f1-2 | sed 's/^/cross-build.sh:   /'
  local needed
  needed=$("$triplet-readelf" -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "cross-build.sh:   $2: ${needed:-nothing (static)}"
}

[ "$clean" -eq 0 ] || rm -rf "$bdir"
mkdir -p "$bdir"
jobs=$(nproc 2>/dev/null || echo 2)
t0=$(date +%s)
if [ $full = 1 ]; then
  # Shared libraries (no pd-prefer-static: libssh and libfuse3 have no complete static chain in
  # Debian) and no CBC: the guest image has the runtime packages of exactly these (vm-image-arm64.sh).
  cmake -S "$src" -B "$bdir" \
    -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchains/$triplet.cmake" \
    -DCMAKE_BUILD_TYPE=Release \
    -DPD_WERROR="${PD_CROSS_WERROR:-OFF}" -DPD_AGENT_ONLY=OFF -DPD_WITH_CBC=OFF -DPD_SANITIZE=OFF -DPD_FUZZ=OFF \
    >"$bdir/configure.log" 2>&1 || {
    cat "$bdir/configure.log" >&2
    echo "cross-build.sh: CMake configure of the full powerdag for $arch failed (log above)" >&2
    exit 1
  }
  cmake --build "$bdir" --target powerdag -j"$jobs"
  finish powerdag "the guest needs" "$(( $(date +%s) - t0 )) s"
  exit 0
fi
# The executables land at the top of build-<arch>/ (CMAKE_RUNTIME_OUTPUT_DIRECTORY).
cmake -S "$src" -B "$bdir" \
  -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchains/$triplet.cmake" \
  -DCMAKE_PROJECT_INCLUDE="$src/cmake/toolchains/pd-prefer-static.cmake" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_RUNTIME_OUTPUT_DIRECTORY="$bdir" \
  -DPD_WERROR="${PD_CROSS_WERROR:-OFF}" -DPD_AGENT_ONLY=ON -DPD_SANITIZE=OFF -DPD_FUZZ=OFF >"$bdir/configure.log" 2>&1 || {
  cat "$bdir/configure.log" >&2
  echo "cross-build.sh: CMake configure for $arch failed (log above)" >&2
  exit 1
}
cmake --build "$bdir" --target powerdag-agent -j"$jobs"
finish powerdag-agent "board needs" "built"
