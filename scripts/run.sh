#!/usr/bin/env bash
# `make run`: the whole service on this machine, in the foreground. Ctrl-C (or SIGTERM) stops
# everything this script started. State lives in .data/ and is reused by the next run.
#
#   PostgreSQL  DATABASE_URL if it answers, else the local Debian cluster, else a private cluster
#               in .data/pg; role and database "valuecase" are created for the default URL.
#   Temporal    TEMPORAL_ADDRESS if the caller set it, else `bin/temporal server start-dev`
#               (SQLite file .data/temporal.db, UI on :8233).
#   Redis       REDIS_URL if the caller set it, else a private `redis-server` on a free port when
#               one is installed (rate limits shared as in production), else none (in process).
#   valuecase   migrate, then `worker` and `api` as separate processes (logs in .data/logs/).
#
# Every variable set in the caller's environment reaches the children unchanged.
# shellcheck disable=SC2317 # functions run from traps look unreachable to shellcheck
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$VC_ROOT"

# Remember whether the caller chose a Temporal server before defaults are filled in.
caller_temporal_address="${TEMPORAL_ADDRESS:-}"

# The binary's own defaults, exported so this script and the children agree on them.
export HTTP_ADDR="${HTTP_ADDR:-127.0.0.1:8080}"
export DATABASE_URL="${DATABASE_URL:-$VC_DEFAULT_DATABASE_URL}"
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-127.0.0.1:7233}"
export TEMPORAL_NAMESPACE="${TEMPORAL_NAMESPACE:-default}"
# The children run in the repository root, so relative defaults (.data/keys) resolve the same
# for them as for a `bin/valuecase token` typed there.

logs="$VC_DATA/logs"
tenant_file="$VC_DATA/demo-tenant-id"
token_file="$VC_DATA/demo-token"
mkdir -p "$logs"

# Children started by this script, stopped in reverse order of start.
child_names=()
child_pids=()
cleaned_up=0

# start_child NAME CMD...: start CMD in the background with its output in .data/logs/NAME.log,
# rotated by scripts/caplog.sh (NAME.log.1 ... .3, 20 MiB each: RUN_LOG_MAX_BYTES, RUN_LOG_KEEP),
# so a load test cannot fill the disk; the API's access log stays at info.
# Each child gets its own session, so a terminal Ctrl-C reaches only this script, which then
# stops the children in order (api before worker before Temporal).
start_child() {
	local name="$1"
	shift
	printf '\n--- %s: %s\n' "$(date -u +%FT%TZ)" "$*" >>"$logs/$name.log"
	setsid "$@" > >(exec setsid scripts/caplog.sh "$logs/$name.log") 2>&1 </dev/null &
	child_names+=("$name")
	child_pids+=("$!")
}

stop_child() {
	local name="$1" pid="$2" i
	kill -0 "$pid" 2>/dev/null || return 0
	log "stopping $name (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 40; i++)); do # 20 s to shut down cleanly
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		warn "$name did not stop within 20s; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
}

cleanup() {
	[[ $cleaned_up -eq 0 ]] || return 0
	cleaned_up=1
	local i
	for ((i = ${#child_pids[@]} - 1; i >= 0; i--)); do
		stop_child "${child_names[i]}" "${child_pids[i]}"
	done
	if [[ $VC_PRIVATE_PG_STARTED -eq 1 ]]; then
		stop_private_postgres
	fi
}

on_signal() {
	printf '\n' >&2
	log "received SIG$1; shutting down"
	cleanup
	case "$1" in INT) exit 130 ;; HUP) exit 129 ;; *) exit 143 ;; esac
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP
trap cleanup EXIT

# show_log NAME: the end of a child's log, after it failed.
show_log() {
	printf -- '--- last lines of %s ---\n' "$logs/$1.log" >&2
	tail -n 30 "$logs/$1.log" >&2 || true
}

# host_port_url ADDR: http://HOST:PORT for a listen address (0.0.0.0, :: or "" become 127.0.0.1).
host_port_url() {
	local addr="$1" host port
	host="${addr%:*}"
	port="${addr##*:}"
	case "$host" in "" | 0.0.0.0 | "[::]" | "::") host=127.0.0.1 ;; esac
	printf 'http://%s:%s' "$host" "$port"
}

api_url="$(host_port_url "$HTTP_ADDR")"
api_host_port="${api_url#http://}"
if port_open "${api_host_port%:*}" "${api_host_port##*:}"; then
	die "something already listens on $HTTP_ADDR (another make run?); stop it or set HTTP_ADDR"
fi

# --- PostgreSQL ------------------------------------------------------------------------------
ensure_postgres "$DATABASE_URL"
ensure_app_role_and_db

# --- Build -----------------------------------------------------------------------------------
log "building bin/valuecase"
go build -o bin/valuecase ./cmd/valuecase

# --- Temporal --------------------------------------------------------------------------------
temporal_ui=""
if [[ -n $caller_temporal_address ]]; then
	log "using Temporal at $TEMPORAL_ADDRESS (TEMPORAL_ADDRESS)"
	if ! wait_for_port "${TEMPORAL_ADDRESS%:*}" "${TEMPORAL_ADDRESS##*:}" 5; then
		warn "nothing answers at TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS; the API still serves, workflows start once Temporal is up"
	fi
elif port_open 127.0.0.1 7233; then
	log "a Temporal server already listens on 127.0.0.1:7233; using it"
	temporal_ui="http://127.0.0.1:8233"
