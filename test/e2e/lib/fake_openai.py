#!/usr/bin/python3
"""A small fake OpenAI-compatible server for the proxy's tests (zeus proxy, test/e2e/proxy_*.sh).

POST /v1/chat/completions and /v1/completions: answers `max_tokens` tokens ("tok0 ", "tok1 ", ...)
over `duration_s` (default 0.5 s: every request of a batch lasts as long, so a request with twice
the tokens produces them twice as fast), streamed as Server-Sent Events when "stream": true (with
a usage chunk when stream_options.include_usage), else one JSON answer with usage. Deterministic:
the same request gets the same bytes. Power model: the fake NVML's power_draw_mw (state file
ZEUS_FAKE_NVML_STATE) is rewritten at every start and end to IDLE_W + W_PER_TOKEN_S x the tokens
per second of the requests in flight, so energy follows the tokens produced.
Paths for error tests: /garbage answers bytes that are not HTTP; /close streams three chunks
and closes. Prints "port N" on its first line; appends "cancelled" to stderr when a client left.
Options, for two fakes side by side (the Colosseum's tests): --gpu N rewrites only device N of
the state file (under a lock on STATE.lock, so two fakes can share it); --tokens N answers N
tokens whatever max_tokens says; --duration S is the default duration_s; --w-per-token-s W the
power model's slope.
"""
import argparse
import fcntl
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default=-1, help="the only device to rewrite (-1: all)")
parser.add_argument("--tokens", type=int, default=0, help="tokens per answer (0: max_tokens)")
parser.add_argument("--duration", type=float, default=0.5, help="default duration_s")
parser.add_argument("--w-per-token-s", type=float, default=2.0)
ARGS = parser.parse_args()

IDLE_W = 60.0
W_PER_TOKEN_S = ARGS.w_per_token_s
STATE = os.environ.get("ZEUS_FAKE_NVML_STATE", "")
lock = threading.Lock()
rates = {}  # request key -> tokens per second


def set_power():
    if not STATE:
        return
    watts = IDLE_W + W_PER_TOKEN_S * sum(rates.values())
    with open(STATE + ".lock", "a") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        with open(STATE) as f:
            state = json.load(f)
        for index, device in enumerate(state["devices"]):
            device.pop("energy_mj", None)  # keep counting from where it was
            device.pop("energy_time_ns", None)
            if ARGS.gpu < 0 or index == ARGS.gpu:
                device["power_draw_mw"] = int(watts * 1000)
        tmp = STATE + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
        os.replace(tmp, STATE)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        body = b'{"status":"ok"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
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
        n = ARGS.tokens or int(request.get("max_tokens", 16))
        duration = float(request.get("duration_s", ARGS.duration))
        model = request.get("model", "fake")
        stream = request.get("stream") is True or self.path == "/close"
        key = object()
        with lock:
            rates[key] = n / duration
            set_power()
        try:
            if stream:
                self.stream(request, n, duration, model)
            else:
                time.sleep(duration)
                self.whole(n, model)
        except (BrokenPipeError, ConnectionResetError):
            print("cancelled", file=sys.stderr, flush=True)
        finally:
            with lock:
                del rates[key]
                set_power()

    def whole(self, n, model):
        text = "".join("tok%d " % i for i in range(n))
        body = json.dumps({"id": "cmpl-fake", "object": "chat.completion", "model": model,
                           "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                        "finish_reason": "length"}],
                           "usage": {"prompt_tokens": 7, "completion_tokens": n,
                                     "total_tokens": 7 + n}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def stream(self, request, n, duration, model):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        begin = time.monotonic()
        for i in range(n):
            if self.path == "/close" and i == 3:
                self.wfile.flush()
                self.connection.shutdown(2)
                return
            chunk = {"id": "cmpl-fake", "object": "chat.completion.chunk", "model": model,
                     "choices": [{"index": 0, "delta": {"content": "tok%d " % i}}]}
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.flush()
            # Paced on the request's own clock: a batch's requests end together, whatever the
            # cost of each write.
            time.sleep(max(0.0, begin + (i + 1) * duration / n - time.monotonic()))
        if (request.get("stream_options") or {}).get("include_usage"):
            usage = {"id": "cmpl-fake", "object": "chat.completion.chunk", "model": model,
                     "choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": n,
                                              "total_tokens": 7 + n}}
            self.wfile.write(b"data: " + json.dumps(usage).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print("port %d" % server.server_address[1], flush=True)
server.serve_forever()
