#!/usr/bin/env bash
# In front of a server whose speed and power do not depend on the clock (the fake OpenAI server
# with a flat power model: a server on another GPU, or a clock-blind fake), nothing the clock did
# is passed off as saved: `zeus proxy calibrate` warns that neither speed nor power moved with
# the clock, and `zeus proxy --govern`, after lowering the clock under load, claims no saving,
# names the flat busy power it measured at both clocks, and warns to check --gpus.
set -euo pipefail
source "$(dirname "$0")/lib/fake_llm_env.sh"   # the fake H100 with 15 MHz steps (its server unused)
"$py" "$lib/fake_openai.py" --w-per-token-s 0 --duration 0.3 > "$dir/flat.out" 2> "$dir/flat.err" &
pids+=($!)
wait_for "$dir/flat.out" "port"
flat="http://127.0.0.1:$(sed -n 's/^port //p' "$dir/flat.out")"

"$zeus" proxy calibrate --upstream "$flat" --gpus 0 --clocks 1980,1080 --concurrency 1,2 --seconds 2 \
  --prompt-tokens 16 --output-tokens 8 --out "$dir/flat.json" > "$dir/cal.out" 2> "$dir/cal.err" ||
  fail "calibrate: $(tail -3 "$dir/cal.err")"
grep -q "neither speed nor power moved with the clock (1980 vs 1080 MHz)" "$dir/cal.err" ||
  fail "calibrate did not warn: $(cat "$dir/cal.err")"

"$zeus" proxy --upstream "$flat" --port 0 --gpus 0 --govern --ttft-slo 5s --tpot-slo 1s \
  --govern-period 0.2 --log "$dir/gov.jsonl" > "$dir/gov.out" 2> "$dir/gov.err" &
gov=$!
pids+=($gov)
wait_for "$dir/gov.out" "serving"
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$dir/gov.out")
# A steady load: 4 clients back to back for 12 s (the server busy all along, at every clock).
timeout 60 "$py" - "$port" > "$dir/load.out" 2>&1 <<'PY' || fail "the load: $(tail -3 "$dir/load.out")"
import http.client, json, sys, threading, time
port, end = int(sys.argv[1]), time.time() + 12
def client():
    while time.time() < end:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.request("POST", "/v1/completions", json.dumps({"model": "m", "prompt": "hello " * 20,
                  "max_tokens": 8, "stream": True}), {"Content-Type": "application/json"})
        r = c.getresponse(); r.read(); c.close()
        assert r.status == 200, r.status
threads = [threading.Thread(target=client) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print("load done")
PY
kill -TERM "$gov"
wait "$gov" || fail "the proxy exited $?"
cat "$dir/gov.out"
grep -q "clock changes, last" "$dir/gov.out" || fail "no governor summary"
lowest=$("$py" -c 'import json,sys; print(min(json.loads(l)["clock_mhz"] for l in open(sys.argv[1]) if "\"governor\"" in l))' "$dir/gov.jsonl")
[ "${lowest%.*}" -lt 1900 ] || fail "the governor never lowered the clock (lowest $lowest MHz)"
grep -q "no saving is claimed: at the same load the GPUs drew .* W at the maximum clock and .* W at lowered clocks" "$dir/gov.out" ||
  fail "a saving was claimed in front of a clock-blind server: $(cat "$dir/gov.out")"
! grep -q "estimated saving" "$dir/gov.out" || fail "an estimated saving was printed"
grep -q "check that --gpus names the GPUs the server runs on" "$dir/gov.err" || fail "no warning: $(tail -3 "$dir/gov.err")"
echo "a clock that moved nothing: calibrate warns, --govern claims no saving"
