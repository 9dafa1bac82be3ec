#!/usr/bin/env bash
# Hardware check (ctest label hw, `make hw`): zeus proxy in front of a real torch generation loop
# on an NVIDIA GPU (issue 22, last Must-show item).
# A tiny OpenAI-compatible server (below: http.server with threads, /v1/chat/completions and
# /v1/completions, SSE chunks in OpenAI's format when "stream": true, else one JSON body with
# usage) runs every admitted request in one batch, one greedy token per step, with a randomly
# initialised decoder-only transformer (4 layers, d_model 1024, vocab 32000, fp16) on cuda:0.
# `zeus proxy --gpus 0 --log --report` sits in front of it; 16 clients in a closed loop send
# requests with varied max_tokens (3 of 4 streamed) for ~40 s.
# Prints J/token, idle energy, each request's attributed J against the steady-state method's J
# (means, and the ratio per request). Checks: every answer 200 with its max_tokens tokens, and
# the proxy counted them; attributed + idle = measured within 2 %; every request's attributed J
# positive; the steady-state window found and every request's steady-state figure present.
# Changes no GPU setting; stops everything it started; exits non-zero when a check fails.
#
# --dry-run-fake: the same on the fake NVML (build/release/fakes) with a server that sleeps in
# place of the model (no torch) and an 8 s load, to check the script without a GPU.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ZEUS_BUILD_DIR=${ZEUS_BUILD_DIR:-$here/../../build/release}
ZEUS_BIN=${ZEUS_BIN:-$ZEUS_BUILD_DIR/bin}
zeus="$ZEUS_BIN/zeus"
py=${PYTHON:-python3}
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$dir"/*.err; do [ -s "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done
  exit 1
}
wait_for() {  # file pattern seconds
  for _ in $(seq $(($3 * 20))); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done
  fail "no '$2' in $1 after $3 s: $(cat "$1")"
}
export CUDA_VISIBLE_DEVICES=0  # zeus's GPU 0, cuda:0 and NVML's index 0 are the same GPU
unset ZEUSD_SOCK_PATH
load_s=${HW_PROXY_SECONDS:-40}
if [ "${1:-}" = "--dry-run-fake" ]; then
  echo '{"devices": [{"name": "NVIDIA H100 80GB HBM3", "power_draw_mw": 300000}]}' > "$dir/state.json"
  export ZEUS_FAKE_NVML_STATE="$dir/state.json"
  export ZEUS_NVML_PATH="$ZEUS_BUILD_DIR/fakes/libnvidia-ml.so.1"
  export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/none"
  export HW_FAKE=1 HW_NVML_LIB="$ZEUS_NVML_PATH"
  load_s=${HW_PROXY_SECONDS:-8}
else
  unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE
  export HW_NVML_LIB=libnvidia-ml.so.1
fi

# ---- the tiny OpenAI-compatible server ------------------------------------------------------
cat > "$dir/server.py" <<'PY'
"""A tiny OpenAI-compatible server: one engine thread runs every admitted request in one batch,
one greedy token per step (no KV cache: each step recomputes the batch's left-padded sequences),
writing each step's tokens to the streams at once, as a batched inference server does. Prints
"port N" once the model is warm; "cancelled" on stderr when a client left."""
import json, os, sys, threading, time, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAKE = os.environ.get("HW_FAKE") == "1"
VOCAB, D_MODEL, LAYERS, HEADS, MAX_PROMPT, MAX_NEW, MAX_BATCH = 32000, 1024, 4, 16, 64, 512, 64

if FAKE:  # the dry run: a step sleeps instead of running the model
    def generate_step(sequences):
        time.sleep(0.005)
        return [(sum(s) * 31 + len(s)) % VOCAB for s in sequences]
