#!/usr/bin/python3
"""Hold slow and idle connections against a server while a normal client keeps asking.

  connection_attack.py (--tcp HOST:PORT | --unix PATH) --path /healthz [--slow 200] [--idle 500]
                       [--attacker-uid UID] [--requests 300] [--budget-ms 10] [--max-ms MS]

Phase 1 measures the normal client unloaded (sequential keep-alive requests, each on a fresh
connection every 20th); phase 2 opens --slow slowloris connections (a header line every second,
never the blank line) and --idle idle ones, from a child process running as --attacker-uid when
given, then measures again. Prints one JSON line; exits 1 when the client saw an error or a
non-200, or its attacked p99 exceeded 3x the unloaded p99 plus --budget-ms (noise on a busy CI
machine) or, with --max-ms, any attacked request took longer than MS; 0 otherwise. Used by
test/e2e/*_connection_attack.sh and *_survives_low_descriptor_limit.sh (slowloris and idle
connections, with and without a low descriptor limit, lock neither server out).
"""
import argparse, json, os, signal, socket, sys, time


def connect(args):
    if args.unix:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(args.unix)
    else:
        host, port = args.tcp.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
    s.settimeout(10)
    return s


def request(s, path):
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: attack\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the answer")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        body += s.recv(65536)
    return int(head.split(b" ")[1])


def measure(args):
    latencies, errors, s = [], [], None
    for i in range(args.requests):
        t = time.perf_counter()
        try:
            if s is None or i % 20 == 0:
                if s: s.close()
                s = connect(args)
            status = request(s, args.path)
            if status != 200:
                errors.append(f"status {status}")
        except OSError as e:
            errors.append(str(e))
            s = None
        latencies.append((time.perf_counter() - t) * 1000)
    latencies.sort()
    return latencies, errors


def attackers(args, ready_w):
    if args.attacker_uid is not None:
        os.setgid(args.attacker_uid)
        os.setuid(args.attacker_uid)
    held, refused = [], 0
    for i in range(args.slow + args.idle):
        try:
            s = connect(args)
            if i < args.slow:
                s.sendall(f"GET {args.path} HTTP/1.1\r\nHost: x\r\n".encode())
            held.append(s)
        except OSError:
            refused += 1
    os.write(ready_w, json.dumps({"opened": len(held), "refused": refused}).encode() + b"\n")
    n = 0
    while True:  # slowloris: one more header line a second, never the end
        time.sleep(1)
        n += 1
        for s in held[: args.slow]:
            try:
                s.sendall(b"X-%d: y\r\n" % n)
            except OSError:
                pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tcp"); p.add_argument("--unix")
    p.add_argument("--path", default="/healthz")
    p.add_argument("--slow", type=int, default=200); p.add_argument("--idle", type=int, default=500)
    p.add_argument("--attacker-uid", type=int); p.add_argument("--requests", type=int, default=300)
    p.add_argument("--budget-ms", type=float, default=10.0)
    p.add_argument("--max-ms", type=float)
    args = p.parse_args()
    calm, calm_errors = measure(args)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        try:
            attackers(args, ready_w)
        finally:
            os._exit(0)
    os.close(ready_w)
    held = json.loads(os.read(ready_r, 4096).decode())
    time.sleep(1.5)  # past one slowloris trickle
    attacked, attacked_errors = measure(args)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    p99 = lambda v: v[int(0.99 * (len(v) - 1))]
    result = {"attackers_opened": held["opened"], "attackers_refused": held["refused"],
              "unloaded_p99_ms": round(p99(calm), 2), "attacked_p99_ms": round(p99(attacked), 2),
              "attacked_max_ms": round(attacked[-1], 2),
              "errors": (calm_errors + attacked_errors)[:5]}
    print(json.dumps(result))
    ok = not calm_errors and not attacked_errors and \
        p99(attacked) <= 3 * p99(calm) + args.budget_ms and \
        (args.max_ms is None or attacked[-1] <= args.max_ms)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
