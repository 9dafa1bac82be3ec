#!/usr/bin/python3
"""A fake continuously batching LLM server whose speed and power follow the fake GPU's locked SM
clock (zeus proxy --govern's tests, test/e2e/proxy_govern.sh).

POST /v1/completions {"prompt": TEXT, "max_tokens": N, "stream": bool}: answers N tokens
("tok0 ", "tok1 ", ...), streamed as Server-Sent Events (with a usage chunk) or as one JSON
answer with usage; the same request always gets the same bytes. A prompt's tokens are
len(TEXT) / 3 (a tokenizer the proxy does not know: it estimates 4 bytes a token and learns the
ratio from the usage).

Engine, one iteration after another while work is waiting or running (vLLM's chunked prefill):
the prompts at the head of the queue get up to CHUNK prompt tokens; a prompt whose tokens are
all prefilled gives its first token and joins the running batch; every running request gets one
token. An iteration lasts
    MEMORY_S + (PREFILL_S_PER_TOKEN x prefill tokens + DECODE_S_PER_SEQ x batch) x (max / f)^0.9
(f: the SM clock locked through the fake NVML, read each iteration; the maximum when unlocked),
and draws IDLE_W + BUSY_W + CLOCK_W x (f / max)^2.4 while busy, IDLE_W when idle: a model that is
not the governor's parametric one (other constants, exponents, no context term).

POST /v1/chat/completions {"messages": [...], "max_tokens": N, "stream": bool} answers the same
tokens in the chat format (deltas). To try `zeus proxy` without a GPU (docs/proxy.md, "Trying it
without a GPU"): `python3 test/e2e/lib/fake_llm_server.py 8000` (the port; any free one without
it) beside the fake NVML; without ZEUS_FAKE_NVML_STATE its speed is that of the maximum clock and
it draws no power.

Prints "port N" on its first line."""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import fake_gpu_state

STATE = os.environ.get("ZEUS_FAKE_NVML_STATE", "")
MAX_MHZ = 1980
CHUNK = 512
MEMORY_S = 0.012
PREFILL_S_PER_TOKEN = 0.00001
DECODE_S_PER_SEQ = 0.0002
IDLE_W, BUSY_W, CLOCK_W = 60.0, 90.0, 330.0


def tokens_of(prompt):
    return max(1, len(prompt) // 3)


def chunk_bytes(i, chat=False):
    if chat:
        chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake",
                 "choices": [{"index": 0, "delta": {"content": "tok%d " % i}, "finish_reason": None}]}
    else:
        chunk = {"id": "cmpl-fake", "object": "text_completion", "model": "fake",
                 "choices": [{"index": 0, "text": "tok%d " % i, "finish_reason": None}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


class Job:
    def __init__(self, handler, request, chat=False):
        self.handler = handler
        self.chat = chat
        if chat:
            text = " ".join(str(m.get("content", "")) for m in request.get("messages", [])
                            if isinstance(m, dict))
        else:
            text = str(request.get("prompt", ""))
        self.prompt_tokens = tokens_of(text)
        self.prefilled = 0
        self.n = max(1, int(request.get("max_tokens", 16)))
        self.stream = request.get("stream") is True
        self.emitted = 0
        self.done = threading.Event()
        self.gone = False

    def emit(self):
        """One token (streams write it); True when the answer is complete."""
        i = self.emitted
        self.emitted += 1
        if self.stream and not self.gone:
            out = chunk_bytes(i, self.chat)
            if self.emitted == self.n:
                usage = {"id": "cmpl-fake", "object": "text_completion", "model": "fake",
                         "choices": [], "usage": self.usage()}
                out += b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n"
            try:
                self.handler.wfile.write(out)
                self.handler.wfile.flush()
            except OSError:
                self.gone = True
        return self.emitted == self.n

    def usage(self):
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.n,
                "total_tokens": self.prompt_tokens + self.n}


class Engine:
    def __init__(self):
        self.cond = threading.Condition()
        self.queue = []    # prefilling, in order
        self.running = []  # decoding
        self.busy = None
        threading.Thread(target=self.loop, daemon=True).start()

    def submit(self, job):
        with self.cond:
            self.queue.append(job)
            self.cond.notify()
        job.done.wait()

    def power(self, busy, mhz):
        self.busy = busy
        watts = IDLE_W + (BUSY_W + CLOCK_W * (mhz / MAX_MHZ) ** 2.4 if busy else 0)
        fake_gpu_state.set_power(STATE, watts)

    def loop(self):
        while True:
            with self.cond:
                if not self.queue and not self.running:
                    self.power(False, MAX_MHZ)
                    while not self.queue and not self.running:
                        self.cond.wait()
                prefilling = list(self.queue)
                running = list(self.running)
            mhz = fake_gpu_state.locked_sm_mhz(STATE) or MAX_MHZ
            self.power(True, mhz)
            budget, prefill, joined = CHUNK, 0, []
            for job in prefilling:
                take = min(budget, job.prompt_tokens - job.prefilled)
                job.prefilled += take
                prefill += take
                budget -= take
                if job.prefilled == job.prompt_tokens:
                    joined.append(job)
                if budget == 0:
                    break
            slow = (MAX_MHZ / mhz) ** 0.9
            time.sleep(MEMORY_S + (PREFILL_S_PER_TOKEN * prefill + DECODE_S_PER_SEQ * len(running)) * slow)
            finished = [job for job in running + joined if job.emit()]
            with self.cond:
                self.queue = [j for j in self.queue if j not in joined]
                self.running = [j for j in self.running + joined if j not in finished]
            for job in finished:
                job.done.set()


engine = Engine()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path.rstrip("/").endswith("/metrics"):
            # vLLM's gauges of its own load (FAKE_LLM_METRICS=0: no metrics page, as a server
            # started without them)
            if os.environ.get("FAKE_LLM_METRICS", "1") == "0":
                self.send_error(404)
                return
            with engine.cond:
                running, waiting = len(engine.running), len(engine.queue)
            body = ("# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
                    "# TYPE vllm:num_requests_running gauge\n"
                    'vllm:num_requests_running{engine="0",model_name="fake"} %d\n'
                    "# TYPE vllm:num_requests_waiting gauge\n"
                    'vllm:num_requests_waiting{engine="0",model_name="fake"} %d\n'
                    "# TYPE vllm:kv_cache_usage_perc gauge\n"
                    'vllm:kv_cache_usage_perc{engine="0",model_name="fake"} %.3f\n'
                    % (running, waiting, min(1.0, running / 256))).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        body = b'{"status":"ok"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        chat = self.path.rstrip("/").endswith("/chat/completions")
        job = Job(self, json.loads(self.rfile.read(length) or b"{}"), chat)
        if job.stream:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
        engine.submit(job)
        if job.stream:
            return
        text = "".join("tok%d " % i for i in range(job.n))
        if chat:
            answer = {"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
                      "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                   "finish_reason": "length"}], "usage": job.usage()}
        else:
            answer = {"id": "cmpl-fake", "object": "text_completion", "model": "fake",
                      "choices": [{"index": 0, "text": text, "finish_reason": "length"}],
                      "usage": job.usage()}
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0), Handler)
server.daemon_threads = True
server.request_queue_size = 256
print("port %d" % server.server_address[1], flush=True)
server.serve_forever()