else:
    import torch
    from torch import nn

    class TinyLM(nn.Module):
        """Decoder-only (GPT-style): a causal mask on nn.TransformerEncoder layers."""

        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, D_MODEL)
            self.pos = nn.Embedding(MAX_PROMPT + MAX_NEW, D_MODEL)
            layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, 4 * D_MODEL, dropout=0.0,
                                               batch_first=True, norm_first=True)
            self.body = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
            self.head = nn.Linear(D_MODEL, VOCAB)

        def forward(self, ids):
            t = ids.shape[1]
            x = self.embed(ids) + self.pos(torch.arange(t, device=ids.device))
            mask = torch.full((t, t), float("-inf"), device=ids.device, dtype=x.dtype).triu(1)
            return self.head(self.body(x, mask=mask)[:, -1])

    torch.manual_seed(0)
    model = TinyLM().to("cuda", torch.float16).eval()

    @torch.inference_mode()
    def generate_step(sequences):
        width = max(len(s) for s in sequences)
        ids = torch.tensor([[0] * (width - len(s)) + s for s in sequences], device="cuda")
        return model(ids).argmax(-1).tolist()  # the .tolist() waits for the GPU

    for _ in range(3):  # warm-up: cuBLAS handles, kernels
        generate_step([[1] * 40] * 16)


def tokenize(text):
    data = text.encode()[:MAX_PROMPT] or b" "
    return [(b * 131 + i * 7) % VOCAB for i, b in enumerate(data)]


def sse(obj):
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


class Job:
    def __init__(self, handler, request, chat):
        self.handler = handler
        self.chat = chat
        self.stream = request.get("stream") is True
        self.usage = bool((request.get("stream_options") or {}).get("include_usage"))
        self.model = str(request.get("model", "tiny-random"))
        self.n = max(1, min(MAX_NEW, int(request.get("max_tokens", 16))))
        if chat:
            prompt = " ".join(str(m.get("content", "")) for m in request.get("messages", []))
        else:
            prompt = str(request.get("prompt", ""))
        self.prompt = tokenize(prompt)
        self.out = []
        self.id = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:24]
        self.created = int(time.time())
        self.done = threading.Event()

    def chunk(self, text, finish=None, role=False):
        if self.chat:
            delta = {"role": "assistant", "content": ""} if role else ({"content": text} if text else {})
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            kind = "chat.completion.chunk"
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
            kind = "text_completion"
        return sse({"id": self.id, "object": kind, "created": self.created, "model": self.model,
                    "choices": [choice]})

    def usage_dict(self):
        return {"prompt_tokens": len(self.prompt), "completion_tokens": len(self.out),
                "total_tokens": len(self.prompt) + len(self.out)}

    def write(self, data):
        self.handler.wfile.write(data)
        self.handler.wfile.flush()

    def add(self, token):
        """One generated token; True when the request is finished."""
        self.out.append(token)
        finished = len(self.out) >= self.n
        if self.stream:
            data = self.chunk("t%d " % token)
            if finished:
                data += self.chunk("", finish="length")
                if self.usage:
                    kind = "chat.completion.chunk" if self.chat else "text_completion"
                    data += sse({"id": self.id, "object": kind, "created": self.created,
                                 "model": self.model, "choices": [], "usage": self.usage_dict()})
                data += b"data: [DONE]\n\n"
            self.write(data)
        return finished

    def whole_body(self):
        text = "".join("t%d " % t for t in self.out)
        if self.chat:
            choice = {"index": 0, "message": {"role": "assistant", "content": text},
                      "logprobs": None, "finish_reason": "length"}
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": "length"}
        return json.dumps({"id": self.id, "object": "chat.completion" if self.chat else "text_completion",
                           "created": self.created, "model": self.model, "choices": [choice],
                           "usage": self.usage_dict()}).encode()


