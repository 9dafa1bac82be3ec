#!/usr/bin/env bash
# zeus proxy in front of a fake OpenAI-compatible server (test/e2e/lib/fake_openai.py) whose
# fake-NVML power follows the tokens its batch produces: 32 concurrent clients, streamed and not,
# get bodies byte-identical to direct requests; the energy comes back as headers and trailers (and
# in the body only when asked); a request with twice its neighbours' tokens in one batch is
# charged twice within 10 %; attributed + idle = measured within 1 % (the summary) and the log's
# rows add up; the benchmark's steady-state figures are shown beside the attributed ones (the
# run's --report) and add up to the window's energy; error paths: upstream down (502), garbage
# (502), a stream cut by the upstream, a client that leaves mid-stream (the upstream request is
# cancelled), a body over the limit (413), an upstream slower than --upstream-timeout (502); the
# proxy keeps serving through all of them.
set -euo pipefail
source "$(dirname "$0")/lib/proxy_lib.sh"

start_proxy proxy --gpus 0 --interval 0.05 --log "$dir/requests.jsonl"

results=$("$py" "$lib/proxy_clients.py" "$upstream" "$port")
echo "$results"
check() { "$py" -c "import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if ($2) else 1)" "$results" \
  || fail "$1: $results"; }
check "every body byte-identical" 'r["identical"] == 32 and not r["different"]'
check "trailers on streams" 'float(r["stream_trailers"]["x-zeus-energy-j"]) > 0 and r["stream_trailers"]["x-zeus-tokens"] == "10"'
check "headers on whole answers" 'float(r["whole_headers"]["x-zeus-energy-j"]) > 0 and r["whole_headers"]["x-zeus-tokens"] == "11"'
# The fake runs its batch in lockstep (every request gets its tokens of a step at once), so each
# interval between two readings holds the batch's tokens in the ratio of their rates: the split
# is within a few % of the model's truth (2), where requests paced on their own clocks wandered
# over 1.97-2.24.
check "twice the tokens, twice the energy within 10 %" '1.8 <= r["batch_ratio"] <= 2.2'
check "usage.energy_j when asked" 'r["asked_usage_energy_j"] > 0'
check "the SSE comment before [DONE] when asked" 'r["asked_comment_before_done"]'

