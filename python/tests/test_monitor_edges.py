"""PowerMonitor and ZeusMonitor at their edges: ranges without samples, bad times and indices,
window names that are not text, a counter that restarts."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

import pytest

import zeus_cpp
from zeus_cpp.monitor import PowerMonitor, ZeusMonitor

from conftest import fake_device


def _sampled_monitor(fake_nvml) -> tuple[PowerMonitor, float]:
    fake_nvml.write([fake_device(power_draw_w=350)])
    monitor = PowerMonitor(gpu_indices=[0], update_period=0.05)
    time.sleep(0.5)
    return monitor, time.time()


def test_get_energy_is_none_outside_the_samples_and_never_extrapolates(fake_nvml):
    monitor, now = _sampled_monitor(fake_nvml)
    try:
        assert monitor.get_energy(now - 1000, now - 900) is None  # before the monitor existed
        assert monitor.get_energy(now + 1e6, now + 2e6) is None  # the future
        # Only the ~0.5 s the monitor sampled counts, not 10 s at the first sample's power.
        energy = monitor.get_energy(now - 10, now)
        assert energy is not None and 0 < energy[0] <= 350 * 0.6, energy
        everything = monitor.get_energy()
        assert everything is not None and everything[0] == pytest.approx(energy[0], rel=0.2)
    finally:
        monitor.stop()


@pytest.mark.parametrize("start, end", [(0, math.inf), (math.nan, math.nan), (-math.inf, None)])
def test_get_energy_rejects_non_finite_times(fake_nvml, start, end):
    monitor, _ = _sampled_monitor(fake_nvml)
    try:
        with pytest.raises(zeus_cpp.InvalidArgumentError, match="finite Unix time"):
            monitor.get_energy(start, end)
        with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError too
            monitor.get_energy(start, end)
        with pytest.raises(TypeError, match="start_time must be a Unix time"):
            monitor.get_energy("yesterday", None)
    finally:
        monitor.stop()


def test_reversed_range_names_the_callers_unix_times(fake_nvml):
    monitor, now = _sampled_monitor(fake_nvml)
    try:
        with pytest.raises(zeus_cpp.InvalidArgumentError) as raised:
            monitor.get_energy(now, now - 10)
        message = str(raised.value)
        assert f"start_time={now!r}" in message and f"end_time={now - 10!r}" in message, message
        assert "Unix times" in message
    finally:
        monitor.stop()


def test_huge_gpu_index_is_a_clear_zeus_error(fake_nvml):
    for make in (lambda: ZeusMonitor(gpu_indices=[2**40], sync_execution_with=None),
                 lambda: PowerMonitor(gpu_indices=[2**40])):
        with pytest.raises(zeus_cpp.NotFoundError) as raised:
            make()
        assert "index 1099511627776 does not exist" in str(raised.value)
        assert "incompatible" not in str(raised.value)
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="negative"):
        ZeusMonitor(gpu_indices=[-(2**40)], sync_execution_with=None)


def test_window_name_with_a_lone_surrogate_is_a_clear_value_error(fake_nvml):
    monitor = ZeusMonitor(sync_execution_with=None)
    for call in (monitor.begin_window, monitor.end_window, monitor.is_window_open):
        with pytest.raises(zeus_cpp.InvalidArgumentError) as raised:
            call("epoch-\udc80")
        assert isinstance(raised.value, ValueError)
        assert "lone surrogate" in str(raised.value)
        assert "incompatible" not in str(raised.value)
    monitor.begin_window("épοch ✓")  # any real text is fine
    assert monitor.end_window("épοch ✓").time >= 0


_RESET_SCRIPT = """
import time
from zeus_cpp.monitor import ZeusMonitor
monitor = ZeusMonitor(sync_execution_with=None)
monitor.begin_window("reset")
time.sleep(0.2)
m = monitor.end_window("reset")
print(m.gpu_energy[0], m.time)
"""


def test_counter_reset_mid_window_is_power_times_time_not_zero(fake_nvml):
    # Reads: the probe at open, begin_window; the end read sees the counter restarted from 0.
    fake_nvml.write([fake_device(power_draw_w=250, energy_mj=5.0e6, energy_reset_after_calls=2)])
    # A child process, so that its log level is warning (ctest runs with error).
    env = dict(os.environ, ZEUS_LOG_LEVEL="warning")
    done = subprocess.run([sys.executable, "-c", _RESET_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    energy_j, time_s = (float(x) for x in done.stdout.split())
    assert energy_j == pytest.approx(250 * time_s, rel=1e-6), done.stdout
    assert "energy counter of GPU 0 went backwards during window 'reset'" in done.stderr, done.stderr
    assert "update period" not in done.stderr, done.stderr


def test_zeus_monitor_does_not_import_torch_until_the_program_does(fake_nvml):
    # A fresh interpreter: ZeusMonitor() with the default sync_execution_with="torch" must not
    # import torch (seconds, even without a GPU); once the program imports torch, windows sync.
    child = (
        "import sys\n"
        "from zeus_cpp.monitor import ZeusMonitor\n"
        "m = ZeusMonitor()\n"
        "m.begin_window('w'); m.end_window('w')\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "import torch\n"
        "m.begin_window('x'); m.end_window('x')\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


_ZERO_SCRIPT = """
import sys
from zeus_cpp.monitor import ZeusMonitor
monitor = ZeusMonitor(gpu_indices=[0], approx_instant_energy=sys.argv[1] == "1",
                      sync_execution_with=None)
