#!/usr/bin/env bash
# The fake GPU from the wheel alone (issue 48, item 4), in a fresh virtual environment of one
# wheel `make wheel` left in dist/ (the machine's default python3's; else the first), with nothing
# of the build tree: no PYTHONPATH, no ZEUS_NVML_PATH, no ZEUS_FAKE_NVML_STATE.
#   - the wheel holds zeus_cpp/fakes/libnvidia-ml.so.1 and pip installs it;
#   - without ZEUS_FAKE_GPU nothing is shadowed: ZEUS_NVML_PATH stays unset, and on this machine
#     (no NVIDIA driver) ZeusMonitor(gpu_indices=[0]) fails naming the switch, `zeus devices`
#     lists no GPU;
#   - with ZEUS_FAKE_GPU=1: ZeusMonitor(gpu_indices=[0]) measures the fake H100's 350 W, and the
#     `zeus` command sees it too;
#   - `eval "$(python -m zeus_cpp.fake_gpu --gpus 2 --memory-power-w 60)"`: two GPUs, and the
#     memory_average power domain of docs/python.md's timeline snippet.
set -euo pipefail
dist=${ZEUS_DIST_DIR:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
shopt -s nullglob
wheels=("$dist"/zeus_cpp-*.whl)
[ ${#wheels[@]} -gt 0 ] || fail "no wheel in $dist: run make wheel first"
py=/usr/bin/python3
tag=$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
wheel=""
for w in "${wheels[@]}"; do [[ $(basename "$w") == zeus_cpp-*-$tag-$tag-* ]] && wheel=$w; done
[ -n "$wheel" ] || fail "no $tag wheel in $dist"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE ZEUS_FAKE_GPU CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH ZEUSD_HOST_PORT \
  PYTHONPATH ZEUS_DATA_DIR LD_LIBRARY_PATH
export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_AMDSMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/no-powercap"
# This check needs a machine without an NVIDIA driver (the "nothing shadowed" half expects no GPU).
if ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1'; then
  echo "skipped: this machine has an NVIDIA driver (libnvidia-ml.so.1)"; exit 0
fi

# Captured first: `producer | grep -q` under pipefail fails when grep quits before the producer
# has written everything (the producer then dies of a broken pipe).
listing=$("$py" -m zipfile -l "$wheel")
grep -q 'zeus_cpp/fakes/libnvidia-ml.so.1' <<< "$listing" || fail "$wheel holds no zeus_cpp/fakes/libnvidia-ml.so.1"
cd "$dir"
"$py" -m venv "$dir/venv"
"$dir/venv/bin/python" -m pip install --no-index --disable-pip-version-check -q "$wheel" > "$dir/pip.log" 2>&1 \
  || { cat "$dir/pip.log"; fail "pip install failed"; }
vpy="$dir/venv/bin/python"
site=$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
[ -f "$site/zeus_cpp/fakes/libnvidia-ml.so.1" ] || fail "the venv has no zeus_cpp/fakes/libnvidia-ml.so.1"

measure='
import os, sys, time
import zeus_cpp
from zeus_cpp.monitor import ZeusMonitor
assert zeus_cpp.__file__.startswith(sys.argv[1]), zeus_cpp.__file__
monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
monitor.begin_window("w"); time.sleep(0.5); m = monitor.end_window("w")
print(os.environ.get("ZEUS_NVML_PATH"), round(m.gpu_energy[0] / m.time))
'

# 1. Off: nothing shadowed, and the error names the switch.
out=$("$vpy" -c 'import os, zeus_cpp; print(os.environ.get("ZEUS_NVML_PATH"))')
[ "$out" = None ] || fail "ZEUS_NVML_PATH set without the switch: $out"
if "$vpy" -c "$measure" "$dir/venv" > "$dir/off.out" 2> "$dir/off.err"; then
  fail "a GPU was measured without the switch: $(cat "$dir/off.out")"
fi
grep -q "no GPUs visible" "$dir/off.err" && grep -q "ZEUS_FAKE_GPU=1" "$dir/off.err" \
  || fail "the no-GPU error does not name ZEUS_FAKE_GPU: $(tail -3 "$dir/off.err")"
"$dir/venv/bin/zeus" devices --json > "$dir/devices-off.json"
"$vpy" -c 'import json, sys; assert json.load(open(sys.argv[1]))["gpus"] == []' "$dir/devices-off.json" \
  || fail "zeus devices found a GPU without the switch: $(cat "$dir/devices-off.json")"
env_report=$("$vpy" -m zeus_cpp.show_env)
grep -q 'export ZEUS_FAKE_GPU=1' <<< "$env_report" || fail "show_env does not name the switch: $env_report"
echo "  off: no GPU, the error and show_env name ZEUS_FAKE_GPU=1"

# 2. On: the wheel's own fake, measured at its 350 W, from Python and from the zeus command.
read -r path watts < <(ZEUS_FAKE_GPU=1 "$vpy" -c "$measure" "$dir/venv") || fail "measuring with ZEUS_FAKE_GPU=1"
[ "$(realpath "$path")" = "$(realpath "$site/zeus_cpp/fakes/libnvidia-ml.so.1")" ] || fail "ZEUS_NVML_PATH=$path, not the venv's fake"
[ "$watts" -ge 330 ] && [ "$watts" -le 370 ] || fail "the fake measured $watts W, not 350 W"
ZEUS_FAKE_GPU=1 "$dir/venv/bin/zeus" devices --json > "$dir/devices-on.json"
"$vpy" -c 'import json, sys; g = json.load(open(sys.argv[1]))["gpus"]; assert len(g) == 1 and "H100" in g[0]["name"], g' \
  "$dir/devices-on.json" || fail "zeus devices with ZEUS_FAKE_GPU=1: $(cat "$dir/devices-on.json")"
echo "  on: ZeusMonitor measured $watts W on the wheel's fake; zeus devices sees it"

# 3. Other fakes: two GPUs with a memory rail, through the printed export lines.
(
  eval "$("$vpy" -m zeus_cpp.fake_gpu --gpus 2 --memory-power-w 60 --state "$dir/state.json")"
  "$vpy" - <<'PY'
import time
from zeus_cpp.monitor import PowerMonitor
power = PowerMonitor(gpu_indices=None, update_period=0.1)
time.sleep(0.5)
assert power.gpu_indices == [0, 1], power.gpu_indices
timeline = power.get_power_timeline("memory_average", gpu_index=1)
assert round(timeline[1][-1][1]) == 60, timeline
print(f"  fake_gpu --gpus 2 --memory-power-w 60: 2 GPUs, memory_average {timeline[1][-1][1]:.0f} W")
PY
) || fail "python -m zeus_cpp.fake_gpu --gpus 2 --memory-power-w 60"
echo "wheel fake GPU ok: $(basename "$wheel")"
