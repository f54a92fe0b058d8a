#!/usr/bin/env bash
# `make bench`: load the real API and run pgbench on the same SQL in the same run, and print
# both with their ratios (cmd/benchmark; results also in .data/bench/results.json).
#
#   PostgreSQL  the local server of the default DATABASE_URL (started as for make run), with a
#               fresh database "valuecase_bench" owned by role "valuecase", dropped and recreated
#               on every run; autovacuum on for the run (as in production) if the server has it off
#   API         bin/valuecase api on a free 127.0.0.1 port, LOG_LEVEL=warn (no access log), its
#               own keys in .data/bench-keys, TEMPORAL_ADDRESS a port nothing listens on (CRUD
#               does not need Temporal; /health says "degraded"); stopped on exit; its pid goes
#               to bin/benchmark, which prints its peak RSS (and the workers') by suite
#   Temporal    for the export, sync, fairness, workflows and scaling suites (BENCH_SUITES with one of them,
#               or all): a dev server (bin/temporal, in memory, a free port); each suite starts its
#               own worker against it; with the workflows suite the API's TEMPORAL_ADDRESS is it too
#
#   BENCH_DURATION     measured time of each duration-based run, per side, split over the rounds
#                      in whole seconds (default 10s)
#   BENCH_ROUNDS       rounds per run, alternating which side goes first (default 4)
#   BENCH_CONCURRENCY  HTTP workers = pgbench clients (default 8)
#   BENCH_CREATES      initiatives created per side and round by the POST run, each round on fresh
#                      tenants (default 950; a tenant holds at most 1000)
#   BENCH_WARMUP       first requests/transactions per client not measured (default 3)
#   BENCH_SUITES       suites to run (default: all; see bin/benchmark list)
#   BENCH_DB           the database to drop and recreate (default valuecase_bench)
#   BENCH_EXPORTS      exports per format, side and round of the export suite (default 3)
#   BENCH_SYNC_RECORDS, BENCH_SYNC_PAGE_SIZE  the sync suite's fake feed (default 10000 records,
#                      pages of 200)
#   BENCH_SCALING_PARTS  the scaling suite's parts (default analytics,bulk,sync)
#   BENCH_POOL_MAX_CONNS  the API's pool size (pool_max_conns; default 2 per CPU: see below)
#   BENCH_API_GOMAXPROCS  the API's GOMAXPROCS (default half the CPUs, at least 1: see below)
#   BENCH_API_GOMEMLIMIT  the API's GOMEMLIMIT, Go's soft memory limit (default 140MiB; "off": none)
#   BENCH_WORKER_GOMEMLIMIT  the same for the workers the suites start (default 140MiB; "off": none)
#   BENCH_AUTOVACUUM   on (default): autovacuum on for the run, as in production; server: the
#                      server's own setting (to compare)
#   BENCH_SLOW_STATEMENT  statements of the run slower than this (default 3s; "off": none) are
#                      logged by PostgreSQL with their plans (auto_explain, trigger statements
#                      included) and copied to .data/bench/slow-statements.log at the end
#   BENCH_CPU_IDLE     poll (default): idle CPUs poll instead of halting for the run (a PM QoS
#                      latency of 0 held on /dev/cpu_dma_latency, as tuned's latency-performance
#                      profile does; root only, and only where a cpuidle driver has a polling
#                      state, else as booted); booted: the kernel's own idle states (to compare)
#
# The API, PostgreSQL and the load share one machine here, so the API runs as configured for a
# host it shares with its database (docs/configuration.md, "Sizing"): Go gets half the cores (GOMAXPROCS) and
# the pool two connections per database core. With the service's defaults for a host of its
# own (every core, 16 connections) on 2 cores, Go's idle threads spinning for work and 8
# backends at once contend with PostgreSQL for the CPUs: the GET list's p99 was 1.7-2.1x
# pgbench's instead of 1.1-1.4x (docs/benchmarks.md).
# shellcheck disable=SC2317 # functions run from traps look unreachable to shellcheck
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$VC_ROOT"

export BENCH_DURATION="${BENCH_DURATION:-10s}"
export BENCH_CONCURRENCY="${BENCH_CONCURRENCY:-8}"
suites="${BENCH_SUITES:-all}"
bench_db="${BENCH_DB:-valuecase_bench}" # another name lets two checkouts bench side by side
[[ $bench_db =~ ^[a-z_][a-z0-9_]*$ ]] || die "BENCH_DB must be a plain lower-case database name"
bench_dir="$VC_DATA/bench"
keys_dir="$VC_DATA/bench-keys"
api_log="$bench_dir/api.log"

