#!/usr/bin/env bash
# Hardware check (ctest label hw, `make hw`): zeus_cpp's PowerMonitor over the three GPU power
# domains (device_instant, device_average, memory_average) and TemperatureMonitor on GPU 0 of an
# NVIDIA GPU, during 30 s of PyTorch fp16 matmuls (issue 23, last Must-show item).
# Prints the mean power of each domain, the memory domain's share of the device's power, the
# update period the monitor inferred (and the interval at which the instant power was seen to
# change), and the temperature range. Checks: get_all_power_timelines() has upstream's shape
# (domain name -> GPU index -> list of (unix_s, W)), every timeline is non-empty, ordered and
# plausible (0 < W < 2000), the inferred period is within 1 ms..1 s, and get_energy over the
# window is within 5 % of a ZeusMonitor window (the energy counter) over the same span.
# Changes no GPU setting; exits non-zero when a check fails.
#
# --dry-run-fake: the same script on the fake NVML (build/release/fakes) with a CPU busy loop in
# place of torch and a 6 s window, to check the script itself on a machine without a GPU.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ZEUS_BUILD_DIR=${ZEUS_BUILD_DIR:-$here/../../build/release}
py=${PYTHON:-python3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export PYTHONPATH="$ZEUS_BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}"
export CUDA_VISIBLE_DEVICES=0  # zeus_cpp's GPU 0, cuda:0 and NVML's index 0 are the same GPU
unset ZEUSD_SOCK_PATH
if [ "${1:-}" = "--dry-run-fake" ]; then
  state=${HW_KIT_FAKE_STATE:-$dir/state.json}  # the kit's guard's file under run.sh --fake
  echo '{"devices": [{"name": "NVIDIA H100 80GB HBM3", "power_draw_mw": 310000,
    "memory_power_mw": 62000, "temperature_c": 47, "power_update_ms": 20}]}' > "$state"
  export ZEUS_FAKE_NVML_STATE="$state"
  export ZEUS_NVML_PATH="$ZEUS_BUILD_DIR/fakes/libnvidia-ml.so.1"
  export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/none"
  export HW_WORK_S=${HW_WORK_S:-6} HW_FAKE=1
else
  unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE
fi

cat > "$dir/check.py" <<'PY'
import math, os, statistics, sys, time

from zeus_cpp.monitor import PowerDomain, PowerMonitor, TemperatureMonitor, ZeusMonitor

FAKE = os.environ.get("HW_FAKE") == "1"
WORK_S = float(os.environ.get("HW_WORK_S", "30"))
DOMAINS = ["device_instant", "device_average", "memory_average"]
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


if FAKE:
    def sync():
        pass

    def step():
        end = time.perf_counter() + 0.05
        while time.perf_counter() < end:
            pass
else:
    import torch
    assert torch.cuda.is_available(), "torch sees no CUDA device"
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)

    def sync():
        torch.cuda.synchronize()

    def step():
        for _ in range(20):
            a @ b
        torch.cuda.synchronize()

try:
    power = PowerMonitor(gpu_indices=[0], power_domains=DOMAINS)  # update_period: inferred
except Exception as e:  # say which domains the GPU has before failing
    print("PowerMonitor over %s failed: %s" % (DOMAINS, e))
    print("domains this GPU supports:",
          [d.value for d in PowerMonitor(gpu_indices=[0]).measurement_domains])
    raise
temperature = TemperatureMonitor(gpu_indices=[0], update_period=0.5)
energy = ZeusMonitor(gpu_indices=[0], cpu_indices=[],
                     sync_execution_with=None if FAKE else "torch")
print("domains monitored: %s; update period inferred: %.4f s"
      % ([d.value for d in power.measurement_domains], power.update_period))

step()  # warm-up (cuBLAS handles, clocks up)
time.sleep(1.0)  # samples before the window, so that its start lies inside the timeline
energy.begin_window("work")
t0 = time.time()
steps = 0
while time.time() < t0 + WORK_S:
    step()
    steps += 1
sync()
t1 = time.time()
window = energy.end_window("work")
time.sleep(max(1.0, 3 * power.update_period))  # samples after the window's end
power.stop()
temperature.stop()
span = t1 - t0
print("workload: %d steps in %.2f s" % (steps, span))

# get_all_power_timelines(): {domain name: {gpu index: [(unix_s, W), ...]}}.
timelines = power.get_all_power_timelines(start_time=t0, end_time=t1)
check(isinstance(timelines, dict) and sorted(timelines) == sorted(DOMAINS),
      "get_all_power_timelines() keys are the domain names: %s" % sorted(timelines))
