#!/usr/bin/env bash
# Every wheel `make wheel` left in dist/ (one per CPython 3.10-3.13 found) in a fresh virtual
# environment of its Python, without the system's packages and without PYTHONPATH to the build
# tree: pip install --no-index, then
#   - ldd of every ELF file the wheel installed resolves only to the manylinux allow-list or to
#     files inside the environment;
#   - the extension (what `import zeus_cpp` loads) needs none of the daemon's libraries (libjwt,
#     RE2, toml++: only the zeusd program links them) and no database server's client (libpq,
#     libpqxx, MariaDB's connector: only zeus serve's stores); SQLite it may (BatchSizeService.local).
#     auditwheel renames what it bundles (libjwt-7c1e16bc.so.0): names are matched by their stem;
#   - import, and a ZeusMonitor window on the fake NVML (the fake's 300 W);
#   - the `zeus` command pip put on the environment's bin/: zeus devices finds the fake GPU,
#     zeus measure -- sleep 1 measures it, and zeus finds its bundled data (zeus simulate);
#   - pip uninstall leaves no file of the wheel behind.
set -euo pipefail
dist=${ZEUS_DIST_DIR:?}
fail() { echo "FAIL: $*" >&2; exit 1; }
shopt -s nullglob
wheels=("$dist"/zeus_cpp-*.whl)
[ ${#wheels[@]} -gt 0 ] || fail "no wheel in $dist: run make wheel first"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo '{"devices": [{"power_draw_mw": 300000}]}' > "$dir/state.json"
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="${ZEUS_FAKES:?}/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_AMDSMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH ZEUSD_HOST_PORT PYTHONPATH ZEUS_DATA_DIR LD_LIBRARY_PATH
allowed='^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libresolv\.so\.2|libutil\.so\.1|libanl\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1|ld-linux-x86-64\.so\.2|linux-vdso\.so\.1)$'

python_for() {  # the first interpreter of this tag (cp312) on the machine
  local py
  for py in /usr/bin/python3.11 /usr/bin/python3.1[0-3] "$HOME"/.pyenv/versions/3.1[0-3]*/bin/python3; do
    [ -x "$py" ] || continue
    [ "$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')" = "$1" ] && { echo "$py"; return; }
  done
}

cd "$dir"  # not the source tree: imports must come from the environment
for wheel in "${wheels[@]}"; do
  name=$(basename "$wheel")
  tag=$(cut -d- -f3 <<< "$name")
  [[ $name == *-manylinux_2_*_x86_64.whl ]] || fail "$name: not a manylinux_2_X_x86_64 wheel"
  py=$(python_for "$tag")
  [ -n "$py" ] || fail "$name: no Python for $tag on this machine"
  venv="$dir/venv-$tag"
  "$py" -m venv "$venv"
  "$venv/bin/python" -m pip install --no-index --disable-pip-version-check -q "$wheel" > "$dir/pip-$tag.log" 2>&1 \
    || { cat "$dir/pip-$tag.log"; fail "$name: pip install failed"; }
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
  elves=0
  while IFS= read -r -d '' f; do
    head -c4 "$f" | grep -q $'\x7fELF' || continue
    elves=$((elves + 1))
    while read -r soname arrow where _; do
      [ "$arrow" = "=>" ] || continue
      [ "$where" != "not" ] || fail "$name: ${f#$site/} needs $soname, not found"
      [[ $soname =~ $allowed ]] || [[ $(realpath "$where") == "$venv"/* ]] \
        || fail "$name: ${f#$site/} loads $soname from $where, outside the allow-list and the environment"
    done < <(ldd "$f")
  done < <(find "$site/zeus_cpp" "$site/zeus_cpp.libs" -type f -print0)
  [ $elves -ge 4 ] || fail "$name: only $elves ELF files installed (extension, zeus, zeusd, libraries)"
  needed=$(readelf -d "$site"/zeus_cpp/_zeus_cpp*.so | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  [ -n "$needed" ] || fail "$name: readelf listed nothing the extension needs"
  bad=$(grep -E '^(libjwt|libre2|libtomlplusplus|libpq|libpqxx|libmariadb|libmysqlclient)[-.]' <<< "$needed" || true)
  [ -z "$bad" ] || fail "$name: the extension needs $(tr '\n' ' ' <<< "$bad")(only zeusd or zeus serve may)"
  echo "  extension needs: $(tr '\n' ' ' <<< "$needed")"
  "$venv/bin/python" - "$venv" <<'PY' || fail "$name: import and monitor window"
import sys, time
import zeus_cpp
from zeus_cpp.monitor import ZeusMonitor
assert zeus_cpp.__file__.startswith(sys.argv[1]), f"imported from {zeus_cpp.__file__}, not the venv"
monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
monitor.begin_window("w")
time.sleep(0.2)
m = monitor.end_window("w")
assert abs(m.gpu_energy[0] / m.time - 300) < 15, m  # the fake's 300 W
print(f"  {sys.version.split()[0]}: zeus_cpp {zeus_cpp.__version__}, window {m.gpu_energy[0]:.1f} J in {m.time:.3f} s")
PY
  [ -x "$venv/bin/zeus" ] || fail "$name: no zeus command in $venv/bin"
  "$venv/bin/zeus" devices --json > "$dir/devices.json" || fail "$name: zeus devices"
  "$venv/bin/python" -c 'import json, sys; assert json.load(open(sys.argv[1]))["gpus"]' "$dir/devices.json" \
    || fail "$name: zeus devices found no GPU: $(cat "$dir/devices.json")"
  "$venv/bin/zeus" measure --json -- sleep 1 > "$dir/measure.json" || fail "$name: zeus measure"
  "$venv/bin/python" - "$dir/measure.json" <<'PY' || fail "$name: zeus measure output: $(cat "$dir/measure.json")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["time_s"] >= 1 and 250 < m["gpu_energy_j"]["0"] < 350, m
print(f"  zeus measure -- sleep 1: {m['gpu_energy_j']['0']:.0f} J in {m['time_s']:.2f} s")
PY
  "$venv/bin/zeus" simulate perseus --gpus a100_sxm --microbatches 12 --slowdowns 1.1 > "$dir/sim.txt" 2>&1 \
    || fail "$name: zeus simulate (bundled data): $(tail -5 "$dir/sim.txt")"
  "$venv/bin/zeusd" --help > /dev/null || fail "$name: zeusd --help"
  "$venv/bin/python" -m pip uninstall -y -q zeus_cpp > /dev/null
  left=$(find "$site" -maxdepth 1 -name 'zeus_cpp*'; ls "$venv/bin/zeus" "$venv/bin/zeusd" 2>/dev/null || true)
  [ -z "$left" ] || fail "$name: pip uninstall left $left"
  echo "ok $name ($elves ELF files, $(du -sm "$wheel" | cut -f1) MiB)"
done
echo "wheels ok: ${#wheels[@]}"
