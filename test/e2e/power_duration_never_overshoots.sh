#!/usr/bin/env bash
# zeus power --duration never overshoots. The last reading and the totals are
# taken at the deadline (not an interval past it), an --interval longer than --duration still
# ends at the duration, nan/inf are refused, and 0 ("until Ctrl-C") is documented in --help.
set -uo pipefail
zeus="${ZEUS_BIN:?}/zeus"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir
cat > "$dir/state.json" <<'JSON'
{"devices": [{"name": "NVIDIA A100-SXM4-40GB", "architecture": 7, "power_draw_mw": 150000,
              "min_limit_mw": 100000, "max_limit_mw": 400000, "limit_mw": 200000}]}
JSON
export ZEUS_FAKE_NVML_STATE="$dir/state.json" ZEUS_NVML_PATH="${ZEUS_FAKES:?}/libnvidia-ml.so.1"
export ZEUS_POWERCAP_ROOT="$dir/none" ZEUS_ROCM_SMI_PATH="$dir/none.so"
unset CUDA_VISIBLE_DEVICES

# Readings every 0.5 s for 1.2 s: at 0.5, 1.0 and 1.2 (the deadline), and the totals at 1.2.
timeout 10 "$zeus" power --interval 0.5 --duration 1.2 --json > "$dir/a.jsonl" || fail "power --duration 1.2 failed"
# An interval longer than the duration: one reading at the deadline, then the totals.
timeout 10 "$zeus" power --interval 1e9 --duration 0.3 --json > "$dir/b.jsonl" || fail "--interval 1e9 --duration 0.3 did not end"
python3 - "$dir/a.jsonl" "$dir/b.jsonl" <<'PY' || fail "readings overshoot the duration"
import json, sys
# Tolerance: the wake-up latency of sleeping until the deadline (never a whole interval).
SLACK = 0.05
for path, duration, want in ((sys.argv[1], 1.2, [0.5, 1.0, 1.2]), (sys.argv[2], 0.3, [0.3])):
    rows = [json.loads(line) for line in open(path)]
    readings, summary = rows[:-1], rows[-1]
    assert summary.get("summary") is True, rows
    times = [r["time_s"] for r in readings]
    assert len(times) == len(want), (path, times)
    for t, w in zip(times, want):
        assert w - 1e-6 <= t <= w + SLACK, (path, times)
    assert duration - 1e-6 <= summary["time_s"] <= duration + SLACK, (path, summary["time_s"])
print("readings at", [r["time_s"] for r in map(json.loads, open(sys.argv[1]))][:-1])
PY

for bad in nan inf -1 1x; do
  timeout 5 "$zeus" power --duration "$bad" > /dev/null 2> "$dir/err.txt"
  rc=$?
  [ "$rc" = 2 ] || fail "--duration $bad: exit $rc, expected 2 ($(cat "$dir/err.txt"))"
  grep -q -- "--duration '$bad'" "$dir/err.txt" || fail "--duration $bad: $(cat "$dir/err.txt")"
done
timeout 5 "$zeus" power --interval nan > /dev/null 2> "$dir/err.txt"
[ $? = 2 ] || fail "--interval nan accepted"
"$zeus" power --help | tr -s ' \n' ' ' | grep -q "0 (the default): until Ctrl-C" \
  || fail "--help does not say what --duration 0 means"
echo "power_duration_never_overshoots: ok"
