#!/usr/bin/env bash
# Hardware check (ctest label hw, `make hw`; needs root and an NVIDIA GPU): zeusd over the real
# NVML sets a power limit for a non-root user (nobody, on the gpu-control allow-list) and restores
# it within 1 s after that user's process is killed with SIGKILL; GET /gpu/get_state reads the
# limit in force, the draw and the SM clock. Prints what it saw.
# --dry-run-fake: the same on the fake NVML (build/release/fakes), to check the script itself on
# a machine without a GPU (the GPU kit's run.sh --fake). Needs no curl: requests go through
# Python's http.client over the socket.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ZEUS_BUILD_DIR=${ZEUS_BUILD_DIR:-$here/../../build/release}
ZEUS_BIN=${ZEUS_BIN:-$ZEUS_BUILD_DIR/bin}
zeusd="$ZEUS_BIN/zeusd"
py=${PYTHON:-python3}
dir=$(mktemp -d)
chmod 755 "$dir"
fake=0
[ "${1:-}" = "--dry-run-fake" ] && fake=1
sock="$dir/zeusd.sock"
zeusd_pid=""
cleanup() {
  if [ -n "$zeusd_pid" ]; then kill -TERM "$zeusd_pid" 2>/dev/null || true; wait "$zeusd_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; tail -20 "$dir/zeusd.log" >&2 || true; exit 1; }
unset CUDA_VISIBLE_DEVICES
if [ $fake = 1 ]; then
  state=${HW_KIT_FAKE_STATE:-$dir/state.json}  # the kit's guard's file under run.sh --fake
  echo '{"devices": [{"name": "NVIDIA H100 80GB HBM3"}]}' > "$state"
  chmod 666 "$state"
  export ZEUS_FAKE_NVML_STATE="$state"
  export ZEUS_NVML_PATH="$ZEUS_BUILD_DIR/fakes/libnvidia-ml.so.1"
else
  unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE
fi
# The holder runs as nobody: a Python that nobody may run (a root-only venv's may not be).
holder_py=""
for candidate in /usr/bin/python3 "$py"; do
  if runuser -u nobody -- "$candidate" -c pass 2> /dev/null; then holder_py=$candidate; break; fi
done
[ -n "$holder_py" ] || fail "no python3 that the user nobody may run (tried /usr/bin/python3, $py)"

"$zeusd" --socket "$sock" --socket-mode 0666 --allow gpu-control=nobody --allow 'gpu-read=*' 2> "$dir/zeusd.log" &
zeusd_pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "zeusd did not start"
cat > "$dir/get.py" <<'PY'
import http.client, socket, sys, time
class Unix(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sys.argv[1])
def get(path):
    c = Unix("zeusd", timeout=5)
    c.request("GET", path)
    r = c.getresponse()
    body = r.read().decode()
    if r.status != 200:
        sys.exit(f"GET {path}: {r.status} {body[:200]}")
    return body
if sys.argv[2] == "--until-limit":  # poll until the limit reads argv[3] mW; print the ms waited
    import json
    start = time.monotonic()
    while time.monotonic() - start < float(sys.argv[4]):
        now = json.loads(get("/gpu/get_power_limit?gpu_ids=0"))["0"]["power_limit_mw"]
        if str(now) == sys.argv[3]:
            print(round((time.monotonic() - start) * 1000))
            sys.exit(0)
        time.sleep(0.005)
    print(f"still {now}")
    sys.exit(1)
sys.stdout.write(get(sys.argv[2]))
PY
get() { "$py" "$dir/get.py" "$sock" "$1"; }
read -r min max default < <(get /discover | "$py" -c '
import json, sys
g = json.load(sys.stdin)["gpus"][0]
print(g["power_limit_range_mw"]["min"], g["power_limit_range_mw"]["max"], g["default_power_limit_mw"])')
before=$(get "/gpu/get_power_limit?gpu_ids=0" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["0"]["power_limit_mw"])')
target=$(( (min + max) / 2 / 1000 * 1000 ))
[ "$target" != "$before" ] || target=$min
echo "GPU 0: range $min-$max mW, default $default mW, now $before mW; nobody sets $target mW"

runuser -u nobody -- "$holder_py" - "$sock" "$target" > "$dir/holder.out" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(("POST /gpu/set_power_limit?gpu_ids=0&power_limit_mw=%s&block=true HTTP/1.1\r\nHost: zeusd\r\n"
           "Content-Length: 0\r\n\r\n" % sys.argv[2]).encode())
print(s.recv(4096).decode().split("\r\n")[0], flush=True)
time.sleep(120)
PY
holder=$!
disown "$holder"
for _ in $(seq 100); do grep -q HTTP "$dir/holder.out" && break; sleep 0.05; done
grep -q "HTTP/1.1 200" "$dir/holder.out" || fail "nobody's request: $(cat "$dir/holder.out")"
now=$(get "/gpu/get_power_limit?gpu_ids=0" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["0"]["power_limit_mw"])')
smi=$(nvidia-smi -i 0 --query-gpu=power.limit --format=csv,noheader,nounits 2>/dev/null || echo n/a)
echo "after nobody's change: zeusd reads $now mW, nvidia-smi reads $smi W"
[ "$now" = "$target" ] || fail "limit is $now mW, expected $target"
# What is in force, as a controller reads it (GET /gpu/get_state): the limit just set, the draw,
# the SM clock the GPU runs at now.
state=$(get "/gpu/get_state?gpu_ids=0")
echo "get_state: $state"
"$py" -c 'import json, sys
s = json.loads(sys.argv[1])["0"]
assert s["power_limit_mw"] == int(sys.argv[2]), s
assert s["sm_clock_mhz"] is None or s["sm_clock_mhz"] > 0, s' "$state" "$target" || fail "get_state: $state"

child=$(pgrep -P "$holder" || true)  # runuser forks python: the lease is python's
start=$(date +%s%N)
kill -KILL $child "$holder" 2>/dev/null || true
restored=$("$py" "$dir/get.py" "$sock" --until-limit "$before" 1) || restored=""
now=$(get "/gpu/get_power_limit?gpu_ids=0" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["0"]["power_limit_mw"])')
[ -n "$restored" ] || fail "limit still $now mW 1 s after SIGKILL (expected $before)"
echo "restored to $before mW ${restored} ms after SIGKILL"
grep "nobody" "$dir/zeusd.log" | head -3
echo "zeusd real GPU check ok"
