#!/usr/bin/env bash
# The Perseus loop on the fakes, with the C++ client: profile -> plan -> serve -> train. Four
# pipeline ranks (zeus-pfo-pipeline-demo --clock-bound: an instruction takes longer at a lower
# clock) on four fake GPUs whose power follows the locked SM clock train under `zeus pfo serve
# --scheduler profiler`: two warm-up rounds and one round per clock (8, down to the 900 MHz
# floor), the ranks' reported times and energies merged into the stage profile, then
# "[profiling-done]" stops them. `zeus pfo plan` plans the profile, `zeus pfo choose` picks the
# fastest plan, the server serves it, and each GPU's clock log follows the plan instruction by
# instruction. Timing-based (the profile is measured with real sleeps), so ctest runs it alone.
set -euo pipefail
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/pfo_pipeline_lib.sh"

# (4 iterations a round, the first dropped, so one overslept sleep weighs less.)
demo_flags=(--forward-ms 12 --backward-ms 24 --clock-bound --steps-per-round 4)
reset_state clock-power
start_server profiler "$dir/dump" \
  --scheduler-args '{"num_microbatches": 4, "minimum_frequency": 900}'
start_ranks profile 1000
wait_ranks profile
for r in $(seq 0 $((ranks - 1))); do
  grep -q "\[profiling-done\]" "$dir/profile.$r.err" || fail "rank $r was not told profiling is done"
done
wait_unlocked || fail "clocks still locked after profiling"
profile=$(ls "$dir"/dump/*/stage_profile.csv)
"$py" - "$profile" <<'PY' || fail "the stage profile"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
clocks = sorted({int(r["frequency"]) for r in rows}, reverse=True)
assert clocks == list(range(1980, 929, -150)), clocks
assert len(rows) == 4 * 2 * len(clocks), len(rows)
assert all(float(r["time"]) > 0 and float(r["energy"]) > 0 for r in rows)
# Summed over stages and instructions, so that one sleep overslept does not decide: ~2.1 x the
# time at the lowest clock, ~0.69 x the energy at 1230 MHz (the fake's power model).
def total(column, mhz):
    return sum(float(r[column]) for r in rows if int(r["frequency"]) == mhz)
assert total("time", 930) > 1.4 * total("time", 1980), [total("time", f) for f in clocks]
assert total("energy", 1230) < 0.9 * total("energy", 1980), [total("energy", f) for f in clocks]
PY
# (--noise 0.8: clocks within 20 % of a better one stay options; measured times are noisy.)
"$zeus" pfo plan --profile "$profile" --stages 4 --microbatches 4 --p2p-power 50 --noise 0.8 \
  --out "$dir/plans" > "$dir/plan.out" 2> "$dir/plan.err" || fail "pfo plan: $(cat "$dir/plan.err")"
"$zeus" pfo choose --plans "$dir/plans" --fastest --out "$dir/chosen.json" \
  > "$dir/choose.out" 2> "$dir/choose.err" || fail "pfo choose: $(cat "$dir/choose.err")"

stop_pfo_server
reset_state clock-power
start_server point-solution "$dir/dump-plan" --schedule "$dir/chosen.json"
start_ranks plan 4
wait_ranks plan
wait_unlocked || fail "clocks still locked after training on the plan"
check_clock_logs "$dir/chosen.json" 4
echo "ok"
