#!/usr/bin/env bash
# zeusd's requests take only their own parameters, each once. The JSON-body routes this check was
# written for (/gpu/{i}/<knob>) were removed: each now answers 404 naming the route that replaces
# it, and changes nothing. Their replacements, upstream Zeus's query-string routes, refuse an
# unknown parameter, a typo'd one and a repeated one with 400 naming it (every write route, and a
# reset given a value), and nothing changes; the requests clients send still work.
set -euo pipefail
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/zeusd_lib.sh"
fake_gpus '{"devices": [{"name": "NVIDIA H100 80GB HBM3", "architecture": 9,
  "min_limit_mw": 200000, "max_limit_mw": 700000}]}'
expect() {  # expect STATUS METHOD TARGET [BODY] MENTIONS
  local status=$1 method=$2 target=$3 body=$4 mentions=$5 out
  out=$(api "$method" "$target" "$body")
  [ "${out##* }" = "$status" ] || fail "$method $target $body -> $out (expected $status)"
  echo "$out" | grep -qF "$mentions" || fail "$method $target: the answer does not say '$mentions': $out"
}

start_zeusd --socket "$sock" --allow 'gpu-read=*' --log-level info
before=$(limit 0)
# The removed routes, with the bodies they used to take.
expect 404 POST /gpu/0/power_limit '{"power_limit_mw": 300000, "x": 1}' \
  "use POST /gpu/set_power_limit?gpu_ids=0&power_limit_mw=N&block=true"
expect 404 POST /gpu/0/sm_clocks '{"min_mhz": 1000, "max_mz": 1400}' \
  "use POST /gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=N&max_clock_mhz=M&block=true"
expect 404 DELETE /gpu/0/power_limit '' "use POST /gpu/reset_power_limit?gpu_ids=0&block=true"
# Upstream's routes: unknown, typo'd and repeated parameters.
expect 400 POST "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&x=1&block=true" '' \
  "unknown query parameter 'x' (this route takes block, gpu_ids, power_limit_mw)"
expect 400 POST "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&power_limit_mw=250000&block=true" '' \
  "query parameter 'power_limit_mw' is given twice"
expect 400 POST "/gpu/set_gpu_locked_clocks?gpu_ids=0&min_clock_mhz=1000&max_clock_mz=1400&block=true" '' \
  "unknown query parameter 'max_clock_mz'"
expect 400 POST "/gpu/set_mem_locked_clocks?gpu_ids=0&min_clock_mhz=1000&max_clock_mhz=1400&max_clock_mhz=1&block=true" '' \
  "query parameter 'max_clock_mhz' is given twice"
expect 400 POST "/gpu/set_persistence_mode?gpu_ids=0&enabled=true&enabled=false&block=true" '' \
  "query parameter 'enabled' is given twice"
expect 400 POST "/gpu/reset_power_limit?gpu_ids=0&power_limit_mw=300000&block=true" '' \
  "unknown query parameter 'power_limit_mw' (this route takes block, gpu_ids)"
[ "$(limit 0)" = "$before" ] || fail "a refused request changed the limit: $(limit 0)"
! grep -q "set power limit" "$dir/zeusd.log" || fail "a refused request reached the GPU"

out=$(api POST "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=300000&block=true")
[ "${out##* }" = 200 ] || fail "a valid request was refused: $out"
stop_zeusd
echo "zeusd_rejects_unknown_body_fields: ok"
