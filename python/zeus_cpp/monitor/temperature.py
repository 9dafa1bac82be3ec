"""GPU temperature timelines: `TemperatureMonitor` (as `zeus.monitor.temperature`).

    monitor = TemperatureMonitor(update_period=0.5)
    ...
    timeline = monitor.get_temperature_timeline(start_time=start, end_time=end)
    # {0: [(unix_s, celsius), ...]}

A C++ thread reads every GPU's temperature each period (default 1 s); the samples are
deduplicated in a ring per GPU. Times are Unix timestamps (time.time()).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from zeus_cpp import _zeus_cpp
from zeus_cpp.monitor.energy import _check_indices
from zeus_cpp.monitor.power import _seconds, _ThreadedMonitor, _unix_time


class TemperatureMonitor(_ThreadedMonitor):
    """Reads GPU temperature on a background thread."""

    def __init__(
        self,
        gpu_indices: Optional[List[int]] = None,
        update_period: float = 1.0,
        max_samples_per_gpu: Optional[int] = None,
    ) -> None:
        """Discovers the GPUs and starts reading.

        Args:
            gpu_indices: framework-visible GPUs to read; None reads all.
            update_period: seconds between readings (default 1 s).
            max_samples_per_gpu: samples kept per GPU (default 65536); the oldest go first.

        Raises:
            InvalidArgumentError: a bad index or period.
            NotFoundError: an index past the visible GPUs.
            NotSupportedError: a GPU that cannot report its temperature.
        """
        gpu_indices = _check_indices("gpu_indices", gpu_indices)
        period = _seconds("update_period", update_period)
        capacity = 65536 if max_samples_per_gpu is None else int(max_samples_per_gpu)
        self._monitor = _zeus_cpp.TemperatureMonitor(gpu_indices, period, capacity)
        self.gpu_indices: List[int] = list(self._monitor.gpu_indices)
        self.update_period: float = self._monitor.update_period

    def get_temperature_timeline(
        self,
        gpu_index: Optional[int] = None,
        start_time: Optional[float] = None,
        end_time: Optional[float] = None,
    ) -> Dict[int, List[Tuple[float, int]]]:
        """{gpu_index: [(unix_s, celsius), ...]}, oldest first.

        Raises:
            InvalidArgumentError: start_time > end_time or a non-finite time.
            NotFoundError: a gpu_index that is not monitored.
        """
        start = _unix_time("start_time", start_time)
        end = _unix_time("end_time", end_time)
        targets = self.gpu_indices if gpu_index is None else [gpu_index]
        return {index: self._monitor.timeline(index, start, end) for index in targets}

    def get_all_temperature_timelines(
        self, start_time: Optional[float] = None, end_time: Optional[float] = None
    ) -> Dict[int, List[Tuple[float, int]]]:
        """Every monitored GPU's timeline (the same as get_temperature_timeline(None, ...))."""
        return self.get_temperature_timeline(None, start_time, end_time)

    def get_temperature(self, time: Optional[float] = None) -> Optional[Dict[int, int]]:
        """Celsius per GPU: the newest sample, or the one closest to `time`.

        Returns:
            {gpu_index: C}, or None when a GPU has no sample (or `time` lies outside the
            sampled span).
        """
        when = _unix_time("time", time)
        temperature: Dict[int, int] = {}
        for index in self.gpu_indices:
            celsius = self._monitor.temperature_c(index, when)
            if celsius is None:
                return None
            temperature[index] = celsius
        return temperature
