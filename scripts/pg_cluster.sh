#!/usr/bin/env bash
# A private PostgreSQL 15 cluster for tests and benchmarks: trust authentication, listening only
# on 127.0.0.1 at a free port, data in a fresh temporary folder.
#
#   scripts/pg_cluster.sh start STATE_DIR   # prints the URL; writes STATE_DIR/{url,datadir}
#   scripts/pg_cluster.sh createdb STATE_DIR NAME   # prints the URL of a new empty database NAME
#   scripts/pg_cluster.sh stop STATE_DIR    # stops the cluster and removes its data
#
# initdb refuses to run as root: as root, the server runs as the `postgres` user (created by the
# Debian package) in a folder it owns. Env: PG_BIN (default /usr/lib/postgresql/15/bin),
# PG_FSYNC (on|off, default on). Fails with a message naming the fix when PostgreSQL is missing.
set -euo pipefail

pg_bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
die() { echo "pg_cluster.sh: $*" >&2; exit 1; }

# Runs a PostgreSQL binary as the cluster's owner.
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

stop_cluster() {
  local state=$1
  [ -f "$state/datadir" ] || return 0
  local data
  data=$(cat "$state/datadir")
  if [ -d "$data/pgdata" ]; then
    as_owner "$pg_bin/pg_ctl" -D "$data/pgdata" -m immediate -w stop > /dev/null 2>&1 || true
  fi
  rm -rf "$data"
  rm -f "$state/datadir" "$state/url"
}

start_cluster() {
  local state=$1
  for b in initdb pg_ctl postgres; do
    [ -x "$pg_bin/$b" ] || die "PostgreSQL 15 is not installed ($pg_bin/$b is missing): run \
'make deps' or 'apt-get install postgresql', or set PG_BIN to the folder of initdb and pg_ctl"
  done
  if [ "$(id -u)" = 0 ] && ! id postgres > /dev/null 2>&1; then
    die "running as root but there is no 'postgres' user to own the cluster (initdb refuses root); \
install the Debian package postgresql, which creates it"
  fi
  mkdir -p "$state"
  stop_cluster "$state"  # a cluster left over by an interrupted run
  local data
  data=$(mktemp -d "${TMPDIR:-/tmp}/zeus_pg.XXXXXX")
  chmod 755 "$data"
  [ "$(id -u)" = 0 ] && chown postgres: "$data"
  echo "$data" > "$state/datadir"
  if ! as_owner "$pg_bin/initdb" -D "$data/pgdata" -U zeus --auth=trust -E UTF8 --no-sync \
      --no-instructions > "$data/initdb.log" 2>&1; then
    cat "$data/initdb.log" >&2
    die "initdb failed (log above)"
  fi
  local fsync=${PG_FSYNC:-on} port url tries=0
  while :; do
    tries=$((tries + 1))
    port=$((20000 + RANDOM % 40000))
    port_in_use "$port" && continue
    if as_owner "$pg_bin/pg_ctl" -D "$data/pgdata" -l "$data/server.log" -w -t 30 \
        -o "-p $port -k $data -c listen_addresses=127.0.0.1 -c fsync=$fsync \
            -c max_connections=200 -c shared_buffers=32MB" start > /dev/null 2>&1; then
      break
    fi
    if [ "$tries" -ge 5 ]; then
      cat "$data/server.log" >&2 || true
      die "the server did not start in 5 tries (log above)"
    fi
  done
  url="postgresql://zeus@127.0.0.1:$port/postgres"
  echo "$url" > "$state/url"
  echo "$url"
}

create_db() {
  local state=$1 name=$2
  [[ "$name" =~ ^[a-z_][a-z0-9_]*$ ]] || die "database name '$name' must match [a-z_][a-z0-9_]*"
  [ -f "$state/url" ] || die "no cluster in '$state': run 'pg_cluster.sh start $state' first"
  local url
  url=$(cat "$state/url")
  PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 "$url" \
    -c "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name" \
    > /dev/null || die "could not create database '$name' on $url"
  echo "${url%/postgres}/$name"
}

case "${1:-}" in
  start) [ $# = 2 ] || die "usage: pg_cluster.sh start STATE_DIR"; start_cluster "$2" ;;
  stop) [ $# = 2 ] || die "usage: pg_cluster.sh stop STATE_DIR"; stop_cluster "$2" ;;
  createdb) [ $# = 3 ] || die "usage: pg_cluster.sh createdb STATE_DIR NAME"; create_db "$2" "$3" ;;
  *) die "usage: pg_cluster.sh start|stop STATE_DIR, or createdb STATE_DIR NAME" ;;
esac
