#!/usr/bin/env bash
# A regression test: when the GPU is lost after the command ran (the last energy reading
# fails), `zeus measure` still prints the time and an error line, and exits with the command's
# own code, or 74 when the command succeeded. The fake NVML fails the reading after N calls.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Energy reads: the probe at discovery, the window's begin; the third (its end) is lost.
state='{"devices": [{"fail_after_calls": {"nvmlDeviceGetTotalEnergyConsumption": {"calls": 2, "error": 15}}}]}'
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES
fail() { echo "FAIL: failed last reading: $*" >&2; exit 1; }

run() {  # run EXPECTED_CODE COMMAND...: human report
  local expected=$1; shift
  echo "$state" > "$dir/state.json"
  set +e; "$zeus" measure -- "$@" > "$dir/out.txt" 2> "$dir/err.txt"; local code=$?; set -e
  [ "$code" = "$expected" ] || fail "exit $code, expected $expected for $*: $(cat "$dir/err.txt")"
  grep -Eq "the command ran [0-9]+\.[0-9]{3} s and exited" "$dir/err.txt" || fail "no time: $(cat "$dir/err.txt")"
  grep -q "reading the energy at the end failed: .*GPU 0" "$dir/err.txt" || fail "no error line: $(cat "$dir/err.txt")"
}
run 7 sh -c 'sleep .3; exit 7'
run 74 true

# --json: one object with the time, the command's exit code and the error.
echo "$state" > "$dir/state.json"
set +e; "$zeus" measure --json -- sh -c 'exit 3' > "$dir/m.json" 2> /dev/null; code=$?; set -e
[ "$code" = 3 ] || fail "--json exit $code, expected 3"
python3 - "$dir/m.json" <<'PY' || fail "--json report: $(cat "$dir/m.json")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["exit_code"] == 3 and m["time_s"] >= 0 and "failed" in m["error"], m
PY
echo "measure_failed_last_reading_keeps_exit_code: ok"
