#!/bin/bash
# Comments and docs cite only what is in the repository: no "SPEC n" (the product contract lives
# outside the tree), no reference notes or seed documents of the planning folder, and every
# docs/ file named anywhere in the sources exists (names with "-" too: docs/OPTIMIZER-LOG.md).
. "$(dirname "$0")/lib/expect.sh"
cd "$SRC" || fail "no source dir"
files=$(git ls-files '*.c' '*.h' '*.sh' '*.md' '*.py' '*.txt' 'CMakeLists.txt' '*/CMakeLists.txt' 2>/dev/null) ||
	files=$(find . -path ./build\* -prune -o \( -name '*.[ch]' -o -name '*.sh' -o -name '*.md' -o -name '*.py' \) -print)
[ -n "$files" ] || fail "no source files found"
# shellcheck disable=SC2086
grep -nE '\bSPEC( ?[0-9]|\b)|reference notes|linux-interfaces|shared/(SPEC|reference|seeds)|\.\./shared' $files \
	| grep -v '^tests/cli/citations.sh:' >"$T/bad" && fail "citations of files outside the repository:
$(head -20 "$T/bad")"
# shellcheck disable=SC2086
grep -ohE 'docs/[A-Za-z_-]+\.(md|1)' $(echo "$files" | grep -v '^tests/cli/citations.sh$') | sort -u >"$T/docs"
[ -s "$T/docs" ] || fail "no docs/ citation found at all: the scan is broken"
while read -r d; do
	[ -f "$d" ] || echo "$d" >>"$T/missing"
done <"$T/docs"
[ -s "$T/missing" ] && fail "cited but missing: $(tr '\n' ' ' <"$T/missing")"
finish citations.sh
