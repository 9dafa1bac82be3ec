#!/usr/bin/env bash
# zeus simulate --report DIR: Markdown + HTML + CSV + SVG (with gnuplot), and without gnuplot
# the data, tables and a note on how to render.
set -euo pipefail
ZEUS="${ZEUS_BIN:?}/zeus"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$ZEUS" simulate --seeds 2 --report "$tmp/headline" | tail -1 | grep -qF "report: $tmp/headline/index.md"
for f in index.md index.html headline.csv energy_last5.csv energy_last5.gp regret_squad.csv; do
  test -s "$tmp/headline/$f" || { echo "FAIL: missing $f"; exit 1; }
done
if command -v gnuplot > /dev/null; then
  grep -q "<svg" "$tmp/headline/energy_last5.svg" || { echo "FAIL: energy_last5.svg not rendered"; exit 1; }
  grep -q "<svg" "$tmp/headline/regret_librispeech.svg"
fi
grep -q "Convergence: Zeus against each Oracle" "$tmp/headline/index.md"
# Where Zeus's regret exceeds Default's (imagenet on these traces) the report says so, and why.
python3 - "$tmp/headline/headline.csv" "$tmp/headline/index.md" <<'PY'
import csv, sys
rows = {(r["workload"], r["policy"]): float(r["cum_regret_j"]) for r in csv.DictReader(open(sys.argv[1]))}
above = [w for (w, p) in rows if p == "Zeus" and rows[(w, "Zeus")] > rows[(w, "Default")]]
text = open(sys.argv[2]).read()
for w in above:
    assert "exceeds Default's on" in text and w + " (Zeus " in text, (w, "not said in the report")
if not above:
    assert "exceeds Default's on" not in text
print("regret above Default said for:", above)
PY

"$ZEUS" simulate pareto --workload squad --report "$tmp/pareto" > /dev/null
test -s "$tmp/pareto/pareto_squad.csv"
test -s "$tmp/pareto/pareto_squad_frontier.csv"
test -s "$tmp/pareto/eta_vs_batch_squad.csv"

# Without gnuplot on PATH: same data, no SVG, and the report says how to render.
PATH=/nonexistent "$ZEUS" simulate --seeds 1 --workload squad --report "$tmp/plain" > /dev/null
test -s "$tmp/plain/headline.csv"
test ! -e "$tmp/plain/energy_last5.svg"
grep -q "gnuplot was not found" "$tmp/plain/index.md"

# --json for pareto has stable keys.
"$ZEUS" simulate pareto --json --workload squad | python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert doc["experiment"] == "pareto"
p = doc["workloads"][0]["points"][0]
assert list(p) == ["batch_size", "power_limit", "tta_s", "eta_j", "cost_j", "reach_probability", "on_frontier", "is_default", "is_optimum"]
assert sum(q["is_default"] for q in doc["workloads"][0]["points"]) == 1
'
echo ok
