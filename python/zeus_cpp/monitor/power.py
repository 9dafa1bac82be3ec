"""GPU and CPU power timelines: `PowerMonitor` and `PowerDomain` (as `zeus.monitor.power`).

    monitor = PowerMonitor(update_period=0.1)            # every supported domain
    start = time.time(); train(); end = time.time()
    energy = monitor.get_energy(start, end)              # {0: J}, device_instant
    timelines = monitor.get_all_power_timelines(start_time=start, end_time=end)
    # {"device_instant": {0: [(unix_s, W), ...]}, "device_average": {...}, "memory_average": {...}}

    # CPU packages (RAPL): the domains of upstream's CPU power monitor branch
    cpu = PowerMonitor(gpu_indices=[], cpu_indices=[0], update_period=0.1)
    cpu.get_power_timeline("cpu_package_average", cpu_index=0)   # {0: [(unix_s, W), ...]}

One C++ thread samples every domain of every device (no process per domain, no GIL); samples
are deduplicated (a constant run keeps its first and last sample) in a ring per domain and
device. CPU samples are the average power since the previous tick: the RAPL energy counter's
delta (wraparound corrected) over the measured time between the two reads. Times are Unix
timestamps (time.time()).
"""

from __future__ import annotations

from enum import Enum
from typing import Dict, List, Optional, Sequence, Tuple, Union

from zeus_cpp import _zeus_cpp
from zeus_cpp._zeus_cpp import InvalidArgumentError
from zeus_cpp.monitor.energy import _check_indices


class PowerDomain(Enum):
    """What is sampled: a GPU's instant draw, the driver's average of it, the memory's average;
    a CPU package's or its DRAM zone's average power from RAPL (indexed by package)."""

    DEVICE_INSTANT = "device_instant"
    DEVICE_AVERAGE = "device_average"
    MEMORY_AVERAGE = "memory_average"
    CPU_PACKAGE_AVERAGE = "cpu_package_average"
    CPU_DRAM_AVERAGE = "cpu_dram_average"


