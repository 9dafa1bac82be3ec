#!/usr/bin/env bash
# zeus plo replay/show: the chosen limit and table for real JIT-profiler logs (checked against the
# formulas computed here in Python), the JSON shape, show on a saved profile, and one-line errors.
set -euo pipefail
zeus="${ZEUS_BIN:?}/zeus"
logs="${ZEUS_SOURCE_DIR:?}/testing/data/profile_logs"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
source "$(dirname "$0")/lib/fail_report.sh"  # fail MESSAGE: the message and the logs in $dir

# 1. Every log, every selector: the CLI's choice equals the formula's (one Python check at the end).
n=0
for log in "$logs"/*.csv; do
  for sel in "zeus --eta 0" "zeus --eta 0.25" "zeus --eta 0.5" "zeus --eta 1" energy time \
             slowdown:1.05 slowdown:1.2; do
    n=$((n + 1))
    printf '%s\n%s\n' "$log" "$sel" > "$dir/case$n.txt"
    # shellcheck disable=SC2086
    "$zeus" plo replay --log "$log" --selector $sel --json > "$dir/case$n.json"
  done
done
python3 - "$dir" "$n" <<'PY'
import csv, json, sys
for i in range(1, int(sys.argv[2]) + 1):
    log, sel = open(f"{sys.argv[1]}/case{i}.txt").read().splitlines()
    sel, out = sel.split(), json.load(open(f"{sys.argv[1]}/case{i}.json"))
    rows = list(csv.DictReader(open(log)))
    gpus = [k for k in rows[0] if k.endswith("_energy")]
    m = [(int(r["window_name"].rsplit("_", 1)[1]), sum(float(r[g]) for g in gpus),
          float(r["elapsed_time"])) for r in rows]
    max_w = max(p for p, _, _ in m)
    t_max = next(t for p, _, t in m if p == max_w)
    if sel[0].startswith("slowdown"):
        f = float(sel[0].split(":")[1])
        want = min(p for p, _, t in m if t <= f * t_max)
    else:
        if sel[0] == "zeus":
            eta = float(sel[2])
            cost = lambda e, t: eta * e + (1 - eta) * max_w * len(gpus) * t
        elif sel[0] == "energy":
            cost = lambda e, t: e
        else:
            cost = lambda e, t: t
        want = min(m, key=lambda x: (cost(x[1], x[2]), -x[0]))[0]
    assert out["optimal_power_limit_w"] == want, (log, sel, out["optimal_power_limit_w"], want)
    assert [x["power_limit_w"] for x in out["measurements"]] == [p for p, _, _ in m]
    for x, (p, e, t) in zip(out["measurements"], m):
        assert abs(x["energy_j"] - e) < 1e-6 and x["time_s"] == t, (x, p, e, t)
        assert set(x) == {"power_limit_w", "energy_j", "time_s", "cost"}, x
print(f"{sys.argv[2]} selections match")
PY

# 2. Hand-checked: V100 resnet50, at most 10% slower than 250 W (26.67 s -> 29.34 s): 200 W.
out=$("$zeus" plo replay --log "$logs/V100+resnet50+gpu0.csv" --selector slowdown:1.1)
grep -q "optimal power limit: 200 W" <<<"$out" || fail "expected 200 W, got: $out"
grep -q "slowdown" <<<"$out" || fail "no slowdown column: $out"

# 3. show: a saved profile (original Zeus format) gives the same answer as the log it came from.
cat > "$dir/profile.json" <<'JSON'
{"measurements": [{"power_limit": 250, "energy": 6065.03, "time": 26.6745},
                  {"power_limit": 200, "energy": 5394.75, "time": 28.3132},
                  {"power_limit": 150, "energy": 4830.30, "time": 32.4129}]}
JSON
"$zeus" plo show "$dir/profile.json" --selector energy --json > "$dir/show.json"
python3 -c "import json,sys; o=json.load(open(sys.argv[1])); assert o['optimal_power_limit_w']==150 and o['selector']=='energy', o" "$dir/show.json"
# eta = 0.5, MaxPower 250 W: costs 6366.8, 6236.5, 6466.8 J -> 200 W.
"$zeus" plo show "$dir/profile.json" | grep -q "optimal power limit: 200 W" || fail "show eta 0.5"

# 4. Errors: one line on stderr starting with "zeus:", exit 1, nothing on stdout.
expect_error() {  # expect_error <substring> <args...>
  local want="$1"; shift
  if "$zeus" plo "$@" > "$dir/o" 2> "$dir/e"; then fail "'zeus plo $*' succeeded"; fi
  grep -qF -- "$want" "$dir/e" || { cat "$dir/e"; fail "'zeus plo $*' error lacks '$want'"; }
  [ "$(wc -l < "$dir/e")" -eq 1 ] || { cat "$dir/e"; fail "more than one error line"; }
  grep -q "^zeus: " "$dir/e" || fail "error does not start with 'zeus: '"
  [ ! -s "$dir/o" ] || fail "output on stdout after an error"
}
printf 'start_time,window_name,elapsed_time,gpu0_energy\n1,__PowerLimitOptimizer_300,x,5\n' > "$dir/bad.csv"
expect_error "line 2" replay --log "$dir/bad.csv"
expect_error "does not exist" replay --log "$dir/absent.csv"
expect_error "[0, 1]" replay --log "$logs/V100+resnet50+gpu0.csv" --eta 1.5
expect_error ">= 1" replay --log "$logs/V100+resnet50+gpu0.csv" --selector slowdown:0.9
expect_error "unknown selector" replay --log "$logs/V100+resnet50+gpu0.csv" --selector fastest
expect_error "--eta applies" replay --log "$logs/V100+resnet50+gpu0.csv" --selector time --eta 0.3
echo '{"measurements": [{"power_limit": 250, "energy": 1' > "$dir/damaged.json"
expect_error "not a valid power profile" show "$dir/damaged.json"
echo "plo_cli: ok"
