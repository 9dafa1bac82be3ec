#!/usr/bin/env bash
# The GPU check kit (make hw-kit: build/hw-kit) run here as it runs on a GPU host, on the fake
# NVML it carries: ./run.sh --fake into a fresh folder, within the bounds it keeps there (under
# 60 MiB, under 9 minutes), with every check passing and one JSON result and log per check; and
# the GPU guard restores a changed power limit and locked clocks.
set -euo pipefail
kit=${ZEUS_KIT_DIR:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x "$kit/run.sh" ] || fail "no kit in $kit: run make hw-kit"
size=$(du -sm "$kit" | cut -f1)
[ "$size" -le 60 ] || fail "the kit is $size MiB, over 60"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
copy="$dir/hw kit"   # a path with a space, away from the build tree
cp -a "$kit" "$copy"
unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE PYTHONPATH ZEUS_BIN ZEUS_BUILD_DIR
start=$(date +%s)
show_logs() {  # a failed check's whole log (its FAIL line and traceback), the others' last lines
  local log
  for log in "$dir"/out/*.log; do
    if grep -qs '"status": "pass"' "${log%.log}.json"; then
      echo "==> $log (passed; last lines) <=="; tail -n 4 "$log"
    else
      echo "==> $log (whole) <=="; cat "$log"
    fi
  done
}
PYTHON=/usr/bin/python3 timeout 540 "$copy/run.sh" --fake "$dir/out" || { show_logs; fail "run.sh --fake failed"; }
took=$(( $(date +%s) - start ))
/usr/bin/python3 - "$dir/out" <<'PY' || fail "results"
import json, os, sys
out = sys.argv[1]
s = json.load(open(os.path.join(out, "summary.json")))
names = [c["check"] for c in s["checks"]]
assert s["fake"] and s["failed"] == 0 and s["passed"] == 8, s
for name in names:
    c = json.load(open(os.path.join(out, name + ".json")))
    assert c["status"] == "pass" and c["output_tail"], c
    assert os.path.getsize(os.path.join(out, name + ".log")) > 0, name
print("kit --fake:", ", ".join(f"{c['check']} {c['seconds']:.0f}s" for c in s["checks"]))
PY
echo "kit --fake passed in ${took} s from a ${size} MiB kit"

# The guard: a power limit and locked clocks changed behind the kit's back are put back.
echo '{"devices": [{"limit_mw": 300000}]}' > "$dir/state.json"
export ZEUS_NVML_PATH="$copy/tree/fakes/libnvidia-ml.so.1" ZEUS_FAKE_NVML_STATE="$dir/state.json"
/usr/bin/python3 "$copy/gpu_state.py" save "$dir/saved.json"
/usr/bin/python3 - <<'PY'
import ctypes, os
nvml = ctypes.CDLL(os.environ["ZEUS_NVML_PATH"]); nvml.nvmlInit_v2()
h = ctypes.c_void_p(); nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h))
assert nvml.nvmlDeviceSetPowerManagementLimit(h, 200000) == 0
assert nvml.nvmlDeviceSetGpuLockedClocks(h, 1005, 1005) == 0
PY
/usr/bin/python3 "$copy/gpu_state.py" restore "$dir/saved.json"
/usr/bin/python3 - "$dir/state.json" <<'PY' || fail "the guard did not restore the fake GPU"
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
assert d["limit_mw"] == 300000 and d.get("locked_sm_clocks_mhz") is None, d
print("guard: power limit back to 300 W, SM clocks unlocked")
PY
