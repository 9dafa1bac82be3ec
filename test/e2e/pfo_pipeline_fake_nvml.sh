#!/usr/bin/env bash
# A 4-stage pipeline under Perseus on the fake libnvidia-ml.so.1: `zeus pfo serve` with a
# PointSolution schedule in upstream's .py form, and four zeus-pfo-pipeline-demo processes (one
# rank each, each on its own fake GPU through CUDA_VISIBLE_DEVICES) calling the
# PipelineFrequencyOptimizer's hooks in 1F1B order. Checks, from the fake's sm_clock_log, that
# each GPU's locked SM clock follows its rank's schedule instruction by instruction; that every
# round's results reached the server (its dump); and that the clocks are back to default after a
# normal exit, after SIGINT, and — with zeusd — after SIGKILL. Then the same four ranks as 2
# stages x 2 data-parallel replicas under PointSolution3D: both replicas of a stage follow it.
# Last, the whole loop: the online profiler measures the stage profile while the ranks train,
# `zeus pfo plan` and `zeus pfo choose` turn it into a schedule, and the ranks train on it.
set -euo pipefail
serve_bin="$ZEUS_BIN/zeus"
demo="$ZEUS_BIN/zeus-pfo-pipeline-demo"
zeusd="$ZEUS_BIN/zeusd"
py=/usr/bin/python3
dir=$(mktemp -d)
server_pid=""
zeusd_pid=""
rank_pids=()
cleanup() {
  for pid in "${rank_pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null || true
  if [ -n "$zeusd_pid" ]; then kill -TERM "$zeusd_pid" 2>/dev/null || true; wait "$zeusd_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for f in "$dir"/*.err "$dir"/zeusd.log; do [ -s "$f" ] && { echo "--- $f" >&2; tail -5 "$f" >&2; }; done
  exit 1
}

export ZEUS_FAKE_NVML_STATE="$dir/state.json"
export ZEUS_NVML_PATH="$ZEUS_FAKES/libnvidia-ml.so.1"
export ZEUS_ROCM_SMI_PATH="$dir/none.so"
export ZEUS_POWERCAP_ROOT="$dir/no-powercap"
export ZEUS_LOG_LEVEL=warning
unset CUDA_VISIBLE_DEVICES ZEUSD_SOCK_PATH ZEUS_PFO_SCHEDULER ZEUS_PFO_SCHEDULER_ARGS \
  ZEUS_PFO_DUMP_DATA ZEUS_PFO_DUMP_DIR ZEUS_PFO_MAX_JOB_IDLE_TIME
ranks=4
pp=4  # stages of the job that runs; ranks / pp data-parallel replicas (rank = dp_rank * pp + pp_rank)
demo_flags=(--forward-ms 5 --backward-ms 10)
# reset_state [clock-power]: four H100s at their default limit, with the SM clock log on; with
# clock-power, 8 clocks 150 MHz apart whose power is 100 W + 300 W x (f / 1980)^3 (energy per
# instruction, with time ~ 1 / f, falls down to 1080 MHz and rises at 930)
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

# The schedule, one list per rank in its stage's 1F1B order (4 stages, 4 microbatches), as
# upstream's freqs_pipeline_%05d.py; each instruction's clock differs from the one before it, so
# every entry shows in the log.
"$py" - "$dir/freqs_pipeline_00001.py" <<'PY'
import sys
orders = ["FFFFBBBB", "FFFBFBBB", "FFBFBFBB", "FBFBFBFB"]
clocks = [1755, 1500, 1200, 900, 600]
with open(sys.argv[1], "w") as f:
    f.write("# Perseus schedule: one list of (instruction, MHz) per rank\n[\n")
    for s, order in enumerate(orders):
        items = ", ".join('("%s", %d)' % ("forward" if c == "F" else "backward", clocks[(i + s) % 5])
                          for i, c in enumerate(order))
        f.write("    [%s],  # stage %d\n" % (items, s))
    f.write("]\n")
