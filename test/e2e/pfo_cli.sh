#!/usr/bin/env bash
# zeus pfo plan/choose: the published GPT-3 175B A100 SXM frontier reproduced through the CLI
# (rows, times exactly, energies within 1e-4), the 15.2 % saving, the files and their shapes, the
# plan choice rules, and one clear error per bad input with no partial output folder.
set -euo pipefail
zeus="${ZEUS_BIN:?}/zeus"
data="${ZEUS_SOURCE_DIR:?}/data/perseus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
profile="$data/stage_profile/gpt3-175b+a100_sxm_bf16.csv"

# 1. The golden frontier.
"$zeus" pfo plan --profile "$profile" --stages 8 --microbatches 12 --p2p-power 83.64 --unit 0.001 \
  --out "$dir/plans" > "$dir/plan.txt"
grep -q "saves 15.20 %" "$dir/plan.txt" || fail "no 15.20 % saving line: $(cat "$dir/plan.txt")"
[ "$(head -1 "$dir/plans/frontier.csv")" = "time,energy" ] || fail "frontier.csv header"
# Every plan in the old JSON form, from the compact plans.bin.
"$zeus" pfo export-plan --plans "$dir/plans" --all --out "$dir/plans.jsonl"
python3 - "$dir/plans" "$data/frontier/a100_sxm/gpt3-175b_bf16_mb12.csv" <<'PY'
import csv, json, sys
ours = list(csv.DictReader(open(sys.argv[1] + "/frontier.csv")))
ref = list(csv.DictReader(open(sys.argv[2])))
assert len(ours) == len(ref) == 639, (len(ours), len(ref))
for a, b in zip(ours, ref):
    assert a["time"] == b["time"], (a, b)
    assert abs(float(a["energy"]) / float(b["energy"]) - 1) < 1e-4, (a, b)
plans = [json.loads(l) for l in open(sys.argv[1] + "/../plans.jsonl")]
summary = json.load(open(sys.argv[1] + "/summary.json"))
assert len(plans) == 639 and summary["plans"] == 639
clocks = {(m["stage"], m["instruction"]): {o["frequency_mhz"] for o in m["options"]} for m in summary["operations"]}
for p in plans:
    assert len(p["frequencies"]) == 8
    for s, stage in enumerate(p["frequencies"]):
        names = summary["schedule"][s]
        assert len(stage) == len(names) == 24
        for name, mhz in zip(names, stage):
            assert mhz in clocks[(s, name)], (s, name, mhz)
assert abs(summary["fastest_plan_saving"] - 0.1520) < 5e-5, summary["fastest_plan_saving"]
assert abs(summary["t_star_plan"]["time_s"] - 3.187) < 1e-9, summary["t_star_plan"]
PY

# 2. Plan choice.
"$zeus" pfo choose --plans "$dir/plans" --fastest --json > "$dir/fastest.json"
"$zeus" pfo choose --plans "$dir/plans" --straggler-time 3.3 --out "$dir/straggler.json" > /dev/null
"$zeus" pfo choose --plans "$dir/plans" --straggler-time 3.0 --json > "$dir/s30.json"
"$zeus" pfo choose --plans "$dir/plans" --slowdown 0.05 --json > "$dir/slow.json"
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
fastest, straggler = json.load(open(d + "/fastest.json")), json.load(open(d + "/straggler.json"))
s30, slow = json.load(open(d + "/s30.json")), json.load(open(d + "/slow.json"))
assert fastest["plan"] == 638 and abs(fastest["time"] - 2.818) < 1e-9, fastest["plan"]
assert straggler["plan"] == 269 and abs(straggler["time"] - 3.187) < 1e-9  # beyond T*: the T* plan
assert abs(s30["time"] - 3.0) < 1e-9  # before T*: the slowest plan within T'
assert slow["time"] <= 2.818 * 1.05 + 1e-9 and slow["energy"] < fastest["energy"]
for s in (fastest, straggler):
    assert len(s["frequencies"]) == 8 and s["frequencies"][0][0][0] == "forward"
    assert all(isinstance(mhz, int) for stage in s["frequencies"] for _, mhz in stage)
PY
[ -f "$dir/plans/schedule.json" ] || fail "choose --fastest did not write plans/schedule.json"

