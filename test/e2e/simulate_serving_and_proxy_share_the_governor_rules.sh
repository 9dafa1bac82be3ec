#!/usr/bin/env bash
# zeus proxy --govern and zeus simulate serving check the governor's knobs by one rule
# (GovernorOptions::validate): each --slo-quantile outside (0.5, 1) is refused by both with the
# same one line naming --slo-quantile (a usage error, exit 2), and a quantile inside it that the
# simulator's own check once refused (0.99995) runs in both. The simulator's SLOs follow the
# same rule (positive and finite), naming their flag.
set -euo pipefail
source "$(dirname "$0")/lib/proxy_env.sh"
up=http://127.0.0.1:9

refusal() {  # OUT ARGS...: runs zeus ARGS, expects exit 2 and one line on stderr, into OUT
  local out=$1 status=0
  shift
  timeout 20 "$zeus" "$@" > "$dir/stdout" 2> "$out" || status=$?
  [ "$status" = 2 ] || fail "zeus $* exited $status, expected 2: $(cat "$out")"
  [ "$(wc -l < "$out")" = 1 ] || fail "zeus $*: not one line: $(cat "$out")"
  [ -s "$dir/stdout" ] && fail "zeus $* printed: $(cat "$dir/stdout")"
  return 0
}

for q in 0.3 0.5 1 1.5 -1; do
  refusal "$dir/proxy.err" proxy --upstream $up --port 0 --gpus 0 --govern --ttft-slo 2s \
    --tpot-slo 100ms --slo-quantile "$q"
  refusal "$dir/simulate.err" simulate serving --slo-quantile "$q"
  grep -qF -- "zeus: --slo-quantile is $q; it must be above 0.5 and below 1" "$dir/proxy.err" \
    || fail "proxy, --slo-quantile $q: $(cat "$dir/proxy.err")"
  cmp -s "$dir/proxy.err" "$dir/simulate.err" \
    || fail "--slo-quantile $q: the proxy says '$(cat "$dir/proxy.err")', the simulator '$(cat "$dir/simulate.err")'"
done

for flags in "--ttft-slo 0" "--ttft-slo -1" "--tpot-slo 0" "--tpot-slo inf"; do
  # shellcheck disable=SC2086
  refusal "$dir/simulate.err" simulate serving $flags
  grep -qF -- "zeus: ${flags% *} is ${flags#* }; an SLO must be a positive, finite number of seconds" \
    "$dir/simulate.err" || fail "simulate serving $flags: $(cat "$dir/simulate.err")"
done

# Inside the range: both run.
"$zeus" simulate serving --slo-quantile 0.99995 --json > "$dir/sim.json" 2> "$dir/sim.err" \
  || fail "simulate serving --slo-quantile 0.99995: $(cat "$dir/sim.err")"
grep -q '"slo_quantile": 0.99995' "$dir/sim.json" || fail "no slo_quantile 0.99995: $(head -c 600 "$dir/sim.json")"
"$zeus" proxy --upstream $up --port 0 --gpus 0 --govern --ttft-slo 2s --tpot-slo 100ms \
  --slo-quantile 0.99995 > "$dir/proxy.out" 2> "$dir/proxy.log" &
pids+=($!)
wait_for "$dir/proxy.out" "zeus proxy: serving http://"
echo "governor knobs: one rule in zeus proxy and zeus simulate serving"
