#!/usr/bin/env bash
# bench/http_bench.sh: `zeus serve` under load, one or two builds side by side on the same load
# (issue "One event-driven HTTP layer"): next+report pairs per second and p50/p99 at several
# numbers of concurrent keep-alive clients on SQLite, then a normal client's p99 and /healthz
# latency while 200 slowloris and 500 idle connections are held open.
#
#   bench/http_bench.sh [--old /path/to/older/zeus] [--clients "1 8 32 256 1000"] [--seconds 5]
#       [--pg-state DIR | --mariadb-state DIR]
# The load generator is build/release/bin/zeus_load for both builds (ZEUS_BIN: another folder of
# zeus and zeus_load); the store is a fresh SQLite file per run (or a fresh database of the
# PostgreSQL cluster whose scripts/pg_cluster.sh state folder --pg-state names, or of the MariaDB
# server whose scripts/mariadb_server.sh state folder --mariadb-state names). An older build to compare with: git worktree add /tmp/old <rev>,
# then cmake -S /tmp/old -B /tmp/old/build -DZEUS_BUILD_BENCH=OFF && cmake --build
# /tmp/old/build --target zeus_cli.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NEW=${ZEUS_BIN:-$ROOT/build/release/bin}/zeus
LOAD=${ZEUS_BIN:-$ROOT/build/release/bin}/zeus_load
OLD=""
CLIENTS="1 8 32 256 1000"
SECONDS_EACH=5
PG_STATE=""
MARIADB_STATE=""
while [ $# -gt 0 ]; do
  case $1 in
    --old) OLD=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --pg-state) PG_STATE=$2; shift 2 ;;
    --mariadb-state) MARIADB_STATE=$2; shift 2 ;;
    *) echo "usage: $0 [--old ZEUS] [--clients LIST] [--seconds S] [--pg-state DIR |" \
         "--mariadb-state DIR]" >&2; exit 2 ;;
  esac
done
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT

source "$ROOT/bench/serve_bench_lib.sh"

fresh_store() {  # the URL of a new empty store: an SQLite file, a PostgreSQL or MariaDB database
  if [ -n "$PG_STATE" ]; then
    bash "$ROOT/scripts/pg_cluster.sh" createdb "$PG_STATE" "bench$RANDOM$RANDOM" | tail -1
  elif [ -n "$MARIADB_STATE" ]; then
    bash "$ROOT/scripts/mariadb_server.sh" createdb "$MARIADB_STATE" "bench$RANDOM$RANDOM" | tail -1
  else
    rm -f "$WORK"/bench.db*
    echo "sqlite://$WORK/bench.db"
  fi
}

attack_and_measure() {  # while a normal client runs: 200 slowloris + 500 idle, /healthz timing
  /usr/bin/python3 - "$PORT" "$LOAD" "$SECONDS_EACH" <<'PY'
import json, socket, subprocess, sys, threading, time, urllib.request
port, load, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
held, stop = [], threading.Event()
for i in range(700):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        if i < 200: s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        held.append(s)
    except OSError:
        pass
def trickle():  # slowloris: one header line per second, never the end
    n = 0
    while not stop.wait(1.0):
        n += 1
        for s in held[:200]:
            try: s.send(b"X-%d: y\r\n" % n)
            except OSError: pass
threading.Thread(target=trickle, daemon=True).start()
health = []
def probe():
    while not stop.is_set():
        t = time.perf_counter()
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10).read()
            health.append((time.perf_counter() - t) * 1000)
        except Exception:
            health.append(float("inf"))
        time.sleep(0.2)
threading.Thread(target=probe, daemon=True).start()
out = subprocess.run([load, "--url", f"http://127.0.0.1:{port}", "--threads", "1", "--jobs", "1",
                      "--duration", str(seconds), "--job-prefix", "attacked"], capture_output=True, text=True)
stop.set()
summary = json.loads(out.stdout.strip().splitlines()[-1]) if out.stdout.strip() else {}
health.sort()
print(json.dumps({"held_connections": len(held), "client_p99_ms": summary.get("p99_latency_ms"),
                  "client_transport_errors": summary.get("transport_errors"),
                  "healthz_max_ms": health[-1] if health else None,
                  "healthz_p50_ms": health[len(health)//2] if health else None}))
PY
}

run_build() {  # run_build LABEL BINARY
  echo "== $1 ($2)"
  for c in $CLIENTS; do
    serve "$2" "$(fresh_store)"
    echo "clients=$c $(summary "$(load "$c" 8 "b$c")")"
    stop_server
  done
  serve "$2" "$(fresh_store)"
  echo "unloaded 1 client: $(summary "$(load 1 1 calm)")"
  echo "200 slowloris + 500 idle held, 1 client: $(attack_and_measure)"
  stop_server
}

[ -n "$OLD" ] && run_build old "$OLD"
run_build new "$NEW"
