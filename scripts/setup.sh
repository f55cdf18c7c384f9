#!/usr/bin/env bash
# The README's first command: installs the Debian 12 packages, builds in ./build and runs the whole
# loop on the board twin (`powerdag demo`). Works as root (no sudo needed: fresh containers have none)
# and as a user with sudo (only the package installation and the demo are run as root; the build
# stays the user's).
# Usage: ./scripts/setup.sh        (from anywhere; builds in the repository's build/, or $PD_BUILD_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/as-root.sh
as_root ./scripts/install-deps.sh
build=${PD_BUILD_DIR:-build}
cmake -S . -B "$build"
cmake --build "$build" -j"$(nproc)"
as_root "$build/powerdag" demo
