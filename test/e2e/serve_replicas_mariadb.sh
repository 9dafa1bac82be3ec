#!/usr/bin/env bash
# Two `zeus serve` replicas on one MariaDB database under the load of 32 client threads
# (test/load/serve_replicas_lib.sh says what is checked): the MySQL store's row locks keep trial
# numbers unique and every answered report stored. Needs the ctest fixture "mariadb".
set -euo pipefail
dir=$(mktemp -d)
source "${ZEUS_SOURCE_DIR:?}/test/load/serve_lib.sh"
source "$ZEUS_SOURCE_DIR/test/load/serve_replicas_lib.sh"
trap 'stop_servers; drop_mariadb_databases; rm -rf "$dir"' EXIT

replicas_run "$(mariadb_database "zeus_e2e_replicas_$$")"
echo "PASS"
