#!/usr/bin/env bash
# serve_crash.sh on MariaDB (ctest fixture "mariadb"): kill -9 `zeus serve` twice under the load
# of 8 client threads, restart it, and check that no answered report is lost: every write
# answered was committed.
set -euo pipefail
dir=$(mktemp -d)
source "${ZEUS_SOURCE_DIR:?}/test/load/serve_lib.sh"
source "$ZEUS_SOURCE_DIR/test/load/serve_crash_lib.sh"
trap 'stop_servers; drop_mariadb_databases; rm -rf "$dir"' EXIT

crash_run mariadb "$(mariadb_database "zeus_e2e_crash_$$")"
echo "PASS"
