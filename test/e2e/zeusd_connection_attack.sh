#!/usr/bin/env bash
# 200 slowloris and 500 idle connections (from another user when run as root)
# must not lock zeusd's privileged client out: root keeps reading /discover with its p99 (under 3x
# unloaded, plus a noise budget) and no error. The old zeusd refused everyone at 128 connections.
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
"$zeusd" --socket "$sock" --socket-mode 0666 --allow 'gpu-read=*' --log-level warning \
  > "$dir/zeusd.out" 2> "$dir/zeusd.log" &
zeusd_pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "zeusd did not create $sock"

attacker=()
[ "$(id -u)" = 0 ] && attacker=(--attacker-uid "$(id -u nobody)")
out=$(/usr/bin/python3 "$ZEUS_SOURCE_DIR/test/load/connection_attack.py" --unix "$sock" \
      --path /discover --slow 200 --idle 500 "${attacker[@]}") || fail "under attack: $out"
echo "$out"
kill -0 "$zeusd_pid" || fail "zeusd died"