for key in ["step"] * 20 + ["eval"] * 2:
    monitor.begin_window(key)
    m = monitor.end_window(key)
    assert m.gpu_energy[0] == 0.0 and m.time > 0, m
print("ok")
"""


@pytest.mark.parametrize("approximate", [False, True])
def test_zero_energy_window_warns_once_per_window_name(fake_nvml, approximate):
    # A GPU drawing 0 W: every window reads 0 J over a non-empty time.
    fake_nvml.write([fake_device(power_draw_w=0)])
    env = dict(os.environ, ZEUS_LOG_LEVEL="warning")
    done = subprocess.run(
        [sys.executable, "-c", _ZERO_SCRIPT, "1" if approximate else "0"], env=env,
        capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "ok"
    lines = [line for line in done.stderr.splitlines() if "measured 0 J" in line]
    if approximate:
        # As upstream: with approx_instant_energy on, a 0 J reading is not warned about.
        assert lines == [], done.stderr
        return
    assert len(lines) == 2, done.stderr  # one for 'step' (20 windows), one for 'eval'
    assert "'step'" in lines[0] and "'eval'" in lines[1], lines
    assert "approx_instant_energy=True" in lines[0], lines[0]


def test_log_file_with_another_header_is_refused_and_left_untouched(fake_nvml, tmp_path):
    fake_nvml.write([fake_device()])
    foreign = tmp_path / "results.csv"
    foreign.write_text("epoch,accuracy\n1,0.93\n")
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="results.csv"):
        ZeusMonitor(log_file=foreign, sync_execution_with=None)
    assert foreign.read_text() == "epoch,accuracy\n1,0.93\n"
    # Another GPU set's log (other columns) is refused too; the same columns are appended to.
    other = tmp_path / "two_gpus.csv"
    other.write_text("start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy\n1.0,w,1.0,2.0,3.0\n")
    with pytest.raises(zeus_cpp.InvalidArgumentError):
        ZeusMonitor(log_file=other, sync_execution_with=None)
    assert other.read_text().endswith("1.0,w,1.0,2.0,3.0\n")
    same = tmp_path / "same.csv"
    same.write_text("start_time,window_name,elapsed_time,gpu0_energy\n1.0,old,1.0,2.0\n")
    monitor = ZeusMonitor(log_file=same, sync_execution_with=None)
    monitor.begin_window("new")
    monitor.end_window("new")
    rows = same.read_text().splitlines()
    assert rows[:2] == ["start_time,window_name,elapsed_time,gpu0_energy", "1.0,old,1.0,2.0"]
    assert len(rows) == 3 and rows[2].split(",")[1] == "new", rows
