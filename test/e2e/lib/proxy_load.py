#!/usr/bin/python3
"""A benchmark-like load for the proxy's e2e tests: N streamed chat requests from C clients in a
closed loop (each sends its next request when its answer ends), output lengths 10-40 tokens over
0.3 s each, with usage. Usage: proxy_load.py PORT N C [MODEL...]; prints the answers' statuses
as JSON ({"200": N} when all went well). Models, when given, are used in turn."""
import collections
import http.client
import json
import sys
import threading

port, total, clients = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
models = sys.argv[4:] or ["m"]
lock = threading.Lock()
next_index = [0]
statuses = collections.Counter()


def worker():
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    while True:
        with lock:
            i = next_index[0]
            next_index[0] += 1
        if i >= total:
            return
        body = json.dumps({"model": models[i % len(models)], "max_tokens": 10 + (i * 7) % 31,
                           "duration_s": 0.3, "stream": True,
                           "stream_options": {"include_usage": True},
                           "messages": [{"role": "user", "content": "load %d" % i}]})
        connection.request("POST", "/v1/chat/completions", body,
                           {"Content-Type": "application/json", "X-Request-Id": "load-%d" % i})
        answer = connection.getresponse()
        answer.read()
        with lock:
            statuses[str(answer.status)] += 1
        if answer.getheader("Connection", "").lower() == "close":
            connection.close()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)


threads = [threading.Thread(target=worker) for _ in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(statuses))
