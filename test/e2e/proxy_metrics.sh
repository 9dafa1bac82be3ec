#!/usr/bin/env bash
# zeus proxy's /metrics, --log rows, --max-body, bounded memory on a long stream, and its live
# status line: a scrape over HTTP shows the upstream's metrics then the proxy's, and the
# histograms by model, token counters and energy counters agree with the JSONL log; each row has
# the client's and the upstream's ids, model, tokens, TTFT, latency, energy and method; a body
# over --max-body is 413 and the proxy keeps serving; bad --max-body and --report values are
# refused before serving; a 100,000-token stream passes without growing the proxy's memory by
# its size; the status line is drawn on a terminal only.
set -euo pipefail
# In an ASan build, freed memory waits in a quarantine (256 MB by default): none, so the peak
# memory measured below is the proxy's own (no effect on other builds).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
source "$(dirname "$0")/lib/proxy_lib.sh"

# Bad --max-body values are refused with the option's name.
for bad in abc 0 -5; do
  if "$zeus" proxy --upstream "http://127.0.0.1:$upstream" --max-body "$bad" > "$dir/bad.out" 2>&1; then
    fail "--max-body $bad accepted"
  fi
  grep -q -- "--max-body" "$dir/bad.out" || fail "--max-body $bad: $(cat "$dir/bad.out")"
done

# A --report path that cannot be written is refused before serving.
mkdir "$dir/a-folder"
if "$zeus" proxy --upstream "http://127.0.0.1:$upstream" --port 0 --report "$dir/a-folder" > "$dir/bad.out" 2>&1; then
  fail "--report to a folder accepted"
fi
grep -q -- "--report" "$dir/bad.out" || fail "--report to a folder: $(cat "$dir/bad.out")"
grep -q "serving" "$dir/bad.out" && fail "served before refusing --report"

start_proxy proxy --gpus 0 --interval 0.05 --log "$dir/requests.jsonl" --max-body 100000
before=$(date +%s.%N)
load=$("$py" "$lib/proxy_load.py" "$port" 24 4 llama qwen)
[ "$load" = '{"200": 24}' ] || fail "the load: $load"

# --max-body: one byte over is 413 with a message; the proxy keeps serving.
head -c 100001 /dev/zero | tr '\0' 'a' > "$dir/big"
status=$(curl -s -o "$dir/body" -w '%{http_code}' -X POST --data-binary @"$dir/big" \
  "http://127.0.0.1:$port/v1/completions")
[ "$status" = 413 ] || fail "over --max-body: $status $(cat "$dir/body")"
grep -q "100000" "$dir/body" || fail "the 413 does not name the limit: $(cat "$dir/body")"

# A long stream (14 MB), not asked for energy: relayed piece by piece, not held by the proxy
# (held, it would add 14 MB or more; the relay's buffers and an ASan build's shadow stay under 8).
hwm() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$proxy_pid/status"; }
hwm_before=$(hwm)
bytes=$(curl -s -N -X POST -d '{"max_tokens": 100000, "duration_s": 1, "stream": true}' \
  "http://127.0.0.1:$port/v1/chat/completions" | wc -c)
hwm_after=$(hwm)
echo "long stream: $bytes bytes relayed; proxy peak memory $hwm_before kB -> $hwm_after kB"
[ "$bytes" -gt 9000000 ] || fail "the long stream: $bytes bytes"
[ $((hwm_after - hwm_before)) -lt 8192 ] || fail "the proxy grew by $((hwm_after - hwm_before)) kB on a $bytes-byte stream"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d '{"max_tokens": 3}' \
  "http://127.0.0.1:$port/v1/completions")" = 200 ] || fail "still serving"
# An answer that is not HTTP: logged and counted without a model ("unknown") and without tokens.
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -d '{}' "http://127.0.0.1:$port/garbage")" = 502 ] \
  || fail "garbage"

sleep 0.4  # idle: the power gauge settles at the fake's idle 60 W
curl -s "http://127.0.0.1:$port/metrics" > "$dir/metrics.txt"
after=$(date +%s.%N)
"$py" - "$dir/metrics.txt" "$dir/requests.jsonl" "$before" "$after" <<'PY' || fail "/metrics against the log: $(cat "$dir/metrics.txt")"
import collections, json, re, sys
text = open(sys.argv[1]).read()
rows = [json.loads(line) for line in open(sys.argv[2])]
before, after = float(sys.argv[3]), float(sys.argv[4])
assert text.startswith("# TYPE fake_upstream_up gauge\nfake_upstream_up 1\n"), text[:200]
samples = {}
for line in text.splitlines():
    if line and not line.startswith("#"):
        name, value = line.rsplit(" ", 1)
        samples[name] = float(value)

