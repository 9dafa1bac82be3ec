"""zeus_cpp.profile.profile_parameters on the fake NVML: a workload whose energy changes every
iteration gives scattered energies in one-iteration windows and repeatable ones in windows of
many iterations, so the sweep marks the short window invalid and recommends the longer one."""

from __future__ import annotations

import json
import time

import pytest

import zeus_cpp
from zeus_cpp.device import get_gpus
from zeus_cpp.monitor import ZeusMonitor
from zeus_cpp.profile import (SweepReport, SweepResult, TrialResult, profile_cooldown_duration,
                              profile_measurement_duration, profile_parameters)

ENERGY_CYCLE_J = (0.5, 6.5, 3.5)


class CyclingWorkload:
    """One 10 ms iteration that uses 0.5, 6.5, 3.5 J on successive calls: it adds that to the
    fake GPU's energy counter (drawing 0 W otherwise), so the energy of a window does not
    depend on how long the loaded test machine takes. The fake notices a rewritten state file
    at its next call, so each change is followed by a reading."""

    def __init__(self, fake_nvml) -> None:
        self.path = fake_nvml.path
        self.calls = 0
        self.energy_j = 0.0
        self.gpus = get_gpus()

    def __call__(self) -> None:
        self.energy_j += ENERGY_CYCLE_J[self.calls % len(ENERGY_CYCLE_J)]
        self.calls += 1
        device = {"power_draw_mw": 0, "energy_mj": self.energy_j * 1000,
                  "energy_time_ns": time.time_ns()}
        self.path.write_text(json.dumps({"devices": [device]}))
        self.gpus.get_gpu_temperature(0)
        time.sleep(0.01)


def test_short_windows_scatter_and_the_shortest_valid_one_is_recommended(fake_nvml):
    monitor = ZeusMonitor(sync_execution_with=None)
    workload = CyclingWorkload(fake_nvml)
    measurement_report, cooldown_report = profile_parameters(
        workload, monitor, measurement_duration_search_range=[0.3, 0.005],
        cooldown_duration_search_range=[0.02, 0.01], num_trials=4, num_warmup_trials=1,
        trial_stddev_threshold=1.0, num_warmup_iterations=1, num_calibration_iterations=5)

    assert isinstance(measurement_report, SweepReport)
    assert measurement_report.sweep_param == ("measurement_duration", [0.3, 0.005])
    assert measurement_report.fixed_param == ("cooldown_duration", 0.02)  # the range's maximum
    long_window, one_iteration = measurement_report.entries
    assert isinstance(long_window, SweepResult)
    assert all(isinstance(t, TrialResult) for t in long_window.trials)
    assert len(long_window.trials) == 4 and len(one_iteration.trials) == 4
    assert all(t.iterations == 1 for t in one_iteration.trials)
    assert all(t.iterations >= 5 for t in long_window.trials)  # 0.3 s of ~10 ms iterations
    # One iteration uses 0.5, 6.5 or 3.5 J, depending on where the cycle stands.
    energies = [round(t.energy_per_iter, 3) for t in one_iteration.trials]
    assert set(energies) <= set(ENERGY_CYCLE_J) and len(set(energies)) >= 2, energies
    assert one_iteration.energy_std > 2.0 and not one_iteration.is_valid
    # A window of many iterations averages the cycle (3.5 J), whatever its phase.
    assert long_window.energy_std < 1.0 and long_window.is_valid
    assert long_window.energy_mean == pytest.approx(3.5, abs=1.0)
    assert long_window.cooldown_duration == 0.02
    assert measurement_report.shortest_valid() == 0.3

    assert cooldown_report.sweep_param == ("cooldown_duration", [0.02, 0.01])
    assert cooldown_report.fixed_param == ("measurement_duration", 0.3)
    assert all(e.is_valid for e in cooldown_report.entries)
    assert cooldown_report.shortest_valid() == 0.01
    text = str(measurement_report)
    assert "Sweep measurement_duration (fixed cooldown_duration=0.0 s)" in text
    assert "[VALID]" in text and "[INVALID]" in text

    # Statistics over the trials, as upstream (sample standard deviation).
    energies = [t.energy_per_iter for t in one_iteration.trials]
    mean = sum(energies) / 4
    assert one_iteration.energy_mean == pytest.approx(mean)
    assert one_iteration.energy_std == pytest.approx(
        (sum((e - mean) ** 2 for e in energies) / 3) ** 0.5)
    assert one_iteration.avg_total_energy == pytest.approx(
        sum(t.total_energy for t in one_iteration.trials) / 4)


def test_single_sweeps_keep_the_other_duration_fixed(fake_nvml):
    monitor = ZeusMonitor(sync_execution_with=None)
    workload = CyclingWorkload(fake_nvml)
    report = profile_measurement_duration(
        workload, monitor, measurement_duration_search_range=[0.005], cooldown_duration=0.05,
        num_trials=2, num_warmup_trials=0, trial_stddev_threshold=100.0,
        num_warmup_iterations=0, num_calibration_iterations=3, iteration_duration=0.01)
    assert workload.calls == 2  # no calibration (iteration_duration given), 2 one-iteration trials
    assert report.entries[0].is_valid and report.shortest_valid() == 0.005
    report = profile_cooldown_duration(
        workload, monitor, cooldown_duration_search_range=[0.1], measurement_duration=0.005,
        num_trials=1, num_warmup_trials=0, trial_stddev_threshold=0.0,
        num_warmup_iterations=0, num_calibration_iterations=3)
    assert workload.calls == 2 + 3 + 1
    assert report.entries[0].energy_std == 0.0
    assert not report.entries[0].is_valid  # 0 < 0 is false: a zero threshold accepts nothing
    assert report.shortest_valid() is None


@pytest.mark.parametrize("kwargs, message", [
    ({"measurement_duration_search_range": [1.0, -2.0]}, "measurement_duration_search_range"),
    ({"cooldown_duration_search_range": [0.0]}, "cooldown_duration_search_range"),
    ({"num_trials": 0}, "num_trials"),
    ({"num_warmup_trials": -1}, "num_warmup_trials"),
    ({"trial_stddev_threshold": -0.1}, "trial_stddev_threshold"),
    ({"num_calibration_iterations": 0}, "num_calibration_iterations"),
])
def test_bad_parameters_run_nothing(fake_nvml, kwargs, message):
    monitor = ZeusMonitor(sync_execution_with=None)
    calls = []
    with pytest.raises(zeus_cpp.InvalidArgumentError, match=message):
        profile_parameters(lambda: calls.append(1), monitor, **kwargs)
    assert calls == []
    with pytest.raises(TypeError):
        profile_parameters(lambda: None, monitor, trial_stddev_threshold="0.1")
