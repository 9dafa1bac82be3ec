#!/usr/bin/env bash
# zeus simulate --carbon/--price: each policy's gCO2eq and $ beside its joules, in the table, the
# JSON and the report; const: and csv: providers; a gap is "unknown" with its reason; online
# providers and bad specs are clear usage errors.
set -euo pipefail
ZEUS="${ZEUS_BIN:?}/zeus"
CSV="${ZEUS_SOURCE_DIR:?}/data/carbon_hist.csv"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(--seeds 2 --workload squad --recurrences 20)

# The bundled series (MISO, from 2022-10-20T06:20Z, 3.5 days): recurrences every 2 hours fit.
"$ZEUS" simulate "${common[@]}" --carbon "csv:$CSV:MISO_MASON_CITY" --price const:0.12 \
  --recurrence-interval 2 > "$tmp/table"
grep -q "recurrences start every 2 h from 2022-10-20T06:20:00Z" "$tmp/table" || { cat "$tmp/table"; exit 1; }
grep -q "cum_gCO2eq" "$tmp/table"
grep -Eq "^squad +Zeus +[0-9.]+ +[0-9.]+ +[0-9.]+$" "$tmp/table" || { echo "FAIL: no Zeus amounts"; cat "$tmp/table"; exit 1; }

"$ZEUS" simulate "${common[@]}" --carbon "csv:$CSV:MISO_MASON_CITY" --price const:0.12 \
  --recurrence-interval 2 --json > "$tmp/a.json"
"$ZEUS" simulate "${common[@]}" --carbon "csv:$CSV:MISO_MASON_CITY" --price const:0.12 \
  --recurrence-interval 2 --json > "$tmp/b.json"
cmp "$tmp/a.json" "$tmp/b.json" || { echo "FAIL: a replay is not reproducible"; exit 1; }
# A later start (the series' values differ) changes the carbon, not the energy or the cost.
"$ZEUS" simulate "${common[@]}" --carbon "csv:$CSV:MISO_MASON_CITY" --price const:0.12 \
  --recurrence-interval 2 --start 2022-10-21T18:00:00Z --json > "$tmp/later.json"
# Daily recurrences run past the series' end: carbon unknown with the reason, cost still known.
"$ZEUS" simulate "${common[@]}" --carbon "csv:$CSV:MISO_MASON_CITY" --price const:0.12 --json > "$tmp/daily.json"
# A constant: amount = kWh x value exactly.
"$ZEUS" simulate "${common[@]}" --carbon const:420 --json > "$tmp/const.json"

/usr/bin/python3 - "$tmp" <<'PY'
import json, sys, os
d = sys.argv[1]
load = lambda n: json.load(open(os.path.join(d, n)))
a, later, daily, const = load("a.json"), load("later.json"), load("daily.json"), load("const.json")
assert list(a)[:6] == ["experiment", "gpu", "eta", "beta", "seeds", "accounting"], list(a)
acc = a["accounting"]
assert acc["schedule"] == "every 2 h from 2022-10-20T06:20:00Z", acc
assert "MISO_MASON_CITY" in acc["carbon"] and acc["price"] == "const 0.12 $/kWh", acc
for name, p in a["workloads"][0]["policies"].items():
    kwh = p["cum_energy_j"] / 3.6e6
    assert p["carbon"]["unit"] == "gCO2eq" and p["cost"]["unit"] == "$", p
    # MISO's values in the bundled file lie between 500 and 800 gCO2eq/kWh.
    assert 500 * kwh < p["carbon"]["total"] < 800 * kwh, (name, p)
    assert abs(p["cost"]["total"] - 0.12 * kwh) < 1e-9 * max(1, kwh), (name, p)
    q = later["workloads"][0]["policies"][name]
    assert q["cum_energy_j"] == p["cum_energy_j"] and q["cost"] == p["cost"], name
    assert q["carbon"]["total"] != p["carbon"]["total"], name
    u = daily["workloads"][0]["policies"][name]
    assert u["carbon"]["total"] is None and "has no value" in u["carbon"]["unknown_reason"], u
    assert u["cost"]["total"] is not None, u
    c = const["workloads"][0]["policies"][name]
    assert abs(c["carbon"]["total"] - 420 * c["cum_energy_j"] / 3.6e6) < 1e-6, c
    assert "cost" not in c, c
assert daily["accounting"]["schedule"].startswith("every 24 h from 2022-10-20T06:20:00Z")
assert const["accounting"]["price"] is None
print("ok")
PY

"$ZEUS" simulate "${common[@]}" --carbon "csv:$CSV:MISO_MASON_CITY" > "$tmp/daily_table"
grep -q "^unknown: csv .* has no value for 2022-10-2[0-9]T[0-9:]*Z (Unix time [0-9]*)$" "$tmp/daily_table" || { cat "$tmp/daily_table"; exit 1; }
grep -Eq "^squad +Zeus +[0-9.]+ +unknown +-$" "$tmp/daily_table" || { cat "$tmp/daily_table"; exit 1; }

# The report gains the section and its data.
"$ZEUS" simulate "${common[@]}" --carbon const:420 --report "$tmp/report" > /dev/null
grep -q "## Carbon and cost" "$tmp/report/index.md"
grep -q "^squad,Zeus," "$tmp/report/accounting.csv"

# Without accounting, nothing changes: no accounting keys.
"$ZEUS" simulate "${common[@]}" --json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
assert "accounting" not in d and "carbon" not in d["workloads"][0]["policies"]["Zeus"]'

expect_usage() {  # expect_usage <substring> <args...>
  local want="$1"; shift
  local rc=0
  "$ZEUS" simulate "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  if [ "$rc" -ne 2 ]; then echo "FAIL: 'zeus simulate $*' exited $rc, not 2"; cat "$tmp/err"; exit 1; fi
  grep -qF -e "$want" "$tmp/err" || { echo "FAIL: 'zeus simulate $*' error lacks '$want':"; cat "$tmp/err"; exit 1; }
}
expect_usage "is online" --carbon electricitymaps:42.28,-83.74
expect_usage "is online" --price openei:42.28,-83.74,R1
expect_usage "const needs a number" --carbon const:abc
expect_usage "must be finite and not negative" --price const:-1
expect_usage "the offline forms are const:VALUE" --carbon wind:3
expect_usage "cannot read the intensity CSV" --carbon csv:/nonexistent.csv
expect_usage "has no rows for location NOWHERE" --carbon "csv:$CSV:NOWHERE"
expect_usage "--start: '2022-13' is not an ISO 8601 time" --carbon const:1 --start 2022-13
expect_usage "--recurrence-interval must be a positive number of hours" --carbon const:1 --recurrence-interval -2
expect_usage "--recurrence-interval must be a positive number of hours" --carbon const:1 --recurrence-interval 0
expect_usage "give one of those too" --recurrence-interval 24
expect_usage "applies to 'zeus simulate headline' only" drift --carbon const:1
echo "ok"