# --- Tools -------------------------------------------------------------------------------------
pgbench="$(pg_bin pgbench)" || die "pgbench not found; install it with: apt-get install postgresql-contrib (Debian ships pgbench with the PostgreSQL server package)"
"$pgbench" --version >/dev/null 2>&1 ||
	die "$pgbench does not run (a pg_wrapper without a server package?); install it with: apt-get install postgresql-contrib"
psql="$(pg_bin psql)" || die "psql not found; install it with: apt-get install postgresql-client"
have curl || die "curl not found; install it with: apt-get install curl"

# --- PostgreSQL: the default local server, a fresh database -------------------------------------
if [[ -n ${DATABASE_URL:-} && $DATABASE_URL != "$VC_DEFAULT_DATABASE_URL" ]]; then
	log "make bench uses its own database on the default local server; DATABASE_URL ($DATABASE_URL) is not used"
fi
export DATABASE_URL="$VC_DEFAULT_DATABASE_URL"
ensure_postgres "$DATABASE_URL"
ensure_app_role_and_db # the role "valuecase" (and its usual database)
pg_url_parse "$DATABASE_URL"
# pg_admin runs psql as the superuser on the server's postgres database.
pg_admin() { "$psql" -X -q -At -h "$PGU_HOST" -p "$PGU_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }
log "creating a fresh database $bench_db"
pg_admin >/dev/null <<SQL ||
DROP DATABASE IF EXISTS $bench_db WITH (FORCE);
CREATE DATABASE $bench_db OWNER valuecase ENCODING 'UTF8' TEMPLATE template0;
SQL
	die "could not recreate the database $bench_db as superuser 'postgres' at $PGU_HOST:$PGU_PORT"
export DATABASE_URL="postgres://$PGU_USER:$PGU_PASS@$PGU_HOST:$PGU_PORT/$bench_db?sslmode=disable"

# PostgreSQL with autovacuum, as production runs it: its ANALYZE keeps the plans fitting tables that
# grow a thousandfold during the suites (without it a 100,000-record sync cost 2.3x per record what
# a 10,000-record one did; with it 1.0x: docs/benchmarks.md, Scaling). A server set up for the
# tests may turn it off (this machine's conf.d does); the bench turns it on for its run only.
autovacuum_restore=""
restore_autovacuum() {
	[[ -n $autovacuum_restore ]] || return 0
	pg_admin -c "ALTER SYSTEM $autovacuum_restore" -c "SELECT pg_reload_conf()" >/dev/null || true
	autovacuum_restore=""
}
bench_autovacuum="${BENCH_AUTOVACUUM:-on}"
[[ $bench_autovacuum == on || $bench_autovacuum == server ]] || die "BENCH_AUTOVACUUM must be on or server"
if [[ $bench_autovacuum == on && "$(pg_admin -c 'SHOW autovacuum')" == off ]]; then
	# What ALTER SYSTEM had set before, if anything, is put back on exit.
	trap restore_autovacuum EXIT # until the API's trap below, which restores it too
	autovacuum_restore="$(pg_admin -c "SELECT coalesce((SELECT 'SET autovacuum = ' || quote_literal(setting) FROM pg_file_settings WHERE name = 'autovacuum' AND sourcefile LIKE '%postgresql.auto.conf' ORDER BY seqno DESC LIMIT 1), 'RESET autovacuum')")"
	pg_admin -c "ALTER SYSTEM SET autovacuum = on" -c "SELECT pg_reload_conf()" >/dev/null ||
		die "could not turn autovacuum on for the run (ALTER SYSTEM as superuser 'postgres')"
	log "autovacuum is off on this server: on for the run, then ALTER SYSTEM $autovacuum_restore"
fi

# server_log_file: the file the server writes its log to (its collector's current file, else the
# postmaster's stderr), if this process may read it.
server_log_file() {
	local f dir pid
	f="$(pg_admin -c 'SELECT pg_current_logfile()')" || return 1
	dir="$(pg_admin -c 'SHOW data_directory')" || return 1
	if [[ -n $f ]]; then
		[[ $f == /* ]] || f="$dir/$f"
	else
		pid="$(head -n 1 "$dir/postmaster.pid" 2>/dev/null)" || return 1
		f="$(readlink "/proc/$pid/fd/2" 2>/dev/null)" || return 1
	fi
	[[ -f $f && -r $f ]] || return 1
	printf '%s\n' "$f"
}

# report_slow_statements: copy the plans auto_explain logged during the run to
# slow-statements.log and name the slowest.
report_slow_statements() {
	[[ -n $server_log ]] || return 0
	local out="$bench_dir/slow-statements.log" n
	mkdir -p "$bench_dir"
	# A plan is its "duration: ... plan:" line and the tab-indented lines after it.
	tail -c "+$((server_log_offset + 1))" "$server_log" |
		awk '/ duration: [0-9.]+ ms  plan:/ { keep = 1; print; next } /^\t/ { if (keep) print; next } { keep = 0 }' >"$out" || true
	server_log=""
	# Each plan as "ms<TAB>the start of its query", slowest first.
	local slowest
	slowest="$(awk '/ duration: [0-9.]+ ms  plan:/ { if (ms != "") print ms "\t" q; match($0, /duration: [0-9.]+/); ms = substr($0, RSTART + 10, RLENGTH - 10); q = ""; next }
		/^\tQuery Text: / && q == "" { q = substr($0, 14, 120) }
		END { if (ms != "") print ms "\t" q }' "$out" | sort -rn)" || true
	if [[ -z $slowest ]]; then
		log "no statement took over $slow_statement (auto_explain)"
		return 0
	fi
	n="$(wc -l <<<"$slowest")"
	log "$n statements took over $slow_statement; their plans are in $out; the slowest:"
	head -n 5 <<<"$slowest" | sed 's/^/      /; s/\t/ ms  /' >&2
}

# A slow statement leaves its plan: a run that slows down once (a plan gone wrong on a table that
# grew) cannot be run again to look. auto_explain is set on the bench database only, which the next
# run drops, so nothing on the server needs putting back.
slow_statement="${BENCH_SLOW_STATEMENT:-3s}"
[[ $slow_statement =~ ^[1-9][0-9]*(ms|s)$ || $slow_statement == off ]] || die "BENCH_SLOW_STATEMENT must be a duration such as 3s or 500ms, or off"
server_log=""
server_log_offset=0
if [[ $slow_statement != off ]]; then
	server_log="$(server_log_file)" || true
	if [[ -z $server_log ]]; then
		warn "PostgreSQL's log file is not readable here: statements over $slow_statement are in the server's log only"
	else
		server_log_offset="$(stat -c %s "$server_log")"
	fi
	pg_admin >/dev/null <<SQL || die "could not set auto_explain on $bench_db (is postgresql-contrib installed?)"
ALTER DATABASE $bench_db SET session_preload_libraries = 'auto_explain';
ALTER DATABASE $bench_db SET auto_explain.log_min_duration = '$slow_statement';
ALTER DATABASE $bench_db SET auto_explain.log_nested_statements = on;
SQL
fi

# The bulk suite's baseline COPYs into a table with row security, which only a superuser may.
export BENCH_COPY_DATABASE_URL="${BENCH_COPY_DATABASE_URL:-postgres://postgres@$PGU_HOST:$PGU_PORT/$bench_db?sslmode=disable}"

# --- Build -------------------------------------------------------------------------------------
log "building bin/valuecase and bin/benchmark"
go build -o bin/valuecase ./cmd/valuecase
go build -o bin/benchmark ./cmd/benchmark

log "running migrations"
bin/valuecase migrate || die "'valuecase migrate' failed"

# --- API ---------------------------------------------------------------------------------------
mkdir -p "$bench_dir"
rm -f "$bench_dir"/worker-*.log # the workers of an earlier run
api_port="$(bin/benchmark free-port)"
temporal_port="$(bin/benchmark free-port)" # nothing listens there
api_url="http://127.0.0.1:$api_port"
api_pid=""
temporal_pid=""
idle_holder_pid=""

# stop_pid PID: TERM, up to 20 s, then KILL.
stop_pid() {
	local pid="$1" i
	[[ -n $pid ]] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 40; i++)); do # 20 s
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || true
}

stop_api() {
	stop_pid "$api_pid"
	api_pid=""
	stop_pid "$temporal_pid"
	temporal_pid=""
}
finish() {
	stop_api
	report_slow_statements
	restore_autovacuum
	stop_pid "$idle_holder_pid"
	idle_holder_pid=""
}
trap finish EXIT
trap 'finish; exit 130' INT
trap 'finish; exit 143' TERM

# A virtual machine's halted vCPU takes a trip through the hypervisor to wake: each hop of a
# request that finds its reader's CPU idle pays it on the writer's side. The API's requests take
# four such hops where pgbench's clients keep both CPUs busy, so as booted the short reads'
# ratios measured the hypervisor's wake-ups more than the API (docs/benchmarks.md, "Short reads").
bench_cpu_idle="${BENCH_CPU_IDLE:-poll}"
[[ $bench_cpu_idle == poll || $bench_cpu_idle == booted ]] || die "BENCH_CPU_IDLE must be poll or booted"
cpuidle_driver="$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || echo none)"
if [[ $bench_cpu_idle == poll ]]; then
	# The latency request works through a cpuidle driver, whose governor then keeps to its
	# polling state (state0, POLL). Without one the kernel halts an idle CPU whatever is asked.
	if [[ "$(cat /sys/devices/system/cpu/cpu0/cpuidle/state0/name 2>/dev/null)" != POLL ]]; then
		warn "idle CPUs cannot be held to polling here: cpuidle driver '$cpuidle_driver' has no polling state: idle CPUs halt as booted"
	elif [[ -w /dev/cpu_dma_latency ]]; then
		# The request holds while the file stays open: a process of its own keeps it, so that
		# nothing this script starts inherits it, and stops it on exit.
		(printf 0 && exec sleep infinity) >/dev/cpu_dma_latency </dev/null &
		idle_holder_pid=$!
		sleep 0.2
		if kill -0 "$idle_holder_pid" 2>/dev/null; then
			log "idle CPUs poll for the run (PM QoS CPU latency 0 on /dev/cpu_dma_latency; BENCH_CPU_IDLE=booted: as booted)"
		else # the kernel refused the request
			warn "the PM QoS request on /dev/cpu_dma_latency failed: idle CPUs as booted"
			idle_holder_pid=""
		fi
	else
		warn "cannot write /dev/cpu_dma_latency (root only): idle CPUs as booted"
	fi
fi

api_database_url="$DATABASE_URL"
idle_note="idle CPUs in the kernel's own idle states (cpuidle driver: $cpuidle_driver), not held to polling"
if [[ -n $idle_holder_pid ]]; then
	idle_note="idle CPUs poll for the run, on both sides: PM QoS CPU latency 0 held on /dev/cpu_dma_latency (BENCH_CPU_IDLE=booted: the kernel's idle states)"
fi
notes=(--note "the API runs with LOG_LEVEL=warn: access logs are off during the measurement"
	--note "$idle_note"
	--note "the API runs with OUTBOUND_ALLOW_PRIVATE_NETWORKS=true: the sync suite's fake provider listens on 127.0.0.1")
cpus="$(nproc)"
api_pool="${BENCH_POOL_MAX_CONNS:-$((2 * cpus))}"
[[ $api_pool =~ ^[1-9][0-9]*$ ]] || die "BENCH_POOL_MAX_CONNS must be a positive integer"
api_gomaxprocs="${BENCH_API_GOMAXPROCS:-$((cpus > 1 ? cpus / 2 : 1))}"
[[ $api_gomaxprocs =~ ^[1-9][0-9]*$ ]] || die "BENCH_API_GOMAXPROCS must be a positive integer"
# Go's soft memory limit: the GC collects before the heap doubles past it, so a 50 MB bulk import
# body (held for the request) does not take the API's RSS past the 200 MB goal (docs/configuration.md).
api_gomemlimit="${BENCH_API_GOMEMLIMIT:-140MiB}"
[[ $api_gomemlimit =~ ^[1-9][0-9]*(B|KiB|MiB|GiB)$ || $api_gomemlimit == off ]] || die "BENCH_API_GOMEMLIMIT must be a size such as 140MiB, or off"
worker_gomemlimit="${BENCH_WORKER_GOMEMLIMIT:-140MiB}"
[[ $worker_gomemlimit =~ ^[1-9][0-9]*(B|KiB|MiB|GiB)$ || $worker_gomemlimit == off ]] || die "BENCH_WORKER_GOMEMLIMIT must be a size such as 140MiB, or off"
export BENCH_WORKER_GOMEMLIMIT="$worker_gomemlimit" # bin/benchmark starts the workers with it
api_database_url+="&pool_max_conns=$api_pool"
notes+=(--note "PostgreSQL runs on this machine, so the API is configured as for a host it shares with its database (docs/configuration.md, Sizing): GOMAXPROCS=$api_gomaxprocs of $cpus CPUs, a pool of $api_pool connections, GOMEMLIMIT=$api_gomemlimit (BENCH_API_GOMAXPROCS, BENCH_POOL_MAX_CONNS, BENCH_API_GOMEMLIMIT); the suites' workers GOMEMLIMIT=$worker_gomemlimit (BENCH_WORKER_GOMEMLIMIT)")

# --- Temporal, for the export and sync suites (their workers are started by the suites) ---------
export_args=()
if [[ " $suites " == *" export "* || " $suites " == *" sync "* || " $suites " == *" fairness "* || " $suites " == *" workflows "* || " $suites " == *" scaling "* || " $suites " == *" all "* ]]; then
	ensure_temporal_cli
	dev_port="$(bin/benchmark free-port)"
	log "starting a Temporal dev server on 127.0.0.1:$dev_port for the export/sync/fairness/workflows/scaling suites (in memory; log: $bench_dir/temporal.log)"
	bin/temporal server start-dev --ip 127.0.0.1 --port "$dev_port" --headless --log-level warn \
		--namespace default "${VC_TEMPORAL_DEV_FLAGS[@]}" \
		>"$bench_dir/temporal.log" 2>&1 </dev/null &
	temporal_pid=$!
	wait_for_port 127.0.0.1 "$dev_port" 60 || die "the Temporal dev server did not listen on $dev_port (see $bench_dir/temporal.log)"
	export_args=(--temporal "127.0.0.1:$dev_port")
	if [[ " $suites " == *" workflows "* || " $suites " == *" all "* ]]; then
		# The workflows suite reads the runs through the API (/api/v1/agents/workflows): its
		# Temporal is this dev server. CRUD still never calls Temporal.
		temporal_port="$dev_port"
		notes+=(--note "the API's TEMPORAL_ADDRESS is the suites' dev server (the workflows suite reads visibility through the API); its CRUD does not touch Temporal")
	fi
fi

if [[ $temporal_port != "${dev_port:-}" ]]; then
	notes+=(--note "the API's TEMPORAL_ADDRESS points at an unused port: its CRUD does not touch Temporal")
fi
log "starting the API on $api_url (log: $api_log; LOG_LEVEL=warn: no access log during the measurement)"
GOMAXPROCS="$api_gomaxprocs" GOMEMLIMIT="$api_gomemlimit" DATABASE_URL="$api_database_url" HTTP_ADDR="127.0.0.1:$api_port" LOG_LEVEL=warn AUTH_SIGNING_KEYS_DIR="$keys_dir" \
	TEMPORAL_ADDRESS="127.0.0.1:$temporal_port" OUTBOUND_ALLOW_PRIVATE_NETWORKS=true \
	bin/valuecase api >"$api_log" 2>&1 </dev/null &
api_pid=$!

ready=0
for ((i = 0; i < 60; i++)); do # 30 s
	# /health answers 200 "degraded": Temporal is deliberately absent.
	if curl -fsS -o /dev/null --max-time 5 "$api_url/health" 2>/dev/null; then
		ready=1
		break
	fi
	kill -0 "$api_pid" 2>/dev/null || break
	sleep 0.5
done
if [[ $ready -ne 1 ]]; then
	tail -n 30 "$api_log" >&2 || true
	die "the API did not answer $api_url/health"
fi

# --- Measure -----------------------------------------------------------------------------------
log "benchmark: $BENCH_CONCURRENCY clients, $BENCH_DURATION per side of each duration-based run, suites: $suites"
rc=0
# shellcheck disable=SC2086 # suites is a space-separated list
bin/benchmark --api "$api_url" --api-pid "$api_pid" --keys-dir "$keys_dir" --pgbench "$pgbench" --out "$bench_dir/results.json" \
	"${notes[@]}" "${export_args[@]}" $suites || rc=$?

if ! kill -0 "$api_pid" 2>/dev/null; then
	warn "the API exited during the benchmark; see $api_log"
	rc=1
fi
if grep -q '"level":"ERROR"' "$api_log" 2>/dev/null; then
	warn "the API logged errors during the benchmark; see $api_log"
	grep '"level":"ERROR"' "$api_log" | head -n 5 >&2 || true
	rc=1
fi
exit "$rc"
