#!/usr/bin/env bash
# Hardware check (ctest label hw, `make hw`): the Perseus clock controller on a real NVIDIA GPU
# (needs root, or ZEUSD_SOCK_PATH with gpu-control). 200 SM clock changes between the maximum and
# the middle supported clock; prints the time per change, then nvidia-smi's SM clocks for a look
# (the controller has unlocked them).
set -euo pipefail
out=$("$ZEUS_BIN/zeus_clock_controller_check" --changes 200)
echo "clock controller: $out"
echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["applied"]==200 and d["failed"]==0, d'
if command -v nvidia-smi > /dev/null; then
  # "Clocks Event Reasons"/"Applications Clocks" differ per driver; the locked-clock state is in
  # the query below on drivers that report it (N/A elsewhere).
  nvidia-smi -i 0 --query-gpu=clocks.sm,clocks.max.sm --format=csv,noheader || true
fi
