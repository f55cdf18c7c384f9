#!/usr/bin/env bash
# The whole test suite: a normal build and an ASan+UBSan build, every test of both (unit, CLI and the
# privileged end-to-end tests on the board twin, which need root), and every fuzz target for a short run
# (fuzz/run.sh 1).
# Usage: tests/run.sh            (from the repository root; exits non-zero when any test fails)
# Run as a user, it re-runs itself through sudo (the end-to-end tests need root); as root (a fresh
# container has no sudo) it runs directly. Warnings are errors here (PD_WERROR=ON), not by default.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "tests/run.sh: needs root (end-to-end tests): run it as root, or install sudo" >&2; exit 3; }
  exec sudo "$0" "$@"
fi
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (RelWithDebInfo)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPD_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
echo "== tests"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== build (ASan+UBSan)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPD_SANITIZE=ON -DPD_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs"
echo "== tests under ASan+UBSan (end-to-end tests excluded: they ran above)"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE e2e

if command -v clang >/dev/null; then
  echo "== fuzz (libFuzzer, every target for 1 minute from the checked-in corpus fuzz/corpus/)"
  fuzz/run.sh 1
fi
echo "== all tests passed"
