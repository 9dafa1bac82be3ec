"""Upstream's `zeus.utils.zeusd.ZeusdClient` and `require_capabilities`, typed as its users type
them with `zeus` replaced by `zeus_cpp` (issue 37), against a real zeusd on the fake NVML and a
fake RAPL tree: over the Unix socket, and over TCP with bearer tokens from `zeusd token issue`."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from conftest import fake_device

from zeus_cpp.device.exception import ZeusdError
from zeus_cpp.utils.zeusd import (
    CpuEnergyResult,
    CpuInfo,
    GpuInfo,
    GpuPowerSnapshot,
    ZeusdAuthError,
    ZeusdCapabilityError,
    ZeusdClient,
    ZeusdConfig,
    ZeusdConnectionError,
    require_capabilities,
)

ZEUSD = f"{os.environ['ZEUS_BIN']}/zeusd"


class Daemon:
    """zeusd on a socket and loopback TCP with a signing key, in a private directory."""

    def __init__(self, directory: Path, *extra: str) -> None:
        self.dir = directory
        self.sock = str(directory / "zeusd.sock")
        self.key = directory / "signing.key"
        self.key.write_bytes(os.urandom(32))
        self.key.chmod(0o600)
        log = open(directory / "zeusd.log", "w+")
        self.proc = subprocess.Popen(
            [ZEUSD, "serve", "--socket-path", self.sock, "--mode", "both", "--tcp-bind-address", "127.0.0.1:0",
             "--signing-key-path", str(self.key), "--lease-journal", "none", "--allow", "gpu-read=*",
             "--allow", "cpu-read=*", *extra],
            stdout=subprocess.DEVNULL, stderr=log)
        for _ in range(200):
            log.seek(0)
            m = re.search(r"on 127\.0\.0\.1:(\d+)", log.read())
            if m:
                self.port = int(m.group(1))
                return
            time.sleep(0.05)
        raise AssertionError("zeusd did not start: " + (directory / "zeusd.log").read_text())

    def token(self, *scopes: str) -> str:
        done = subprocess.run([ZEUSD, "token", "issue", "--signing-key-path", str(self.key), "--user", "alice",
                               *[a for s in scopes for a in ("--scope", s)], "--expires", "1h"],
                              capture_output=True, text=True, check=True)
        return done.stdout.strip().split()[-1]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=10)


@pytest.fixture
def daemon(fake_nvml, powercap):
    directory = Path(tempfile.mkdtemp(prefix="zc", dir="/tmp"))
    fake_nvml.write([fake_device(power_draw_w=300, uuid="GPU-c-0"), fake_device(power_draw_w=200, uuid="GPU-c-1")])
    d = Daemon(directory)
    yield d
    d.stop()
    shutil.rmtree(directory, ignore_errors=True)


def test_socket_client_discovers_and_reads_typed_results(daemon, fake_nvml):
    # With a signing key every route but /discover and /time needs a token, on the socket too
    # (where the allow-list applies as well), as upstream's zeusd.
    without = ZeusdClient(ZeusdConfig.uds(daemon.sock))
    assert without.auth_required is True and "no token was provided" in without.auth_error
    client = ZeusdClient(ZeusdConfig.uds(daemon.sock, token=daemon.token("gpu-read", "gpu-control", "cpu-read")))
    assert client.endpoint == daemon.sock
    assert client.gpu_ids == [0, 1] and client.cpu_ids == [0]
    assert all(isinstance(g, GpuInfo) for g in client.gpus) and client.gpus[0].name == "NVIDIA H100 80GB HBM3"
    assert client.cpus == [CpuInfo(id=0, dram_available=True)] and client.dram_available == [True]
    assert client.auth_error is None and client.granted_scopes == frozenset({"gpu-read", "gpu-control", "cpu-read"})
    require_capabilities(client, read_gpu=True, control_gpu=True, read_cpu=True, gpu_ids=[0, 1], cpu_ids=[0])
    power = client.get_gpu_power()
    assert isinstance(power, GpuPowerSnapshot) and power.power_mw == {0: 300000, 1: 200000}
    assert abs(power.timestamp_ms / 1000 - time.time()) < 5
    assert client.get_power_limit([1]) == {1: 700000}
    assert client.get_power_limit_constraints() == {0: (200000, 700000), 1: (200000, 700000)}
    assert client.get_persistence_mode([0]) == {0: False}
    energy = client.get_cpu_energy([0])
    assert isinstance(energy[0], CpuEnergyResult) and energy[0].cpu_energy_uj >= 1_000_000
    assert client.get_cpu_energy([0], dram=False)[0].dram_energy_uj is None
    assert abs(client.get_time() - time.time()) < 5
    # Root (this test) may change GPUs on the socket; the change is leased to this process.
    client.set_power_limit([0], 300000)
    assert client.get_power_limit([0]) == {0: 300000}
    client.set_gpu_locked_clocks([0], 1005, 1005)
    client.reset_locked_clocks([0])
    with pytest.raises(ZeusdError, match="Failed to set_power_limit"):
        client.set_power_limit([0], 5)  # below the GPU's range: zeusd's 400 with its message
    with pytest.raises(ZeusdError, match="Failed to get_power_limit"):
        client.get_power_limit([7])


def test_tcp_tokens_decide_the_capabilities(daemon):
    reader = ZeusdClient(ZeusdConfig.tcp("127.0.0.1", daemon.port, token=daemon.token("gpu-read")))
    assert reader.auth_required is True and reader.auth_error is None
    assert reader.granted_scopes == frozenset({"gpu-read"})
    assert reader.can_read_gpu and not reader.can_control_gpu and not reader.can_read_cpu
    require_capabilities(reader, read_gpu=True, gpu_ids=[0, 1])
    with pytest.raises(ZeusdCapabilityError) as raised:
        require_capabilities(reader, control_gpu=True, read_cpu=True, gpu_ids=[0, 5])
    text = str(raised.value)
    assert "Token lacks required scope 'gpu-control'" in text and "'cpu-read'" in text
    assert "GPU indices [5] not available (available: [0, 1])" in text
    assert reader.get_gpu_power([1]).power_mw == {1: 200000}
    with pytest.raises(ZeusdError, match="Failed to set_power_limit"):
        reader.set_power_limit([0], 300000)  # 403: the token has no gpu-control

    anonymous = ZeusdClient(ZeusdConfig.tcp("127.0.0.1", daemon.port))
    assert anonymous.auth_error is not None and "no token was provided" in anonymous.auth_error
    with pytest.raises(ZeusdAuthError):
        require_capabilities(anonymous, read_gpu=True)
    forged = ZeusdClient(ZeusdConfig.tcp("127.0.0.1", daemon.port, token="a.b.c"))
    assert forged.auth_error is not None and forged.auth_error.startswith("Token rejected")


def test_the_environment_configures_the_client(daemon, monkeypatch):
    monkeypatch.delenv("ZEUSD_SOCK_PATH", raising=False)
    monkeypatch.delenv("ZEUSD_HOST_PORT", raising=False)
    with pytest.raises(ZeusdConnectionError, match="No Zeusd connection configured"):
        ZeusdClient()
    monkeypatch.setenv("ZEUSD_HOST_PORT", f"127.0.0.1:{daemon.port}")
    monkeypatch.setenv("ZEUSD_TOKEN", daemon.token("gpu-read", "cpu-read"))
    client = ZeusdClient()
    assert client.endpoint == f"127.0.0.1:{daemon.port}"
    assert client.granted_scopes == frozenset({"gpu-read", "cpu-read"})
    require_capabilities(client, read_gpu=True, read_cpu=True, cpu_ids=[0])


def test_unreachable_daemon_is_a_connection_error(tmp_path):
    with pytest.raises(ZeusdConnectionError, match="Cannot reach Zeusd"):
        ZeusdClient(ZeusdConfig.uds(str(tmp_path / "none.sock")))
