#!/usr/bin/env bash
# Zeus 0.16's own pipeline-frequency client against `zeus pfo serve` (PointSolution, a schedule in
# upstream's freqs_pipeline_%05d.py form): 4 ranks as processes (torch.distributed, gloo on CPU),
# each with Zeus's PipelineFrequencyOptimizer re-created in test/e2e/lib/zeus016_pfo.py and its
# FrequencyController process locking SM clocks on the fake NVML (one fake GPU per rank, the
# state file's sm_clock_log recording every lock). Each rank drives the hooks in its stage's 1F1B
# order for 3 iterations; each fake GPU's locked clock must follow its rank's schedule exactly
# (the controller skips unchanged clocks and 0), and every GPU is back to default afterwards.
# Then bad input: the same ranks meet a schedule for another world size, one with a clock their
# GPUs do not support, and a .py schedule with code in it — every rank's optimizer fails with the
# server's reason (no hang, the code never runs, no schedule clock is applied); and over HTTP: an
# unknown job, a duplicate rank, a rank out of range, a world size that is not pp x dp x tp.
set -euo pipefail
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/pfo_lib.sh"
lib="$ZEUS_SOURCE_DIR/test/e2e/lib"

export ZEUS_NVML_PATH="${ZEUS_FAKES:?}/libnvidia-ml.so.1"
export ZEUS_FAKE_NVML_STATE="$dir/nvml.json"
# Four GPUs; GPU 2's power limit was left lowered (the controller resets it to the default).
/usr/bin/python3 - "$ZEUS_FAKE_NVML_STATE" <<'PY'
import json, sys
dev = {"graphics_clocks_mhz": [1980, 1830, 1680, 1530, 1380, 1230], "memory_clocks_mhz": [2619, 1593]}
devices = [dict(dev) for _ in range(4)]
devices[2]["limit_mw"] = 300000
json.dump({"devices": devices, "sm_clock_log": []}, open(sys.argv[1], "w"))
PY

# The plan, as lowtime writes it: a list per rank in its 1F1B order (4 stages, 4 microbatches).
cat > "$dir/freqs_pipeline_00007.py" <<'PY'
[
  [('forward', 1980), ('forward', 1830), ('forward', 1830), ('forward', 1680), ('backward', 1980), ('backward', 1980), ('backward', 0), ('backward', 1530),],
  [('forward', 1680), ('forward', 1680), ('forward', 1530), ('backward', 1380), ('forward', 1230), ('backward', 1980), ('backward', 1830), ('backward', 1830)],
  [('forward', 1230), ('forward', 1380), ('backward', 1530), ('forward', 1680), ('backward', 1830), ('forward', 1980), ('backward', 1980), ('backward', 1230)],
  [('forward', 1980), ('backward', 1980), ('forward', 1980), ('backward', 1980), ('forward', 1530), ('backward', 1530), ('forward', 1530), ('backward', 1530)],
]
# Iteration time 1.234 s, cost 567.8
PY
cp "$dir/freqs_pipeline_00007.py" "$dir/good.py"
cat > "$dir/bad_world.py" <<'PY'
[
  [('forward', 1980), ('backward', 1980)],
  [('forward', 1980), ('backward', 1980)],
]
PY
sed 's/1230/1995/' "$dir/good.py" > "$dir/bad_clock.py"
cat > "$dir/bad_code.py" <<PY
[[('forward', __import__('os').system('touch $dir/pwned'))]] * 4
PY

start_pfo_server ZEUS_PFO_SCHEDULER=PointSolution \
  ZEUS_PFO_SCHEDULER_ARGS="{\"solution_path\": \"$dir/freqs_pipeline_00007.py\"}" \
  -- --rank-timeout 60

# torchrun's environment for 4 processes on one node.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for rank in 0 1 2 3; do
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=$rank WORLD_SIZE=4 LOCAL_RANK=$rank \
    /usr/bin/python3 "$lib/zeus016_pfo.py" --server "$url" --microbatches 4 --iterations 3 \
    --out "$dir" --schedule-file "$dir/freqs_pipeline_00007.py" \
    --bad "$dir/bad_world.py" "$dir/bad_clock.py" "$dir/bad_code.py" \
    > "$dir/rank$rank.log" 2>&1 &
  pids+=($!)
