"""Thermally stable energy measurement of a workload: `measure` and `TrialResult` (as
`zeus.profile`).

    monitor = ZeusMonitor(gpu_indices=[local_rank])
    trial = measure(step, monitor, measurement_duration=5.0, cooldown_duration=5.0,
                    warmup_settle_duration=10.0)
    print(trial.energy_per_iter, trial.time_per_iter)

One trial: time the workload (warm-up iterations, then calibration iterations, synchronised),
idle for the cool-down, warm up (a fixed count, or for `warmup_settle_duration` seconds so power
and temperature settle), then measure ceil(measurement_duration / iteration time) iterations in
one window. With torch.distributed initialised, every rank runs the workload on its GPUs and all
ranks get the same result: energy summed over ranks, time the maximum, temperatures the mean.
The counting and combining rules are the C++ core's (zeus/profile_trial.h).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple

from zeus_cpp import _zeus_cpp
from zeus_cpp.device import get_gpus
from zeus_cpp.monitor.energy import ZeusMonitor
from zeus_cpp.utils.framework import is_distributed

_WINDOW = "__zeus_profile_run_trial"


@dataclass
class TrialResult:
    """What one trial measured (upstream's fields).

    Attributes:
        energy_per_iter: joules per iteration (GPU energy, summed over ranks).
        time_per_iter: seconds per iteration (the slowest rank).
        total_energy: joules of the measured window.
        total_time: seconds of the measured window.
        iterations: iterations in the window.
        temperature_before: mean GPU temperature (C) before the window.
        temperature_after: mean GPU temperature (C) after it.
    """

    energy_per_iter: float
    time_per_iter: float
    total_energy: float
    total_time: float
    iterations: int
    temperature_before: float
    temperature_after: float


def _gather(values: Tuple[float, ...]) -> List[Tuple[float, ...]]:
    """Every rank's `values` (this rank's only, when not distributed)."""
    if not is_distributed():
        return [values]
    dist = sys.modules["torch"].distributed
    gathered: List[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, values)
    return [tuple(v) for v in gathered]


def _mean_temperature(gpus: Any, indices: List[int]) -> float:
    if not indices:
        raise ValueError("the ZeusMonitor measures no GPU: measure needs at least one")
    return sum(gpus.get_gpu_temperature(i) for i in indices) / len(indices)


def _number(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {type(value).__name__}")
    return float(value)


def measure(
    target_function: Callable[[], Any],
    zeus_monitor: ZeusMonitor,
    measurement_duration: float,
    cooldown_duration: float,
    num_warmup_iterations: int = 10,
    num_calibration_iterations: int = 100,
    warmup_settle_duration: Optional[float] = None,
) -> TrialResult:
    """Runs one measurement trial of `target_function` (called with no arguments).

    Args:
        target_function: one iteration of the workload.
        zeus_monitor: the ZeusMonitor of this rank's GPUs.
        measurement_duration: target length of the measured window (seconds).
        cooldown_duration: idle time before warming up (seconds).
        num_warmup_iterations: warm-up iterations (before calibration, and before the window
            unless warmup_settle_duration is given).
        num_calibration_iterations: iterations timed to learn the iteration time.
        warmup_settle_duration: warm up for this long before the window instead of
            num_warmup_iterations, so power and temperature settle.

    Raises:
        InvalidArgumentError: a bad duration or count (nothing is run).
        TypeError: arguments of the wrong type.
    """
    if not callable(target_function):
        raise TypeError("target_function must be callable")
    if not isinstance(zeus_monitor, ZeusMonitor):
        raise TypeError("zeus_monitor must be a zeus_cpp.monitor.ZeusMonitor")
    measurement_s = _number("measurement_duration", measurement_duration)
    cooldown_s = _number("cooldown_duration", cooldown_duration)
    settle_s = None if warmup_settle_duration is None else _number(
        "warmup_settle_duration", warmup_settle_duration)
    warmup, calibration = int(num_warmup_iterations), int(num_calibration_iterations)
    # Checks every parameter before anything runs.
    _zeus_cpp.trial_plan(measurement_s, cooldown_s, warmup, calibration, settle_s, 0.0)
    gpus = get_gpus()
    indices = list(zeus_monitor.gpu_indices)
    _mean_temperature(gpus, indices)  # fails now, not after the workload, without GPUs

    # Calibration: the iteration time, the slowest rank's.
    for _ in range(warmup):
        target_function()
    zeus_monitor._synchronize()
    start = time.monotonic()
    for _ in range(calibration):
        target_function()
    zeus_monitor._synchronize()
    iteration_s = max(v[0] for v in _gather(((time.monotonic() - start) / calibration,)))
    warmup_count, iterations = _zeus_cpp.trial_plan(
        measurement_s, cooldown_s, warmup, calibration, settle_s, iteration_s)

    if cooldown_s > 0:
        time.sleep(cooldown_s)
    for _ in range(warmup_count):
        target_function()
    zeus_monitor._synchronize()
    temperature_before = _mean_temperature(gpus, indices)
    zeus_monitor.begin_window(_WINDOW, sync_execution=False)
    for _ in range(iterations):
        target_function()
    window = zeus_monitor.end_window(_WINDOW)
    temperature_after = _mean_temperature(gpus, indices)

    ranks = _gather((sum(window.gpu_energy.values()), window.time, temperature_before,
                     temperature_after))
    return TrialResult(*_zeus_cpp.combine_ranks(ranks, iterations))


__all__ = ["TrialResult", "measure"]
