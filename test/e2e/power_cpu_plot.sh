#!/usr/bin/env bash
# Issue 23 on the fake libnvidia-ml.so.1 and a fake powercap tree (ZEUS_POWERCAP_ROOT):
# zeus power --cpu shows each RAPL package's and DRAM's power from its energy counter; --plot
# draws a live graph in place on a terminal (a pty from script(1)) and falls back to the table
# with a note when stdout is a pipe; zeus measure --json keeps total_energy_j to the GPUs
# (upstream's meaning) beside total_energy_with_cpu_j; bad input is a one-line error.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
writer=""
trap '[ -n "$writer" ] && kill "$writer" 2> /dev/null; rm -rf "$dir"' EXIT
cat > "$dir/state.json" <<'JSON'
{"devices": [{"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "power_draw_mw": 350000,
              "min_limit_mw": 200000, "max_limit_mw": 700000, "temperature_c": 47}]}
JSON
pc="$dir/powercap"
mkdir -p "$pc/intel-rapl:0/intel-rapl:0:0"
echo package-0 > "$pc/intel-rapl:0/name"
echo dram > "$pc/intel-rapl:0/intel-rapl:0:0/name"
for zone in "$pc/intel-rapl:0" "$pc/intel-rapl:0/intel-rapl:0:0"; do
  echo 1000000 > "$zone/energy_uj"
  echo 262143328850 > "$zone/max_energy_range_uj"
done
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_POWERCAP_ROOT="$pc" ZEUS_ROCM_SMI_PATH="$dir/none.so"
unset CUDA_VISIBLE_DEVICES

source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

# The package counter moves 2 J every 0.1 s (20 W) while zeus power --cpu runs; DRAM stays.
# (Replaced whole, as sysfs answers a whole value: a reader never sees a half-written file.)
python3 - "$pc/intel-rapl:0/energy_uj" <<'PY' &
import os, sys, time
value = 1_000_000
for _ in range(200):
    time.sleep(0.1)
    value += 2_000_000
    with open(sys.argv[1] + ".new", "w") as f:
        f.write(f"{value}\n")
    os.replace(sys.argv[1] + ".new", sys.argv[1])
PY
writer=$!
for _ in $(seq 100); do  # until the writer runs (python's start-up is not instant)
  [ "$(cat "$pc/intel-rapl:0/energy_uj")" != 1000000 ] && break
  sleep 0.05
done
"$zeus" power --cpu --interval 0.2 --duration 1.2 --json > "$dir/power.jsonl"
kill "$writer" 2> /dev/null || true
wait "$writer" 2> /dev/null || true
writer=""
python3 - "$dir/power.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
readings, summary = rows[:-1], rows[-1]
assert len(readings) >= 5, readings
assert all(r["power_w"] == {"0": 350.0} and r["temperature_c"] == {"0": 47} for r in readings)
package = [r["domains"]["cpu_package_average"]["0"] for r in readings[2:]]
dram = [r["domains"]["cpu_dram_average"]["0"] for r in readings[2:]]
assert all(w is not None and 8 < w < 40 for w in package), package  # ~20 W
assert all(w == 0.0 for w in dram), dram
assert summary["summary"] is True
gpu = sum(summary["gpu_energy_j"].values())
cpu = sum(summary["cpu_energy_j"].values()) + sum(summary["dram_energy_j"].values())
assert cpu > 5, summary
assert abs(summary["total_energy_j"] - gpu) < 1e-6, summary
assert abs(summary["total_energy_with_cpu_j"] - (gpu + cpu)) < 1e-6, summary
print("power --cpu ok:", package)
PY

# zeus devices names the CPU domains and shows the GPU's temperature.
"$zeus" devices --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["cpus"][0]["power_domains"] == ["cpu_package_average", "cpu_dram_average"], d["cpus"]
assert d["gpus"][0]["temperature_c"] == 47, d["gpus"]'
"$zeus" devices | grep -q "power domains: cpu_package_average, cpu_dram_average" \
  || fail "zeus devices does not name the CPU domains"