class Engine:
    def __init__(self):
        self.cond = threading.Condition()
        self.waiting, self.running = [], []
        self.steps = 0
        threading.Thread(target=self.loop, daemon=True).start()

    def submit(self, job):
        with self.cond:
            self.waiting.append(job)
            self.cond.notify()
        job.done.wait()

    def loop(self):
        while True:
            with self.cond:
                while not self.waiting and not self.running:
                    self.cond.wait()
                room = MAX_BATCH - len(self.running)
                self.running += self.waiting[:room]
                self.waiting = self.waiting[room:]
            tokens = generate_step([j.prompt + j.out for j in self.running])
            self.steps += 1
            finished = []
            for job, token in zip(self.running, tokens):
                try:
                    if job.add(token):
                        finished.append(job)
                except OSError:  # the client (the proxy) left
                    print("cancelled", file=sys.stderr, flush=True)
                    finished.append(job)
            if finished:
                self.running = [j for j in self.running if j not in finished]
                for job in finished:
                    job.done.set()


engine = Engine()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/v1/models":
            self.answer(200, json.dumps({"object": "list", "data": [
                {"id": "tiny-random", "object": "model", "owned_by": "zeus-hw"}]}).encode())
        else:
            self.answer(200, b'{"status":"ok"}')

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        if self.path not in ("/v1/chat/completions", "/v1/completions"):
            self.answer(404, b'{"error": {"message": "not found"}}')
            return
        job = Job(self, request, self.path == "/v1/chat/completions")
        if job.stream:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            if job.chat:
                job.write(job.chunk("", role=True))
        engine.submit(job)
        if not job.stream:
            try:
                self.answer(200, job.whole_body())
            except OSError:
                print("cancelled", file=sys.stderr, flush=True)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
server.request_queue_size = 256
print("port %d" % server.server_address[1], flush=True)
server.serve_forever()
PY

# ---- the clients ----------------------------------------------------------------------------
cat > "$dir/clients.py" <<'PY'
"""16 clients in a closed loop for SECONDS through the proxy at PORT: varied max_tokens (16-256),
3 of 4 requests streamed (half of those with usage), chat and completions in turn. Prints one
JSON line per request: request_id, max_tokens, stream, status, tokens (counted by the client)."""
import http.client, json, random, sys, threading, time

port, seconds, clients = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
deadline = time.time() + seconds
lock = threading.Lock()
results, counter = [], [0]


def count_tokens(body, stream, chat):
    if not stream:  # (usage.completion_tokens when the text has as many tokens, else -1, those)
        answer = json.loads(body)
        choice = answer["choices"][0]
        seen = len((choice["message"]["content"] if chat else choice["text"]).split())
        usage = answer["usage"]["completion_tokens"]
        return (usage if usage == seen else -1), seen
    tokens, done = 0, False
    for event in body.decode().split("\n\n"):
        for line in event.splitlines():
            if not line.startswith("data: "):
                continue
            data = line[6:]
            if data == "[DONE]":
                done = True
                continue
            for choice in json.loads(data)["choices"]:
                text = choice.get("delta", {}).get("content") if chat else choice.get("text")
                if text:
                    tokens += 1
    return (tokens if done else -1), tokens


def worker(seed):
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    while time.time() < deadline:
        with lock:
            counter[0] += 1
            i = counter[0]
        max_tokens = rng.choice([16, 32, 64, 96, 128, 192, 256])
        stream = i % 4 != 0
        chat = i % 2 == 0
        body = {"model": "tiny-random", "max_tokens": max_tokens, "stream": stream}
        if stream and i % 8 < 4:
            body["stream_options"] = {"include_usage": True}
        prompt = "request %d: %s" % (i, "tell me about energy " * rng.randint(1, 3))
        if chat:
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        path = "/v1/chat/completions" if chat else "/v1/completions"
        try:
            conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json",
                                                          "X-Request-Id": "hw-%d" % i})
            answer = conn.getresponse()
            data = answer.read()
            status = answer.status
            tokens, seen = count_tokens(data, stream, chat) if status == 200 else (-1, -1)
            if answer.getheader("Connection", "").lower() == "close":
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        except Exception as e:  # reported, and the check fails on it
            status, tokens, seen = "error: %s" % e, -1, -1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        with lock:
            results.append({"request_id": "hw-%d" % i, "max_tokens": max_tokens, "stream": stream,
                            "status": status, "tokens": tokens, "seen": seen})


threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for r in results:
    print(json.dumps(r))
PY

cat > "$dir/counter.py" <<'PY'
import ctypes, os
nvml = ctypes.CDLL(os.environ["HW_NVML_LIB"])
assert nvml.nvmlInit_v2() == 0
handle = ctypes.c_void_p()
assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) == 0
energy = ctypes.c_ulonglong()
assert nvml.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(energy)) == 0
print(energy.value)
PY

# ---- the run --------------------------------------------------------------------------------
"$zeus" devices --json > "$dir/devices.json"
$py -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["gpus"], d["backends"]; print("GPU 0:", d["gpus"][0]["name"])' "$dir/devices.json"
$py "$dir/server.py" > "$dir/server.out" 2> "$dir/server.err" &
pids+=($!)
wait_for "$dir/server.out" "^port " 60
upstream=$(sed -n 's/^port //p' "$dir/server.out")

before=$($py "$dir/counter.py")
"$zeus" proxy --upstream "http://127.0.0.1:$upstream" --port 0 --gpus 0 \
  --log "$dir/requests.jsonl" --report "$dir/report.json" > "$dir/proxy.out" 2> "$dir/proxy.err" &
proxy_pid=$!
pids+=($proxy_pid)
wait_for "$dir/proxy.out" "serving" 20
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$dir/proxy.out")
sleep 1  # idle before the load
$py "$dir/clients.py" "$port" "$load_s" 16 > "$dir/clients.jsonl" || fail "the clients failed"
sleep 1  # idle after it
kill -TERM "$proxy_pid"
wait "$proxy_pid" || fail "the proxy did not stop cleanly"
after=$($py "$dir/counter.py")
echo "--- zeus proxy's summary:"
cat "$dir/proxy.out"

$py - "$dir/clients.jsonl" "$dir/requests.jsonl" "$dir/report.json" "$dir/proxy.out" "$before" "$after" "$load_s" <<'PY'
import json, re, statistics, sys

clients = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
rows = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
report = json.load(open(sys.argv[3]))
summary = open(sys.argv[4]).read()
outside_j = (int(sys.argv[6]) - int(sys.argv[5])) / 1000.0
load_s = float(sys.argv[7])
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


def q(values, f):  # a quantile, nearest rank
    values = sorted(values)
    return values[min(len(values) - 1, int(f * len(values)))] if values else float("nan")


bad = [c for c in clients if c["status"] != 200 or c["tokens"] != c["max_tokens"]]
check(clients and not bad, "%d requests, every one 200 with its max_tokens tokens (bad: %s)"
      % (len(clients), bad[:3]))
by_request = {r["request_id"]: r for r in rows}
check(len(rows) == len(clients) and set(by_request) == {c["request_id"] for c in clients},
      "the log has one row per request (%d rows, %d requests)" % (len(rows), len(clients)))
miscounted = [(c["request_id"], c["max_tokens"], by_request[c["request_id"]]["output_tokens"])
              for c in clients if c["request_id"] in by_request
              and by_request[c["request_id"]]["output_tokens"] != c["max_tokens"]]
check(not miscounted, "the proxy counted every request's tokens (miscounted: %s)" % miscounted[:3])

# The summary line, parsed as test/e2e/proxy_energy.sh does, and the report's totals.
m = re.search(r"([\d.]+) J measured = ([\d.]+) J attributed \+ ([\d.]+) J idle", summary)
check(m is not None, "the summary says measured = attributed + idle")
measured, attributed, idle = report["measured_j"], report["attributed_j"], report["idle_j"]
if m:
    s_measured, s_attributed, s_idle = map(float, m.groups())
    check(abs(s_measured - measured) <= 0.01 * measured + 0.1,
          "the summary's %.1f J measured is the report's %.1f J" % (s_measured, measured))
