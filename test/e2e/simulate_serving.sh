#!/usr/bin/env bash
# zeus simulate serving (issue 38): both bundled Azure traces under the four clock policies, the
# JSON's stable keys, the governor's saving against the maximum clock, the --report folder (its
# four figures, each caption naming the parametric model; for the hour-long conversation trace the
# clock as bounded steps and its busiest 5 minutes zoomed in), and usage errors.
set -euo pipefail
ZEUS="${ZEUS_BIN:?}/zeus"
data="${ZEUS_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}/data/llm_traces"
for trace in conv code; do
  "$ZEUS" simulate serving --trace "$data/azure_llm_2023_$trace.csv" --json | /usr/bin/python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert doc["experiment"] == "serving" and doc["model"] == "parametric", doc
names = [p["name"] for p in doc["policies"]]
assert names == ["max-clock", "best-static", "dual-loop", "governor"], names
for p in doc["policies"]:
    assert set(p) >= {"name", "energy_j", "slo_violation_rate", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s"}, p
    assert p["energy_j"] > 0 and 0 <= p["slo_violation_rate"] <= 1, p
mx, static, dual, gov = doc["policies"]
assert static["energy_j"] <= mx["energy_j"] and static["slo_violation_rate"] <= mx["slo_violation_rate"] + 0.01
assert gov["energy_j"] < mx["energy_j"], (gov, mx)
assert gov["slo_violation_rate"] <= mx["slo_violation_rate"] + 0.01, (gov, mx)
print(doc["trace"], "governor saves %.1f %%, +%.2f points of violations" % (100 * (1 - gov["energy_j"] / mx["energy_j"]), 100 * (gov["slo_violation_rate"] - mx["slo_violation_rate"])))
'
done
"$ZEUS" simulate serving --trace "$data/azure_llm_2023_code.csv" | grep -q "^governor "
# Four replicas (issue 50): the four policies under least-loaded routing, then the pack router's
# three; the JSON names the routing and the replicas awake; packing sleeps replicas of a light
# load and saves against four replicas at the maximum clock, within a point of violations, at the
# SLOs one server holds (an operator's SLOs do not tighten with more GPUs).
"$ZEUS" simulate serving --trace "$data/azure_llm_2023_conv.csv" --replicas 4 --ttft-slo 0.4 \
  --tpot-slo 0.024 --json | /usr/bin/python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert doc["replicas"] == 4, doc["replicas"]
names = [p["name"] for p in doc["policies"]]
assert names == ["max-clock", "best-static", "dual-loop", "governor", "pack-max-clock", "pack-best-static", "pack-governor"], names
routing = [p["routing"] for p in doc["policies"]]
assert routing == ["least-loaded"] * 4 + ["pack"] * 3, routing
mx, pack = doc["policies"][0], doc["policies"][6]
assert mx["replicas_awake_mean"] == 4 and pack["replicas_awake_mean"] < 3, (mx, pack)
assert pack["energy_j"] < 0.6 * mx["energy_j"], (pack, mx)
assert pack["slo_violation_rate"] <= mx["slo_violation_rate"] + 0.01, (pack, mx)
print("4 replicas: pack-governor saves %.1f %%, %.2f replicas awake" % (100 * (1 - pack["energy_j"] / mx["energy_j"]), pack["replicas_awake_mean"]))
'
"$ZEUS" simulate serving --replicas 0 > /dev/null 2>&1 && { echo "FAIL: --replicas 0 accepted"; exit 1; }
# A power budget at 60 % of one H100's limit (420 W): the budget's two policies hold it in
# (nearly) every whole second, where the maximum clock does not.
"$ZEUS" simulate serving --trace "$data/azure_llm_2023_code.csv" --power-budget 60% --json | /usr/bin/python3 -c '
import json, sys
doc = json.load(sys.stdin)
assert abs(doc["power_budget_w"] - 420) < 1e-9, doc["power_budget_w"]
P = {p["name"]: p for p in doc["policies"]}
assert P["max-clock"]["budget_held"] < 0.9, P["max-clock"]
for name in ("governor-budget", "governor-equal-caps"):
    assert P[name]["budget_held"] >= 0.99, P[name]
print("power budget 420 W: held %.2f %% (budget), %.2f %% (equal caps), %.2f %% (maximum clock)" % tuple(100 * P[n]["budget_held"] for n in ("governor-budget", "governor-equal-caps", "max-clock")))
'
# Prefill and decode apart: the three pd policies, the pair of static clocks, every request
# answered; --prefill-replicas must leave a decode replica.
"$ZEUS" simulate serving --trace "$data/azure_llm_2023_conv.csv" --replicas 4 --prefill-replicas 1 --json | /usr/bin/python3 -c '
import json, sys
doc = json.load(sys.stdin)
P = {p["name"]: p for p in doc["policies"]}
assert {"pd-max-clock", "pd-best-static", "pd-governor"} <= set(P), sorted(P)
top, best, gov = P["pd-max-clock"], P["pd-best-static"], P["pd-governor"]
assert top["routing"] == "prefill-decode" and best["prefill_clock_mhz"] >= best["static_clock_mhz"], best
assert gov["energy_j"] < 0.7 * top["energy_j"] and gov["slo_violation_rate"] <= top["slo_violation_rate"] + 0.01, (gov, top)
print("P/D 1:3: pd-governor %.1f %% below both pools at the maximum clock" % (100 * (1 - gov["energy_j"] / top["energy_j"])))
'
"$ZEUS" simulate serving --replicas 2 --prefill-replicas 2 > /dev/null 2>&1 && { echo "FAIL: no decode replica accepted"; exit 1; }
for bad in 0 -3 abc 120% 60%%; do
  "$ZEUS" simulate serving --power-budget "$bad" > /dev/null 2>&1 && { echo "FAIL: --power-budget $bad accepted"; exit 1; }
done
report=$(mktemp -d)/report
trap 'rm -rf "$(dirname "$report")"' EXIT
"$ZEUS" simulate serving --trace "$data/azure_llm_2023_code.csv" --report "$report" > /dev/null
for fig in serving_energy serving_violations serving_clock serving_load; do
  [ -s "$report/$fig.svg" ] && [ -s "$report/$fig.csv" ] || { echo "FAIL: no $fig figure in the report"; exit 1; }
  grep -q "parametric serving model" "$report/$fig.gp" || { echo "FAIL: $fig's title does not name the model"; exit 1; }
done
grep -q "governor" "$report/index.md" && grep -q "serving_clock.svg" "$report/index.html" \
  || { echo "FAIL: the report's pages"; exit 1; }
[ "$(head -1 "$report/serving_clock.csv")" = "time (s),max-clock,best-static,dual-loop,governor" ] \
  || { echo "FAIL: the clock CSV's header: $(head -1 "$report/serving_clock.csv")"; exit 1; }
# An hour-long trace's clock chart is readable (drawn point by point it was a red and green
# hairball): the whole hour as steps of a bounded number of means, and the
# busiest 5 minutes zoomed in (2 s steps), each captioned as the model, not a measurement.
conv=$(dirname "$report")/conv
"$ZEUS" simulate serving --trace "$data/azure_llm_2023_conv.csv" --report "$conv" > /dev/null
for fig in serving_clock serving_clock_busiest; do
  [ -s "$conv/$fig.svg" ] && [ -s "$conv/$fig.csv" ] || { echo "FAIL: no $fig figure in the conv report"; exit 1; }
  grep -q "parametric serving model" "$conv/$fig.gp" && grep -q "not a measurement" "$conv/$fig.gp" \
    || { echo "FAIL: $fig's title does not say it is the model, not a measurement"; exit 1; }
  grep -q "with steps" "$conv/$fig.gp" || { echo "FAIL: $fig is not a step plot"; exit 1; }
done
rows=$(($(wc -l < "$conv/serving_clock.csv") - 1))
[ "$rows" -le 121 ] || { echo "FAIL: the hour's clock chart has $rows points per policy (at most 121)"; exit 1; }
zoom=$(($(wc -l < "$conv/serving_clock_busiest.csv") - 1))
[ "$zoom" -le 151 ] && [ "$zoom" -ge 100 ] || { echo "FAIL: the busiest 5 minutes have $zoom points (100-151)"; exit 1; }
grep -q "busiest 5 minutes, [0-9]*-[0-9]* s" "$conv/index.md" || { echo "FAIL: the zoom's caption names no window"; exit 1; }
[ "$(head -1 "$conv/serving_clock_busiest.csv")" = "time (s),max-clock,best-static,dual-loop,governor,running or waiting (governor)" ] \
  || { echo "FAIL: the zoom CSV's header: $(head -1 "$conv/serving_clock_busiest.csv")"; exit 1; }
/usr/bin/python3 - "$conv/serving_clock_busiest.csv" <<'PY' || { echo "FAIL: the zoom's window"; exit 1; }
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))[1:]
t = [float(r[0]) for r in rows]
assert t[-1] - t[0] == 300 and all(b - a == 2 for a, b in zip(t, t[1:])), t[:3]
assert all(930 <= float(v) <= 1980 for r in rows for v in r[1:5]), rows[:3]
assert max(float(r[5]) for r in rows) > 1, "the busiest window has no load"
PY
set +e
"$ZEUS" simulate headline --trace "$data/azure_llm_2023_code.csv" > /dev/null 2> /tmp/serving_usage.$$
rc=$?
"$ZEUS" simulate serving --trace /nonexistent.csv > /dev/null 2> /tmp/serving_missing.$$
rc2=$?
set -e
[ "$rc" = 2 ] && grep -q "zeus simulate serving" /tmp/serving_usage.$$ || { cat /tmp/serving_usage.$$; echo "FAIL: --trace on headline"; exit 1; }
[ "$rc2" != 0 ] && grep -q "ContextTokens" /tmp/serving_missing.$$ || { cat /tmp/serving_missing.$$; echo "FAIL: missing trace"; exit 1; }
rm -f /tmp/serving_usage.$$ /tmp/serving_missing.$$
echo ok
