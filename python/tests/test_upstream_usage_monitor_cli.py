"""`python -m zeus_cpp.monitor energy|power` as upstream's `python -m zeus.monitor` is used: the same
options, Ctrl-C to stop, and the same output (upstream: zeus/monitor/__main__.py), on the fake
NVML (GPU 0 draws 350 W, GPU 1 120 W)."""

from __future__ import annotations

import ast
import inspect
import io
import os
import re
import select
import signal
import subprocess
import sys
import time
from datetime import datetime

import pytest

from zeus_cpp.monitor.__main__ import energy, power, pretty_text
from zeus_cpp.monitor.energy import Measurement

from conftest import fake_device

CLI = [sys.executable, "-m", "zeus_cpp.monitor"]

# Runs the CLI exactly as `python -m zeus_cpp.monitor ARGS` does, but says on stderr when it is
# asleep waiting for Ctrl-C (energy prints nothing before), so the test knows when to press it.
ANNOUNCED = r"""
import runpy, sys, time
real_sleep = time.sleep
def announcing_sleep(seconds):
    if seconds > 3600:
        print("WAITING", file=sys.stderr, flush=True)
    real_sleep(seconds)
time.sleep = announcing_sleep
sys.argv = ["python -m zeus_cpp.monitor", *sys.argv[1:]]
runpy.run_module("zeus_cpp.monitor", run_name="__main__", alter_sys=True)
"""

MEASUREMENT = re.compile(
    r"Measurement\(\n    time=(?P<time>[0-9.e+-]+),\n    gpu_energy=(?P<gpu>\{[^\n]*\}),\n"
    r"    cpu_energy=None,\n    dram_energy=None,\n    soc_energy=None\n\)\n$")


@pytest.fixture
def two_gpus(fake_nvml):
    fake_nvml.write([fake_device(power_draw_w=350), fake_device(power_draw_w=120)])
    return fake_nvml


def cli_env():
    env = dict(os.environ, PYTHONUNBUFFERED="1", COLUMNS="80")
    env.pop("FORCE_COLOR", None)
    return env


def start(args):
    """The CLI process with unbuffered binary pipes (so nothing read early is lost to a buffer)."""
    return subprocess.Popen(args, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)


