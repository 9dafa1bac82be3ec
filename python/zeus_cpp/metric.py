"""Window metrics pushed to a Prometheus Pushgateway (as `zeus.metric`).

    histogram = EnergyHistogram(cpu_indices=[0], gpu_indices=[0],
                                pushgateway_url="http://localhost:9091", job="training")
    for step in range(steps):
        histogram.begin_window("step")
        train_one_step()
        histogram.end_window("step")      # observes each device's energy, pushes

Metric names and labels are upstream Zeus's, so its Grafana/Prometheus queries carry over:
``energy_monitor_{gpu,cpu,dram}_energy_joules`` (histogram), the same names with ``_total``
(EnergyCumulativeCounter) and ``power_monitor_gpu_power_watts`` (PowerGauge), each labelled
``{window, index}``. Each object pushes (HTTP PUT) to the group ``/metrics/job/<job>``.

``pushgateway_url`` takes what upstream's (prometheus_client's) takes: ``host:port`` (plain
HTTP), ``http://host:port`` or ``https://host:port``; an address with any other scheme is a
ValueError naming these forms. The attribute keeps the address as given.

The measuring, the background updates (threads, not processes) and the pushes are the C++
core's (zeus/exporter/metric.h): the text comes from prometheus-cpp, the HTTP from the project's client.
An unreachable gateway raises UnavailableError from end_window (EnergyHistogram) or
begin_window (the other two); what was observed stays and goes out with the next push.
"""

from __future__ import annotations

import abc
import warnings
from typing import Any, Callable, List, Optional, Sequence

from zeus_cpp import InvalidArgumentError, _zeus_cpp
from zeus_cpp.monitor.energy import Measurement, _check_indices, _check_key
from zeus_cpp.utils.framework import sync_function

__all__ = ["Metric", "EnergyHistogram", "EnergyCumulativeCounter", "PowerGauge"]


_PUSHGATEWAY_FORMS = "host:port (http is assumed, as prometheus_client does), http://host:port or https://host:port"


def _pushgateway_address(pushgateway_url: str) -> str:
    """The URL the C++ core pushes to for `pushgateway_url`, as prometheus_client reads it.

    prometheus_client (which upstream hands the address to) adds "http://" when the address
    names no http or https scheme, so "127.0.0.1:9091" and "gateway:9091" are plain-HTTP
    gateways; http:// and https:// URLs stay as they are (the scheme case-insensitive), and
    trailing slashes go, as there. An address with another scheme ("ftp://...") is refused here,
    where prometheus_client would have pushed to "http://ftp://...".

    Raises:
        TypeError: pushgateway_url is not a str.
        ValueError (InvalidArgumentError): an empty address or a scheme other than http/https.
    """
    if not isinstance(pushgateway_url, str):
        raise TypeError(f"pushgateway_url must be a str ({_PUSHGATEWAY_FORMS}), "
                        f"not {type(pushgateway_url).__name__}")
    address = pushgateway_url.strip().rstrip("/")
    if not address:
        raise InvalidArgumentError(f"pushgateway_url {pushgateway_url!r} is empty: give {_PUSHGATEWAY_FORMS}")
    scheme, separator, rest = address.partition("://")
    if not separator:
        return "http://" + address
    if scheme.lower() not in ("http", "https"):
        raise InvalidArgumentError(
            f"pushgateway_url {pushgateway_url!r} uses the scheme {scheme!r}, which a Pushgateway "
            f"does not speak: give {_PUSHGATEWAY_FORMS}"
        )
    return scheme.lower() + "://" + rest


def _connected(make: Callable[[str], Any], pushgateway_url: str) -> Any:
    """make(address) with the normalised address; its URL errors name the address given."""
    address = _pushgateway_address(pushgateway_url)
    try:
        return make(address)
    except InvalidArgumentError as error:
        shown = f"pushgateway_url '{address}'"
        if shown not in str(error):
            raise  # not about the address (e.g. an empty job name)
        if address != pushgateway_url:
            shown_as_given = f"pushgateway_url '{pushgateway_url}' (read as '{address}')"
        else:
            shown_as_given = shown
        raise InvalidArgumentError(
            str(error).replace(shown, shown_as_given, 1) + f"; accepted forms: {_PUSHGATEWAY_FORMS}"
        ) from None


def _check_period(update_period: float) -> float:
    if isinstance(update_period, bool) or not isinstance(update_period, (int, float)):
        raise TypeError(f"update_period must be a number of seconds, not {type(update_period).__name__}")
    return float(update_period)


def _buckets(name: str, buckets: Sequence[float]) -> List[float]:
    if isinstance(buckets, (str, bytes)) or not hasattr(buckets, "__iter__"):
        raise TypeError(f"{name} must be a list of numbers, not {type(buckets).__name__}")
    return [float(b) for b in buckets]


class Metric(abc.ABC):
    """A metric measured over named windows: begin_window(name) ... end_window(name)."""

    @abc.abstractmethod
    def begin_window(self, name: str, sync_execution: bool = True) -> None:
        """Starts window `name` (waits for queued GPU work first when sync_execution)."""

    @abc.abstractmethod
    def end_window(self, name: str, sync_execution: bool = True) -> None:
        """Ends window `name` and reports it."""


class _Synced:
    """Waits for queued GPU work (torch.cuda.synchronize when torch uses CUDA) on request."""

    def _init_sync(self, gpu_indices: Sequence[int]) -> None:
        self._sync = sync_function("torch", list(gpu_indices))

    def _maybe_sync(self, sync_execution: bool) -> None:
        if sync_execution and self._sync is not None:
            self._sync()


