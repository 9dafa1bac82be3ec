#!/usr/bin/env bash
# kill -9 `zeus serve` twice while 8 client threads (zeus_load) run job lifecycles, restart it
# on the same port each time (clients resend what got no answer), then check that every answered
# report is in the database — with SQLite and with PostgreSQL (ctest fixture "pg");
# serve_crash_mariadb.sh does the same on MariaDB (test/load/serve_crash_lib.sh).
set -euo pipefail
dir=$(mktemp -d)
source "${ZEUS_SOURCE_DIR:?}/test/load/serve_lib.sh"
source "$ZEUS_SOURCE_DIR/test/load/serve_crash_lib.sh"
trap 'stop_servers; drop_pg_databases; rm -rf "$dir"' EXIT

crash_run sqlite "sqlite://$dir/crash.db"
crash_run postgres "$(pg_database "zeus_e2e_crash_$$")"
echo "PASS"
