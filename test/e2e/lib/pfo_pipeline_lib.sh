# Helpers for the e2e tests that run pipeline ranks (zeus-pfo-pipeline-demo, one process per rank,
# each on its own GPU of the fake libnvidia-ml.so.1) against `zeus pfo serve` (sourced by
# test/e2e/pfo_pipeline_*.sh). Needs ZEUS_BIN, ZEUS_FAKES and ZEUS_SOURCE_DIR (set by ctest).
# On top of pfo_lib.sh ($dir, $url, start_pfo_server, stop_pfo_server, fail): the fake GPUs
# ($dir/state.json, the SM clock log on), the ranks ($ranks of them, $pp stages, rank =
# dp_rank * pp + pp_rank; $rank_pids, killed at exit) and zeusd ($zeusd_pid, stopped at exit).
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/pfo_lib.sh"

demo="$ZEUS_BIN/zeus-pfo-pipeline-demo"
py=/usr/bin/python3
ranks=4
pp=4
demo_flags=(--forward-ms 5 --backward-ms 10 --steps-per-round 2)
straggler_flags=()  # added to the flags of the ranks of pipeline (dp rank) 1 (a straggler)
rank_pids=()
zeusd_pid=""
pfo_pipeline_cleanup() {
  for pid in "${rank_pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  if [ -n "$zeusd_pid" ]; then kill -TERM "$zeusd_pid" 2>/dev/null || true; wait "$zeusd_pid" 2>/dev/null || true; fi
  pfo_lib_cleanup
}
trap pfo_pipeline_cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$dir"/*.err "$dir"/zeusd.log "$dir"/server.log; do
    [ -s "$f" ] && { echo "--- $f" >&2; tail -5 "$f" >&2; }
  done
  exit 1
}

export ZEUS_FAKE_NVML_STATE="$dir/state.json"
export ZEUS_NVML_PATH="${ZEUS_FAKES:?}/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/no-powercap"
export ZEUS_LOG_LEVEL=warning
unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH ZEUS_PFO_SCHEDULER ZEUS_PFO_SCHEDULER_ARGS \
  ZEUS_PFO_DUMP_DATA ZEUS_PFO_DUMP_DIR ZEUS_PFO_MAX_JOB_IDLE_TIME

# reset_state [clock-power]: four H100s at their default limit, with the SM clock log on. With
# clock-power: 8 clocks 150 MHz apart whose power is 100 W + 300 W x (f / 1980)^3, so with times
# ~ 1 / f (the demo's --clock-bound) an instruction's energy falls down to 1080 MHz, rises at 930.
reset_state() {
  "$py" - "$dir/state.json" "${1:-}" <<'PY'
import json, sys
gpu = {"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "min_limit_mw": 200000,
       "max_limit_mw": 700000, "limit_mw": 700000, "memory_clocks_mhz": [2619, 1593],
       "graphics_clocks_mhz": [1980, 1755, 1500, 1200, 900, 600]}
if sys.argv[2] == "clock-power":
    gpu["graphics_clocks_mhz"] = list(range(1980, 929, -150))
    gpu["power_draw_mw_by_sm_mhz"] = {str(f): int(100000 + 300000 * (f / 1980) ** 3)
                                      for f in gpu["graphics_clocks_mhz"]}
json.dump({"sm_clock_log": [], "devices": [dict(gpu) for _ in range(4)]}, open(sys.argv[1], "w"))
PY
}

# state_check unlocked: true when every GPU's SM and memory clocks are unlocked.
# state_check log R: GPU R's SM clock sequence as JSON (repeated resets at the end counted once:
# after the controller's own reset, zeusd's lease may reset again).
state_check() {
  "$py" - "$dir/state.json" "$@" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
if sys.argv[2] == "unlocked":
    sys.exit(0 if all(d.get("locked_sm_clocks_mhz") is None and d.get("locked_memory_clocks_mhz") is None
                      for d in s["devices"]) else 1)
log = [e["max_mhz"] for e in s.get("sm_clock_log", []) if e["index"] == int(sys.argv[3])]
while len(log) >= 2 and log[-1] == 0 and log[-2] == 0:
    log.pop()
print(json.dumps(log))
PY
}
wait_unlocked() {  # within 2 s
  for _ in $(seq 100); do state_check unlocked && return 0; sleep 0.02; done
  return 1
}

# start_server SCHEDULER DUMP [zeus pfo serve flags...]
start_server() {
  local scheduler=$1 dump=$2; shift 2
  start_pfo_server -- --scheduler "$scheduler" --dump "$dump" "$@"
}

