#!/bin/bash
# ctest examples.libtorch: runs the libtorch example on the fake NVML (a 100-300 W GPU) twice
# over one SQLite store and checks that it converges, profiles 300/200/100 W in the first
# epoch, sets an optimum, and that the second recurrence trains with another batch size.
# Env: EXAMPLE (the binary), ZEUS_NVML_PATH (the fake libnvidia-ml.so.1).
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ZEUS_FAKE_NVML_STATE=$work/nvml.json ZEUS_POWERCAP_ROOT=$work/no-powercap
unset CUDA_VISIBLE_DEVICES
cat > "$ZEUS_FAKE_NVML_STATE" <<JSON
{"devices": [{"power_draw_mw": 250000, "min_limit_mw": 100000, "max_limit_mw": 300000}]}
JSON

# A flag without its value and a non-numeric --target are usage errors (exit 2),
# not silently ignored or read as 0.
for bad in "--store" "--target abc" "--target 0.9x" "--max-epochs" "--max-epochs 0" "--bogus 1"; do
  set +e
  # shellcheck disable=SC2086
  "$EXAMPLE" $bad > /dev/null 2> "$work/usage.txt"
  rc=$?
  set -e
  [ "$rc" = 2 ] || { echo "FAIL: '$bad' exited $rc, expected 2: $(cat "$work/usage.txt")" >&2; exit 1; }
  grep -q "^usage: zeus_libtorch_example" "$work/usage.txt" || { echo "FAIL: '$bad' prints no usage" >&2; exit 1; }
done

"$EXAMPLE" --store "$work/bso.db" > "$work/run1.txt"
"$EXAMPLE" --store "$work/bso.db" > "$work/run2.txt"
cat "$work/run1.txt" "$work/run2.txt"

fail() { echo "FAIL: $*" >&2; exit 1; }
grep -qx "converged yes" "$work/run1.txt" || fail "run 1 did not converge"
grep -q "^batch_size 32 " "$work/run1.txt" || fail "run 1 should train with the default batch size"
grep -q "^batch_size 16 " "$work/run2.txt" || fail "run 2 should explore the next smaller batch size"
optimum=$(sed -n 's/^optimal_power_limit_w //p' "$work/run1.txt")
case "$optimum" in 300|200|100) ;; *) fail "optimal power limit '$optimum' is not a candidate" ;; esac
grep -Eq "^epoch 0 accuracy [0-9.]+ energy_j [0-9.]+[0-9] time_s [0-9.e-]+ \(stop condition not met: keep training\)$" "$work/run1.txt" || fail "no epoch line with the optimizer's decision"
# The run takes several epochs, the profile is shown (each candidate
# once, one chosen: the optimum), and the last epoch says why the run ended.
grep -q "^epoch 1 " "$work/run1.txt" || fail "run 1 converged in one epoch: nothing to watch"
for limit in 300 200 100; do
  [ "$(grep -c "^profiled power_limit_w $limit energy_j [0-9.]* time_s " "$work/run1.txt")" = 1 ] || fail "no profile line for $limit W"
done
grep -q "^profiled power_limit_w $(sed -n 's/^optimal_power_limit_w //p' "$work/run1.txt") .* chosen$" "$work/run1.txt" || fail "the chosen profile line is not the optimum"
grep -Eq "^epoch [0-9]+ .* stop \(train succeeded: reached target metric 0.9 at cost" "$work/run1.txt" || fail "run 1 does not say why it stopped"
# The limits the fake driver saw: the maximum, the other candidates, the optimum (no call when
# it is the limit already set: the last profiled, 100 W), and the maximum again when the process
# exited (no call when the optimum is the maximum); then run 2, which ends at the maximum.
log=$(/usr/bin/python3 -c 'import json,sys; print(" ".join(str(e["limit_mw"]//1000) for e in json.load(open(sys.argv[1]))["set_power_limit_log"]))' "$ZEUS_FAKE_NVML_STATE")
run1="300 200 100"
[ "$optimum" = 100 ] || run1="$run1 $optimum"
[ "$optimum" = 300 ] || run1="$run1 300"
case "$log" in "$run1 300 200 100"*" 300") ;; *) fail "limit sequence '$log' (run 1 expected '$run1')" ;; esac
echo "PASS: libtorch example (optimum $optimum W; limit log $log)"
