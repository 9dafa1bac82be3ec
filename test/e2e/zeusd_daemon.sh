#!/usr/bin/env bash
# zeusd for real on a socket in a temp dir, over the fake libnvidia-ml.so.1 and a fake powercap
# tree: allowed and not-allowed clients, out-of-range values, restore after a normal exit and
# after SIGKILL (within 1 s), bad input, the zeus CLI routed through ZEUSD_SOCK_PATH, clean stop.
set -euo pipefail
zeusd="$ZEUS_BIN/zeusd"
zeus="$ZEUS_BIN/zeus"
py=/usr/bin/python3
dir=$(mktemp -d)
chmod 755 "$dir"
zeusd_pid=""
cleanup() {
  if [ -n "$zeusd_pid" ]; then kill -TERM "$zeusd_pid" 2>/dev/null || true; wait "$zeusd_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$dir/zeusd.log" ] && tail -20 "$dir/zeusd.log" >&2; exit 1; }

cat > "$dir/state.json" <<'JSON'
{"devices": [
  {"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "power_draw_mw": 350000,
   "min_limit_mw": 200000, "max_limit_mw": 700000},
  {"name": "NVIDIA A100-SXM4-40GB", "architecture": 7, "power_draw_mw": 250000,
   "min_limit_mw": 100000, "max_limit_mw": 400000}]}
JSON
chmod 644 "$dir/state.json"
rapl="$dir/powercap/intel-rapl:0"
mkdir -p "$rapl"
echo package-0 > "$rapl/name"; echo 123456789 > "$rapl/energy_uj"; echo 262143328850 > "$rapl/max_energy_range_uj"
chmod 000 "$rapl/energy_uj"  # like Linux >= 5.10: only root reads RAPL
export ZEUS_FAKE_NVML_STATE="$dir/state.json"
export ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/powercap"
unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH
sock="$dir/zeusd.sock"

limit() {  # limit GPU -> its power limit in the fake's state, mW (unset: the default, i.e. the max)
  "$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"][int(sys.argv[2])]; print(d.get("limit_mw", d.get("default_limit_mw", d["max_limit_mw"])))' "$dir/state.json" "$1"
}
wait_limit() {  # wait_limit GPU MW SECONDS: true when the limit becomes MW in time
  local deadline=$(( $(date +%s%N) + ${3%.*}000000000 ))
  while [ "$(date +%s%N)" -lt "$deadline" ]; do
    [ "$(limit "$1")" = "$2" ] && return 0
    sleep 0.02
  done
  [ "$(limit "$1")" = "$2" ]
}
api() {  # api [curl args...] METHOD PATH [BODY] -> prints "STATUS BODY"
  local method=$1 path=$2 body=${3:-}
  curl -s --unix-socket "$sock" -X "$method" ${body:+-d "$body"} -w ' %{http_code}' "http://zeusd$path"
}

"$zeusd" --socket "$sock" --socket-mode 0666 --allow 'gpu-read=*' --allow cpu-read=nobody --log-level info \
  > "$dir/zeusd.out" 2> "$dir/zeusd.log" &
zeusd_pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "zeusd did not create $sock"
[ "$(stat -c %a "$sock")" = 666 ] || fail "socket mode $(stat -c %a "$sock")"

