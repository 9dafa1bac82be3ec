"""Pushgateway addresses as upstream Zeus users give them, pushed to a real Pushgateway.

Upstream's metrics hand `pushgateway_url` to prometheus_client, which adds "http://" to an
address without an http(s) scheme: `pushgateway_url="localhost:9091"` is a plain-HTTP gateway.
Here the three metric classes push to Debian's `prometheus-pushgateway` on 127.0.0.1 (a free
port, its state in the test's temp folder) under each address form, and the pushed series are
read back from the gateway's /metrics; an https:// gateway (the Pushgateway's own TLS, with a
self-signed certificate trusted through ZEUS_CA_FILE) takes the same pushes; any other scheme
is a ValueError naming the accepted forms, and nothing reaches the gateway. A missing
prometheus-pushgateway or openssl fails the test (make deps installs them).
"""

from __future__ import annotations

import re
import shutil
import socket
import ssl
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Dict, Optional, Tuple

import pytest

import zeus_cpp
from zeus_cpp.metric import EnergyCumulativeCounter, EnergyHistogram, PowerGauge

SERIES = re.compile(r"^(\w+)\{([^}]*)\} (\S+)$")
ACCEPTED_FORMS = "host:port (http is assumed, as prometheus_client does), http://host:port or https://host:port"


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: install the Debian package '{name}' (make deps does)")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Gateway:
    """A private prometheus-pushgateway on 127.0.0.1 (plain HTTP, or TLS with `tls`)."""

    def __init__(self, tmp: Path, tls: Optional[Tuple[Path, Path]] = None) -> None:
        self.port = _free_port()
        argv = [_binary("prometheus-pushgateway"), f"--web.listen-address=127.0.0.1:{self.port}",
                # Debian's default persists to /var/lib/prometheus/pushgateway.data: keep it private.
                f"--persistence.file={tmp / 'pushgateway.data'}"]
        self.context: Optional[ssl.SSLContext] = None
        self.base = f"http://127.0.0.1:{self.port}"
        if tls is not None:
            cert, key = tls
            config = tmp / "web.yml"
            config.write_text(f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n")
            argv.append(f"--web.config.file={config}")
            self.context = ssl.create_default_context(cafile=str(cert))
            self.base = f"https://localhost:{self.port}"
        self.log = tmp / "pushgateway.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while True:
            if self.process.poll() is not None:
                pytest.fail(f"prometheus-pushgateway exited: {self.log.read_text()[-2000:]}")
            try:
                self.get("/-/ready")
                return
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"prometheus-pushgateway not ready: {self.log.read_text()[-2000:]}")
                time.sleep(0.1)

    def get(self, path: str) -> str:
        with urllib.request.urlopen(self.base + path, timeout=5, context=self.context) as answer:
            return answer.read().decode()

    def series(self, job: str) -> Dict[Tuple[str, str, str], float]:
        """(metric name, window, index) -> value of every series the gateway holds for `job`."""
        found = {}
        for line in self.get("/metrics").splitlines():
            match = SERIES.match(line)
            if not match:
                continue
            labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2)))
            if labels.get("job") == job:
                found[(match.group(1), labels.get("window"), labels.get("index"))] = float(match.group(3))
        return found

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def gateway(tmp_path: Path):
    g = Gateway(tmp_path)
    yield g
    g.stop()


def push_each_metric(address: str, job: str) -> Tuple[float, float]:
    """The three metrics, as upstream's docs use them; returns (histogram J, counter J)."""
    histogram = EnergyHistogram(cpu_indices=[], gpu_indices=[0], pushgateway_url=address,
                                job=job + "_histogram")
    assert histogram.pushgateway_url == address  # kept as given, as upstream
    histogram.begin_window("step")
    time.sleep(0.05)
    with pytest.warns(UserWarning):  # 350 W x 0.05 s is below the smallest default bucket
        measured = histogram.end_window("step")

    counter = EnergyCumulativeCounter(cpu_indices=[], gpu_indices=[0], update_period=0.1,
                                      pushgateway_url=address, job=job + "_counter")
    counter.begin_window("epoch")
    time.sleep(0.25)
    counter.end_window("epoch")

    gauge = PowerGauge(gpu_indices=[0], update_period=0.1, pushgateway_url=address,
                       job=job + "_gauge")
    gauge.begin_window("epoch")
    time.sleep(0.15)
    gauge.end_window("epoch")
    return measured.gpu_energy[0], counter.gpu_energy("epoch", 0)


def assert_pushed(gateway: Gateway, job: str, histogram_j: float, counter_j: float) -> None:
    hist = gateway.series(job + "_histogram")
    assert hist[("energy_monitor_gpu_energy_joules_sum", "step", "0")] == pytest.approx(histogram_j)
    assert hist[("energy_monitor_gpu_energy_joules_count", "step", "0")] == 1.0
    counter = gateway.series(job + "_counter")
    assert counter[("energy_monitor_gpu_energy_joules_total", "epoch", "0")] == pytest.approx(counter_j)
    assert counter_j > 0
    gauge = gateway.series(job + "_gauge")
    assert gauge[("power_monitor_gpu_power_watts", "epoch", "0")] == 350.0  # the fake H100


