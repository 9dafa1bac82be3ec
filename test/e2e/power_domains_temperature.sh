#!/usr/bin/env bash
# zeus power --domain and zeus devices on the fake libnvidia-ml.so.1: the memory domain and the
# temperature are shown, an unsupported or unknown domain is a one-line error naming the choices.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/state.json" <<'JSON'
{"devices": [{"power_draw_mw": 300000, "memory_power_mw": 55000, "temperature_c": 48},
             {"name": "NVIDIA A100-SXM4-40GB", "architecture": 7, "temperature_c": 39}]}
JSON
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_POWERCAP_ROOT="$dir/none" ZEUS_ROCM_SMI_PATH="$dir/none.so"
unset CUDA_VISIBLE_DEVICES

"$zeus" devices --json > "$dir/devices.json"
"$zeus" power --gpus 0 --interval 0.1 --duration 0.3 --json \
  --domain device_instant,memory_average > "$dir/power.jsonl"
python3 - "$dir/devices.json" "$dir/power.jsonl" <<'PY'
import json, sys
gpus = json.load(open(sys.argv[1]))["gpus"]
assert gpus[0]["power_domains"] == ["device_instant", "device_average", "memory_average"], gpus[0]
assert gpus[0]["memory_power_w"] == 55.0 and gpus[0]["temperature_c"] == 48, gpus[0]
assert gpus[1]["power_domains"] == ["device_instant", "device_average"], gpus[1]
assert gpus[1]["memory_power_w"] is None and gpus[1]["temperature_c"] == 39, gpus[1]
rows = [json.loads(line) for line in open(sys.argv[2])]
readings, summary = rows[:-1], rows[-1]
assert len(readings) >= 2 and summary["summary"] is True
for r in readings:
    assert r["power_w"] == {"0": 300.0}, r
    assert r["domains"] == {"device_instant": {"0": 300.0}, "memory_average": {"0": 55.0}}, r
    assert r["temperature_c"] == {"0": 48}, r
print("domains ok:", len(readings), "readings")
PY

"$zeus" power --interval 0.1 --duration 0.15 > "$dir/table.txt"
grep -q "gpu1_c" "$dir/table.txt" || { echo "no temperature column"; exit 1; }
set +e
"$zeus" power --duration 0.1 --domain memory_average 2> "$dir/err.txt"; code=$?
set -e
[ "$code" = 1 ] && grep -q "memory_average is not supported.*\[device_instant, device_average\]" \
  "$dir/err.txt" || { echo "unsupported domain accepted (rc $code)"; cat "$dir/err.txt"; exit 1; }
set +e
"$zeus" power --duration 0.1 --domain device_peak 2> "$dir/err.txt"; code=$?
set -e
[ "$code" = 2 ] && grep -q "unknown power domain 'device_peak'" "$dir/err.txt" \
  || { echo "unknown domain accepted (rc $code)"; exit 1; }
echo "power domains e2e ok"
