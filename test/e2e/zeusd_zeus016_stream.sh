#!/usr/bin/env bash
# Zeus 0.16's PowerStreamingClient (zeus.monitor.power_streaming, re-created request for request
# in lib/zeus016_power_streaming.py: httpx streaming GETs of /gpu/stream_power and
# /cpu/stream_power, SSE `data:` lines parsed as JSON) against our zeusd over the fake
# libnvidia-ml.so.1 and a fake powercap tree: first over the Unix socket (ZEUSD_SOCK_PATH), then
# over TCP with a signing key (ZEUSD_HOST_PORT + ZEUSD_TOKEN). GPU power changed in the fake's
# state and a RAPL counter's jump reach the client with the right values; explicit ids stream only
# those devices; a gpu-read token streams GPUs only, a rejected one nothing.
set -euo pipefail
source "$(dirname "$0")/lib/zeusd_lib.sh"
lib="$(cd "$(dirname "$0")/lib" && pwd)"

fake_h100_a100
fake_rapl 123456789 5555
zone="$dir/powercap/intel-rapl:0"

start_zeusd serve --mode uds --socket-path "$sock" --socket-permissions 0666 \
  --allow 'gpu-read=*' --allow 'cpu-read=*' --log-level info
PYTHONPATH="$lib" "$py" "$lib/zeus016_stream_scenario.py" uds "$sock" "$dir/state.json" "$zone" \
  > "$dir/uds.out" 2>&1 || { cat "$dir/uds.out" >&2; fail "the streaming client over the socket"; }
grep -q STREAM-UDS-OK "$dir/uds.out" || fail "socket: $(cat "$dir/uds.out")"
cat "$dir/uds.out"
stop_zeusd

key="$dir/signing.key"
head -c 32 /dev/urandom | base64 > "$key"
chmod 600 "$key"
start_zeusd serve --mode tcp --tcp-bind-address 127.0.0.1:0 --signing-key-path "$key"
port=$(sed -n 's/.* on 127.0.0.1:\([0-9]*\).*/\1/p' "$dir/zeusd.log" | head -1)
[ -n "$port" ] || fail "no TCP port in the startup line"
ZEUSD_HOST_PORT="127.0.0.1:$port" \
ZEUSD_TOKEN=$("$zeusd" token issue --signing-key-path "$key" --user job-7 --scope gpu-read,cpu-read --expires 1h) \
ZEUSD_READ_TOKEN=$("$zeusd" token issue --signing-key-path "$key" --user dash --scope gpu-read --expires 1h) \
PYTHONPATH="$lib" "$py" "$lib/zeus016_stream_scenario.py" tcp "$dir/state.json" "$zone" \
  > "$dir/tcp.out" 2>&1 || { cat "$dir/tcp.out" >&2; fail "the streaming client over TCP"; }
grep -q STREAM-TCP-OK "$dir/tcp.out" || fail "TCP: $(cat "$dir/tcp.out")"
cat "$dir/tcp.out"
kill -0 "$zeusd_pid" || fail "zeusd died"
stop_zeusd
echo "PASS: Zeus 0.16's PowerStreamingClient streams GPU and CPU power from our zeusd over the socket and TCP"
