#!/usr/bin/env bash
# The schedule with every instruction at its slowest clock (T_max) is not a row of
# the frontier (which starts one unit below it, as the authors' does), but it is a candidate for
# T* and for every plan choice. On a hand-checkable profile whose energy falls all the way to
# T_max, T* is (0.056 s, 321.6 J) and a straggler at 0.06 s gets the all-slowest schedule; the
# frontier's 16 rows stay those computed by hand; "saves -0.00 %" is gone.
set -euo pipefail
zeus="${ZEUS_BIN:?}/zeus"
here="$(cd "$(dirname "$0")" && pwd)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

python3 "$here/pfo_tiny_profile.py" > "$dir/tiny.csv"
python3 "$here/pfo_tiny_profile.py" --expect > "$dir/expect.csv"
"$zeus" pfo plan --profile "$dir/tiny.csv" --stages 2 --microbatches 1 --p2p-power 10 \
  --unit 0.001 --out "$dir/plans" > "$dir/plan.txt"
grep -q "^T\* (min energy):  0.0560 s  321.6 J  (T_max)" "$dir/plan.txt" \
  || fail "T* is not the all-slowest schedule: $(cat "$dir/plan.txt")"
grep -q -- "-0.00" "$dir/plan.txt" && fail "a negative zero is printed: $(cat "$dir/plan.txt")"
grep -q "saves 0.00 %" "$dir/plan.txt" || fail "no 0.00 % saving line: $(cat "$dir/plan.txt")"

"$zeus" pfo export-plan --plans "$dir/plans" --all --out "$dir/plans.jsonl"
python3 - "$dir" <<'PY'
import csv, json, sys
d = sys.argv[1]
expect = [tuple(map(float, l.split(","))) for l in open(d + "/expect.csv")]
ours = [(float(r["time"]), float(r["energy"])) for r in csv.DictReader(open(d + "/plans/frontier.csv"))]
# frontier.csv keeps its rows: T_max - 1 unit (0.055 s) down to T_min (0.040 s).
assert len(ours) == 16, len(ours)
for (t, e), (et, ee) in zip(ours, expect[1:]):
    assert abs(t - et) < 1e-12 and abs(e - ee) < 1e-5, ((t, e), (et, ee))
s = json.load(open(d + "/plans/summary.json"))
t_max = s["t_max_plan"]
assert t_max["index"] is None and abs(t_max["time_s"] - 0.056) < 1e-12, t_max
assert abs(t_max["energy_j"] - expect[0][1]) < 1e-5, (t_max, expect[0])
star = s["t_star_plan"]
assert star["index"] is None and abs(star["energy_j"] - 321.597685) < 1e-5, star
assert s["t_max_frequencies"] == [[1000, 1000], [1000, 1000]], s["t_max_frequencies"]
assert s["slowest_plan"]["index"] == 0 and s["fastest_plan"]["index"] == 15
assert len(open(d + "/plans.jsonl").read().splitlines()) == 16
PY

# Every rule weighs the all-slowest schedule.
"$zeus" pfo choose --plans "$dir/plans" --straggler-time 0.06 > "$dir/choose.txt"
grep -q "the T_max schedule" "$dir/choose.txt" || fail "straggler 0.06 s: $(cat "$dir/choose.txt")"
"$zeus" pfo choose --plans "$dir/plans" --straggler-time 0.06 --out "$dir/s06.json" > /dev/null
"$zeus" pfo choose --plans "$dir/plans" --straggler-time 0.0555 --out "$dir/s0555.json" > /dev/null
"$zeus" pfo choose --plans "$dir/plans" --slowdown 0.5 --out "$dir/slow.json" > /dev/null
"$zeus" pfo choose --plans "$dir/plans" --fastest --out "$dir/fastest.json" > /dev/null
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
s06, s0555 = json.load(open(d + "/s06.json")), json.load(open(d + "/s0555.json"))
slow, fastest = json.load(open(d + "/slow.json")), json.load(open(d + "/fastest.json"))
assert s06["plan"] is None and abs(s06["time"] - 0.056) < 1e-12, s06
assert abs(s06["energy"] - 321.597685) < 1e-5, s06
assert s06["frequencies"] == [[["forward", 1000], ["backward", 1000]]] * 2, s06["frequencies"]
assert s0555["plan"] == 0, s0555          # T_max is past 0.0555 s: the slowest plan
assert slow["plan"] is None, slow         # 1.5 x 0.040 s = 0.060 s admits T_max
assert fastest["plan"] == 15, fastest
PY

# A plan folder written before T_max was kept is refused with the fix, not misread.
cp -r "$dir/plans" "$dir/old"
python3 - "$dir/old/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
del s["t_max_plan"], s["t_max_frequencies"]
json.dump(s, open(sys.argv[1], "w"))
PY
if "$zeus" pfo choose --plans "$dir/old" --fastest > /dev/null 2> "$dir/err.txt"; then
  fail "an old plan folder was accepted"
fi
grep -q "no t_max_plan.*plan again" "$dir/err.txt" || fail "old folder: $(cat "$dir/err.txt")"
echo "pfo_all_slowest_schedule_is_a_candidate: ok"
