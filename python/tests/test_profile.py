"""zeus_cpp.profile.measure on the fake NVML: upstream's parameters and TrialResult, and the
warm-up settle rule on a GPU whose power drifts down while it warms up, then settles."""

from __future__ import annotations

import json
import time

import pytest

import zeus_cpp
from zeus_cpp.monitor import ZeusMonitor
from zeus_cpp.profile import TrialResult, measure

from conftest import fake_device

SETTLED_W = 300


class DriftingWorkload:
    """One 10 ms iteration; the fake GPU draws 500 W at the first call, drifting linearly to
    300 W over the first 25 calls (in 20 W steps) while its temperature rises from 40 to 60 C,
    then stays. Counting calls, not seconds, keeps the test independent of the machine's load."""

    def __init__(self, fake_nvml) -> None:
        self.path = fake_nvml.path
        self.written = None
        self.calls = 0

    def __call__(self) -> None:
        self.calls += 1
        left = max(0.0, 1.0 - (self.calls - 1) / 25)
        watts = SETTLED_W + 20 * round(10 * left)
        if watts != self.written:
            # No energy keys: the fake's counter carries over at the old power.
            device = {"power_draw_mw": watts * 1000, "temperature_c": 60 - (watts - 300) // 10}
            self.path.write_text(json.dumps({"devices": [device]}))
            self.written = watts
        time.sleep(0.01)


def test_settle_duration_waits_for_the_drift_to_end(fake_nvml):
    fake_nvml.write([fake_device(power_draw_w=500, temperature_c=40)])
    monitor = ZeusMonitor(sync_execution_with=None)
    settled = measure(DriftingWorkload(fake_nvml), monitor, measurement_duration=0.3,
                      cooldown_duration=0.0, num_warmup_iterations=1,
                      num_calibration_iterations=5, warmup_settle_duration=1.0)
    assert isinstance(settled, TrialResult)
    assert settled.energy_per_iter / settled.time_per_iter == pytest.approx(SETTLED_W, rel=0.03)
    assert settled.temperature_before == 60 and settled.temperature_after == 60
    assert settled.iterations >= 1
    assert settled.total_energy == pytest.approx(settled.energy_per_iter * settled.iterations)
    assert settled.total_time == pytest.approx(settled.time_per_iter * settled.iterations)

    # Without the settle rule the window opens while the power is still drifting down.
    fake_nvml.write([fake_device(power_draw_w=500, temperature_c=40)])
    drifting = measure(DriftingWorkload(fake_nvml), monitor, measurement_duration=0.3,
                       cooldown_duration=0.0, num_warmup_iterations=1,
                       num_calibration_iterations=5)
    assert drifting.energy_per_iter / drifting.time_per_iter > SETTLED_W * 1.1
    assert drifting.temperature_before < 60


def test_warmup_count_cooldown_and_iterations(fake_nvml):
    monitor = ZeusMonitor(sync_execution_with=None)
    calls = []
    start = time.monotonic()
    result = measure(lambda: (calls.append(time.monotonic()), time.sleep(0.005)), monitor,
                     measurement_duration=0.1, cooldown_duration=0.2, num_warmup_iterations=3,
                     num_calibration_iterations=4)
    # 3 warm-up + 4 calibration, the cool-down, 3 warm-up again, then the window.
    assert len(calls) == 3 + 4 + 3 + result.iterations
    gap = calls[7] - calls[6]
    assert gap >= 0.2  # the cool-down sits between calibration and the second warm-up
    assert 1 <= result.iterations <= 21  # ceil(0.1 s / an iteration of at least 5 ms)
    assert result.energy_per_iter == pytest.approx(350 * result.time_per_iter, rel=0.05)
    assert time.monotonic() - start >= 0.3


@pytest.mark.parametrize("kwargs, message", [
    ({"measurement_duration": 0}, "measurement_duration"),
    ({"cooldown_duration": -1}, "cooldown_duration"),
    ({"warmup_settle_duration": -0.5}, "warmup_settle_duration must be non-negative"),
    ({"num_calibration_iterations": 0}, "num_calibration_iterations"),
])
def test_bad_parameters_run_nothing(fake_nvml, kwargs, message):
    monitor = ZeusMonitor(sync_execution_with=None)
    calls = []
    arguments = {"measurement_duration": 0.1, "cooldown_duration": 0.0}
    arguments.update(kwargs)
    with pytest.raises(zeus_cpp.InvalidArgumentError, match=message):
        measure(lambda: calls.append(1), monitor, **arguments)
    assert calls == []
    with pytest.raises(TypeError):
        measure(lambda: None, monitor, measurement_duration="1", cooldown_duration=0)
