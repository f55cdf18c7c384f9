#!/usr/bin/env bash
# Installs every Debian 12 package powerdag needs to build, test and run its board twin.
# qemu-system-x86, mmdebstrap, cpio: the VM twin (`twin up --vm`); its guest kernel
# (linux-image-cloud-amd64) and root file system are fetched by scripts/vm-image.sh into the image,
# not installed on this machine. qemu-system-arm (qemu-system-aarch64): the arm64 guest
# (scripts/vm-image-arm64.sh, tests/vm/vm_arm64_boot.sh); install-cross-deps.sh --full aarch64: the
# aarch64 build of the whole powerdag that the arm64 guest runs (tests/vm/vm_arm64_twin.sh).
# lava-server, lava-dispatcher, lavacli, postgresql: the local LAVA board farm (scripts/farm-local.sh,
# docs/FARM.md); their services are never enabled here (no systemd): farm-local.sh starts them itself.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
. "$(dirname "$0")/as-root.sh"
apt_update
apt_install \
  build-essential cmake pkg-config git ca-certificates sudo \
  libglpk-dev glpk-utils libyaml-dev libjansson-dev libssh-dev \
  libiio-dev libiio-utils iiod libgpiod-dev check \
  openssh-server openssh-client iproute2 procps psmisc kmod \
  coinor-libcbc-dev graphviz clang libclang-rt-14-dev \
  fuse3 libfuse3-dev rt-app chromium jq python3 util-linux groff-base man-db \
  qemu-system-x86 qemu-system-arm mmdebstrap cpio \
  lava-server lava-dispatcher lavacli postgresql
"$(dirname "$0")/install-cross-deps.sh"
# the whole powerdag for aarch64: the guest binary of `twin up --vm --arch arm64` (tests/vm/vm_arm64_twin.sh)
"$(dirname "$0")/install-cross-deps.sh" --full aarch64
