#!/usr/bin/env bash
# make wheel: a portable wheel of zeus_cpp for every CPython 3.10-3.13 found on this machine,
# through the standard build interface (pip wheel on python/, setup.py driving CMake), from one
# build tree: only the bindings are compiled again per Python (ZEUS_WHEEL_PYTHONS), then
# repair.py bundles the libraries outside the manylinux allow-list and sets the platform tag.
#
#   packaging/wheel/build.sh [BUILD_DIR [OUT_DIR]]      (defaults: build/release, dist)
#
# Pythons: Debian's /usr/bin/python3.11 always, then ~/.pyenv/versions/3.1[0-3]*/bin/python3 and
# /usr/bin/python3.1[0-3] that have their headers (Python.h); ZEUS_WHEEL_PYTHON_LIST (spaces)
# replaces the search. One wheel per Python version (the first interpreter found of each).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath -m "${1:-$src/build/release}")
out=$(realpath -m "${2:-$src/dist}")
[ -f "$build/CMakeCache.txt" ] || { echo "build.sh: $build is not configured (make build first)" >&2; exit 1; }
start=$(date +%s)

declare -A seen
pythons=()
if [ -n "${ZEUS_WHEEL_PYTHON_LIST:-}" ]; then
  candidates=($ZEUS_WHEEL_PYTHON_LIST)
else
  candidates=(/usr/bin/python3.11 /usr/bin/python3.1[0-3] "$HOME"/.pyenv/versions/3.1[0-3]*/bin/python3)
fi
for py in "${candidates[@]}"; do
  [ -x "$py" ] || continue
  info=$("$py" -c 'import sys, sysconfig, os; print(f"cp{sys.version_info[0]}{sys.version_info[1]}", os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null) || continue
  read -r tag headers <<< "$info"
  case $tag in cp310|cp311|cp312|cp313) ;; *) continue ;; esac
  [ "$headers" = True ] && [ -z "${seen[$tag]:-}" ] || continue
  seen[$tag]=$py
  pythons+=("$py")
done
[ ${#pythons[@]} -gt 0 ] || { echo "build.sh: no CPython 3.10-3.13 with headers found" >&2; exit 1; }
echo "== wheels for: ${pythons[*]}"

# One configure and one parallel build for every extension and the programs.
main_py=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")
extra=()
for py in "${pythons[@]}"; do [ "$py" = "$main_py" ] || extra+=("$py"); done
cmake "$build" -DZEUS_WHEEL_PYTHONS="$(IFS=';'; echo "${extra[*]}")" > "$build/wheel-configure.log" \
  || { cat "$build/wheel-configure.log"; exit 1; }
targets=(zeus_cli zeusd zeus_cpp_python fake_nvml)  # fake_nvml: the wheel's fake GPU (ZEUS_FAKE_GPU=1)
for tag in "${!seen[@]}"; do targets+=("zeus_cpp_ext_$tag"); done
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target "${targets[@]}"

# setuptools and wheel for Pythons that have none (3.12+ come without): Debian's, pure Python.
shim="$build/wheel-shim"
rm -rf "$shim" && mkdir -p "$shim"
for m in setuptools pkg_resources _distutils_hack wheel setuptools-*.egg-info wheel-*.egg-info; do
  for f in /usr/lib/python3/dist-packages/$m; do [ -e "$f" ] && ln -s "$f" "$shim/"; done
done

work=$(mktemp -d)
repairs=()
trap 'kill "${repairs[@]}" 2> /dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$out"
# pip wheel runs one Python at a time (setup.py drives CMake on the one build tree); each wheel's
# repair (unpack, bundle, repack: about 11 s) runs in the background beside the next pip wheel.
for py in "${pythons[@]}"; do
  tag=$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  pypath=""
  "$py" -c 'import setuptools, wheel' 2>/dev/null || pypath=$shim
  # From a copy of python/, so pip's in-tree build/ and egg-info stay out of the source tree.
  rm -rf "$work/pkg" && mkdir -p "$work/pkg" "$work/raw-$tag"
  cp -r "$src/python/setup.py" "$src/python/zeus_cpp" "$work/pkg/"
  if ! PYTHONPATH=$pypath PIP_NO_CACHE_DIR=1 ZEUS_SOURCE_DIR="$src" ZEUS_CMAKE_BUILD_DIR="$build" \
      ZEUS_BUILD_JOBS="${JOBS:-$(nproc)}" "$py" -m pip wheel --no-build-isolation --no-deps \
      --no-index --disable-pip-version-check -w "$work/raw-$tag" "$work/pkg" > "$work/pip-$tag.log" 2>&1; then
    tail -30 "$work/pip-$tag.log"; echo "build.sh: pip wheel failed for $py" >&2; exit 1
  fi
  rm -f "$out"/zeus_cpp-*-"$tag"-"$tag"-*.whl
  /usr/bin/python3 "$src/packaging/wheel/repair.py" "$work/raw-$tag"/*.whl --out "$out" \
    > "$work/repair-$tag.log" 2>&1 &
  repairs+=($!)
done
failed=0
for i in "${!repairs[@]}"; do
  wait "${repairs[$i]}" || { failed=1; echo "build.sh: repair.py failed for ${pythons[$i]}:" >&2; }
done
cat "$work"/repair-*.log
[ $failed = 0 ] || exit 1
repairs=()
echo "== $(ls "$out"/*.whl | wc -l) wheels in $out ($(( $(date +%s) - start )) s):"
ls -l "$out"/*.whl | awk '{printf "   %s  %.1f MiB\n", $NF, $5 / 1048576}'