@pytest.mark.parametrize("job, form", [
    ("ip_port", "127.0.0.1:{port}"),       # prometheus_client reads it as http://127.0.0.1:{port}
    ("name_port", "localhost:{port}"),     # upstream docs' form, with the scheme left out
    ("slash", "127.0.0.1:{port}/"),
    ("http", "http://127.0.0.1:{port}"),
    ("upper", "HTTP://127.0.0.1:{port}/"),  # the scheme is case-insensitive, as in urllib
])
def test_every_metric_pushes_to_the_address_forms_upstream_accepts(gateway, job, form):
    address = form.format(port=gateway.port)
    histogram_j, counter_j = push_each_metric(address, job)
    assert_pushed(gateway, job, histogram_j, counter_j)


@pytest.fixture
def tls_files(tmp_path: Path) -> Tuple[Path, Path]:
    """A self-signed certificate for localhost and its key."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    done = subprocess.run(
        [_binary("openssl"), "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return cert, key


def test_an_https_gateway_keeps_working(tmp_path, tls_files, monkeypatch):
    tls = Gateway(tmp_path, tls=tls_files)
    try:
        monkeypatch.setenv("ZEUS_CA_FILE", str(tls_files[0]))
        histogram_j, counter_j = push_each_metric(f"https://localhost:{tls.port}", "tls")
        assert_pushed(tls, "tls", histogram_j, counter_j)
        # Plain HTTP (what host:port means) is not what a TLS gateway speaks: the push fails.
        gauge = PowerGauge(gpu_indices=[0], update_period=1, pushgateway_url=f"localhost:{tls.port}",
                           job="plain_to_tls")
        with pytest.raises(zeus_cpp.UnavailableError, match=f"http://localhost:{tls.port}"):
            gauge.begin_window("w")
    finally:
        tls.stop()


@pytest.mark.parametrize("address", ["ftp://127.0.0.1:{port}", "grpc://127.0.0.1:{port}",
                                     "unix:///run/pushgateway.sock", "tcp://127.0.0.1:{port}"])
def test_other_schemes_are_value_errors_naming_the_accepted_forms(gateway, address):
    address = address.format(port=gateway.port)
    scheme = address.split("://")[0]
    makers = [
        lambda: EnergyHistogram(cpu_indices=[], gpu_indices=[0], pushgateway_url=address, job="bad"),
        lambda: EnergyCumulativeCounter(cpu_indices=[], gpu_indices=[0], update_period=0.1,
                                        pushgateway_url=address, job="bad"),
        lambda: PowerGauge(gpu_indices=[0], update_period=0.1, pushgateway_url=address, job="bad"),
    ]
    for make in makers:
        with pytest.raises(ValueError) as raised:
            make()
        message = str(raised.value)
        assert isinstance(raised.value, zeus_cpp.InvalidArgumentError)
        assert f"pushgateway_url '{address}' uses the scheme '{scheme}'" in message
        assert ACCEPTED_FORMS in message
    assert gateway.series("bad") == {}


def test_malformed_and_empty_addresses_name_what_was_given(gateway):
    given = "127.0.0.1:notaport"
    with pytest.raises(ValueError) as raised:
        PowerGauge(gpu_indices=[0], update_period=0.1, pushgateway_url=given, job="bad")
    message = str(raised.value)
    assert f"pushgateway_url '{given}' (read as 'http://{given}')" in message
    assert "is not a Pushgateway URL" in message and ACCEPTED_FORMS in message
    with pytest.raises(ValueError, match="is empty: give host:port"):
        EnergyHistogram(cpu_indices=[], gpu_indices=[0], pushgateway_url="", job="bad")
    with pytest.raises(TypeError, match="pushgateway_url must be a str"):
        PowerGauge(gpu_indices=[0], update_period=0.1, pushgateway_url=9091, job="bad")
    # A path after the address is refused (prometheus_client would push below it).
    with pytest.raises(ValueError, match=re.escape(f"'127.0.0.1:{gateway.port}/push' (read as")):
        PowerGauge(gpu_indices=[0], update_period=0.1,
                   pushgateway_url=f"127.0.0.1:{gateway.port}/push", job="bad")
    # Errors that are not about the address stay as they were.
    with pytest.raises(ValueError, match="job name is empty") as raised:
        PowerGauge(gpu_indices=[0], update_period=0.1, pushgateway_url=f"127.0.0.1:{gateway.port}", job="")
    assert ACCEPTED_FORMS not in str(raised.value)
    assert gateway.series("bad") == {}