# 2b. A folder of an older version (plans.jsonl, no plans.bin) is still read, to the same choice;
# export-plan refuses bad requests clearly.
mkdir -p "$dir/old" && cp "$dir/plans/summary.json" "$dir/plans/frontier.csv" "$dir/plans.jsonl" "$dir/old/"
"$zeus" pfo choose --plans "$dir/old" --straggler-time 3.3 --out "$dir/old_straggler.json" > /dev/null
python3 - "$dir/straggler.json" "$dir/old_straggler.json" <<'PY'
import json, sys
new, old = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert new == old, (new["plan"], old["plan"])
PY
"$zeus" pfo export-plan --plans "$dir/plans" --fastest > "$dir/fastest_line.json"
python3 - "$dir/fastest_line.json" "$dir/plans.jsonl" <<'PY'
import json, sys
line = json.load(open(sys.argv[1]))
assert line == json.loads(open(sys.argv[2]).read().splitlines()[-1]) and line["index"] == 638
PY
if "$zeus" pfo export-plan --plans "$dir/plans" --index 639 > /dev/null 2> "$dir/err.txt"; then fail "export of plan 639"; fi
grep -q "plans 0 to 638" "$dir/err.txt" || fail "export --index 639: $(cat "$dir/err.txt")"
if "$zeus" pfo export-plan --plans "$dir/old" --index 1 > /dev/null 2> "$dir/err.txt"; then fail "export without plans.bin"; fi
grep -q "plans.bin" "$dir/err.txt" || fail "export without plans.bin: $(cat "$dir/err.txt")"

# 3. Bad input: one clear error each, exit 1, and no output folder.
bad() {  # bad <expected text> <args...>
  local want="$1"; shift
  rm -rf "$dir/bad"
  if "$zeus" pfo plan --out "$dir/bad" "$@" > "$dir/out.txt" 2> "$dir/err.txt"; then fail "accepted: $*"; fi
  grep -q -- "$want" "$dir/err.txt" || fail "error for [$*] lacks '$want': $(cat "$dir/err.txt")"
  [ "$(wc -l < "$dir/err.txt")" -le 2 ] || fail "more than a one-line error for [$*]"
  [ ! -e "$dir/bad" ] || fail "partial output folder left by [$*]"
  ls "$dir" | grep -q "bad.tmp" && fail "temporary folder left by [$*]"
  return 0
}
ok=(--profile "$profile" --microbatches 12 --p2p-power 83.64)
bad "stages" --profile "$profile" --stages 1 --microbatches 12 --p2p-power 83.64
bad "microbatches" --profile "$profile" --stages 8 --microbatches 0 --p2p-power 83.64
bad "p2p-power" --profile "$profile" --stages 8 --microbatches 12 --p2p-power -3
bad "unit" "${ok[@]}" --stages 8 --unit 0.5
bad "noise" "${ok[@]}" --stages 8 --noise 1.5
bad "no forward rows for stage 8" "${ok[@]}" --stages 9
grep -v "^7,backward" "$profile" > "$dir/missing.csv"
bad "no backward rows for stage 7" --profile "$dir/missing.csv" --stages 8 --microbatches 12 --p2p-power 83.64
{ head -1 "$profile"; grep -E "^[0-9],(forward|backward),1410," "$profile"; } > "$dir/single.csv"
bad "single clock" --profile "$dir/single.csv" --stages 8 --microbatches 12 --p2p-power 83.64
sed '5s/,0\.[0-9]*,/,fast,/' "$profile" > "$dir/nonnumeric.csv"
bad "line 5: column time" --profile "$dir/nonnumeric.csv" --stages 8 --microbatches 12 --p2p-power 83.64
bad "cannot read --profile" --profile "$dir/nope.csv" --stages 8 --microbatches 12 --p2p-power 83.64
mkdir -p "$dir/full" && touch "$dir/full/x"
if "$zeus" pfo plan "${ok[@]}" --stages 8 --out "$dir/full" 2> "$dir/err.txt"; then fail "wrote into a non-empty folder"; fi
grep -q "not empty" "$dir/err.txt" || fail "non-empty --out: $(cat "$dir/err.txt")"
if "$zeus" pfo choose --plans "$dir/plans" > /dev/null 2> "$dir/err.txt"; then fail "choose without a rule"; fi
grep -q "exactly one of" "$dir/err.txt" || fail "choose without a rule: $(cat "$dir/err.txt")"

# 4. Zeus 0.16's profile form (rank columns in front) is accepted and plans the same frontier.
python3 - "$profile" "$dir/zeus016.csv" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
with open(sys.argv[2], "w") as f:
    f.write("rank,dp_rank,pp_rank,tp_rank," + lines[0] + "\n")
    for l in lines[1:]:
        f.write("0,0,%s,0,%s\n" % (l.split(",")[0], l))
PY
"$zeus" pfo plan --profile "$dir/zeus016.csv" --stages 8 --microbatches 12 --p2p-power 83.64 --out "$dir/p016" --json > /dev/null
cmp -s "$dir/p016/frontier.csv" "$dir/plans/frontier.csv" || fail "the Zeus 0.16 form planned a different frontier"
echo "pfo_cli: ok"