# The log: every row complete, ids from both sides.
keys = {"id", "request_id", "response_id", "time_unix_s", "model", "streamed", "status",
        "prompt_tokens", "output_tokens", "ttft_s", "latency_s", "energy_j", "method"}
for r in rows:
    assert keys <= r.keys(), r
    assert before <= r["time_unix_s"] <= after, r
    assert r["latency_s"] > 0, r
    if r["status"] != 502:
        assert r["status"] == 200 and r["energy_j"] > 0 and r["response_id"] == "cmpl-fake", r
load = [r for r in rows if r["request_id"].startswith("load-")]
assert len(load) == 24, len(load)
for r in load:
    # "mixed": an interval before the batch's first tokens is split by time.
    assert r["streamed"] and r["method"] in ("tokens", "mixed") and r["prompt_tokens"] == 7, r
    assert 0 < r["ttft_s"] < r["latency_s"], r
    assert r["output_tokens"] == 10 + (int(r["request_id"][5:]) * 7) % 31, r

# /metrics against the log, model by model.
by_model = collections.defaultdict(list)
for r in rows:
    by_model[r["model"] or "unknown"].append(r)
assert by_model.keys() == {"llama", "qwen", "fake", "unknown"}, by_model.keys()
close = lambda a, b: abs(a - b) <= 1e-6 * max(1.0, abs(b))
for model, rs in by_model.items():
    label = '{model="%s"}' % model
    assert samples["zeus_proxy_request_energy_joules_count" + label] == len(rs), model
    assert close(samples["zeus_proxy_request_energy_joules_sum" + label], sum(r["energy_j"] for r in rs)), model
    assert samples["zeus_proxy_output_tokens_total" + label] == sum(r["output_tokens"] for r in rs), model
    with_tokens = [r for r in rs if r["output_tokens"] > 0]
    assert samples.get("zeus_proxy_output_token_energy_joules_count" + label, 0) == len(with_tokens), model
    assert close(samples.get("zeus_proxy_output_token_energy_joules_sum" + label, 0),
                 sum(r["energy_j"] / r["output_tokens"] for r in with_tokens)), model
    below_1j = sum(1 for r in rs if r["energy_j"] <= 1)
    assert samples['zeus_proxy_request_energy_joules_bucket{model="%s",le="1"}' % model] == below_1j, model
measured = samples["zeus_proxy_measured_energy_joules_total"]
attributed = samples["zeus_proxy_attributed_energy_joules_total"]
idle = samples["zeus_proxy_idle_energy_joules_total"]
assert close(attributed, sum(r["energy_j"] for r in rows)), (attributed, sum(r["energy_j"] for r in rows))
assert idle > 0 and abs(measured - attributed - idle) <= 0.01 * measured, (measured, attributed, idle)
assert samples["zeus_proxy_requests_in_flight"] == 0
assert 55 <= samples['zeus_proxy_gpu_power_watts{gpu="0"}'] <= 65, samples['zeus_proxy_gpu_power_watts{gpu="0"}']
print("metrics: %d requests over %d models; %.1f J measured = %.1f attributed + %.1f idle; %.1f W now"
      % (len(rows), len(by_model), measured, attributed, idle, samples['zeus_proxy_gpu_power_watts{gpu="0"}']))
PY
stop_proxy
if grep -q "J/token" "$dir/proxy.err"; then fail "a status line on a stderr that is not a terminal"; fi
grep -q "27 requests" "$dir/proxy.out" || fail "the summary: $(cat "$dir/proxy.out")"

# On a terminal (script gives it one), the status line is drawn in place and ends with a newline.
script -qfec "exec '$zeus' proxy --upstream http://127.0.0.1:$upstream --port 0 --gpus 0" /dev/null \
  > "$dir/tty.out" 2>&1 &
script_pid=$!
pids+=($script_pid)
wait_for "$dir/tty.out" "serving"
tty_port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$dir/tty.out" | tr -d '\r')
curl -s -X POST -d '{"max_tokens": 5}' "http://127.0.0.1:$tty_port/v1/completions" > /dev/null
for _ in $(seq 40); do grep -q "1 request " "$dir/tty.out" && break; sleep 0.05; done
tty_zeus=$(pgrep -P "$script_pid")
kill -TERM "$tty_zeus"
wait "$script_pid" || fail "the proxy on a terminal did not stop cleanly: $(cat "$dir/tty.out")"
"$py" - "$dir/tty.out" <<'PY' || fail "no live status line: $(cat -A "$dir/tty.out")"
import sys
text = open(sys.argv[1], "rb").read().decode()
assert "\rzeus proxy: 0 requests (0 in flight), 0 tokens, - J/token" in text, text
assert "\rzeus proxy: 1 request (0 in flight), 5 tokens, " in text, text
assert "\x1b[K" in text, text
PY
echo "PASS"
