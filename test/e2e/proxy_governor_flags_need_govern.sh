#!/usr/bin/env bash
# The governor's options without --govern are refused, naming --govern (a plain proxy would run
# ungoverned and save nothing while the user believes it governs), in the proxy and the
# Colosseum alike; and no duration option accepts a value whose wait would overflow.
set -euo pipefail
source "$(dirname "$0")/lib/proxy_env.sh"
refused() {  # PATTERN ARGS...
  local pattern=$1 status=0
  shift
  timeout 10 "$zeus" "$@" > "$dir/out" 2> "$dir/err" || status=$?
  [ "$status" != 0 ] && [ "$status" != 124 ] || fail "zeus $* exited $status: $(cat "$dir/out" "$dir/err")"
  grep -q -- "$pattern" "$dir/err" || fail "zeus $*: $(cat "$dir/err")"
}
up=http://127.0.0.1:9
for flags in "--ttft-slo 2s" "--tpot-slo 100ms" "--slo-quantile 0.9" "--govern-period 1s"; do
  # shellcheck disable=SC2086
  refused "${flags%% *}: only with --govern" proxy --upstream $up --port 0 --gpus 0 $flags
  # shellcheck disable=SC2086
  refused "${flags%% *}: only with --govern" proxy --upstream a=$up --upstream b=$up --port 0 $flags
done
refused "too long: at most 86400 s" proxy --upstream $up --port 0 --gpus 0 --interval 1e10s
refused "too long: at most 86400 s" proxy --upstream $up --port 0 --gpus 0 --govern --ttft-slo 2s \
  --tpot-slo 100ms --govern-period 1e12s
echo "governor options without --govern: refused"
