#!/usr/bin/python3
"""A small fake OpenAI-compatible server for the proxy's tests and benchmark (zeus proxy).

POST /v1/chat/completions and /v1/completions: answers `max_tokens` tokens ("tok0 ", "tok1 ", ...)
over `duration_s` (default 0.5 s: every request of a batch lasts as long, so a request with twice
the tokens produces them twice as fast), streamed as Server-Sent Events when "stream": true (with
a usage chunk when stream_options.include_usage), else one JSON answer with usage. Deterministic:
the same request gets the same bytes, whatever the timing.

Like a batched inference server, one engine thread runs every admitted request in lockstep:
every STEP_S it computes one step of each, then writes the tokens of that step to every stream
at once (a request with twice the rate gets two chunks per step). Requests join the batch at a
step, and leave at the step that produced their last token.

Power model: the fake NVML's state file (ZEUS_FAKE_NVML_STATE) is rewritten by the engine when
the batch changes, to IDLE_W + W_PER_TOKEN_S x the tokens per second of the running requests,
with the energy counter brought up to that moment (energy_mj, energy_time_ns), so the counter
follows the batch to the microsecond, not to the file system's time stamps.

Why it is built this way: the proxy splits each interval between two energy readings by the
tokens each request produced in it. Requests paced on their own clocks put their tokens at
different phases, so an interval could hold 3 tokens of one and none of another, and the split
wandered by 10 % from the model's truth; in lockstep, every interval holds the batch's tokens in
the ratio of the rates, as on a real batched server.

GET /metrics answers one Prometheus line (fake_upstream_up 1). Paths for error tests: /garbage
answers bytes that are not HTTP; /close streams three chunks and closes. Prints "port N" on its
first line; appends "cancelled" to stderr when a client left.

Options, for two fakes side by side (the Colosseum's tests): --gpu N rewrites only device N of
the state file (under a lock on STATE.lock, so two fakes can share it); --tokens N answers N
tokens whatever max_tokens says; --duration S is the default duration_s; --w-per-token-s W the
power model's slope (default 0.5).
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import fake_gpu_state

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default=-1, help="the only device to rewrite (-1: all)")
parser.add_argument("--tokens", type=int, default=0, help="tokens per answer (0: max_tokens)")
parser.add_argument("--duration", type=float, default=0.5, help="default duration_s")
parser.add_argument("--w-per-token-s", type=float, default=0.5)
ARGS = parser.parse_args()

IDLE_W = 60.0
W_PER_TOKEN_S = ARGS.w_per_token_s
STEP_S = 0.01
STATE = os.environ.get("ZEUS_FAKE_NVML_STATE", "")


def set_power(watts):
    fake_gpu_state.set_power(STATE, watts, ARGS.gpu)


def chunk_bytes(model, i):
    chunk = {"id": "cmpl-fake", "object": "chat.completion.chunk", "model": model,
             "choices": [{"index": 0, "delta": {"content": "tok%d " % i}}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


class Job:
    def __init__(self, handler, request, stream):
        self.handler = handler
        self.n = ARGS.tokens or int(request.get("max_tokens", 16))
        self.steps = max(1, round(float(request.get("duration_s", ARGS.duration)) / STEP_S))
        self.rate = self.n / (self.steps * STEP_S)
        self.model = request.get("model", "fake")
        self.stream = stream
        self.usage = bool((request.get("stream_options") or {}).get("include_usage"))
        self.step = 0
        self.emitted = 0
        self.done = threading.Event()

    def run_step(self):
        """One step: writes its tokens (streams); True when the request is finished."""
        self.step += 1
        upto = self.n * self.step // self.steps
        if self.stream:
            if self.handler.path == "/close" and upto >= 3:
                out = b"".join(chunk_bytes(self.model, i) for i in range(self.emitted, 3))
                self.handler.wfile.write(out)
                self.handler.connection.shutdown(2)
                return True
            out = b"".join(chunk_bytes(self.model, i) for i in range(self.emitted, upto))
            if self.step == self.steps:
                if self.usage:
                    usage = {"id": "cmpl-fake", "object": "chat.completion.chunk",
                             "model": self.model, "choices": [],
                             "usage": {"prompt_tokens": 7, "completion_tokens": self.n,
                                       "total_tokens": 7 + self.n}}
                    out += b"data: " + json.dumps(usage).encode() + b"\n\n"
                out += b"data: [DONE]\n\n"
            if out:
                self.handler.wfile.write(out)
        self.emitted = upto
        return self.step == self.steps


class Engine:
    def __init__(self):
        self.cond = threading.Condition()
        self.waiting = []
        self.running = []
        threading.Thread(target=self.loop, daemon=True).start()

    def submit(self, job):
        with self.cond:
            self.waiting.append(job)
            self.cond.notify()
        job.done.wait()

    def power(self):
        return IDLE_W + W_PER_TOKEN_S * sum(j.rate for j in self.running)

    def loop(self):
        next_t = None
        while True:
            with self.cond:
                while not self.waiting and not self.running:
                    next_t = None
                    self.cond.wait()
                if self.waiting:
                    self.running += self.waiting
                    self.waiting = []
                    set_power(self.power())
            if next_t is None:
                next_t = time.monotonic()
            next_t += STEP_S
            time.sleep(max(0.0, next_t - time.monotonic()))
            if time.monotonic() > next_t + STEP_S:
                next_t = time.monotonic()  # far behind (a loaded machine): a new grid
            finished = []
            for job in self.running:
                try:
                    if job.run_step():
                        finished.append(job)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    print("cancelled", file=sys.stderr, flush=True)
                    finished.append(job)
            if finished:
                with self.cond:
                    self.running = [j for j in self.running if j not in finished]
                    set_power(self.power())
                for job in finished:
                    job.done.set()


engine = Engine()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        # /metrics as vLLM serves it (the proxy appends its own); anything else: a health answer.
        metrics = self.path == "/metrics"
        body = b"# TYPE fake_upstream_up gauge\nfake_upstream_up 1\n" if metrics else b'{"status":"ok"}'
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4" if metrics else "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length) or b"{}")
        if self.path == "/garbage":
            self.wfile.write(b"this is not HTTP\r\n\r\n")
            self.close_connection = True
            return
        stream = request.get("stream") is True or self.path == "/close"
        job = Job(self, request, stream)
        if stream:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
        engine.submit(job)
        if not stream:
            self.whole(job.n, job.model)

    def whole(self, n, model):
        text = "".join("tok%d " % i for i in range(n))
        body = json.dumps({"id": "cmpl-fake", "object": "chat.completion", "model": model,
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                        "finish_reason": "length"}],
                           "usage": {"prompt_tokens": 7, "completion_tokens": n,
                                     "total_tokens": 7 + n}}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            print("cancelled", file=sys.stderr, flush=True)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
server.request_queue_size = 256
print("port %d" % server.server_address[1], flush=True)
server.serve_forever()