for domain in DOMAINS:
    per_gpu = timelines.get(domain)
    check(isinstance(per_gpu, dict) and list(per_gpu) == [0],
          "%s: keyed by GPU index: %s" % (domain, None if per_gpu is None else list(per_gpu)))
    samples = (per_gpu or {}).get(0, [])
    if FAKE and domain == "memory_average" and not samples:
        # The fake's memory power never changes, and a timeline records changes only (as
        # upstream's): its one sample lies before the window.
        whole = power.get_all_power_timelines()[domain].get(0, [])
        check(len(whole) > 0, "%s: %d samples over the whole run (fake: constant)" % (domain, len(whole)))
        continue
    check(isinstance(samples, list) and len(samples) > 0, "%s: %d samples" % (domain, len(samples)))
    check(all(isinstance(s, tuple) and len(s) == 2 and all(isinstance(x, float) for x in s)
              for s in samples), "%s: samples are (unix_s, W) float pairs" % domain)
    times = [s[0] for s in samples]
    check(all(x <= y for x, y in zip(times, times[1:])), "%s: samples in time order" % domain)
    check(all(t0 - 1 <= t <= t1 + 1 for t in times), "%s: samples inside the window" % domain)
    watts = [s[1] for s in samples]
    check(all(0 < w < 2000 for w in watts),
          "%s: 0 < W < 2000 (min %.1f, max %.1f W)" % (domain, min(watts or [0]), max(watts or [0])))

# Mean power per domain: the domain's energy over the window (trapezoid) / its length.
means = {}
for domain in DOMAINS:
    joules = power.get_energy(t0, t1, power_domain=domain)
    check(joules is not None and 0 in joules, "%s: get_energy over the window" % domain)
    means[domain] = (joules or {0: 0.0})[0] / span
instant_j = (power.get_energy(t0, t1) or {0: 0.0})[0]  # default domain: device_instant

# The update period: what the monitor inferred, and how often the instant power changed.
instant = timelines["device_instant"][0]
# (The timeline keeps a constant run's first and last samples: the instants at which the value
# changed are the samples that differ from the one before; their spacing is the change interval.)
change_times = [b[0] for a, b in zip(instant, instant[1:]) if b[1] != a[1]]
changes = [y - x for x, y in zip(change_times, change_times[1:]) if y > x]
observed = statistics.median(changes) if changes else float("nan")
check(0.001 <= power.update_period <= 1.0,
      "update period inferred %.4f s within 1 ms..1 s" % power.update_period)

temps = [c for _, c in temperature.get_temperature_timeline(0, t0 - 1, t1 + 1)[0]]
check(len(temps) > 0 and all(0 < c < 120 for c in temps),
      "temperature: %d readings within 0..120 C" % len(temps))

counter_j = window.gpu_energy[0]
ratio = instant_j / counter_j if counter_j > 0 else float("nan")
check(counter_j > 0 and abs(ratio - 1) <= 0.05,
      "PowerMonitor get_energy %.1f J vs ZeusMonitor %.1f J over %.2f s: ratio %.4f (within 5 %%)"
      % (instant_j, counter_j, window.time, ratio))

share_avg = means["memory_average"] / means["device_average"] if means["device_average"] else float("nan")
share_inst = means["memory_average"] / means["device_instant"] if means["device_instant"] else float("nan")
check(0 < share_avg < 1, "memory_average below device_average (share %.3f)" % share_avg)

print()
print("=== power domains on GPU 0 (%.1f s of fp16 matmuls) ===" % span)
for domain in DOMAINS:
    print("  %-15s mean %7.1f W   %5d samples" % (domain, means[domain], len(timelines[domain][0])))
print("  memory share    %.1f %% of device_average, %.1f %% of device_instant"
      % (100 * share_avg, 100 * share_inst))
print("  update period   %.4f s inferred; instant power changed every %.4f s (median of %d)"
      % (power.update_period, observed, len(changes)))
print("  temperature     %s..%s C (%d readings)" % (min(temps, default=None), max(temps, default=None),
                                                     len(temps)))
print("  energy          %.1f J PowerMonitor (device_instant) vs %.1f J ZeusMonitor: ratio %.4f"
      % (instant_j, counter_j, ratio))
if failures:
    print("FAILED: %d check(s): %s" % (len(failures), "; ".join(failures)))
    sys.exit(1)
PY
$py "$dir/check.py"
echo "hw power domains ok"
