#!/usr/bin/env bash
# Probe item A3 for zeusd: with nofile 256, 500 idle and 32 slowloris connections (from another
# user when run as root) must not lock out the privileged client: root's /discover is answered
# within 50 ms throughout, zeusd says once that its cap was clamped, and its log stays short.
set -euo pipefail
zeusd="$ZEUS_BIN/zeusd"
dir=$(mktemp -d)
chmod 755 "$dir"
zeusd_pid=""
cleanup() {
  if [ -n "$zeusd_pid" ]; then kill -TERM "$zeusd_pid" 2>/dev/null || true; wait "$zeusd_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; tail -20 "$dir/zeusd.log" >&2; exit 1; }

cat > "$dir/state.json" <<'JSON'
{"devices": [{"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "power_draw_mw": 350000,
   "min_limit_mw": 200000, "max_limit_mw": 700000}]}
JSON
export ZEUS_FAKE_NVML_STATE="$dir/state.json"
export ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/none"
sock="$dir/zeusd.sock"
(ulimit -n 256 && exec "$zeusd" --socket "$sock" --socket-mode 0666 --allow 'gpu-read=*' \
   --log-level info > "$dir/zeusd.out" 2> "$dir/zeusd.log") &
zeusd_pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "zeusd did not create $sock"
grep -q "descriptor limit (ulimit -n 256) allows" "$dir/zeusd.log" || fail "no word on the clamped cap"

attacker=()
[ "$(id -u)" = 0 ] && attacker=(--attacker-uid "$(id -u nobody)")
out=$(/usr/bin/python3 "$ZEUS_SOURCE_DIR/test/load/connection_attack.py" --unix "$sock" \
      --path /discover --slow 32 --idle 500 --max-ms 50 --budget-ms 25 "${attacker[@]}") \
  || fail "under attack: $out"
echo "$out"
kill -0 "$zeusd_pid" || fail "zeusd died"
lines=$(cat "$dir/zeusd.log" "$dir/zeusd.out" | wc -l)
[ "$lines" -lt 50 ] || { head -60 "$dir/zeusd.log"; fail "$lines log lines under attack (fewer than 50 expected)"; }
echo "log lines: $lines"