PY

# state_check MODE: "unlocked" (every GPU's SM and memory clocks unlocked), "log R" (GPU R's SM
# clock sequence as JSON, repeated resets at the end counted once).
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

start_server() {  # SCHEDULER FILE DUMP [ARGS...]
  local scheduler=$1 file=$2 dump=$3; shift 3
  "$serve_bin" pfo serve --port 0 --scheduler "$scheduler" ${file:+--schedule "$file"} \
    --dump "$dump" "$@" > "$dir/serve.out" 2> "$dir/serve.err" &
  server_pid=$!
  for _ in $(seq 250); do grep -q "listening on" "$dir/serve.out" 2>/dev/null && break; sleep 0.02; done
  url=$(sed -n 's/.*listening on //p' "$dir/serve.out")
  [ -n "$url" ] || fail "zeus pfo serve did not start"
}

# start_ranks TAG ITERATIONS [ENV...]: the four ranks in the background, output in $dir/TAG.R.*
start_ranks() {
  local tag=$1 iterations=$2; shift 2
  rank_pids=()
  for r in $(seq 0 $((ranks - 1))); do
    env "$@" CUDA_VISIBLE_DEVICES=$r "$demo" --server "$url" --pp $pp --dp $((ranks / pp)) \
      --rank $r --pp-rank $((r % pp)) --dp-rank $((r / pp)) \
      --job-id-file "$dir/$tag.job-id" --microbatches 4 --iterations "$iterations" \
      --steps-per-round 2 "${demo_flags[@]}" --wait-for-clock \
      > "$dir/$tag.$r.out" 2> "$dir/$tag.$r.err" &
    rank_pids+=($!)
  done
}
wait_exited() {  # every rank process ended (within 5 s; else the test fails, not hangs)
  for pid in "${rank_pids[@]}"; do
    for _ in $(seq 250); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
    kill -0 "$pid" 2>/dev/null && fail "rank process $pid still runs after $1"
    wait "$pid" 2>/dev/null || true
  done
  rank_pids=()
}
wait_joined() {  # every rank of TAG got its first schedule (within 10 s)
  for _ in $(seq 500); do
    local n=0
    for r in $(seq 0 $((ranks - 1))); do grep -q "^joined" "$dir/$1.$r.err" 2>/dev/null && n=$((n + 1)); done
    [ "$n" = $ranks ] && return 0
    sleep 0.02
  done
  fail "the ranks of $1 did not all join"
}

# 1. A normal run: 6 iterations, a round every 2.
# run_and_check TAG SCHEDULE_FILE: 6 iterations; each GPU's log is its stage's schedule 6 times.
run_and_check() {
  start_ranks "$1" 6
  for r in $(seq 0 $((ranks - 1))); do
    wait "${rank_pids[$r]}" || fail "rank $r failed: $(cat "$dir/$1.$r.err")"
  done
  rank_pids=()
  wait_unlocked || fail "clocks still locked after a normal exit"
  for r in $(seq 0 $((ranks - 1))); do
    "$py" - "$dir/$1.$r.out" "$2" "$((r % pp))" "$(state_check log "$r")" <<'PY' \
      || fail "rank $r"
import ast, json, sys
out = json.loads(open(sys.argv[1]).read())
schedule = ast.literal_eval(open(sys.argv[2]).read())[int(sys.argv[3])]
log = json.loads(sys.argv[4])
assert out["rounds"] == 4 and out["failed"] == 0, out
expected = [1980] + [mhz for _ in range(6) for _, mhz in schedule] + [0]
assert log == expected, "SM clock log %s, expected %s" % (log, expected)
PY
  done
}
reset_state
start_server point-solution "$dir/freqs_pipeline_00001.py" "$dir/dump"
run_and_check run "$dir/freqs_pipeline_00001.py"
# What reached the server: rounds 0-2 ended (3 reports of 2 iterations from each rank).
"$py" - "$dir/dump" <<'PY' || fail "dump"
import glob, json, os, sys
jobs = glob.glob(os.path.join(sys.argv[1], "*+dp1+pp4+tp1+PointSolution"))
assert len(jobs) == 1, jobs
ranks = json.load(open(os.path.join(jobs[0], "ranks.json")))
assert [r["rank"] for r in ranks] == [0, 1, 2, 3], ranks
assert ranks[0]["available_frequencies"] == [1980, 1755, 1500, 1200, 900, 600], ranks[0]
for n in range(3):
    results = json.load(open(os.path.join(jobs[0], "%d.prof.json" % n)))
    assert [r["rank"] for r in results] == [0, 1, 2, 3], n
    for r in results:
        assert len(r["iter_time"]) == 2 and len(r["iter_energy"]) == 2, r
        for name, least_s in (("forward", 0.005), ("backward", 0.010)):
            for times, energies in zip(r["time_breakdown"][name], r["energy_breakdown"][name]):
                assert len(times) == 4 and len(energies) == 4, (name, times)
                assert all(t >= least_s for t in times), (name, times)
                assert all(e > 0 for e in energies), (name, energies)
        assert all(t >= 4 * 0.005 + 4 * 0.010 for t in r["iter_time"]), r["iter_time"]
