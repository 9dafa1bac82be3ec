#!/usr/bin/env bash
# Hardware check (ctest label hw, `make hw`; needs root, or ZEUSD_SOCK_PATH with gpu-control, and
# an NVIDIA GPU; python3 with torch): Perseus end to end on a real GPU (issue 27, last Must-show
# item). A two-stage pipeline of two processes (test worker below: the Python client
# zeus_cpp.optimizer.pipeline_frequency.PipelineFrequencyOptimizer, torch.distributed gloo) whose
# instructions are real GPU work: bf16 matmuls (N x N, N = PFO_HW_MATMUL_N, 8192), a forward
# PFO_HW_FORWARD_REPS of them (8,4: stage 0, stage 1), a backward twice as many; so forward is
# shorter than backward and stage 1 has slack. 4 microbatches, 1F1B order as served by
# the server; the stage dependencies are real (stage 1's forward j waits for stage 0's forward j,
# stage 0's backward j for stage 1's backward j) through gloo messages on the CPU: a token stands
# for the activation, so a blocked stage leaves its GPU idle (no NCCL spin) and the planner's
# P2P blocking power is the GPU's idle power, measured before profiling (PFO_HW_P2P_W overrides).
# (The C++ demo zeus-pfo-pipeline-demo only sleeps, so it cannot make real GPU work.)
#   1. Profile online: `zeus pfo serve --scheduler profiler` over 5 clocks (the supported clocks
#      nearest to PFO_HW_CLOCK_FRACTIONS = 1 0.9 0.8 0.7 0.6 of the maximum), one warm-up round,
#      PFO_HW_PROFILE_STEPS (5) iterations a round, until the server says "[profiling-done]".
#   2. `zeus pfo plan` on the profile (unit PFO_HW_UNIT, 0.25 ms; --noise 0.8), then
#      `zeus pfo choose --fastest` (T' = T_min: no slowdown).
#   3. Serve that plan (point-solution) and run PFO_HW_ITERATIONS (40) measured iterations after
#      PFO_HW_WARMUP (5); 4. the same at all-max clocks (a served schedule of the maximum
#      everywhere, so both runs carry the same hooks). Runs alternate max, plan, PFO_HW_REPEATS (2)
#      times. Rank 0 reads the NVML energy counter of every stage GPU and the wall clock around
#      the measured iterations (after a CUDA sync and a gloo barrier).
# Prints: the profile, the planner's T_min and predicted saving, the controller's latency per
# clock change (its own statistics: time of each applied SM clock lock, the driver or zeusd round
# trip, summed over applied changes), the request-to-applied time where the ranks wait for the
# clock, the iteration time of each run and their ratio, GPU energy per iteration and the energy
# saved in %. Fails when a rank fails or any clock lock failed, when the clocks are still locked
# at the end (an idle GPU whose SM clock does not fall below the lowest clock the run locked;
# inconclusive, with a warning, when the GPU did not idle below it before the run either), or a
# phase overruns. A trap resets the SM and memory clocks (nvidia-smi -rgc / -rmc) of the GPUs
# used on any exit. About 2-3 minutes.
#
# One GPU or two: with >= 2 GPUs (PFO_HW_GPUS: how many to use, 1 or 2; default all up to 2)
# each stage has its own GPU, the ranks do not wait for their clock (as in training) and the
# plan runs at (about) equal iteration time: the energy saved is Perseus's intrinsic saving on
# this pipeline. With one GPU both stages share GPU 0, and each rank's controller locks the one
# GPU's clock, so their requests would collide. This script then makes them sequentially locking:
# a file lock serialises the two ranks' instructions (begin hook, wait until the clock is applied,
# compute, end hook), so each instruction runs alone at the clock its rank asked for, and the
# profile measures each instruction alone. Because a controller skips a clock equal to the one
# it applied last (though the other rank may have changed the GPU since), the served plan is made
# change-safe: where a stage's plan repeats a clock on consecutive instructions (cyclically), the
# repeat moves to a neighbouring supported clock (one step, 15 MHz on H100; the higher one
# where there is one), so every request
# is a change its controller applies; the ranks check the SM clock NVML reports at each
# instruction's start against the served clock and print how many matched. What one GPU shows:
# clocks locked and restored per instruction by two processes' controllers, the latency per
# change, a profile and a plan from real measurements, and the energy and time of the plan
# against all-max on serialised execution. What it does not show: the saving at equal iteration
# time — serialised, every instruction is on the critical path, so the slack the plan uses to
# slow stage 1 becomes iteration time (ratio > 1) — nor concurrent stages; it also runs more
# clock changes than the plan alone would (the change-safe repeats).
#
# --dry-run-fake: the same flow on the fake NVML (build/release/fakes/libnvidia-ml.so.1 through
# ZEUS_NVML_PATH): 8 fake clocks 150 MHz apart whose power is 100 W + 300 W x (f / 1980)^3, sleeps
# instead of matmuls (x max clock / scheduled clock, as compute-bound work), no CUDA; PFO_HW_GPUS
# defaults to 1 there (set 2 for one fake GPU per stage). It checks, beyond the above, that every
# observed clock matched (one GPU), that the plan's instructions drew less energy (the counter
# read around each instruction: the whole window's energy also holds the scheduling delays of a
# loaded machine, which the fake draws at the locked clock), and the fake's clocks are unlocked.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
hw_lib="$here/lib"
ZEUS_BUILD_DIR=${ZEUS_BUILD_DIR:-$here/../../build/release}
ZEUS_BIN=${ZEUS_BIN:-$ZEUS_BUILD_DIR/bin}
zeus="$ZEUS_BIN/zeus"
fake=0
case "${1:-}" in
  --dry-run-fake) fake=1 ;;
  "") ;;
  *) echo "usage: $0 [--dry-run-fake]" >&2; exit 2 ;;
