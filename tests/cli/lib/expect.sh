# Sourced by the CLI tests: $POWERDAG (the binary under test), $SRC (the source tree), $T (a scratch
# directory removed on exit), fail MSG (counts a failure), expect RC CMD... (runs CMD with stdout in
# $T/out and stderr in $T/err, and fails when it exits otherwise than RC or dies of a signal), and
# finish NAME (prints the verdict and sets the exit status).
set -u
: "${POWERDAG:?POWERDAG must name the powerdag binary}"
SRC=${PD_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

expect() {
	local want=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	[ "$rc" -eq "$want" ] || fail "exit $rc (want $want): $* -- $(head -c 600 "$T/err")"
	# 128+ means a signal (a crash): never acceptable
	[ "$rc" -lt 128 ] || fail "crashed ($rc): $*"
}

finish() {
	[ "$fails" -eq 0 ] && echo "$1: all passed"
	exit $((fails > 0))
}
