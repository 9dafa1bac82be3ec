#!/usr/bin/env bash
# With a descriptor limit (nofile 256) far below --max-connections, 500 idle and
# 32 slowloris connections must not lock `zeus serve` out: the cap is clamped to the descriptors
# there are (and the server says so once at start), idle and slow connections make room, every
# /healthz is answered within 50 ms, and the log stays short (no line per refused accept).
set -euo pipefail
dir=$(mktemp -d)
source "$ZEUS_SOURCE_DIR/test/load/serve_lib.sh"
trap 'kill "${server_pid[limited]:-}" 2>/dev/null || true; rm -rf "$dir"' EXIT

# The limit is the server's alone: set in a subshell that becomes zeus serve.
zeus_unlimited=$zeus
zeus=$dir/zeus_nofile_256
printf '#!/bin/sh\nulimit -n 256 || exit 1\nexec %s "$@"\n' "$zeus_unlimited" > "$zeus"
chmod +x "$zeus"
start_server limited "sqlite://$dir/bso.db" 0 || fail "zeus serve did not start"
port=${server_url[limited]##*:}
log="$dir/serve_limited.out"
grep -q "descriptor limit (ulimit -n 256) allows" "$log" || { cat "$log"; fail "no word on the clamped cap"; }
out=$(/usr/bin/python3 "$ZEUS_SOURCE_DIR/test/load/connection_attack.py" --tcp "127.0.0.1:$port" \
      --path /healthz --slow 32 --idle 500 --max-ms 50 --budget-ms 25) || { cat "$log"; fail "under attack: $out"; }
echo "$out"
kill -0 "${server_pid[limited]}" || fail "zeus serve died"
lines=$(wc -l < "$log")
[ "$lines" -lt 50 ] || { head -60 "$log"; fail "$lines log lines under attack (fewer than 50 expected)"; }
echo "log lines: $lines"
