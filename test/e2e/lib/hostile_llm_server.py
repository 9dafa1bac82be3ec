#!/usr/bin/python3
"""A misbehaving OpenAI-style server for the calibration's e2e tests. hostile_llm_server.py MODE:
  forever   streams a token every 50 ms and never ends the answer (ignores max_tokens)
  keepalive streams one token, then only SSE keep-alive comments, never ending
  onechunk  sends each whole answer in one SSE event (no TPOT can be measured)
  steady    well behaved: 8 tokens, one every 10 ms, then [DONE] (its GPU is whatever the test says)
Prints "port N" on its first line."""
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]


def event(text):
    chunk = {"choices": [{"index": 0, "text": text}]}
    return ("data: " + json.dumps(chunk) + "\n\n").encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def send(data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        try:
            if MODE == "onechunk":
                send(event("tok " * 8))
                send(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")
                return
            if MODE == "steady":
                for _ in range(8):
                    send(event("tok "))
                    time.sleep(0.01)
                send(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")
                return
            send(event("tok "))
            while True:
                time.sleep(0.05)
                send(event("tok ") if MODE == "forever" else b": keep-alive\n\n")
        except (BrokenPipeError, ConnectionResetError):
            pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print("port", server.server_address[1], flush=True)
server.serve_forever()
