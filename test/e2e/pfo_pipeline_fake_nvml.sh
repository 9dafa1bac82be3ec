#!/usr/bin/env bash
# A 4-stage pipeline under Perseus on the fake libnvidia-ml.so.1: `zeus pfo serve` with a
# PointSolution schedule in upstream's .py form, and four zeus-pfo-pipeline-demo processes (one
# rank each, each on its own fake GPU through CUDA_VISIBLE_DEVICES) calling the
# PipelineFrequencyOptimizer's hooks in 1F1B order. Checks, from the fake's sm_clock_log, that
# each GPU's locked SM clock follows its rank's schedule instruction by instruction; that every
# round's results reached the server (its dump); and that the clocks are back to default after a
# normal exit, after SIGINT, and — with zeusd — after SIGKILL. Then the same four ranks as 2
# stages x 2 data-parallel replicas under PointSolution3D: both replicas of a stage follow it.
set -euo pipefail
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/pfo_pipeline_lib.sh"

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

# 1. A normal run: 6 iterations, a round every 2.
reset_state
start_server point-solution "$dir/dump" --schedule "$dir/freqs_pipeline_00001.py"
start_ranks run 6
wait_ranks run
wait_unlocked || fail "clocks still locked after a normal exit"
check_clock_logs "$dir/freqs_pipeline_00001.py" 6
for r in $(seq 0 $((ranks - 1))); do
  "$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["rounds"]==4 and d["failed"]==0, d' \
    "$dir/run.$r.out" || fail "rank $r's rounds"
done
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
"$ZEUS_BIN/zeusd" --socket "$sock" --socket-mode 0600 --allow 'gpu-read=*' --log-level info \
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
stop_pfo_server
cat > "$dir/stages.json" <<'JSON'
[[["forward", 1755], ["forward", 1500], ["backward", 1200], ["forward", 900], ["backward", 600],
  ["forward", 1755], ["backward", 1500], ["backward", 1200]],
 [["forward", 600], ["backward", 900], ["forward", 1200], ["backward", 1500], ["forward", 1755],
  ["backward", 600], ["forward", 900], ["backward", 1200]]]
JSON
pp=2
reset_state
start_server point-solution-3d "$dir/dump3d" --schedule "$dir/stages.json"
start_ranks run3d 6
wait_ranks run3d
wait_unlocked || fail "clocks still locked after a normal exit (3D)"
check_clock_logs "$dir/stages.json" 6
ls "$dir"/dump3d/*+dp2+pp2+tp1+PointSolution3D/2.prof.json > /dev/null || fail "3D rounds not in the dump"
echo "ok"
