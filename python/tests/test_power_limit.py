"""GlobalPowerLimitOptimizer on a real PyTorch training loop over the fake NVML."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

import zeus_cpp  # noqa: E402
from zeus_cpp.device import get_gpus  # noqa: E402
from zeus_cpp.monitor import ZeusMonitor  # noqa: E402
from zeus_cpp.optimizer.power_limit import (  # noqa: E402
    Done,
    Energy,
    GlobalPowerLimitOptimizer,
    MaxSlowdownConstraint,
    PowerLimitMeasurement,
    Profiling,
    Ready,
    Time,
    Warmup,
    ZeusCost,
)

from conftest import fake_device  # noqa: E402
from training import Job  # noqa: E402

WARMUP, PROFILE = 1, 8  # 5 limits x 9 steps fit in the 48-step first epoch


def train(fake_nvml, selector, epochs=2, profile_path=None):
    """Trains `epochs` epochs under the optimizer; returns (optimizer, per-epoch measurements)."""
    fake_nvml.write([fake_device(power_draw_w=300, min_limit_w=100, max_limit_w=300)])
    monitor = ZeusMonitor(gpu_indices=[0])  # sync_execution_with="torch": CPU run, no CUDA
    plo = GlobalPowerLimitOptimizer(
        monitor, optimum_selector=selector, wait_steps=1, warmup_steps=WARMUP,
        profile_steps=PROFILE, pl_step=50, profile_path=profile_path,
    )
    gpu = get_gpus().gpus[0]
    job = Job()
    epochs_measured = []
    for epoch in range(epochs):
        plo.on_epoch_begin()
        monitor.begin_window("epoch")
        for batch in job.batches(limit=0 if epoch == 0 else 8):
            plo.on_step_begin()
            job.step(batch, gpu.get_power_management_limit() / 1000)
            plo.on_step_end()
        epochs_measured.append(monitor.end_window("epoch"))
        plo.on_epoch_end()
    return plo, epochs_measured, job


def test_zeus_cost_profiles_every_limit_then_trains_at_the_optimum(fake_nvml):
    plo, epochs, job = train(fake_nvml, ZeusCost(eta_knob=0.5))
    assert plo.power_limits == [300, 250, 200, 150, 100]
    assert plo.state == Done(optimal_power_limit=200_000)  # mW, as upstream
    assert plo.optimal_power_limit == 200
    assert [m.power_limit for m in plo.measurements] == [300, 250, 200, 150, 100]
    # The fake's log: the maximum at start, then each candidate (300 is already set), then the
    # optimum. Nothing else touched the driver.
    assert fake_nvml.limit_log_w() == [300, 250, 200, 150, 100, 200]
    assert fake_nvml.limit_w() == 200
    # Profiled energy over PROFILE steps tracks limit x time (the real NVML path end to end).
    for m in plo.measurements:
        assert m.energy / m.time == pytest.approx(m.power_limit, rel=0.03)
    # Epoch 2 ran entirely at 200 W: its average power says so.
    assert epochs[1].gpu_energy[0] / epochs[1].time == pytest.approx(200, rel=0.03)
    assert job.accuracy() > 0.7  # it did train
    plo.restore()
    assert fake_nvml.limit_w() == 300


@pytest.mark.parametrize(
    "selector, optimum",
    [(Energy(), 100), (MaxSlowdownConstraint(factor=1.4), 150)],
    ids=["energy", "max-slowdown"],
)
def test_selectors_choose_their_optimum(fake_nvml, selector, optimum):
    plo, _, _ = train(fake_nvml, selector, epochs=1)
    assert plo.optimal_power_limit == optimum
    assert fake_nvml.limit_log_w()[-1] == optimum


def test_profile_is_saved_and_reloaded_without_profiling(fake_nvml, tmp_path):
    path = tmp_path / "profile.json"
    plo, _, _ = train(fake_nvml, ZeusCost(eta_knob=0.5), epochs=1, profile_path=path)
    saved = json.loads(path.read_text())
    assert [m["power_limit"] for m in saved["measurements"]] == [300, 250, 200, 150, 100]
    del plo
    # The next recurrence loads it: Done at once, straight to the optimum (here with Energy).
    fake_nvml.write([fake_device(power_draw_w=300, min_limit_w=100, max_limit_w=300)])
    again = GlobalPowerLimitOptimizer(ZeusMonitor(), optimum_selector=Energy(), pl_step=50,
                                      profile_path=str(path))
    assert isinstance(again.state, Done) and again.state.optimal_power_limit == 100_000
    assert again.optimal_power_limit == 100
    log = fake_nvml.limit_log_w()
    assert log[-1] == 100 and not {250, 200, 150} & set(log)  # no candidate was profiled


def test_epoch_end_during_profiling_reprofiles_that_limit(fake_nvml):
    fake_nvml.write([fake_device(power_draw_w=300, min_limit_w=100, max_limit_w=300)])
    monitor = ZeusMonitor()
    plo = GlobalPowerLimitOptimizer(monitor, wait_steps=1, warmup_steps=1, profile_steps=3,
                                    pl_step=100)
    assert plo.state == Ready(next_power_limit=300_000, steps=2)  # wait_steps + 1, as upstream
    plo.on_step_begin()  # the wait step
    assert plo.state == Ready(next_power_limit=300_000, steps=1)
    plo.on_step_begin()  # Ready -> Warmup at 300 W
    assert plo.state == Warmup(current_power_limit=300_000, steps=1)
    plo.on_step_begin()  # -> Profiling 300 W
    assert plo.state == Profiling(current_power_limit=300_000, steps=3)
    assert plo.current_power_limit == 300
    plo.on_epoch_end()   # interrupted: window cancelled, maximum back
    assert plo.state == Ready(next_power_limit=300_000, steps=1) and plo.measurements == []
    for _ in range(20):
        plo.on_step_begin()
    assert isinstance(plo.state, Done)
    assert [m.power_limit for m in plo.measurements] == [300, 200, 100]


def test_selectors_standalone_match_the_python_zeus():
    ms = [PowerLimitMeasurement(300, 3000.0, 10.0), PowerLimitMeasurement(200, 2100.0, 11.0),
          PowerLimitMeasurement(100, 1500.0, 16.0)]
    assert Energy().select(ms) == 100
    assert Time().select(ms) == 300
    assert MaxSlowdownConstraint(1.1).select(ms) == 200
    # eta 0.5, MaxPower 300: 0.5*3000+150*10=3000, 0.5*2100+150*11=2700, 0.5*1500+150*16=3150.
    assert ZeusCost(0.5).select(ms) == 200
    # MaxPower doubles with 2 GPUs: time weighs more; 3000+... -> 1500+3000=4500, 1050+3300=4350.
    assert ZeusCost(0.5, world_size=2).select(ms) == 200
    assert ZeusCost(0.0).select(ms) == 300


def test_setting_limits_without_permission_names_the_fix(fake_nvml):
    fake_nvml.write([fake_device(min_limit_w=100, max_limit_w=300)],
                    errors={"nvmlDeviceSetPowerManagementLimit": 4})  # NVML_ERROR_NO_PERMISSION
    with pytest.raises(zeus_cpp.PermissionDeniedError) as raised:
        GlobalPowerLimitOptimizer(ZeusMonitor())
    assert isinstance(raised.value, PermissionError)
    assert "CAP_SYS_ADMIN" in str(raised.value)


SIGNAL_CHILD = """
import os, signal, sys, time
from zeus_cpp.monitor import ZeusMonitor
from zeus_cpp.optimizer.power_limit import GlobalPowerLimitOptimizer
plo = GlobalPowerLimitOptimizer(ZeusMonitor(), wait_steps=1, warmup_steps=2, profile_steps=2,
                                pl_step=100)
for _ in range(20):                               # warm up and profile 300 W, then to 200 W
    plo.on_step_begin()
    if plo.current_power_limit == 200:
        break
assert plo.current_power_limit == 200, plo.current_power_limit
print("lowered", flush=True)
try:
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    time.sleep(5)
    print("no signal arrived")
except KeyboardInterrupt:
    print("KeyboardInterrupt")
"""


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_signals_restore_the_maximum(fake_nvml, signal_name):
    import subprocess
    import sys

    fake_nvml.write([fake_device(min_limit_w=100, max_limit_w=300)])
    done = subprocess.run([sys.executable, "-c", SIGNAL_CHILD, signal_name], capture_output=True,
                          text=True, timeout=60)
    assert "lowered" in done.stdout, done.stderr
    if signal_name == "SIGINT":  # Python still sees Ctrl-C, after the limit was put back
        assert done.returncode == 0 and "KeyboardInterrupt" in done.stdout, done.stderr
    else:  # the default disposition: killed by SIGTERM
        assert done.returncode == -15, (done.stdout, done.stderr)
    assert fake_nvml.limit_log_w() == [300, 200, 300]
    assert fake_nvml.limit_w() == 300
