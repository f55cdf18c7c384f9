# bench/closedloop/lib.sh - shared by the closed-loop benches (sourced, not run).

# jget FILE EXPR: EXPR evaluated with d = the JSON document in FILE.
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@"; }

# local_nominal FILE: the nominal platform for `local` written to FILE: one island of this machine's
# online CPUs at its current speed, one OPP, dl.max_util_per_cpu 0.95 (the fair server of a kernel
# >= 6.12 is a board fact `profile` adds to the fitted platform).
local_nominal() {
	local cpus
	cpus=$(python3 -c 'import os; print(", ".join(str(c) for c in sorted(os.sched_getaffinity(0))))')
	cat > "$1" <<EOF
platform:
  name: local
  reference_frequency: 1000MHz
  dl: {max_util_per_cpu: 0.95}
  islands:
    - name: cpu
      cpus: [$cpus]
      opps:
        - {freq: 1000MHz, busy: 1W, idle: 0.1W}
EOF
}
