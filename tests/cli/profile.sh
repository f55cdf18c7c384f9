#!/bin/bash
# powerdag profile, bad input: every case exits 2 with one message naming the problem, before any
# board is touched (no lock needed: nothing reaches a board), and FITTED is never created.
. "$(dirname "$0")/lib/expect.sh"

PL="$SRC/platforms/odroid-xu4.yaml"
F="$T/fitted.yaml"
nofit() { [ -e "$F" ] && fail "$1: $F was written"; rm -f "$F"; }

expect 2 "$POWERDAG" profile --platform "$PL" -o "$F"
grep -q -- '--board URI is required' "$T/err" || fail "missing --board: no message"
nofit "missing --board"
expect 2 "$POWERDAG" profile --board local -o "$F"
grep -q -- '--platform NOMINAL is required' "$T/err" || fail "missing --platform: no message"
expect 2 "$POWERDAG" profile --board local --platform "$PL"
grep -q -- '-o FITTED is required' "$T/err" || fail "missing -o: no message"
expect 2 "$POWERDAG" profile --board local --platform "$T/missing.yaml" -o "$F"
grep -q 'missing.yaml' "$T/err" || fail "missing platform: the message does not name the file"
nofit "missing platform"
printf 'platform:\n  name: x\n  islands: []\n' >"$T/bad.yaml"
expect 2 "$POWERDAG" profile --board local --platform "$T/bad.yaml" -o "$F"
grep -q 'bad.yaml:[0-9]*:[0-9]*' "$T/err" || fail "invalid platform: no file:line:col"
nofit "invalid platform"
expect 2 "$POWERDAG" profile --board local --platform "$PL" -o "$T/no/such/dir/fitted.yaml"
grep -q 'does not exist' "$T/err" || fail "-o in a missing directory: no message"
mkdir "$T/ro" && chmod 0555 "$T/ro"
if [ "$(id -u)" -ne 0 ]; then # root writes anywhere: the case only exists for other users
	expect 2 "$POWERDAG" profile --board local --platform "$PL" -o "$T/ro/fitted.yaml"
	grep -q 'not writable' "$T/err" || fail "-o in a read-only directory: no message"
fi
expect 2 "$POWERDAG" profile --board local --platform "$PL" -o "$T"
grep -q 'is a directory' "$T/err" || fail "-o DIR: no message"
expect 2 "$POWERDAG" profile --board bogus://x --platform "$PL" -o "$F"
nofit "unknown board scheme"
# a board that does not answer: environment (3), nothing written
expect 3 "$POWERDAG" profile --board ssh://root@127.0.0.1:1 --platform "$PL" -o "$F"
nofit "unreachable board"
expect 2 "$POWERDAG" profile --board local --platform "$PL" -o "$F" --window 5
grep -q -- "--window" "$T/err" || fail "bad --window: the message does not name the option"
expect 2 "$POWERDAG" profile --board local --platform "$PL" -o "$F" extra
nofit "extra argument"
expect 0 "$POWERDAG" profile --help
grep -q -- '--platform NOMINAL' "$T/out" || fail "--help does not document --platform"

finish profile.sh
