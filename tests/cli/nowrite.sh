#!/bin/bash
# Exit 2 writes nothing (issue 13 item 6): every command refuses a bad argument before its first
# write. Each case runs in an empty directory W with every output pointed into W; afterwards W must
# still be empty. Neither `deploy` nor `demo` gets as far as a board here (the bad argument stops
# them first), so no lock is needed.
. "$(dirname "$0")/lib/expect.sh"

W="$T/w"
mkdir "$W"
PLAN="$SRC/tests/checker/plan_ok.yaml"
DAGS="$SRC/dags/examples/twin.yaml"
PLAT="$SRC/platforms/odroid-xu4.yaml"
printf 'plan: [1, 2\n' >"$T/bad.yaml"

# nothing_written CMD...: exit 2, W empty, and nothing written into the current directory (W) either
nothing_written() {
	(cd "$W" && expect 2 "$@"; exit $fails) || fails=$((fails + 1))
	if [ -n "$(ls -A "$W")" ]; then
		fail "exit 2 left files behind: $* -> $(ls -A "$W" | tr '\n' ' ')"
		rm -rf "${W:?}"/* "${W:?}"/.[!.]* 2>/dev/null
	fi
}

nothing_written "$POWERDAG" validate "$T/bad.yaml"
nothing_written "$POWERDAG" gen --dags 0 -o "$W/set.yaml"
nothing_written "$POWERDAG" gen --util nope -o "$W/set.yaml"
nothing_written "$POWERDAG" dot "$T/bad.yaml" -o "$W/x.dot"
nothing_written "$POWERDAG" dot "$DAGS" --plan "$T/bad.yaml" -o "$W/x.dot"
nothing_written "$POWERDAG" optimize "$DAGS" "$PLAT" -o "$W/plan.yaml" --time-limit nope
nothing_written "$POWERDAG" optimize "$DAGS" "$T/bad.yaml" -o "$W/plan.yaml"
nothing_written "$POWERDAG" check "$T/bad.yaml"
nothing_written "$POWERDAG" simulate "$PLAN" --trace "$W/t.json" --seed nope
nothing_written "$POWERDAG" simulate "$T/bad.yaml" --trace "$W/t.json"
nothing_written "$POWERDAG" report "$T/no-such-run" --html "$W/r.html" --csv "$W/csv" --perfetto "$W/p.json"
nothing_written "$POWERDAG" report "$T/no-such-run" --html "$W/r.html" --bogus
# deploy: a bad --board URI used to be parsed after RUNDIR was created (and plan.yaml copied)
nothing_written "$POWERDAG" deploy "$PLAN" --board 'bogus://x' --out "$W/run"
nothing_written "$POWERDAG" deploy "$PLAN" --board 'ssh://root@host:99999' --out "$W/run"
nothing_written "$POWERDAG" deploy "$PLAN" --board local --out "$W/run" --duration nope
nothing_written "$POWERDAG" deploy "$T/bad.yaml" --board local --out "$W/run"
nothing_written "$POWERDAG" deploy "$PLAN" --board local --out "$W/run" --identity "$T/no-such-key"
nothing_written "$POWERDAG" deploy "$PLAN" --board local --out "$W/run" --known-hosts "$T/no-such-file"
nothing_written "$POWERDAG" deploy "$PLAN" --board local --out "$W/run" --agent "$T/no-such-agent"
nothing_written "$POWERDAG" deploy "$PLAN" --board bogus # the default RUNDIR (in W) is not created either
nothing_written "$POWERDAG" demo --out "$W/demo" unexpected
nothing_written "$POWERDAG" demo --bogus
nothing_written "$POWERDAG" refit "$T/no-such-run" -o "$W/refit.yaml"
nothing_written "$POWERDAG" refit "$T/no-such-run" -o "$W/refit.yaml" --quantile 2
nothing_written "$POWERDAG" twin up --state "$W/state" --port nope
nothing_written "$POWERDAG" twin frobnicate --state "$W/state"
nothing_written "$POWERDAG" twin up "$T/bad.yaml" --state "$W/state"
nothing_written "$POWERDAG" twin up --vm --arch sparc64 --state "$W/state"
nothing_written "$POWERDAG" twin up --arch arm64 --state "$W/state"

nothing_written "$POWERDAG" profile --board local --platform "$T/bad.yaml" -o "$W/fitted.yaml"
nothing_written "$POWERDAG" profile --board local --platform "$PLAT" -o "$W/fitted.yaml" --window nope
nothing_written "$POWERDAG" profile --board bogus://x --platform "$PLAT" -o "$W/fitted.yaml"

# farm submit: the lab file, every plan and the matrix are checked before DIR exists (no LAVA here)
printf 'tok\n' >"$T/token" && chmod 600 "$T/token"
printf 'lava: {url: "http://127.0.0.1:9/", user: u, token_file: "%s"}\ndevices:\n  - {name: twin-1, device_type: twin, board: "ssh://root@10.0.0.2", identity: /i, known_hosts: /k}\n' "$T/token" >"$T/lab.yaml"
nothing_written "$POWERDAG" farm submit --lab "$T/lab.yaml" --out "$W/f" "$T/bad.yaml"
nothing_written "$POWERDAG" farm submit --lab "$T/lab.yaml" --out "$W/f" --device-type zcu102 "$PLAN"
nothing_written "$POWERDAG" farm submit --lab "$T/lab.yaml" --out "$W/f" --repeat 0 "$PLAN"
nothing_written "$POWERDAG" farm submit --lab "$T/bad.yaml" --out "$W/f" "$PLAN"
nothing_written "$POWERDAG" farm submit --lab "$T/lab.yaml" --out "$W/f"
nothing_written "$POWERDAG" farm collect "$W/no-such-farm"
finish nowrite.sh
