"""One lease rule for everything zeus_cpp does (issue 48, item 3): `ZeusdClient`'s changes over TCP
go through a lease session, so zeusd undoes them when the Python process exits (normally, or
killed: after the session timeout), as on the Unix socket and as `zeus_cpp.device.get_gpus()`'s.
`ZeusdClient(..., persist=True)` keeps upstream's semantics (the change persists). A real zeusd
over loopback TCP with a signing key, on the fake NVML (limits 200..700 W, 700 W at start)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import fake_device
from test_upstream_usage_zeusd_client import Daemon

from zeus_cpp.device.exception import ZeusdError
from zeus_cpp.utils.zeusd import ZeusdClient, ZeusdConfig


@pytest.fixture
def daemon(fake_nvml):
    directory = Path(tempfile.mkdtemp(prefix="zl", dir="/tmp"))
    fake_nvml.write([fake_device(power_draw_w=300, uuid="GPU-l-0"), fake_device(power_draw_w=200, uuid="GPU-l-1")])
    d = Daemon(directory, "--lease-session-timeout", "1", "--log-level", "info")
    yield d
    d.stop()
    shutil.rmtree(directory, ignore_errors=True)


def run_client(daemon, body: str, *, token_scopes=("gpu-read", "gpu-control"), wait=True):
    """Runs `body` in a new Python with `client` (a ZeusdClient over TCP) defined."""
    token = daemon.token(*token_scopes)
    code = textwrap.dedent(f"""
        import sys
        from zeus_cpp.utils.zeusd import ZeusdClient, ZeusdConfig
        config = ZeusdConfig.tcp("127.0.0.1", {daemon.port}, token={token!r})
        client = ZeusdClient(config)
    """) + textwrap.dedent(body)
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    if not wait:
        return process
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    return out


def leases(daemon) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{daemon.port}/leases",
                                     headers={"Authorization": f"Bearer {daemon.token('gpu-read')}"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def test_tcp_change_is_undone_when_the_python_process_exits(daemon, fake_nvml):
    out = run_client(daemon, """
        client.set_power_limit([0], 250_000)
        client.set_gpu_locked_clocks([1], 1005, 1005)
        assert client.get_power_limit([0]) == {0: 250_000}
        print(client.lease_session)
    """)
    assert len(out.strip()) == 32, out  # a lease session's id
    # The process has exited: its session was closed at exit, and zeusd restored both changes.
    assert fake_nvml.limit_w(0) == 700
    assert fake_nvml.read()["devices"][1]["locked_sm_clocks_mhz"] is None
    assert leases(daemon)["persistent"] == [] and leases(daemon)["sessions"] == []
    log = (daemon.dir / "zeusd.log").read_text()
    assert "not restored when the caller goes away" not in log, log


def test_a_dropped_client_keeps_its_change_until_the_process_exits(daemon, fake_nvml):
    # The upstream one-liner: the client object is gone at once, the change stays till exit.
    process = run_client(daemon, """
        ZeusdClient(config).set_power_limit([0], 300_000)
        import gc; gc.collect()
        print("set", flush=True)
        sys.stdin.readline()
    """, wait=False)
    assert process.stdout.readline().strip() == "set", process.stderr.read()
    time.sleep(2.5)  # past two session timeouts: the heartbeats keep it
    assert fake_nvml.limit_w(0) == 300
    assert len(leases(daemon)["sessions"]) == 1
    process.kill()  # SIGKILL: no atexit; zeusd ends the silent session after its 1 s timeout
    process.wait(timeout=10)
    for _ in range(100):
        if fake_nvml.limit_w(0) == 700:
            break
        time.sleep(0.05)
    assert fake_nvml.limit_w(0) == 700
    assert "went silent: restore power limit 700000 mW" in (daemon.dir / "zeusd.log").read_text()


def test_persist_keeps_upstreams_semantics_over_tcp(daemon, fake_nvml):
    out = run_client(daemon, """
        persistent = ZeusdClient(config, persist=True)
        persistent.set_power_limit([1], 400_000)
        print(persistent.persist, persistent.lease_session)
    """)
    assert out.split() == ["True", "None"]
    assert fake_nvml.limit_w(1) == 400  # still set after the process exited
    listed = leases(daemon)["persistent"]
    assert [(e["gpu"], e["subject"]) for e in listed] == [(1, "alice")], listed
    with pytest.raises(TypeError):
        ZeusdClient(ZeusdConfig.tcp("127.0.0.1", daemon.port), persist="yes")


def test_close_lease_session_restores_now_and_the_next_change_opens_another(daemon, fake_nvml):
    client = ZeusdClient(ZeusdConfig.tcp("127.0.0.1", daemon.port, token=daemon.token("gpu-read", "gpu-control")))
    assert client.lease_session is None  # reads open none
    client.get_power_limit([0])
    assert client.lease_session is None
    client.set_power_limit([0], 350_000)
    first = client.lease_session
    assert first and fake_nvml.limit_w(0) == 350
    client.close_lease_session()
    assert client.lease_session is None and fake_nvml.limit_w(0) == 700
    client.set_power_limit([0], 360_000)
    assert client.lease_session not in (None, first) and fake_nvml.limit_w(0) == 360
    client.close_lease_session()
    assert fake_nvml.limit_w(0) == 700


def test_a_token_without_gpu_control_cannot_open_a_session(daemon):
    reader = ZeusdClient(ZeusdConfig.tcp("127.0.0.1", daemon.port, token=daemon.token("gpu-read")))
    with pytest.raises(ZeusdError, match="Failed to set_power_limit: cannot open a lease session") as raised:
        reader.set_power_limit([0], 300_000)
    assert "gpu-control" in str(raised.value)


def test_socket_changes_are_undone_at_exit_as_before(daemon, fake_nvml):
    token = daemon.token("gpu-read", "gpu-control")
    code = (f"from zeus_cpp.utils.zeusd import ZeusdClient, ZeusdConfig\n"
            f"c = ZeusdClient(ZeusdConfig.uds({daemon.sock!r}, token={token!r}))\n"
            f"c.set_power_limit([0], 280_000)\nassert c.lease_session is None\n"
            f"assert c.get_power_limit([0]) == {{0: 280_000}}\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ})
    assert done.returncode == 0, done.stderr
    for _ in range(100):
        if fake_nvml.limit_w(0) == 700:
            break
        time.sleep(0.05)
    assert fake_nvml.limit_w(0) == 700


def test_get_gpus_over_tcp_keeps_its_change_until_exit_too(daemon, fake_nvml):
    token = daemon.token("gpu-read", "gpu-control")
    code = textwrap.dedent("""
        import gc, sys
        from zeus_cpp.device import get_gpus
        get_gpus().set_power_management_limit(0, 320_000)   # the GPUs object is dropped at once
        gc.collect()
        print("set", flush=True)
        sys.stdin.readline()
    """)
    env = {**os.environ, "ZEUSD_HOST_PORT": f"127.0.0.1:{daemon.port}", "ZEUSD_TOKEN": token}
    env.pop("ZEUSD_SOCK_PATH", None)
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    assert process.stdout.readline().strip() == "set", process.stderr.read()
    assert fake_nvml.limit_w(0) == 320  # not undone while the process lives
    process.stdin.write("\n")
    process.stdin.flush()
    assert process.wait(timeout=30) == 0, process.stderr.read()
    assert fake_nvml.limit_w(0) == 700  # undone at exit (the session closed), not after a timeout
