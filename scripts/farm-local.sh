#!/usr/bin/env bash
# A local LAVA board farm for tests and demos (docs/FARM.md): PostgreSQL, lava-server (gunicorn),
# lava-scheduler, lava-publisher and one lava-worker as plain processes (no systemd), all state under
# one directory, and N board twins registered as SSH devices of device type `twin` with their host
# keys pinned.
#
#   scripts/farm-local.sh up   [--boards N] [--cpus-each K] [--state DIR] [--port P] [--powerdag BIN]
#   scripts/farm-local.sh down [--state DIR]
#   scripts/farm-local.sh status [--state DIR]
#
# Root only (the twins' namespaces). Installs nothing: scripts/install-deps.sh has the packages
# (lava-server lava-dispatcher lavacli postgresql). `up` writes STATE/farm.env (URL, user, token)
# STATE/platform-twin.yaml (the twins' platform, to plan for device type twin), and STATE/lab.yaml (the lab file `powerdag farm` reads: the server, each LAVA device's board URI,
# key, known_hosts)
# and prints the set-up time. --cpus-each K gives every twin K host CPUs of its own (`twin up
# --host-cpus`; N x K at most this machine's CPUs): each device then has its own CPU group, cpuset
# directory (`cgroup`) and `cpu_map` in the lab file, so LAVA's jobs on different twins deploy at the
# same time, one plan for the type running on each twin's CPUs. Without it the twins share every CPU
# and their deploys take turns (one CPU group). `down` stops every process it started by pid, brings the twins down
# (their netns and veths go with them), and removes STATE with the database cluster in it.
# Exit codes: 0 ok, 2 bad usage, 3 environment (missing package, not root, port taken, a step failed;
# `up` then tears down what it had started).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
ACTION=${1:-}
[ $# -gt 0 ] && shift
STATE=/run/powerdag-farm
BOARDS=3
CPUS_EACH=
PORT=18080
PDBIN=${POWERDAG:-$SRC/build/powerdag}
while [ $# -gt 0 ]; do
	case "$1" in
	--boards) BOARDS=$2; shift 2 ;;
	--cpus-each) CPUS_EACH=$2; shift 2 ;;
	--state) STATE=$2; shift 2 ;;
	--port) PORT=$2; shift 2 ;;
	--powerdag) PDBIN=$2; shift 2 ;;
	*) echo "farm-local.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
case "$BOARDS" in ''|*[!0-9]*) echo "farm-local.sh: --boards wants 1..8" >&2; exit 2 ;; esac
case "$PORT" in ''|*[!0-9]*) echo "farm-local.sh: --port wants a number" >&2; exit 2 ;; esac
[ "$BOARDS" -ge 1 ] && [ "$BOARDS" -le 8 ] || { echo "farm-local.sh: --boards wants 1..8" >&2; exit 2; }
if [ -n "$CPUS_EACH" ]; then
	case "$CPUS_EACH" in *[!0-9]*|0*) echo "farm-local.sh: --cpus-each wants 1..$(nproc)" >&2; exit 2 ;; esac
	[ $((BOARDS * CPUS_EACH)) -le "$(nproc)" ] ||
		{ echo "farm-local.sh: $BOARDS boards x $CPUS_EACH CPUs each need $((BOARDS * CPUS_EACH)) CPUs; this machine has $(nproc)" >&2; exit 2; }
