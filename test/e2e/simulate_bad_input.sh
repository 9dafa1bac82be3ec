#!/usr/bin/env bash
# zeus simulate: each kind of bad input gives one clear error line, exit 1, and no report.
set -uo pipefail
ZEUS="${ZEUS_BIN:?}/zeus"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect_error() {  # expect_error <substring> <args...>
  local want="$1"; shift
  if "$ZEUS" simulate "$@" --report "$tmp/report" > "$tmp/out" 2> "$tmp/err"; then
    echo "FAIL: 'zeus simulate $*' succeeded"; exit 1
  fi
  if ! grep -qF "$want" "$tmp/err"; then
    echo "FAIL: 'zeus simulate $*' error lacks '$want':"; cat "$tmp/err"; exit 1
  fi
  if [ "$(wc -l < "$tmp/err")" -ne 1 ]; then echo "FAIL: more than one error line:"; cat "$tmp/err"; exit 1; fi
  if [ -s "$tmp/out" ]; then echo "FAIL: output on stdout after an error"; exit 1; fi
  if [ -e "$tmp/report" ] || ls -a "$tmp" | grep -q '\.tmp-'; then echo "FAIL: partial report left"; exit 1; fi
}

expect_error "eta must be in [0, 1]" --eta 1.5
expect_error "beta must be >= 1" --beta 0.5
expect_error "unknown workload 'mnist'" --workload mnist
expect_error "unknown GPU 'h100'" --gpu h100
expect_error "seeds '0' is too small: at least 1" --seeds 0

mkdir -p "$tmp/data"
cp "$ZEUS_SOURCE_DIR/data/summary_train.csv" "$tmp/data/"
sed 's/,time_per_epoch,/,epoch_time,/' "$ZEUS_SOURCE_DIR/data/summary_power_v100.csv" > "$tmp/data/summary_power_v100.csv"
expect_error "missing column(s) time_per_epoch" --data "$tmp/data"
sed '5s/,[0-9.]*$/,fast/' "$ZEUS_SOURCE_DIR/data/summary_power_v100.csv" > "$tmp/data/summary_power_v100.csv"
expect_error "line 5: column average_power: 'fast' is not a number" --data "$tmp/data"
expect_error "cannot open" --data "$tmp/nonexistent"
# The other experiments: their own bad input, the same one-line error and no report.
expect_error "no run with target metric" drift --drift-targets 0.65 0.123
expect_error "overlap must be > 0" concurrent --overlaps 0
expect_error "eta must be in [0, 1]" eta-sweep --etas 0.5 2
expect_error "beta must be >= 1" beta-sweep --betas 0.5
expect_error "unknown GPU 'h100'" gpus --gpus v100 h100
expect_error "eta must be in [0, 1]" search-path --eta -1
expect_error "window must be >= 1" drift --window 0
echo ok
