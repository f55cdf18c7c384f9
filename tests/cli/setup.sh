#!/bin/bash
# The README's set-up works on a fresh Debian 12 as root without sudo (containers, CI images) and as a
# user with sudo: its two commands do not start with sudo, .ci/run runs exactly its test command, and
# scripts/setup.sh (with install-deps.sh, install-cross-deps.sh) runs the package manager and the demo
# as root without sudo when root, through sudo when not. The system commands are stubs on a PATH that
# holds nothing else, so the test installs nothing and finds any other command the scripts call.
POWERDAG=${POWERDAG:-unused}
. "$(dirname "$0")/lib/expect.sh"

# 1. the README: two set-up commands, none starting with sudo; .ci/run ends with the test command
cmds=$(awk '/^## Set-up/{on=1; next} /^## /{on=0} on && /^    [^ ]/{sub(/^    /, ""); print}' "$SRC/README.md")
[ "$(printf '%s\n' "$cmds" | grep -c .)" -eq 2 ] || fail "README set-up has not exactly two commands: $cmds"
printf '%s\n' "$cmds" | grep -q '^sudo' && fail "a README set-up command starts with sudo: $cmds"
test_cmd=$(printf '%s\n' "$cmds" | sed -n 2p)
[ "$(grep -v '^#' "$SRC/.ci/run" | grep -v '^ *$' | tail -1)" = "$test_cmd" ] || fail ".ci/run does not end with the README's test command '$test_cmd'"

# 2. scripts/setup.sh with stubs: as root without sudo, then as a user with sudo
mkbin() { # mkbin DIR UID WITH_SUDO
	mkdir -p "$1"
	for c in bash env dirname basename nproc cat; do ln -sf "$(command -v $c)" "$1/$c"; done
	printf '#!/bin/bash\n[ "$1" = -u ] && echo %s || echo stub\n' "$2" >"$1/id"
	for c in apt-get dpkg cmake; do printf '#!/bin/bash\necho "%s $*" >>"$LOG"\n' "$c" >"$1/$c"; done
	if [ "$3" = 1 ]; then
		printf '#!/bin/bash\necho "sudo $1" >>"$LOG"\nexec "$@"\n' >"$1/sudo"
	fi
	chmod +x "$1"/*
}
run_setup() { # run_setup NAME UID WITH_SUDO -> log in $T/NAME.log, rc in $rc
	local bin="$T/$1/bin" b="$T/$1/build"
	mkbin "$bin" "$2" "$3"
	mkdir -p "$b"
	printf '#!/bin/bash\necho "powerdag $*" >>"$LOG"\n' >"$b/powerdag"
	chmod +x "$b/powerdag"
	LOG="$T/$1.log" PD_BUILD_DIR="$b" PATH="$bin" /bin/bash "$SRC/scripts/setup.sh" >"$T/$1.out" 2>&1
	rc=$?
}
run_setup root 0 0
[ "$rc" -eq 0 ] || fail "setup.sh as root without sudo: exit $rc: $(tail -5 "$T/root.out")"
grep -q '^apt-get install' "$T/root.log" || fail "as root: packages not installed: $(cat "$T/root.log")"
grep -q '^powerdag demo' "$T/root.log" || fail "as root: demo not run"
grep -q '^cmake --build' "$T/root.log" || fail "as root: nothing built"
grep -q '^sudo' "$T/root.log" && fail "as root: sudo used"

run_setup user 1000 1
[ "$rc" -eq 0 ] || fail "setup.sh as a user with sudo: exit $rc: $(tail -5 "$T/user.out")"
grep -q '^sudo ./scripts/install-deps.sh' "$T/user.log" || fail "as a user: install-deps.sh not run through sudo: $(cat "$T/user.log")"
grep -q "^sudo $T/user/build/powerdag" "$T/user.log" || fail "as a user: demo not run through sudo"
grep -q '^sudo cmake' "$T/user.log" && fail "as a user: the build ran as root"

run_setup nosudo 1000 0
[ "$rc" -eq 3 ] || fail "setup.sh as a user without sudo: exit $rc (want 3)"
grep -q 'needs root' "$T/nosudo.out" || fail "as a user without sudo: no message saying root is needed"
finish setup
