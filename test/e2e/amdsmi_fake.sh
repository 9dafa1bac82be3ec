#!/usr/bin/env bash
# The zeus CLI on the fake libamd_smi.so (AMD SMI backend): zeus devices names the backend and
# what each GPU supports (an MI250X's second die has no power of its own), HIP_VISIBLE_DEVICES
# counts HIP indices, zeus measure's energy matches the fake's power x time, zeus power reads
# power and temperature, rocm_smi takes over when AMD SMI is missing, an unreadable counter is
# explained.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
py=/usr/bin/python3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

# Three GPUs in AMD SMI (PCI) order: an MI300X that HIP numbers 2, and one MI250X package (its
# first die HIP 0 draws 400 W for both dies, its second die HIP 1 reads 0 W).
"$py" - "$dir/state.json" <<'PY'
import json, sys, time
now = time.time_ns()
def gpu(name, hip, power_w, unique_id, **extra):
    d = {"name": name, "hip_id": hip, "unique_id": unique_id, "power_uw": int(power_w * 1e6),
         "cap_uw": 500000000, "default_cap_uw": 500000000, "min_cap_uw": 100000000,
         "max_cap_uw": 560000000, "energy_count": 0, "energy_time_ns": now,
         "energy_resolution_uj": 15.3, "sclk_mhz": [500, 1000, 1700], "mclk_mhz": [400, 1600],
         "temperature_c": 61}
    d.update(extra)
    return d
state = {"errors": {}, "devices": [
    gpu("AMD Instinct MI300X", 2, 250, 0xA300),
    gpu("AMD Instinct MI250X", 0, 400, 0xA250, socket=5),
    gpu("AMD Instinct MI250X", 1, 0, 0xA251, socket=5)]}
json.dump(state, open(sys.argv[1], "w"))
PY
export ZEUS_FAKE_ROCM_SMI_STATE="$dir/state.json"
export ZEUS_AMDSMI_PATH="$ZEUS_FAKES/libamd_smi.so"
export ZEUS_ROCM_SMI_PATH="$ZEUS_FAKES/librocm_smi64.so"
export ZEUS_NVML_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES ZEUSD_SOCK_PATH

# 1. zeus devices --json: the backend, per GPU and in the backend list, the power scope, and what
# is supported.
"$zeus" devices --json > "$dir/devices.json" 2> "$dir/devices.err"
"$py" - "$dir/devices.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
gpus = d["gpus"]
assert [g["uuid"] for g in gpus] == ["GPU-000000000000a250", "GPU-000000000000a251",
                                     "GPU-000000000000a300"], gpus
assert all(g["backend"] == "amdsmi" and g["vendor"] == "amd" for g in gpus), gpus
# AMD GPUs have no C2C module: every figure is the GPU's own (the MI250X's second die too).
assert all(g["power_scope"] == "gpu" for g in gpus), [g["power_scope"] for g in gpus]
backends = {b["backend"]: b for b in d["backends"]}
assert backends["amdsmi"]["used"] and backends["amdsmi"]["detail"] == "3 GPUs", backends
assert not backends["rocm_smi"]["used"], backends
first, second, mi300 = gpus
assert first["energy_counter"] and first["power_w"] == 400, first
assert not second["energy_counter"] and second["power_w"] is None, second
assert mi300["energy_counter"] and mi300["power_w"] == 250, mi300
assert mi300["power_limit_w"] == {"min": 100, "max": 560, "default": 500, "current": 500}, mi300
assert mi300["temperature_c"] == 61 and mi300["persistence_mode"] is None, mi300
assert mi300["sm_clocks_mhz"] == [1700, 500] and mi300["memory_clocks_mhz"] == [1600, 400], mi300
print("devices ok")
PY
grep -q "second die" "$dir/devices.err" || fail "no MI250 warning: $(cat "$dir/devices.err")"
"$zeus" devices | grep -q "amdsmi: used, 3 GPUs" || fail "text report lacks the backend"

# 2. HIP_VISIBLE_DEVICES counts HIP indices (not AMD SMI's order); ROCR_VISIBLE_DEVICES first.
out=$(HIP_VISIBLE_DEVICES=2 "$zeus" devices --json)
"$py" -c 'import json,sys; g=json.loads(sys.argv[1])["gpus"]; assert [x["uuid"] for x in g]==["GPU-000000000000a300"], g' "$out"
out=$(ROCR_VISIBLE_DEVICES=2,0 HIP_VISIBLE_DEVICES=1 "$zeus" devices --json)
"$py" -c 'import json,sys; g=json.loads(sys.argv[1])["gpus"]; assert [x["physical_index"] for x in g]==[0], g' "$out"

# 3. zeus measure: energy of `sleep 1` = power x time (the second MI250X die is left out: its
# energy is in its sibling's).
"$zeus" measure --json --gpus 0,2 -- sleep 1 > "$dir/measure.json" 2> /dev/null
"$py" - "$dir/measure.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
t = m["time_s"]
for gpu, watts in (("0", 400.0), ("2", 250.0)):
    e = m["gpu_energy_j"][gpu]
    assert abs(e / (watts * t) - 1) < 0.03, (gpu, e, watts * t)
print("measure ok:", m["gpu_energy_j"], "time", t)
PY

# 4. zeus power: live power and temperature of the MI300X.
"$zeus" power --gpus 2 --duration 1 > "$dir/power.txt" 2>&1 || fail "zeus power: $(cat "$dir/power.txt")"
grep -q "250" "$dir/power.txt" || fail "zeus power lacks 250 W: $(cat "$dir/power.txt")"

# 5. Without AMD SMI, rocm_smi drives the same GPUs (in its own order) and says why.
out=$(ZEUS_AMDSMI_PATH="$dir/none.so" "$zeus" devices --json)
"$py" - "$out" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
assert [g["backend"] for g in d["gpus"]] == ["rocm_smi"] * 3, d["gpus"]
b = {x["backend"]: x for x in d["backends"]}
assert b["rocm_smi"]["used"] and not b["amdsmi"]["used"], b
assert "none.so" in b["amdsmi"]["detail"], b
PY

# 6. Energy counters that cannot be read at start-up: the GPUs are listed without one (the
# monitor samples their power), with the reason on stderr.
"$py" - "$dir/state.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["errors"]["amdsmi_get_energy_count"] = 14  # AMDSMI_STATUS_FILE_ERROR
json.dump(s, open(sys.argv[1], "w"))
PY
set +e
"$zeus" devices --json > "$dir/lost.json" 2> "$dir/lost.err"
code=$?
set -e
[ "$code" = 0 ] || fail "zeus devices with an unreadable counter exited $code: $(cat "$dir/lost.err")"
"$py" -c 'import json,sys; g=json.load(open(sys.argv[1]))["gpus"]; assert not any(x["energy_counter"] for x in g), g' "$dir/lost.json"
grep -q "amdsmi_get_energy_count failed" "$dir/lost.err" || fail "lost counter not explained: $(cat "$dir/lost.err")"
echo "amdsmi e2e ok"
