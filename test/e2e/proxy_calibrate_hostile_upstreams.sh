#!/usr/bin/env bash
# zeus proxy calibrate against servers that misbehave: a point ends at --seconds plus a grace
# (5 s or --seconds), cutting the answers still streaming (a server that ignores max_tokens, one
# that sends only keep-alive comments) and saying so, with the clocks unlocked after; answers
# that come in one event are named as not streamed; a sweep the fit cannot use (2 points) is
# refused before any clock is locked; a clock the GPU does not support is refused naming the
# nearest; the measured points are kept beside --out when the fit fails.
set -euo pipefail
source "$(dirname "$0")/lib/fake_llm_env.sh"
locked() {
  "$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"][0]; print(d.get("locked_sm_clocks_mhz"))' "$dir/state.json"
}
hostile() {  # MODE: starts hostile_llm_server.py, sets $hostile_port
  "$py" "$lib/hostile_llm_server.py" "$1" > "$dir/h_$1.out" 2>&1 &
  pids+=($!)
  wait_for "$dir/h_$1.out" "port"
  hostile_port=$(sed -n 's/^port //p' "$dir/h_$1.out")
}
calibrate() {  # URL ARGS...: runs calibrate (at most 40 s); sets $status and $took
  local url=$1 start=$SECONDS
  shift
  status=0
  timeout 40 "$zeus" proxy calibrate --upstream "$url" --gpus 0 --prompt-tokens 16 --output-tokens 8 \
    --out "$dir/p.json" "$@" > "$dir/cal.out" 2> "$dir/cal.err" || status=$?
  took=$((SECONDS - start))
  [ "$status" != 124 ] || fail "calibrate ran past 40 s: $(tail -3 "$dir/cal.err")"
}

for mode in forever keepalive; do
  hostile "$mode"
  calibrate "http://127.0.0.1:$hostile_port" --clocks 1980,1500,1080 --concurrency 1 --seconds 1
  [ "$status" != 0 ] || fail "$mode: calibrate succeeded"
  [ "$took" -le 12 ] || fail "$mode: the point took $took s (1 s + a 5 s grace)"
  grep -q "still streaming were cut" "$dir/cal.err" || fail "$mode: the cut is not said: $(tail -2 "$dir/cal.err")"
  [ "$(locked)" = None ] || fail "$mode: clocks left locked: $(locked)"
  echo "$mode: ended after $took s, cut requests named, clocks unlocked"
done

hostile onechunk
calibrate "http://127.0.0.1:$hostile_port" --clocks 1980,1500,1080 --concurrency 1 --seconds 1
[ "$status" != 0 ] && grep -q "not streamed token by token" "$dir/cal.err" || fail "onechunk: $(tail -2 "$dir/cal.err")"
[ "$(locked)" = None ] || fail "onechunk: clocks left locked"

upstream="http://127.0.0.1:$upstream_port"
calibrate "$upstream" --clocks 1980,1500 --concurrency 1 --seconds 1
[ "$status" != 0 ] && [ "$took" -le 3 ] && grep -q "the fit needs points at two clocks or more and three points" "$dir/cal.err" ||
  fail "2 points: status $status after $took s: $(tail -2 "$dir/cal.err")"
calibrate "$upstream" --clocks 1980,1500,100 --concurrency 1 --seconds 1
[ "$status" != 0 ] && grep -q "100 MHz is not a clock this GPU supports (210-1980 MHz; the nearest is 210 MHz)" "$dir/cal.err" ||
  fail "100 MHz: $(tail -2 "$dir/cal.err")"
[ ! -e "$dir/p.json" ] || fail "a profile was written"

# A sweep whose fit fails (a GPU that reads 0 W: no positive power to fit) keeps its points.
"$py" -c 'import json,sys; s=json.load(open(sys.argv[1])); s["devices"][0]["power_draw_mw"]=0; json.dump(s, open(sys.argv[1], "w"))' "$dir/state.json"
hostile steady
calibrate "http://127.0.0.1:$hostile_port" --clocks 1980,1500,1080 --concurrency 1 --seconds 1
[ "$status" != 0 ] && grep -q "the fit: .*; the 3 measured points are in $dir/p.json.points.json" "$dir/cal.err" ||
  fail "a failed fit: $(tail -2 "$dir/cal.err")"
"$py" - "$dir/p.json.points.json" <<'PY' || fail "the kept points"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["format"] == "zeus-serving-points/1" and "profile" not in doc and doc["fit_error"], doc
assert [p["clock_mhz"] for p in doc["points"]] == [1980, 1500, 1080], doc["points"]
PY
[ ! -e "$dir/p.json" ] || fail "a profile was written from a failed fit"
echo "proxy calibrate against hostile upstreams: ok"
