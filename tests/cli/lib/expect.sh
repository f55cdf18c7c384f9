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
# The end-to-end tests' preconditions: exit 0 with SKIP and the reason when they do not hold.
# needs_root WHAT (what root is for), needs_cpus N (one twin per CPU, say), needs_cmds CMD... (with
# the package hint of scripts/install-deps.sh).
needs_root() { [ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root ($*)"; exit 0; }; }
needs_cpus() { [ "$(nproc)" -ge "$1" ] || { echo "SKIP: needs $1 CPUs (one per twin)"; exit 0; }; }
needs_cmds() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null ||
			{ echo "SKIP: $c is not installed (scripts/install-deps.sh installs it)"; exit 0; }
	done
}

expect() {
	local want=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	[ "$rc" -eq "$want" ] || fail "exit $rc (want $want): $* -- $(head -c 600 "$T/err")"
	# 128+ means a signal (a crash): never acceptable
	[ "$rc" -lt 128 ] || fail "crashed ($rc): $*"
}

# refused_by_optimize MAKER "VALUE:LINE:COL"...: for each, `MAKER VALUE` prints a platform file that
# optimize (DAG set $T/chain.yaml) must refuse with exit 2, the error at LINE:COL, and no plan written.
refused_by_optimize() {
	local mk=$1 kv v pos
	shift
	for kv in "$@"; do
		v=${kv%:*:*}
		pos=${kv#"$v"}
		"$mk" "$v" >"$T/bad.yaml"
		rm -f "$T/bad-plan.yaml"
		expect 2 "$POWERDAG" optimize "$T/chain.yaml" "$T/bad.yaml" -o "$T/bad-plan.yaml"
		grep -q "bad.yaml$pos: error" "$T/err" || fail "'$v' not reported at $pos: $(cat "$T/err")"
		[ -e "$T/bad-plan.yaml" ] && fail "'$v' still wrote a plan"
	done
}

finish() {
	[ "$fails" -eq 0 ] && echo "$1: all passed"
	exit $((fails > 0))
}
