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
