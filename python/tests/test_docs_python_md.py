"""docs/python.md is a how-to whose every Python block runs as printed on the fake GPU (issue 48,
item 5): each block in a fresh interpreter, in an empty folder, with `ZEUS_FAKE_GPU=1` and no
other fake configured (as a newcomer with only the wheel). A block after `<!-- docs-test:
memory-rail -->` runs after `python -m zeus_cpp.fake_gpu --memory-power-w 60`'s exports; one after
`<!-- docs-test: zeusd -->` against a zeusd this test starts (its socket in place of
/tmp/zeusd.sock). The outputs the page prints in its comments are checked where they are exact."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

DOC = Path(os.environ["ZEUS_SOURCE_DIR"]) / "docs" / "python.md"
BLOCK = re.compile(r"(?:<!-- docs-test: (?P<mode>[\w-]+) -->\n)?```python\n(?P<code>.*?)```", re.S)

# What each block prints (a distinctive line of its code -> lines its output must contain).
EXPECTED = {
    'monitor.begin_window("training")': [r"^1\.0\d s, 3[45]\d J on GPU 0, 3[45]\d J on all GPUs$"],
    "power = PowerMonitor(gpu_indices=[0], update_period=0.1)\ntemperature": [
        r"^\['device_instant', 'device_average'\]$", r"^\{0: 45\}$"],
    'get_power_timeline("memory_average"': [r"^\(\d+\.\d+, 60\.0\)$"],
    "GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy()": [
        r"^\[700, 600, 500, 400, 300, 200\]$", r"^Done\(optimal_power_limit=300000\)$"],
    "class LowestWithin10Percent": [r"^250$"],
    "BatchSizeOptimizer(": [r"^(32|64|128) 3$"],
    "ZeusdClient(ZeusdConfig.uds": [r"^\[0\] True$", r"^\{0: 300000\}$"],
    "except ZeusGPUInvalidArgError": [r"^no window named 'never begun' is open", r"^power limit 1000 W is outside"],
}


def blocks():
    found = [(m.group("mode"), m.group("code")) for m in BLOCK.finditer(DOC.read_text())]
    assert len(found) >= 8, f"{DOC} has {len(found)} Python blocks"
    return found


def base_env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ZEUS_NVML_PATH", "ZEUS_FAKE_NVML_STATE", "ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT")}
    env["ZEUS_FAKE_GPU"] = "1"
    return env


def start_zeusd(folder: Path) -> "tuple[subprocess.Popen, Path]":
    sock = folder / "zeusd.sock"
    env = {k: v for k, v in os.environ.items() if k != "ZEUS_FAKE_NVML_STATE"}
    env["ZEUS_NVML_PATH"] = str(Path(os.environ["ZEUS_BUILD_DIR"]) / "fakes" / "libnvidia-ml.so.1")
    log = open(folder / "zeusd.log", "w")
    process = subprocess.Popen([f"{os.environ['ZEUS_BIN']}/zeusd", "serve", "--socket-path", str(sock),
                                "--socket-permissions", "0666", "--lease-journal", "none",
                                "--allow", "gpu-read=*"], stdout=subprocess.DEVNULL, stderr=log, env=env)
    for _ in range(200):
        if sock.exists():
            return process, sock
        time.sleep(0.05)
    process.kill()
    raise AssertionError("zeusd did not start: " + (folder / "zeusd.log").read_text())


@pytest.mark.parametrize("index", range(len(BLOCK.findall(DOC.read_text()))))
def test_every_python_block_of_python_md_runs_on_the_fake_gpu(index, tmp_path):
    mode, code = blocks()[index]
    env = base_env()
    zeusd = None
    if mode == "memory-rail":
        exports = subprocess.run([sys.executable, "-m", "zeus_cpp.fake_gpu", "--memory-power-w", "60",
                                  "--state", str(tmp_path / "state.json")], env=env, capture_output=True,
                                 text=True, check=True).stdout
        for line in exports.splitlines():
            key, value = line.removeprefix("export ").split("=", 1)
            env[key] = value.strip("'")
    elif mode == "zeusd":
        zeusd, sock = start_zeusd(tmp_path)
        code = code.replace("/tmp/zeusd.sock", str(sock))
    else:
        assert mode is None, f"unknown docs-test mode {mode!r}"
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120)
    finally:
        if zeusd is not None:
            zeusd.send_signal(signal.SIGTERM)
            zeusd.wait(timeout=10)
    assert done.returncode == 0, f"block {index} of {DOC}:\n{code}\nstderr:\n{done.stderr}"
    checks = [patterns for key, patterns in EXPECTED.items() if key in code]
    assert len(checks) <= 1, f"block {index} matches several EXPECTED keys"
    for pattern in (checks[0] if checks else []):
        assert re.search(pattern, done.stdout, re.M), f"block {index}: {pattern!r} not in:\n{done.stdout}"


def test_every_block_with_an_exact_output_is_checked():
    codes = [code for _, code in blocks()]
    for key in EXPECTED:
        assert any(key in code for code in codes), f"no block of {DOC} contains {key!r}"
