#!/usr/bin/env bash
# Installs what `scripts/cross-build.sh aarch64|armhf` and tests/cli/cross.sh need on a Debian 12
# x86-64 host: the Debian cross compilers, the target-architecture (multiarch) -dev packages the agent
# links against, and qemu-user to run the cross-built agents in the tests.
#
# Usage: scripts/install-cross-deps.sh [--full] [aarch64|armhf ...]   (default: both)
#
# --full (or PD_CROSS_FULL=1) also installs the target-architecture -dev packages of the whole
# powerdag (libssh, check, GLPK, fuse3), for `scripts/cross-build.sh aarch64 --full`: the aarch64
# powerdag that `twin up --vm --arch arm64` runs inside its guest. Without it the install stays the
# agent's (CI's default). Multiarch -dev packages must have the host's exact versions: apt may
# upgrade host libraries (libssl3, libkrb5) to the version the :arm64 ones have.
#
# Why multiarch instead of a board sysroot: Debian's :arm64/:armhf packages install next to the host
# ones (/usr/lib/aarch64-linux-gnu, /usr/lib/arm-linux-gnueabihf) with matching headers, so the agent
# builds against the same library versions the host build uses. A board whose C library is older than
# Debian 12's (glibc 2.36) needs a build against its own sysroot instead: see docs/BOARDS.md.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
. "$(dirname "$0")/as-root.sh"

full=${PD_CROSS_FULL:-0}
arches=()
for a in "$@"; do
  case "$a" in
    --full) full=1 ;;
    *) arches+=("$a") ;;
  esac
done
[ ${#arches[@]} -gt 0 ] || arches=(aarch64 armhf)

# Libraries the agent links (agents/CMakeLists.txt and the modules below it). The host-only ones
# (libssh, check, GLPK, fuse3) are not needed: cross-build.sh configures with -DPD_AGENT_ONLY=ON.
agent_libs=(libyaml-dev libjansson-dev libiio-dev libgpiod-dev)
# the rest of powerdag (CMakeLists.txt without PD_AGENT_ONLY, twin/CMakeLists.txt); CBC is optional
full_libs=(libssh-dev check libglpk-dev libfuse3-dev)
[ "$full" = 1 ] || full_libs=()

# Debian architecture and cross compiler of a target ("arm64 gcc-aarch64-linux-gnu").
target() {
  case "$1" in
    aarch64) echo "arm64 gcc-aarch64-linux-gnu" ;;
    armhf) echo "armhf gcc-arm-linux-gnueabihf" ;;
    *) return 1 ;;
  esac
}
for a in "${arches[@]}"; do
  target "$a" >/dev/null || { echo "install-cross-deps.sh: unknown architecture '$a' (use aarch64 or armhf)" >&2; exit 2; }
done

# One architecture at a time, each with its own refresh: apt takes a repository's indexes as one set,
# so when any file of it fails (a mirror's bookworm-security armhf index stayed behind its Release
# file for days) it keeps that repository's previous set, and on a fresh machine the arm64 lists
# added in the same refresh were lost with the armhf one. Refreshed one by one, an architecture added
# before the broken one keeps its lists.
for a in "${arches[@]}"; do
  read -r deb _ <<<"$(target "$a")"
  as_root dpkg --add-architecture "$deb"
  apt_update
done

# the host's side (amd64): without these nothing cross-built can be run here
apt_install qemu-user binfmt-support file

# Each architecture in its own transaction: one whose packages cannot be had (its lists missing, or
# multiarch versions that no longer match the host's after a failed refresh) is left out with a
# warning, and the tests of that architecture print SKIP (tests/cli/cross.sh, tests/vm/*arm64*)
# rather than the whole set-up failing on a mirror's fault.
what="cross toolchains"
[ "$full" = 1 ] && what="cross toolchains (full powerdag)"
missing=()
for a in "${arches[@]}"; do
  read -r deb gcc <<<"$(target "$a")"
  pkgs=("$gcc" "libc6-dev-$deb-cross")
  for p in "${agent_libs[@]}" ${full_libs[@]+"${full_libs[@]}"}; do
    pkgs+=("$p:$deb")
  done
  if apt_install "${pkgs[@]}"; then
    echo "install-cross-deps.sh: installed $what for $a"
  else
    missing+=("$a")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-cross-deps.sh: WARNING: could not install the $what for ${missing[*]} (apt's error above);" \
    "their cross builds and tests are skipped (SKIP lines). Run this script again once the mirror is consistent." >&2
fi
