#!/usr/bin/env bash
# Zeus 0.16's daemon client against our zeusd: the exact requests of `zeus.utils.zeusd` (httpx
# over the Unix socket, every parameter in the query) set and read power limits, persistence and
# clocks and read GPU and CPU energy and power on the fake libnvidia-ml.so.1 and a fake powercap
# tree; then the client is SIGKILLed and zeusd restores every change it made (its lease).
set -euo pipefail
source "$(dirname "$0")/lib/zeusd_lib.sh"
lib="$(cd "$(dirname "$0")/lib" && pwd)"

fake_h100_a100
fake_rapl 123456789 5555

start_zeusd --socket "$sock" --socket-mode 0666 --allow 'gpu-read=*' --log-level info

state() {  # state EXPR: a Python expression over d, the fake's devices
  "$py" -c "import json,sys; d=json.load(open(sys.argv[1]))['devices']; print($1)" "$dir/state.json"
}

: > "$dir/client.out"
PYTHONPATH="$lib" "$py" "$lib/zeus016_zeusd_scenario.py" "$sock" > "$dir/client.out" 2> "$dir/client.err" &
client=$!
for _ in $(seq 200); do
  grep -q READY "$dir/client.out" && break
  kill -0 "$client" 2>/dev/null || { cat "$dir/client.err" >&2; fail "the Zeus 0.16 client failed"; }
  sleep 0.05
done
grep -q READY "$dir/client.out" || fail "the client did not finish its calls"

# What the client left: GPU 0 at 300 W, persistence on, SM 900-1500 and memory 1593 MHz locked;
# GPU 1 back at 400 W with its clocks unlocked. zeusd lists its leases.
[ "$(state "d[0]['limit_mw'], d[0]['persistence'], d[0].get('locked_sm_clocks_mhz'), d[0].get('locked_memory_clocks_mhz')")" = "300000 True [900, 1500] [1593, 1593]" ] \
  || fail "GPU 0 after the client: $(state 'd[0]')"
[ "$(state "d[1]['limit_mw'], d[1].get('locked_sm_clocks_mhz'), d[1].get('locked_memory_clocks_mhz')")" = "400000 None None" ] \
  || fail "GPU 1 after the client: $(state 'd[1]')"
out=$(api GET /leases)
echo "$out" | "$py" -c "import json,sys; t=sys.stdin.read().strip().rsplit(' ',1); d=json.loads(t[0]); assert t[1]=='200' and sorted(l['gpu'] for l in d['leases'])==[0,1] and all(l['pid']==$client for l in d['leases']), d" \
  || fail "leases (client pid $client): $out"

# SIGKILL: zeusd restores both GPUs within 2 s.
kill -KILL "$client"
wait "$client" 2>/dev/null || true
want="700000 False None None | 400000 None None"
for _ in $(seq 100); do
  got="$(state "d[0]['limit_mw'], d[0]['persistence'], d[0].get('locked_sm_clocks_mhz'), d[0].get('locked_memory_clocks_mhz')") | $(state "d[1]['limit_mw'], d[1].get('locked_sm_clocks_mhz'), d[1].get('locked_memory_clocks_mhz')")"
  [ "$got" = "$want" ] && break
  sleep 0.02
done
[ "$got" = "$want" ] || fail "after SIGKILL: '$got', want '$want'"
out=$(api GET /leases)
[ "$out" = '{"leases":[],"persistent":[],"session_timeout_s":30.0,"sessions":[]} 200' ] || fail "leases after SIGKILL: $out"
grep -q "exited" "$dir/zeusd.log" || fail "zeusd did not log the restore"

stop_zeusd
echo "PASS: Zeus 0.16's zeusd client works against our zeusd; SIGKILL restores its changes"
