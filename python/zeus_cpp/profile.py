"""Thermally stable energy measurement of a workload (as `zeus.profile`): `measure` runs one
trial; `profile_parameters` (and `profile_measurement_duration`, `profile_cooldown_duration`)
sweep the durations to find the shortest that give repeatable energy.

    monitor = ZeusMonitor(gpu_indices=[local_rank])
    trial = measure(step, monitor, measurement_duration=5.0, cooldown_duration=5.0,
                    warmup_settle_duration=10.0)
    print(trial.energy_per_iter, trial.time_per_iter)

One trial: time the workload (warm-up iterations, then calibration iterations, synchronised),
idle for the cool-down, warm up (a fixed count, or for `warmup_settle_duration` seconds so power
and temperature settle), then measure ceil(measurement_duration / iteration time) iterations in
one window. With torch.distributed initialised, every rank runs the workload on its GPUs and all
ranks get the same result: energy summed over ranks, time the maximum, temperatures the mean.
The counting and combining rules are the C++ core's (zeus/monitor/profile_trial.h).

A sweep runs `num_trials` trials per value of one duration while the other stays at the maximum
of its search range; a value is valid when the sample standard deviation of energy_per_iter over
its trials is below `trial_stddev_threshold` joules (absolute, as upstream; zeus/monitor/profile_sweep.h).

    measurement_report, cooldown_report = profile_parameters(step, monitor)
    print(measurement_report.shortest_valid(), cooldown_report.shortest_valid())
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple

from zeus_cpp import _zeus_cpp
from zeus_cpp.device import get_gpus
from zeus_cpp.monitor.energy import ZeusMonitor
from zeus_cpp.utils.framework import torch_is_distributed

_WINDOW = "__zeus_profile_run_trial"
logger = logging.getLogger(__name__)


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


@dataclass
class SweepResult:
    """One swept value's trials (upstream's fields).

    Attributes:
        measurement_duration: the measurement duration of these trials (seconds).
        cooldown_duration: their cool-down (seconds).
        trials: the trials.
        energy_mean: mean energy_per_iter (J).
        energy_std: sample standard deviation of energy_per_iter (J; 0 for one trial).
        avg_temperature_before, avg_temperature_after: mean temperatures (C).
        avg_total_time: mean window length (s).
        avg_total_energy: mean window energy (J).
        is_valid: energy_std < trial_stddev_threshold.
    """

    measurement_duration: float
    cooldown_duration: float
    trials: List[TrialResult]
    energy_mean: float
    energy_std: float
    avg_temperature_before: float
    avg_temperature_after: float
    avg_total_time: float
    avg_total_energy: float
    is_valid: bool

    def __str__(self) -> str:
        return (f"measurement={self.measurement_duration:.1f} s  "
                f"cooldown={self.cooldown_duration:.1f} s  {_stats_text(self)}")


def _stats_text(entry: SweepResult) -> str:
    return (f"mean={entry.energy_mean:.4f} J  std={entry.energy_std:.4f} J  "
            f"temp_before={entry.avg_temperature_before:.1f} \u00b0C  "
            f"temp_after={entry.avg_temperature_after:.1f} \u00b0C  "
            f"[{'VALID' if entry.is_valid else 'INVALID'}]")


@dataclass
class SweepReport:
    """A sweep of one duration (upstream's fields).

    Attributes:
        sweep_param: (swept parameter's name, its values).
        fixed_param: (the other parameter's name, its value).
        entries: one SweepResult per swept value, in order.
    """

    sweep_param: Tuple[str, List[float]]
    fixed_param: Tuple[str, float]
    entries: List[SweepResult]

    def shortest_valid(self) -> Optional[float]:
        """The smallest swept value whose entry is valid (None when none is): the recommended
        setting of the swept parameter."""
        name = self.sweep_param[0]
        return _zeus_cpp.shortest_valid([(getattr(e, name), e.is_valid) for e in self.entries])

    def __str__(self) -> str:
        name = self.sweep_param[0]
        fixed_name, fixed_value = self.fixed_param
        prefixes = [f"{name}={getattr(e, name):.1f} s" for e in self.entries]
        width = max((len(p) for p in prefixes), default=0)
        lines = [f"Sweep {name} (fixed {fixed_name}={fixed_value:.1f} s):"]
        lines += [f"  {p:<{width}}  {_stats_text(e)}" for p, e in zip(prefixes, self.entries)]
        return "\n".join(lines)


def _gather(values: Tuple[float, ...]) -> List[Tuple[float, ...]]:
    """Every rank's `values` (this rank's only, when not distributed)."""
    if not torch_is_distributed():
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



def _is_rank_zero() -> bool:
    return not torch_is_distributed() or sys.modules["torch"].distributed.get_rank() == 0


def _calibrate(target_function: Callable[[], Any], zeus_monitor: ZeusMonitor, warmup: int,
               calibration: int) -> float:
    """Seconds per iteration (the slowest rank's), after `warmup` iterations."""
    for _ in range(warmup):
        target_function()
    zeus_monitor._synchronize()
    start = time.monotonic()
    for _ in range(calibration):
        target_function()
    zeus_monitor._synchronize()
    return max(v[0] for v in _gather(((time.monotonic() - start) / calibration,)))


def _run_trial(target_function: Callable[[], Any], zeus_monitor: ZeusMonitor,
               cooldown_s: float, warmup_count: int, iterations: int) -> TrialResult:
    """Cool-down, `warmup_count` iterations, then `iterations` in the measured window."""
    gpus = get_gpus()
    indices = list(zeus_monitor.gpu_indices)
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


def _check_target(target_function: Any, zeus_monitor: Any) -> None:
    if not callable(target_function):
        raise TypeError("target_function must be callable")
    if not isinstance(zeus_monitor, ZeusMonitor):
        raise TypeError("zeus_monitor must be a zeus_cpp.monitor.ZeusMonitor")
    # Fails now, not after the workload, without GPUs.
    _mean_temperature(get_gpus(), list(zeus_monitor.gpu_indices))


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
    measurement_s = _number("measurement_duration", measurement_duration)
    cooldown_s = _number("cooldown_duration", cooldown_duration)
    settle_s = None if warmup_settle_duration is None else _number(
        "warmup_settle_duration", warmup_settle_duration)
    warmup, calibration = int(num_warmup_iterations), int(num_calibration_iterations)
    # Checks every parameter before anything runs.
    _zeus_cpp.trial_plan(measurement_s, cooldown_s, warmup, calibration, settle_s, 0.0)
    _check_target(target_function, zeus_monitor)
    iteration_s = _calibrate(target_function, zeus_monitor, warmup, calibration)
    warmup_count, iterations = _zeus_cpp.trial_plan(
        measurement_s, cooldown_s, warmup, calibration, settle_s, iteration_s)
    return _run_trial(target_function, zeus_monitor, cooldown_s, warmup_count, iterations)


def _sweep(target_function: Callable[[], Any], zeus_monitor: ZeusMonitor, values: List[float],
           fixed_s: float, swept: str, num_trials: int, num_warmup_trials: int,
           threshold_j: float, warmup: int, iteration_s: float) -> SweepReport:
    """Warm-up trials (no cool-down, no warm-up iterations, the longest window), then
    num_trials trials per value of `swept`."""
    cooldown_sweep = swept == "cooldown_duration"
    fixed_name = "measurement_duration" if cooldown_sweep else "cooldown_duration"
    longest = fixed_s if cooldown_sweep else max(values)
    for i in range(num_warmup_trials):
        _run_trial(target_function, zeus_monitor, 0.0, 0,
                   _zeus_cpp.trial_plan(longest, 0.0, 0, 1, None, iteration_s)[1])
        if _is_rank_zero():
            logger.info("Warm-up trial %d/%d done", i + 1, num_warmup_trials)
    entries: List[SweepResult] = []
    for value in values:
        cooldown_s, measurement_s = (value, fixed_s) if cooldown_sweep else (fixed_s, value)
        iterations = _zeus_cpp.trial_plan(measurement_s, cooldown_s, warmup, 1, None,
                                          iteration_s)[1]
        trials = [_run_trial(target_function, zeus_monitor, cooldown_s, warmup, iterations)
                  for _ in range(num_trials)]
        stats = _zeus_cpp.summarize_sweep(measurement_s, cooldown_s,
                                          [dataclasses.astuple(t) for t in trials], threshold_j)
        entries.append(SweepResult(measurement_s, cooldown_s, trials, *stats))
        if _is_rank_zero():
            logger.info("%s", entries[-1])
    report = SweepReport((swept, list(values)), (fixed_name, fixed_s), entries)
    if _is_rank_zero():
        logger.info("%s", report)
    return report


def _sweep_setup(target_function: Any, zeus_monitor: Any, ranges: List[Tuple[str, Any]],
                 fixed_measurement: Any, fixed_cooldown: Any, num_trials: int,
                 num_warmup_trials: int, threshold: Any, warmup: int,
                 calibration: int) -> Tuple[List[List[float]], float]:
    """Checks every parameter before anything runs; answers the search ranges' values and the
    threshold in joules."""
    _zeus_cpp.check_sweep_parameters(int(num_trials), int(num_warmup_trials),
                                     _number("trial_stddev_threshold", threshold))
    values = [_zeus_cpp.sweep_range(None if r is None else [_number(name, v) for v in r], name)
              for name, r in ranges]
    _zeus_cpp.trial_plan(_number("measurement_duration", fixed_measurement),
                         _number("cooldown_duration", fixed_cooldown), int(warmup),
                         int(calibration), None, 0.0)
    _check_target(target_function, zeus_monitor)
    return values, float(threshold)


def _profile_one_duration(target_function: Callable[[], Any], zeus_monitor: ZeusMonitor,
                          swept: str, search_range: Optional[List[float]], fixed: Any,
                          num_trials: int, num_warmup_trials: int, trial_stddev_threshold: Any,
                          num_warmup_iterations: int, num_calibration_iterations: int,
                          iteration_duration: Optional[float]) -> SweepReport:
    """Sweeps `swept` ("measurement_duration" or "cooldown_duration") over search_range with the
    other duration fixed at `fixed`: checks, calibrates unless iteration_duration is given, then
    _sweep. The body of profile_measurement_duration and profile_cooldown_duration."""
    cooldown_sweep = swept == "cooldown_duration"
    (values,), threshold = _sweep_setup(
        target_function, zeus_monitor, [(swept + "_search_range", search_range)],
        fixed if cooldown_sweep else 1.0, 0.0 if cooldown_sweep else fixed, num_trials,
        num_warmup_trials, trial_stddev_threshold, num_warmup_iterations,
        num_calibration_iterations)
    fixed_s = float(fixed)
    if iteration_duration is None:
        iteration_duration = _calibrate(target_function, zeus_monitor,
                                        int(num_warmup_iterations),
                                        int(num_calibration_iterations))
    return _sweep(target_function, zeus_monitor, values, fixed_s, swept, int(num_trials),
                  int(num_warmup_trials), threshold, int(num_warmup_iterations),
                  float(iteration_duration))


def profile_measurement_duration(
    target_function: Callable[[], Any],
    zeus_monitor: ZeusMonitor,
    measurement_duration_search_range: Optional[List[float]] = None,
    cooldown_duration: float = 10.0,
    num_trials: int = 10,
    num_warmup_trials: int = 2,
    trial_stddev_threshold: float = 0.01,
    num_warmup_iterations: int = 10,
    num_calibration_iterations: int = 100,
    iteration_duration: Optional[float] = None,
) -> SweepReport:
    """Sweeps the measurement duration (default 1..10 s) with the cool-down fixed; see
    profile_parameters for the arguments. iteration_duration skips the calibration."""
    return _profile_one_duration(target_function, zeus_monitor, "measurement_duration",
                                 measurement_duration_search_range, cooldown_duration, num_trials,
                                 num_warmup_trials, trial_stddev_threshold, num_warmup_iterations,
                                 num_calibration_iterations, iteration_duration)


def profile_cooldown_duration(
    target_function: Callable[[], Any],
    zeus_monitor: ZeusMonitor,
    cooldown_duration_search_range: Optional[List[float]] = None,
    measurement_duration: float = 10.0,
    num_trials: int = 10,
    num_warmup_trials: int = 2,
    trial_stddev_threshold: float = 0.01,
    num_warmup_iterations: int = 10,
    num_calibration_iterations: int = 100,
    iteration_duration: Optional[float] = None,
) -> SweepReport:
    """Sweeps the cool-down (default 1..10 s) with the measurement duration fixed; see
    profile_parameters for the arguments. iteration_duration skips the calibration."""
    return _profile_one_duration(target_function, zeus_monitor, "cooldown_duration",
                                 cooldown_duration_search_range, measurement_duration, num_trials,
                                 num_warmup_trials, trial_stddev_threshold, num_warmup_iterations,
                                 num_calibration_iterations, iteration_duration)


def profile_parameters(
    target_function: Callable[[], Any],
    zeus_monitor: ZeusMonitor,
    measurement_duration_search_range: Optional[List[float]] = None,
    cooldown_duration_search_range: Optional[List[float]] = None,
    num_trials: int = 10,
    num_warmup_trials: int = 2,
    trial_stddev_threshold: float = 0.01,
    num_warmup_iterations: int = 10,
    num_calibration_iterations: int = 100,
) -> Tuple[SweepReport, SweepReport]:
    """Sweeps the measurement duration (cool-down fixed at the longest of its range), then the
    cool-down (measurement fixed at the longest of its range), after one calibration and
    num_warmup_trials warm-up trials (before the first sweep only). The shortest valid values
    of the two reports (`report.shortest_valid()`) are the recommended settings for `measure`.

    Args:
        target_function: one iteration of the workload (called with no arguments).
        zeus_monitor: the ZeusMonitor of this rank's GPUs.
        measurement_duration_search_range: measurement durations to try (default 1..10 s).
        cooldown_duration_search_range: cool-downs to try (default 1..10 s).
        num_trials: trials per value.
        num_warmup_trials: throw-away trials before the first sweep.
        trial_stddev_threshold: a value is valid when the sample standard deviation of
            energy_per_iter over its trials is below this many joules.
        num_warmup_iterations: warm-up iterations before each trial's window.
        num_calibration_iterations: iterations timed to learn the iteration time.

    Returns:
        (measurement_sweep_report, cooldown_sweep_report).

    Raises:
        InvalidArgumentError: a bad range, count or threshold (nothing is run).
    """
    m_name, c_name = "measurement_duration_search_range", "cooldown_duration_search_range"
    (m_values, c_values), threshold = _sweep_setup(
        target_function, zeus_monitor,
        [(m_name, measurement_duration_search_range), (c_name, cooldown_duration_search_range)],
        1.0, 0.0, num_trials, num_warmup_trials, trial_stddev_threshold, num_warmup_iterations,
        num_calibration_iterations)
    warmup, trials = int(num_warmup_iterations), int(num_trials)
    iteration_s = _calibrate(target_function, zeus_monitor, warmup,
                             int(num_calibration_iterations))
    measurement_report = _sweep(target_function, zeus_monitor, m_values, max(c_values),
                                "measurement_duration", trials, int(num_warmup_trials),
                                threshold, warmup, iteration_s)
    cooldown_report = _sweep(target_function, zeus_monitor, c_values, max(m_values),
                             "cooldown_duration", trials, 0, threshold, warmup, iteration_s)
    return measurement_report, cooldown_report


__all__ = ["TrialResult", "SweepResult", "SweepReport", "measure", "profile_parameters",
           "profile_measurement_duration", "profile_cooldown_duration"]
