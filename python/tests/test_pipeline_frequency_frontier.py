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


def test_the_operator_straggler_switches_the_other_pipeline(tmp_path, fake_nvml):
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
    chosen_doc = json.loads((tmp_path / "chosen.json").read_text())
    chosen = [[mhz for _, mhz in stage] for stage in chosen_doc["frequencies"]]
    assert chosen != fastest["frequencies"]

    server, url = start_pfo_server(tmp_path / "server.log", "--scheduler", "frontier",
                                   "--plans", str(plans))
    try:
        ranks = start_rank_workers(tmp_path, url, "run", WORLD, STAGES, iterations=20,
                                   steps_per_round=5)
        deadline = time.monotonic() + 60
        while not all("joined" in (tmp_path / f"run.{r}.err").read_text() for r in range(WORLD)):
            assert time.monotonic() < deadline, rank_errors(tmp_path, "run", WORLD)
            time.sleep(0.02)
        job = (tmp_path / "run.0.err").read_text().split("joined ", 1)[1].split()[0]
        body = json.dumps({"iteration_time_s": t_prime, "pipeline": 1}).encode()
        request = urllib.request.Request(f"{url}/straggler/{job}", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200
        for rank in ranks:
            rank.communicate(timeout=150)
            assert rank.returncode == 0, rank_errors(tmp_path, "run", WORLD)
        with urllib.request.urlopen(f"{url}/info", timeout=10) as answer:
            jobs = json.loads(answer.read())["jobs"]
    finally:
        stop_pfo_server(server)
    (info,) = [j for j in jobs if j["job_id"] == job]
    assert "(operator, pipeline 1)" in info["plan"] and f"plan {chosen_doc['plan']}" in info["plan"]
    assert all_unlocked(fake_nvml.path)
    for rank in range(WORLD):
        stage, pipeline = rank % STAGES, rank // STAGES
        log = clock_log(fake_nvml.path, rank)
        fastest_clocks = set(fastest["frequencies"][stage]) | {CLOCKS_MHZ[0], 0}
        only_chosen = set(chosen[stage]) - fastest_clocks
        if pipeline == 1:  # the straggler keeps the fastest plan
            assert set(log) <= fastest_clocks, (rank, log)
        else:  # the others run the chosen plan once the operator spoke
            assert only_chosen and only_chosen <= set(log), (rank, log, chosen[stage])
            tail = [m for m in log[:-1] if m != 0][-len(set(chosen[stage])):]
            assert set(tail) <= set(chosen[stage]), (rank, log, chosen[stage])
