#!/usr/bin/env bash
# zeus pfo plan -> zeus pfo serve --scheduler frontier --plans DIR (also through upstream's
# ZEUS_PFO_SCHEDULER=Frontier and ZEUS_PFO_SCHEDULER_ARGS plans_dir), with 2 ranks of a 2-stage
# pipeline as Debian's python3 (httpx): round 0 is the fastest plan of plans.bin (as
# `zeus pfo export-plan --fastest` writes it), an operator's POST /straggler makes round 1 the
# plan `zeus pfo choose --straggler-time` picks, DELETE brings the fastest plan back; bad --plans
# is a clear error at start.
set -euo pipefail
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/pfo_lib.sh"
profile="${ZEUS_SOURCE_DIR:?}/data/perseus/stage_profile/gpt3-175b+a100_sxm_bf16.csv"

# The first two stages of the GPT-3 profile: a 2-stage pipeline.
{ head -1 "$profile"; grep -E "^[01]," "$profile"; } > "$dir/two_stages.csv"
"$zeus" pfo plan --profile "$dir/two_stages.csv" --stages 2 --microbatches 3 --p2p-power 83.64 \
  --out "$dir/plans" > /dev/null
"$zeus" pfo export-plan --plans "$dir/plans" --fastest --out "$dir/fastest.json"
# A short straggler (1.02 x T_min): the combined policy keeps to the frontier there.
t_prime=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['time'] * 1.02)" "$dir/fastest.json")
"$zeus" pfo choose --plans "$dir/plans" --straggler-time "$t_prime" --out "$dir/straggler.json" > /dev/null

# Bad --plans: a clear error, exit 1, at start.
if "$zeus" pfo serve --port 0 --scheduler frontier --plans "$dir/none" > "$dir/bad.log" 2>&1; then
  fail "started without plans"
fi
grep -q "plans.bin" "$dir/bad.log" || fail "bad --plans: $(cat "$dir/bad.log")"

start_pfo_server ZEUS_PFO_SCHEDULER=Frontier "ZEUS_PFO_SCHEDULER_ARGS={\"plans_dir\": \"$dir/plans\"}"
grep -q "scheduler Frontier, plans $dir/plans" "$dir/server.log" || fail "banner: $(cat "$dir/server.log")"

/usr/bin/python3 - "$url" "$dir" "$t_prime" <<'PY'
import json, sys, threading, httpx
url, d, t_prime = sys.argv[1], sys.argv[2], float(sys.argv[3])
fastest = json.load(open(d + "/fastest.json"))["frequencies"]
straggler = [[mhz for _, mhz in stage] for stage in json.load(open(d + "/straggler.json"))["frequencies"]]
assert straggler != fastest
c = httpx.Client(base_url=url, timeout=20)
job = c.post("/register_job", json={"job_id": "", "pp_degree": 2, "dp_degree": 1, "tp_degree": 1,
                                     "world_size": 2, "job_metadata": None}).json()
assert job.endswith("+Frontier"), job
assert c.post("/straggler/nope", json={"iteration_time_s": 3}).status_code == 404
for r in range(2):
    body = {"rank": r, "dp_rank": 0, "pp_rank": r, "tp_rank": 0,
            "available_frequencies": list(range(1410, 854, -15))}
    assert c.post("/register_rank/" + job, json=body).status_code == 200

def round_clocks():
    out = [None, None]
    def ask(r):
        s = httpx.get(url + "/schedule/" + job, params={"rank": r}, timeout=20)
        assert s.status_code == 200, s.text
        out[r] = [mhz for _, mhz in s.json()["frequencies"]]
    threads = [threading.Thread(target=ask, args=(r,)) for r in range(2)]
    for t in threads: t.start()
    for t in threads: t.join()
    return out

def report(seconds):
    for r in range(2):
        res = c.post("/result/" + job, json={"rank": r, "iter_time": [seconds], "iter_energy": [1.0]})
        assert res.status_code == 200, res.text

assert round_clocks() == fastest
bad = c.post("/straggler/" + job, json={"iteration_time_s": 0})
assert bad.status_code == 422 and "iteration_time_s" in bad.text, bad.text
assert c.post("/straggler/" + job, json={"iteration_time_s": t_prime}).status_code == 200
report(1.0)
assert round_clocks() == straggler
assert c.delete("/straggler/" + job).status_code == 200
report(1.0)
assert round_clocks() == fastest
assert json.loads(c.get("/info").text)["scheduler_args"]["plans_dir"] == d + "/plans"
PY
stop_pfo_server
echo "pfo_serve_frontier: ok"
