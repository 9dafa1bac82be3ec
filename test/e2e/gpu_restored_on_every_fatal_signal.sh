#!/usr/bin/env bash
# Every process that changes a GPU puts it back on every signal that ends it: `zeus proxy
# calibrate` and `zeus proxy --govern` (NVML directly, no zeusd) lock the fake H100's SM and
# memory clocks; SIGHUP (a closed terminal or SSH session), SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM and
# SIGXCPU then leave them unlocked, as SIGTERM does, and the process still ends by that signal.
# (A background job of a script starts with SIGINT and SIGQUIT ignored, and an ignored signal
# ends nothing: env --default-signal gives them back their default, as a terminal would.)
set -euo pipefail
source "$(dirname "$0")/lib/fake_llm_env.sh"
upstream="http://127.0.0.1:$upstream_port"

locked() {  # "SM MEM" locks of the fake GPU ("None" when unlocked)
  "$py" -c 'import json,sys; d=json.load(open(sys.argv[1]))["devices"][0]
print(d.get("locked_sm_clocks_mhz"), d.get("locked_memory_clocks_mhz"))' "$dir/state.json"
}
wait_locked() {
  for _ in $(seq 200); do
    [ "$(locked)" != "None None" ] && return 0
    sleep 0.05
  done
  fail "$1 never locked the clocks"
}

# signal_unlocks WHAT PID SIG ERR: once the clocks are locked, SIG to PID; it must end (not 0)
# with both clocks unlocked (ERR: its stderr, shown on a failure).
signal_unlocks() {
  local what=$1 pid=$2 sig=$3 err=$4 before after status=0
  wait_locked "$what (SIG$sig)"
  before=$(locked)
  kill -"$sig" "$pid"
  wait "$pid" || status=$?
  after=$(locked)
  [ "$after" = "None None" ] || fail "$what after SIG$sig (status $status): clocks $after (were $before); $(tail -3 "$err")"
  [ "$status" -ne 0 ] || fail "$what exited 0 after SIG$sig"
  echo "$what, SIG$sig: clocks $before -> unlocked (exit status $status)"
}

# calibrate: each signal during the first point (locked at 1980 MHz).
for sig in HUP QUIT USR1 USR2 ALRM XCPU TERM; do
  env --default-signal=INT,QUIT setsid "$zeus" proxy calibrate --upstream "$upstream" --gpus 0 --clocks 1980,1080 --concurrency 1,2 \
    --seconds 20 --prompt-tokens 64 --output-tokens 8 --out "$dir/cal.json" \
    > "$dir/cal.out" 2> "$dir/cal.err" &
  signal_unlocks calibrate $! "$sig" "$dir/cal.err"
done

# The governed proxy under load (it locks the clocks at start): SIGHUP and SIGUSR1.
for sig in HUP USR1; do
  env --default-signal=INT,QUIT setsid "$zeus" proxy --upstream "$upstream" --port 0 --gpus 0 --govern --ttft-slo 2 --tpot-slo 0.5 \
    --govern-period 0.2 > "$dir/gov.out" 2> "$dir/gov.err" &
  gov=$!
  wait_for "$dir/gov.out" "serving"
  port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\) in front.*|\1|p' "$dir/gov.out")
  GOVERN_SPEEDUP=2 timeout 30 "$py" "$lib/../../hw/lib/proxy_govern_load.py" \
    "$lib/../../../data/llm_traces/azure_llm_2023_conv.csv" "$port" 20 > /dev/null 2>&1 &
  load=$!
  signal_unlocks "proxy --govern" "$gov" "$sig" "$dir/gov.err"
  kill "$load" 2>/dev/null || true
  wait "$load" 2>/dev/null || true
done
echo "gpu restored on every fatal signal: ok"
