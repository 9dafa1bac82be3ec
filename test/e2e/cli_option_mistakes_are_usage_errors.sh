#!/usr/bin/env bash
# Options silently accepted or mis-worded. --gpus '' is an error (it meant "all
# GPUs"), --cpus with --no-cpus is an error (--no-cpus won silently), --batch-sizes 8,,16 says
# "batch sizes" (not "indices"), and --selector zeus:0.3 --eta 0.8 says the eta is given twice.
# All are usage errors: exit 2, one line.
set -uo pipefail
zeus="${ZEUS_BIN:?}/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
cat > "$dir/state.json" <<'JSON'
{"devices": [{"name": "NVIDIA A100-SXM4-40GB", "architecture": 7, "power_draw_mw": 150000}]}
JSON
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="${ZEUS_FAKES:?}/libnvidia-ml.so.1"
export ZEUS_POWERCAP_ROOT="$dir/none" ZEUS_ROCM_SMI_PATH="$dir/none.so"
unset CUDA_VISIBLE_DEVICES
printf 'start_time,window_name,elapsed_time,gpu0_energy\n1,__PowerLimitOptimizer_300,1,300\n2,__PowerLimitOptimizer_200,1.2,240\n' > "$dir/log.csv"

expect_usage_error() {  # expect_usage_error <substring> <args...>
  local want="$1"; shift
  timeout 10 "$zeus" "$@" > "$dir/out" 2> "$dir/err"
  local rc=$?
  [ "$rc" = 2 ] || fail "'zeus $*' exited $rc, expected 2: $(cat "$dir/err")"
  grep -qF -- "$want" "$dir/err" || fail "'zeus $*' error lacks '$want': $(cat "$dir/err")"
  [ "$(wc -l < "$dir/err")" = 1 ] || fail "'zeus $*': more than one line: $(cat "$dir/err")"
  [ -s "$dir/out" ] && fail "'zeus $*' printed output"
  return 0
}

expect_usage_error "--gpus is empty" measure --gpus '' -- true
expect_usage_error "--gpus is empty" power --gpus '' --duration 1
expect_usage_error "--cpus" measure --cpus --no-cpus -- true
expect_usage_error "excludes" measure --no-cpus --cpus -- true
expect_usage_error "--batch-sizes '8,,16' is not a list of batch sizes like 32,64,128" \
  bso register --prefix p --batch-sizes 8,,16 --default-batch-size 8 --max-power 300
expect_usage_error "the eta is given twice" plo replay --log "$dir/log.csv" --selector zeus:0.3 --eta 0.8
expect_usage_error "--eta applies to --selector zeus only" plo replay --log "$dir/log.csv" --selector time --eta 0.8
# Still fine: the eta in either place alone.
"$zeus" plo replay --log "$dir/log.csv" --selector zeus:0.3 > /dev/null || fail "--selector zeus:0.3 alone"
"$zeus" plo replay --log "$dir/log.csv" --selector zeus --eta 0.8 > /dev/null || fail "--selector zeus --eta 0.8"
# An experiment's own option given to another experiment is refused, not ignored.
expect_usage_error "--window applies to 'zeus simulate drift' only" simulate --window 3 --seeds 1
expect_usage_error "--gpus applies to 'zeus simulate gpus' or 'perseus' only" simulate headline --gpus a40
"$zeus" simulate drift --window 3 --seeds 1 > /dev/null || fail "simulate drift --window 3"
echo "cli_option_mistakes_are_usage_errors: ok"
