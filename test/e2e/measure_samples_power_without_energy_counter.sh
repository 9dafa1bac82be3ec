#!/usr/bin/env bash
# A Hopper whose energy counter answers NOT_SUPPORTED (vGPU, some boards) is
# probed at discovery: `zeus devices` says the counter is not available, and `zeus measure`
# samples its power instead of failing.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo '{"errors": {"nvmlDeviceGetTotalEnergyConsumption": 3}, "devices": [{"power_draw_mw": 300000}]}' \
  > "$dir/state.json"
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES
fail() { echo "FAIL: no energy counter: $*" >&2; exit 1; }

out=$("$zeus" devices)
echo "$out" | grep -q "energy counter   no (power is sampled)" || fail "devices: $out"
"$zeus" devices --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["gpus"][0]["architecture"] == "Hopper" and d["gpus"][0]["energy_counter"] is False, d'

"$zeus" measure --json -- sleep 0.5 > "$dir/m.json" 2> "$dir/err.txt" || fail "measure: $(cat "$dir/err.txt")"
python3 - "$dir/m.json" <<'PY' || fail "sampled energy"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["exit_code"] == 0, m
assert abs(m["gpu_energy_j"]["0"] / m["time_s"] - 300) < 15, m
PY
echo "measure_samples_power_without_energy_counter: ok"
