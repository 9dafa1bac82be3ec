#!/usr/bin/python3
"""Clients for test/e2e/proxy_energy.sh: raw HTTP/1.1 over sockets, so trailers and chunk framing
are seen as sent. Usage: proxy_clients.py DIRECT_PORT PROXY_PORT; prints JSON results."""
import json
import socket
import sys
import threading

direct_port, proxy_port = int(sys.argv[1]), int(sys.argv[2])


def exchange(port, body, path="/v1/chat/completions", extra=""):
    data = json.dumps(body).encode()
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               "Content-Length: %d\r\nConnection: close\r\n%s\r\n" % (path, len(data), extra)).encode()
              + data)
    raw = b""
    while True:
        piece = s.recv(65536)
        if not piece:
            break
        raw += piece
    s.close()
    return parse(raw)


def parse(raw):
    head, _, rest = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    trailers = {}
    if headers.get("transfer-encoding") == "chunked":
        body = b""
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                for line in rest.decode().split("\r\n"):
                    if line:
                        k, _, v = line.partition(":")
                        trailers[k.strip().lower()] = v.strip()
                break
            body += rest[:size]
            rest = rest[size + 2:]
    elif "content-length" in headers:
        body = rest[:int(headers["content-length"])]
    else:
        body = rest
    return {"status": status, "headers": headers, "trailers": trailers, "body": body.decode()}


def energy(answer):
    return float(answer["trailers"].get("x-zeus-energy-j") or answer["headers"].get("x-zeus-energy-j"))


results = {"identical": 0, "different": []}
# 1. Concurrent clients, streamed and not: bodies identical to a direct request.
requests = [{"model": "m%d" % (i % 2), "max_tokens": 10 + i, "stream": i % 2 == 0,
             "messages": [{"role": "user", "content": "hello %d" % i}]} for i in range(32)]
direct = [exchange(direct_port, r) for r in requests[:2]]  # the two shapes, checked below
proxied = [None] * len(requests)


def run(i):
    proxied[i] = exchange(proxy_port, requests[i])


threads = [threading.Thread(target=run, args=(i,)) for i in range(len(requests))]
for t in threads:
    t.start()
for t in threads:
    t.join()
# The direct answers of the others, fetched concurrently too (the fake's bytes do not depend on
# timing).
direct += [None] * (len(requests) - 2)


def run_direct(i):
    direct[i] = exchange(direct_port, requests[i])


threads = [threading.Thread(target=run_direct, args=(i,)) for i in range(2, len(requests))]
for t in threads:
    t.start()
for t in threads:
    t.join()
for i, answer in enumerate(proxied):
    expected = direct[i]
    if answer["body"] == expected["body"] and answer["status"] == expected["status"]:
        results["identical"] += 1
    else:
        results["different"].append(i)
results["stream_trailers"] = proxied[0]["trailers"]
results["whole_headers"] = {k: v for k, v in proxied[1]["headers"].items() if k.startswith("x-zeus")}

# 2. One batch: three requests of 100 tokens and one of 200 over the same 1 s.
batch = [{"model": "m", "max_tokens": 200 if i == 0 else 100, "duration_s": 1.0, "stream": True,
          "messages": [{"role": "user", "content": "batch"}]} for i in range(4)]
answers = [None] * 4


def run_batch(i):
    answers[i] = exchange(proxy_port, batch[i])


threads = [threading.Thread(target=run_batch, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
neighbours = sum(energy(a) for a in answers[1:]) / 3
results["batch_ratio"] = energy(answers[0]) / neighbours

# 3. Asked for: usage.energy_j in the body and the SSE comment before [DONE].
asked = exchange(proxy_port, {"model": "m", "max_tokens": 5}, extra="X-Zeus-Energy: 1\r\n")
results["asked_usage_energy_j"] = json.loads(asked["body"])["usage"].get("energy_j")
asked_stream = exchange(proxy_port, {"model": "m", "max_tokens": 5, "stream": True},
                        path="/v1/chat/completions?zeus=1")
body = asked_stream["body"]
results["asked_comment_before_done"] = (": zeus-energy-j=" in body and
                                        body.index(": zeus-energy-j=") < body.index("data: [DONE]"))
print(json.dumps(results))