fi
case "$STATE" in /*) ;; *) STATE=$(pwd)/$STATE ;; esac
PGBIN=/usr/lib/postgresql/15/bin
PGPORT=$((PORT + 1))
PUBPORT=$((PORT + 2)) # lava-publisher's websocket (the worker wakes up on its events)
ZPORT=$((PORT + 3))   # lava-publisher's ZMQ events (the scheduler wakes up on them)
# where lava-server's processes push their events to the publisher. TCP, not LAVA's usual ipc://
# file: the publisher drops privileges to lavaserver before it binds, and an ipc socket under STATE
# (root's) then fails inside an asyncio task nobody awaits, silently: no event ever reached the
# scheduler, which then only scheduled on its 20-s tick (a job waited 10-20 s to start)
IPORT=$((PORT + 4))
WORKER=farm-worker

# exit 3; during `up`, after the first thing was made, everything made so far is torn down
TEARDOWN=
die() {
	echo "farm-local.sh: $*" >&2
	if [ -n "$TEARDOWN" ]; then
		TEARDOWN=
		echo "farm-local.sh: set-up failed, tearing down" >&2
		down >/dev/null 2>&1 || true
	fi
	exit 3
}

# The LAVA processes all read their settings from the environment: database URL, secret key, and
# every path that is /etc or /var by default moved under STATE (LAVA_JSON_SETTINGS).
lava_env() {
	export DATABASE_URL="postgres://postgres@127.0.0.1:$PGPORT/lavaserver"
	export SECRET_KEY
	SECRET_KEY=$(cat "$STATE/secret_key")
	export ALLOWED_HOSTS="127.0.0.1,localhost"
	local js
	js=$(printf '{"DEVICES_PATH": "%s/devices", "DEVICE_TYPES_PATHS": ["%s/device-types", "/usr/share/lava-server/device-types"], "HEALTH_CHECKS_PATH": "%s/health-checks", "MEDIA_ROOT": "%s/media", "DJANGO_LOGFILE": "%s/log/django.log", "EVENT_NOTIFICATION": true, "EVENT_SOCKET": "tcp://127.0.0.1:%s", "INTERNAL_EVENT_SOCKET": "tcp://127.0.0.1:%s"}' \
		"$STATE" "$STATE" "$STATE" "$STATE" "$STATE" "$ZPORT" "$IPORT")
	export LAVA_JSON_SETTINGS
	LAVA_JSON_SETTINGS=$(printf '%s' "$js" | base64 -w0)
}

manage() { lava-server manage "$@"; }

# start NAME CMD...: a plain background process, its pid in STATE/pids/NAME, output in STATE/log/NAME.log
start() {
	local name=$1
	shift
	setsid "$@" </dev/null >>"$STATE/log/$name.log" 2>&1 &
	echo $! >"$STATE/pids/$name"
}

wait_http() {
	for _ in $(seq 1 150); do
		if python3 - "$1" <<'PY' 2>/dev/null; then return 0; fi
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=2).read()
PY
		sleep 0.2
	done
	return 1
}

up() {
	[ "$(id -u)" -eq 0 ] || die "needs root (the twins' network namespaces)"
	for c in lava-server lava-worker lavacli gunicorn3 "$PGBIN/initdb" "$PDBIN"; do
		command -v "$c" >/dev/null || die "'$c' not found (scripts/install-deps.sh installs LAVA and PostgreSQL; build powerdag first)"
	done
	[ -e "$STATE/farm.env" ] || [ -e "$STATE/pids" ] && die "a farm is already recorded in $STATE (farm-local.sh down --state $STATE)"
	for p in $PORT $PGPORT $PUBPORT $ZPORT $IPORT; do
		if ss -Hltn "sport = :$p" | grep -q .; then die "TCP port $p is taken (choose another --port)"; fi
	done
	local t0
	t0=$(date +%s.%N)
	mkdir -p "$STATE"/{pids,log,devices,device-types,health-checks,media}
	chmod 755 "$STATE"
	TEARDOWN=1
	trap 'die "a step failed (line $LINENO)"' ERR
	python3 -c 'import secrets; print(secrets.token_urlsafe(40))' >"$STATE/secret_key"
	chmod 600 "$STATE/secret_key"

	# PostgreSQL: a private cluster, trust on 127.0.0.1 only, socket in STATE; the server runs as
	# postgres, which must reach STATE
	runuser -u postgres -- test -x "$STATE" ||
		die "user postgres cannot enter $STATE (a parent directory is private): choose another --state"
	install -d -o postgres -g postgres -m 700 "$STATE/pg"
	runuser -u postgres -- "$PGBIN/initdb" -D "$STATE/pg" -A trust -U postgres -E UTF8 --locale C.UTF-8 \
		>"$STATE/log/initdb.log" 2>&1 || die "initdb failed: $(tail -3 "$STATE/log/initdb.log")"
	runuser -u postgres -- "$PGBIN/pg_ctl" -D "$STATE/pg" -l "$STATE/pg/server.log" -w \
		-o "-h 127.0.0.1 -p $PGPORT -k $STATE/pg -c fsync=off" start >"$STATE/log/pg_ctl.log" 2>&1 ||
		die "PostgreSQL did not start: $(tail -3 "$STATE/pg/server.log")"
	head -1 "$STATE/pg/postmaster.pid" >"$STATE/pids/postgres"
	runuser -u postgres -- "$PGBIN/createdb" -h 127.0.0.1 -p "$PGPORT" lavaserver

	lava_env
	manage migrate --noinput >"$STATE/log/migrate.log" 2>&1 || die "migrate failed: $(tail -3 "$STATE/log/migrate.log")"
	manage users add --staff --superuser --passwd "$(python3 -c 'import secrets; print(secrets.token_hex(16))')" admin >/dev/null
	local token
	token=$(python3 -c 'import secrets; print(secrets.token_hex(24))')
	manage tokens add --user admin --secret "$token" >/dev/null

	start gunicorn gunicorn3 lava_server.wsgi --bind "127.0.0.1:$PORT" --workers 2 --worker-class eventlet \
		--timeout 60 --log-level warning
	start scheduler lava-server manage lava-scheduler --level INFO --log-file "$STATE/log/scheduler-lava.log" \
		--event-url "tcp://127.0.0.1:$ZPORT"
	start publisher lava-server manage lava-publisher --host 127.0.0.1 --port "$PUBPORT" --level INFO \
		--log-file "$STATE/log/publisher-lava.log"
	wait_http "http://127.0.0.1:$PORT/api/v0.2/system/version/" || die "lava-server did not answer on port $PORT ($STATE/log/gunicorn.log)"

	# the device types: templates from farm/lava (twin, zcu102, xavier-agx, odroid-xu4)
	cp "$SRC"/farm/lava/device-types/*.jinja2 "$STATE/device-types/"
	cp "$SRC"/farm/lava/health-checks/*.yaml "$STATE/health-checks/"
	for f in "$SRC"/farm/lava/device-types/*.jinja2; do
		case "$f" in */powerdag-ssh.jinja2) continue ;; esac # the template the others extend
		manage device-types add "$(basename "$f" .jinja2)" >/dev/null
	done
	local wtoken
	wtoken=$(manage workers add --description "powerdag local farm" "$WORKER" | sed -n 's/^Token: //p')
	[ -n "$wtoken" ] || die "no worker token"
	printf '%s\n' "$wtoken" >"$STATE/worker_token"
	chmod 600 "$STATE/worker_token"

	# the boards: one twin each, its own netns and /30, registered with its key and host key
	printf '%s\n' "$token" >"$STATE/token"
	chmod 600 "$STATE/token"
	{
		echo "# written by scripts/farm-local.sh: the lab file of powerdag farm (docs/FARM.md)"
		echo "lava:"
		echo "  url: http://127.0.0.1:$PORT/"
		echo "  user: admin"
		echo "  token_file: $STATE/token"
		echo "devices:"
	} >"$STATE/lab.yaml"
	for i in $(seq 1 "$BOARDS"); do
		local name=twin-$i tdir=$STATE/twin-$i own=() cpus=
		if [ -n "$CPUS_EACH" ]; then # host CPUs (i-1)K .. iK-1
			cpus=$(((i - 1) * CPUS_EACH))
			[ "$CPUS_EACH" -gt 1 ] && cpus=$cpus-$((i * CPUS_EACH - 1))
			own=(--host-cpus "$cpus")
		fi
		"$PDBIN" twin up --state "$tdir" --netns "pdfarm-$i" --subnet "10.214.77.$((4 * (i - 1)))" ${own[@]+"${own[@]}"} \
			>"$STATE/log/twin-$i.log" 2>&1 || {
			# the log goes with the state on tear-down: say its end here
			sed 's/^/  twin-'"$i"': /' "$STATE/log/twin-$i.log" | tail -20 >&2
			die "twin $i did not come up"
		}
		echo "$tdir" >>"$STATE/twins"
		local host=10.214.77.$((4 * (i - 1) + 2))
		cat >"$STATE/devices/$name.jinja2" <<EOF
{% extends 'twin.jinja2' %}
{% set ssh_host = '$host' %}
{% set ssh_port = 22 %}
{% set ssh_user = 'root' %}
{% set ssh_identity_file = '$tdir/id_ed25519' %}
{% set ssh_known_hosts = '$tdir/known_hosts' %}
EOF
		# a twin shares this machine's CPUs with every other twin: runs on twins of one host are
		# serialised by powerdag farm through this group (docs/FARM.md, concurrency); with CPUs of
		# its own it is a group of its own, deploys in its own cpuset directory (twin.json "cgroup")
		# and runs the type's plans (planned on host CPUs 0..K-1) on its CPUs
		cat >>"$STATE/lab.yaml" <<EOF
  - name: $name
    device_type: twin
    board: ssh://root@$host:22
    identity: $tdir/id_ed25519
    known_hosts: $tdir/known_hosts
