# shellcheck shell=bash
# Shared functions for scripts/run.sh, scripts/test-deps.sh and .ci/run.
# Source it; it defines functions and the local defaults, and changes nothing else.
#
#   ensure_postgres [URL]        make the PostgreSQL server of URL (default $DATABASE_URL) answer:
#                                it does, or start the Debian cluster on its port, or a private
#                                cluster under .data/pg (initdb); else exit naming the package
#   ensure_app_role_and_db       create role + database "valuecase" for the default DATABASE_URL
#   ensure_temporal_cli          build bin/temporal when missing
#   stop_private_postgres        stop the .data/pg cluster if it runs
#   wait_for_http URL TIMEOUT    until URL answers 2xx
#   wait_for_port HOST PORT TIMEOUT

# Repository root: the directory above scripts/.
VC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VC_DATA="$VC_ROOT/.data"
VC_PG_DIR="$VC_DATA/pg"
VC_TEMPORAL_VERSION="v1.5.1"
# The Temporal dev server's settings, the same for make run, make bench and the tests
# (internal/testenv.DevServerFlags; TestDevServerFlagsMatchScripts keeps the two in step):
# - the search attributes every start sets (internal/runs);
# - the search-attribute cache on, as on a real cluster: the CLI turns it off (so attributes
#   added at run time show at once), and then each visibility call reads the cluster metadata
#   and the namespace from SQLite for every row it returns (about 150 reads for a page of 50,
#   all on the server's one SQLite connection): GET /api/v1/agents/workflows and the same
#   query sent directly both took 20-30 ms at the median with a tail past 100 ms. Ours are
#   declared here, at start, so the cache knows them from the first call;
# - 1,000 visibility calls per second for a namespace instead of the dev server's 100 (Temporal's
#   own default is 10 per frontend): past it Temporal refuses calls (the API answers 503), and
#   with the cache on, two clients listing runs in a loop pass 100;
# - WAL without an fsync per commit for the SQLite file of make run (no-ops in memory).
# shellcheck disable=SC2034 # read by the scripts that source this file
VC_TEMPORAL_DEV_FLAGS=(--search-attribute TenantId=Keyword --search-attribute ObjectType=Keyword --search-attribute ObjectId=Keyword
	--dynamic-config-value system.forceSearchAttributesCacheRefreshOnRead=false --dynamic-config-value frontend.namespaceRPS.visibility=1000
	--sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal)
# The binary's own default; used here when DATABASE_URL is unset.
VC_DEFAULT_DATABASE_URL="postgres://valuecase:valuecase@127.0.0.1:5432/valuecase?sslmode=disable"
# Set to 1 by ensure_postgres when it started the private cluster under .data/pg.
# shellcheck disable=SC2034 # read by the scripts that source this file
VC_PRIVATE_PG_STARTED=0

case ":$PATH:" in *:/usr/local/go/bin:*) ;; *) PATH="/usr/local/go/bin:$PATH" ;; esac
export PATH

log() { printf '==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() {
	printf 'ERROR: %s\n' "$*" >&2
	exit 1
}

# have CMD: whether CMD is on PATH.
have() { command -v "$1" >/dev/null 2>&1; }

# pg_url_parse URL: sets PGU_USER PGU_PASS PGU_HOST PGU_PORT PGU_DB from a postgres:// URL
# (no percent-decoding; the local defaults need none).
pg_url_parse() {
	local url="$1" rest auth hostport
	PGU_USER="" PGU_PASS="" PGU_HOST="" PGU_PORT="5432" PGU_DB=""
	[[ $url =~ ^postgres(ql)?:// ]] || die "not a postgres:// URL: $url"
	rest="${url#*://}"
	rest="${rest%%\?*}"
	if [[ $rest == */* ]]; then
		PGU_DB="${rest#*/}"
		rest="${rest%%/*}"
	fi
	if [[ $rest == *@* ]]; then
		auth="${rest%@*}"
		hostport="${rest##*@}"
		PGU_USER="${auth%%:*}"
		if [[ $auth == *:* ]]; then PGU_PASS="${auth#*:}"; fi
	else
		hostport="$rest"
	fi
	if [[ $hostport =~ ^\[([^]]*)\](:([0-9]+))?$ ]]; then # [::1]:5432
		PGU_HOST="${BASH_REMATCH[1]}"
		if [[ -n ${BASH_REMATCH[3]} ]]; then PGU_PORT="${BASH_REMATCH[3]}"; fi
	elif [[ $hostport == *:* ]]; then
		PGU_HOST="${hostport%%:*}"
		PGU_PORT="${hostport##*:}"
	else
		PGU_HOST="$hostport"
	fi
	PGU_HOST="${PGU_HOST:-127.0.0.1}"
	PGU_USER="${PGU_USER:-${USER:-postgres}}"
	PGU_DB="${PGU_DB:-$PGU_USER}"
}

is_local_host() {
	case "$1" in 127.* | localhost | ::1 | "") return 0 ;; *) return 1 ;; esac
}

