#!/usr/bin/env bash
# zeusd serves the AMD GPUs the device layer finds through AMD SMI (the fake libamd_smi.so):
# /discover lists them by HIP index, a power limit set through zeusd reaches the GPU (in uW) and
# is restored when the client leaves, clocks lock and reset, and the zeus CLI routed through
# ZEUSD_SOCK_PATH sees the same GPUs.
set -euo pipefail
source "$(dirname "$0")/lib/zeusd_lib.sh"
zeus="$ZEUS_BIN/zeus"

"$py" - "$dir/state.json" <<'PY'
import json, sys
def gpu(hip, unique_id):
    return {"name": "AMD Instinct MI300X", "hip_id": hip, "unique_id": unique_id,
            "power_uw": 300000000, "cap_uw": 500000000, "default_cap_uw": 500000000,
            "min_cap_uw": 100000000, "max_cap_uw": 560000000, "sclk_mhz": [500, 1000, 2100],
            "mclk_mhz": [1300]}
json.dump({"errors": {}, "devices": [gpu(1, 0xB001), gpu(0, 0xB000)]}, open(sys.argv[1], "w"))
PY
chmod 644 "$dir/state.json"
export ZEUS_FAKE_ROCM_SMI_STATE="$dir/state.json"
export ZEUS_AMDSMI_PATH="$ZEUS_FAKES/libamd_smi.so"
export ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_NVML_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES ZEUSD_SOCK_PATH

field() {  # field GPU KEY: a value of AMD SMI device GPU (its position in the state file)
  "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][int(sys.argv[2])][sys.argv[3]])' "$dir/state.json" "$1" "$2"
}

start_zeusd --socket "$sock" --socket-mode 0666 --allow 'gpu-read=*' --log-level info
grep -q "backend amdsmi: 2 GPUs" "$dir/zeusd.log" || fail "zeusd did not use AMD SMI"

# 1. /discover: the GPUs in HIP order (HIP 0 is the second in AMD SMI's order).
out=$(api GET /discover)
[ "${out##* }" = 200 ] || fail "GET /discover: $out"
"$py" -c '
import json, sys
d = json.loads(sys.argv[1].rsplit(" ", 1)[0])
assert [g["uuid"] for g in d["gpus"]] == ["GPU-000000000000b000", "GPU-000000000000b001"], d
' "$out"

# 2. A power limit through zeusd reaches GPU 0 (AMD SMI's device 1) in uW; the other is untouched;
# when the client (this curl) has left, zeusd restores the default.
out=$(api POST "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=250000&block=true")
[ "${out##* }" = 200 ] || fail "set limit: $out"
for _ in $(seq 100); do [ "$(field 1 cap_uw)" = 500000000 ] && break; sleep 0.02; done
[ "$(field 1 cap_uw)" = 500000000 ] || fail "limit not restored after the client left: $(field 1 cap_uw)"
[ "$(field 0 cap_uw)" = 500000000 ] || fail "GPU 1 changed: $(field 0 cap_uw)"
out=$(api POST "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=50000&block=true")
[ "${out##* }" = 400 ] || fail "out of range: $out"

# 3. The zeus CLI through zeusd (ZEUSD_SOCK_PATH): the same GPUs, their changes routed to zeusd.
ZEUSD_SOCK_PATH="$sock" "$zeus" devices --json > "$dir/devices.json"
"$py" -c '
import json, sys
g = json.load(open(sys.argv[1]))["gpus"]
assert [x["backend"] for x in g] == ["amdsmi via zeusd"] * 2, g
assert [x["uuid"] for x in g] == ["GPU-000000000000b000", "GPU-000000000000b001"], g
' "$dir/devices.json"

# 4. Clocks through zeusd: the lock reaches AMD SMI's device 0 (HIP 1); outside the GPU's range is
# 400; when the client has left, zeusd hands the clocks back to the driver (performance level auto).
out=$(api POST "/gpu/set_gpu_locked_clocks?gpu_ids=1&min_clock_mhz=500&max_clock_mhz=1000&block=true")
[ "${out##* }" = 200 ] || fail "lock clocks: $out"
for _ in $(seq 100); do [ "$(field 0 perf_level)" = 0 ] && break; sleep 0.02; done
[ "$(field 0 perf_level)" = 0 ] || fail "clocks not reset after the client left"
grep -q '"sclk_range_mhz": \[\]' "$dir/state.json" || fail "clock range not cleared: $(cat "$dir/state.json")"
out=$(api POST "/gpu/set_gpu_locked_clocks?gpu_ids=1&min_clock_mhz=100&max_clock_mhz=1000&block=true")
[ "${out##* }" = 400 ] || fail "clocks outside the range: $out"
stop_zeusd
echo "zeusd amdsmi ok"
