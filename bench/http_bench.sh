#!/usr/bin/env bash
# bench/http_bench.sh: `zeus serve` under load, one or two builds side by side on the same load
# (issue "One event-driven HTTP layer"): next+report pairs per second and p50/p99 at several
# numbers of concurrent keep-alive clients on SQLite, then a normal client's p99 and /healthz
# latency while 200 slowloris and 500 idle connections are held open.
#
#   bench/http_bench.sh [--old /path/to/older/zeus] [--clients "1 8 32 256 1000"] [--seconds 5]
#       [--pg-state DIR]
# The load generator is build/release/bin/zeus_load for both builds; the store is a fresh SQLite
# file per run (or a fresh database of the PostgreSQL cluster whose scripts/pg_cluster.sh state
# folder --pg-state names). An older build to compare with: git worktree add /tmp/old <rev>,
# then cmake -S /tmp/old -B /tmp/old/build -DZEUS_BUILD_BENCH=OFF && cmake --build
# /tmp/old/build --target zeus_cli.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NEW=$ROOT/build/release/bin/zeus
LOAD=$ROOT/build/release/bin/zeus_load
OLD=""
CLIENTS="1 8 32 256 1000"
SECONDS_EACH=5
PG_STATE=""
while [ $# -gt 0 ]; do
  case $1 in
    --old) OLD=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --pg-state) PG_STATE=$2; shift 2 ;;
    *) echo "usage: $0 [--old ZEUS] [--clients LIST] [--seconds S] [--pg-state DIR]" >&2; exit 2 ;;
  esac
done
WORK=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

serve() {  # serve BINARY -> sets PORT and SERVER_PID
  PORT=$(free_port)
  rm -f "$WORK/bench.db"
  local db="sqlite://$WORK/bench.db"
  if [ -n "$PG_STATE" ]; then
    db=$(bash "$ROOT/scripts/pg_cluster.sh" createdb "$PG_STATE" "bench$RANDOM$RANDOM" | tail -1)
  fi
  "$1" serve --host 127.0.0.1 --port "$PORT" --db "$db" > "$WORK/serve.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do
    /usr/bin/python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/healthz', timeout=1)" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "server did not start: $(cat "$WORK/serve.log")" >&2; exit 1
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

summary() {  # zeus_load's JSON line -> requests/s, pairs/s (next + report = 2 requests), p50, p99
  /usr/bin/python3 -c 'import json,sys
try: d = json.loads(sys.argv[1])
except Exception: print("no result"); sys.exit()
print("requests/s %.0f  pairs/s %.0f  p50 %.2f ms  p99 %.2f ms  transport errors %d" % (
    d["requests_per_s"], d["requests_per_s"] / 2, d["p50_latency_ms"], d["p99_latency_ms"],
    d["transport_errors"]))' "$1"
}

run_build() {  # run_build LABEL BINARY
  echo "== $1 ($2)"
  for c in $CLIENTS; do
    serve "$2"
    result=$("$LOAD" --url "http://127.0.0.1:$PORT" --threads "$c" --jobs 8 --duration "$SECONDS_EACH" \
             --job-prefix "b$c" 2>/dev/null | tail -1 || true)
    echo "clients=$c $(summary "$result")"
    kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true
  done
  serve "$2"
  echo "unloaded 1 client: $(summary "$("$LOAD" --url "http://127.0.0.1:$PORT" --threads 1 --jobs 1 \
        --duration "$SECONDS_EACH" --job-prefix calm 2>/dev/null | tail -1)")"
  echo "200 slowloris + 500 idle held, 1 client: $(attack_and_measure)"
  kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true
}

[ -n "$OLD" ] && run_build old "$OLD"
run_build new "$NEW"
