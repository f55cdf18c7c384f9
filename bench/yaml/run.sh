#!/bin/bash
# bench/yaml/run.sh [BUILD_DIR] - YAML reading cost on hostile mappings (issue 13 item 4): wall time of
# `powerdag validate` on a file whose top mapping has N distinct keys (N up to the 10 000-key limit,
# then 50 000: refused at key 10 001) and on a 10 000-key mapping whose last key repeats the first
# (the duplicate check's worst case). 5 runs each (fresh process), median and worst in ms. Reading is
# linear: 10 000 keys should cost ~10x 1 000 keys, and 50 000 no more than 10 000.
#   cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release && cmake --build build-rel --target powerdag
#   bench/yaml/run.sh build-rel
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-$HERE/../../build}
PD=$BUILD/powerdag
[ -x "$PD" ] || { echo "no powerdag binary in $BUILD (pass the build directory)" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

keys() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "k%d: %d\n", i, i }'; }
time_ms() { # time_ms FILE: median and worst of 5 runs of validate (exit 2 expected: "unknown file kind", read fully)
	for r in 1 2 3 4 5; do
		s=$(date +%s%N)
		"$PD" validate "$1" >/dev/null 2>&1 || true
		echo $(( ($(date +%s%N) - s) / 1000 ))
	done | sort -n | awk '{ v[NR] = $1 } END { printf "%10.1f %10.1f", v[3] / 1000, v[5] / 1000 }'
}

printf '%-28s %10s %10s  %s\n' input median_ms worst_ms result
for n in 1000 10000 50000; do
	keys "$n" >"$T/k$n.yaml"
	res=$("$PD" validate "$T/k$n.yaml" 2>&1 | grep -o 'more than [0-9]* keys\|unknown file kind' | head -1 || true)
	printf '%-28s %s  %s\n' "$n keys" "$(time_ms "$T/k$n.yaml")" "${res:-?}"
done
{ keys 9999; echo "k0: again"; } >"$T/dup.yaml"
res=$("$PD" validate "$T/dup.yaml" 2>&1 | grep -o 'duplicate key[^)]*)' | head -1 || true)
printf '%-28s %s  %s\n' "9 999 keys + duplicate of k0" "$(time_ms "$T/dup.yaml")" "${res:-?}"
