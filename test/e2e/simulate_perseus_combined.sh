#!/usr/bin/env bash
# zeus simulate perseus --json over every default configuration (2 models x 2 GPUs x 4 microbatch
# counts x 6 straggler slowdowns): the combined straggler policy (the better of the frontier's
# plan and one global clock at each T') never saves less than Perseus or the best global clock,
# finishes by T', and a global clock wins somewhere (the long stragglers). The unit test
# PerseusEmulation.CombinedPolicy* checks the same on a subset; this is the whole table.
set -euo pipefail
ZEUS="${ZEUS_BIN:?}/zeus"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$ZEUS" simulate perseus --json > "$tmp/p.json"
python3 - "$tmp/p.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["experiment"] == "perseus", doc["experiment"]
configs = doc["configs"]
assert len(configs) == 16, len(configs)
rows = wins = 0
for c in configs:
    where = f'{c["model"]} {c["gpu"]} mb{c["microbatches"]}'
    assert len(c["stragglers"]) == 6, where
    for r in c["stragglers"]:
        rows += 1
        at = f'{where} T\'/T={r["slowdown"]}'
        assert r["combined_saving"] >= r["perseus_saving"] - 1e-12, at
        assert r["combined_saving"] >= r["global_clock_saving"] - 1e-12, at
        assert r["combined_plan_time_s"] <= c["t_min_s"] * r["slowdown"] * (1 + 1e-12), at
        if r["combined_global_clock_mhz"] > 0:
            wins += 1
            assert r["combined_saving"] > r["perseus_saving"], at
        else:
            assert r["combined_saving"] == r["perseus_saving"], at
assert wins > 0, "a global clock never won: the combined policy is only Perseus"
print(f"ok: {rows} rows, the global clock wins {wins}")
PY
