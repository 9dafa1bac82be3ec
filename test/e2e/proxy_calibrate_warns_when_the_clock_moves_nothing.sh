#!/usr/bin/env bash
# In front of a server whose speed and power do not depend on the clock (the fake OpenAI server
# with a flat power model: a server on another GPU, or a clock-blind fake), `zeus proxy
# calibrate` warns that neither speed nor power moved with the clock, naming --gpus (the
# governor's exit summary gives its saving only as an estimate: e2e.proxy_govern).
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

echo "a clock that moved nothing: calibrate warns"