# Error paths; the proxy keeps serving after each.
code() { curl -s -o "$dir/body" -w '%{http_code}' "$@"; }
[ "$(code -X POST -d '{}' "http://127.0.0.1:$port/garbage")" = 502 ] || fail "garbage: $(cat "$dir/body")"
grep -q "did not answer" "$dir/body" || fail "garbage message: $(cat "$dir/body")"
cut=$(curl -s -X POST -d '{"max_tokens": 10}' "http://127.0.0.1:$port/close") || fail "cut stream: curl failed"
[ "$(grep -c '^data: ' <<< "$cut")" = 3 ] || fail "cut stream: $cut"
head -c $((17 * 1024 * 1024)) /dev/zero | tr '\0' 'a' > "$dir/big"
[ "$(code -X POST --data-binary @"$dir/big" "http://127.0.0.1:$port/v1/completions")" = 413 ] || fail "413"
timeout 5 curl -s -N -X POST -d '{"max_tokens": 100, "duration_s": 5, "stream": true}' \
  "http://127.0.0.1:$port/v1/chat/completions" | head -c 100 > /dev/null || true
for _ in $(seq 100); do grep -q cancelled "$dir/fake.err" && break; sleep 0.05; done
grep -q cancelled "$dir/fake.err" || fail "the upstream request was not cancelled"
[ "$(code -X POST -d '{"max_tokens": 3}' "http://127.0.0.1:$port/v1/completions")" = 200 ] || fail "still serving"
main_pid=$proxy_pid

"$zeus" proxy --upstream "http://127.0.0.1:1" --port 0 > "$dir/down.out" 2>&1 &
pids+=($!)
wait_for "$dir/down.out" "serving"
down_port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$dir/down.out")
[ "$(code -X POST -d '{}' "http://127.0.0.1:$down_port/v1/completions")" = 502 ] || fail "upstream down"
grep -q "127.0.0.1:1" "$dir/body" || fail "upstream down message: $(cat "$dir/body")"
# /metrics with no upstream to add its own: the proxy's alone.
[ "$(code "http://127.0.0.1:$down_port/metrics")" = 200 ] || fail "/metrics with the upstream down"
head -c 20 "$dir/body" | grep -q "^# HELP zeus_proxy_" || fail "/metrics with the upstream down: $(head -5 "$dir/body")"

# --upstream-timeout: an upstream slower than that gets the client a prompt 502 naming the wait;
# bad values are refused with the option's name.
for bad in 0 abc 2d 100000; do
  if "$zeus" proxy --upstream "http://127.0.0.1:$upstream" --upstream-timeout "$bad" > "$dir/bad.out" 2>&1; then
    fail "--upstream-timeout $bad accepted"
  fi
  grep -q -- "--upstream-timeout" "$dir/bad.out" || fail "--upstream-timeout $bad: $(cat "$dir/bad.out")"
done
start_proxy impatient --gpus 0 --upstream-timeout 0.5
t0=$(date +%s.%N)
[ "$(code -X POST -d '{"max_tokens": 3, "duration_s": 3}' "http://127.0.0.1:$port/v1/completions")" = 502 ] \
  || fail "an upstream slower than --upstream-timeout: $(cat "$dir/body")"
grep -q "no answer within 0.5 s" "$dir/body" || fail "the slow upstream's 502: $(cat "$dir/body")"
"$py" -c 'import sys, time; sys.exit(time.time() - float(sys.argv[1]) > 2.5)' "$t0" \
  || fail "the 502 waited for the upstream's answer"

sleep 0.3  # some idle energy
proxy_pid=$main_pid
stop_proxy
summary=$(cat "$dir/proxy.out")
echo "$summary"
"$py" - "$summary" "$dir/requests.jsonl" <<'PY' || fail "energy does not add up: $summary"
import json, re, sys
m = re.search(r"([\d.]+) J measured = ([\d.]+) J attributed \+ ([\d.]+) J idle", sys.argv[1])
measured, attributed, idle = map(float, m.groups())
assert measured > 0 and idle > 0, (measured, idle)
assert abs(attributed + idle - measured) <= 0.01 * measured, (measured, attributed, idle)
rows = [json.loads(line) for line in open(sys.argv[2])]
assert len(rows) >= 40, len(rows)
assert abs(sum(r["energy_j"] for r in rows) - attributed) <= 0.01 * measured + 0.01
assert all({"id", "model", "prompt_tokens", "output_tokens", "ttft_s", "latency_s", "energy_j", "method"} <= r.keys() for r in rows)

PY

# A benchmark-like run (48 streamed requests from 8 clients in a closed loop) through a fresh
# proxy: the benchmark's steady-state figures beside the attributed ones, request by request.
start_proxy bench --gpus 0 --interval 0.05 --log "$dir/bench.jsonl" --report "$dir/report.json"
load=$("$py" "$lib/proxy_load.py" "$port" 48 8)
[ "$load" = '{"200": 48}' ] || fail "the load: $load"
stop_proxy
cat "$dir/bench.out"
"$py" - "$dir/bench.jsonl" "$dir/report.json" <<'PY' || fail "the steady-state report"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
report = json.load(open(sys.argv[2]))
measured = report["measured_j"]
window = report["steady_state"]
assert window["found"], window
print("steady state: %.3f-%.3f s, B = %d, %.2f J over %.0f tokens = %.4f J/token" % (
    window["start_s"], window["end_s"], window["max_concurrency"], window["energy_j"],
    window["tokens"], window["energy_per_token_j"]))
print("%4s %6s %7s %12s %12s" % ("id", "model", "tokens", "attributed J", "steady J"))
for r in report["results"]:
    print("%4d %6s %7d %12.3f %12.3f" % (r["id"], r["model"], r["output_tokens"], r["energy_j"],
                                         r["steady_state_energy_j"]))
results = report["results"]
assert len(results) == len(rows) and sorted(r["id"] for r in results) == sorted(r["id"] for r in rows)
assert abs(sum(r["energy_j"] for r in results) - report["attributed_j"]) <= 1e-6 * measured + 1e-6
# The steady-state figures: J/token x tokens, and the window's tokens priced at J/token are the
# window's energy, which the GPUs measured (it lies inside the run).
per_token = window["energy_per_token_j"]
for r in results:
    assert abs(r["steady_state_energy_j"] - per_token * r["output_tokens"]) <= 1e-9 + 1e-9 * r["steady_state_energy_j"], r
    assert 0 <= r["window_tokens"] <= r["output_tokens"] + 1e-9, r
assert abs(sum(r["window_tokens"] for r in results) * per_token - window["energy_j"]) <= 0.01 * window["energy_j"]
assert 0 < window["energy_j"] < report["measured_j"]
total_steady = sum(r["steady_state_energy_j"] for r in results)
print("sum: %.2f J attributed, %.2f J by the steady-state method, %.2f J idle" % (
    report["attributed_j"], total_steady, report["idle_j"]))
# On the fake's model (power grows with the batch's tokens) a closed-loop run is near steady
# throughout, so the two methods agree on the total.
assert abs(total_steady - report["attributed_j"]) <= 0.1 * report["attributed_j"]
PY

# The bound: with --steady-state-window 20, the method and the report cover the last 20 of the
# 48 requests; the totals still cover all 48.
start_proxy window --gpus 0 --interval 0.05 --steady-state-window 20 --report "$dir/window.json"
load=$("$py" "$lib/proxy_load.py" "$port" 48 8)
[ "$load" = '{"200": 48}' ] || fail "the windowed load: $load"
stop_proxy
"$py" - "$dir/window.json" <<'PY' || fail "the windowed report: $(head -c 600 "$dir/window.json")"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["requests"] == 48, report["requests"]
assert report["results_dropped"] == 28, report["results_dropped"]
results = report["results"]
assert len(results) == 20 and report["steady_state"]["requests"] == 20, report["steady_state"]
assert len({r["id"] for r in results}) == 20
# The kept ones are the last to finish: the dropped ids include the first request.
assert 1 not in {r["id"] for r in results}
assert sum(r["energy_j"] for r in results) < report["attributed_j"]
PY
"$zeus" proxy --upstream "http://127.0.0.1:$upstream" --port 0 --steady-state-window 0 \
  > "$dir/zero.out" 2>&1 && fail "--steady-state-window 0 was accepted"
grep -q "steady-state-window" "$dir/zero.out" || fail "--steady-state-window 0: $(cat "$dir/zero.out")"
echo "PASS"
