#!/usr/bin/env bash
# zeus measure --carbon / --price: on a 300 W fake GPU, a command's emissions and cost from CSV
# series, charged interval by interval: a window across a boundary 1 s into the run is split there
# and each part charged at its own value; a series with a gap leaves the command measured and its
# carbon unknown (exit 0); a bad provider is refused before the command runs.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo '{"devices": [{"power_draw_mw": 300000}]}' > "$dir/state.json"
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES

# Carbon: 400 g/kWh until 1 s from now, then 100 g/kWh (durations are minutes: 1 s = 1/60).
python3 - "$dir" <<'PY'
import datetime, sys, time
d = sys.argv[1]
now = time.time()
def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat(timespec="milliseconds")
with open(f"{d}/carbon.csv", "w") as f:
    f.write("location,timestamp,duration,value\n")
    f.write(f"TEST,{iso(now - 600)},{601 / 60},400\n")
    f.write(f"TEST,{iso(now + 1)},60,100\n")
    f.write(f"OTHER,{iso(now - 600)},70,999\n")
with open(f"{d}/price.csv", "w") as f:
    f.write("timestamp,duration,value\n")
    f.write(f"{iso(now - 600)},60,0.25\n")
with open(f"{d}/gappy.csv", "w") as f:
    f.write("timestamp,duration,value\n")
    f.write(f"{iso(now - 600)},5,300\n")
PY
"$zeus" measure --json --carbon "csv:$dir/carbon.csv:TEST" --price "csv:$dir/price.csv" \
  -- sleep 2 > "$dir/out.json"
python3 - "$dir/out.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
e = m["gpu_energy_j"]["0"]
c, p = m["carbon"], m["cost"]
assert c["unit"] == "gCO2eq" and p["unit"] == "$", (c, p)
assert c["complete"] and p["complete"], m
# About 1 s at 400 g/kWh, then about 1 s at 100: between the two flat charges, nearer the mean.
low, high = e / 3.6e6 * 100, e / 3.6e6 * 400
assert low * 1.5 < c["gpu"]["0"] < high * 0.9, (c, e)
assert abs(c["total"] - c["gpu"]["0"]) < 1e-12
assert abs(p["gpu"]["0"] - e / 3.6e6 * 0.25) < 1e-9 * max(1, e), (p, e)
print("ok", c["gpu"]["0"], p["gpu"]["0"])
PY

# A gap: measured, carbon unknown, exit 0.
"$zeus" measure --json --carbon "csv:$dir/gappy.csv" -- true > "$dir/gap.json"
python3 - "$dir/gap.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["exit_code"] == 0 and m["gpu_energy_j"]["0"] >= 0, m
assert m["carbon"]["complete"] is False and m["carbon"]["total"] is None, m
assert "no value" in m["carbon"]["unknown_reason"], m
PY
"$zeus" measure --carbon "csv:$dir/gappy.csv" -- true 2> "$dir/gap.txt"
grep -q "carbon        unknown" "$dir/gap.txt" || { cat "$dir/gap.txt"; exit 1; }

# Bad providers: refused before the command runs.
if "$zeus" measure --carbon "wind:1,2" -- touch "$dir/ran" 2> "$dir/bad.txt"; then exit 1; fi
[ ! -e "$dir/ran" ] || { echo "the command ran"; exit 1; }
grep -q "electricitymaps:LAT,LON" "$dir/bad.txt" || { cat "$dir/bad.txt"; exit 1; }
if "$zeus" measure --carbon "csv:$dir/carbon.csv" -- true 2> "$dir/bad.txt"; then exit 1; fi
grep -q "several locations" "$dir/bad.txt" || { cat "$dir/bad.txt"; exit 1; }
echo ok