# pg_bin NAME: path of a PostgreSQL server binary (PATH first, then Debian's versioned dirs).
pg_bin() {
	local name="$1" path
	if have "$name"; then
		command -v "$name"
		return 0
	fi
	# Newest major version first.
	path="$(printf '%s\n' /usr/lib/postgresql/*/bin/"$name" | sort -t/ -k5 -V -r | head -n1)"
	if [[ -x $path ]]; then
		echo "$path"
		return 0
	fi
	return 1
}

# pg_ready URL: whether the server of URL accepts connections (any answer but "no response").
pg_ready() {
	local url="$1" pgisready
	pg_url_parse "$url"
	if ! pgisready="$(pg_bin pg_isready)"; then
		port_open "$PGU_HOST" "$PGU_PORT"
	elif is_local_host "$PGU_HOST"; then
		# As postgres: the URL's own role may not exist yet (the server would log a FATAL).
		"$pgisready" -q -t 3 -h "$PGU_HOST" -p "$PGU_PORT" -U postgres -d postgres >/dev/null 2>&1
	else
		"$pgisready" -q -t 3 -d "$url" >/dev/null 2>&1
	fi
}

wait_for_pg() {
	local url="$1" timeout="$2" i
	for ((i = 0; i < timeout * 2; i++)); do
		pg_ready "$url" && return 0
		sleep 0.5
	done
	return 1
}

# pg_as_owner CMD...: run a PostgreSQL server binary as a non-root user (initdb and postgres
# refuse to run as root); the private cluster then belongs to that user.
pg_as_owner() {
	if [[ $EUID -ne 0 ]]; then
		"$@"
	elif id postgres >/dev/null 2>&1; then
		runuser -u postgres -- "$@"
	else
		die "running as root and there is no 'postgres' user to own the private cluster under $VC_PG_DIR; run as a normal user or create one (useradd --system postgres)"
	fi
}

# ensure_postgres [URL]: make sure the PostgreSQL server named by URL (default $DATABASE_URL)
# answers, trying in order: it already answers; a Debian cluster installed on that port
# (pg_ctlcluster); a private cluster under .data/pg (initdb + pg_ctl, trust auth). Exits when none
# works, naming the package to install.
ensure_postgres() {
	local url="${1:-${DATABASE_URL:-$VC_DEFAULT_DATABASE_URL}}" conf name ver port initdb pgctl
	if pg_ready "$url"; then
		return 0
	fi
	if ! is_local_host "$PGU_HOST"; then
		die "PostgreSQL at $PGU_HOST:$PGU_PORT does not answer (from $url); start it or fix the URL"
	fi

	# A cluster installed by Debian's postgresql package (/etc/postgresql/VERSION/NAME, usually
	# NAME=main) on the wanted port.
	for conf in /etc/postgresql/*/*/postgresql.conf; do
		[[ -f $conf ]] || continue
		name="$(basename "$(dirname "$conf")")"
		ver="$(basename "$(dirname "$(dirname "$conf")")")"
		port="$(sed -n 's/^[[:space:]]*port[[:space:]]*=[[:space:]]*\([0-9]\+\).*/\1/p' "$conf" | tail -n1)"
		[[ ${port:-5432} == "$PGU_PORT" ]] || continue
		log "starting the local PostgreSQL cluster $ver/$name (pg_ctlcluster $ver $name start)"
		# Exit status 2 means "already running"; readiness is checked below either way.
		pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" start >&2 || true
		if wait_for_pg "$url" 30; then
			return 0
		fi
		die "the PostgreSQL cluster $ver/$name did not come up on port $PGU_PORT; see /var/log/postgresql/postgresql-$ver-$name.log"
	done

	# A private cluster under .data/pg.
	if initdb="$(pg_bin initdb)" && pgctl="$(pg_bin pg_ctl)"; then
		start_private_postgres "$initdb" "$pgctl" "$PGU_HOST" "$PGU_PORT"
		if wait_for_pg "$url" 30; then
			return 0
		fi
		die "the private PostgreSQL cluster did not come up on port $PGU_PORT; see $VC_DATA/logs/postgres.log"
	fi

	die "no PostgreSQL server answers at $PGU_HOST:$PGU_PORT and no PostgreSQL binaries are installed; install them with: apt-get install postgresql"
}

