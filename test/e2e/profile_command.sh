#!/usr/bin/env bash
# zeus profile -- CMD on the fake libnvidia-ml.so.1 (350 W): warm-up runs are not measured, each
# trial idles --cooldown then runs the command once in a window (energy = 350 W x its time),
# --threshold marks the runs valid or not, a failing run stops the profile with the command's
# status, and without a GPU the command is not run.
set -euo pipefail
source "$(dirname "$0")/lib/zeusd_lib.sh"
zeus="$ZEUS_BIN/zeus"
fake_gpus '{"devices": [{"power_draw_mw": 350000, "temperature_c": 52}]}'
runs="$dir/runs"

start=$(date +%s%N)
"$zeus" profile --json --trials 3 --warmup-trials 2 --cooldown 0.2 --threshold 1000 \
  -- sh -c "echo run >> '$runs'; sleep 0.1" > "$dir/out.json"
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$(wc -l < "$runs")" = 5 ] || fail "2 warm-up + 3 trials should run the command 5 times: $(wc -l < "$runs")"
[ "$elapsed_ms" -ge 600 ] || fail "3 cool-downs of 0.2 s did not happen: $elapsed_ms ms"
$py - "$dir/out.json" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))
assert r["exit_code"] == 0 and r["warmup_trials"] == 2 and r["cooldown_duration"] == 0.2, r
trials = r["trials"]
assert len(trials) == 3, r
for t in trials:
    assert t["iterations"] == 1 and t["total_energy"] == t["energy_per_iter"], t
    assert t["total_time"] >= 0.1, t
    assert abs(t["total_energy"] / t["total_time"] - 350) < 350 * 0.05, t
    assert t["temperature_before"] == 52 and t["temperature_after"] == 52, t
energies = [t["energy_per_iter"] for t in trials]
mean = sum(energies) / 3
assert math.isclose(r["energy_mean"], mean), r
std = (sum((e - mean) ** 2 for e in energies) / 2) ** 0.5
assert math.isclose(r["energy_std"], std, abs_tol=1e-12), r
assert r["is_valid"] is True, r
print(f"profile ok: {energies} J, std {std:.4f} J")
PY

# The text report goes to stderr; a zero threshold accepts nothing.
"$zeus" profile --trials 2 --warmup-trials 0 --threshold 0 -- true 2> "$dir/text" > "$dir/stdout"
[ ! -s "$dir/stdout" ] || fail "the text report must not go to stdout"
grep -q "zeus profile: true" "$dir/text" || fail "no header: $(cat "$dir/text")"
grep -q "\[INVALID\]" "$dir/text" || fail "a zero threshold should be INVALID: $(cat "$dir/text")"
[ "$(grep -cE '^ +[12] +[0-9.]+ +[0-9.]+ +52.0 +52.0$' "$dir/text")" = 2 ] || fail "two trial rows expected: $(cat "$dir/text")"

# A run that fails stops the profile: the trials before it are reported, the status is the command's.
: > "$runs"
status=0
"$zeus" profile --json --trials 4 --warmup-trials 0 \
  -- sh -c "echo run >> '$runs'; [ \$(wc -l < '$runs') -lt 2 ] || exit 7" > "$dir/out.json" 2> "$dir/err" || status=$?
[ "$status" = 7 ] || fail "expected the command's status 7, got $status"
grep -q "trial 2 failed: the command exited 7" "$dir/err" || fail "no failure line: $(cat "$dir/err")"
$py -c "import json,sys; r=json.load(open(sys.argv[1])); assert r['exit_code']==7 and len(r['trials'])==1, r" "$dir/out.json"

# A missing command: 127, as a shell; bad options: usage error 2.
status=0; "$zeus" profile -- /no/such/command 2> "$dir/err" || status=$?
[ "$status" = 127 ] || fail "missing command: $status"
status=0; "$zeus" profile --trials 0 -- true 2> "$dir/err" || status=$?
[ "$status" = 2 ] || fail "--trials 0 should be a usage error: $status $(cat "$dir/err")"

# No GPU: exit 69, the command is not run, the reason is named.
: > "$runs"
status=0
ZEUS_NVML_PATH="$dir/no-nvml.so" "$zeus" profile -- sh -c "echo run >> '$runs'" 2> "$dir/err" || status=$?
[ "$status" = 69 ] || fail "no GPU: expected 69, got $status"
[ ! -s "$runs" ] || fail "the command ran without a GPU"
grep -q "no GPU was found" "$dir/err" && grep -q "nvml" "$dir/err" || fail "no reason: $(cat "$dir/err")"
echo "zeus profile ok"
