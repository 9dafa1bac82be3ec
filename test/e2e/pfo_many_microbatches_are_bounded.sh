#!/usr/bin/env bash
# zeus pfo plan overflowed the stack with many microbatches (the max-flow recursed
# once per node of an augmenting path, which is as long as the critical path) and had no bound on
# its work. Now: jobs beyond the bounds are refused at once (usage error, exit 2, one line naming
# the bound and the fix, nothing written); a deep job within them plans on a small stack; long
# plans report progress on stderr when it is a file.
set -uo pipefail
zeus="${ZEUS_BIN:?}/zeus"
here="$(cd "$(dirname "$0")" && pwd)"
profile="${ZEUS_SOURCE_DIR:?}/data/perseus/stage_profile/gpt3-175b+a100_sxm_bf16.csv"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
python3 "$here/pfo_tiny_profile.py" > "$dir/tiny.csv"

refused() {  # refused <expected text> <args...>
  local want="$1"; shift
  timeout 20 "$zeus" pfo plan --out "$dir/big" "$@" > "$dir/out.txt" 2> "$dir/err.txt"
  local rc=$?
  [ "$rc" = 2 ] || fail "[$*] exited $rc, expected 2: $(head -c 300 "$dir/err.txt")"
  grep -qF -- "$want" "$dir/err.txt" || fail "[$*] error lacks '$want': $(cat "$dir/err.txt")"
  [ "$(wc -l < "$dir/err.txt")" = 1 ] || fail "[$*] more than one error line: $(cat "$dir/err.txt")"
  [ -s "$dir/out.txt" ] && fail "[$*] printed a result"
  [ -e "$dir/big" ] && fail "[$*] wrote an output folder"
  return 0
}
# The cases that crashed before: 2 x 20,000 crashed after 0.14 s; 8 x 100,000 after 3.2 s and 505 MB.
refused "is more than the 1000000000 the planner takes" \
  --profile "$dir/tiny.csv" --stages 2 --microbatches 20000 --p2p-power 10
grep -q -- "--microbatches or a larger --unit" "$dir/err.txt" || fail "no fix named: $(cat "$dir/err.txt")"
refused "more than the 200000 the planner takes; use fewer --microbatches" \
  --profile "$profile" --stages 8 --microbatches 100000 --p2p-power 83.64
"$zeus" pfo plan --help > "$dir/help.txt"
grep -q "at most 200000 instructions" "$dir/help.txt" || fail "--help does not state the bounds"
grep -q "1000000000 instruction-plans" "$dir/help.txt" || fail "--help does not state the work bound"

# Deep within the bounds: 2 x 500 (augmenting paths of thousands of nodes) on a 192 KB stack, on
# which the recursive search crashed. The frontier is the one planned on a normal stack.
"$zeus" pfo plan --profile "$dir/tiny.csv" --stages 2 --microbatches 500 --p2p-power 10 \
  --out "$dir/normal" > /dev/null 2>&1 || fail "2 x 500 failed on a normal stack"
(ulimit -s 192 && exec "$zeus" pfo plan --profile "$dir/tiny.csv" --stages 2 --microbatches 500 \
  --p2p-power 10 --out "$dir/deep" --progress-every 0 > "$dir/deep.txt" 2> "$dir/deep.err")
rc=$?
[ "$rc" = 0 ] || fail "2 x 500 on a 192 KB stack exited $rc: $(tail -3 "$dir/deep.err")"
cmp -s "$dir/normal/frontier.csv" "$dir/deep/frontier.csv" || fail "the deep plan differs"
[ "$(wc -l < "$dir/deep/frontier.csv")" = 4009 ] || fail "not 4008 plans: $(head -1 "$dir/deep.txt")"

# Progress when stderr is a file: lines (here every plan), and a last one with the total.
grep -q "^zeus: planning: 1 of about 4008 plans" "$dir/deep.err" || fail "no progress line: $(head -3 "$dir/deep.err")"
grep -q "^zeus: planning: 4008 plans in" "$dir/deep.err" || fail "no last progress line: $(tail -2 "$dir/deep.err")"
grep -q $'\r' "$dir/deep.err" && fail "a terminal's progress bar was written to a file"
# A short plan stays quiet at the default interval (5 s).
"$zeus" pfo plan --profile "$dir/tiny.csv" --stages 2 --microbatches 1 --p2p-power 10 \
  --out "$dir/short" > /dev/null 2> "$dir/short.err" || fail "short plan failed"
[ -s "$dir/short.err" ] && fail "a short plan printed progress: $(cat "$dir/short.err")"
echo "pfo_many_microbatches_are_bounded: ok"
