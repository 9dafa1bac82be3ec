#!/usr/bin/env bash
# Lease sessions over TCP: zeusd serve with a signing key on 127.0.0.1 and
# --lease-session-timeout 2, over the fake libnvidia-ml.so.1. Our C++ client (ZEUSD_HOST_PORT +
# ZEUSD_TOKEN, through zeus_clock_controller_check) sets a power limit and locks clocks in a lease
# session; while it heart-beats they stay (past several timeouts); SIGKILLed, they stay until the
# session times out and are then restored (the fake NVML's state shows each step). A change
# from an upstream-style client (curl, no session header) persists; an unknown session is 404
# and changes nothing; the header on the Unix socket is 400; closing a session restores at once.
set -euo pipefail
source "$(dirname "$0")/lib/zeusd_lib.sh"
check="$ZEUS_BIN/zeus_clock_controller_check"
job_pid=""
trap '[ -n "$job_pid" ] && kill -KILL "$job_pid" 2>/dev/null; zeusd_lib_cleanup' EXIT

fake_gpus '{"devices": [
  {"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "min_limit_mw": 200000,
   "max_limit_mw": 700000, "limit_mw": 400000,
   "memory_clocks_mhz": [2619, 1593], "graphics_clocks_mhz": [1980, 1500, 1200, 900, 600]},
  {"name": "NVIDIA A100-SXM4-40GB", "architecture": 7, "min_limit_mw": 100000,
   "max_limit_mw": 400000, "limit_mw": 250000}]}'

key="$dir/signing.key"
head -c 32 /dev/urandom | base64 > "$key"
chmod 600 "$key"
token=$("$zeusd" token issue --signing-key-path "$key" --user alice --scope gpu-control,gpu-read --expires 1h)
start_zeusd serve --mode both --socket-path "$sock" --socket-permissions 0666 \
  --tcp-bind-address 127.0.0.1:0 --signing-key-path "$key" --lease-session-timeout 2 \
  --allow 'gpu-read=*' --log-level info
port=$(sed -n 's/.*and on 127.0.0.1:\([0-9]*\).*/\1/p' "$dir/zeusd.log" | head -1)
[ -n "$port" ] || fail "no TCP port in the startup line"
base="http://127.0.0.1:$port"
tcp() {  # tcp METHOD TARGET [curl args...]: prints "BODY STATUS" (with alice's token)
  local method=$1 target=$2; shift 2
  curl -s -X "$method" -H "Authorization: Bearer $token" "$@" -w ' %{http_code}' "$base$target"
}
state() {  # state GPU FIELD -> the fake's field as JSON
  "$py" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["devices"][int(sys.argv[2])].get(sys.argv[3])))' \
    "$dir/state.json" "$1" "$2"
}
restored() { [ "$(state 0 limit_mw)" = 400000 ] && [ "$(state 0 locked_sm_clocks_mhz)" = null ]; }
changed() { [ "$(state 0 limit_mw)" = 300000 ] && [ "$(state 0 locked_sm_clocks_mhz)" = "[900, 900]" ]; }
start_job() {  # our client over TCP: power limit 300 W and SM clocks 900 MHz on GPU 0, held
  ZEUSD_HOST_PORT="127.0.0.1:$port" ZEUSD_TOKEN="$token" "$check" --gpu 0 --power-limit 300000 \
    --clocks 1500,900 --changes 2 --hold > "$dir/job.out" 2> "$dir/job.err" &
  job_pid=$!
  for _ in $(seq 250); do [ -s "$dir/job.out" ] && break; sleep 0.02; done
  [ -s "$dir/job.out" ] || fail "the job did not make its changes: $(cat "$dir/job.err")"
}

# 1. A client that keeps heart-beating keeps its settings, past three timeouts.
start_job
changed || fail "the job's changes: limit $(state 0 limit_mw), SM clocks $(state 0 locked_sm_clocks_mhz)"
tcp GET /leases | "$py" -c 'import json,sys; t=sys.stdin.read().rsplit(" ",1); d=json.loads(t[0])
assert t[1]=="200" and len(d["sessions"])==1 and d["sessions"][0]["subject"]=="alice", d
assert d["leases"][0]["gpu"]==0 and d["leases"][0]["session"].endswith("..."), d
assert d["persistent"]==[] and d["session_timeout_s"]==2, d' || fail "GET /leases during the session"
sleep 6.5
changed || fail "a heart-beating client lost its settings: limit $(state 0 limit_mw)"

