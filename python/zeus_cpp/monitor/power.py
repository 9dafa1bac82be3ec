"""GPU power sampling in the background: `PowerMonitor` (as `zeus.monitor.power`).

    monitor = PowerMonitor(gpu_indices=[0], update_period=0.1)
    start = time.time(); train(); end = time.time()
    energy = monitor.get_energy(start, end)   # {0: J}
    power = monitor.get_power()               # {0: W}, the latest sample

Samples are kept by the C++ core on its own thread (no GIL), deduplicated, in a ring buffer.
Times are Unix timestamps (time.time()).
"""

from __future__ import annotations

from typing import Dict, List, Optional

from zeus_cpp import _zeus_cpp
from zeus_cpp.monitor.energy import _check_indices


def _unix_time(name: str, value: Optional[float]) -> Optional[float]:
    """A Unix time argument as a float (None stays None); TypeError for anything else."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a Unix time (a float) or None, not {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")  # rejected as non-finite


class PowerMonitor:
    """Samples GPU power on a background thread; energy over any time range by trapezoid."""

    def __init__(
        self,
        gpu_indices: Optional[List[int]] = None,
        update_period: Optional[float] = None,
        max_samples_per_gpu: Optional[int] = None,
    ) -> None:
        """Discovers the GPUs and starts sampling.

        Args:
            gpu_indices: framework-visible GPUs to sample; None samples all.
            update_period: seconds between samples (default 0.1 s, NVML's update period).
            max_samples_per_gpu: samples kept per GPU (default 65536); the oldest go first.

        Raises:
            InvalidArgumentError: negative or duplicate index, update_period <= 0.
            NotFoundError: an index past the visible GPUs.
        """
        gpu_indices = _check_indices("gpu_indices", gpu_indices)
        interval_s = 0.1 if update_period is None else float(update_period)
        capacity = 65536 if max_samples_per_gpu is None else int(max_samples_per_gpu)
        self._sampler = _zeus_cpp.PowerSampler(gpu_indices, interval_s, capacity)
        self.gpu_indices: List[int] = list(self._sampler.gpu_indices)
        self.update_period = interval_s

    def stop(self) -> None:
        """Stops sampling; what was sampled stays queryable."""
        self._sampler.stop()

    def get_energy(
        self, start_time: Optional[float] = None, end_time: Optional[float] = None
    ) -> Optional[Dict[int, float]]:
        """Energy in joules per GPU between two Unix times, over the samples in that range.

        Nothing is extrapolated: only the part of the range the samples span counts.

        Args:
            start_time: default: the first sample.
            end_time: default: the latest sample.

        Returns:
            {gpu_index: J} for the GPUs with samples in the range, or None when none has (as
            in the Python Zeus).

        Raises:
            TypeError: a time that is not a number.
            InvalidArgumentError: a time that is NaN or infinite, or end_time < start_time.
        """
        start = _unix_time("start_time", start_time)
        end = _unix_time("end_time", end_time)
        energy: Dict[int, float] = {}
        for index in self.gpu_indices:
            joules = self._sampler.energy_j(index, start, end)
            if joules is not None:
                energy[index] = joules
        return energy or None

    def get_power(self, time: Optional[float] = None) -> Optional[Dict[int, float]]:
        """Power in watts per GPU: the latest sample, or the last one at or before `time`.

        Returns:
            {gpu_index: W}, or None when no GPU has a sample (at or before `time`).
        """
        power: Dict[int, float] = {}
        for index in self.gpu_indices:
            samples = self._sampler.samples(index)
            if time is not None:
                samples = [s for s in samples if s[0] <= float(time)]
            if samples:
                power[index] = samples[-1][1]
        return power or None

    def __del__(self) -> None:
        sampler = getattr(self, "_sampler", None)
        if sampler is not None:
            sampler.stop()


