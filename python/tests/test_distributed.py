"""Two torch.distributed ranks (gloo, CPU) whose fake GPUs draw different power."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from conftest import FakeNvml, fake_device  # noqa: E402

HERE = Path(__file__).parent


def test_ranks_all_reduce_and_end_on_the_same_limit(tmp_path):
    draws_w = [300, 120]  # rank 1's GPU draws far less: its energy alone would be different
    processes, results, fakes = [], [], []
    for rank, draw_w in enumerate(draws_w):
        fake = FakeNvml(tmp_path / f"nvml_rank{rank}.json")
        fake.write([fake_device(power_draw_w=draw_w, min_limit_w=100, max_limit_w=300)])
        fakes.append(fake)
        result = tmp_path / f"result{rank}.json"
        results.append(result)
        env = dict(os.environ, ZEUS_FAKE_NVML_STATE=str(fake.path))
        env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
        processes.append(subprocess.Popen(
            [sys.executable, str(HERE / "distributed_worker.py"), str(rank), str(len(draws_w)),
             str(tmp_path / "store"), str(result)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for process in processes:
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 0, output
    rank0, rank1 = (json.loads(r.read_text()) for r in results)

    # Every rank saw the same reduced measurements: energy summed, time the maximum.
    assert rank0["measurements"] == rank1["measurements"]
    assert rank0["gpu_count"] == rank1["gpu_count"] == 2
    for limit_w, energy_j, time_s in rank0["measurements"]:
        summed_power_w = min(300, limit_w) + min(120, limit_w)
        assert energy_j / time_s == pytest.approx(summed_power_w, rel=0.05)
    # Summed energy 420, 370, 320, 340, 348 (x step time at 300 W); zeus cost with MaxPower
    # 2 x 300 W: 510, 485, 460, 548, 696 -> 200 W is the optimum.
    assert rank0["optimal_power_limit"] == rank1["optimal_power_limit"] == 200
    for fake in fakes:
        # Maximum, the candidates, the optimum, and the maximum again when the process exited.
        assert fake.limit_log_w() == [300, 250, 200, 150, 100, 200, 300]
