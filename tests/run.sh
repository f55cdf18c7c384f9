#!/usr/bin/env bash
# The whole test suite: a normal build and an ASan+UBSan build, every test of both (unit, CLI and the
# privileged end-to-end tests on the board twin, which need root), and each fuzz target for a short run.
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
  echo "== fuzz (libFuzzer, 20 s per parser)"
  CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DPD_FUZZ=ON -DPD_WERROR=OFF >/dev/null
  cmake --build build-fuzz -j"$jobs" --target fuzz_all
  for f in build-fuzz/fuzz/fuzz_*; do
    [ -x "$f" ] || continue
    name=$(basename "$f")
    corpus="build-fuzz/corpus-$name"
    mkdir -p "$corpus"
    cp dags/examples/*.yaml platforms/*.yaml tests/plan/*.yaml "$corpus"/ 2>/dev/null || true
    "$f" -max_total_time=20 -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 "$corpus" >"build-fuzz/$name.log" 2>&1 \
      || { tail -50 "build-fuzz/$name.log"; echo "fuzz target $name failed"; exit 1; }
    echo "$name: $(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/$name.log") inputs in 20 s, no crash"
  done
fi
echo "== all tests passed"
