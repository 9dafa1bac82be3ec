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
        """Energy in joules per GPU between two Unix times.

        Args:
            start_time: default: the first sample.
            end_time: default: the latest sample.

        Returns:
            {gpu_index: J}, or None when no GPU has samples yet.
        """
        energy: Dict[int, float] = {}
        for index in self.gpu_indices:
            samples = self._sampler.samples(index)
            if not samples:
                continue
            start = samples[0][0] if start_time is None else float(start_time)
            end = samples[-1][0] if end_time is None else float(end_time)
            energy[index] = self._sampler.energy_j(index, start, end)
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


