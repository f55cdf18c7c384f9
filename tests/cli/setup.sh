#!/bin/bash
# The README's set-up works on a fresh Debian 12 as root without sudo (containers, CI images) and as a
# user with sudo: its two commands do not start with sudo, .ci/run runs exactly its test command, and
# scripts/setup.sh (with install-deps.sh, install-cross-deps.sh) runs the package manager and the demo
# as root without sudo when root, through sudo when not. The system commands are stubs on a PATH that
# holds nothing else, so the test installs nothing and finds any other command the scripts call. A
# mirror mid-sync (every `apt-get update` failing) does not stop the set-up, nor does one cross
# architecture whose packages cannot be had; an install of the host's packages that keeps failing
# does, with apt's status.
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
	for c in bash env dirname basename nproc cat sleep; do ln -sf "$(command -v $c)" "$1/$c"; done
	printf '#!/bin/bash\n[ "$1" = -u ] && echo %s || echo stub\n' "$2" >"$1/id"
	for c in apt-get dpkg cmake; do printf '#!/bin/bash\necho "%s $*" >>"$LOG"\n' "$c" >"$1/$c"; done
	# $APT_FAIL: "update" = every `apt-get update` exits 100 (a mirror whose index stays behind its
	# Release file), "install" = every install does (a package that does not exist)
	# "armhf" = every install that names an :armhf package does (a mirror whose armhf lists cannot be had)
	cat >"$1/apt-get" <<'STUB'
#!/bin/bash
echo "apt-get $*" >>"$LOG"
[ "$1" = "$APT_FAIL" ] && exit 100
[ "$APT_FAIL" = armhf ] && [ "$1" = install ] && [[ " $* " == *:armhf\ * ]] && exit 100
exit 0
STUB
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
# 3. a mirror mid-sync: every `apt-get update` fails (exit 100); each is tried PD_APT_TRIES times and
# the set-up goes on with the lists it has, so the install, build and demo still run
APT_FAIL=update PD_APT_TRIES=2 PD_APT_WAIT_S=0 run_setup mirror 0 0
[ "$rc" -eq 0 ] || fail "setup.sh with a mirror mid-sync: exit $rc: $(tail -5 "$T/mirror.out")"
n=$(grep -c '^apt-get update' "$T/mirror.log")
# four refreshes (install-deps.sh; install-cross-deps.sh once per architecture: aarch64 and armhf, then
# aarch64 for --full), two tries each
[ "$n" -eq 8 ] || fail "with a mirror mid-sync: $n apt-get updates (want 4 refreshes x 2 tries)"
grep -q 'failed (try 1 of 2), retrying' "$T/mirror.out" || fail "with a mirror mid-sync: no retry message: $(cat "$T/mirror.out")"
grep -q 'installing from the lists it has' "$T/mirror.out" || fail "with a mirror mid-sync: no message about going on"
grep -q '^powerdag demo' "$T/mirror.log" || fail "with a mirror mid-sync: demo not run"

# 4. one architecture's cross packages cannot be had (armhf): the others are installed, a warning
# names it, and the build and demo still run (its cross tests print SKIP)
APT_FAIL=armhf PD_APT_TRIES=2 PD_APT_WAIT_S=0 run_setup armhf 0 0
[ "$rc" -eq 0 ] || fail "setup.sh without the armhf packages: exit $rc: $(tail -5 "$T/armhf.out")"
grep -q 'WARNING: could not install the cross toolchains for armhf' "$T/armhf.out" ||
	fail "no warning naming armhf: $(cat "$T/armhf.out")"
grep -q 'installed cross toolchains for aarch64' "$T/armhf.out" || fail "aarch64 not installed beside the armhf failure"
grep -q '^apt-get install .*gcc-aarch64-linux-gnu' "$T/armhf.log" || fail "no aarch64 install tried"
[ "$(grep -c '^apt-get install .*:armhf' "$T/armhf.log")" -eq 2 ] || fail "the armhf install not tried twice: $(cat "$T/armhf.log")"
grep -q '^apt-get install .*:arm64.*:armhf\|^apt-get install .*:armhf.*:arm64' "$T/armhf.log" &&
	fail "arm64 and armhf packages in one transaction"
grep -q '^powerdag demo' "$T/armhf.log" || fail "without the armhf packages: demo not run"

# 5. an install that fails every try: refreshed and retried, then the set-up stops with apt's status
# and builds nothing
APT_FAIL=install PD_APT_TRIES=2 PD_APT_WAIT_S=0 run_setup noinst 0 0
[ "$rc" -eq 100 ] || fail "setup.sh with a failing install: exit $rc (want apt's 100)"
[ "$(grep -c '^apt-get install' "$T/noinst.log")" -eq 2 ] || fail "a failing install not tried twice: $(cat "$T/noinst.log")"
grep -q '^cmake' "$T/noinst.log" && fail "with a failing install: the build ran"
finish setup