esac
dir=$(mktemp -d)
rank_pids=()
server_pid=""
gpus_used=()
cleanup() {
  local rc=$?
  for p in "${rank_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${rank_pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null || true; fi
  if [ "$fake" = 0 ] && command -v nvidia-smi > /dev/null; then
    for g in "${gpus_used[@]}"; do
      nvidia-smi -i "$g" -rgc > /dev/null 2>&1 || echo "trap: nvidia-smi -i $g -rgc failed" >&2
      nvidia-smi -i "$g" -rmc > /dev/null 2>&1 || true  # (not every GPU locks memory clocks)
    done
  fi
  if [ -n "${PFO_HW_KEEP:-}" ]; then echo "kept $dir" >&2; else rm -rf "$dir"; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() {
  echo "FAIL: $*" >&2
  for f in "$dir"/*.err "$dir"/server.log; do
    [ -s "$f" ] && { echo "--- $f" >&2; tail -15 "$f" >&2; }
  done
  exit 1
}
export ZEUS_LOG_LEVEL=${ZEUS_LOG_LEVEL:-warning}
export CUDA_DEVICE_ORDER=PCI_BUS_ID  # CUDA's GPU n is NVML's (and zeus's) GPU n
unset ZEUS_PFO_SCHEDULER ZEUS_PFO_SCHEDULER_ARGS ZEUS_PFO_DUMP_DATA ZEUS_PFO_DUMP_DIR \
  ZEUS_PFO_MAX_JOB_IDLE_TIME

iterations=${PFO_HW_ITERATIONS:-40}
warmup=${PFO_HW_WARMUP:-5}
repeats=${PFO_HW_REPEATS:-2}
profile_steps=${PFO_HW_PROFILE_STEPS:-5}
phase_s=${PFO_HW_PHASE_S:-150}
unit=${PFO_HW_UNIT:-0.00025}  # planning unit (s): stage 1's forward (~7 ms) must keep >= 4 distinct times
# Clocks to profile, as fractions of the maximum. Not 0.9: on an H200 under these bf16 matmuls
# (at its 700 W limit) the clock the GPU reaches is about the same locked at 1980, 1785 or 1590
# MHz (17.0, 16.7, 17.4 ms per forward), so only the clocks below leave the planner the 4 distinct
# times its fit needs.
fractions=${PFO_HW_CLOCK_FRACTIONS:-1 0.8 0.7 0.6 0.5 0.4}
if [ "$fake" = 1 ]; then
  state=${HW_KIT_FAKE_STATE:-$dir/state.json}  # the kit's guard's file under run.sh --fake
  export ZEUS_FAKE_NVML_STATE="$state"
  export ZEUS_NVML_PATH="$ZEUS_BUILD_DIR/fakes/libnvidia-ml.so.1"
  export ZEUS_ROCM_SMI_PATH="$dir/none.so" ZEUS_POWERCAP_ROOT="$dir/no-powercap"
  export HW_FAKE=1
  unset ZEUSD_SOCK_PATH
  iterations=${PFO_HW_ITERATIONS:-15}
  warmup=${PFO_HW_WARMUP:-3}
else
  unset ZEUS_NVML_PATH ZEUS_FAKE_NVML_STATE HW_FAKE
  command -v nvidia-smi > /dev/null || fail "no nvidia-smi: this check needs an NVIDIA GPU"
  if [ "$(id -u)" != 0 ] && [ -z "${ZEUSD_SOCK_PATH:-}" ]; then
    fail "locking clocks needs root (or ZEUSD_SOCK_PATH naming a zeusd that grants gpu-control)"
  fi
fi

# ---- python: torch, gloo and zeus_cpp (the build's package) ----------------------------------
cp "$hw_lib/pfo_hw_nvml.py" "$dir/hw_nvml.py"

cp "$hw_lib/pfo_hw_worker.py" "$dir/hw_worker.py"

export PYTHONPATH="$ZEUS_BUILD_DIR/python:$dir${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
py=""
for candidate in ${PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$candidate" > /dev/null &&
     "$candidate" -c 'import torch, torch.distributed, zeus_cpp.optimizer.pipeline_frequency' 2> /dev/null; then
    py=$candidate
    break
  fi
done
[ -n "$py" ] || fail "no python3 that imports torch, torch.distributed and zeus_cpp (PYTHONPATH=$ZEUS_BUILD_DIR/python; the extension is built for $(ls "$ZEUS_BUILD_DIR"/python/zeus_cpp/_zeus_cpp*.so 2>/dev/null | sed 's/.*_zeus_cpp\.//'))"
if [ "$fake" = 0 ]; then
  "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
    || fail "$py: torch sees no CUDA GPU"
fi
if [ "$fake" = 1 ]; then  # two fake H100s whose power follows the locked SM clock
  # energy_update_ms: while profiling, the counter publishes every 100 ms, as an H200's does:
  # instructions of 6-50 ms mostly read 0 J from the raw counter, so the profile must interpolate
  # (with the optimizer's background reads: from the edges alone, a loaded machine's sparse edges
  # misplaced the publishes and the profile was now and then unplannable).
  "$py" - "$state" <<'PY'
import json, sys
clocks = list(range(1980, 929, -150))
gpu = {"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "memory_clocks_mhz": [2619, 1593],
       "graphics_clocks_mhz": clocks, "power_draw_mw": 70000, "energy_update_ms": 100,
       "power_draw_mw_by_sm_mhz": {str(f): int(100000 + 300000 * (f / 1980) ** 3) for f in clocks}}
json.dump({"devices": [dict(gpu) for _ in range(2)]}, open(sys.argv[1], "w"))
PY
fi

# ---- the GPUs, the clocks to profile, idle power -----------------------------------------------
count=$("$py" "$dir/hw_nvml.py" count "")
[ "$count" -ge 1 ] || fail "NVML lists no GPU"
default_gpus=$(( count >= 2 ? 2 : 1 ))
[ "$fake" = 1 ] && default_gpus=1
ngpus=${PFO_HW_GPUS:-$default_gpus}
case "$ngpus" in 1|2) ;; *) fail "PFO_HW_GPUS must be 1 or 2" ;; esac
[ "$ngpus" -le "$count" ] || fail "PFO_HW_GPUS=$ngpus but NVML lists $count GPU(s)"
if [ "$ngpus" = 2 ]; then stage_gpus=(0 1); else stage_gpus=(0 0); fi
gpus_used=($(printf '%s\n' "${stage_gpus[@]}" | sort -u))
gpu_list=$(IFS=,; echo "${gpus_used[*]}")
if [ "$fake" = 0 ]; then  # start from the default clocks
  for g in "${gpus_used[@]}"; do
    nvidia-smi -i "$g" -rgc > /dev/null 2>&1 || true
    nvidia-smi -i "$g" -rmc > /dev/null 2>&1 || true
  done
  nvidia-smi -i "$gpu_list" --query-gpu=index,name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv
fi
read -r -a supported <<< "$("$py" "$dir/hw_nvml.py" clocks "$gpu_list")"
max_mhz=${supported[0]}
profile_clocks=$("$py" - "$fractions" "${supported[@]}" <<'PY'
import sys
fractions = [float(f) for f in sys.argv[1].split()]
supported = [int(c) for c in sys.argv[2:]]
picked = []
for f in fractions:
    best = min(supported, key=lambda c: abs(c - f * supported[0]))
    if best not in picked:
        picked.append(best)
print(",".join(map(str, sorted(picked, reverse=True))))
PY
)
read -r idle_w idle_mhz <<< "$("$py" "$dir/hw_nvml.py" idle "$gpu_list")"
p2p_w=${PFO_HW_P2P_W:-$idle_w}
if [ "$ngpus" = 2 ]; then mode="one GPU per stage (GPUs 0 and 1)"; else mode="one GPU shared by both stages (GPU 0; instructions serialised)"; fi
echo "mode: $mode; clocks ${supported[0]}..${supported[-1]} MHz (${#supported[@]}); profiling $profile_clocks MHz"
echo "idle: ${idle_w} W per GPU (P2P blocking power for the planner: $p2p_w W), lowest SM clock ${idle_mhz} MHz"

# ---- helpers: the server and the ranks ---------------------------------------------------------
start_server() {  # DUMP SCHEDULER-FLAGS...: sets $server_pid and $url
  local dump=$1; shift
  : > "$dir/server.log"
  "$zeus" pfo serve --port 0 --dump "$dump" "$@" >> "$dir/server.log" 2>&1 &
  server_pid=$!
  url=""
  for _ in $(seq 200); do
    url=$(grep -o 'listening on http://[0-9.:]*' "$dir/server.log" | sed 's/listening on //' || true)
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
  done
  [ -n "$url" ] || fail "zeus pfo serve did not start"
}
stop_server() {
  kill -TERM "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}
start_ranks() {  # TAG ITERATIONS WORKER-FLAGS...: both ranks in the background
  local tag=$1 iters=$2; shift 2
  local extra=()
  if [ "$ngpus" = 1 ]; then extra=(--gpu-lock "$dir/gpu.lock" --wait-for-clock); fi
  [ "$fake" = 1 ] && extra+=(--fake)
  rank_pids=()
  for r in 0 1; do
    CUDA_VISIBLE_DEVICES=${stage_gpus[$r]} "$py" "$dir/hw_worker.py" --rank $r \
      --store "$dir/$tag.store" --url "$url" --iterations "$iters" --nvml-index "${stage_gpus[$r]}" \
      --max-mhz "$max_mhz" "${extra[@]}" "$@" > "$dir/$tag.$r.out" 2> "$dir/$tag.$r.err" &
    rank_pids+=($!)
  done
}
wait_ranks() {  # TAG: both ranks exit 0 within $phase_s s
  local deadline=$((SECONDS + phase_s)) r
  for r in 0 1; do
    while kill -0 "${rank_pids[$r]}" 2>/dev/null; do
      [ $SECONDS -lt $deadline ] || fail "$1: rank $r still runs after $phase_s s"
      sleep 0.2
    done
    wait "${rank_pids[$r]}" || fail "$1: rank $r failed: $(tail -5 "$dir/$1.$r.err")"
  done
  rank_pids=()
}

# ---- 1. profile online -------------------------------------------------------------------------
t0=$SECONDS
start_server "$dir/dump-profile" --scheduler profiler --scheduler-args \
  "{\"num_microbatches\": 4, \"frequencies\": [$profile_clocks], \"minimum_frequency\": 0, \"warmup_rounds\": 1, \"max_energy_rises\": 0}"
start_ranks profile 100000 --steps-per-round "$profile_steps"
wait_ranks profile
stop_server
for r in 0 1; do
  grep -q "\[profiling-done\]" "$dir/profile.$r.err" || fail "rank $r was not told profiling is done"
done
profile=$(ls "$dir"/dump-profile/*/stage_profile.csv 2>/dev/null | head -1)
[ -n "$profile" ] || fail "no stage profile in the dump"
echo "1. profile ($((SECONDS - t0)) s): time / energy of one instruction"
"$py" - "$profile" "$profile_clocks" <<'PY' || fail "the stage profile"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
clocks = [int(c) for c in sys.argv[2].split(",")]
got = sorted({int(r["frequency"]) for r in rows}, reverse=True)
assert got == clocks, (got, clocks)
assert len(rows) == 2 * 2 * len(clocks), len(rows)
assert all(float(r["time"]) > 0 and float(r["energy"]) > 0 for r in rows)
for s in (0, 1):
    for name in ("forward", "backward"):
        cells = sorted(((int(r["frequency"]), float(r["time"]), float(r["energy"])) for r in rows
                        if int(r["stage"]) == s and r["instruction"] == name), reverse=True)
        print("   stage %d %-8s " % (s, name) + "  ".join("%d:%.1fms/%.2fJ" % (f, t * 1e3, e) for f, t, e in cells))
PY

if [ "$fake" = 1 ]; then  # the plan runs measure instructions' own energy on the raw counter:
  "$py" - "$state" <<'PY'  # from here on it is continuous again
import json, sys
state = json.load(open(sys.argv[1]))
for device in state["devices"]:
    device["energy_update_ms"] = 0
json.dump(state, open(sys.argv[1], "w"))
PY
fi

# ---- 2. plan, and the fastest plan (T' = T_min) ------------------------------------------------
"$zeus" pfo plan --profile "$profile" --stages 2 --microbatches 4 --p2p-power "$p2p_w" \
  --unit "$unit" --noise 0.8 --out "$dir/plans" --json > "$dir/plan.json" 2> "$dir/plan.err" \
  || fail "zeus pfo plan: $(cat "$dir/plan.err")"
"$zeus" pfo choose --plans "$dir/plans" --fastest --out "$dir/chosen.json" \
  > "$dir/choose.out" 2> "$dir/choose.err" || fail "zeus pfo choose: $(cat "$dir/choose.err")"
"$py" - "$dir/plan.json" "$dir/chosen.json" "$dir/plan-served.json" "$dir/max-served.json" \
  "$ngpus" "${supported[@]}" <<'PY' || fail "the served schedules"
import json, sys
summary, chosen = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ngpus, supported = int(sys.argv[5]), [int(c) for c in sys.argv[6:]]
stages = [[[name, int(mhz)] for name, mhz in stage] for stage in chosen["frequencies"]]
assert len(stages) == 2 and all(len(s) == 8 for s in stages), stages
fast = summary["fastest_plan"]
print("2. plan: %d plans; T_min %.1f ms, %.2f J per iteration; all-max %.2f J; predicted saving %.2f %%"
      % (summary["plans"], fast["time_s"] * 1e3, fast["energy_j"], summary["all_max_clock_energy_j"],
         100 * summary["fastest_plan_saving"]))
for s, stage in enumerate(stages):
    print("   stage %d plan: %s" % (s, " ".join("%s%d" % (n[0].upper(), m) for n, m in stage)))
if ngpus == 1:  # change-safe: no clock equal to the one before it (cyclically)
    for stage in stages:
        n = len(stage)
        for i in range(n):
            if stage[i][1] == stage[i - 1][1]:
                k = supported.index(stage[i][1])
                near = [supported[j] for j in (k - 1, k + 1, k - 2, k + 2) if 0 <= j < len(supported)]
                stage[i][1] = next(c for c in near if c not in (stage[i - 1][1], stage[(i + 1) % n][1]))
        assert all(stage[i][1] != stage[i - 1][1] for i in range(n)), stage
    for s, stage in enumerate(stages):
        print("   stage %d served (change-safe): %s" % (s, " ".join("%s%d" % (n[0].upper(), m) for n, m in stage)))
json.dump(stages, open(sys.argv[3], "w"))
json.dump([[[n, supported[0]] for n, _ in stage] for stage in stages], open(sys.argv[4], "w"))
PY

# ---- 3./4. the plan against all-max, alternating -----------------------------------------------
runs=()
for rep in $(seq "$repeats"); do
  for what in max plan; do
    tag="$what$rep"
    start_server "$dir/dump-$tag" --scheduler point-solution --schedule "$dir/$what-served.json"
    start_ranks "$tag" $((warmup + iterations)) --warmup "$warmup" --measure "$gpu_list"
    wait_ranks "$tag"
    stop_server
    runs+=("$tag")
    "$py" - "$dir/$tag.0.out" <<'PY'
import json, sys
w = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["window"]
e = sum(w["energy_j"].values())
print("3. %-5s %d iterations: %.1f ms/iteration, %.2f J/iteration" % (sys.argv[1].split("/")[-1].split(".")[0],
      w["iterations"], 1e3 * w["seconds"] / w["iterations"], e / w["iterations"]))
PY
  done
done

# ---- the clocks are back to default ------------------------------------------------------------
lowest=${profile_clocks##*,}
if [ "$fake" = 1 ]; then
  "$py" "$dir/hw_nvml.py" locked "$gpu_list" && fail "the fake GPUs' clocks are still locked"
  echo "clocks reset: the fake GPUs' SM and memory clocks are unlocked"
else
  reset_ok=0
  for _ in $(seq 50); do
    now=$("$py" "$dir/hw_nvml.py" sm-clock "$gpu_list")
    if [ "$now" -lt "$lowest" ]; then reset_ok=1; break; fi
    sleep 0.2
  done
  nvidia-smi -i "$gpu_list" -q -d CLOCK | sed -n '/Clocks$/,/Applications Clocks/p' | head -12 || true
  if [ "$reset_ok" = 1 ]; then
    echo "clocks reset: idle SM clock $now MHz, below the lowest clock the run locked ($lowest MHz)"
  elif [ "$idle_mhz" -lt "$lowest" ]; then
    fail "clocks still locked: the idle SM clock stays at $now MHz (>= $lowest MHz; $idle_mhz MHz before the run)"
  else
    echo "WARNING: clocks reset inconclusive: this GPU did not idle below $lowest MHz before the run either ($idle_mhz MHz); the trap resets them"
  fi
fi

# ---- results -----------------------------------------------------------------------------------
"$py" - "$dir" "$ngpus" "$fake" "profile" "${runs[@]}" <<'PY' || fail "results"
import json, statistics, sys
d, ngpus, fake, tags = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4:]
out = {t: [json.loads(open(f"{d}/{t}.{r}.out").read().strip().splitlines()[-1]) for r in (0, 1)] for t in tags}
for t, ranks in out.items():
    for r in ranks:
        c = r["controller"]
        assert c["failed"] == 0, (t, r["rank"], c)
applied = sum(r["controller"]["applied"] for t in tags for r in out[t])
apply_s = sum(r["controller"]["apply_total_s"] for t in tags for r in out[t])
plan_applied = sum(r["controller"]["applied"] for t in tags if t.startswith("plan") for r in out[t])
assert plan_applied > 0, "the plan changed no clock"
print("controller latency per clock change: %.3f ms mean over %d applied SM clock locks "
      "(controller statistics: the driver call; %d of them in the plan runs)"
      % (1e3 * apply_s / applied, applied, plan_applied))
changes = [s for t in tags for r in out[t] for s in r["change_s"]]
if changes:
    changes.sort()
    print("request to applied (begin hook to wait_for_clock): median %.3f ms, p90 %.3f ms, max %.3f ms over %d changes"
          % (1e3 * statistics.median(changes), 1e3 * changes[int(0.9 * (len(changes) - 1))], 1e3 * changes[-1], len(changes)))
    matched = sum(r["observed"]["matched"] for t in tags for r in out[t])
    checked = sum(r["observed"]["checked"] for t in tags for r in out[t])
    bad = [m for t in tags for r in out[t] for m in r["observed"]["mismatches"]]
    print("SM clock read at each instruction's start equal to the served clock: %d of %d%s"
          % (matched, checked, "" if not bad else " (first mismatches: iteration, instruction, microbatch, served, read: %s)" % bad[:5]))
    if fake:
        assert matched == checked > 0, "instructions ran at another rank's clock"
def per_iteration(t):
    w = out[t][0]["window"]
    return w["seconds"] / w["iterations"], sum(w["energy_j"].values()) / w["iterations"]
pairs = [(per_iteration("max%d" % k), per_iteration("plan%d" % k)) for k in range(1, len(tags) // 2 + 1)]
tmax = statistics.mean(p[0][0] for p in pairs); emax = statistics.mean(p[0][1] for p in pairs)
tplan = statistics.mean(p[1][0] for p in pairs); eplan = statistics.mean(p[1][1] for p in pairs)
saved = 100 * (1 - eplan / emax)
print("iteration time: all-max %.1f ms, plan %.1f ms, ratio %.4f%s"
      % (1e3 * tmax, 1e3 * tplan, tplan / tmax,
         "" if ngpus == 2 else " (one GPU: serialised stages, the plan's slack becomes time)"))
print("GPU energy per iteration: all-max %.2f J, plan %.2f J: saved %.2f %% (per repeat: %s)"
      % (emax, eplan, saved, ", ".join("%.2f %%" % (100 * (1 - p[1][1] / p[0][1])) for p in pairs)))
if ngpus == 2 and tplan / tmax > 1.03:
    print("WARNING: the plan ran more than 3 % slower than all-max (not equal iteration time)")
if fake:  # the instructions' own energy: what the clocks decide, free of a loaded machine's delays
    def instructions(t):
        return sum(r["window"]["instruction_energy_j"] for r in out[t]) / out[t][0]["window"]["iterations"]
    imax = statistics.mean(instructions("max%d" % k) for k in range(1, len(tags) // 2 + 1))
    iplan = statistics.mean(instructions("plan%d" % k) for k in range(1, len(tags) // 2 + 1))
    print("instructions' own energy per iteration (fake): all-max %.2f J, plan %.2f J: saved %.2f %%"
          % (imax, iplan, 100 * (1 - iplan / imax)))
    assert iplan < imax, "the plan's instructions drew no less energy than all-max on the fake GPUs"
PY
echo "pfo pipeline on $( [ "$fake" = 1 ] && echo "the fake NVML" || nvidia-smi -i 0 --query-gpu=name --format=csv,noheader ): ok ($SECONDS s)"
