#!/usr/bin/env bash
# An e2e failure prints what the test saw: the shared fail() (lib/fail_report.sh, used by the
# proxy, Perseus and serve setups) gives the message, then the last lines of each log, error and
# output file in the test's folder, so a failure in a loaded CI run can be read without a rerun.
set -euo pipefail
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
(
  source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/proxy_env.sh"
  printf 'zeusd: serving\nzeus warning: something odd\n' > "$dir/zeusd.log"
  echo "HTTP 503 from the upstream" > "$dir/client.err"
  : > "$dir/empty.out"
  fail "the answer was wrong"
) 2> "$out" || status=$?
[ "$status" = 1 ] || { echo "FAIL: fail() exited $status"; exit 1; }
for want in "FAIL: the answer was wrong" "the last lines of zeusd.log:" "zeus warning: something odd" \
            "the last lines of client.err:" "HTTP 503 from the upstream"; do
  grep -qF -- "$want" "$out" || { echo "FAIL: no '$want' in:"; cat "$out"; exit 1; }
done
! grep -q "empty.out" "$out" || { echo "FAIL: an empty file was shown"; exit 1; }
echo "e2e failures print what they saw: ok"
