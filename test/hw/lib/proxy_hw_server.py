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