assert not os.path.exists(os.path.join(jobs[0], "3.prof.json"))
PY

# 2. SIGINT mid-run: each rank's controller restores its GPU before the signal ends the process.
# (Job control on: a non-interactive shell starts background commands with SIGINT ignored, and
# the controller leaves an ignored signal alone.)
reset_state
set -m
start_ranks sigint 100000
set +m
wait_joined sigint
sleep 0.3
for pid in "${rank_pids[@]}"; do kill -INT "$pid"; done
wait_exited SIGINT
wait_unlocked || fail "clocks still locked after SIGINT"
for r in $(seq 0 $((ranks - 1))); do
  log=$(state_check log "$r")
  "$py" -c 'import json,sys; l=json.loads(sys.argv[1]); assert len(l) > 3 and l[0] == 1980 and l[-1] == 0, l' "$log" \
    || fail "GPU $r after SIGINT: $log"
done

# 3. SIGKILL through zeusd: nothing runs in the ranks; zeusd's leases unlock every GPU.
reset_state
sock="$dir/zeusd.sock"
"$zeusd" --socket "$sock" --socket-mode 0600 --allow 'gpu-read=*' --log-level info \
  > "$dir/zeusd.out" 2> "$dir/zeusd.log" &
zeusd_pid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || fail "zeusd did not create $sock"
start_ranks sigkill 100000 ZEUSD_SOCK_PATH="$sock"
wait_joined sigkill
sleep 0.3
state_check unlocked && fail "nothing locked before SIGKILL"
for pid in "${rank_pids[@]}"; do kill -KILL "$pid"; done
wait_exited SIGKILL
wait_unlocked || fail "clocks still locked 2 s after SIGKILL"
grep -q "locked SM clocks to" "$dir/zeusd.log" || fail "zeusd did not do the locking"
[ "$(grep -c "exited: unlock SM clocks" "$dir/zeusd.log")" -ge $ranks ] \
  || fail "zeusd did not restore each rank's GPU"
kill -TERM "$zeusd_pid"; wait "$zeusd_pid" 2>/dev/null || true; zeusd_pid=""

# 4. 2 stages x 2 replicas, PointSolution3D: one list per stage (2 stages, 4 microbatches), run by
#    both ranks of the stage; the merged rounds reach the scheduler.
kill -TERM "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
cat > "$dir/stages.json" <<'JSON'
[[["forward", 1755], ["forward", 1500], ["backward", 1200], ["forward", 900], ["backward", 600],
  ["forward", 1755], ["backward", 1500], ["backward", 1200]],
 [["forward", 600], ["backward", 900], ["forward", 1200], ["backward", 1500], ["forward", 1755],
  ["backward", 600], ["forward", 900], ["backward", 1200]]]
