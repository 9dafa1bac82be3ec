#!/usr/bin/env bash
# A private MariaDB server for tests and benchmarks: a fresh data folder under STATE_DIR
# (mariadb-install-db), mariadbd listening only on 127.0.0.1 at a free port and on a socket in a
# private temporary folder, a database `zeus` and a user `zeus` with a random password (all
# privileges, so that tests can create a database each and end connections).
#
#   scripts/mariadb_server.sh start STATE_DIR   # prints the URL; writes STATE_DIR/{url,socket,...}
#   scripts/mariadb_server.sh createdb STATE_DIR NAME   # prints the URL of a new empty database NAME
#   scripts/mariadb_server.sh sql STATE_DIR SQL         # runs SQL as root (tab-separated output)
#   scripts/mariadb_server.sh stop STATE_DIR    # stops the server and removes its data
#
# The URL is mysql://zeus:PASSWORD@127.0.0.1:PORT/zeus (the store factory's form). As root the
# server runs as root (--user=root); it reads no option file (--no-defaults), so a system
# MariaDB's configuration plays no part. Env: MARIADB_BIN (folder of mariadbd, default
# /usr/sbin), MARIADB_FLUSH (innodb_flush_log_at_trx_commit, default 1: a commit is on disk when
# answered). Fails with a message naming the fix when MariaDB is missing.
set -euo pipefail

maria_bin=${MARIADB_BIN:-/usr/sbin}
die() { echo "mariadb_server.sh: $*" >&2; exit 1; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Runs the mariadb client as root over the server's socket.
as_root() {
  local state=$1
  shift
  mariadb --no-defaults --protocol=socket -S "$(cat "$state/socket")" -u root "$@"
}

stop_server() {
  local state=$1
  if [ -f "$state/pid" ]; then
    local pid
    pid=$(cat "$state/pid")
    if kill -0 "$pid" 2> /dev/null; then
      kill "$pid" 2> /dev/null || true
      for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2> /dev/null || true
    fi
  fi
  [ -f "$state/sockdir" ] && rm -rf "$(cat "$state/sockdir")"
  rm -rf "$state/data"
  rm -f "$state/pid" "$state/url" "$state/socket" "$state/sockdir" "$state/port"
}

start_server() {
  local state=$1
  for b in "$maria_bin/mariadbd" "$(command -v mariadb-install-db || echo /usr/bin/mariadb-install-db)" \
           "$(command -v mariadb || echo /usr/bin/mariadb)"; do
    [ -x "$b" ] || die "MariaDB is not installed ($b is missing): run 'make deps' or \
'apt-get install mariadb-server', or set MARIADB_BIN to the folder of mariadbd"
  done
  mkdir -p "$state"
  state=$(cd "$state" && pwd)
  stop_server "$state"  # a server left over by an interrupted run
  local data="$state/data" sockdir
  sockdir=$(mktemp -d "${TMPDIR:-/tmp}/zeus_maria.XXXXXX")  # short: socket paths are limited
  echo "$sockdir" > "$state/sockdir"
  echo "$sockdir/mariadbd.sock" > "$state/socket"
  local as_user=()
  [ "$(id -u)" = 0 ] && as_user=(--user=root)
  if ! mariadb-install-db --no-defaults "${as_user[@]}" --datadir="$data" \
      --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
      > "$state/install.log" 2>&1; then
    cat "$state/install.log" >&2
    die "mariadb-install-db failed (log above)"
  fi
  local port tries=0 pid
  while :; do
    tries=$((tries + 1))
    port=$((20000 + RANDOM % 40000))
    port_in_use "$port" && continue
    # setsid: its own session, so nothing that ends the caller's process group ends it.
    setsid "$maria_bin/mariadbd" --no-defaults "${as_user[@]}" --datadir="$data" \
      --bind-address=127.0.0.1 --port="$port" --socket="$sockdir/mariadbd.sock" \
      --pid-file="$sockdir/mariadbd.pid" --log-error="$state/server.log" --skip-name-resolve \
      --character-set-server=utf8mb4 --collation-server=utf8mb4_bin --max-connections=400 \
      --innodb-buffer-pool-size=64M --innodb-log-file-size=48M \
      --innodb-flush-log-at-trx-commit="${MARIADB_FLUSH:-1}" > /dev/null 2>&1 &
    pid=$!
    echo "$pid" > "$state/pid"
    local up=0
    for _ in $(seq 1 300); do
      if mariadb-admin --no-defaults --protocol=socket -S "$sockdir/mariadbd.sock" -u root \
          ping > /dev/null 2>&1; then
        up=1
        break
      fi
      kill -0 "$pid" 2> /dev/null || break
      sleep 0.1
    done
    [ $up = 1 ] && break
    kill -9 "$pid" 2> /dev/null || true
    if [ "$tries" -ge 5 ]; then
      cat "$state/server.log" >&2 || true
      die "the server did not start in 5 tries (log above)"
    fi
  done
  disown "$pid" 2> /dev/null || true
  echo "$port" > "$state/port"
  local password
  password=$(head -c 18 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 20)
  as_root "$state" -e "
    CREATE DATABASE zeus CHARACTER SET utf8mb4;
    CREATE USER 'zeus'@'127.0.0.1' IDENTIFIED BY '$password';
    CREATE USER 'zeus'@'localhost' IDENTIFIED BY '$password';
    GRANT ALL PRIVILEGES ON *.* TO 'zeus'@'127.0.0.1' WITH GRANT OPTION;
    GRANT ALL PRIVILEGES ON *.* TO 'zeus'@'localhost' WITH GRANT OPTION;" \
    || die "could not create the database and user (server log: $state/server.log)"
  local url="mysql://zeus:$password@127.0.0.1:$port/zeus"
  echo "$url" > "$state/url"
  echo "$url"
}

create_db() {
  local state=$1 name=$2
  [[ "$name" =~ ^[a-z_][a-z0-9_]*$ ]] || die "database name '$name' must match [a-z_][a-z0-9_]*"
  [ -f "$state/url" ] || die "no server in '$state': run 'mariadb_server.sh start $state' first"
  as_root "$state" -e "DROP DATABASE IF EXISTS $name; CREATE DATABASE $name CHARACTER SET utf8mb4" \
    || die "could not create database '$name'"
  local url
  url=$(cat "$state/url")
  echo "${url%/zeus}/$name"
}

run_sql() {
  local state=$1 sql=$2
  [ -f "$state/socket" ] || die "no server in '$state': run 'mariadb_server.sh start $state' first"
  as_root "$state" -B -N -e "$sql"
}

case "${1:-}" in
  start) [ $# = 2 ] || die "usage: mariadb_server.sh start STATE_DIR"; start_server "$2" ;;
  stop) [ $# = 2 ] || die "usage: mariadb_server.sh stop STATE_DIR"; stop_server "$2" ;;
  createdb) [ $# = 3 ] || die "usage: mariadb_server.sh createdb STATE_DIR NAME"; create_db "$2" "$3" ;;
  sql) [ $# = 3 ] || die "usage: mariadb_server.sh sql STATE_DIR SQL"; run_sql "$2" "$3" ;;
  *) die "usage: mariadb_server.sh start|stop STATE_DIR, createdb STATE_DIR NAME or sql STATE_DIR SQL" ;;
esac
