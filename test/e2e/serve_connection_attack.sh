#!/usr/bin/env bash
# 200 slowloris and 500 idle connections must not lock out `zeus serve`: a normal
# client's requests (GET /healthz and GET /jobs) keep their p99 (under 3x unloaded, plus a noise
# budget) and none fails. The old server (16 threads, one per connection) timed out here.
set -euo pipefail
dir=$(mktemp -d)
source "$ZEUS_SOURCE_DIR/test/load/serve_lib.sh"
trap 'kill "${server_pid[attacked]:-}" 2>/dev/null || true; rm -rf "$dir"' EXIT

start_server attacked "sqlite://$dir/bso.db" 0 || fail "zeus serve did not start"
port=${server_url[attacked]##*:}
for path in /healthz /jobs; do
  out=$(/usr/bin/python3 "$ZEUS_SOURCE_DIR/test/load/connection_attack.py" --tcp "127.0.0.1:$port" \
        --path "$path" --slow 200 --idle 500) || fail "$path under attack: $out"
  echo "$path: $out"
done
kill -0 "${server_pid[attacked]}" || fail "zeus serve died"
