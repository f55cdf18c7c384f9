# Sourced by the VM twin end-to-end tests (POSIX sh). Uses the caller's $pd, $st, $ns and fail().

# down_leaves_nothing: `twin down`, then no qemu, netns, tap or state directory may be left
down_leaves_nothing() {
	qemu=$(sed -n 's/.*"daemon": \([0-9]*\).*/\1/p' "$st/twin.json")
	"$pd" twin down --state "$st" || fail "twin down"
	# a zombie waiting for its reaper (qemu's parent, `up`, has exited) is not running
	if [ -n "$qemu" ] && [ -e /proc/$qemu ] && ! grep -q '^[0-9]* ([^)]*) Z' /proc/$qemu/stat 2>/dev/null; then
		fail "qemu $qemu still running"
	fi
	ip netns list | grep -q "^$ns" && fail "netns $ns left"
	ip -o link | grep -q pdvmtap && fail "a tap left on the host"
	[ -e "$st" ] && fail "state dir $st left"
	return 0
}
