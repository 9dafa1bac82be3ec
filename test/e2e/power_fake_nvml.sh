#!/usr/bin/env bash
# zeus power against the fake libnvidia-ml.so.1: one reading per interval with the fake's power,
# then totals whose energy is power x time; bad options give one-line errors.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/state.json" <<'JSON'
{"devices": [{"name": "NVIDIA A100-SXM4-40GB", "architecture": 7, "power_draw_mw": 250000,
              "min_limit_mw": 100000, "max_limit_mw": 400000, "limit_mw": 200000}]}
JSON
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_POWERCAP_ROOT="$dir/none" ZEUS_ROCM_SMI_PATH="$dir/none.so"
unset CUDA_VISIBLE_DEVICES

"$zeus" power --interval 0.1 --duration 0.5 --json > "$dir/power.jsonl"
python3 - "$dir/power.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
readings, summary = rows[:-1], rows[-1]
assert 4 <= len(readings) <= 6, len(readings)
# The fake draws 250 W but is capped at its 200 W limit.
assert all(abs(r["power_w"]["0"] - 200.0) < 1e-6 for r in readings), readings
assert summary["summary"] is True
t, e = summary["time_s"], summary["gpu_energy_j"]["0"]
assert abs(e / (200.0 * t) - 1) < 0.02, (e, t)
print("power ok:", len(readings), "readings,", e, "J in", t, "s")
PY

"$zeus" power --interval 0.1 --duration 0.3 | grep -q "total (GPUs)" || { echo "no totals"; exit 1; }
set +e
"$zeus" power --interval 0 2> "$dir/err.txt"; code=$?
set -e
[ "$code" = 2 ] && grep -q "interval" "$dir/err.txt" || { echo "bad --interval accepted"; exit 1; }
echo "power e2e ok"
