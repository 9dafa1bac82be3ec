#!/usr/bin/env bash
# ZEUS_NVML_PATH='' and ZEUS_ROCM_SMI_PATH='' count as unset (dlopen("") would
# load the main program): the reasons name the default libraries, never an empty name.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: empty library paths: $*" >&2; exit 1; }
out=$(ZEUS_NVML_PATH='' ZEUS_ROCM_SMI_PATH='' ZEUS_AMDSMI_PATH='' ZEUS_POWERCAP_ROOT="$dir/none" "$zeus" devices 2>&1) || true
echo "$out" | grep -q "lacks nvmlInit" && fail "an empty ZEUS_NVML_PATH was loaded: $out"
echo "$out" | grep -q ",  is not" && fail "an empty library name: $out"
if ! ls /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 > /dev/null 2>&1; then
  echo "$out" | grep -q "nvml: not used, .*libnvidia-ml.so.1" || fail "nvml reason: $out"
fi
if ! ls /opt/rocm/lib/librocm_smi64.so > /dev/null 2>&1; then
  echo "$out" | grep -q "rocm_smi: not used, .*librocm_smi64.so" || fail "rocm_smi reason: $out"
fi
if ! ls /opt/rocm/lib/libamd_smi.so > /dev/null 2>&1; then
  echo "$out" | grep -q "amdsmi: not used, .*libamd_smi.so" || fail "amdsmi reason: $out"
fi
echo "devices_empty_library_paths_mean_unset: ok"
