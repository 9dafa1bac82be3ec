#!/usr/bin/env bash
# pip install of zeus_cpp into a fresh virtual environment, offline, with Debian's build tools
# (python3-venv, python3-pip, python3-setuptools, python3-wheel): setup.py drives the project's
# CMake build; ZEUS_CMAKE_BUILD_DIR reuses this build tree, so only out-of-date Python targets
# are rebuilt. Then the installed package (not the build tree) imports, measures a window on the
# fake NVML, and runs `python -m zeus_cpp.show_env`; pip uninstall removes it.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
src="${ZEUS_SOURCE_DIR:?}"

/usr/bin/python3 -m venv --system-site-packages "$dir/venv"
py="$dir/venv/bin/python"
# The package is built from a copy of python/ (its setup.py finds the source tree through
# ZEUS_SOURCE_DIR), so pip's in-tree build/ and egg-info stay out of the source tree.
mkdir "$dir/pkg"
cp -r "$src/python/setup.py" "$src/python/zeus_cpp" "$dir/pkg/"
start=$(date +%s%N)
PIP_NO_CACHE_DIR=1 ZEUS_SOURCE_DIR="$src" ZEUS_CMAKE_BUILD_DIR="${ZEUS_BUILD_DIR:?}" ZEUS_BUILD_JOBS=2 \
  "$py" -m pip install --no-build-isolation --no-index --disable-pip-version-check "$dir/pkg" \
  > "$dir/pip.log" 2>&1 || { tail -30 "$dir/pip.log"; fail "pip install failed"; }
echo "pip install took $(( ($(date +%s%N) - start) / 1000000 )) ms"

echo '{"devices": [{"power_draw_mw": 300000}]}' > "$dir/state.json"
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="${ZEUS_FAKES:?}/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH ZEUSD_HOST_PORT PYTHONPATH
cd "$dir"  # not the source tree: the import must come from the venv
"$py" - "$dir/venv" <<'PY'
import sys, time
import zeus_cpp
from zeus_cpp.monitor import ZeusMonitor
assert zeus_cpp.__file__.startswith(sys.argv[1]), f"imported from {zeus_cpp.__file__}, not the venv"
monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
monitor.begin_window("w")
time.sleep(0.2)
m = monitor.end_window("w")
assert m.time >= 0.2, m
assert abs(m.gpu_energy[0] / m.time - 300) < 15, m  # the fake's 300 W
print(f"venv zeus_cpp {zeus_cpp.__version__}: {m.gpu_energy[0]:.1f} J in {m.time:.3f} s")
PY
"$py" -m zeus_cpp.show_env > "$dir/env.txt"
grep -q "zeus_cpp: .*$dir/venv" "$dir/env.txt" || fail "show_env: $(cat "$dir/env.txt")"
grep -q "GPU 0 (physical 0)" "$dir/env.txt" || fail "show_env GPU: $(cat "$dir/env.txt")"
shown=$("$py" -m pip show zeus_cpp 2>&1) || fail "pip show zeus_cpp: $shown"
grep -q "^Version: " <<< "$shown" || fail "pip does not know zeus_cpp: $shown"
"$py" -m pip uninstall -y zeus_cpp > /dev/null
if "$py" -c "import zeus_cpp" 2> /dev/null; then fail "zeus_cpp still imports after pip uninstall"; fi
echo "pip install ok"
