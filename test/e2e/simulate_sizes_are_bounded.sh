#!/usr/bin/env bash
# zeus simulate bounds its sizes (--seeds, --recurrences, --phase-recurrences) with
# an error naming the maximum, and refuses a --seed past 2^64 - 1 instead of saturating it.
# Usage errors: exit 2, one line, at once (no run that grows until the memory is gone).
set -uo pipefail
zeus="${ZEUS_BIN:?}/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

expect_usage_error() {  # expect_usage_error <substring> <args...>
  local want="$1"; shift
  timeout 10 "$zeus" simulate "$@" > "$dir/out" 2> "$dir/err"
  local rc=$?
  [ "$rc" = 2 ] || fail "'zeus simulate $*' exited $rc, expected 2: $(head -c 300 "$dir/err")"
  grep -qF -- "$want" "$dir/err" || fail "'zeus simulate $*' error lacks '$want': $(cat "$dir/err")"
  [ "$(wc -l < "$dir/err")" = 1 ] || fail "more than one error line: $(cat "$dir/err")"
  [ -s "$dir/out" ] && fail "'zeus simulate $*' printed a result"
  return 0
}

expect_usage_error "--recurrences '2000000000' is too large: at most 100000" --recurrences 2000000000 --seeds 1 --workload cifar100
expect_usage_error "--seeds '100000000' is too large: at most 1000" --seeds 100000000
expect_usage_error "--seeds '0' is too small: at least 1" --seeds 0
expect_usage_error "--phase-recurrences '99999999' is too large: at most 100000" drift --phase-recurrences 99999999
expect_usage_error "--seed '99999999999999999999' is too large: at most 18446744073709551615" --seed 99999999999999999999
expect_usage_error "--seed '-1' is not a whole number" --seed -1
expect_usage_error "runs past the last seed" --seed 18446744073709551615 --seeds 2

# The largest seed still runs, and says so.
"$zeus" simulate --seed 18446744073709551615 --seeds 1 --workload cifar100 > "$dir/out" 2> "$dir/err" \
  || fail "the largest seed was refused: $(cat "$dir/err")"
grep -q "18446744073709551615" "$dir/out" || fail "the table does not name the seed: $(head -5 "$dir/out")"
echo "simulate_sizes_are_bounded: ok"