# start_ranks TAG ITERATIONS [VAR=value...]: the ranks in the background (with that environment),
# output in $dir/TAG.R.out and .err; rank 0 hands the job id over in $dir/TAG.job-id.
start_ranks() {
  local tag=$1 iterations=$2; shift 2
  rank_pids=()
  local extra
  for r in $(seq 0 $((ranks - 1))); do
    extra=()
    if [ $((r / pp)) = 1 ]; then extra=("${straggler_flags[@]}"); fi
    env "$@" CUDA_VISIBLE_DEVICES=$r "$demo" --server "$url" --pp $pp --dp $((ranks / pp)) \
      --rank $r --pp-rank $((r % pp)) --dp-rank $((r / pp)) \
      --job-id-file "$dir/$tag.job-id" --microbatches 4 --iterations "$iterations" \
      "${demo_flags[@]}" "${extra[@]}" --wait-for-clock > "$dir/$tag.$r.out" 2> "$dir/$tag.$r.err" &
    rank_pids+=($!)
  done
}
wait_ranks() {  # TAG: every rank ends with status 0
  for r in $(seq 0 $((ranks - 1))); do
    wait "${rank_pids[$r]}" || fail "rank $r of $1 failed: $(cat "$dir/$1.$r.err")"
  done
  rank_pids=()
}
wait_exited() {  # WHAT: every rank process ended within 5 s (else the test fails, not hangs)
  for pid in "${rank_pids[@]}"; do
    for _ in $(seq 250); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
    kill -0 "$pid" 2>/dev/null && fail "rank process $pid still runs after $1"
    wait "$pid" 2>/dev/null || true
  done
  rank_pids=()
}
wait_joined() {  # TAG: every rank got its first schedule (within 10 s)
  for _ in $(seq 500); do
    local n=0
    for r in $(seq 0 $((ranks - 1))); do grep -q "^joined" "$dir/$1.$r.err" 2>/dev/null && n=$((n + 1)); done
    [ "$n" = $ranks ] && return 0
    sleep 0.02
  done
  fail "the ranks of $1 did not all join"
}

# check_clock_logs SCHEDULE ITERATIONS: each GPU's SM clock log is the maximum (the controller's
# start), its stage's list of SCHEDULE (upstream's .py literal, plain JSON, the file `zeus pfo
# choose` writes, or MHz only, as `zeus pfo export-plan` writes) ITERATIONS times, then 0
# (unlocked) — where a clock equals the one before it, once (the controller skips an unchanged
# clock).
check_clock_logs() {
  check_clock_phases 1 "$2" "$1" "$2" > /dev/null
}

# check_clock_phases STEPS_PER_ROUND ROUNDS SCHEDULE MIN_ROUNDS [SCHEDULE MIN_ROUNDS ...]: as
# check_clock_logs, for a job whose schedule changed between rounds: each GPU's log is the
# maximum, its stage's list of the first SCHEDULE for n1 >= MIN_ROUNDS rounds of STEPS_PER_ROUND
# iterations, then of the second for n2 rounds..., n1 + n2 + ... = ROUNDS, then 0, with the same
# n1, n2, ... on every GPU (they share the rounds). Prints them ("2 3"; when the logs leave a
# choice, as for a stage whose schedules are one clock each, the first). With phase_gpus set
# ("2 3"), only those GPUs are checked (a straggler's pipeline keeps another schedule).
check_clock_phases() {
  local logs=() gpus
  gpus=(${phase_gpus:-$(seq 0 $((ranks - 1)))})
  for r in "${gpus[@]}"; do logs+=("$(state_check log "$r")"); done
  "$py" - "$pp" "$(IFS=';'; echo "${logs[*]}")" "$(IFS=','; echo "${gpus[*]}")" "$@" <<'PY' \
    || fail "the GPUs' clocks"
import ast, json, sys
pp, logs = int(sys.argv[1]), sys.argv[2].split(";")
gpus = [int(g) for g in sys.argv[3].split(",")]
del sys.argv[3]
steps, rounds = int(sys.argv[3]), int(sys.argv[4])
def stage_lists(path):  # MHz per instruction per stage
    text = open(path).read()
    schedule = json.loads(text) if path.endswith(".json") else ast.literal_eval(text)
    stages = schedule["frequencies"] if isinstance(schedule, dict) else schedule
    # (name, MHz) or MHz
    return [[m if isinstance(m, int) else m[1] for m in stage] for stage in stages]
schedules = [stage_lists(p) for p in sys.argv[5::2]]
mins = [int(n) for n in sys.argv[6::2]]
def splits(total, mins):  # every (n1, n2, ...) with n_i >= mins[i] summing to total
    if len(mins) == 1:
        if total >= mins[0]: yield (total,)
        return
    for n in range(mins[0], total - sum(mins[1:]) + 1):
        for rest in splits(total - n, mins[1:]): yield (n,) + rest
def expected(stage, counts):
    wanted = [1980] + [mhz for s, n in zip(schedules, counts)
                       for _ in range(n * steps) for mhz in s[stage]]
    return [m for i, m in enumerate(wanted) if i == 0 or m != wanted[i - 1]] + [0]
candidates = list(splits(rounds, mins))
for r, log in zip(gpus, logs):
    log = json.loads(log)
    matching = [c for c in candidates if expected(r % pp, c) == log]
    if not matching:
        first = (candidates or [tuple(mins)])[0]
        sys.exit("GPU %d's SM clock log %s, expected (rounds %s) %s"
                 % (r, log, first, expected(r % pp, first)))
    candidates = matching
print(" ".join(map(str, candidates[0])))
PY
}
