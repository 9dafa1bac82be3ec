#!/usr/bin/env bash
# Hardware check (ctest label hw, `make hw`; needs root and an NVIDIA GPU): zeusd over the real
# NVML sets a power limit for a non-root user (nobody, on the gpu-control allow-list) and restores
# it within 1 s after that user's process is killed with SIGKILL. Prints what it saw.
set -euo pipefail
zeusd="$ZEUS_BIN/zeusd"
zeus="$ZEUS_BIN/zeus"
py=/usr/bin/python3
dir=$(mktemp -d)
chmod 755 "$dir"
sock="$dir/zeusd.sock"
zeusd_pid=""
cleanup() {
  if [ -n "$zeusd_pid" ]; then kill -TERM "$zeusd_pid" 2>/dev/null || true; wait "$zeusd_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; tail -20 "$dir/zeusd.log" >&2 || true; exit 1; }
unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE CUDA_VISIBLE_DEVICES

"$zeusd" --socket "$sock" --socket-mode 0666 --allow gpu-control=nobody --allow 'gpu-read=*' 2> "$dir/zeusd.log" &
zeusd_pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "zeusd did not start"
get() { curl -sf --unix-socket "$sock" "http://zeusd$1"; }
read -r min max default < <(get /discover | "$py" -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
print(g["power_limit_range_mw"]["min"], g["power_limit_range_mw"]["max"], g["default_power_limit_mw"])')
before=$(get /gpu/0/power_limit | "$py" -c 'import json,sys; print(json.load(sys.stdin)["power_limit_mw"])')
target=$(( (min + max) / 2 / 1000 * 1000 ))
[ "$target" != "$before" ] || target=$min
echo "GPU 0: range $min-$max mW, default $default mW, now $before mW; nobody sets $target mW"

runuser -u nobody -- "$py" - "$sock" "$target" > "$dir/holder.out" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
body = '{"power_limit_mw": %s}' % sys.argv[2]
s.sendall(("POST /gpu/0/power_limit HTTP/1.1\r\nHost: zeusd\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)).encode())
print(s.recv(4096).decode().split("\r\n")[0], flush=True)
time.sleep(120)
PY
holder=$!
disown "$holder"
for _ in $(seq 100); do grep -q HTTP "$dir/holder.out" && break; sleep 0.05; done
grep -q "HTTP/1.1 200" "$dir/holder.out" || fail "nobody's request: $(cat "$dir/holder.out")"
now=$(get /gpu/0/power_limit | "$py" -c 'import json,sys; print(json.load(sys.stdin)["power_limit_mw"])')
smi=$(nvidia-smi -i 0 --query-gpu=power.limit --format=csv,noheader,nounits 2>/dev/null || echo n/a)
echo "after nobody's change: zeusd reads $now mW, nvidia-smi reads $smi W"
[ "$now" = "$target" ] || fail "limit is $now mW, expected $target"

child=$(pgrep -P "$holder" || true)  # runuser forks python: the lease is python's
start=$(date +%s%N)
kill -KILL $child "$holder" 2>/dev/null || true
restored=""
while [ $(( $(date +%s%N) - start )) -lt 1000000000 ]; do
  now=$(get /gpu/0/power_limit | "$py" -c 'import json,sys; print(json.load(sys.stdin)["power_limit_mw"])')
  if [ "$now" = "$before" ]; then restored=$(( ($(date +%s%N) - start) / 1000000 )); break; fi
  sleep 0.01
done
[ -n "$restored" ] || fail "limit still $now mW 1 s after SIGKILL (expected $before)"
echo "restored to $before mW ${restored} ms after SIGKILL"
grep "nobody" "$dir/zeusd.log" | head -3
echo "zeusd real GPU check ok"