EOF
		if [ -n "$CPUS_EACH" ]; then
			local cg
			cg=$(jq -r .cgroup "$tdir/twin.json")
			printf '    cpu_group: %s\n    cgroup: %s\n    cpu_map: "%s"\n' "$name" "$cg" "$cpus" >>"$STATE/lab.yaml"
		else
			printf '    cpu_group: host-%s\n' "$(hostname -s)" >>"$STATE/lab.yaml"
		fi
		manage devices add --device-type twin --worker "$WORKER" "$name" >/dev/null
		# Unknown health makes the scheduler run the device type's health check before any job
		manage devices update --health UNKNOWN "$name" >/dev/null
	done

	# One platform file for the device type: a plan is deployed to whichever twin LAVA hands out, so
	# its power sensors name the board-local iiod (each twin's iiod serves its own netns, 127.0.0.1
	# included) instead of twin-1's address
	sed "s/'ip:10\.214\.77\.2'/'ip:127.0.0.1'/" "$STATE/twin-1/platform.yaml" >"$STATE/platform-twin.yaml"
	"$PDBIN" validate "$STATE/platform-twin.yaml" >/dev/null || die "platform-twin.yaml does not validate"
	start worker lava-worker --name "$WORKER" --url "http://127.0.0.1:$PORT/" --token-file "$STATE/worker_token" \
		--worker-dir "$STATE/worker" --level INFO --log-file "$STATE/log/worker-lava.log" \
		--ws-url "http://127.0.0.1:$PUBPORT/ws/" --ping-interval 2
	{
		echo "LAVA_URL=http://127.0.0.1:$PORT/"
		echo "LAVA_USER=admin"
		echo "LAVA_TOKEN=$token"
		echo "LAVA_URI=http://admin:$token@127.0.0.1:$PORT/RPC2"
	} >"$STATE/farm.env"
	chmod 600 "$STATE/farm.env"
	# every device is healthy once its health check (farm/lava/health-checks/twin.yaml) passed
	local ok=0
	for _ in $(seq 1 300); do
		ok=$(lavacli --uri "http://admin:$token@127.0.0.1:$PORT/RPC2" devices list --yaml 2>/dev/null |
			grep -c "health: Good" || true)
		[ "$ok" -ge "$BOARDS" ] && break
		sleep 1
	done
	[ "$ok" -ge "$BOARDS" ] || die "only $ok of $BOARDS devices passed their health check ($STATE/log/worker-lava.log)"
	trap - ERR
	TEARDOWN=
	local t1
	t1=$(date +%s.%N)
	printf 'farm up: %s boards, %s, set-up %.1f s\n' "$BOARDS" "http://127.0.0.1:$PORT/" "$(echo "$t1 - $t0" | bc)"
}

