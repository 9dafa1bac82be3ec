#!/usr/bin/env bash
# Two `zeus serve` replicas on one PostgreSQL database under the load of 32 client threads
# (test/load/serve_replicas_lib.sh says what is checked). Needs the ctest fixture "pg" (a
# private PostgreSQL cluster); serve_replicas_mariadb.sh does the same on MariaDB.
set -euo pipefail
dir=$(mktemp -d)
source "${ZEUS_SOURCE_DIR:?}/test/load/serve_lib.sh"
source "$ZEUS_SOURCE_DIR/test/load/serve_replicas_lib.sh"
trap 'stop_servers; drop_pg_databases; rm -rf "$dir"' EXIT

replicas_run "$(pg_database "zeus_e2e_replicas_$$")"
echo "PASS"
