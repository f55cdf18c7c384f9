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

pkgs=(qemu-user binfmt-support file)
for a in "${arches[@]}"; do
  case "$a" in
    aarch64) deb=arm64 gcc=gcc-aarch64-linux-gnu ;;
    armhf) deb=armhf gcc=gcc-arm-linux-gnueabihf ;;
    *) echo "install-cross-deps.sh: unknown architecture '$a' (use aarch64 or armhf)" >&2; exit 2 ;;
  esac
  as_root dpkg --add-architecture "$deb"
  pkgs+=("$gcc" "libc6-dev-$deb-cross")
  for p in "${agent_libs[@]}" ${full_libs[@]+"${full_libs[@]}"}; do
    pkgs+=("$p:$deb")
  done
done

apt_update
apt_install "${pkgs[@]}"
echo "install-cross-deps.sh: installed cross toolchains for ${arches[*]}$([ "$full" = 1 ] && echo ' (full powerdag)')"
