#!/usr/bin/env bash
# Time and energy of a window are read together (the window's time runs from the
# clock reading before its begin's counter reads to the one after its end's), so `zeus measure --
# true` on a 350 W fake never reports more than the device's power, beyond the counter's 1 mJ
# resolution.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo '{"devices": [{"power_draw_mw": 350000}]}' > "$dir/state.json"
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES
for i in $(seq 20); do
  "$zeus" measure --json --approx-zero -- true >> "$dir/runs.jsonl" 2> /dev/null
done
python3 - "$dir/runs.jsonl" <<'PY'
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
worst = 0.0
for m in runs:
    e, t = m["gpu_energy_j"]["0"], m["time_s"]
    assert t > 0, m
    # 350 W x time, plus the counter's resolution (1 mJ) and a rounding margin.
    assert e <= 350.0 * t + 0.001 + 1e-9, f"{e} J in {t} s is {e / t:.1f} W > 350 W: {m}"
    worst = max(worst, e / t)
print(f"ok: {len(runs)} runs, highest {worst:.2f} W (counter resolution 1 mJ)")
PY
