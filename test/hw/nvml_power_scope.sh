#!/usr/bin/env bash
# Hardware check (ctest label hw, `make hw`): the power scope NVML answers on a real NVIDIA GPU
# (issue 25, last Must-show item), on GPU 0.
# 1. `zeus devices --json` reports the GPU's power_scope ("gpu" or "module").
# 2. Read outside zeus (ctypes -> libnvidia-ml.so.1): nvmlDeviceGetFieldValues for
#    NVML_FI_DEV_POWER_INSTANT (186) and NVML_FI_DEV_POWER_AVERAGE (185) at scope GPU (0) and
#    MODULE (1) (and the average at MEMORY (2), for a look); prints which scopes answer. zeus's
#    scope must be the first that answers the instant field, GPU first, then module ("gpu" when
#    neither does: zeus then reads nvmlDeviceGetPowerUsage).
# 3. `zeus measure --json` of a 10 s PyTorch matmul workload: its energy against the NVML
#    total-energy counter read outside (ratio 0.9..1.001, as nvml_real.sh), and within 10 % of the
#    integral of the chosen scope's instant power, sampled by this script at 10 Hz meanwhile.
# Prints the numbers it compared; changes no GPU setting; exits non-zero when a check fails.
#
# --dry-run-fake: the same on the fake NVML (build/release/fakes), with a sleep for a workload
# (HW_FAKE_SCOPES='["module"]' for a module-only device), to check the script without a GPU.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ZEUS_BUILD_DIR=${ZEUS_BUILD_DIR:-$here/../../build/release}
ZEUS_BIN=${ZEUS_BIN:-$ZEUS_BUILD_DIR/bin}
zeus="$ZEUS_BIN/zeus"
py=${PYTHON:-python3}
dir=$(mktemp -d)
sampler_pid=""
cleanup() {
  if [ -n "$sampler_pid" ]; then kill -TERM "$sampler_pid" 2>/dev/null || true; wait "$sampler_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export CUDA_VISIBLE_DEVICES=0  # zeus's GPU 0, cuda:0 and NVML's index 0 are the same GPU
unset ZEUSD_SOCK_PATH
if [ "${1:-}" = "--dry-run-fake" ]; then
  scopes=${HW_FAKE_SCOPES:-'["gpu"]'}
  state=${HW_KIT_FAKE_STATE:-$dir/state.json}  # the kit's guard's file under run.sh --fake
  echo '{"devices": [{"name": "NVIDIA H100 80GB HBM3", "power_draw_mw": 420000,
    "memory_power_mw": 70000, "module_cpu_power_mw": 90000, "power_scopes": '"$scopes"'}]}' \
    > "$state"
  export ZEUS_FAKE_NVML_STATE="$state"
  export ZEUS_NVML_PATH="$ZEUS_BUILD_DIR/fakes/libnvidia-ml.so.1"
  export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/none"
  export HW_NVML_LIB="$ZEUS_NVML_PATH"
  printf 'import time\ntime.sleep(3)\n' > "$dir/work.py"
else
  unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE
  export HW_NVML_LIB=libnvidia-ml.so.1
  cat > "$dir/work.py" <<'PY'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
end = time.time() + 10
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
PY
fi

# The NVML reads, shared by the steps below: `nvml.py fields`, `nvml.py counter` (mJ),
# `nvml.py sample SCOPE OUT STOPFILE` (instant power at 10 Hz until STOPFILE exists).
cat > "$dir/nvml.py" <<'PY'
import ctypes, os, sys, time

FI_POWER_AVERAGE, FI_POWER_INSTANT = 185, 186
SCOPES = {"gpu": 0, "module": 1, "memory": 2}


class Value(ctypes.Union):  # nvmlValue_t
    _fields_ = [("dVal", ctypes.c_double), ("uiVal", ctypes.c_uint), ("ulVal", ctypes.c_ulong),
                ("ullVal", ctypes.c_ulonglong), ("sllVal", ctypes.c_longlong),
                ("siVal", ctypes.c_int), ("usVal", ctypes.c_ushort)]


class FieldValue(ctypes.Structure):  # nvmlFieldValue_t, as in nvml.h
    _fields_ = [("fieldId", ctypes.c_uint), ("scopeId", ctypes.c_uint),
                ("timestamp", ctypes.c_longlong), ("latencyUsec", ctypes.c_longlong),
                ("valueType", ctypes.c_int), ("nvmlReturn", ctypes.c_int), ("value", Value)]


assert ctypes.sizeof(FieldValue) == 40, ctypes.sizeof(FieldValue)
nvml = ctypes.CDLL(os.environ.get("HW_NVML_LIB", "libnvidia-ml.so.1"))
assert nvml.nvmlInit_v2() == 0, "nvmlInit_v2 failed"
handle = ctypes.c_void_p()
assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) == 0


def field_mw(field_id, scope_id):
    """(mW or None, why): one field at one scope."""
    f = FieldValue(fieldId=field_id, scopeId=scope_id)
    rc = nvml.nvmlDeviceGetFieldValues(handle, 1, ctypes.byref(f))
    if rc != 0:
        return None, "call returned %d" % rc
    if f.nvmlReturn != 0:
        return None, "nvmlReturn %d" % f.nvmlReturn
    v = f.value
    value = {0: lambda: v.dVal, 1: lambda: v.uiVal, 2: lambda: v.ulVal, 3: lambda: v.ullVal,
             4: lambda: v.sllVal, 5: lambda: v.siVal, 6: lambda: v.usVal}.get(f.valueType)
    if value is None:
        return None, "valueType %d" % f.valueType
    return float(value()), "ok"


