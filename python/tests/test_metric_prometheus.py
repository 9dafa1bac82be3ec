"""zeus_cpp.metric end to end with the real Debian `prometheus-pushgateway` and `prometheus`.

A training loop on the fake NVML (one H100 drawing 350 W) pushes an EnergyHistogram, an
EnergyCumulativeCounter and a PowerGauge to a private Pushgateway; a private Prometheus scrapes
the gateway and `zeus exporter` every second; the test reads the series back through
Prometheus's query API (/api/v1/query) and checks them against the windows the loop measured.
Then headless Chromium takes a screenshot of the pushed histogram in Prometheus's graph page
($ZEUS_BUILD_DIR/test-output/prometheus_histogram.png; docs/img/ holds a copy). Every server
listens on 127.0.0.1 on a free port with its state in the test's temp folder; a missing binary
fails the test (make deps installs prometheus, prometheus-pushgateway and chromium).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import List, Optional

import pytest

from zeus_cpp.metric import EnergyCumulativeCounter, EnergyHistogram, PowerGauge
from zeus_cpp.monitor import ZeusMonitor


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: install the Debian package '{name}' (make deps does)")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 5.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as answer:
        return answer.read()


def _wait_ready(url: str, process: subprocess.Popen, log: Path, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"{what} exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            _get(url, timeout=1)
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"{what} was not ready at {url} within {timeout} s: {log.read_text()[-2000:]}")


class Servers:
    """Pushgateway, zeus exporter and Prometheus, stopped (by their ids) at the end."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.processes: List[subprocess.Popen] = []

    def start(self, argv: List[str], log_name: str) -> subprocess.Popen:
        with open(self.tmp / log_name, "wb") as log:
            process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        self.processes.append(process)
        return process

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


@pytest.fixture
def servers(tmp_path: Path):
    s = Servers(tmp_path)
    yield s
    s.stop()


