#!/usr/bin/env bash
# zeus measure against the fake libnvidia-ml.so.1: the printed energy must match the fake's
# power x time, exit codes and signals must pass through, bad input must give one-line errors.
set -euo pipefail
zeus="$ZEUS_BIN/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/state.json" <<'JSON'
{"devices": [
  {"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "power_draw_mw": 350000,
   "min_limit_mw": 200000, "max_limit_mw": 700000},
  {"name": "Tesla V100-SXM2-32GB", "architecture": 5, "power_draw_mw": 200000,
   "min_limit_mw": 150000, "max_limit_mw": 300000}]}
JSON
export ZEUS_FAKE_NVML_STATE="$dir/state.json"
export ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES

source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

# 1. Energy of `sleep 1` = power x time on each fake GPU.
"$zeus" measure --json -- sleep 1 > "$dir/out.json"
python3 - "$dir/out.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["command"] == ["sleep", "1"], m
assert m["exit_code"] == 0, m
t = m["time_s"]
assert 1.0 <= t < 1.5, t
for gpu, watts in (("0", 350.0), ("1", 200.0)):
    e = m["gpu_energy_j"][gpu]
    assert abs(e / (watts * t) - 1) < 0.02, (gpu, e, watts * t)
assert abs(m["total_energy_j"] - sum(m["gpu_energy_j"].values())) < 1e-6, m
assert abs(m["average_power_w"] - 550.0) < 11.0, m
assert m["cpu_energy_j"] == {} and m["dram_energy_j"] == {}, m
print("energy ok:", m["gpu_energy_j"], "time", t)
PY

# 2. GPU selection and CUDA_VISIBLE_DEVICES mapping: framework index 0 = physical GPU 1.
out=$(CUDA_VISIBLE_DEVICES=1 "$zeus" measure --json --gpus 0 -- true)
python3 -c 'import json,sys; m=json.loads(sys.argv[1]); assert list(m["gpu_energy_j"]) == ["0"], m' "$out"
CUDA_VISIBLE_DEVICES=1 "$zeus" devices --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert len(d["gpus"]) == 1 and d["gpus"][0]["physical_index"] == 1, d
assert d["gpus"][0]["architecture"] == "Volta", d'

# 3. The command's exit code passes through; the human report goes to stderr.
set +e
"$zeus" measure -- sh -c 'exit 3' 2> "$dir/err.txt"
code=$?
set -e
[ "$code" = 3 ] || fail "exit code $code, expected 3"
grep -q "exit code     3" "$dir/err.txt" || fail "report lacks the exit code: $(cat "$dir/err.txt")"
grep -q "GPU 0" "$dir/err.txt" || fail "report lacks GPU 0"

# 4. A signal sent to zeus reaches the command, and zeus still reports.
"$zeus" measure -- sleep 30 2> "$dir/sig.txt" &
pid=$!
sleep 0.5
kill -TERM "$pid"
set +e
wait "$pid"
code=$?
set -e
[ "$code" = 143 ] || fail "after SIGTERM exit code $code, expected 143"
grep -q "interrupted" "$dir/sig.txt" || fail "no interrupted note: $(cat "$dir/sig.txt")"
grep -q "GPU 0" "$dir/sig.txt" || fail "no measurement after SIGTERM"

# 5. Bad input: one line on stderr naming the problem, non-zero exit, no crash.
expect_error() {  # expected-code pattern command...
  local want=$1 pattern=$2
  shift 2
  set +e
  "$@" > /dev/null 2> "$dir/bad.txt"
  local code=$?
  set -e
  [ "$code" = "$want" ] || fail "'$*' exited $code, expected $want: $(cat "$dir/bad.txt")"
  [ "$(wc -l < "$dir/bad.txt")" = 1 ] || fail "'$*' printed more than one line: $(cat "$dir/bad.txt")"
  grep -q -- "$pattern" "$dir/bad.txt" || fail "'$*' error lacks '$pattern': $(cat "$dir/bad.txt")"
}
expect_error 1 "GPU index 5" "$zeus" measure --gpus 5 -- true
expect_error 2 "not a list of GPU indices" "$zeus" measure --gpus x -- true  # a usage error
expect_error 127 "cannot run 'no-such-command-zeus'" "$zeus" measure -- no-such-command-zeus
expect_error 1 "CUDA_VISIBLE_DEVICES" env CUDA_VISIBLE_DEVICES=0,,x "$zeus" measure -- true
expect_error 1 "MIG" env CUDA_VISIBLE_DEVICES=MIG-1234 "$zeus" devices
expect_error 1 "none was found" env ZEUS_NVML_PATH=/nonexistent/libnvidia-ml.so.1 "$zeus" measure --gpus 0 -- true
expect_error 1 "no command" "$zeus" measure

# 6. Missing NVML is not an error for `zeus devices`: it says why.
ZEUS_NVML_PATH=/nonexistent/libnvidia-ml.so.1 "$zeus" devices | grep -q "nvml: not used" || fail "devices without NVML"

# 7. The CSV log has the monitor-log format.
"$zeus" measure --log "$dir/log.csv" -- true 2> /dev/null
head -1 "$dir/log.csv" | grep -q "^start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy" \
  || fail "log header: $(head -1 "$dir/log.csv")"
# 8. --log on a file with another header: refused, the file left as it was.
printf 'epoch,accuracy\n1,0.93\n' > "$dir/results.csv"
set +e
"$zeus" measure --log "$dir/results.csv" -- true 2> "$dir/err.txt"; code=$?
set -e
[ "$code" != 0 ] && grep -q "results.csv" "$dir/err.txt" || fail "foreign log accepted (rc $code)"
[ "$(cat "$dir/results.csv")" = "$(printf 'epoch,accuracy\n1,0.93')" ] || fail "foreign log changed"
echo "measure e2e ok"
