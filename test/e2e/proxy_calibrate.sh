#!/usr/bin/env bash
# zeus proxy calibrate on the fakes (issue 38): against the clock-aware fake batching server
# (lib/fake_llm_server.py), a sweep of 3 clocks x 2 concurrency levels x 2 s writes a serving
# profile whose points show the fake's shape (power falls with the clock; more clients, more
# tokens/s), whose fit is positive, and after which the SM clock is unlocked; `zeus proxy --govern
# --serving-profile` starts from it; SLOs no clock can meet keep the maximum clock with a warning;
# bad profiles and misuse are refused with the fix named.
set -euo pipefail
source "$(dirname "$0")/lib/fake_llm_env.sh"
upstream="http://127.0.0.1:$upstream_port"

start=$SECONDS
"$zeus" proxy calibrate --upstream "$upstream" --gpus 0 --clocks 1980,1530,1080 --concurrency 1,6 \
  --seconds 2 --prompt-tokens 256 --output-tokens 24 --out "$dir/serving.json" \
  > "$dir/cal.out" 2> "$dir/cal.err" || fail "calibrate: $(cat "$dir/cal.err")"
cat "$dir/cal.err" "$dir/cal.out"
grep -q "\[6/6\] 1080 MHz x 6 concurrent" "$dir/cal.err" || fail "no progress line per point"
echo "calibration took $((SECONDS - start)) s"
"$py" - "$dir/serving.json" "$dir/state.json" <<'PY' || fail "the profile"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["format"] == "zeus-serving-profile/1" and doc["gpu"].startswith("NVIDIA H100"), doc
points = doc["points"]
assert len(points) == 6, points
at = {(p["clock_mhz"], p["concurrency"]): p for p in points}
for c in (1, 6):
    assert at[(1980, c)]["power_w"] > at[(1530, c)]["power_w"] > at[(1080, c)]["power_w"], c
for f in (1980, 1530, 1080):
    assert at[(f, 6)]["tokens_per_s"] > 2 * at[(f, 1)]["tokens_per_s"], f
    assert all(at[(f, c)]["requests"] > 0 and at[(f, c)]["ttft_p99_s"] >= at[(f, c)]["ttft_p50_s"] for c in (1, 6))
assert 50 < doc["idle_w"] < 70, doc["idle_w"]
p = doc["profile"]
assert p["clocks_mhz"] == [1980, 1530, 1080] and p["memory_s"] > 0 and p["base_w"] > 0, p
assert json.load(open(sys.argv[2]))["devices"][0].get("locked_sm_clocks_mhz") is None
print("profile ok: %d points, fitted memory %.4f s, %.6f s per sequence, clocks unlocked" % (len(points), p["memory_s"], p["decode_s_per_seq"]))
PY

# The governor starts from it.
"$zeus" proxy --upstream "$upstream" --port 0 --gpus 0 --govern --ttft-slo 1s --tpot-slo 50ms \
  --serving-profile "$dir/serving.json" > "$dir/gov.out" 2> "$dir/gov.err" &
gov_pid=$!
pids+=($gov_pid)
wait_for "$dir/gov.out" "serving"
kill -TERM "$gov_pid"
wait "$gov_pid" || fail "the governed proxy did not stop cleanly: $(cat "$dir/gov.err")"
grep -q "clocks restored" "$dir/gov.out" || fail "no governor summary: $(cat "$dir/gov.out")"
! grep -q "calibrate on this GPU" "$dir/gov.err" || fail "a warning about the profile's GPU: $(cat "$dir/gov.err")"

# SLOs no clock can meet: the maximum clock, reason slo_unreachable, and a warning naming the fix.
"$zeus" proxy --upstream "$upstream" --port 0 --gpus 0 --govern --ttft-slo 1ms --tpot-slo 0.1ms \
  --govern-period 0.2 --log "$dir/tight.jsonl" > "$dir/tight.out" 2> "$dir/tight.err" &
tight_pid=$!
pids+=($tight_pid)
wait_for "$dir/tight.out" "serving"
tight_port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$dir/tight.out")
GOVERN_SPEEDUP=4 "$py" "$lib/../../hw/lib/proxy_govern_load.py" "$lib/../../../data/llm_traces/azure_llm_2023_conv.csv" \
  "$tight_port" 4 > /dev/null || fail "the load through the tight proxy"
for _ in $(seq 50); do grep -q "cannot be met" "$dir/tight.err" && break; sleep 0.1; done
kill -TERM "$tight_pid"
wait "$tight_pid" || fail "the tight proxy did not stop cleanly"
grep -q "the SLOs cannot be met at this load; the clock stays at the maximum. Raise --ttft-slo/--tpot-slo" "$dir/tight.err" \
  || fail "no unreachable-SLO warning: $(cat "$dir/tight.err")"
"$py" - "$dir/tight.jsonl" <<'PY' || fail "the tight proxy's decisions"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"governor"' in l]
assert any(r["reason"] == "slo_unreachable" for r in rows), rows
assert all(r["clock_mhz"] == 1980 for r in rows), rows
print("unreachable SLOs: %d decisions, all at 1980 MHz, slo_unreachable logged" % len(rows))
PY

# Refusals.
expect_refusal() {  # PATTERN ARGS...
  local pattern=$1
  shift
  if "$zeus" proxy "$@" > "$dir/bad.out" 2>&1; then fail "accepted: $*"; fi
  grep -q -- "$pattern" "$dir/bad.out" || fail "for $*: $(cat "$dir/bad.out")"
}
echo '{"format": "something else"}' > "$dir/other.json"
expect_refusal "zeus proxy calibrate" --upstream "$upstream" --govern --ttft-slo 1s --tpot-slo 50ms --serving-profile "$dir/none.json"
expect_refusal "not a serving profile" --upstream "$upstream" --govern --ttft-slo 1s --tpot-slo 50ms --serving-profile "$dir/other.json"
expect_refusal "only with --govern" --upstream "$upstream" --serving-profile "$dir/serving.json"
expect_refusal "needs both SLOs" --upstream "$upstream" --port 0 --govern --ttft-slo 1s
expect_refusal "above 0.5 and below 1" --upstream "$upstream" --govern --ttft-slo 1s --tpot-slo 50ms --slo-quantile 1
expect_refusal "upstream is required" --govern
expect_refusal "--concurrency" calibrate --upstream "$upstream" --concurrency 0 --out "$dir/x.json"
echo "proxy calibrate on the fakes: ok"