def query(prometheus: str, expr: str) -> List[dict]:
    url = f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    answer = json.loads(_get(url))
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def wait_value(prometheus: str, expr: str, expected: Optional[float] = None, timeout: float = 15) -> float:
    """The value of the one series `expr` selects, once it exists (and equals `expected`)."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        result = query(prometheus, expr)
        if len(result) == 1:
            value = float(result[0]["value"][1])
            last = value
            if expected is None or value == pytest.approx(expected, rel=1e-9, abs=1e-9):
                return value
        else:
            last = result
        time.sleep(0.25)
    pytest.fail(f"Prometheus never answered {expected} for {expr} within {timeout} s (last: {last})")


@pytest.fixture
def browser():
    """Headless Chromium (through test/e2e/lib/cdp_browser.py); missing, it fails the test."""
    sys.path.insert(0, str(Path(os.environ["ZEUS_SOURCE_DIR"]) / "test" / "e2e" / "lib"))
    from cdp_browser import Browser, BrowserError  # noqa: PLC0415

    try:
        b = Browser(width=1280, height=800)
    except BrowserError as error:
        pytest.fail(f"headless Chromium: {error}")
    yield b
    b.close()


def test_pushed_windows_and_the_exporter_read_back_through_prometheus(
    browser, servers: Servers, tmp_path: Path
) -> None:
    pushgateway_bin = _binary("prometheus-pushgateway")
    prometheus_bin = _binary("prometheus")
    zeus = Path(os.environ["ZEUS_BIN"]) / "zeus"

    gateway_port = _free_port()
    gateway = f"http://127.0.0.1:{gateway_port}"
    process = servers.start(
        [
            pushgateway_bin,
            f"--web.listen-address=127.0.0.1:{gateway_port}",
            # Debian's default persists to /var/lib/prometheus/pushgateway.data: keep it private.
            f"--persistence.file={tmp_path / 'pushgateway.data'}",
        ],
        "pushgateway.log",
    )
    _wait_ready(f"{gateway}/-/ready", process, tmp_path / "pushgateway.log", "prometheus-pushgateway")

    exporter_port = _free_port()
    process = servers.start(
        [str(zeus), "exporter", "--port", str(exporter_port), "--interval", "0.25"], "exporter.log"
    )
    _wait_ready(f"http://127.0.0.1:{exporter_port}/metrics", process, tmp_path / "exporter.log", "zeus exporter")

    prometheus_port = _free_port()
    prometheus = f"http://127.0.0.1:{prometheus_port}"
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n"
        "  - job_name: pushgateway\n    honor_labels: true\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{gateway_port}']\n"
        "  - job_name: zeus_exporter\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{exporter_port}']\n"
    )
    process = servers.start(
        [
            prometheus_bin,
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{prometheus_port}",
        ],
        "prometheus.log",
    )
    _wait_ready(f"{prometheus}/-/ready", process, tmp_path / "prometheus.log", "prometheus")

    # Prometheus hands new targets to its scrapers after up to 5 s: wait for the first scrape of
    # the gateway, so every epoch below lands in a scrape of its own.
    wait_value(prometheus, 'up{job="pushgateway"}', 1)

    # The training loop: three epochs of three steps, each step a histogram window.
    histogram = EnergyHistogram(
        cpu_indices=[], gpu_indices=[0], pushgateway_url=gateway, job="train_histogram",
        gpu_bucket_range=[50.0, 100.0, 200.0, 500.0],
    )
    counter = EnergyCumulativeCounter(
        cpu_indices=[], gpu_indices=[0], update_period=0.3, pushgateway_url=gateway, job="train_counter"
    )
    gauge = PowerGauge(gpu_indices=[0], update_period=0.3, pushgateway_url=gateway, job="train_power")
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[])
    monitor.begin_window("train")
    counter.begin_window("train")
    gauge.begin_window("train")
    step_energy: List[float] = []
    for epoch in range(3):
        for step in range(3):
            histogram.begin_window("step")
            time.sleep(0.05 + 0.15 * step)  # ~17 J, ~70 J, ~122 J at 350 W
            step_energy.append(histogram.end_window("step").gpu_energy[0])
        time.sleep(1.2)  # a scrape between epochs: the graph shows the counts climbing
    counter.end_window("train")
    gauge.end_window("train")
    reference = monitor.end_window("train").gpu_energy[0]

    # The histogram: count, sum and buckets equal the windows the loop measured.
    selector = '{job="train_histogram",window="step",index="0"}'
    wait_value(prometheus, f"energy_monitor_gpu_energy_joules_count{selector}", 9)
    wait_value(prometheus, f"energy_monitor_gpu_energy_joules_sum{selector}", sum(step_energy))
    for bound in (50.0, 100.0, 200.0):
        below = sum(1 for e in step_energy if e <= bound)
        bucket = selector[:-1] + f',le="{bound:g}"}}'
        assert query(prometheus, f"energy_monitor_gpu_energy_joules_bucket{bucket}"), bucket
        wait_value(prometheus, f"energy_monitor_gpu_energy_joules_bucket{bucket}", below)
    assert 0 < sum(1 for e in step_energy if e <= 50.0) < 9  # the buckets split the steps

    # The counter: what the object counted, and within 2 % of a ZeusMonitor window around it.
    counted = counter.gpu_energy("train", 0)
    assert counted == pytest.approx(reference, rel=0.02)
    wait_value(prometheus, 'energy_monitor_gpu_energy_joules_total{job="train_counter",window="train",index="0"}', counted)

    # The gauge: the fake GPU's draw.
    wait_value(prometheus, 'power_monitor_gpu_power_watts{job="train_power",window="train",index="0"}', 350.0)

    # zeus exporter, scraped by the same Prometheus: the same GPU's power, and a growing counter.
    wait_value(prometheus, 'zeus_gpu_power_watts{job="zeus_exporter",gpu="0"}', 350.0)
    first = wait_value(prometheus, 'zeus_gpu_energy_joules_total{job="zeus_exporter",gpu="0"}')
    deadline = time.monotonic() + 10
    while wait_value(prometheus, 'zeus_gpu_energy_joules_total{job="zeus_exporter",gpu="0"}') <= first:
        assert time.monotonic() < deadline, "the exporter's energy counter did not grow in Prometheus"
        time.sleep(0.25)

    # The histogram in Prometheus's graph page, through headless Chromium.
    out = Path(os.environ["ZEUS_BUILD_DIR"]) / "test-output"
    out.mkdir(parents=True, exist_ok=True)
    shot = out / "prometheus_histogram.png"
    shot.unlink(missing_ok=True)
    expr = "energy_monitor_gpu_energy_joules_bucket{job=\"train_histogram\",window=\"step\"}"
    page = f"{prometheus}/graph?" + urllib.parse.urlencode(
        {"g0.expr": expr, "g0.tab": "0", "g0.range_input": "12s", "g0.stacked": "0"}
    )
    browser.open(page)
    # Debian's Prometheus serves the classic UI (Rickshaw): one legend line per bucket, and
    # the drawn lines as SVG paths.
    browser.wait_for("document.querySelectorAll('.rickshaw_legend li').length >= 5 && "
                     "Array.from(document.querySelectorAll('.rickshaw_graph svg path'))"
                     ".filter(p => (p.getAttribute('d') || '').length > 20).length >= 5",
                     timeout=20, what="the graph and its legend (one line per bucket)")
    legend = browser.evaluate("Array.from(document.querySelectorAll('.rickshaw_legend li'))"
                              ".map(li => li.textContent).join('\\n')")
    for bound in ("50", "100", "200", "500", "+Inf"):
        assert f'le="{bound}"' in legend, legend
    time.sleep(0.5)  # the lines are drawn: let the page paint them
    browser.screenshot(str(shot))
    assert shot.read_bytes()[:4] == b"\x89PNG"
