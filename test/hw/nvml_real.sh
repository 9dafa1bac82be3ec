#!/usr/bin/env bash
# Hardware check (ctest label hw, `make hw`): the real NVML path on an NVIDIA GPU.
# 1. zeus devices finds the GPU through NVML.
# 2. zeus measure of a real GPU workload (PyTorch matmuls) agrees with a second reading of the
#    energy counter taken outside the tool (ctypes -> libnvidia-ml.so.1).
# 3. Setting and restoring a power limit (needs root).
# Prints the numbers it compared; exits non-zero when one check fails.
# --dry-run-fake: the same on the fake NVML (build/release/fakes) with a sleep for a workload, to
# check the script itself on a machine without a GPU (the GPU kit's run.sh --fake).
set -euo pipefail
source "$(dirname "$0")/lib/hw_mode.sh"
hw_mode "${1:-}" '{"devices": [{"name": "NVIDIA H100 80GB HBM3", "power_draw_mw": 250000}]}'
zeus="$ZEUS_BIN/zeus"

"$zeus" devices --json > "$dir/devices.json"
$py - "$dir/devices.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["gpus"], "no GPU found: %s" % d["backends"]
print("devices:", [(g["name"], g["architecture"], g["power_limit_w"]) for g in d["gpus"]])
PY

if [ $fake = 1 ]; then
  echo 'import time; time.sleep(3)' > "$dir/work.py"
else
cat > "$dir/work.py" <<'PY'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
end = time.time() + 8
while time.time() < end:
    for _ in range(50):
        c = a @ b
    torch.cuda.synchronize()
PY
fi
cat > "$dir/counter.py" <<'PY'
import ctypes, os
nvml = ctypes.CDLL(os.environ.get("ZEUS_NVML_PATH") or "libnvidia-ml.so.1")
assert nvml.nvmlInit_v2() == 0
handle = ctypes.c_void_p()
assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) == 0
energy = ctypes.c_ulonglong()
assert nvml.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(energy)) == 0
print(energy.value)
PY
before=$($py "$dir/counter.py")
CUDA_VISIBLE_DEVICES=0 "$zeus" measure --gpus 0 --json -- $py "$dir/work.py" > "$dir/measure.json"
after=$($py "$dir/counter.py")
$py - "$dir/measure.json" "$before" "$after" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
outside_j = (int(sys.argv[3]) - int(sys.argv[2])) / 1000.0
zeus_j = m["gpu_energy_j"]["0"]
print("zeus measure: %.1f J in %.2f s (%.1f W); counter read outside: %.1f J; ratio %.4f"
      % (zeus_j, m["time_s"], zeus_j / m["time_s"], outside_j, zeus_j / outside_j))
# The outside reading also spans zeus's own start and exit (idle power for a fraction of a second).
assert 0.9 <= zeus_j / outside_j <= 1.0 + 1e-3, "zeus and the counter disagree"
PY

"$ZEUS_BUILD_DIR/test/zeus_hw_power_limit_check"
echo "hw nvml ok"