"$zeus" devices | grep -q "temperature *47 C" || fail "zeus devices does not show the temperature"

# zeus measure: total_energy_j is the GPUs' alone (upstream's), the sum has its own key.
"$zeus" measure --json -- python3 -c "open('$pc/intel-rapl:0/energy_uj', 'w').write('9000000000\n'); open('$pc/intel-rapl:0/intel-rapl:0:0/energy_uj', 'w').write('3000000\n')" > "$dir/measure.json"
python3 - "$dir/measure.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
gpu = sum(m["gpu_energy_j"].values())
assert abs(m["total_energy_j"] - gpu) < 1e-6, m
cpu, dram = m["cpu_energy_j"]["0"], m["dram_energy_j"]["0"]
assert dram > 0.5 and cpu > 1000, m
assert abs(m["total_energy_with_cpu_j"] - (gpu + cpu + dram)) < 1e-6, m  # DRAM added, not inside
assert abs(m["average_power_w"] - gpu / m["time_s"]) < 1e-6, m
assert abs(m["average_power_with_cpu_w"] - (gpu + cpu + dram) / m["time_s"]) < 1e-6, m
print("measure totals ok")
PY

# --plot on a terminal: frames redrawn in place (cursor up, line cleared) with the GPU's line.
COLUMNS=60 script -qec "$zeus power --plot --interval 0.1 --duration 0.35 --cpu" /dev/null \
  > "$dir/plot.txt"
grep -q $'\x1b\[2KGPU 0  350.0 W  47 C  (graph 0-700 W)' "$dir/plot.txt" \
  || fail "no GPU line in the graph: $(head -c 400 "$dir/plot.txt" | cat -A)"
grep -q $'\x1b\[[0-9]*A' "$dir/plot.txt" || fail "frames are not redrawn in place"
grep -q "CPU 0 package" "$dir/plot.txt" || fail "no CPU package graph with --cpu"
grep -q "zeus power: totals" "$dir/plot.txt" || fail "no totals after the graph"
# --plot into a pipe: a note on stderr, the table on stdout, no escapes.
"$zeus" power --plot --interval 0.1 --duration 0.25 2> "$dir/err.txt" | cat > "$dir/table.txt"
grep -q "stdout is not one" "$dir/err.txt" || fail "no fallback note: $(cat "$dir/err.txt")"
grep -q "gpu0_c" "$dir/table.txt" || fail "no table after the note"
grep -q $'\x1b' "$dir/table.txt" && fail "escapes written to a pipe"

# Bad input: one line naming the fix.
refused() {  # expected exit code, what stderr must say, zeus arguments...
  local code=$1 text=$2; shift 2
  set +e; "$zeus" "$@" > /dev/null 2> "$dir/err.txt"; local got=$?; set -e
  [ "$got" = "$code" ] && grep -q -- "$text" "$dir/err.txt" \
    || fail "zeus $* gave rc $got: $(cat "$dir/err.txt")"
  [ "$(wc -l < "$dir/err.txt")" -le 2 ] || fail "zeus $*: more than a short error"
}
refused 2 "add --cpu" power --duration 0.1 --domain cpu_package_average
refused 2 "unknown power domain 'cpu_peak'" power --duration 0.1 --domain cpu_peak
refused 2 "excludes" power --duration 0.1 --plot --json
refused 2 "plot-rows" power --duration 0.1 --plot-rows 0
ZEUS_POWERCAP_ROOT="$dir/none" refused 1 "needs root since Linux 5.10" power --duration 0.1 --cpu

# --help teaches: the domains, --cpu, --plot and an example of each.
"$zeus" power --help > "$dir/help.txt"
for text in device_average memory_average cpu_package_average cpu_dram_average "--plot" \
    "not a terminal\|not one" "zeus power --plot"; do
  grep -q -- "$text" "$dir/help.txt" || fail "zeus power --help does not mention $text"
done
echo "power --cpu/--plot e2e ok"
