"""Perseus end to end from Python: 2 stages x 2 replicas (4 processes, torch.distributed gloo on
CPU), each rank on its own fake GPU of one fake NVML state (the SM clock log on), under
`zeus pfo serve --scheduler point-solution-3d`. Each GPU's locked clocks follow its stage's
schedule instruction by instruction, the rounds' results reach the server, and the clocks are
unlocked after a normal exit and after SIGINT."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import List

import pytest

pytest.importorskip("torch")

from pfo_helpers import (SCHEDULE, STAGES, WORLD, all_unlocked, clock_log,  # noqa: E402
                         expected_log, rank_errors, start_pfo_server, start_rank_workers,
                         stop_pfo_server, write_gpus, write_json)

HERE = Path(__file__).parent


@pytest.fixture
def served(tmp_path, fake_nvml):
    write_gpus(fake_nvml.path, WORLD)
    schedule = write_json(tmp_path / "stages.json", [[list(e) for e in s] for s in SCHEDULE])
    server, url = start_pfo_server(tmp_path / "server.log", "--scheduler", "point-solution-3d",
                                   "--schedule", str(schedule), "--dump", str(tmp_path / "dump"))
    yield url
    stop_pfo_server(server)


def start_ranks(tmp_path: Path, url: str, tag: str, iterations: int,
                steps_per_round: int) -> List[subprocess.Popen]:
    return start_rank_workers(tmp_path, url, tag, WORLD, STAGES, iterations, steps_per_round)


def errors(tmp_path: Path, tag: str) -> str:
    return rank_errors(tmp_path, tag, WORLD)


def test_each_gpu_follows_its_stage_and_results_reach_the_server(served, tmp_path, fake_nvml):
    ranks = start_ranks(tmp_path, served, "run", iterations=6, steps_per_round=2)
    outputs = []
    for rank in ranks:
        output, _ = rank.communicate(timeout=150)
        assert rank.returncode == 0, errors(tmp_path, "run")
        outputs.append(json.loads(output.strip().splitlines()[-1]))
    assert len({o["job_id"] for o in outputs}) == 1  # rank 0's id reached every rank
    assert outputs[0]["job_id"].endswith("+dp2+pp2+tp1+PointSolution3D")
    assert all(o["rounds"] == 4 and o["failed"] == 0 for o in outputs), outputs
    assert all_unlocked(fake_nvml.path)
    for rank in range(WORLD):
        assert clock_log(fake_nvml.path, rank) == expected_log(SCHEDULE[rank % STAGES], 6), rank

    # Three rounds of two iterations were reported; the 3D wrapper merged the two replicas.
    (job,) = (tmp_path / "dump").iterdir()
    for n in range(3):
        results = json.loads((job / f"{n}.prof.json").read_text())
        assert results, n
        for result in results:
            assert len(result["iter_time"]) == 2
            for times in result["time_breakdown"]["backward"]:
                assert len(times) == 4 and all(t >= 0.008 for t in times), times
    assert not (job / "3.prof.json").exists()


def test_sigint_unlocks_every_gpu(served, tmp_path, fake_nvml):
    # One schedule for the whole run (no round barriers), so every rank is in its loop.
    ranks = start_ranks(tmp_path, served, "sigint", iterations=100000, steps_per_round=0)
    deadline = time.monotonic() + 60
    while not all("joined" in (tmp_path / f"sigint.{r}.err").read_text() for r in range(WORLD)):
        assert time.monotonic() < deadline, errors(tmp_path, "sigint")
        assert all(r.poll() is None for r in ranks), errors(tmp_path, "sigint")
        time.sleep(0.05)
    time.sleep(0.5)
    assert not all_unlocked(fake_nvml.path)
    for rank in ranks:
        rank.send_signal(signal.SIGINT)
    for rank in ranks:
        rank.communicate(timeout=30)
        assert rank.returncode != 0
    assert all_unlocked(fake_nvml.path)
    assert "KeyboardInterrupt" in errors(tmp_path, "sigint")
    for rank in range(WORLD):
        log = clock_log(fake_nvml.path, rank)
        assert len(log) > 3 and log[0] == 1980 and log[-1] == 0, (rank, log)