else
	ensure_temporal_cli
	log "starting the Temporal dev server (state in .data/temporal.db, log in .data/logs/temporal.log)"
	temporal_args=(server start-dev --ip 127.0.0.1 --port 7233 --ui-port 8233
		--db-filename "$VC_DATA/temporal.db" --namespace default --log-level warn "${VC_TEMPORAL_DEV_FLAGS[@]}")
	if [[ $TEMPORAL_NAMESPACE != default ]]; then
		temporal_args+=(--namespace "$TEMPORAL_NAMESPACE")
	fi
	start_child temporal bin/temporal "${temporal_args[@]}"
	ready=0
	for ((i = 0; i < 120; i++)); do # 60 s: port open and the namespace registered
		if bin/temporal operator namespace describe --address 127.0.0.1:7233 \
			--namespace "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; then
			ready=1
			break
		fi
		kill -0 "${child_pids[-1]}" 2>/dev/null || break
		sleep 0.5
	done
	if [[ $ready -ne 1 ]]; then
		show_log temporal
		die "the Temporal dev server did not become ready"
	fi
	temporal_ui="http://127.0.0.1:8233"
fi

# --- Redis (optional) ------------------------------------------------------------------------
redis_note="in process (no redis-server installed)"
if [[ -n ${REDIS_URL:-} ]]; then
	log "using Redis at $REDIS_URL (REDIS_URL): rate limits shared across API instances"
	redis_note="$REDIS_URL (REDIS_URL)"
elif have redis-server; then
	redis_port=""
	for ((i = 0; i < 20; i++)); do # a free port above the usual ones
		p=$((20000 + RANDOM % 20000))
		if ! port_open 127.0.0.1 "$p"; then
			redis_port=$p
			break
		fi
	done
	[[ -n $redis_port ]] || die "no free port for redis-server"
	log "starting redis-server on 127.0.0.1:$redis_port (no persistence, log in .data/logs/redis.log)"
	start_child redis redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$VC_DATA"
	if ! wait_for_port 127.0.0.1 "$redis_port" 10; then
		show_log redis
		die "redis-server did not start"
	fi
	export REDIS_URL="redis://127.0.0.1:$redis_port/0"
	redis_note="$REDIS_URL (local redis-server)"
else
	log "redis-server is not installed: rate limits are counted in process (apt-get install redis-server to share them)"
fi

# --- valuecase -------------------------------------------------------------------------------
log "running migrations"
bin/valuecase migrate || die "'valuecase migrate' failed"

log "starting the worker and the API (logs in .data/logs/worker.log and .data/logs/api.log)"
start_child worker bin/valuecase worker
start_child api bin/valuecase api
api_pid="${child_pids[-1]}"

ready=0
for ((i = 0; i < 60; i++)); do # 30 s
	if http_ok "$api_url/health"; then
		ready=1
		break
	fi
	kill -0 "$api_pid" 2>/dev/null || break
	sleep 0.5
done
if [[ $ready -ne 1 ]]; then
	show_log api
	die "the API did not answer $api_url/health"
fi

# --- Demo tenant and token -------------------------------------------------------------------
tenant_id=""
if [[ -s $tenant_file ]]; then
	tenant_id="$(tr -d '[:space:]' <"$tenant_file")"
	tenants="$(bin/valuecase tenant list)" || die "'valuecase tenant list' failed"
	if [[ $tenants != *"$tenant_id"* ]]; then
		warn "the demo tenant $tenant_id in $tenant_file is not in the database; creating a new one"
		tenant_id=""
	fi
fi
if [[ -z $tenant_id ]]; then
	created="$(bin/valuecase tenant create --name "Demo Org" --plan enterprise)" ||
		die "'valuecase tenant create' failed"
	tenant_id="$(sed -n 's/.*"id"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' <<<"$created")"
	[[ -n $tenant_id ]] || die "unexpected output from 'valuecase tenant create': $created"
	printf '%s\n' "$tenant_id" >"$tenant_file"
	log "created the demo tenant $tenant_id (saved in .data/demo-tenant-id)"
fi
token="$(bin/valuecase token --tenant "$tenant_id" --ttl 24h)" || die "'valuecase token' failed"
(
	umask 077
	printf '%s\n' "$token" >"$token_file"
)

# The demo portfolio goes in through the API itself, once (skipped when the tenant has initiatives).
bin/valuecase demo seed --url "$api_url" --tenant "$tenant_id" --token-file "$token_file" ||
	warn "seeding the demo portfolio failed (see above); the API still runs"

cat <<EOF

  Valuecase is running.

  API          $api_url
  API docs     $api_url/docs
  Temporal UI  ${temporal_ui:-(external Temporal at $TEMPORAL_ADDRESS)}
  Rate limits  $redis_note
  Logs         .data/logs/{api,worker${temporal_ui:+,temporal}}.log
  Demo tenant  $tenant_id  (token valid 24 h, also in .data/demo-token)

  curl -H "Authorization: Bearer $token" -H "X-Tenant-ID: $tenant_id" $api_url/v1/initiatives

  Press Ctrl-C to stop.

EOF

# --- Wait ------------------------------------------------------------------------------------
# Until a signal arrives (the trap stops everything) or a child exits on its own.
rc=0
wait -n "${child_pids[@]}" || rc=$?
for ((i = 0; i < ${#child_pids[@]}; i++)); do
	if ! kill -0 "${child_pids[i]}" 2>/dev/null; then
		warn "${child_names[i]} exited (status $rc); stopping the rest"
		show_log "${child_names[i]}"
		break
	fi
done
exit 1
