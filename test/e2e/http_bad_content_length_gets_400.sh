#!/usr/bin/env bash
# A negative or 20-digit Content-Length and two conflicting Content-Length
# headers get a prompt 400 (well before any request timeout), from `zeus serve` and from zeusd
# alike, with the connection left open by the client (so only the header can trigger the answer).
set -euo pipefail
dir=$(mktemp -d)
chmod 755 "$dir"
source "$ZEUS_SOURCE_DIR/test/load/serve_lib.sh"
zeusd_pid=""
trap 'kill "${server_pid[c11]:-}" 2>/dev/null || true; [ -n "$zeusd_pid" ] && kill "$zeusd_pid" 2>/dev/null; rm -rf "$dir"' EXIT

start_server c11 "memory://" 0 || fail "zeus serve did not start"
export ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1" ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_POWERCAP_ROOT="$dir/no-powercap"
"$ZEUS_BIN/zeusd" --socket "$dir/zeusd.sock" 2> "$dir/zeusd.log" &
zeusd_pid=$!
for _ in $(seq 200); do [ -S "$dir/zeusd.sock" ] && break; sleep 0.05; done
[ -S "$dir/zeusd.sock" ] || fail "zeusd did not start: $(cat "$dir/zeusd.log")"

/usr/bin/python3 - "${server_url[c11]##*:}" "$dir/zeusd.sock" <<'PY'
import socket, sys, time
port, zeusd_socket = int(sys.argv[1]), sys.argv[2]
cases = {
    "negative": b"Content-Length: -5\r\n",
    "20 digits": b"Content-Length: 99999999999999999999\r\n",
    "conflicting": b"Content-Length: 3\r\nContent-Length: 5\r\n",
    "conflicting list": b"Content-Length: 3, 5\r\n",
}
servers = {"zeus serve": lambda: socket.create_connection(("127.0.0.1", port)),
           "zeusd": lambda: (lambda s: (s.connect(zeusd_socket), s)[1])(socket.socket(socket.AF_UNIX))}
failures = []
for server, connect in servers.items():
    for name, header in cases.items():
        s = connect()
        s.settimeout(3)  # the servers' header timeouts are 10 s: an answer within 3 s is prompt
        start = time.monotonic()
        s.sendall(b"POST /jobs HTTP/1.1\r\nHost: x\r\n" + header + b"\r\nabc")
        try:
            answer = s.recv(4096)
        except socket.timeout:
            answer = b"(no answer within 3 s)"
        elapsed = time.monotonic() - start
        s.close()
        line = answer.split(b"\r\n")[0].decode(errors="replace")
        print(f"{server}, {name}: {line} after {elapsed:.2f} s")
        if not line.startswith("HTTP/1.1 400"):
            failures.append(f"{server}, {name}: {line}")
if failures:
    sys.exit("FAIL: " + "; ".join(failures))
PY
kill -0 "${server_pid[c11]}" || fail "zeus serve died"
kill -0 "$zeusd_pid" || fail "zeusd died"
echo "http_bad_content_length_gets_400: ok"