JSON
pp=2
reset_state
start_server point-solution-3d "$dir/stages.json" "$dir/dump3d"
run_and_check run3d "$dir/stages.json"
ls "$dir"/dump3d/*+dp2+pp2+tp1+PointSolution3D/2.prof.json > /dev/null || fail "3D rounds not in the dump"

# 5. Profile -> plan -> serve -> train. The instructions take longer at lower clocks and the fake
#    GPUs' power follows the clock: two warm-up rounds and one round per clock (8, the floor at
#    900 MHz), then "[profiling-done]" stops the ranks; the stage profile is planned, the fastest
#    plan chosen and served, and each GPU's clock log follows the plan.
kill -TERM "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
pp=4
demo_flags=(--forward-ms 10 --backward-ms 20 --clock-bound)
reset_state clock-power
start_server profiler "" "$dir/dump-profile" \
  --scheduler-args '{"num_microbatches": 4, "minimum_frequency": 900}'
start_ranks profile 1000
for r in $(seq 0 $((ranks - 1))); do
  wait "${rank_pids[$r]}" || fail "rank $r failed while profiling: $(cat "$dir/profile.$r.err")"
  grep -q "\[profiling-done\]" "$dir/profile.$r.err" || fail "rank $r was not told profiling is done"
done
rank_pids=()
wait_unlocked || fail "clocks still locked after profiling"
profile=$(ls "$dir"/dump-profile/*/stage_profile.csv)
"$py" - "$profile" <<'PY' || fail "the stage profile"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
clocks = sorted({int(r["frequency"]) for r in rows}, reverse=True)
assert clocks == list(range(1980, 929, -150)), clocks
assert len(rows) == 4 * 2 * len(clocks), len(rows)
for stage in range(4):
    for name in ("forward", "backward"):
        t = {int(r["frequency"]): float(r["time"]) for r in rows
             if int(r["stage"]) == stage and r["instruction"] == name}
        assert t[930] > 1.5 * t[1980], (stage, name, t)  # clock-bound: ~2.1 x
PY
"$serve_bin" pfo plan --profile "$profile" --stages 4 --microbatches 4 --p2p-power 50 \
  --out "$dir/plans" > "$dir/plan.out" 2> "$dir/plan.err" || fail "pfo plan: $(cat "$dir/plan.err")"
"$serve_bin" pfo choose --plans "$dir/plans" --fastest --out "$dir/chosen.json" \
  > "$dir/choose.out" 2> "$dir/choose.err" || fail "pfo choose: $(cat "$dir/choose.err")"
kill -TERM "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=""
reset_state clock-power
start_server point-solution "$dir/chosen.json" "$dir/dump-plan"
start_ranks plan 4
for r in $(seq 0 $((ranks - 1))); do
  wait "${rank_pids[$r]}" || fail "rank $r failed on the plan: $(cat "$dir/plan.$r.err")"
done
rank_pids=()
wait_unlocked || fail "clocks still locked after training on the plan"
for r in $(seq 0 $((ranks - 1))); do
  "$py" - "$dir/chosen.json" "$r" "$(state_check log "$r")" <<'PY' || fail "GPU $r on the plan"
import json, sys
plan = json.load(open(sys.argv[1]))["frequencies"][int(sys.argv[2])]
log = json.loads(sys.argv[3])
# The controller skips a clock equal to the one applied: consecutive repeats show once.
wanted = [1980] + [mhz for _ in range(4) for _, mhz in plan]
expected = [m for i, m in enumerate(wanted) if i == 0 or m != wanted[i - 1]] + [0]
assert log == expected, "SM clock log %s, expected %s" % (log, expected)
assert len(set(mhz for _, mhz in plan)) > 1, plan  # a plan, not one clock
PY
done
echo "ok"
