#!/usr/bin/env bash
# Hardware check (ctest label hw, `make hw`): the Perseus clock controller on a real NVIDIA GPU
# (needs root, or ZEUSD_SOCK_PATH with gpu-control). 200 SM clock changes between the maximum and
# the middle supported clock; prints the time per change, then nvidia-smi's SM clocks for a look
# (the controller has unlocked them).
# --dry-run-fake: the same on the fake NVML (build/release/fakes), to check the script itself on
# a machine without a GPU (the GPU kit's run.sh --fake); the fake's clocks must end unlocked.
set -euo pipefail
source "$(dirname "$0")/lib/hw_mode.sh"
hw_mode "${1:-}" '{"sm_clock_log": [], "devices": [{"name": "NVIDIA H100 80GB HBM3"}]}'
out=$("$ZEUS_BIN/zeus_clock_controller_check" --changes 200)
echo "clock controller: $out"
echo "$out" | $py -c 'import json,sys; d=json.load(sys.stdin); assert d["applied"]==200 and d["failed"]==0, d'
if [ $fake = 1 ]; then
  $py - "$state" <<'PY'
import json, sys
state = json.load(open(sys.argv[1]))
device, log = state["devices"][0], state.get("sm_clock_log", [])
assert len(log) >= 200, f"the fake saw {len(log)} clock changes, expected at least 200"
assert device.get("locked_sm_clocks_mhz") is None, f"left locked: {device.get('locked_sm_clocks_mhz')}"
print(f"fake: {len(log)} SM clock changes logged; clocks unlocked at the end")
PY
elif command -v nvidia-smi > /dev/null; then
  # "Clocks Event Reasons"/"Applications Clocks" differ per driver; the locked-clock state is in
  # the query below on drivers that report it (N/A elsewhere).
  nvidia-smi -i 0 --query-gpu=clocks.sm,clocks.max.sm --format=csv,noheader || true
fi