check(measured > 0 and abs(attributed + idle - measured) <= 0.02 * measured,
      "attributed %.1f J + idle %.1f J = %.1f J vs measured %.1f J (within 2 %%)"
      % (attributed, idle, attributed + idle, measured))

results = report["results"]
check(len(results) == len(rows) and report["results_dropped"] == 0,
      "the report keeps every request (%d results, %d dropped)" % (len(results), report["results_dropped"]))
nonpositive = [r["id"] for r in results if not r["energy_j"] > 0]
nonpositive += [r["id"] for r in rows if not r["energy_j"] > 0]
check(not nonpositive, "every request's attributed J is positive (not: %s)" % nonpositive[:5])
window = report["steady_state"]
check(window.get("found") is True, "the steady-state window was found (%s)" % window.get("why", ""))
missing = [r["id"] for r in results if r.get("steady_state_energy_j") is None or not r["steady_state_energy_j"] > 0]
check(not missing, "every request has its steady-state J (missing: %s)" % missing[:5])

tokens = report["output_tokens"]
ratios = [r["energy_j"] / r["steady_state_energy_j"] for r in results
          if r.get("steady_state_energy_j")]
print()
print("=== zeus proxy in front of a torch generation loop (%d clients, %.0f s) ===" % (16, load_s))
print("  requests          %d (%d streamed), %d output tokens, %.1f tokens/s"
      % (report["requests"], sum(c["stream"] for c in clients), tokens, tokens / load_s))
print("  energy            %.1f J measured = %.1f J attributed + %.1f J idle (%.1f %% idle)"
      % (measured, attributed, idle, 100 * idle / measured if measured else 0))
print("  NVML counter      %.1f J read outside over the proxy's life: measured/outside %.4f"
      % (outside_j, measured / outside_j if outside_j else float("nan")))
print("  J/token           %.5f attributed, %.5f measured (with idle)" % (
      attributed / tokens if tokens else float("nan"), measured / tokens if tokens else float("nan")))
if window.get("found"):
    print("  steady state      %.2f-%.2f s, B = %d, %.1f J over %.0f tokens = %.5f J/token"
          % (window["start_s"], window["end_s"], window["max_concurrency"], window["energy_j"],
             window["tokens"], window["energy_per_token_j"]))
if results and not missing:
    att = [r["energy_j"] for r in results]
    ste = [r["steady_state_energy_j"] for r in results]
    print("  per request       attributed mean %.3f J, steady-state mean %.3f J" % (
          statistics.mean(att), statistics.mean(ste)))
    print("  attributed/steady mean %.3f, median %.3f, p10 %.3f, p90 %.3f, min %.3f, max %.3f"
          % (statistics.mean(ratios), q(ratios, 0.5), q(ratios, 0.1), q(ratios, 0.9),
             min(ratios), max(ratios)))
    print("  %10s %5s %14s %14s %8s" % ("out tokens", "n", "attributed J", "steady J", "ratio"))
    for n in sorted({r["output_tokens"] for r in results}):
        group = [r for r in results if r["output_tokens"] == n]
        a = statistics.mean(r["energy_j"] for r in group)
        s = statistics.mean(r["steady_state_energy_j"] for r in group)
        print("  %10d %5d %14.3f %14.3f %8.3f" % (n, len(group), a, s, a / s))
    methods = {}
    for r in rows:
        methods[r["method"]] = methods.get(r["method"], 0) + 1
    print("  methods           %s" % methods)
if failures:
    print("FAILED: %d check(s): %s" % (len(failures), "; ".join(failures)))
    sys.exit(1)
PY
echo "hw proxy torch ok"
