#!/usr/bin/env bash
# The online profiler end to end: `zeus pfo serve --scheduler profiler` with 2 pipeline ranks
# (threads of Debian's python3 with httpx) that run each round's schedule and report per-instruction
# times and energies from a clock model (energy falls, then rises at low clocks): two warm-up rounds
# at the top clock, one round per clock from the top, a stop after five energy rises in a row, the
# "[profiling-done]" answer to every rank, and the stage profile in Zeus's CSV form, which
# `zeus pfo plan` turns into a frontier. Bad profiler arguments stop the server at start.
set -euo pipefail
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/pfo_lib.sh"

# Bad arguments: a usage error naming the argument, before listening.
if "$zeus" pfo serve --port 0 --scheduler profiler --dump "$dir/d" > "$dir/bad.log" 2>&1; then
  fail "the profiler started without num_microbatches"
fi
grep -q "needs num_microbatches" "$dir/bad.log" || fail "no hint: $(cat "$dir/bad.log")"
if ZEUS_PFO_SCHEDULER=InstructionProfiler ZEUS_PFO_SCHEDULER_ARGS='{"num_microbatches": 4, "floor": 1}' \
  "$zeus" pfo serve --port 0 --dump "$dir/d" > "$dir/bad.log" 2>&1; then
  fail "an unknown profiler argument was accepted"
fi
grep -q "unknown field 'floor'" "$dir/bad.log" || fail "no field named: $(cat "$dir/bad.log")"
if "$zeus" pfo serve --port 0 --scheduler profiler --scheduler-args '{"num_microbatches": 4}' \
  > "$dir/bad.log" 2>&1; then
  fail "the profiler started with nowhere to write its profile"
fi
grep -q -- "--dump DIR" "$dir/bad.log" || fail "no hint: $(cat "$dir/bad.log")"

start_pfo_server ZEUS_PFO_SCHEDULER=InstructionProfiler \
  ZEUS_PFO_SCHEDULER_ARGS='{"num_microbatches": 4, "minimum_frequency": 900}' -- --dump "$dir/dump"

/usr/bin/python3 - "$url" "$dir" <<'PY'
import json, sys, threading
import httpx

url, work = sys.argv[1], sys.argv[2]
clocks = list(range(1980, 599, -60))  # what each rank's GPU lists

def model(stage, name, mhz):
    """Time (s) and energy (J) of one instruction: time ~ 1/clock; power ~ clock^3 plus a static
    part, so energy falls with the clock down to 1620 MHz and rises below (the fifth rise in a row
    is at 1320 MHz, above the floor)."""
    k = (1.0 + 0.25 * stage) * (2.0 if name == "backward" else 1.0)
    t = k * (0.02 + 60.0 / mhz)
    p = 200.0 + 100.0 * (mhz / 1980.0) ** 3
    return t, p * t

r = httpx.post(url + "/register_job", json={"job_id": "", "pp_degree": 2, "dp_degree": 1,
                                            "tp_degree": 1, "world_size": 2, "job_metadata": None})
assert r.status_code == 200, r.text
job_id = r.json()
assert job_id.endswith("+dp1+pp2+tp1+InstructionProfiler"), job_id

rounds = {0: [], 1: []}
done = {}
def rank(i):
    c = httpx.Client(timeout=60)
    r = c.post(url + f"/register_rank/{job_id}", json={"rank": i, "dp_rank": 0, "pp_rank": i,
               "tp_rank": 0, "available_frequencies": clocks})
    assert r.status_code == 200, r.text
    while True:
        r = c.get(url + f"/schedule/{job_id}", params={"rank": i})
        if r.status_code != 200:
            done[i] = (r.status_code, r.json()["detail"])
            return
        s = r.json()
        assert s["rank"] == i
        names = [n for n, _ in s["frequencies"]]
        # 1F1B with 2 stages and 4 microbatches.
        expected = ["forward", "forward", "backward", "forward", "backward", "forward", "backward",
                    "backward"] if i == 0 else ["forward", "backward"] * 4
        assert names == expected, names
        mhz = {f for _, f in s["frequencies"]}
        assert len(mhz) == 1, s
        mhz = mhz.pop()
        rounds[i].append(mhz)
        # 5 iterations; the first is a slow warm-up the profiler must drop.
        tb, eb = {"forward": [], "backward": []}, {"forward": [], "backward": []}
        for it in range(5):
            for name in ("forward", "backward"):
                t, e = model(i, name, mhz)
                f = 3.0 if it == 0 else 1.0
                tb[name].append([f * t] * 4)
                eb[name].append([f * e] * 4)
        res = {"rank": i, "iter_time": [1.0] * 5, "iter_energy": [100.0] * 5,
               "time_breakdown": tb, "energy_breakdown": eb}
        r = c.post(url + f"/result/{job_id}", json=res)
        assert r.status_code == 200, r.text

threads = [threading.Thread(target=rank, args=(i,)) for i in range(2)]
for t in threads: t.start()
for t in threads: t.join()

assert rounds[0] == rounds[1], rounds
run = rounds[0]
assert run[:3] == [1980, 1980, 1980], run           # two warm-up rounds, then 1980 measured
assert run[3:] == clocks[1:len(run) - 2], run        # then every clock from the top, in order
energies = [sum(model(s, n, f)[1] for s in (0, 1) for n in ("forward", "backward")) for f in run[2:]]
rises = [b > a for a, b in zip(energies, energies[1:])]
assert rises[-5:] == [True] * 5 and not all(rises[-6:]), (run, rises)  # stopped at the 5th rise
assert run[-1] == 1320, run
for i in (0, 1):
    status, detail = done[i]
    assert status == 500 and detail.startswith("[profiling-done]"), done
    assert "energy rose 5 times in a row down to %d MHz" % run[-1] in detail, detail
    assert "zeus pfo plan --profile " in detail, detail

path = f"{work}/dump/{job_id}/stage_profile.csv"
lines = open(path).read().splitlines()
assert lines[0] == "rank,dp_rank,pp_rank,tp_rank,stage,instruction,frequency,time,energy", lines[0]
rows = [l.split(",") for l in lines[1:]]
assert len(rows) == 2 * 2 * (len(run) - 2), len(rows)
for rank_, dp, pp, tp, stage, name, mhz, t, e in rows:
    assert rank_ == pp == stage and dp == tp == "0"
    mt, me = model(int(stage), name, int(mhz))
    assert abs(float(t) - mt) < 1e-9 * mt and abs(float(e) - me) < 1e-9 * me, (t, mt, e, me)
open(f"{work}/profile_path", "w").write(path)
PY

profile=$(cat "$dir/profile_path")
"$zeus" pfo plan --profile "$profile" --stages 2 --microbatches 4 --p2p-power 60 \
  --out "$dir/plans" > "$dir/plan.log" 2>&1 || fail "zeus pfo plan on the profile: $(cat "$dir/plan.log")"
rows=$(($(wc -l < "$dir/plans/frontier.csv") - 1))
[ "$rows" -ge 2 ] || fail "a frontier of $rows plans: $(cat "$dir/plan.log")"

stop_pfo_server
echo "ok ($rows plans)"
