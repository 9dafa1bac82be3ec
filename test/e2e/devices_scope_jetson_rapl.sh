#!/usr/bin/env bash
# zeus devices / zeus measure on the fakes of the device layer: a Grace Hopper GPU's module power
# scope (fake NVML), a Jetson's rails and soc_energy (fake Orin and Xavier sysfs trees), and RAPL
# zones of two sockets listed in reverse and of a multi-die package (fake powercap trees).
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
put() { mkdir -p "$(dirname "$1")"; echo "$2" > "$1"; }

export ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1" ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/no_rapl" ZEUS_SYSFS_ROOT="$dir/empty_sysfs"
unset CUDA_VISIBLE_DEVICES
mkdir -p "$dir/no_rapl" "$dir/empty_sysfs"

# 1. Grace Hopper next to an H100: scopes in --json and in the text.
cat > "$dir/state.json" <<'JSON'
{"devices": [{"name": "NVIDIA GH200 480GB", "power_draw_mw": 400000, "power_scopes": ["module"],
              "module_cpu_power_mw": 120000},
             {"power_draw_mw": 300000}]}
JSON
export ZEUS_FAKE_NVML_STATE="$dir/state.json"
"$zeus" devices --json > "$dir/gh.json"
python3 - "$dir/gh.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
g0, g1 = report["gpus"]
assert g0["backend"] == "nvml" and g0["power_scope"] == "module", g0
assert g0["power_w"] == 520.0, g0  # GPU 400 W + Grace 120 W
assert g1["backend"] == "nvml" and g1["power_scope"] == "gpu" and g1["power_w"] == 300.0, g1
assert report["soc"] is None, report["soc"]
jetson = [b for b in report["backends"] if b["backend"] == "jetson"]
assert jetson and not jetson[0]["used"] and "not an NVIDIA Jetson" in jetson[0]["detail"], jetson
PY
"$zeus" devices > "$dir/gh.txt" 2> /dev/null
grep -q "power scope      module (the whole C2C module" "$dir/gh.txt" || fail "no module scope in text"
grep -q "power scope      gpu" "$dir/gh.txt" || fail "no gpu scope in text"
"$zeus" measure --json -- true > "$dir/nosoc.json" 2> /dev/null
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["soc_energy"] is None, m' "$dir/nosoc.json"

# 2. A Jetson AGX Orin (hwmon: mV x mA), no GPU through NVML.
echo '{"devices": []}' > "$dir/state.json"
orin="$dir/orin/bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3"
i=1
for rail in VDD_GPU_SOC:1500 VDD_CPU_CV:600 VIN_SYS_5V0:3000; do  # 5 V x mA: 7.5, 3 and 15 W
  put "$orin/in${i}_label" "${rail%%:*}"; put "$orin/in${i}_input" 5000; put "$orin/curr${i}_input" "${rail##*:}"
  i=$((i + 1))
done
export ZEUS_SYSFS_ROOT="$dir/orin"
"$zeus" devices --json > "$dir/orin.json"
"$zeus" measure --json -- sleep 0.5 > "$dir/orin_measure.json" 2> /dev/null
python3 - "$dir/orin.json" "$dir/orin_measure.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
soc = report["soc"]
assert soc["backend"] == "jetson", soc
assert soc["rails"] == ["cpu: VDD_CPU_CV", "gpu: VDD_GPU_SOC", "total: VIN_SYS_5V0"], soc
m = json.load(open(sys.argv[2]))
e, t = m["soc_energy"], m["time_s"]
for key, watts in (("gpu_energy_mj", 7.5), ("cpu_energy_mj", 3.0), ("total_energy_mj", 15.0)):
    # mJ = W x s x 1000, within the window's time.
    assert 0.9 * watts * 0.5 * 1000 < e[key] <= watts * t * 1000 * 1.001, (key, e[key], t)
print("orin soc energy ok:", e)
PY

# 3. A Jetson AGX Xavier (iio: mW): CPU and GPU rails, no total.
xavier="$dir/xavier/bus/i2c/drivers/ina3221x/1-0040/iio:device0"
put "$xavier/rail_name_0" GPU; put "$xavier/in_power0_input" 4000
put "$xavier/rail_name_1" CPU; put "$xavier/in_power1_input" 2000
put "$xavier/rail_name_2" SOC; put "$xavier/in_power2_input" 1000
export ZEUS_SYSFS_ROOT="$dir/xavier"
"$zeus" measure --json -- sleep 0.2 > "$dir/xavier.json" 2> /dev/null
python3 - "$dir/xavier.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["soc_energy"]
assert e["total_energy_mj"] is None and e["gpu_energy_mj"] > 4000 * 0.18, e
PY

# 4. RAPL: two sockets listed in reverse, and a multi-die package. The CLI lists and measures
# every package zone (zeus measure --cpus takes them all); it never picks the zone of the socket a
# process runs on, so what is checked here is that each zone is found under its own name, in zone
# order. The per-process choice (package-N / package-N-die-D from the CPU's topology) is
# get_current_rapl_zone_id(), tested in src/device/rapl/rapl_zone_id_test.cc and
# python/tests/test_devices_superchip.py.
export ZEUS_SYSFS_ROOT="$dir/empty_sysfs"
for zone in 0:package-1 1:package-0; do
  put "$dir/rapl2/intel-rapl:${zone%%:*}/name" "${zone##*:}"
  put "$dir/rapl2/intel-rapl:${zone%%:*}/energy_uj" 1000
  put "$dir/rapl2/intel-rapl:${zone%%:*}/max_energy_range_uj" 262143328850
done
ZEUS_POWERCAP_ROOT="$dir/rapl2" "$zeus" devices --json > "$dir/rapl2.json"
python3 - "$dir/rapl2.json" <<'PY'
import json, sys
cpus = json.load(open(sys.argv[1]))["cpus"]
assert [(c["backend"], c["name"]) for c in cpus] == [("rapl", "package-1"), ("rapl", "package-0")], cpus
PY
# One package with two dies, one zone per die (listed die 1 first); only die 0 has a DRAM zone.
for zone in 0:package-0-die-1 1:package-0-die-0; do
  put "$dir/rapl_dies/intel-rapl:${zone%%:*}/name" "${zone##*:}"
  put "$dir/rapl_dies/intel-rapl:${zone%%:*}/energy_uj" 1000
  put "$dir/rapl_dies/intel-rapl:${zone%%:*}/max_energy_range_uj" 262143328850
done
put "$dir/rapl_dies/intel-rapl:1/intel-rapl:1:0/name" dram
put "$dir/rapl_dies/intel-rapl:1/intel-rapl:1:0/energy_uj" 500
put "$dir/rapl_dies/intel-rapl:1/intel-rapl:1:0/max_energy_range_uj" 65712999613
ZEUS_POWERCAP_ROOT="$dir/rapl_dies" "$zeus" devices --json > "$dir/rapl_dies.json"
python3 - "$dir/rapl_dies.json" <<'PY'
import json, sys
cpus = json.load(open(sys.argv[1]))["cpus"]
assert [(c["index"], c["name"], c["dram"], c["readable"]) for c in cpus] == [
    (0, "package-0-die-1", False, True), (1, "package-0-die-0", True, True)], cpus
PY
echo "devices scope/jetson/rapl e2e ok"