class EnergyHistogram(Metric, _Synced):
    """Energy of each window per GPU, CPU package and DRAM, as Prometheus histograms (J)."""

    def __init__(
        self,
        cpu_indices: Optional[list],
        gpu_indices: Optional[list],
        pushgateway_url: str,
        job: str,
        gpu_bucket_range: Sequence[float] = (50.0, 100.0, 200.0, 500.0, 1000.0),
        cpu_bucket_range: Sequence[float] = (10.0, 50.0, 100.0, 500.0, 1000.0),
        dram_bucket_range: Sequence[float] = (5.0, 10.0, 20.0, 50.0, 150.0),
    ) -> None:
        """Measures `gpu_indices` and `cpu_indices` (None: all) and pushes to `job`.

        pushgateway_url is host:port (plain HTTP), http://host:port or https://host:port.

        Raises:
            ValueError (InvalidArgumentError): an empty or unsorted bucket range, a bad URL or
                an empty job name.
            NotFoundError: an index that names no device.
        """
        self.cpu_indices = _check_indices("cpu_indices", cpu_indices)
        self.gpu_indices = _check_indices("gpu_indices", gpu_indices)
        self.pushgateway_url = pushgateway_url
        self.job = job
        self.gpu_bucket_range = _buckets("gpu_bucket_range", gpu_bucket_range)
        self.cpu_bucket_range = _buckets("cpu_bucket_range", cpu_bucket_range)
        self.dram_bucket_range = _buckets("dram_bucket_range", dram_bucket_range)
        self._metric = _connected(
            lambda address: _zeus_cpp.EnergyHistogram(
                self.gpu_indices, self.cpu_indices, address, job,
                self.gpu_bucket_range, self.cpu_bucket_range, self.dram_bucket_range,
            ),
            pushgateway_url,
        )
        self._init_sync(self._metric.gpu_indices)

    def begin_window(self, name: str, sync_execution: bool = True) -> None:
        """Starts window `name` (InvalidArgumentError if it is open)."""
        self._maybe_sync(sync_execution)
        self._metric.begin_window(_check_key(name))

    def end_window(self, name: str, sync_execution: bool = True) -> Measurement:
        """Observes window `name`'s energy per device, pushes, and returns the measurement.

        Observations outside their buckets' range are warned about (as upstream does).
        """
        self._maybe_sync(sync_execution)
        (time_s, gpu, cpu, dram), out_of_range = self._metric.end_window(_check_key(name))
        for line in out_of_range:
            warnings.warn(line, stacklevel=2)
        return Measurement(time_s, gpu, cpu or None, dram or None)


class EnergyCumulativeCounter(Metric, _Synced):
    """Energy since each window began, per device, as Prometheus counters (J).

    While a window is open, a thread adds the energy of every `update_period` seconds and
    pushes; end_window adds what remains and pushes once more.
    """

    def __init__(
        self,
        cpu_indices: Optional[list],
        gpu_indices: Optional[list],
        update_period: float,
        pushgateway_url: str,
        job: str,
    ) -> None:
        """Raises ValueError (InvalidArgumentError) for a period <= 0, a bad URL or job."""
        self.cpu_indices = _check_indices("cpu_indices", cpu_indices)
        self.gpu_indices = _check_indices("gpu_indices", gpu_indices)
        self.update_period = _check_period(update_period)
        self.pushgateway_url = pushgateway_url
        self.job = job
        self._metric = _connected(
            lambda address: _zeus_cpp.EnergyCumulativeCounter(
                self.gpu_indices, self.cpu_indices, self.update_period, address, job
            ),
            pushgateway_url,
        )
        self._init_sync(self._metric.gpu_indices)

    def begin_window(self, name: str, sync_execution: bool = False) -> None:
        """Pushes the window's counters at 0 and starts its thread."""
        self._maybe_sync(sync_execution)
        self._metric.begin_window(_check_key(name))

    def end_window(self, name: str, sync_execution: bool = False) -> None:
        """Stops the window's thread, adds the rest of its energy and pushes.

        Raises ValueError (NotFoundError) when `name` is not open.
        """
        self._maybe_sync(sync_execution)
        self._metric.end_window(_check_key(name))

    def gpu_energy(self, name: str, index: int) -> float:
        """The joules counted so far for window `name` on GPU `index`."""
        return self._metric.gpu_energy(_check_key(name), index)


class PowerGauge(Metric, _Synced):
    """Each GPU's instant power while a window is open, as a Prometheus gauge (W)."""

    def __init__(
        self,
        gpu_indices: Optional[list],
        update_period: float,
        pushgateway_url: str,
        job: str,
    ) -> None:
        """Raises ValueError (InvalidArgumentError) for a period <= 0, a bad URL or job."""
        self.gpu_indices = _check_indices("gpu_indices", gpu_indices)
        self.update_period = _check_period(update_period)
        self.pushgateway_url = pushgateway_url
        self.job = job
        self._metric = _connected(
            lambda address: _zeus_cpp.PowerGauge(self.gpu_indices, self.update_period, address, job),
            pushgateway_url,
        )
        self._init_sync(self._metric.gpu_indices)

    def begin_window(self, name: str, sync_execution: bool = False) -> None:
        """Sets and pushes the gauges once, then starts the window's thread.

        Raises InvalidArgumentError (a ValueError, like upstream's) when `name` is open.
        """
        self._maybe_sync(sync_execution)
        self._metric.begin_window(_check_key(name))

    def end_window(self, name: str, sync_execution: bool = False) -> None:
        """Stops the window's thread; the last values stay pushed."""
        self._maybe_sync(sync_execution)
        self._metric.end_window(_check_key(name))
