#!/usr/bin/env bash
# Runs every libFuzzer target (fuzz/fuzz_*.c) at once for MINUTES minutes of wall time, each from its
# checked-in seeds (fuzz/corpus/<target>/, read only) and its working corpus (build-fuzz/corpus/<target>/,
# where new inputs go; kept between runs). Prints each target's executed inputs; exits 1 when a target
# found a crash, a leak, a sanitizer report or a timeout (reproducer: build-fuzz/crash-<target>-*).
# Usage: fuzz/run.sh MINUTES        (e.g. 2; tests/run.sh runs 1; decimals allowed: 0.5)
# Needs clang (libFuzzer). Builds build-fuzz/ (Debug, ASan + UBSan, PD_FUZZ=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:?usage: fuzz/run.sh MINUTES}
secs=$(awk -v m="$minutes" 'BEGIN { s = int(m * 60); if (m !~ /^[0-9]+(\.[0-9]+)?$/ || s < 1) exit 1; print s }') ||
  { echo "fuzz/run.sh: MINUTES must be a positive number, not '$minutes'" >&2; exit 2; }
command -v clang >/dev/null || { echo "fuzz/run.sh: needs clang (libFuzzer)" >&2; exit 3; }
jobs=$(nproc 2>/dev/null || echo 2)
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DPD_FUZZ=ON -DPD_WERROR=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz_all >/dev/null

targets=()
for f in build-fuzz/fuzz/fuzz_*; do
  [ -x "$f" ] && [ -f "$f" ] && targets+=("$(basename "$f")")
done
[ ${#targets[@]} -gt 0 ] || { echo "fuzz/run.sh: no fuzz target was built" >&2; exit 3; }

pids=()
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  rm -f "build-fuzz/$t.log"
  # -timeout: one input taking 10 s is a bug (quadratic parsing); -rss_limit_mb: so is 2 GiB.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/fuzz/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="build-fuzz/crash-$t-" "build-fuzz/corpus/$t" "fuzz/corpus/$t" >"build-fuzz/$t.log" 2>&1 &
  pids+=($!)
done
failed=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if wait "${pids[$i]}"; then
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/$t.log")
    echo "$t: ${n:-?} inputs in $secs s, corpus $(ls "build-fuzz/corpus/$t" | wc -l) files, no finding"
  else
    failed=1
    echo "$t: FAILED (build-fuzz/$t.log):"
    grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "build-fuzz/$t.log" | head -20 || tail -30 "build-fuzz/$t.log"
  fi
done
exit "$failed"
