"""zeus_cpp.monitor.PowerStreamingClient against a real zeusd (its own fake NVML state and fake
RAPL tree): upstream's reading shapes, iteration on updates, energy totals, reconnecting after the
daemon restarts, and clear errors for bad input."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from conftest import fake_device

import zeus_cpp
from zeus_cpp.monitor import PowerStreamingClient
from zeus_cpp.utils.zeusd import ZeusdConfig


def set_power(state: Path, watts: list[float]) -> None:
    """Rewrites the fake's state with these GPU powers (a new file: the fake reloads it)."""
    tmp = state.with_suffix(".tmp")
    tmp.write_text(json.dumps({"devices": [fake_device(power_draw_w=w, uuid=f"GPU-s-{i}") for i, w in enumerate(watts)]}))
    tmp.rename(state)


class Zeusd:
    """zeusd on a Unix socket (and loopback TCP) in a private directory."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.sock = str(directory / "zeusd.sock")
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def start(self) -> None:
        log = open(self.dir / "zeusd.log", "w+")
        self.proc = subprocess.Popen(
            [f"{os.environ['ZEUS_BIN']}/zeusd", "--socket", self.sock, "--tcp", "127.0.0.1:0",
             "--lease-journal", "none", "--allow", "gpu-read=*", "--allow", "cpu-read=*"],
            stdout=subprocess.DEVNULL, stderr=log)
        for _ in range(200):
            log.seek(0)
            m = re.search(r"on 127\.0\.0\.1:(\d+)", log.read())
            if m:
                self.port = int(m.group(1))
                return
            time.sleep(0.05)
        raise AssertionError("zeusd did not start: " + (self.dir / "zeusd.log").read_text())

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=10)


@pytest.fixture
def daemon(fake_nvml, powercap):
    directory = Path(tempfile.mkdtemp(prefix="zs", dir="/tmp"))
    set_power(fake_nvml.path, [300, 200])
    zeusd = Zeusd(directory)
    zeusd.start()
    yield zeusd
    zeusd.stop()
    shutil.rmtree(directory, ignore_errors=True)


def wait_until(predicate, timeout_s: float = 5.0) -> bool:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def test_readings_have_upstreams_shape_and_follow_changes(daemon, fake_nvml, powercap):
    # RAPL grows at 50 W (package) and 5 W (DRAM) while the client runs.
    stop = threading.Event()

    def put(zone: Path, uj: int) -> None:  # replaced whole, as a sysfs read never sees half a number
        (zone / "energy_uj.tmp").write_text(f"{uj}\n")
        (zone / "energy_uj.tmp").rename(zone / "energy_uj")

    def rapl():
        start = time.monotonic()
        while not stop.is_set():
            s = time.monotonic() - start
            put(powercap / "intel-rapl:0", 1_000_000 + int(s * 50e6))
            put(powercap / "intel-rapl:0" / "intel-rapl:0:0", 10_000 + int(s * 5e6))
            time.sleep(0.002)

    writer = threading.Thread(target=rapl)
    writer.start()
    try:
        with PowerStreamingClient([ZeusdConfig.uds(daemon.sock), ZeusdConfig.tcp("127.0.0.1", daemon.port, gpu_indices=[1], cpu_indices=[])]) as client:
            assert wait_until(lambda: len(client.get_power()) == 2 and 0 in client.get_power()[daemon.sock].cpu_power_w)
            readings = client.get_power()
            local = readings[daemon.sock]
            assert local.gpu_power_w == {0: 300.0, 1: 200.0}
            assert local.cpu_power_w[0].cpu_w == pytest.approx(50, rel=0.2)
            assert local.cpu_power_w[0].dram_w == pytest.approx(5, rel=0.2)
            assert abs(local.timestamp_s - time.time()) < 5
            remote = readings[f"127.0.0.1:{daemon.port}"]
            assert remote.gpu_power_w == {1: 200.0} and remote.cpu_power_w == {}

            set_power(fake_nvml.path, [300, 250])
            changed = time.time()
            for update in client:  # yields on each reading, until this change is seen
                if update[daemon.sock].gpu_power_w.get(1) == 250.0:
                    break
                assert time.time() - changed < 5, "the change never arrived"
            assert wait_until(lambda: client.get_power()[f"127.0.0.1:{daemon.port}"].gpu_power_w == {1: 250.0})
    finally:
        stop.set()
        writer.join()


def test_iteration_keeps_turning_while_the_power_holds(daemon):
    # On a GPU whose power never changes zeusd sends nothing but its
    # keep-alives; iteration yields the unchanged readings about once a second instead of hanging.
    with PowerStreamingClient([ZeusdConfig.uds(daemon.sock, cpu_indices=[])]) as client:
        assert wait_until(lambda: daemon.sock in client.get_power())
        deadline = threading.Timer(6.0, client.stop)  # ends a hung iteration
        deadline.start()
        seen = []
        for update in client:
            seen.append(update[daemon.sock].gpu_power_w)
            if len(seen) == 3:
                break
        deadline.cancel()
        assert seen == [{0: 300.0, 1: 200.0}] * 3, f"{len(seen)} yields in 6 s on a steady GPU"


def test_totals_integrate_energy_and_stop_while_the_daemon_is_down(daemon):
    endpoint = f"127.0.0.1:{daemon.port}"
    client = PowerStreamingClient([ZeusdConfig.tcp("127.0.0.1", daemon.port, cpu_indices=[])], reconnect_delay_s=0.2)
    try:
        assert wait_until(lambda: client.get_totals().nodes[endpoint].events >= 2)
        first = client.get_totals()
        time.sleep(1.0)
        second = client.get_totals()
        assert second.power_w == pytest.approx(500)
        elapsed = second.timestamp_s - first.timestamp_s
        assert second.energy_j - first.energy_j == pytest.approx(500 * elapsed, rel=0.01)
        node = second.nodes[endpoint]
        assert node.connected and node.reconnects == 0 and abs(node.clock_offset_s) < 0.5

        daemon.stop()  # the stream drops: the node is down, its energy stops growing
        assert wait_until(lambda: not client.get_totals().nodes[endpoint].connected)
        down = client.get_totals()
        assert down.power_w == 0
        time.sleep(0.5)
        assert client.get_totals().energy_j == pytest.approx(down.energy_j)
    finally:
        client.stop()


def test_reconnects_to_a_restarted_daemon_on_its_socket(daemon, fake_nvml):
    client = PowerStreamingClient([ZeusdConfig.uds(daemon.sock, cpu_indices=[])], reconnect_delay_s=0.2)
    try:
        assert wait_until(lambda: client.get_totals().power_w == pytest.approx(500))
        daemon.stop()
        assert wait_until(lambda: not client.get_totals().nodes[daemon.sock].connected)
        set_power(fake_nvml.path, [100, 100])
        daemon.start()
        assert wait_until(lambda: client.get_totals().power_w == pytest.approx(200), timeout_s=10)
        node = client.get_totals().nodes[daemon.sock]
        assert node.connected and node.reconnects >= 1
    finally:
        client.stop()


def test_bad_input_gets_clear_errors(daemon, tmp_path):
    with pytest.raises(ValueError, match="Duplicate server endpoints"):
        PowerStreamingClient([ZeusdConfig.uds(daemon.sock), ZeusdConfig.uds(daemon.sock)])
    with pytest.raises(zeus_cpp.UnavailableError, match="cannot reach zeusd"):
        PowerStreamingClient([ZeusdConfig.uds(str(tmp_path / "none.sock"))])
    with pytest.raises(ValueError, match="negative"):
        PowerStreamingClient([ZeusdConfig.uds(daemon.sock, gpu_indices=[-1])])
    with pytest.raises(ValueError, match="HOST:PORT"):
        PowerStreamingClient([ZeusdConfig(host_port="no-port")])
    # A GPU the daemon lacks: the stream is refused (400) and the node says why.
    client = PowerStreamingClient([ZeusdConfig.uds(daemon.sock, gpu_indices=[7], cpu_indices=[])])
    try:
        assert wait_until(lambda: "GPU 7 not found" in client.get_totals().nodes[daemon.sock].error)
    finally:
        client.stop()
