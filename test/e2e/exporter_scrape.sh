#!/usr/bin/env bash
# zeus exporter scraped over real HTTP, over the fake libnvidia-ml.so.1 and a fake powercap tree:
# metric names, types and labels, values matching the fake devices, counters monotone between
# scrapes, a clean stop on SIGTERM, and one-line errors for bad options.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
py=/usr/bin/python3
dir=$(mktemp -d)
exporter_pid=""
cleanup() {
  if [ -n "$exporter_pid" ]; then kill -TERM "$exporter_pid" 2>/dev/null || true; wait "$exporter_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

cat > "$dir/state.json" <<'JSON'
{"devices": [
  {"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-e2e-h100", "architecture": 9, "power_draw_mw": 350000,
   "min_limit_mw": 200000, "max_limit_mw": 700000, "limit_mw": 500000},
  {"name": "Tesla P100-PCIE-16GB", "uuid": "GPU-e2e-p100", "architecture": 4, "power_draw_mw": 200000,
   "min_limit_mw": 125000, "max_limit_mw": 250000}]}
JSON
rapl="$dir/powercap/intel-rapl:0"
mkdir -p "$rapl/intel-rapl:0:0"
echo package-0 > "$rapl/name"; echo 1000000 > "$rapl/energy_uj"; echo 262143328850 > "$rapl/max_energy_range_uj"
echo dram > "$rapl/intel-rapl:0:0/name"; echo 500000 > "$rapl/intel-rapl:0:0/energy_uj"
echo 262143328850 > "$rapl/intel-rapl:0:0/max_energy_range_uj"
export ZEUS_FAKE_NVML_STATE="$dir/state.json"
export ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/powercap"
unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH

"$zeus" exporter --port 0 --bind 127.0.0.1 --interval 0.1 > "$dir/out.txt" 2> "$dir/err.txt" &
exporter_pid=$!
for _ in $(seq 100); do grep -q "serving" "$dir/out.txt" 2>/dev/null && break; sleep 0.05; done
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$dir/out.txt")
[ -n "$port" ] || fail "no port printed: $(cat "$dir/out.txt" "$dir/err.txt")"

curl -sf "http://127.0.0.1:$port/metrics" > "$dir/scrape1.txt" || fail "first scrape"
echo 4000000 > "$rapl/energy_uj"  # +3 J on the package
sleep 0.5
curl -sf "http://127.0.0.1:$port/metrics" > "$dir/scrape2.txt" || fail "second scrape"
"$py" - "$dir/scrape1.txt" "$dir/scrape2.txt" "$dir/state.json" <<'PY'
import json, re, sys

def parse(path):
    types, samples = {}, {}
    for line in open(path):
        line = line.strip()
        if line.startswith("# TYPE"):
            _, _, name, kind = line.split()
            types[name] = kind
        elif line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            name, _, labels = series.partition("{")
            samples[(name, tuple(sorted(re.findall(r'(\w+)="([^"]*)"', labels))))] = float(value)
    return types, samples

types, first = parse(sys.argv[1])
_, second = parse(sys.argv[2])
types = {name: kind for name, kind in types.items() if name.startswith("zeus_")}
assert types == {"zeus_gpu_energy_joules_total": "counter", "zeus_gpu_power_watts": "gauge",
                 "zeus_gpu_power_limit_watts": "gauge", "zeus_cpu_energy_joules_total": "counter"}, types
h100 = (("gpu", "0"), ("model", "NVIDIA H100 80GB HBM3"), ("uuid", "GPU-e2e-h100"))
p100 = (("gpu", "1"), ("model", "Tesla P100-PCIE-16GB"), ("uuid", "GPU-e2e-p100"))
package = (("package", "0"), ("zone", "package"))
dram = (("package", "0"), ("zone", "dram"))
# Values match the fake devices.
assert first[("zeus_gpu_power_watts", h100)] == 350.0, first
assert first[("zeus_gpu_power_watts", p100)] == 200.0, first
assert first[("zeus_gpu_power_limit_watts", h100)] == 500.0, first
assert first[("zeus_gpu_power_limit_watts", p100)] == 250.0, first
# Counters are monotone; the H100 counter grows at ~350 W, the P100 (no counter) is integrated.
for key in [("zeus_gpu_energy_joules_total", h100), ("zeus_gpu_energy_joules_total", p100),
            ("zeus_cpu_energy_joules_total", package), ("zeus_cpu_energy_joules_total", dram)]:
    assert second[key] >= first[key], (key, first[key], second[key])
gained_h100 = second[("zeus_gpu_energy_joules_total", h100)] - first[("zeus_gpu_energy_joules_total", h100)]
gained_p100 = second[("zeus_gpu_energy_joules_total", p100)] - first[("zeus_gpu_energy_joules_total", p100)]
assert gained_h100 > 0 and gained_p100 > 0, (gained_h100, gained_p100)
assert 0.5 < gained_h100 / gained_p100 * 200 / 350 < 2.0, (gained_h100, gained_p100)
assert second[("zeus_cpu_energy_joules_total", package)] - first[("zeus_cpu_energy_joules_total", package)] == 3.0
# The exported H100 counter is never ahead of the device's own counter (read afterwards).
# The fake's counter is energy_mj at energy_time_ns (absent: the file's mtime) plus 350 W since then.
import os, time
state = json.load(open(sys.argv[3]))["devices"][0]
since_ns = state.get("energy_time_ns", os.stat(sys.argv[3]).st_mtime_ns)
device_now_j = (state.get("energy_mj", 0.0) + 350.0 * (time.time_ns() - since_ns) / 1e6) / 1000.0
assert second[("zeus_gpu_energy_joules_total", h100)] <= device_now_j + 1e-6, (second, device_now_j)
print("exporter scrape ok: H100 +%.1f J, P100 +%.1f J" % (gained_h100, gained_p100))
PY

kill -TERM "$exporter_pid"
wait "$exporter_pid" || fail "exporter exited with $?"
exporter_pid=""
grep -q "stopped" "$dir/out.txt" || fail "no clean stop"

# Bad options: one line naming the problem.
if "$zeus" exporter --port 0 --interval 0 > /dev/null 2> "$dir/bad.txt"; then fail "interval 0 accepted"; fi
grep -q "interval" "$dir/bad.txt" || fail "bad interval message: $(cat "$dir/bad.txt")"
if "$zeus" exporter --port 0 --push ftp://x > /dev/null 2> "$dir/bad.txt"; then fail "ftp push accepted"; fi
grep -q "Pushgateway URL" "$dir/bad.txt" || fail "bad push message: $(cat "$dir/bad.txt")"
echo "exporter e2e ok"
