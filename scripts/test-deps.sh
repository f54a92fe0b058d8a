#!/usr/bin/env bash
# What `make test` needs before `go test`: a PostgreSQL server where the tests can connect as a
# superuser (TEST_DATABASE_ADMIN_URL; they create one database per test) and bin/temporal (the
# integration tests start its dev server). Idempotent; quick when everything is there.
set -euo pipefail
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$VC_ROOT"

: "${TEST_DATABASE_ADMIN_URL:=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable}"

ensure_postgres "$TEST_DATABASE_ADMIN_URL"

psql="$(pg_bin psql)" || die "psql not found; install it with: apt-get install postgresql-client"
super="$("$psql" -X -At -d "$TEST_DATABASE_ADMIN_URL" -c 'SELECT rolsuper FROM pg_roles WHERE rolname = current_user' 2>&1)" ||
	die "cannot connect with TEST_DATABASE_ADMIN_URL=$TEST_DATABASE_ADMIN_URL: $super"
[[ $super == t ]] || die "TEST_DATABASE_ADMIN_URL must name a superuser (the tests create databases and roles)"

ensure_temporal_cli
