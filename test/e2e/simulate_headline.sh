#!/usr/bin/env bash
# zeus simulate headline --json: stable keys, sane values, byte-identical output for one seed.
set -euo pipefail
ZEUS="${ZEUS_BIN:?}/zeus"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$ZEUS" simulate headline --json --seeds 2 > "$tmp/a.json"
"$ZEUS" simulate --json --seeds 2 > "$tmp/b.json"
cmp "$tmp/a.json" "$tmp/b.json" || { echo "FAIL: same seed gave different output"; exit 1; }
"$ZEUS" simulate --json --seeds 2 --seed 5 > "$tmp/c.json"
if cmp -s "$tmp/a.json" "$tmp/c.json"; then echo "FAIL: another seed gave the same output"; exit 1; fi

python3 - "$tmp/a.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert list(doc) == ["experiment", "gpu", "eta", "beta", "seeds", "workloads"], list(doc)
assert doc["experiment"] == "headline" and doc["gpu"] == "v100" and doc["eta"] == 0.5 and doc["beta"] == 2.0
assert doc["seeds"] == 2
names = [w["name"] for w in doc["workloads"]]
assert names == ["cifar100", "imagenet", "squad", "librispeech", "movielens-1m", "sentiment140"], names
keys = ["last5_energy_ratio", "last5_time_ratio", "cum_energy_ratio", "cum_time_ratio", "cum_regret",
        "cum_regret_vs_oracle"]
for w in doc["workloads"]:
    assert list(w) == ["name", "recurrences", "oracle", "oracle_expected", "policies"], list(w)
    assert w["oracle"]["cost_j"] >= w["oracle_expected"]["cost_j"], w["name"]
    assert w["recurrences"] > 0
    assert list(w["policies"]) == ["Default", "GridSearch", "Zeus", "Oracle", "Oracle (expected)"], list(w["policies"])
    for name, p in w["policies"].items():
        assert list(p) == keys, (name, list(p))
    d = w["policies"]["Default"]
    assert d["cum_energy_ratio"] == 1.0 and d["last5_time_ratio"] == 1.0
    # Zeus saves energy against Default on every paper workload.
    assert w["policies"]["Zeus"]["cum_energy_ratio"] < 1.0, w["name"]
    assert abs(w["policies"]["Oracle"]["cum_regret"]) < d["cum_regret"], w["name"]
print("ok")
PY

# The text table ends with the legend; a subset of workloads works.
"$ZEUS" simulate --seeds 1 --workload squad --workload librispeech | grep -q "^librispeech *Zeus"
