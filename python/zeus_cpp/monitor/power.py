"""GPU power timelines: `PowerMonitor` and `PowerDomain` (as `zeus.monitor.power`).

    monitor = PowerMonitor(update_period=0.1)            # every supported domain
    start = time.time(); train(); end = time.time()
    energy = monitor.get_energy(start, end)              # {0: J}, device_instant
    timelines = monitor.get_all_power_timelines(start_time=start, end_time=end)
    # {"device_instant": {0: [(unix_s, W), ...]}, "device_average": {...}, "memory_average": {...}}

One C++ thread samples every domain of every GPU (no process per domain, no GIL); samples are
deduplicated (a constant run keeps its first and last sample) in a ring per domain and GPU.
Times are Unix timestamps (time.time()).
"""

from __future__ import annotations

from enum import Enum
from typing import Dict, List, Optional, Sequence, Tuple, Union

from zeus_cpp import _zeus_cpp
from zeus_cpp.monitor.energy import _check_indices


class PowerDomain(Enum):
    """What is sampled: the instant draw, the driver's average of it, the memory's average."""

    DEVICE_INSTANT = "device_instant"
    DEVICE_AVERAGE = "device_average"
    MEMORY_AVERAGE = "memory_average"


DomainLike = Union[PowerDomain, str]


def _domain_name(name: str, value: Optional[DomainLike]) -> Optional[str]:
    """A domain argument as its name (None stays None); TypeError for anything else."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, PowerDomain):
        return value.value
    raise TypeError(f"{name} must be a PowerDomain or its name, not {type(value).__name__}")


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


def _seconds(name: str, value: object) -> float:
    """A duration argument as a float; TypeError for anything that is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {type(value).__name__}")
    return float(value)


class _ThreadedMonitor:
    """A monitor whose C++ core (`self._monitor`) runs a thread: stop(), `with`, and a stop
    when garbage-collected."""

    _monitor: object

    def stop(self) -> None:
        """Stops the thread; what was sampled stays queryable."""
        self._monitor.stop()  # type: ignore[attr-defined]

    def __enter__(self):  # type: ignore[no-untyped-def]
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __del__(self) -> None:
        monitor = getattr(self, "_monitor", None)
        if monitor is not None:
            monitor.stop()


class PowerMonitor(_ThreadedMonitor):
    """Samples GPU power in one or more domains on a background thread."""

    def __init__(
        self,
        gpu_indices: Optional[List[int]] = None,
        update_period: Optional[float] = None,
        max_samples_per_gpu: Optional[int] = None,
        power_domains: Optional[Sequence[DomainLike]] = None,
    ) -> None:
        """Discovers the GPUs, picks the domains and starts sampling.

        Args:
            gpu_indices: framework-visible GPUs to sample; None samples all.
            update_period: seconds between samples; None infers it from how often the power
                counter changes (half its fastest change interval, at most 0.1 s). Below 0.05 s
                a warning is logged.
            max_samples_per_gpu: samples kept per GPU and domain (default 65536); the oldest go
                first.
            power_domains: domains to sample (PowerDomain or names); None samples every domain
                the GPUs support.

        Raises:
            InvalidArgumentError: a bad index, period, or domain name; an unsupported domain.
            NotFoundError: an index past the visible GPUs.
        """
        gpu_indices = _check_indices("gpu_indices", gpu_indices)
        if update_period is not None:
            update_period = _seconds("update_period", update_period)
        capacity = 65536 if max_samples_per_gpu is None else int(max_samples_per_gpu)
        names = None
        if power_domains is not None:
            if isinstance(power_domains, (str, PowerDomain)):
                raise TypeError("power_domains must be a list of domains, not a single domain")
            names = [_domain_name("power_domains", d) for d in power_domains]
        self._monitor = _zeus_cpp.PowerMonitor(gpu_indices, update_period, capacity, names)
        self.gpu_indices: List[int] = list(self._monitor.gpu_indices)
        self.update_period: float = self._monitor.update_period
        self.measurement_domains: List[PowerDomain] = [
            PowerDomain(name) for name in self._monitor.power_domains
        ]

    def get_power_timeline(
        self,
        power_domain: DomainLike,
        gpu_index: Optional[int] = None,
        start_time: Optional[float] = None,
        end_time: Optional[float] = None,
    ) -> Dict[int, List[Tuple[float, float]]]:
        """The samples of one domain as {gpu_index: [(unix_s, W), ...]}, oldest first.

        Raises:
            InvalidArgumentError: a domain that is not monitored, start_time > end_time.
            NotFoundError: a gpu_index that is not monitored.
        """
        domain = _domain_name("power_domain", power_domain)
        if domain is None:
            raise TypeError("power_domain must be a PowerDomain or its name, not None")
        start = _unix_time("start_time", start_time)
        end = _unix_time("end_time", end_time)
        targets = self.gpu_indices if gpu_index is None else [gpu_index]
        return {index: self._monitor.timeline(domain, index, start, end) for index in targets}

    def get_all_power_timelines(
        self,
        gpu_index: Optional[int] = None,
        start_time: Optional[float] = None,
        end_time: Optional[float] = None,
    ) -> Dict[str, Dict[int, List[Tuple[float, float]]]]:
        """Every monitored domain: {domain name: {gpu_index: [(unix_s, W), ...]}}."""
        return {
            domain.value: self.get_power_timeline(domain, gpu_index, start_time, end_time)
            for domain in self.measurement_domains
        }

    def get_energy(
        self,
        start_time: Optional[float] = None,
        end_time: Optional[float] = None,
        power_domain: Optional[DomainLike] = None,
    ) -> Optional[Dict[int, float]]:
        """Energy in joules per GPU between two Unix times, by trapezoid over the samples.

        Nothing is extrapolated: only the part of the range the samples span counts.

        Args:
            start_time: default: the first sample.
            end_time: default: the latest sample.
            power_domain: None: device_instant, or device_average when instant is not monitored.

        Returns:
            {gpu_index: J} for the GPUs with samples in the range, or None when none has.

        Raises:
            TypeError: a time that is not a number.
            InvalidArgumentError: a non-finite time, end_time < start_time, a domain not
                monitored.
        """
        start = _unix_time("start_time", start_time)
        end = _unix_time("end_time", end_time)
        domain = _domain_name("power_domain", power_domain)
        energy: Dict[int, float] = {}
        for index in self.gpu_indices:
            joules = self._monitor.energy_j(index, start, end, domain)
            if joules is not None:
                energy[index] = joules
        return energy or None

    def get_power(
        self, time: Optional[float] = None, power_domain: Optional[DomainLike] = None
    ) -> Optional[Dict[int, float]]:
        """Power in watts per GPU: the newest sample, or the one closest to `time`.

        Args:
            time: a Unix time; None: the newest sample.
            power_domain: None: device_instant, or device_average when instant is not monitored.

        Returns:
            {gpu_index: W}, or None when a GPU has no sample (or `time` lies outside the sampled
            span).
        """
        when = _unix_time("time", time)
        domain = _domain_name("power_domain", power_domain)
        power: Dict[int, float] = {}
        for index in self.gpu_indices:
            watts = self._monitor.power_w(index, when, domain)
            if watts is None:
                return None
            power[index] = watts
        return power
