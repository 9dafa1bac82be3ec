"""Replays a slice of an Azure LLM inference trace (data/llm_traces/, CC-BY 4.0) through a proxy
at the trace's own arrival times, streamed, and measures each request's TTFT and TPOT on the
client; for test/e2e/proxy_govern.sh and the GPU check test/hw/proxy_govern_real.sh.

    proxy_govern_load.py TRACE PORT SECONDS [DIRECT_PORT]

Requests: the trace's first SECONDS x GOVERN_SPEEDUP (environment, default 1) seconds of
arrivals, their times divided by GOVERN_SPEEDUP; prompts of ContextTokens / 4 tokens (the fake's
tokenizer: 3 characters a token), answers of GeneratedTokens / 6 tokens (2-48): the shape of the
trace at a size two cores serve. With DIRECT_PORT (the server itself), every answer must be
byte-identical to the direct one (the fake's answers are deterministic). Prints one JSON object:
requests, ttft_s and tpot_s quantiles (p50, p95, p99), identical, different."""
import csv
import datetime
import http.client
import json
import os
import sys
import threading
import time

trace, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
direct_port = int(sys.argv[4]) if len(sys.argv) > 4 else 0
speedup = float(os.environ.get("GOVERN_SPEEDUP", "1"))

requests = []
with open(trace) as f:
    start = None
    for row in csv.DictReader(f):
        t = datetime.datetime.fromisoformat(row["TIMESTAMP"][:26])
        start = start or t
        at = (t - start).total_seconds() / speedup
        if at > seconds:
            break
        prompt_tokens = max(1, int(row["ContextTokens"]) // 4)
        out_tokens = max(2, min(48, int(row["GeneratedTokens"]) // 6))
        body = {"prompt": ("word " * prompt_tokens)[: 3 * prompt_tokens], "max_tokens": out_tokens,
                "stream": True, "stream_options": {"include_usage": True}}
        requests.append((at, json.dumps(body).encode()))


def post(to_port, body):
    """(body bytes, ttft, tpot) of one streamed request."""
    conn = http.client.HTTPConnection("127.0.0.1", to_port, timeout=120)
    t0 = time.monotonic()
    conn.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    data, first, tokens = b"", None, 0
    while True:
        line = response.readline()
        if not line:
            break
        data += line
        if line.startswith(b"data: {") and b'"text"' in line:
            tokens += 1
            if first is None:
                first = time.monotonic()
    end = time.monotonic()
    conn.close()
    ttft = (first or end) - t0
    tpot = (end - first) / (tokens - 1) if first and tokens > 1 else None
    return data, ttft, tpot


results = [None] * len(requests)


def run(i, at, body, t_start):
    time.sleep(max(0.0, t_start + at - time.monotonic()))
    results[i] = post(port, body)


t_start = time.monotonic() + 0.2
threads = [threading.Thread(target=run, args=(i, at, body, t_start)) for i, (at, body) in enumerate(requests)]
for t in threads:
    t.start()
for t in threads:
    t.join()

identical = different = 0
if direct_port:
    for i in range(0, len(requests), max(1, len(requests) // 10)):
        if post(direct_port, requests[i][1])[0] == results[i][0]:
            identical += 1
        else:
            different += 1


def quantiles(values):
    values = sorted(v for v in values if v is not None)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))] if values else None
    return {"p50": pick(0.5), "p95": pick(0.95), "p99": pick(0.99), "n": len(values)}


print(json.dumps({"requests": len(requests), "ttft_s": quantiles(r[1] for r in results),
                  "tpot_s": quantiles(r[2] for r in results),
                  "identical": identical, "different": different}))
