#!/usr/bin/env bash
# serve_survives_low_descriptor_limit for zeusd: with nofile 256, 500 idle and 32 slowloris
# connections (from another user when run as root) must not lock out the privileged client: root's
# /discover is answered within 50 ms throughout, zeusd says once that its cap was clamped, and
# its log stays short.
set -euo pipefail
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/zeusd_lib.sh"
fake_gpus '[{"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "power_draw_mw": 350000,
             "min_limit_mw": 200000, "max_limit_mw": 700000}]'
# The limit is zeusd's alone: a wrapper sets it and becomes zeusd.
printf '#!/bin/sh\nulimit -n 256 || exit 1\nexec %s "$@"\n' "$zeusd" > "$dir/zeusd_nofile_256"
chmod 755 "$dir/zeusd_nofile_256"
zeusd="$dir/zeusd_nofile_256"
start_zeusd --socket "$sock" --socket-mode 0666 --allow 'gpu-read=*' --log-level info
grep -q "descriptor limit (ulimit -n 256) allows" "$dir/zeusd.log" || fail "no word on the clamped cap"

attacker=()
[ "$(id -u)" = 0 ] && attacker=(--attacker-uid "$(id -u nobody)")
out=$("$py" "$ZEUS_SOURCE_DIR/test/load/connection_attack.py" --unix "$sock" \
      --path /discover --slow 32 --idle 500 --max-ms 50 --budget-ms 25 "${attacker[@]}") \
  || fail "under attack: $out"
echo "$out"
kill -0 "$zeusd_pid" || fail "zeusd died"
lines=$(wc -l < "$dir/zeusd.log")
[ "$lines" -lt 50 ] || { head -60 "$dir/zeusd.log"; fail "$lines log lines under attack (fewer than 50 expected)"; }
echo "log lines: $lines"
