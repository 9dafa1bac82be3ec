"""zeus_cpp.metric's contract against a recording Pushgateway (http.server on 127.0.0.1).

The round trip through the real prometheus-pushgateway and prometheus is test_metric_prometheus.
"""

from __future__ import annotations

import http.server
import re
import threading
import time
from typing import List, Tuple

import pytest

from zeus_cpp import InvalidArgumentError, NotFoundError, UnavailableError
from zeus_cpp.metric import EnergyCumulativeCounter, EnergyHistogram, Metric, PowerGauge


class Gateway:
    """Records every push: (method, path, body)."""

    def __init__(self) -> None:
        self.pushes: List[Tuple[str, str, str]] = []
        gateway = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _record(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                gateway.pushes.append((self.command, self.path, body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_PUT = do_POST = _record

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def values(self, series: str) -> List[float]:
        """The value of `series` in each push that has it, in order."""
        pattern = re.compile(re.escape(series) + r" (\S+)")
        return [float(m.group(1)) for _, _, body in self.pushes for m in [pattern.search(body)] if m]


@pytest.fixture
def gateway():
    g = Gateway()
    yield g
    g.server.shutdown()


def test_histogram_returns_the_measurement_warns_outside_the_buckets_and_puts(gateway):
    histogram = EnergyHistogram(cpu_indices=[], gpu_indices=[0], pushgateway_url=gateway.url,
                                job="unit", gpu_bucket_range=[1000.0, 2000.0])
    assert isinstance(histogram, Metric)
    histogram.begin_window("step")
    with pytest.raises(InvalidArgumentError):
        histogram.begin_window("step")
    time.sleep(0.05)
    with pytest.warns(UserWarning, match="below the smallest bucket bound 1000 J"):
        measurement = histogram.end_window("step")
    assert measurement.gpu_energy[0] == pytest.approx(350 * measurement.time, rel=0.05)
    method, path, body = gateway.pushes[-1]
    assert (method, path) == ("PUT", "/metrics/job/unit")
    labels = '{index="0",window="step"}'
    assert gateway.values("energy_monitor_gpu_energy_joules_sum" + labels) == [pytest.approx(measurement.gpu_energy[0])]
    assert gateway.values('energy_monitor_gpu_energy_joules_bucket{index="0",window="step",le="1000"}') == [1.0]
    with pytest.raises(NotFoundError):
        histogram.end_window("step")


def test_bad_arguments_are_value_errors_naming_the_fix(gateway):
    with pytest.raises(ValueError, match="GPU bucket range cannot be empty"):
        EnergyHistogram([], [0], gateway.url, "j", gpu_bucket_range=[])
    with pytest.raises(ValueError, match="strictly increasing"):
        EnergyHistogram([], [0], gateway.url, "j", cpu_bucket_range=[5.0, 1.0])
    # host:port is a plain-HTTP gateway (as prometheus_client reads it); other schemes are refused.
    with pytest.raises(ValueError, match="pushgateway_url 'ftp://localhost:9091' uses the scheme 'ftp'"):
        EnergyHistogram([], [0], "ftp://localhost:9091", "j")
    with pytest.raises(ValueError, match="job name is empty"):
        PowerGauge([0], 1.0, gateway.url, "")
    with pytest.raises(ValueError, match="update_period must be a positive"):
        EnergyCumulativeCounter([], [0], 0, gateway.url, "j")
    with pytest.raises(TypeError, match="update_period"):
        PowerGauge([0], "1", gateway.url, "j")
    with pytest.raises(NotFoundError):
        PowerGauge([5], 1.0, gateway.url, "j")
    assert gateway.pushes == []


def test_counter_thread_adds_each_period_and_the_end_adds_the_rest(gateway):
    counter = EnergyCumulativeCounter(cpu_indices=[], gpu_indices=[0], update_period=0.1,
                                      pushgateway_url=gateway.url, job="unit_counter")
    start = time.monotonic()
    counter.begin_window("train")
    time.sleep(0.55)
    counter.end_window("train")
    elapsed = time.monotonic() - start
    values = gateway.values('energy_monitor_gpu_energy_joules_total{index="0",window="train"}')
    assert values[0] == 0.0 and len(values) >= 5  # the first push, >= 4 updates, the last
    assert values == sorted(values)
    assert values[-1] == pytest.approx(counter.gpu_energy("train", 0), rel=1e-12)  # text: 16 digits
    assert values[-1] == pytest.approx(350 * elapsed, rel=0.05)
    with pytest.raises(NotFoundError):
        counter.end_window("train")


def test_gauge_pushes_power_and_an_unreachable_gateway_fails_at_begin(gateway):
    gauge = PowerGauge(gpu_indices=[0], update_period=0.1, pushgateway_url=gateway.url, job="unit_power")
    gauge.begin_window("train")
    with pytest.raises(InvalidArgumentError):
        gauge.begin_window("train")
    time.sleep(0.25)
    gauge.end_window("train")
    pushes = len(gateway.pushes)
    assert gateway.values('power_monitor_gpu_power_watts{index="0",window="train"}')[:2] == [350.0, 350.0]
    time.sleep(0.2)
    assert len(gateway.pushes) == pushes  # the thread stopped at end_window

    gateway.server.shutdown()
    gateway.server.server_close()
    lost = PowerGauge(gpu_indices=[0], update_period=1, pushgateway_url=gateway.url, job="x")
    with pytest.raises(UnavailableError, match="cannot push to the Pushgateway at " + re.escape(gateway.url)):
        lost.begin_window("w")
    with pytest.raises(NotFoundError):
        lost.end_window("w")  # the failed begin opened nothing
