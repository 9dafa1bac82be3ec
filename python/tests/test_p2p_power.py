"""measure_p2p_power with two torch.distributed ranks (gloo, CPU), each on its own fake GPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from conftest import FakeNvml, fake_device  # noqa: E402
from zeus_cpp import InvalidArgumentError  # noqa: E402

HERE = Path(__file__).parent


def test_the_receivers_blocking_power_reaches_both_ranks(tmp_path):
    draws_w = [83.64, 300.0]  # the receiver (rank 0) draws the planner's A100 figure
    processes = []
    for rank, draw_w in enumerate(draws_w):
        fake = FakeNvml(tmp_path / f"nvml_rank{rank}.json")
        fake.write([fake_device(power_draw_w=draw_w)])
        env = dict(os.environ, ZEUS_FAKE_NVML_STATE=str(fake.path))
        processes.append(subprocess.Popen(
            [sys.executable, str(HERE / "p2p_worker.py"), str(rank), "2", str(tmp_path / "store"), "1.0"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    powers = []
    for process in processes:
        output, errors = process.communicate(timeout=120)
        assert process.returncode == 0, errors
        powers.append(float(output.strip().splitlines()[-1]))
    assert powers[0] == powers[1]
    assert powers[0] == pytest.approx(83.64, rel=0.03)


def test_without_torch_distributed_it_names_the_fix():
    from zeus_cpp.optimizer.pipeline_frequency import measure_p2p_power

    with pytest.raises(InvalidArgumentError, match="init_process_group"):
        measure_p2p_power(wait_s=0.1)
