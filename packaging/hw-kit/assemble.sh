#!/usr/bin/env bash
# make hw-kit: assembles the GPU check kit (packaging/hw-kit/run.sh, docs/hardware-checks.md):
#   build/hw-kit/run.sh, gpu_state.py     the runner and its GPU guard
#   build/hw-kit/wheels/                  the cp312 wheel (the GPU hosts' Python) and this
#                                         machine's cp311 one (run.sh --fake here)
#   build/hw-kit/checks/                  test/hw/*.sh and their helpers (lib/)
#   build/hw-kit/tree/                    helper programs, bench/proxy_bench and the fake NVML,
#                                         with their libraries bundled in tree/lib (those the
#                                         wheel holds too are linked from it by run.sh)
# and checks its size (at most KIT_MAX_MIB, 60).
#   packaging/hw-kit/assemble.sh BUILD_DIR WHEEL_DIR OUT_DIR
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(realpath "$1") wheels=$(realpath "$2") out=$(realpath -m "$3")
max_mib=${KIT_MAX_MIB:-60}
rm -rf "$out"
mkdir -p "$out/wheels" "$out/checks" "$out/tree/bin" "$out/tree/test" "$out/tree/bench" "$out/tree/fakes"
for tag in cp312 cp311; do
  found=$(ls "$wheels"/zeus_cpp-*-$tag-$tag-*.whl 2>/dev/null | head -1)
  [ -n "$found" ] || { echo "assemble.sh: no $tag wheel in $wheels (make wheel, with Python ${tag#cp3}: 3.${tag#cp3})" >&2; exit 1; }
  cp "$found" "$out/wheels/"
done
cp "$src"/test/hw/*.sh "$out/checks/"
cp -r "$src/test/hw/lib" "$out/checks/lib"
cp "$src/data/llm_traces/azure_llm_2023_conv.csv" "$out/checks/lib/"  # proxy_govern_real (CC-BY 4.0)
cp "$src/data/llm_traces/README.md" "$out/checks/lib/azure_llm_traces_README.md"  # their attribution
cp "$src/packaging/hw-kit/run.sh" "$src/packaging/hw-kit/gpu_state.py" "$out/"
need() { [ -f "$1" ] || { echo "assemble.sh: $1 is missing (make build)" >&2; exit 1; }; cp "$1" "$2"; }
need "$build/bin/zeus_clock_controller_check" "$out/tree/bin/"
need "$build/test/zeus_hw_power_limit_check" "$out/tree/test/"
need "$build/fakes/libnvidia-ml.so.1" "$out/tree/fakes/"
[ -f "$build/bench/proxy_bench" ] && cp "$build/bench/proxy_bench" "$out/tree/bench/"
/usr/bin/python3 "$src/packaging/bundle_libs.py" "$out/tree" lib
# The libraries the wheels bundle too (the same files: the same content-hashed names) are not
# carried twice: run.sh links the installed wheel's zeus_cpp.libs/ into tree/lib.
in_wheel=$(/usr/bin/python3 -c 'import sys, zipfile; print("\n".join(n.split("/")[-1] for n in zipfile.ZipFile(sys.argv[1]).namelist() if n.startswith("zeus_cpp.libs/")))' "$(ls "$out"/wheels/*.whl | head -1)")
for f in "$out"/tree/lib/*; do
  grep -qxF "$(basename "$f")" <<< "$in_wheel" && rm "$f"
done
size=$(du -sm "$out" | cut -f1)
echo "hw-kit: $out, ${size} MiB (at most ${max_mib}): $(ls "$out/wheels" | tr '\n' ' ')"
[ "$size" -le "$max_mib" ] || { echo "assemble.sh: the kit is ${size} MiB, over ${max_mib} MiB" >&2; exit 1; }
