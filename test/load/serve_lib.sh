# Helpers for the e2e tests that run `zeus serve` under load (sourced by test/e2e/serve_*.sh).
# Needs ZEUS_BIN, ZEUS_SOURCE_DIR, ZEUS_BUILD_DIR (set by ctest) and $dir (a scratch folder).

zeus="${ZEUS_BIN:?}/zeus"
zeus_load="${ZEUS_BIN:?}/zeus_load"
checker="${ZEUS_SOURCE_DIR:?}/test/load/check_answered.py"
pg_state="${ZEUS_BUILD_DIR:?}/pg_cluster"
pg_dbs=()
mariadb_state="${ZEUS_BUILD_DIR:?}/mariadb_server"
mariadb_dbs=()

source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

# A new empty database on the test cluster (ctest fixture "pg"); prints its URL.
pg_database() {
  [ -f "$pg_state/url" ] || fail "no PostgreSQL test cluster ($pg_state/url is missing): run this \
test through ctest, whose fixture 'pg' starts one (scripts/pg_cluster.sh), or start one with \
'scripts/pg_cluster.sh start $pg_state'"
  pg_dbs+=("$1")
  bash "$ZEUS_SOURCE_DIR/scripts/pg_cluster.sh" createdb "$pg_state" "$1"
}

drop_pg_databases() {
  local db
  for db in "${pg_dbs[@]}"; do
    PGOPTIONS="-c client_min_messages=warning" psql -X -q "$(cat "$pg_state/url")" \
      -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" > /dev/null 2>&1 || true
  done
}

# A new empty database on the MariaDB test server (ctest fixture "mariadb"); prints its URL
# (mysql://zeus:PASSWORD@127.0.0.1:PORT/NAME).
mariadb_database() {
  [ -f "$mariadb_state/url" ] || fail "no MariaDB test server ($mariadb_state/url is missing): run \
this test through ctest, whose fixture 'mariadb' starts one (scripts/mariadb_server.sh), or start \
one with 'scripts/mariadb_server.sh start $mariadb_state'"
  mariadb_dbs+=("$1")
  bash "$ZEUS_SOURCE_DIR/scripts/mariadb_server.sh" createdb "$mariadb_state" "$1"
}

drop_mariadb_databases() {
  local db
  for db in "${mariadb_dbs[@]}"; do
    bash "$ZEUS_SOURCE_DIR/scripts/mariadb_server.sh" sql "$mariadb_state" \
      "DROP DATABASE IF EXISTS $db" > /dev/null 2>&1 || true
  done
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# start_server NAME DB_URL PORT [ARGS...]: runs zeus serve in the background; sets
# server_pid[NAME] and server_url[NAME] once it listens (PORT 0: any free port).
declare -A server_pid server_url
start_server() {
  local name=$1 db=$2 port=$3
  shift 3
  local out="$dir/serve_$name.out"
  "$zeus" serve --db "$db" --port "$port" "$@" >> "$out" 2>&1 &
  server_pid[$name]=$!
  local i
  for i in $(seq 1 200); do
    local url
    url=$(grep -o 'listening on http://[0-9.:]*' "$out" | tail -1 | sed 's/listening on //' || true)
    local starts
    starts=$(grep -c 'listening on' "$out" || true)
    if [ -n "$url" ] && [ "$starts" -gt "${server_starts[$name]:-0}" ]; then
      server_starts[$name]=$starts
      server_url[$name]=$url
      return 0
    fi
    kill -0 "${server_pid[$name]}" 2> /dev/null || { cat "$out" >&2; return 1; }
    sleep 0.05
  done
  cat "$out" >&2
  fail "zeus serve $name did not start listening in 10 s"
}
declare -A server_starts

stop_servers() {
  local name
  for name in "${!server_pid[@]}"; do
    kill "${server_pid[$name]}" 2> /dev/null || true
    wait "${server_pid[$name]}" 2> /dev/null || true
  done
}