def power_usage_mw():
    mw = ctypes.c_uint()
    assert nvml.nvmlDeviceGetPowerUsage(handle, ctypes.byref(mw)) == 0
    return float(mw.value)


what = sys.argv[1]
if what == "fields":
    answers = {}
    for name, field_id in (("instant", FI_POWER_INSTANT), ("average", FI_POWER_AVERAGE)):
        for scope in ("gpu", "module", "memory"):
            if scope == "memory" and name == "instant":
                continue
            mw, why = field_mw(field_id, SCOPES[scope])
            answers[(name, scope)] = mw is not None
            print("  field %d (%s) scope %-6s: %s" % (field_id, name, scope,
                  "%.1f W" % (mw / 1000) if mw is not None else "no answer (%s)" % why))
    first = next((s for s in ("gpu", "module") if answers[("instant", s)]), "none")
    print("first scope answering the instant field:", first)
    with open(sys.argv[2], "w") as out:
        out.write(first)
elif what == "counter":
    energy = ctypes.c_ulonglong()
    assert nvml.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(energy)) == 0
    print(energy.value)
elif what == "sample":
    scope, out_path, stop = sys.argv[2], sys.argv[3], sys.argv[4]
    with open(out_path, "w") as out:
        next_t = time.monotonic()
        while not os.path.exists(stop):
            if scope == "none":
                mw = power_usage_mw()
            else:
                mw, why = field_mw(FI_POWER_INSTANT, SCOPES[scope])
                assert mw is not None, "the %s scope stopped answering: %s" % (scope, why)
            out.write("%.6f %.3f\n" % (time.time(), mw / 1000))
            out.flush()
            next_t += 0.1
            time.sleep(max(0.0, next_t - time.monotonic()))
PY

"$zeus" devices --json > "$dir/devices.json"
zeus_scope=$($py -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["gpus"], "no GPU found: %s" % d["backends"]
g = d["gpus"][0]
print(g["power_scope"])
print("zeus devices: %s (%s), backend %s, power_scope %s" % (g["name"], g["architecture"],
      g["backend"], g["power_scope"]), file=sys.stderr)' "$dir/devices.json")
echo "NVML power fields on GPU 0, read outside zeus:"
$py "$dir/nvml.py" fields "$dir/first_scope"
first=$(cat "$dir/first_scope")
expected=$([ "$first" = module ] && echo module || echo gpu)
[ "$zeus_scope" = "$expected" ] || fail "zeus reports power_scope '$zeus_scope'; the first scope NVML answers is '$first'"

$py "$dir/nvml.py" sample "$first" "$dir/samples.txt" "$dir/stop" &
sampler_pid=$!
sleep 0.5  # a few samples before the measurement starts
before=$($py "$dir/nvml.py" counter)
t_start=$(date +%s.%N)
"$zeus" measure --gpus 0 --json -- $py "$dir/work.py" > "$dir/measure.json"
t_end=$(date +%s.%N)
after=$($py "$dir/nvml.py" counter)
sleep 0.3
touch "$dir/stop"
wait "$sampler_pid" || fail "the 10 Hz sampler failed"
sampler_pid=""

$py - "$dir/measure.json" "$before" "$after" "$dir/samples.txt" "$t_start" "$t_end" "$zeus_scope" "$first" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
outside_j = (int(sys.argv[3]) - int(sys.argv[2])) / 1000.0
zeus_j = m["gpu_energy_j"]["0"]
t_start, t_end = float(sys.argv[5]), float(sys.argv[6])
samples = [tuple(map(float, line.split())) for line in open(sys.argv[4]) if line.strip()]


def at(t):  # linear interpolation of the sampled power
    for (ta, wa), (tb, wb) in zip(samples, samples[1:]):
        if ta <= t <= tb:
            return wa if tb == ta else wa + (wb - wa) * (t - ta) / (tb - ta)
    raise SystemExit("FAIL: the samples do not cover %.3f (%.3f..%.3f)" % (t, samples[0][0], samples[-1][0]))


points = [(t_start, at(t_start))] + [s for s in samples if t_start < s[0] < t_end] + [(t_end, at(t_end))]
sampled_j = sum((tb - ta) * (wa + wb) / 2 for (ta, wa), (tb, wb) in zip(points, points[1:]))
counter_ratio = zeus_j / outside_j
sampled_ratio = zeus_j / sampled_j
watts = [w for _, w in points]
print()
print("=== NVML power scope on GPU 0 ===")
print("  zeus power_scope       %s (first scope NVML answers: %s)" % (sys.argv[7], sys.argv[8]))
print("  zeus measure           %.1f J in %.2f s (%.1f W)" % (zeus_j, m["time_s"], zeus_j / m["time_s"]))
print("  NVML counter outside   %.1f J over %.2f s: ratio %.4f (0.9..1.001)"
      % (outside_j, t_end - t_start, counter_ratio))
print("  10 Hz instant power    %.1f J from %d samples (%.1f..%.1f W): ratio %.4f (within 10 %%)"
      % (sampled_j, len(points), min(watts), max(watts), sampled_ratio))
# The outside readings also span zeus's own start and exit (idle power for a fraction of a second).
assert 0.9 <= counter_ratio <= 1.0 + 1e-3, "FAIL: zeus and the counter disagree"
assert len(points) >= 5 * (t_end - t_start), "FAIL: too few samples: %d" % len(points)
assert abs(sampled_ratio - 1) <= 0.10, "FAIL: zeus and the sampled instant power disagree"
PY
echo "hw nvml power scope ok"
