#!/usr/bin/env bash
# zeus proxy --govern reads the engine's own load from its Prometheus /metrics (issue 50): the
# fake batching server serves vLLM's gauges (vllm:num_requests_running/_waiting,
# vllm:kv_cache_usage_perc). Asserts: the start-up line names the source and its gauges; requests
# sent to the server directly, past the proxy, reach the governor (a log row carries
# load_source "vLLM" and the engine's running or waiting requests while the proxy relayed nothing); a server without
# metrics (404) falls back to the proxy's own view and the start-up line says why; --engine-metrics
# off says so; a bad URL and the flag without --govern are refused.
set -euo pipefail
source "$(dirname "$0")/lib/fake_llm_env.sh"

start_proxy() {  # NAME UPSTREAM-PORT ARGS...: sets $proxy_pid
  local name=$1 up=$2
  shift 2
  "$zeus" proxy --upstream "http://127.0.0.1:$up" --port 0 --gpus 0 --interval 0.05 \
    --govern --ttft-slo 1s --tpot-slo 50ms --govern-period 0.2 "$@" \
    > "$dir/$name.out" 2> "$dir/$name.err" &
  proxy_pid=$!
  pids+=($proxy_pid)
  wait_for "$dir/$name.out" "serving"
}
stop_proxy() {
  kill -TERM "$proxy_pid"
  wait "$proxy_pid" || fail "the proxy did not stop cleanly: $(cat "$dir/$1.err")"
}

# 1. auto: the upstream's /metrics, and load that bypasses the proxy.
start_proxy auto "$upstream_port" --log "$dir/auto.jsonl"
grep -q "the load comes from the engine's /metrics (vLLM: vllm:num_requests_running, vllm:num_requests_waiting, KV-cache usage)" "$dir/auto.err" \
  || fail "the start-up line does not name the engine's gauges: $(cat "$dir/auto.err")"
"$py" - "$upstream_port" <<'PY' || fail "the direct load failed"
import json, sys, threading, urllib.request
port = int(sys.argv[1])
def one(i):
    body = json.dumps({"prompt": "x" * 300, "max_tokens": 150, "stream": True}).encode()
    req = urllib.request.Request("http://127.0.0.1:%d/v1/completions" % port, body,
                                 {"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=60).read()
threads = [threading.Thread(target=one, args=(i,)) for i in range(12)]
for t in threads: t.start()
for t in threads: t.join()
PY
sleep 0.5
stop_proxy auto
"$py" - "$dir/auto.jsonl" <<'PY' || fail "the governor did not see the engine's load"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
gov = [r for r in rows if r.get("type") == "governor"]
relayed = [r for r in rows if r.get("type") is None]
assert not relayed, "the proxy relayed %d requests; the load went past it" % len(relayed)
# A row is logged when the clock or the reason changes: the first decision that saw the load
# is one (blind until a request is seen, then predicted).
seen = [r for r in gov if r.get("load_source") == "vLLM"
        and r.get("engine_running", 0) + r.get("engine_waiting", 0) > 0]
assert seen, "no governor row with the engine's requests: %s" % gov[:3]
assert all(r["running"] >= r.get("engine_running", 0) and r["waiting"] >= r.get("engine_waiting", 0)
           for r in seen), seen[:2]
print("the governor saw up to %d requests that never passed the proxy (%d rows)"
      % (max(r.get("engine_running", 0) + r.get("engine_waiting", 0) for r in seen), len(seen)))
PY

# 2. A server without metrics: the proxy's own view, and why.
FAKE_LLM_METRICS=0 "$py" "$lib/fake_llm_server.py" > "$dir/bare.out" 2> "$dir/bare.err" &
pids+=($!)
wait_for "$dir/bare.out" "port"
bare_port=$(sed -n 's/^port //p' "$dir/bare.out")
start_proxy bare "$bare_port"
grep -q "the load comes from the proxy's own view only .*answered 404" "$dir/bare.err" \
  || fail "no fallback line: $(cat "$dir/bare.err")"
stop_proxy bare

# 3. off.
start_proxy off "$upstream_port" --engine-metrics off
grep -q "the load comes from the proxy's own view (--engine-metrics off)" "$dir/off.err" \
  || fail "no 'off' line: $(cat "$dir/off.err")"
stop_proxy off

# 4. Refusals.
set +e
"$zeus" proxy --upstream "http://127.0.0.1:$upstream_port" --port 0 --gpus 0 --govern \
  --ttft-slo 1s --tpot-slo 50ms --engine-metrics ftp://127.0.0.1/metrics > /dev/null 2> "$dir/bad.err"
rc_bad=$?
"$zeus" proxy --upstream "http://127.0.0.1:$upstream_port" --port 0 --gpus 0 \
  --engine-metrics auto > /dev/null 2> "$dir/nogovern.err"
rc_nogovern=$?
set -e
[ "$rc_bad" != 0 ] && grep -q -- "--engine-metrics" "$dir/bad.err" || fail "a bad --engine-metrics URL: rc $rc_bad, $(cat "$dir/bad.err")"
[ "$rc_nogovern" != 0 ] && grep -q -- "--govern" "$dir/nogovern.err" || fail "--engine-metrics without --govern: rc $rc_nogovern, $(cat "$dir/nogovern.err")"
echo ok