stop_pid() {
	local f=$1 pid
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		# setsid made each service its own process group: its children (gunicorn's workers, lava-run)
		# go with it
		kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

# Every process with a file open under STATE: the worker starts each job's lava-run in a session of
# its own (its title then reads "lava-run [job: N]", with no path in it), so stopping the worker's
# process group leaves the jobs that were running; their stdout is in STATE/worker/tmp/N.
kill_holders() {
	local p pid
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		[ "$pid" = $$ ] && continue
		ls -l "$p/fd" 2>/dev/null | grep -qF -- " -> $STATE/" && kill -KILL "$pid" 2>/dev/null
	done
	return 0
}

down() {
	[ "$(id -u)" -eq 0 ] || die "needs root"
	[ -d "$STATE" ] || return 0
	# every step is tried whatever the previous one did: down must also clean a half-started farm
	set +e
	for s in worker scheduler publisher gunicorn; do stop_pid "$STATE/pids/$s"; done
	kill_holders
	if [ -f "$STATE/twins" ]; then
		while read -r t; do "$PDBIN" twin down --state "$t" >/dev/null 2>&1; done <"$STATE/twins"
	fi
	# LAVA's test overlays: a job unpacks /lava-ID on the board's root, which for a twin is this
	# machine's; and the hold markers of powerdag's jobs (farm/job.c)
	# (the job ids: LAVA keeps each job's log in media/job-output/YYYY/MM/DD/ID)
	if [ -d "$STATE/media/job-output" ]; then
		find "$STATE/media/job-output" -mindepth 4 -maxdepth 4 -type d | while read -r d; do
			id=${d##*/}
			case "$id" in '' | *[!0-9]*) continue ;; esac
			rm -rf "/lava-$id" /lava-"$id"-overlay-*.tar.gz
		done
	fi
	if [ -f "$STATE/pg/postmaster.pid" ]; then
		runuser -u postgres -- "$PGBIN/pg_ctl" -D "$STATE/pg" -m fast -w stop >/dev/null 2>&1
	fi
	rm -rf /run/powerdag-hold
	stop_pid "$STATE/pids/postgres"
	rm -rf "$STATE"
	set -e
	[ ! -e "$STATE" ]
}

status() {
	[ -f "$STATE/farm.env" ] || die "no farm in $STATE"
	. "$STATE/farm.env"
	lavacli --uri "$LAVA_URI" devices list
}

case "$ACTION" in
up) up ;;
down) down ;;
status) status ;;
*) echo "usage: farm-local.sh up|down|status [--boards N] [--cpus-each K] [--state DIR] [--port P] [--powerdag BIN]" >&2; exit 2 ;;
esac