# 1. Discovery, as root and as nobody.
api GET /discover | grep -q '"uuid"' || fail "GET /discover"
out=$(runuser -u nobody -- curl -s --unix-socket "$sock" http://zeusd/discover)
echo "$out" | "$py" -c 'import json,sys; d=json.load(sys.stdin); assert len(d["gpus"])==2 and d["caller"]["capabilities"]==["gpu-read","cpu-read"], d'

set_limit() {  # set_limit GPU MW -> the target of upstream's set_power_limit
  echo "/gpu/set_power_limit?gpu_ids=$1&power_limit_mw=$2&block=true"
}

# 2. Not on the gpu-control allow-list: 403, nothing changes.
out=$(runuser -u nobody -- curl -s --unix-socket "$sock" -X POST -w ' %{http_code}' "http://zeusd$(set_limit 0 300000)")
[ "${out##* }" = 403 ] || fail "nobody got '$out', expected 403"
echo "$out" | grep -q "gpu-control allow-list" || fail "403 message: $out"
[ "$(limit 0)" = 700000 ] || fail "limit changed by a refused request"

# 3. Out of range: 400 naming the range; unknown GPU: 400 naming it (upstream's answer).
out=$(api POST "$(set_limit 0 50000)")
[ "${out##* }" = 400 ] && echo "$out" | grep -q "200000-700000 mW" || fail "out of range: $out"
out=$(api POST "$(set_limit 7 300000)")
[ "${out##* }" = 400 ] && echo "$out" | grep -q "GPU 7 not found" || fail "unknown GPU: $out"
# The removed /gpu/{i}/<knob> routes: 404 naming the route that replaces them, nothing changes.
out=$(api POST /gpu/0/power_limit '{"power_limit_mw": 300000}')
[ "${out##* }" = 404 ] && echo "$out" | grep -qF 'use POST /gpu/set_power_limit?gpu_ids=0' \
  || fail "removed route: $out"
out=$(api GET /gpu/1/power)
[ "${out##* }" = 404 ] && echo "$out" | grep -qF 'GET /gpu/get_average_power?gpu_ids=1' \
  || fail "removed power route: $out"
[ "$(limit 0)" = 700000 ] || fail "limit changed by a refused request"

# 4. An allowed client (curl as root) sets a limit; its exit restores it at once.
out=$(api POST "$(set_limit 1 150000)")
[ "${out##* }" = 200 ] || fail "set limit: $out"
wait_limit 1 400000 1 || fail "limit not restored after the client exited: $(limit 1)"
grep -q "uid 0 (root) pid [0-9]* set power limit 400000 -> 150000 mW on GPU 1" "$dir/zeusd.log" || fail "change not logged"

# 5. A client holding its connection, killed with SIGKILL: restored within 1 s. A second client on
#    the other GPU is not disturbed.
holder() {  # holder GPU MW: sets the limit through one kept-open connection, then sleeps
  "$py" - "$sock" "$1" "$2" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(("POST /gpu/set_power_limit?gpu_ids=%s&power_limit_mw=%s&block=true HTTP/1.1\r\nHost: zeusd\r\n"
           "Content-Length: 0\r\n\r\n" % (sys.argv[2], sys.argv[3])).encode())
print(s.recv(4096).decode().split("\r\n")[0], flush=True)
time.sleep(60)
PY
}
holder 0 300000 > "$dir/a.out"; a=$!; disown "$a"  # no "Killed" job report
holder 1 200000 > "$dir/b.out"; b=$!; disown "$b"
wait_limit 0 300000 5 || fail "holder A did not set GPU 0: $(cat "$dir/a.out")"
wait_limit 1 200000 5 || fail "holder B did not set GPU 1: $(cat "$dir/b.out")"
kill -KILL "$a"
wait_limit 0 700000 1 || fail "GPU 0 not restored within 1 s of SIGKILL: $(limit 0)"
[ "$(limit 1)" = 200000 ] || fail "B's GPU 1 was disturbed: $(limit 1)"
kill -KILL "$b"
wait_limit 1 400000 1 || fail "GPU 1 not restored within 1 s of SIGKILL"

# 6. Bad input never crashes it.
"$py" - "$sock" <<'PY'
import socket, sys
def exchange(data):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    try:
        s.sendall(data)
    except OSError:
        pass
    s.shutdown(socket.SHUT_WR)
    answer = b""
    while chunk := s.recv(65536):
        answer += chunk
    return answer
cases = [(b"\x00\xff garbage\r\n\r\n", b"400"), (b"GET / HTTP/9.9\r\n\r\n", b"505"),
         (b"POST /gpu/set_power_limit HTTP/1.1\r\nHost: zeusd\r\nContent-Length: 99999999999\r\n\r\n", b"413"),
         (b"GET /discover HTTP/1.1\r\nHost: zeusd\r\nX: " + b"a" * 200000 + b"\r\n\r\n", b"431"),
         (b"POST /gpu/set_power_limit?gpu_ids=0&power_limit_mw=%5B%5B%5B&block=true HTTP/1.1\r\n"
          b"Host: zeusd\r\nContent-Length: 3\r\n\r\n[[[", b"400"),
         (b"GET /gpu/abc/energy HTTP/1.1\r\nHost: zeusd\r\n\r\n", b"404")]
for data, status in cases:
    answer = exchange(data)
    assert answer.startswith(b"HTTP/1.1 " + status), (data[:40], answer[:80])
PY
kill -0 "$zeusd_pid" || fail "zeusd died on bad input"

# 7. The zeus CLI honours ZEUSD_SOCK_PATH: nobody reads RAPL through zeusd.
runuser -u nobody -- env ZEUSD_SOCK_PATH="$sock" "$zeus" devices --json > "$dir/devices.json"
"$py" - "$dir/devices.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["gpus"]) == 2, d["gpus"]
assert len(d["cpus"]) == 1, d
assert any(b["backend"] == "zeusd" and b["used"] for b in d["backends"]), d["backends"]
PY
env ZEUSD_SOCK_PATH="$dir/missing.sock" "$zeus" devices > /dev/null 2> "$dir/err.txt" && fail "missing socket accepted"
grep -q "missing.sock" "$dir/err.txt" || fail "error does not name the socket: $(cat "$dir/err.txt")"

# 8. A second zeusd on the same socket is refused; SIGTERM stops it cleanly and removes the socket.
if "$zeusd" --socket "$sock" 2> "$dir/second.log"; then fail "second zeusd started"; fi
grep -q "already serving" "$dir/second.log" || fail "second zeusd: $(cat "$dir/second.log")"
kill -TERM "$zeusd_pid"
wait "$zeusd_pid" || fail "zeusd exited with $?"
zeusd_pid=""
[ ! -e "$sock" ] || fail "socket left behind"
echo "zeusd e2e ok"
