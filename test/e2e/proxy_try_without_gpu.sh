#!/usr/bin/env bash
# docs/proxy.md, "Trying it without a GPU", as a newcomer types it: the fake NVML and a state file,
# the fake server on a port given on its command line, the proxy on GPU 0, and a chat completion
# (and a streamed one, and a plain completion) through it with X-Zeus-Energy: each answer carries
# its energy, and the proxy's exit summary counts them.
set -euo pipefail
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
export ZEUS_NVML_PATH=${ZEUS_FAKES:?}/libnvidia-ml.so.1 ZEUS_FAKE_NVML_STATE=$dir/gpu.json
export ZEUS_ROCM_SMI_PATH=$dir/none.so ZEUS_POWERCAP_ROOT=$dir/none
unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH
echo '{"devices": [{"name": "NVIDIA H100 80GB HBM3", "power_draw_mw": 60000}]}' > "$dir/gpu.json"
up=$(free_port)
/usr/bin/python3 "$ZEUS_SOURCE_DIR/test/e2e/lib/fake_llm_server.py" "$up" > "$dir/fake.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "port $up" "$dir/fake.out" && break; sleep 0.05; done
grep -q "port $up" "$dir/fake.out" || fail "the fake server did not take port $up: $(cat "$dir/fake.out")"
"$ZEUS_BIN/zeus" proxy --upstream "http://127.0.0.1:$up" --gpus 0 --port 0 > "$dir/proxy.out" 2> "$dir/proxy.err" &
proxy=$!
pids+=($proxy)
for _ in $(seq 100); do grep -q serving "$dir/proxy.out" && break; sleep 0.05; done
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$dir/proxy.out")
[ -n "$port" ] || fail "the proxy did not start: $(cat "$dir/proxy.err")"
ask() { curl -s -m 20 "http://127.0.0.1:$port$1" -H 'X-Zeus-Energy: 1' -d "$2"; }
ask /v1/chat/completions '{"model": "fake", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 32}' > "$dir/chat.json"
ask /v1/chat/completions '{"model": "fake", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8, "stream": true, "stream_options": {"include_usage": true}}' > "$dir/stream.txt"
ask /v1/completions '{"model": "fake", "prompt": "hi there", "max_tokens": 4}' > "$dir/plain.json"
/usr/bin/python3 - "$dir" <<'PY' || fail "the answers"
import json, sys
d = sys.argv[1]
chat = json.load(open(d + "/chat.json"))
assert chat["object"] == "chat.completion" and chat["choices"][0]["message"]["content"].startswith("tok0 "), chat
assert chat["usage"]["completion_tokens"] == 32 and chat["usage"]["energy_j"] > 0, chat["usage"]
plain = json.load(open(d + "/plain.json"))
assert plain["usage"]["energy_j"] > 0, plain
events = [json.loads(l[6:]) for l in open(d + "/stream.txt") if l.startswith("data: {")]
assert [e["choices"][0]["delta"]["content"] for e in events if e["choices"]] == ["tok%d " % i for i in range(8)], events
print("chat %.3f J, streamed chat and completion answered with their energy" % chat["usage"]["energy_j"])
PY
kill -INT "$proxy"
wait "$proxy" || fail "the proxy exited $?"
grep -q "zeus proxy: 3 requests" "$dir/proxy.out" || fail "summary: $(cat "$dir/proxy.out")"
echo "proxy without a GPU, as docs/proxy.md says: ok"
