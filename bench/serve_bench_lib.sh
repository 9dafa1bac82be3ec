# shellcheck shell=bash
# bench/serve_bench_lib.sh: what the `zeus serve` benchmarks share (sourced by http_bench.sh and
# sqlite_synchronous_bench.sh): a free port, a server started on a given store and waited for,
# the load, and zeus_load's summary line in words. Needs WORK (a scratch folder), LOAD (zeus_load)
# and SECONDS_EACH; serve sets PORT and SERVER_PID.

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

serve() {  # serve BINARY DB_URL: starts `BINARY serve` on DB_URL, returns once /healthz answers
  PORT=$(free_port)
  "$1" serve --host 127.0.0.1 --port "$PORT" --db "$2" > "$WORK/serve.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do
    /usr/bin/python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/healthz', timeout=1)" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "server did not start: $(cat "$WORK/serve.log")" >&2; exit 1
}

stop_server() { kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true; }

load() {  # load CLIENTS JOBS PREFIX: zeus_load's JSON summary of SECONDS_EACH s of keep-alive
  # clients, each running job lifecycles (next, then report per epoch) on one of JOBS jobs
  "$LOAD" --url "http://127.0.0.1:$PORT" --threads "$1" --jobs "$2" --duration "$SECONDS_EACH" \
    --job-prefix "$3" 2>/dev/null | tail -1 || true
}

summary() {  # zeus_load's JSON line -> requests/s, pairs/s (next + report = 2 requests), p50, p99
  /usr/bin/python3 -c 'import json,sys
try: d = json.loads(sys.argv[1])
except Exception: print("no result"); sys.exit()
print("requests/s %.0f  pairs/s %.0f  p50 %.2f ms  p99 %.2f ms  transport errors %d" % (
    d["requests_per_s"], d["requests_per_s"] / 2, d["p50_latency_ms"], d["p99_latency_ms"],
    d["transport_errors"]))' "$1"
}
