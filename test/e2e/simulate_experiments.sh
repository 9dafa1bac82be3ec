#!/usr/bin/env bash
# zeus simulate <experiment> --json for every experiment besides headline and pareto: the
# documented keys (docs/simulate.md), byte-identical output for one seed, a rendered report,
# and the step fidelity agreeing with the epoch fidelity.
set -euo pipefail
ZEUS="${ZEUS_BIN:?}/zeus"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for e in search-path eta-sweep beta-sweep ablation gpus drift concurrent; do
  "$ZEUS" simulate "$e" --json --seeds 2 --workload squad --workload cifar100 > "$tmp/$e.json"
  "$ZEUS" simulate "$e" --json --seeds 2 --workload squad --workload cifar100 > "$tmp/$e.again.json"
  cmp "$tmp/$e.json" "$tmp/$e.again.json" || { echo "FAIL: $e: same seed gave different output"; exit 1; }
done

python3 - "$tmp" <<'PY'
import json, sys, os
d = sys.argv[1]
load = lambda e: json.load(open(os.path.join(d, e + ".json")))
sweep_keys = ["variant", "value", "cum_energy_ratio", "cum_time_ratio", "last5_energy_ratio", "last5_time_ratio",
              "cum_regret", "grid_cum_regret", "last5_eta_j", "last5_tta_s", "oracle_eta_j", "oracle_tta_s",
              "converged_batch_size", "converged_power_limit"]
variants = {"eta-sweep": 11, "beta-sweep": 8, "ablation": 5, "gpus": 4}
for e, n in variants.items():
    doc = load(e)
    assert list(doc) == ["experiment", "parameter", "gpu", "eta", "beta", "seeds", "variants", "workloads"], list(doc)
    assert doc["experiment"] == e and len(doc["variants"]) == n, (e, doc["variants"])
    assert [w["name"] for w in doc["workloads"]] == ["squad", "cifar100"]
    for w in doc["workloads"]:
        assert [r["variant"] for r in w["results"]] == doc["variants"]
        for r in w["results"]:
            assert list(r) == sweep_keys, list(r)
            assert r["cum_energy_ratio"] > 0 and r["oracle_eta_j"] > 0
assert load("gpus")["gpu"] == "v100,a40,rtx6000,p100"
abl = load("ablation")["workloads"][0]["results"]
assert abl[3]["variant"] == "no JIT profiling" and abl[3]["converged_power_limit"] == 250

sp = load("search-path")
assert list(sp) == ["experiment", "gpu", "eta", "beta", "seed", "workloads"]
for w in sp["workloads"]:
    assert list(w) == ["name", "batch_sizes", "power_limits", "cost_over_oracle", "oracle", "default_batch_size", "paths"]
    assert list(w["paths"]) == ["GridSearch", "Zeus"]
    step = w["paths"]["Zeus"][0]
    assert list(step) == ["recurrence", "batch_size", "power_limit", "cost_j", "reached", "early_stopped", "profiled"]
    assert step["batch_size"] == w["default_batch_size"] and step["profiled"]
    best = min(v for row in w["cost_over_oracle"] for v in row if v is not None)
    assert abs(best - 1.0) < 1e-12, best

dr = load("drift")
assert list(dr) == ["experiment", "gpu", "workload", "eta", "beta", "seeds", "window_size", "phases", "policies"]
assert dr["workload"] == "imagenet" and [p["target_metric"] for p in dr["phases"]] == [0.65, 0.5]
assert list(dr["policies"]) == ["Default", "GridSearch", "Zeus", "Zeus (window 5)", "Oracle"]
assert dr["policies"]["Oracle"]["last_phase_optimal_share"] == 1.0
for p in dr["policies"].values():
    assert list(p) == ["cum_regret", "last_phase_energy_ratio", "last_phase_regret", "last_phase_optimal_share",
                       "failed_recurrences"]

cc = load("concurrent")
assert list(cc) == ["experiment", "gpu", "eta", "beta", "seeds", "overlaps", "workloads"]
assert cc["overlaps"] == [1, 2, 4, 8]
for w in cc["workloads"]:
    assert list(w) == ["name", "submissions", "default_duration_s", "results"]
    r = w["results"]
    assert list(r[0]) == ["overlap", "in_flight", "distinct_in_flight", "cum_energy_ratio", "cum_time_ratio",
                          "cum_regret", "sequential_regret", "best_known_answers", "makespan_s"]
    assert r[-1]["in_flight"] > r[0]["in_flight"], w["name"]
    assert all(x["distinct_in_flight"] <= x["in_flight"] for x in r)
print("ok")
PY

# Reports: every figure rendered when gnuplot is installed.
"$ZEUS" simulate search-path --workload squad --report "$tmp/report" > "$tmp/table"
grep -q "report: $tmp/report/index.md" "$tmp/table"
if command -v gnuplot > /dev/null; then
  [ -s "$tmp/report/search_path_squad.svg" ] || { echo "FAIL: no SVG rendered"; exit 1; }
  if grep -q "gnuplot failed" "$tmp/report/index.md"; then echo "FAIL: gnuplot failed"; exit 1; fi
fi

# Step fidelity: the real power-limit optimizer and monitor give the closed form's numbers.
"$ZEUS" simulate --json --seeds 2 --workload squad --recurrences 30 > "$tmp/epoch.json"
"$ZEUS" simulate --json --seeds 2 --workload squad --recurrences 30 --fidelity step > "$tmp/step.json"
python3 - "$tmp/epoch.json" "$tmp/step.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["workloads"][0]["policies"] for p in sys.argv[1:3])
for policy in a:
    ra, rb = a[policy]["cum_energy_ratio"], b[policy]["cum_energy_ratio"]
    assert abs(ra - rb) <= 0.01 * ra, (policy, ra, rb)
print("ok")
PY
