#!/usr/bin/env bash
# When the GPU's energy counter goes backwards during the command (driver reload,
# GPU reset), `zeus measure` says so and reports power x time for that GPU instead of 0 J.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Energy reads: the probe at discovery, the window's begin; the end read sees the counter at ~0.
echo '{"devices": [{"power_draw_mw": 300000, "energy_mj": 5e6, "energy_reset_after_calls": 2}]}' \
  > "$dir/state.json"
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/no-powercap" ZEUS_LOG_LEVEL=warning
unset CUDA_VISIBLE_DEVICES
fail() { echo "FAIL: counter reset: $*" >&2; exit 1; }

"$zeus" measure --json -- sleep 0.3 > "$dir/m.json" 2> "$dir/err.txt" || fail "measure: $(cat "$dir/err.txt")"
grep -q "energy counter of GPU 0 went backwards during window" "$dir/err.txt" || fail "no warning: $(cat "$dir/err.txt")"
grep -q "update period" "$dir/err.txt" && fail "misleading 0 J warning: $(cat "$dir/err.txt")"
python3 - "$dir/m.json" <<'PY' || fail "energy: $(cat "$dir/m.json")"
import json, sys
m = json.load(open(sys.argv[1]))
e, t = m["gpu_energy_j"]["0"], m["time_s"]
assert t >= 0.3 and abs(e - 300.0 * t) < 1e-6, m
PY
echo "measure_counter_reset_uses_power_times_time: ok"