def wait_for(stream, pattern: str, timeout_s: float = 60.0) -> str:
    """Reads the pipe until what came contains `pattern` (and ends a line); what was read."""
    seen, deadline = b"", time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], 0.2)
        if ready:
            chunk = os.read(stream.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
            text = seen.decode()
            if pattern in text and text.endswith("\n"):
                return text
    raise AssertionError(f"{pattern!r} never came; read {seen!r}")


def interrupt(process: subprocess.Popen, after_s: float):
    """Ctrl-C after `after_s` seconds; (stdout, stderr) once it exited."""
    time.sleep(after_s)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    out, err = out.decode(), err.decode()
    assert process.returncode == 0, (out, err)
    return out, err


def test_help_shows_upstreams_subcommands_and_options():
    done = subprocess.run([*CLI, "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m zeus_cpp.monitor [-h] {energy,power} ...")
    assert "Zeus Monitor CLI" in done.stdout
    power_help = subprocess.run([*CLI, "power", "--help"], capture_output=True, text=True, timeout=60)
    assert power_help.returncode == 0, power_help.stderr
    text = " ".join(power_help.stdout.split())
    for option in ("--gpu-indices GPU_INDICES [GPU_INDICES ...]", "--update-period UPDATE_PERIOD",
                   "--power-domain {device_instant,device_average,memory_average}"):
        assert option in text
    energy_help = subprocess.run([*CLI, "energy", "--help"], capture_output=True, text=True, timeout=60)
    assert "--gpu-indices" in energy_help.stdout and "--update-period" not in energy_help.stdout


@pytest.mark.parametrize("args, message", [
    ([], "the following arguments are required: subcommand"),
    (["power", "--power-domain", "package"], "invalid choice: 'package'"),
    (["energy", "--gpu-indices", "zero"], "invalid int value: 'zero'"),
])
def test_bad_command_lines_are_usage_errors(args, message):
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert message in done.stderr


def test_python_functions_keep_upstreams_signatures():
    assert [(p.name, p.default) for p in inspect.signature(energy).parameters.values()] == [
        ("gpu_indices", None)]
    assert [(p.name, p.default) for p in inspect.signature(power).parameters.values()] == [
        ("gpu_indices", None), ("update_period", 1.0), ("power_domain", "device_instant")]


def test_energy_prints_the_measurement_on_ctrl_c(two_gpus):
    process = start([sys.executable, "-c", ANNOUNCED, "energy"])
    wait_for(process.stderr, "WAITING")
    started = time.monotonic()
    out, _ = interrupt(process, 1.5)
    elapsed = time.monotonic() - started
    match = MEASUREMENT.fullmatch(out)
    assert match, out
    window_s = float(match["time"])
    assert 1.4 < window_s < elapsed + 0.5
    gpu = ast.literal_eval(match["gpu"])
    assert list(gpu) == [0, 1]
    assert gpu[0] / window_s == pytest.approx(350, rel=0.05)
    assert gpu[1] / window_s == pytest.approx(120, rel=0.05)


def test_energy_measures_only_the_gpus_asked_for(two_gpus):
    process = start([sys.executable, "-c", ANNOUNCED, "energy", "--gpu-indices", "1"])
    wait_for(process.stderr, "WAITING")
    out, _ = interrupt(process, 0.5)
    match = MEASUREMENT.fullmatch(out)
    assert match, out
    gpu = ast.literal_eval(match["gpu"])
    assert list(gpu) == [1] and gpu[1] / float(match["time"]) == pytest.approx(120, rel=0.05)


def parse_power_output(out: str):
    """(per-period readings [(datetime, {"GPU0": W, ...})], total time s, total energy)."""
    lines = out.split("\n")
    readings = []
    index = 0
    while index < len(lines) and lines[index]:
        stamp = datetime.strptime(lines[index], "%Y-%m-%d %H:%M:%S.%f" if "." in lines[index] else "%Y-%m-%d %H:%M:%S")
        readings.append((stamp, ast.literal_eval(lines[index + 1])))
        index += 2
    assert lines[index] == "", out  # the "\n" that starts "\nTotal time (s):"
    total = re.fullmatch(r"Total time \(s\): ([0-9.e+-]+)", lines[index + 1])
    assert total, out
    assert lines[index + 2] == "Total energy (J):", out
    energy_j = ast.literal_eval(lines[index + 3])
    assert lines[index + 4:] == [""], out
    return readings, float(total.group(1)), energy_j


def test_power_prints_each_period_then_time_and_energy_on_ctrl_c(two_gpus):
    process = start([*CLI, "power", "--update-period", "0.2"])
    first = wait_for(process.stdout, "{'GPU0'")
    out, err = interrupt(process, 1.5)
    readings, total_s, energy_j = parse_power_output(first + out)
    assert len(readings) >= 5, out
    for _, watts in readings:
        assert watts == {"GPU0": 350.0, "GPU1": 120.0}
    gaps = [(b - a).total_seconds() for (a, _), (b, _) in zip(readings, readings[1:])]
    assert all(0.15 < gap < 2.0 for gap in gaps), gaps  # one line per --update-period
    assert total_s > 1.5
    assert list(energy_j) == ["GPU0", "GPU1"]
    # Integrated over the samples inside [start, Ctrl-C]: at most the whole span, at least
    # all but its first and last sampling periods (with slack for a loaded machine).
    for name, watts in (("GPU0", 350), ("GPU1", 120)):
        assert watts * (total_s - 1.0) * 0.95 < energy_j[name] <= watts * total_s * 1.02, (name, energy_j)


def test_power_in_another_domain_and_on_chosen_gpus(two_gpus):
    process = start([*CLI, "power", "--gpu-indices", "1", "--update-period", "0.2",
                     "--power-domain", "device_average"])
    first = wait_for(process.stdout, "{'GPU1'")
    out, _ = interrupt(process, 0.8)
    readings, _, energy_j = parse_power_output(first + out)
    assert readings and all(set(watts) == {"GPU1"} for _, watts in readings)
    assert list(energy_j) == ["GPU1"] and energy_j["GPU1"] > 0


def test_a_domain_the_gpus_lack_is_a_clear_error(two_gpus):
    done = subprocess.run([*CLI, "power", "--power-domain", "memory_average"], capture_output=True,
                          text=True, timeout=60, env=cli_env())
    assert done.returncode == 1
    assert "memory_average" in done.stderr and "device_instant" in done.stderr
    assert "Traceback" not in done.stderr


OUTPUTS = [
    (Measurement(12.5, {0: 4375.0, 1: 1500.0}),),
    (Measurement(3.25, {i: 123456.789 + i for i in range(8)}, {0: 91.5, 1: 88.25}, {0: 9.0, 1: 8.5}),),
    (datetime(2025, 1, 2, 3, 4, 5, 678901), {"GPU0": 350.0, "GPU1": 120.0}),
    ("\nTotal time (s):", 12.3456789),
    ("Total energy (J):", {f"GPU{i}": 1234567.891 for i in range(8)}),
]


@pytest.mark.parametrize("objects", OUTPUTS, ids=["measurement", "long-measurement", "reading",
                                                   "total-time", "long-energy"])
def test_without_rich_the_text_is_richs(objects):
    rich = pytest.importorskip("rich")
    buffer = io.StringIO()
    rich.print(*objects, file=buffer)
    assert pretty_text(*objects, width=80) + "\n" == buffer.getvalue()


def test_without_rich_the_cli_prints_the_same_layout(monkeypatch, capsys):
    from zeus_cpp.monitor import __main__ as cli

    monkeypatch.setitem(sys.modules, "rich", None)  # "import rich" fails
    cli._print(Measurement(1.5, {0: 525.0}))
    assert capsys.readouterr().out == (
        "Measurement(\n    time=1.5,\n    gpu_energy={0: 525.0},\n    cpu_energy=None,\n"
        "    dram_energy=None,\n    soc_energy=None\n)\n")
    cli._print("Total energy (J):", {"GPU0": 525.0})
    assert capsys.readouterr().out == "Total energy (J):\n{'GPU0': 525.0}\n"
