#!/usr/bin/env bash
# The Perseus clock controller through zeusd, on the fake libnvidia-ml.so.1: an unprivileged-style
# job (ZEUSD_SOCK_PATH set) locks SM clocks through zeusd; a normal exit and SIGTERM unlock them
# through the controller's own restore, SIGKILL through zeusd's lease (within 1 s). The fake's
# sm_clock_log shows the sequence each time.
set -euo pipefail
zeusd="$ZEUS_BIN/zeusd"
check="$ZEUS_BIN/zeus_clock_controller_check"
py=/usr/bin/python3
dir=$(mktemp -d)
zeusd_pid=""
job_pid=""
cleanup() {
  [ -n "$job_pid" ] && kill -KILL "$job_pid" 2>/dev/null || true
  if [ -n "$zeusd_pid" ]; then kill -TERM "$zeusd_pid" 2>/dev/null || true; wait "$zeusd_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$dir/zeusd.log" ] && tail -20 "$dir/zeusd.log" >&2; exit 1; }

export ZEUS_FAKE_NVML_STATE="$dir/state.json"
export ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/no-powercap"
unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH
sock="$dir/zeusd.sock"
reset_state() {  # an H100 at 400 W (not its default), with the SM clock log on
  # Written whole and renamed, as the fake writes it: zeusd never reads half a file.
  cat > "$dir/state.json.new" <<'JSON'
{"sm_clock_log": [], "devices": [{"name": "NVIDIA H100 80GB HBM3", "architecture": 9,
  "min_limit_mw": 200000, "max_limit_mw": 700000, "limit_mw": 400000,
  "memory_clocks_mhz": [2619, 1593], "graphics_clocks_mhz": [1980, 1500, 1200, 900, 600]}]}
JSON
  mv "$dir/state.json.new" "$dir/state.json"
}
# wait_exit_restored PID: zeusd undoes a job's leases when it sees the process gone, after the
# job's own restore; the next part's fresh state must not race with that (5 s at most).
wait_exit_restored() {
  for _ in $(seq 250); do
    grep -q "pid $1 (uid [0-9]*) exited: unlock memory clocks" "$dir/zeusd.log" && return 0
    sleep 0.02
  done
  fail "zeusd did not undo pid $1's leases within 5 s: $(tail -5 "$dir/zeusd.log")"
}
# state FIELD -> a device-0 field as JSON; "log": the SM clock sequence, where repeated resets
# at the end count once (after the controller's own reset, zeusd's lease resets again when the
# process exits)
state() {
  "$py" - "$dir/state.json" "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); d = s["devices"][0]
if sys.argv[2] == "log":
    log = [e["max_mhz"] for e in s.get("sm_clock_log", []) if e["index"] == 0]
    while len(log) >= 2 and log[-1] == 0 and log[-2] == 0:
        log.pop()
    print(json.dumps(log))
else:
    print(json.dumps(d.get(sys.argv[2])))
PY
}
wait_unlocked() {  # true when SM and memory clocks are both unlocked within 1 s
  for _ in $(seq 50); do
    [ "$(state locked_sm_clocks_mhz)" = null ] && [ "$(state locked_memory_clocks_mhz)" = null ] && return 0
    sleep 0.02
  done
  return 1
}
start_holding_job() {  # runs the check with --hold in the background; waits for its JSON line
  ZEUSD_SOCK_PATH="$sock" "$check" --clocks 1500,900 --changes 4 --hold > "$dir/job.out" 2> "$dir/job.err" &
  job_pid=$!
  for _ in $(seq 250); do [ -s "$dir/job.out" ] && break; sleep 0.02; done
  [ -s "$dir/job.out" ] || fail "the job did not lock its clocks: $(cat "$dir/job.err")"
  [ "$(state locked_sm_clocks_mhz)" = "[900, 900]" ] || fail "SM clocks $(state locked_sm_clocks_mhz)"
  [ "$(state locked_memory_clocks_mhz)" = "[2619, 2619]" ] || fail "memory $(state locked_memory_clocks_mhz)"
  [ "$(state limit_mw)" = 700000 ] || fail "power limit not reset to the default: $(state limit_mw)"
}

reset_state
"$zeusd" --socket "$sock" --socket-mode 0600 --allow 'gpu-read=*' --log-level info \
  > "$dir/zeusd.out" 2> "$dir/zeusd.log" &
zeusd_pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "zeusd did not create $sock"

# 1. A normal exit: the controller unlocks through zeusd; the sequence is max, 1500, 900 ... reset.
ZEUSD_SOCK_PATH="$sock" "$check" --clocks 1500,900 --changes 4 > "$dir/run.out" 2> "$dir/run.err" &
run_pid=$!
wait "$run_pid" || fail "check failed: $(cat "$dir/run.err")"
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["applied"]==4 and d["failed"]==0, d' "$dir/run.out"
wait_unlocked || fail "clocks still locked after a normal exit"
[ "$(state log)" = "[1980, 1500, 900, 1500, 900, 0]" ] || fail "sequence $(state log)"
grep -q "locked SM clocks to 900-900 MHz" "$dir/zeusd.log" || fail "zeusd did not do the locking"
wait_exit_restored "$run_pid"

# 2. SIGTERM: the controller's signal restore unlocks through zeusd.
reset_state
start_holding_job
kill -TERM "$job_pid"; wait "$job_pid" 2>/dev/null || true
wait_unlocked || fail "clocks still locked after SIGTERM"
wait_exit_restored "$job_pid"; job_pid=""

# 3. SIGKILL: nothing runs in the job; zeusd's lease unlocks both clocks and puts back the limit
#    the job found (400 W: zeusd restores what was there, the controller had reset it to 700 W).
reset_state
start_holding_job
kill -KILL "$job_pid"; wait "$job_pid" 2>/dev/null || true; job_pid=""
wait_unlocked || fail "clocks still locked 1 s after SIGKILL: SM $(state locked_sm_clocks_mhz)"
[ "$(state log)" = "[1980, 1500, 900, 1500, 900, 0]" ] || fail "sequence after SIGKILL $(state log)"
[ "$(state limit_mw)" = 400000 ] || fail "limit after SIGKILL: $(state limit_mw)"
grep -q "exited: unlock SM clocks" "$dir/zeusd.log" || fail "zeusd did not log the lease restore"
echo "ok"
