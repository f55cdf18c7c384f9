#!/bin/bash
# The host binary loads no board library (docs/ARCHITECTURE.md, "Libraries of the host binary"):
# neither `ldd powerdag` nor its NEEDED entries name libiio, libgpiod or XRT. The agent is checked
# with the same pattern and must name libiio, so that a changed ldd/readelf output cannot make this
# test pass vacuously. (With --as-needed toolchains the binary could stay clean while its link line
# is not: the configure-time pd_assert_not_linked in the root CMakeLists.txt covers that.)
. "$(dirname "$0")/lib/expect.sh"
: "${POWERDAG_AGENT:?POWERDAG_AGENT must name the powerdag-agent binary}"
command -v ldd >/dev/null && command -v readelf >/dev/null || fail "ldd and readelf needed"
board='lib(iio|gpiod)\.so|libxrt'
libs() { ldd "$1" && readelf -d "$1" | grep NEEDED; }
expect 0 libs "$POWERDAG"
grep -E "$board" "$T/out" >"$T/bad" && fail "powerdag loads board libraries: $(tr '\n' ' ' <"$T/bad")"
grep -q 'libjansson' "$T/out" || fail "ldd output of powerdag not understood (no libjansson): $(head -c 300 "$T/out")"
expect 0 libs "$POWERDAG_AGENT"
grep -qE 'libiio\.so' "$T/out" || fail "powerdag-agent shows no libiio: the pattern no longer matches ldd's output"
finish host_libs.sh