_CPU_DOMAINS = frozenset({"cpu_package_average", "cpu_dram_average"})


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
    """Samples GPU (and CPU package) power in one or more domains on a background thread."""

    def __init__(
        self,
        gpu_indices: Optional[List[int]] = None,
        update_period: Optional[float] = None,
        max_samples_per_gpu: Optional[int] = None,
        power_domains: Optional[Sequence[DomainLike]] = None,
        cpu_indices: Optional[List[int]] = None,
    ) -> None:
        """Discovers the devices, picks the domains and starts sampling.

        Args:
            gpu_indices: framework-visible GPUs to sample; None samples all; [] none (then CPU
                packages must be sampled).
            update_period: seconds between samples; None infers it from how often the power
                counter changes (half its fastest change interval, at most 0.1 s). Below 0.05 s
                a warning is logged.
            max_samples_per_gpu: samples kept per GPU and domain (default 65536); the oldest go
                first.
            power_domains: domains to sample (PowerDomain or names); None samples every domain
                the sampled devices support (with CPU packages: cpu_package_average, and
                cpu_dram_average when every package has a DRAM zone).
            cpu_indices: RAPL CPU packages to sample (last, so that upstream's positional
                arguments keep their meaning). None: none, unless power_domains names a CPU
                domain, then every readable package; so a script ported from upstream's
                release (which has no CPU domains) gets the same domains and keys. [] none.
                RAPL needs root since Linux 5.10.

        Raises:
            InvalidArgumentError: a bad index, period, or domain name; an unsupported domain;
                no GPU and no CPU package to sample.
            NotFoundError: an index past the visible GPUs or CPU packages (the message says why
                RAPL found none).
        """
        gpu_indices = _check_indices("gpu_indices", gpu_indices)
        cpu_indices = _check_indices("cpu_indices", cpu_indices)
        if update_period is not None:
            update_period = _seconds("update_period", update_period)
        capacity = 65536 if max_samples_per_gpu is None else int(max_samples_per_gpu)
        names = None
        if power_domains is not None:
            if isinstance(power_domains, (str, PowerDomain)):
                raise TypeError("power_domains must be a list of domains, not a single domain")
            names = [_domain_name("power_domains", d) for d in power_domains]
        if cpu_indices is None and not any(name in _CPU_DOMAINS for name in names or []):
            cpu_indices = []  # CPUs only when asked for (upstream's release samples GPUs only)
        self._monitor = _zeus_cpp.PowerMonitor(gpu_indices, update_period, capacity, names,
                                               cpu_indices)
        self.gpu_indices: List[int] = list(self._monitor.gpu_indices)
        self.cpu_indices: List[int] = list(self._monitor.cpu_indices)
        self.update_period: float = self._monitor.update_period
        self.measurement_domains: List[PowerDomain] = [
            PowerDomain(name) for name in self._monitor.power_domains
        ]

    def _indices(self, domain: Optional[str], gpu_index: Optional[int],
                 cpu_index: Optional[int]) -> List[int]:
        """The device indices a query of `domain` covers: CPU packages for a CPU domain."""
        resolved = self._monitor.resolve(domain)
        if resolved in _CPU_DOMAINS:
            if gpu_index is not None:
                raise InvalidArgumentError(
                    f"{resolved} is a CPU domain: pass cpu_index, not gpu_index")
            return self.cpu_indices if cpu_index is None else [cpu_index]
        if cpu_index is not None:
            raise InvalidArgumentError(f"{resolved} is a GPU domain: pass gpu_index, not cpu_index")
        return self.gpu_indices if gpu_index is None else [gpu_index]

    def get_power_timeline(
        self,
        power_domain: DomainLike,
        gpu_index: Optional[int] = None,
        start_time: Optional[float] = None,
        end_time: Optional[float] = None,
        *,
        cpu_index: Optional[int] = None,
    ) -> Dict[int, List[Tuple[float, float]]]:
        """The samples of one domain as {device index: [(unix_s, W), ...]}, oldest first.

        GPU domains are keyed by GPU index (gpu_index picks one), CPU domains by CPU package
        (cpu_index picks one), as in upstream's CPU power monitor branch.

        Raises:
            InvalidArgumentError: a domain that is not monitored, start_time > end_time, a
                gpu_index for a CPU domain or a cpu_index for a GPU domain.
            NotFoundError: an index that is not monitored.
        """
        domain = _domain_name("power_domain", power_domain)
        if domain is None:
            raise TypeError("power_domain must be a PowerDomain or its name, not None")
        start = _unix_time("start_time", start_time)
        end = _unix_time("end_time", end_time)
        targets = self._indices(domain, gpu_index, cpu_index)
        return {index: self._monitor.timeline(domain, index, start, end) for index in targets}

    def get_all_power_timelines(
        self,
        gpu_index: Optional[int] = None,
        start_time: Optional[float] = None,
        end_time: Optional[float] = None,
        *,
        cpu_index: Optional[int] = None,
    ) -> Dict[str, Dict[int, List[Tuple[float, float]]]]:
        """Every monitored domain: {domain name: {device index: [(unix_s, W), ...]}}."""
        return {
            domain.value: self.get_power_timeline(
                domain, None if domain.value in _CPU_DOMAINS else gpu_index, start_time,
                end_time, cpu_index=cpu_index if domain.value in _CPU_DOMAINS else None)
            for domain in self.measurement_domains
        }

    def get_energy(
        self,
        start_time: Optional[float] = None,
        end_time: Optional[float] = None,
        power_domain: Optional[DomainLike] = None,
    ) -> Optional[Dict[int, float]]:
        """Energy in joules per device between two Unix times, by trapezoid over the samples
        (per CPU package for a CPU domain).

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
        for index in self._indices(domain, None, None):
            joules = self._monitor.energy_j(index, start, end, domain)
            if joules is not None:
                energy[index] = joules
        return energy or None

    def get_power(
        self, time: Optional[float] = None, power_domain: Optional[DomainLike] = None
    ) -> Optional[Dict[int, float]]:
        """Power in watts per device (CPU packages for a CPU domain): the newest sample, or the
        one closest to `time`.

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
        for index in self._indices(domain, None, None):
            watts = self._monitor.power_w(index, when, domain)
            if watts is None:
                return None
            power[index] = watts
        return power