# 2. SIGKILL: nothing is restored at once (zeusd cannot see a remote process die), and
# everything is restored once the session has been silent for more than 2 s.
kill -KILL "$job_pid"; wait "$job_pid" 2>/dev/null || true; job_pid=""
killed_at=$(date +%s%N)
sleep 0.5
changed || fail "restored before the session timed out"
for _ in $(seq 200); do restored && break; sleep 0.05; done
restored || fail "not restored after the session timeout: limit $(state 0 limit_mw), SM $(state 0 locked_sm_clocks_mhz)"
waited_ms=$(( ($(date +%s%N) - killed_at) / 1000000 ))
# Silence counts from the last heartbeat, which the client sends every timeout / 3: the restore
# comes between 2 - 0.67 s and 2 s (+ zeusd's 0.25 s check period) after the kill.
[ "$waited_ms" -ge 1300 ] && [ "$waited_ms" -le 5000 ] || fail "restored after $waited_ms ms (timeout 2 s)"
grep -q "lease session .* went silent: restore power limit 400000 mW" "$dir/zeusd.log" \
  || fail "no restore logged: $(grep -i session "$dir/zeusd.log" | tail -3)"
echo "restored ${waited_ms} ms after SIGKILL (timeout 2 s)"

# 3. An upstream-style client over TCP (no session header) persists, past the timeout.
out=$(tcp POST "/gpu/set_power_limit?gpu_ids=1&power_limit_mw=200000&block=true")
[ "${out##* }" = 200 ] || fail "upstream-style set: $out"
sleep 2.5
[ "$(state 1 limit_mw)" = 200000 ] || fail "an upstream-style TCP change did not persist"
tcp GET /leases | grep -q '"subject":"alice"' || fail "persistent change not listed"

# 4. Sessions by hand: open, change, heartbeat, close (restores at once); unknown ids refused.
out=$(tcp POST /lease_session)
[ "${out##* }" = 200 ] || fail "POST /lease_session: $out"
id=$(echo "${out% *}" | "$py" -c 'import json,sys; d=json.load(sys.stdin); assert d["timeout_s"]==2; print(d["session_id"])')
[ ${#id} = 32 ] || fail "session id '$id'"
out=$(tcp POST "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=250000&block=true" -H "X-Zeusd-Lease-Session: $id")
[ "${out##* }" = 200 ] && [ "$(state 0 limit_mw)" = 250000 ] || fail "change in a session: $out"
out=$(tcp POST "/lease_session/$id/heartbeat")
[ "${out##* }" = 200 ] || fail "heartbeat: $out"
out=$(tcp DELETE "/lease_session/$id")
[ "${out##* }" = 200 ] && echo "$out" | grep -q '"restored":1' || fail "close: $out"
[ "$(state 0 limit_mw)" = 400000 ] || fail "close did not restore: $(state 0 limit_mw)"
out=$(tcp POST "/gpu/set_power_limit?gpu_ids=0&power_limit_mw=260000&block=true" -H "X-Zeusd-Lease-Session: $id")
[ "${out##* }" = 404 ] && echo "$out" | grep -q "unknown or expired" || fail "closed session: $out"
[ "$(state 0 limit_mw)" = 400000 ] || fail "a refused session change changed the GPU"
out=$(tcp POST "/lease_session/nope/heartbeat")
[ "${out##* }" = 404 ] || fail "unknown heartbeat: $out"
out=$(curl -s --unix-socket "$sock" -X POST -H "Authorization: Bearer $token" \
  -H "X-Zeusd-Lease-Session: $id" -w ' %{http_code}' "http://zeusd/gpu/set_power_limit?gpu_ids=0&power_limit_mw=260000&block=true")
[ "${out##* }" = 400 ] && echo "$out" | grep -q "clients over TCP" || fail "header on the socket: $out"
out=$(curl -s -X POST -w ' %{http_code}' "$base/lease_session")
[ "${out##* }" = 401 ] || fail "session without a token: $out"

stop_zeusd
echo "PASS"
