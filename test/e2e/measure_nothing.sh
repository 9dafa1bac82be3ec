#!/usr/bin/env bash
# `zeus measure` on a machine where nothing can be measured says so, exits 69 and
# does not run the command (no 0 J report).
set -euo pipefail
zeus="${ZEUS_BIN:?}/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES

# Nothing to measure: no NVML, no ROCm, no RAPL.
set +e
ZEUS_NVML_PATH="$dir/nonexistent.so" "$zeus" measure --json -- touch "$dir/ran" > "$dir/out.json" 2> "$dir/err.txt"
rc=$?
set -e
[ "$rc" = 69 ] || fail "exit $rc, expected 69 (nothing to measure): $(cat "$dir/err.txt")"
grep -q "nothing can be measured" "$dir/err.txt" || fail "no clear message: $(cat "$dir/err.txt")"
[ ! -s "$dir/out.json" ] || fail "a measurement was printed: $(cat "$dir/out.json")"
[ ! -e "$dir/ran" ] || fail "the command ran although nothing could be measured"

echo "measure_nothing: ok"
