"""Perseus's straggler step from Python: 2 stages x 2 pipelines (4 gloo processes on CPU, each
on its own fake GPU) under `zeus pfo serve --scheduler frontier`, the frontier `zeus pfo plan`
makes from a stage profile written here. The operator reports pipeline 1 straggling at
T' = 1.06 x T_min: pipeline 0's GPUs switch to exactly the plan `zeus pfo choose` picks for T',
pipeline 1's keep the fastest plan, and every clock is unlocked at exit."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("torch")

from pfo_helpers import (CLOCKS_MHZ, all_unlocked, clock_log, rank_errors,  # noqa: E402
                         start_pfo_server, start_rank_workers, stop_pfo_server, write_gpus)

STAGES, WORLD, MICROBATCHES = 2, 4, 4


def zeus(*args: str) -> str:
    binary = Path(os.environ["ZEUS_BIN"]) / "zeus"
    return subprocess.run([str(binary), *args], check=True, capture_output=True,
                          text=True).stdout


def write_profile(path: Path) -> None:
    """Times ~ 1 / clock (the worker's 4 and 8 ms at the top), power ~ 100 W + 300 W x f^3."""
    rows = ["stage,instruction,frequency,time,energy"]
    for stage in range(STAGES):
        for name, ms in (("forward", 4), ("backward", 8)):
            for mhz in CLOCKS_MHZ[:-1]:
                t = ms * 1e-3 * CLOCKS_MHZ[0] / mhz
                watts = 100 + 300 * (mhz / CLOCKS_MHZ[0]) ** 3
                rows.append(f"{stage},{name},{mhz},{t:.7f},{watts * t:.7f}")
    path.write_text("\n".join(rows) + "\n")


@pytest.fixture
def planned(tmp_path, fake_nvml):
    """The frontier of the written profile; its fastest plan and `zeus pfo choose`'s plan for
    T' = 1.06 x T_min."""
    write_gpus(fake_nvml.path, WORLD)
    write_profile(tmp_path / "profile.csv")
    plans = tmp_path / "plans"
    zeus("pfo", "plan", "--profile", str(tmp_path / "profile.csv"), "--stages", str(STAGES),
         "--microbatches", str(MICROBATCHES), "--p2p-power", "50", "--out", str(plans))
    zeus("pfo", "export-plan", "--plans", str(plans), "--fastest", "--out",
         str(tmp_path / "fastest.json"))
    fastest = json.loads((tmp_path / "fastest.json").read_text())
    t_prime = 1.06 * fastest["time"]
    zeus("pfo", "choose", "--plans", str(plans), "--straggler-time", repr(t_prime), "--out",
         str(tmp_path / "chosen.json"))
    chosen = json.loads((tmp_path / "chosen.json").read_text())
    return plans, fastest, t_prime, chosen


def run_job(tmp_path, plans, on_joined, slow=None):
    """Four ranks under --scheduler frontier; on_joined(url, job) once all joined. /info's line."""
    server, url = start_pfo_server(tmp_path / "server.log", "--scheduler", "frontier",
                                   "--plans", str(plans))
    try:
        ranks = start_rank_workers(tmp_path, url, "run", WORLD, STAGES, iterations=20,
                                   steps_per_round=5, slow=slow)
        deadline = time.monotonic() + 60
        while not all("joined" in (tmp_path / f"run.{r}.err").read_text() for r in range(WORLD)):
            assert time.monotonic() < deadline, rank_errors(tmp_path, "run", WORLD)
            time.sleep(0.02)
        job = (tmp_path / "run.0.err").read_text().split("joined ", 1)[1].split()[0]
        on_joined(url, job)
        for rank in ranks:
            rank.communicate(timeout=150)
            assert rank.returncode == 0, rank_errors(tmp_path, "run", WORLD)
        with urllib.request.urlopen(f"{url}/info", timeout=10) as answer:
            jobs = json.loads(answer.read())["jobs"]
    finally:
        stop_pfo_server(server)
    (info,) = [j for j in jobs if j["job_id"] == job]
    return info["plan"]


def check_pipelines(nvml_path, fastest, switched_to):
    """Pipeline 1 (the straggler) only ever ran the fastest plan; pipeline 0 ends on
    `switched_to` (clocks per stage) after using some clock of it the fastest plan lacks."""
    assert all_unlocked(nvml_path)
    for rank in range(WORLD):
        stage, pipeline = rank % STAGES, rank // STAGES
        log = clock_log(nvml_path, rank)
        fastest_clocks = set(fastest["frequencies"][stage]) | {CLOCKS_MHZ[0], 0}
        if pipeline == 1:
            assert set(log) <= fastest_clocks, (rank, log)
        else:
            wanted = switched_to[stage]
            assert set(wanted) - fastest_clocks, wanted  # the switch is visible
            assert (set(wanted) - fastest_clocks) <= set(log), (rank, log, wanted)
            tail = [m for m in log if m != 0][-len(set(wanted)):]
            assert set(tail) <= set(wanted), (rank, log, wanted)


def test_the_operator_straggler_switches_the_other_pipeline(tmp_path, fake_nvml, planned):
    plans, fastest, t_prime, chosen = planned

    def report(url, job):
        body = json.dumps({"iteration_time_s": t_prime, "pipeline": 1}).encode()
        request = urllib.request.Request(f"{url}/straggler/{job}", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200

    line = run_job(tmp_path, plans, report)
    assert "(operator, pipeline 1)" in line and f"plan {chosen['plan']}" in line, line
    check_pipelines(fake_nvml.path, fastest,
                    [[mhz for _, mhz in stage] for stage in chosen["frequencies"]])


def test_a_measured_straggler_switches_the_other_pipeline(tmp_path, fake_nvml, planned):
    # Pipeline 1's instructions take 6 x longer from iteration 5 (round 1) on: the server
    # measures it from the reported results and, from round 2, serves pipeline 0 the combined
    # policy's pick for T' ~ 6 x T_min, one global clock (past every plan, the cheapest option).
    plans, fastest, _, _ = planned
    line = run_job(tmp_path, plans, lambda url, job: None, slow=(5, 6.0))
    assert "(measured, pipeline 1): global clock" in line, line
    mhz = int(line.split("global clock ", 1)[1].split()[0])
    assert all_unlocked(fake_nvml.path)
    for stage in range(STAGES):
        switched, straggler = clock_log(fake_nvml.path, stage), clock_log(fake_nvml.path, 2 + stage)
        fastest_clocks = set(fastest["frequencies"][stage]) | {CLOCKS_MHZ[0], 0}
        assert set(straggler) <= fastest_clocks, straggler
        # One clock for every instruction: pipeline 0's log ends on the global clock; where the
        # fastest plan changes clocks within an iteration, pipeline 0 stops changing them at the
        # switch (the controller skips unchanged ones) while the straggler goes on all 20
        # iterations; where it runs one clock, the straggler never sees the global one.
        assert switched[-2:] == [mhz, 0], switched
        if len(set(fastest["frequencies"][stage])) > 1:
            assert len(switched) < 0.75 * len(straggler), (switched, straggler)
        else:
            assert mhz not in straggler, (switched, straggler)
