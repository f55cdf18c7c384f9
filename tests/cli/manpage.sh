#!/bin/bash
# docs/powerdag.1 is generated from the commands' --help texts: it must match the binary (regenerate
# with scripts/gen-man.sh build/powerdag > docs/powerdag.1), and man must render it without warnings.
. "$(dirname "$0")/lib/expect.sh"
"$SRC/scripts/gen-man.sh" "$POWERDAG" >"$T/powerdag.1" || fail "gen-man.sh failed"
diff -u "$SRC/docs/powerdag.1" "$T/powerdag.1" >"$T/diff" || fail "docs/powerdag.1 is stale: $(head -20 "$T/diff")"
if command -v groff >/dev/null; then
	groff -man -Tutf8 -ww "$SRC/docs/powerdag.1" >/dev/null 2>"$T/warn"
	[ -s "$T/warn" ] && fail "groff warnings: $(head -5 "$T/warn")"
fi
finish manpage.sh
