"""ReplayZeusMonitor replays a ZeusMonitor log_file, its own and the bundled real ones."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import zeus_cpp
from zeus_cpp.monitor import ZeusMonitor
from zeus_cpp.utils.testing import ReplayZeusMonitor

from conftest import fake_device

LOGS = Path(os.environ.get("ZEUS_SOURCE_DIR", ".")) / "testing" / "data" / "profile_logs"


def test_replays_what_a_real_monitor_logged(fake_nvml, tmp_path):
    fake_nvml.write([fake_device(power_draw_w=200)] * 2)
    log = tmp_path / "run.csv"
    real = ZeusMonitor(log_file=log, sync_execution_with=None)
    measured = []
    for name in ("warmup", "step", "step"):
        real.begin_window(name)
        measured.append(real.end_window(name))
    replay = ReplayZeusMonitor(log_file=log)
    assert replay.gpu_indices == [0, 1]
    for name, expected in zip(("warmup", "step", "step"), measured):
        replay.begin_window(name)
        replay.begin_window("cancelled")
        replay.end_window("cancelled", cancel=True)  # consumes no row
        got = replay.end_window(name)
        assert got.time == pytest.approx(expected.time, rel=1e-12)
        assert got.gpu_energy == pytest.approx(expected.gpu_energy, rel=1e-12)
    replay.begin_window("extra")
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="no more windows"):
        replay.end_window("extra")


def test_bundled_profile_log_replays_with_four_gpus():
    replay = ReplayZeusMonitor(log_file=LOGS / "A40+resnet18+gpu0,1,2,3.csv")
    assert replay.gpu_indices == [0, 1, 2, 3]
    replay.begin_window("__GlobalPowerLimitOptimizer_300")
    m = replay.end_window("__GlobalPowerLimitOptimizer_300")
    assert m.time == pytest.approx(33.27751154080033)
    assert m.gpu_energy[3] == pytest.approx(4102.665999993682)
    replay.begin_window("something_else")
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="logged window '__GlobalPowerLimitOptimizer_275'"):
        replay.end_window("something_else")


def test_bad_logs_and_calls_are_clear_errors(tmp_path):
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="log_file is required"):
        ReplayZeusMonitor()
    with pytest.raises(zeus_cpp.NotFoundError):
        ReplayZeusMonitor(log_file=tmp_path / "missing.csv")
    other = tmp_path / "other.csv"
    other.write_text("step,loss\n1,0.5\n")
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="not a ZeusMonitor log"):
        ReplayZeusMonitor(log_file=other)
    log = tmp_path / "log.csv"
    log.write_text("start_time,window_name,elapsed_time,gpu0_energy\n1.0,w,2.0\n1.0,w,x,3\n")
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="do not match"):
        ReplayZeusMonitor(gpu_indices=[1], log_file=log)
    replay = ReplayZeusMonitor(log_file=log)
    with pytest.raises(zeus_cpp.NotFoundError):
        replay.end_window("w")
    replay.begin_window("w")
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="already open"):
        replay.begin_window("w")
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="line 2: 3 fields, expected 4"):
        replay.end_window("w")
    replay.begin_window("w")
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="line 3: a time or energy"):
        replay.end_window("w")
