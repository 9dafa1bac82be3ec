#!/usr/bin/env bash
# A GPU listed twice in --gpus is refused, as `zeus measure` refuses it: counted twice, its energy
# (and J/token, /metrics, the report) would double, and two clock controllers would drive it.
# The plain proxy, the Colosseum (--gpus NAME=LIST) and calibrate, each before it serves.
set -euo pipefail
PROXY_ENV_GPUS=2
source "$(dirname "$0")/lib/proxy_env.sh"

refused() {  # ARGS...: zeus must exit non-zero within 10 s, naming the index listed twice
  local status=0
  timeout 10 "$zeus" "$@" > "$dir/out" 2> "$dir/err" || status=$?
  [ "$status" != 0 ] && [ "$status" != 124 ] || fail "zeus $* exited $status: $(cat "$dir/out" "$dir/err")"
  grep -q "GPU index 1 is listed twice" "$dir/err" || fail "zeus $*: $(cat "$dir/err")"
}
refused proxy --upstream http://127.0.0.1:9 --port 0 --gpus 1,0,1
refused proxy --upstream a=http://127.0.0.1:9 --upstream b=http://127.0.0.1:9 --gpus a=1,1 --gpus b=0 --port 0
refused proxy calibrate --upstream http://127.0.0.1:9 --gpus 1,1 --clocks 1980 --concurrency 1 --seconds 1 \
  --out "$dir/p.json"
[ ! -e "$dir/p.json" ] || fail "calibrate wrote a profile"
echo "proxy --gpus listed twice: refused"
