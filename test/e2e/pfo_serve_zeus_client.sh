#!/usr/bin/env bash
# zeus pfo serve with upstream's settings (ZEUS_PFO_SCHEDULER, ZEUS_PFO_SCHEDULER_ARGS,
# ZEUS_PFO_DUMP_DIR) and a lowtime-style freqs_pipeline_*.py, driven by 4 ranks (threads of
# Debian's python3 with httpx and pydantic v1) sending Zeus 0.16's bodies exactly as its
# PipelineFrequencyOptimizer does (model.dict() through httpx, the schedule read back with
# FrequencySchedule.parse_raw): registration, the barrier, each rank's exact clocks, results, the
# dump files; then a .py schedule holding code is reported, not run; SIGINT stops the server.
set -euo pipefail
source "${ZEUS_SOURCE_DIR:?}/test/e2e/lib/pfo_lib.sh"

cat > "$dir/freqs_pipeline_00003.py" <<'PY'
[
[('forward', 1980), ('forward', 1980), ('backward', 1500), ('backward', 1980)],
[('forward', 1500), ('backward', 1500), ('forward', 1200), ('backward', 1500)],
]
# Iteration 3: cost 123.4
PY

start_pfo_server ZEUS_PFO_SCHEDULER=PointSolution3D \
  ZEUS_PFO_SCHEDULER_ARGS="{\"solution_path\": \"$dir/freqs_pipeline_00003.py\"}" \
  ZEUS_PFO_DUMP_DIR="$dir/dump"

/usr/bin/python3 - "$url" "$dir/dump" "$ZEUS_SOURCE_DIR/test/e2e/lib" <<'PY'
import json, os, sys, threading
import httpx

url, dump = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
# Zeus 0.16's wire models (zeus.optimizer.pipeline_frequency.common), field for field.
from zeus016_wire import FrequencySchedule, JobInfo, ProfilingResult, RankInfo

# 2 stages x 2 data-parallel replicas; rank 0 registers the job.
job = JobInfo(pp_degree=2, dp_degree=2, tp_degree=1, world_size=4, job_metadata="e2e")
r = httpx.post(url + "/register_job", json=job.dict())
assert r.status_code == 200, r.text
job_id = r.json()
assert isinstance(job_id, str) and job_id.endswith("+dp2+pp2+tp1+PointSolution3D+e2e"), job_id

clocks = list(range(1980, 209, -15))
got = {}
def rank(i):
    info = RankInfo(rank=i, dp_rank=i % 2, pp_rank=i // 2, tp_rank=0, available_frequencies=clocks)
    r = httpx.post(url + f"/register_rank/{job_id}", json=info.dict())
    assert r.status_code == 200 and r.json() is None, r.text
    r = httpx.get(url + f"/schedule/{job_id}", params={"rank": i}, timeout=None)
    assert r.status_code == 200, r.text
    s = FrequencySchedule.parse_raw(r.text)
    assert s.rank == i
    got[i] = s.frequencies
threads = [threading.Thread(target=rank, args=(i,)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
stage0 = [("forward", 1980), ("forward", 1980), ("backward", 1500), ("backward", 1980)]
stage1 = [("forward", 1500), ("backward", 1500), ("forward", 1200), ("backward", 1500)]
assert got == {0: stage0, 1: stage0, 2: stage1, 3: stage1}, got

for i in range(4):
    res = ProfilingResult(rank=i, iter_time=[1.0 + i], iter_energy=[100.0],
                          time_breakdown={"forward": [[0.1, 0.1]]},
                          energy_breakdown={"forward": [[5.0, 5.0]]})
    r = httpx.post(url + f"/result/{job_id}", json=res.dict())
    assert r.status_code == 200, r.text

# Errors: world size, unknown job, duplicate rank.
r = httpx.post(url + "/register_job", json={"pp_degree": 2, "dp_degree": 2, "tp_degree": 1, "world_size": 3})
assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "world_size"], r.text
r = httpx.get(url + "/schedule/unknown", params={"rank": 0})
assert r.status_code == 404 and "unknown job" in r.json()["detail"], r.text
r = httpx.post(url + f"/register_rank/{job_id}", json=RankInfo(rank=0, dp_rank=0, pp_rank=0, tp_rank=0, available_frequencies=[]).dict())
assert r.status_code == 409, r.text

d = os.path.join(dump, job_id)
ranks = json.load(open(os.path.join(d, "ranks.json")))
assert [x["rank"] for x in ranks] == [0, 1, 2, 3]
sched = json.load(open(os.path.join(d, "0.sched.json")))
assert [tuple(e) for e in sched[3]["frequencies"]] == stage1
prof = json.load(open(os.path.join(d, "0.prof.json")))
assert prof[2]["iter_time"] == [3.0]
PY

stop_pfo_server

# A .py schedule with code in it: reported at /schedule, never run.
cat > "$dir/evil.py" <<PY
[[('forward', __import__('os').system('touch $dir/pwned'))]]
PY
start_pfo_server ZEUS_PFO_SCHEDULER_ARGS="{\"solution_path\": \"$dir/evil.py\"}"
id=$(curl -sf -X POST "$url/register_job" -H 'Content-Type: application/json' \
  -d '{"job_id": "", "pp_degree": 1, "dp_degree": 1, "tp_degree": 1, "world_size": 1, "job_metadata": null}' | tr -d '"')
curl -sf -X POST "$url/register_rank/$id" -H 'Content-Type: application/json' \
  -d '{"rank": 0, "dp_rank": 0, "pp_rank": 0, "tp_rank": 0, "available_frequencies": [1980]}' > /dev/null
answer=$(curl -s -w ' %{http_code}' "$url/schedule/$id?rank=0")
case "$answer" in
  *"a name ('__import__') is not allowed"*" 400") ;;
  *) fail "code in the schedule: $answer" ;;
esac
[ ! -e "$dir/pwned" ] || fail "the schedule file's code ran"
echo "ok"
