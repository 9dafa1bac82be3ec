#!/usr/bin/env bash
# Probe item A6: 200 slowloris and 500 idle connections must not lock out `zeus serve`: a normal
# client's requests (GET /healthz and GET /jobs) keep their p99 (under 3x unloaded, plus a noise
# budget) and none fails. The old server (16 threads, one per connection) timed out here.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; cat "$dir/serve.log" >&2; exit 1; }

"$zeus" serve --db "sqlite://$dir/bso.db" --port 0 > "$dir/serve.log" 2>&1 &
server_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(sed -nE 's/^zeus serve: listening on (http:[^ ]+).*/\1/p' "$dir/serve.log")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || fail "zeus serve printed no URL"
port=${url##*:}
for path in /healthz /jobs; do
  out=$(/usr/bin/python3 "$ZEUS_SOURCE_DIR/test/load/connection_attack.py" --tcp "127.0.0.1:$port" \
        --path "$path" --slow 200 --idle 500) || fail "$path under attack: $out"
  echo "$path: $out"
done
kill -0 "$server_pid" || fail "zeus serve died"