done
for rank in 0 1 2 3; do
  timeout 300 tail --pid="${pids[$rank]}" -f /dev/null ||
    fail "rank $rank still runs after 300 s: $(tail -20 "$dir/rank$rank.log")"
  wait "${pids[$rank]}" || fail "rank $rank failed: $(tail -30 "$dir/rank$rank.log")"
done
pids=()

/usr/bin/python3 - "$dir" "$url" <<'PY'
import ast, json, os, sys
import httpx

work, url = sys.argv[1], sys.argv[2]
plan = ast.literal_eval(open(f"{work}/good.py").read())
state = json.load(open(f"{work}/nvml.json"))
log = state["sm_clock_log"]
reports = [json.load(open(f"{work}/rank{r}.json")) for r in range(4)]

job_id = reports[0]["job_id"]
assert job_id.endswith("+dp1+pp4+tp1+PointSolution+zeus016"), job_id
bad_reasons = ["holds 2 ranks' clocks but the job has 4 ranks",
               "asks for 1995 MHz, which its GPU does not support",
               "a name ('__import__') is not allowed"]
for r, rep in enumerate(reports):
    assert rep["job_id"] == job_id, rep
    assert [tuple(x) for x in rep["schedule"]] == plan[r], (r, rep["schedule"])
    assert rep["controller_exit"] == 0, rep
    # Every rank of every bad job got the server's reason (status 400) instead of a schedule.
    assert len(rep["bad"]) == 3, rep
    for got, reason in zip(rep["bad"], bad_reasons):
        assert got.startswith("PFO server returned status code 400:") and reason in got, (r, got)

for r in range(4):
    mine = [(e["min_mhz"], e["max_mhz"]) for e in log if e["index"] == r]
    # The controller locks the top clock at start, then each clock that differs from the current
    # one (0 = leave it), for 3 iterations, and resets (0, 0) at the end.
    expected, current = [1980], 1980
    for _ in range(3):
        for name, mhz in plan[r]:
            if mhz != 0 and mhz != current:
                expected.append(mhz)
                current = mhz
    expected.append(0)
    good = [lo for lo, hi in mine[:len(expected)]]
    assert all(lo == hi for lo, hi in mine), (r, mine)
    assert good == expected, (r, good, expected)
    # The 3 bad jobs: each controller locked the top clock at start (Zeus's controller does so
    # before the schedule arrives) and reset it at exit; no schedule clock was ever applied.
    rest = sorted(lo for lo, hi in mine[len(expected):])
    assert rest == [0, 0, 0, 1980, 1980, 1980], (r, rest)
    assert mine[-1] == (0, 0), (r, mine)
    dev = state["devices"][r]
    assert dev["locked_sm_clocks_mhz"] is None and dev["locked_memory_clocks_mhz"] is None, dev
    assert dev["limit_mw"] == dev["default_limit_mw"], (r, dev["limit_mw"])
assert not os.path.exists(f"{work}/pwned"), "the .py schedule's code ran"

# Bad requests to the same server: clear errors, nothing changed.
rank0 = {"rank": 0, "dp_rank": 0, "pp_rank": 0, "tp_rank": 0, "available_frequencies": [1980]}
r = httpx.post(url + "/register_rank/2020-01-01-00-00-00+dp1+pp4+tp1+PointSolution", json=rank0)
assert r.status_code == 404 and "unknown job" in r.json()["detail"], r.text
r = httpx.post(url + f"/register_rank/{job_id}", json=rank0)
assert r.status_code == 409 and "registered already" in r.json()["detail"], r.text
r = httpx.post(url + f"/register_rank/{job_id}", json=dict(rank0, rank=4, pp_rank=3))
assert r.status_code == 400 and "rank 4 is out of range" in r.json()["detail"], r.text
r = httpx.get(url + f"/schedule/{job_id}", params={"rank": 7})
assert r.status_code == 400 and "out of range" in r.json()["detail"], r.text
r = httpx.post(url + "/register_job", json={"job_id": "", "pp_degree": 4, "dp_degree": 2,
                                            "tp_degree": 1, "world_size": 4, "job_metadata": None})
assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "world_size"], r.text
print("ok:", job_id)
PY

stop_pfo_server
echo "ok"