start_private_postgres() {
	local initdb="$1" pgctl="$2" host="$3" port="$4" data="$VC_PG_DIR/data"
	mkdir -p "$VC_DATA/logs"
	if [[ ! -f $data/PG_VERSION ]]; then
		log "creating a private PostgreSQL cluster in $data (trust auth, port $port)"
		mkdir -p "$VC_PG_DIR"
		[[ $EUID -ne 0 ]] || chown postgres: "$VC_PG_DIR" 2>/dev/null || true
		pg_as_owner "$initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C >"$VC_PG_DIR/initdb.log" 2>&1 ||
			die "initdb failed; see $VC_PG_DIR/initdb.log"
		# TCP only, on the port of the URL; no Unix socket (its path would have to fit 107 bytes).
		pg_as_owner tee -a "$data/postgresql.conf" >/dev/null <<EOF

# Added by scripts/lib.sh for the private development cluster.
listen_addresses = '${host}'
port = ${port}
unix_socket_directories = ''
fsync = off
EOF
	fi
	if pg_as_owner "$pgctl" status -D "$data" >/dev/null 2>&1; then
		return 0
	fi
	log "starting the private PostgreSQL cluster in $data"
	touch "$VC_DATA/logs/postgres.log"
	[[ $EUID -ne 0 ]] || chown postgres: "$VC_DATA/logs/postgres.log" 2>/dev/null || true
	pg_as_owner "$pgctl" start -D "$data" -l "$VC_DATA/logs/postgres.log" -w -t 60 >/dev/null ||
		die "pg_ctl start failed; see $VC_DATA/logs/postgres.log"
	# shellcheck disable=SC2034 # read by the scripts that source this file
	VC_PRIVATE_PG_STARTED=1
}

# stop_private_postgres: stop the private cluster under .data/pg if it runs.
stop_private_postgres() {
	local pgctl data="$VC_PG_DIR/data"
	[[ -f $data/postmaster.pid ]] || return 0
	pgctl="$(pg_bin pg_ctl)" || return 0
	log "stopping the private PostgreSQL cluster"
	pg_as_owner "$pgctl" stop -D "$data" -m fast -w >/dev/null 2>&1 || true
}

# ensure_app_role_and_db: create (idempotently) the login role and the database named by
# DATABASE_URL, owned by that role, when DATABASE_URL is the default local one (user and
# database "valuecase" on a local host). A DATABASE_URL of the caller's own is assumed provisioned.
# The role is neither superuser nor BYPASSRLS, so row-level security applies to it.
ensure_app_role_and_db() {
	local psql pass
	pg_url_parse "${DATABASE_URL:-$VC_DEFAULT_DATABASE_URL}"
	if [[ $PGU_USER != valuecase || $PGU_DB != valuecase ]] || ! is_local_host "$PGU_HOST"; then
		log "DATABASE_URL is not the default local one; assuming its role and database exist"
		return 0
	fi
	psql="$(pg_bin psql)" || die "psql not found; install it with: apt-get install postgresql-client"
	pass="${PGU_PASS//\'/\'\'}"
	# Statement by statement (autocommit): CREATE DATABASE cannot run in a transaction block.
	if ! "$psql" -X -q -h "$PGU_HOST" -p "$PGU_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 >/dev/null <<SQL; then
SELECT format('CREATE ROLE %I LOGIN', 'valuecase')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'valuecase') \gexec
ALTER ROLE valuecase LOGIN PASSWORD '${pass}' NOSUPERUSER NOBYPASSRLS NOCREATEROLE NOCREATEDB;
SELECT 'CREATE DATABASE valuecase OWNER valuecase ENCODING ''UTF8'' TEMPLATE template0'
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'valuecase') \gexec
ALTER DATABASE valuecase OWNER TO valuecase;
SQL
		die "could not create role/database 'valuecase' as superuser 'postgres' at $PGU_HOST:$PGU_PORT (set PGPASSWORD if the server wants a password)"
	fi
}

# ensure_temporal_cli: build bin/temporal (Temporal CLI with its dev server) when missing.
ensure_temporal_cli() {
	[[ -x $VC_ROOT/bin/temporal ]] && return 0
	have go || die "go not found; install Go 1.26 into /usr/local/go"
	log "building bin/temporal (Temporal CLI $VC_TEMPORAL_VERSION; the first build takes a few minutes)"
	GOBIN="$VC_ROOT/bin" go install "github.com/temporalio/cli/cmd/temporal@$VC_TEMPORAL_VERSION" ||
		die "building the Temporal CLI failed"
}

# port_open HOST PORT: one connection attempt.
port_open() {
	# shellcheck disable=SC2016 # $1/$2 expand in the inner shell
	timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" 2>/dev/null
}

# wait_for_port HOST PORT TIMEOUT_SECONDS
wait_for_port() {
	local host="$1" port="$2" timeout="$3" i
	for ((i = 0; i < timeout * 2; i++)); do
		port_open "$host" "$port" && return 0
		sleep 0.5
	done
	return 1
}

# http_ok URL: one GET; whether it answers with a 2xx status.
http_ok() {
	have curl || die "curl not found; install it with: apt-get install curl"
	curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null
}

# wait_for_http URL TIMEOUT_SECONDS: until URL answers with a 2xx status.
wait_for_http() {
	local url="$1" timeout="$2" i
	for ((i = 0; i < timeout * 2; i++)); do
		http_ok "$url" && return 0
		sleep 0.5
	done
	return 1
}
