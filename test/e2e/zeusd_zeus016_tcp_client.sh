#!/usr/bin/env bash
# Zeus's daemon client over TCP (ZEUSD_HOST_PORT + ZEUSD_TOKEN, as Zeus's ZeusdConfig.from_env
# reads them) against our zeusd with a signing key: /discover, then /auth/whoami for the scopes,
# then reads and writes; the write persists after the client is gone (no lease over TCP).
set -euo pipefail
source "$(dirname "$0")/lib/zeusd_lib.sh"
lib="$(cd "$(dirname "$0")/lib" && pwd)"

fake_h100_a100
fake_rapl 123456789 5555
head -c 32 /dev/urandom > "$dir/key"
chmod 600 "$dir/key"
start_zeusd serve --mode tcp --tcp-bind-address 127.0.0.1:0 --signing-key-path "$dir/key"
port=$(sed -n 's/.* on 127.0.0.1:\([0-9]*\).*/\1/p' "$dir/zeusd.log" | head -1)
[ -n "$port" ] || fail "no port"

ZEUSD_HOST_PORT="127.0.0.1:$port" \
ZEUSD_TOKEN=$("$zeusd" token issue --signing-key-path "$dir/key" --user job-7 --scope gpu-control,gpu-read,cpu-read --expires 1h) \
ZEUSD_READ_TOKEN=$("$zeusd" token issue --signing-key-path "$dir/key" --user dash --scope gpu-read --expires 1h) \
PYTHONPATH="$lib" "$py" "$lib/zeus016_zeusd_tcp_scenario.py" > "$dir/client.out" 2>&1 \
  || { cat "$dir/client.out" >&2; fail "the TCP client failed"; }
grep -q TCP-CLIENT-OK "$dir/client.out" || fail "client: $(cat "$dir/client.out")"

limit1=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][1]["limit_mw"])' "$dir/state.json")
[ "$limit1" = 150000 ] || fail "GPU 1 after the client exited: $limit1 (a TCP change persists)"
grep -q "token user 'job-7' over TCP set power limit 400000 -> 150000 mW on GPU 1" "$dir/zeusd.log" \
  || fail "the change's log line"
stop_zeusd
echo "PASS: Zeus's client over TCP with a token: discover, whoami, reads, writes, scope refusals"
