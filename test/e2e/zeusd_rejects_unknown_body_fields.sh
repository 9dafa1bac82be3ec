#!/usr/bin/env bash
# zeusd's JSON bodies take only their own fields, each once. The real daemon over
# the fake libnvidia-ml.so.1: an unknown field, a typo'd one and a duplicate key each get 400
# naming the field (POST of every knob, and a DELETE with a body), and nothing changes; the
# bodies clients send still work.
set -euo pipefail
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/zeusd_lib.sh"
fake_gpus '{"devices": [{"name": "NVIDIA H100 80GB HBM3", "architecture": 9,
  "min_limit_mw": 200000, "max_limit_mw": 700000}]}'
expect_400() {  # expect_400 METHOD PATH BODY MENTIONS
  local out
  out=$(api "$1" "$2" "$3")
  [ "${out##* }" = 400 ] || fail "$1 $2 $3 -> $out"
  echo "$out" | grep -qF "$4" || fail "$1 $2 $3: the answer does not say '$4': $out"
}

start_zeusd --socket "$sock" --allow 'gpu-read=*' --log-level info
before=$(limit 0)
expect_400 POST /gpu/0/power_limit '{"power_limit_mw": 300000, "x": 1}' \
  "unknown field 'x'; the fields are: power_limit_mw"
expect_400 POST /gpu/0/power_limit '{"power_limit_mw": 300000, "power_limit_mw": 250000}' \
  "duplicate field 'power_limit_mw'"
expect_400 POST /gpu/0/sm_clocks '{"min_mhz": 1000, "max_mz": 1400}' \
  "unknown field 'max_mz'; the fields are: min_mhz, max_mhz"
expect_400 POST /gpu/0/memory_clocks '{"min_mhz": 1000, "max_mhz": 1400, "max_mhz": 1}' \
  "duplicate field 'max_mhz'"
expect_400 POST /gpu/0/persistence_mode '{"enabled": true, "enabled": false}' \
  "duplicate field 'enabled'"
expect_400 DELETE /gpu/0/power_limit '{"power_limit_mw": 300000}' \
  "unknown field 'power_limit_mw'; the fields are: none"
[ "$(limit 0)" = "$before" ] || fail "a refused request changed the limit: $(limit 0)"
! grep -q "set power limit" "$dir/zeusd.log" || fail "a refused request reached the GPU"

out=$(api POST /gpu/0/power_limit '{"power_limit_mw": 300000}')
[ "${out##* }" = 200 ] || fail "a valid body was refused: $out"
stop_zeusd
echo "zeusd_rejects_unknown_body_fields: ok"
