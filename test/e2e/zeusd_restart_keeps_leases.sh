#!/usr/bin/env bash
# zeusd's leases survive a zeusd crash. The real daemon over the fake
# libnvidia-ml.so.1, killed with SIGKILL and restarted with the same arguments:
#   1. a client that still runs keeps its 250 W on GPU 1, its lease is re-adopted (another
#      process, root too, gets 409), and its exit puts the default back;
#   2. a client that died while zeusd was down has its GPU restored when zeusd starts;
#   3. a damaged journal is set aside and reported, and zeusd still starts and serves;
#   4. a GPU left away from its default with no lease is warned about at start.
set -euo pipefail
zeusd="$ZEUS_BIN/zeusd"
py=/usr/bin/python3
dir=$(mktemp -d)
chmod 755 "$dir"
zeusd_pid=""
holders=()
cleanup() {
  if [ -n "$zeusd_pid" ]; then kill -TERM "$zeusd_pid" 2>/dev/null || true; wait "$zeusd_pid" 2>/dev/null || true; fi
  for h in "${holders[@]}"; do kill -KILL "$h" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$dir/zeusd.log" ] && tail -30 "$dir/zeusd.log" >&2; exit 1; }

cat > "$dir/state.json" <<'JSON'
{"devices": [
  {"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "power_draw_mw": 350000,
   "min_limit_mw": 200000, "max_limit_mw": 700000},
  {"name": "NVIDIA A100-SXM4-40GB", "architecture": 7, "power_draw_mw": 250000,
   "min_limit_mw": 100000, "max_limit_mw": 400000}]}
JSON
chmod 644 "$dir/state.json"
export ZEUS_FAKE_NVML_STATE="$dir/state.json"
export ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH
sock="$dir/zeusd.sock"
journal="$dir/zeusd-leases.json"

limit() {  # limit GPU -> its power limit in the fake's state, mW
  "$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["devices"][int(sys.argv[2])].get("limit_mw", -1))' "$dir/state.json" "$1"
}
wait_limit() {  # wait_limit GPU MW SECONDS: true when the limit becomes MW in time
  local deadline=$(( $(date +%s%N) + ${3%.*}000000000 ))
  while [ "$(date +%s%N)" -lt "$deadline" ]; do
    [ "$(limit "$1")" = "$2" ] && return 0
    sleep 0.02
  done
  [ "$(limit "$1")" = "$2" ]
}
api() {  # api METHOD PATH [BODY] -> "BODY STATUS"
  curl -s --unix-socket "$sock" -X "$1" ${3:+-d "$3"} -w ' %{http_code}' "http://zeusd$2"
}
start_zeusd() {
  : > "$dir/zeusd.log"
  "$zeusd" --socket "$sock" --socket-mode 0666 --allow 'gpu-read=*' --log-level info \
    > /dev/null 2> "$dir/zeusd.log" &
  zeusd_pid=$!
  for _ in $(seq 200); do
    grep -q "zeusd: serving" "$dir/zeusd.log" && return 0
    kill -0 "$zeusd_pid" 2>/dev/null || fail "zeusd exited at start"
    sleep 0.05
  done
  fail "zeusd did not start"
}
crash_zeusd() {
  kill -KILL "$zeusd_pid"
  wait "$zeusd_pid" 2>/dev/null || true
  zeusd_pid=""
}
holder() {  # holder GPU MW NAME: sets the limit, then runs until $dir/NAME.stop exists
  "$py" - "$sock" "$1" "$2" "$dir/$3.stop" > "$dir/$3.out" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(("POST /gpu/set_power_limit?gpu_ids=%s&power_limit_mw=%s&block=true HTTP/1.1\r\nHost: zeusd\r\n"
           "Content-Length: 0\r\n\r\n" % (sys.argv[2], sys.argv[3])).encode())
print(s.recv(4096).decode().split("\r\n")[0], flush=True)
while not os.path.exists(sys.argv[4]):
    time.sleep(0.02)
PY
  holders+=($!)
}

# 1. The client outlives a zeusd crash: its lease is re-adopted and its exit restores the GPU.
start_zeusd
holder 1 250000 alice
alice=${holders[-1]}
wait_limit 1 250000 5 || fail "the client did not set GPU 1: $(cat "$dir/alice.out")"
grep -q '"pid": '"$alice" "$journal" || fail "the lease is not in the journal: $(cat "$journal")"
crash_zeusd
[ "$(limit 1)" = 250000 ] || fail "GPU 1 changed when zeusd was killed"
start_zeusd
grep -q "re-adopted the lease of pid $alice" "$dir/zeusd.log" || fail "lease not re-adopted"
out=$(api GET /leases)
echo "$out" | grep -q '"pid":'"$alice" || fail "GET /leases after restart: $out"
[ "$(limit 1)" = 250000 ] || fail "the running client lost its setting at the restart: $(limit 1)"
out=$(api POST "/gpu/set_power_limit?gpu_ids=1&power_limit_mw=300000&block=true")  # root, another process
[ "${out##* }" = 409 ] || fail "a leased GPU was taken after the restart: $out"
touch "$dir/alice.stop"
wait_limit 1 400000 2 || fail "GPU 1 not restored after the client exited: $(limit 1)"
grep -q "pid $alice (uid 0) exited: restore power limit 400000 mW on GPU 1" "$dir/zeusd.log" \
  || fail "restore not logged"
"$py" -c 'import json,sys; assert json.load(open(sys.argv[1]))["leases"] == []' "$journal" \
  || fail "the journal still holds the lease: $(cat "$journal")"

# 2. The client dies while zeusd is down: zeusd restores its GPU as it starts.
holder 0 300000 bob
bob=${holders[-1]}
wait_limit 0 300000 5 || fail "the client did not set GPU 0: $(cat "$dir/bob.out")"
crash_zeusd
kill -KILL "$bob"; wait "$bob" 2>/dev/null || true
[ "$(limit 0)" = 300000 ] || fail "GPU 0 changed before zeusd restarted"
start_zeusd
[ "$(limit 0)" = 700000 ] || fail "GPU 0 not restored at start: $(limit 0)"
grep -q "pid $bob (uid 0) exited while zeusd was down (from the lease journal): restore power limit 700000 mW on GPU 0" \
  "$dir/zeusd.log" || fail "restore at start not logged"

# 3. A damaged journal: reported and set aside; zeusd starts and serves.
crash_zeusd
printf '{"format": "zeusd-leases", "vers' > "$journal"
start_zeusd
grep -q "lease journal $journal is damaged" "$dir/zeusd.log" || fail "damage not reported"
ls "$dir"/zeusd-leases.json.damaged-* > /dev/null || fail "damaged journal not set aside"
out=$(api GET /discover)
[ "${out##* }" = 200 ] || fail "zeusd does not serve after a damaged journal: $out"

# 4. A GPU below its default with no lease is warned about at start.
crash_zeusd
"$py" - "$dir/state.json" <<'PY'
import json, sys
state = json.load(open(sys.argv[1]))
state["devices"][0]["limit_mw"] = 500000
json.dump(state, open(sys.argv[1], "w"))
PY
start_zeusd
grep -q "GPU 0 (GPU-[^)]*) has power limit 500000 mW, not its default 700000 mW, and no lease will restore it" \
  "$dir/zeusd.log" || fail "no warning about GPU 0's limit"
kill -TERM "$zeusd_pid"
wait "$zeusd_pid" || fail "zeusd exited with $?"
zeusd_pid=""
echo "zeusd_restart_keeps_leases: ok"
