"""PowerMonitor's power domains and timelines and TemperatureMonitor over the fake NVML, with
upstream Zeus's names and return shapes (zeus.monitor.power / zeus.monitor.temperature)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import time

import pytest
import torch

import zeus_cpp
from zeus_cpp.monitor import PowerDomain, PowerMonitor, TemperatureMonitor, ZeusMonitor

from conftest import fake_device

ALL_DOMAINS = ["device_instant", "device_average", "memory_average"]


def _torch_loop(seconds: float) -> None:
    """A small CPU torch workload standing in for training."""
    a = torch.randn(128, 128)
    deadline = time.time() + seconds
    while time.time() < deadline:
        a = torch.tanh(a @ a)


def _is_timeline(timeline, value_type) -> bool:
    return isinstance(timeline, list) and all(
        isinstance(point, tuple) and len(point) == 2 and isinstance(point[0], float)
        and isinstance(point[1], value_type) for point in timeline)


def test_torch_loop_over_three_domains_and_temperature(fake_nvml):
    fake_nvml.write([fake_device(power_draw_w=300, memory_power_mw=60000, temperature_c=51)] * 2)
    power = PowerMonitor(update_period=0.1)
    temperature = TemperatureMonitor(update_period=0.5)
    try:
        assert power.measurement_domains == [PowerDomain(d) for d in ALL_DOMAINS]
        start = time.time()
        _torch_loop(0.6)
        end = time.time()
        timelines = power.get_all_power_timelines(start_time=start, end_time=end)
        # upstream's shape: domain name -> GPU index -> [(unix_s, W)]
        assert list(timelines) == ALL_DOMAINS
        for domain, per_gpu in timelines.items():
            assert list(per_gpu) == [0, 1]
            for timeline in per_gpu.values():
                assert _is_timeline(timeline, float) and timeline
                assert all(start <= t <= end for t, _ in timeline)
                expected = 60.0 if domain == "memory_average" else 300.0
                assert {w for _, w in timeline} == {expected}
        temperatures = temperature.get_temperature_timeline(start_time=start - 1, end_time=end)
        assert list(temperatures) == [0, 1]
        assert all(_is_timeline(t, int) and {c for _, c in t} == {51} for t in temperatures.values())
        assert temperature.get_temperature() == {0: 51, 1: 51}
        assert temperature.get_all_temperature_timelines() == temperature.get_temperature_timeline()
        # What the ML.ENERGY benchmark writes into results.json serialises as JSON.
        document = json.loads(json.dumps({"power": timelines, "temperature": temperatures}))
        assert set(document["power"]) == set(ALL_DOMAINS)
        assert document["power"]["memory_average"]["0"][0][1] == 60.0
        # The memory domain's energy over the loop is its share of the device's.
        device_j = power.get_energy(start, end)
        memory_j = power.get_energy(start, end, power_domain="memory_average")
        assert memory_j[0] / device_j[0] == pytest.approx(60 / 300, rel=0.02)
    finally:
        power.stop()
        temperature.stop()


def test_one_thread_samples_every_domain():
    before = len(os.listdir("/proc/self/task"))
    monitor = PowerMonitor(update_period=0.05, power_domains=["device_instant", "device_average"])
    try:
        assert len(os.listdir("/proc/self/task")) == before + 1
    finally:
        monitor.stop()


def test_signatures_match_upstream():
    """Parameter names and defaults of upstream's zeus.monitor.power/temperature (v0.16+).

    Checked against upstream's public source, ml-energy/zeus zeus/monitor/power.py and
    temperature.py at commit 75a8b93 (2026-08-20): get_power_timeline(power_domain, gpu_index,
    start_time, end_time) -> {gpu: [(unix_s, W)]}, get_all_power_timelines(gpu_index,
    start_time, end_time) -> {domain.value: that}, get_energy(start_time, end_time,
    power_domain), get_power(time, power_domain)."""
    def params(fn):
        return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()][1:]

    empty = inspect.Parameter.empty
    # Upstream's release parameters, in its positional order; then the CPU parameters of its CPU
    # power monitor branch (cpu_indices last, and cpu_index keyword-only, so that no upstream
    # positional call changes meaning).
    assert params(PowerMonitor.__init__) == [
        ("gpu_indices", None), ("update_period", None), ("max_samples_per_gpu", None),
        ("power_domains", None), ("cpu_indices", None)]
    assert params(PowerMonitor.get_power_timeline) == [
        ("power_domain", empty), ("gpu_index", None), ("start_time", None), ("end_time", None),
        ("cpu_index", None)]
    assert params(PowerMonitor.get_all_power_timelines) == [
        ("gpu_index", None), ("start_time", None), ("end_time", None), ("cpu_index", None)]
    assert [n for n, _ in params(PowerMonitor.get_energy)] == [
        "start_time", "end_time", "power_domain"]
    assert params(PowerMonitor.get_power) == [("time", None), ("power_domain", None)]
    assert params(TemperatureMonitor.__init__) == [
        ("gpu_indices", None), ("update_period", 1.0), ("max_samples_per_gpu", None)]
    assert params(TemperatureMonitor.get_temperature_timeline) == [
        ("gpu_index", None), ("start_time", None), ("end_time", None)]
    assert params(TemperatureMonitor.get_temperature) == [("time", None)]
    assert [d.value for d in PowerDomain] == ALL_DOMAINS + ["cpu_package_average",
                                                           "cpu_dram_average"]


def test_update_period_inferred_from_a_hundred_ms_counter(fake_nvml):
    fake_nvml.write([fake_device(power_update_ms=100)])
    monitor = PowerMonitor()
    try:
        assert monitor.update_period == pytest.approx(0.05, rel=0.1)
    finally:
        monitor.stop()


def test_instant_falls_back_to_average_when_not_monitored(fake_nvml):
    fake_nvml.write([fake_device(power_draw_w=200)])
    monitor = PowerMonitor(update_period=0.02, power_domains=[PowerDomain.DEVICE_AVERAGE])
    try:
        time.sleep(0.1)
        assert monitor.get_power() == {0: pytest.approx(200)}
        assert monitor.get_energy()[0] > 0
        with pytest.raises(zeus_cpp.InvalidArgumentError, match="device_instant is not being monitored"):
            monitor.get_power(power_domain="device_instant")
        with pytest.raises(ValueError, match="monitored domains are \\[device_average\\]"):
            monitor.get_power_timeline("device_instant")
    finally:
        monitor.stop()


def test_bad_input_is_a_clear_error(fake_nvml):
    # The default fake H100 here has no memory-scope power (like an A40).
    with pytest.raises(zeus_cpp.InvalidArgumentError) as raised:
        PowerMonitor(update_period=0.1, power_domains=["memory_average"])
    assert "memory_average is not supported" in str(raised.value)
    assert "[device_instant, device_average]" in str(raised.value)
    with pytest.raises(ValueError, match="unknown power domain 'device_peak'"):
        PowerMonitor(update_period=0.1, power_domains=["device_peak"])
    with pytest.raises(ValueError, match="non-empty"):
        PowerMonitor(update_period=0.1, power_domains=[])
    # [] turns GPUs off (upstream's CPU power monitor); with no CPU package either, nothing is left.
    with pytest.raises(ValueError, match="at least one GPU or CPU package"):
        PowerMonitor(gpu_indices=[], update_period=0.1)
    with pytest.raises(zeus_cpp.NotFoundError, match="CPU package index 0 does not exist"):
        PowerMonitor(update_period=0.1, cpu_indices=[0])  # the fake powercap root is empty
    with pytest.raises(ValueError, match="unknown power domain 'cpu_peak'"):
        PowerMonitor(update_period=0.1, power_domains=["cpu_peak"])
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="cpu_package_average is not supported"):
        PowerMonitor(update_period=0.1, power_domains=["cpu_package_average"])
    with pytest.raises(TypeError):
        PowerMonitor(update_period="fast")
    monitor = PowerMonitor(update_period=0.05)
    try:
        with pytest.raises(zeus_cpp.NotFoundError, match="GPU 3 is not monitored"):
            monitor.get_power_timeline("device_instant", gpu_index=3)
        with pytest.raises(zeus_cpp.InvalidArgumentError, match="start time is after its end"):
            monitor.get_power_timeline("device_instant", start_time=10.0, end_time=5.0)
        with pytest.raises(zeus_cpp.InvalidArgumentError, match="finite Unix time"):
            monitor.get_power_timeline("device_instant", start_time=float("nan"))
        now = time.time()
        # Outside the sampled span there is nothing: empty timelines, no energy, no power.
        assert monitor.get_all_power_timelines(start_time=now - 100, end_time=now - 90) == {
            "device_instant": {0: []}, "device_average": {0: []}}
        assert monitor.get_energy(now - 100, now - 90) is None
        assert monitor.get_power(time=now + 3600) is None
    finally:
        monitor.stop()
    temperature = TemperatureMonitor(update_period=0.2)
    try:
        with pytest.raises(zeus_cpp.NotFoundError, match="GPU 1 is not monitored"):
            temperature.get_temperature_timeline(gpu_index=1)
        with pytest.raises(ValueError, match="update_period must be a positive number"):
            TemperatureMonitor(update_period=0)
    finally:
        temperature.stop()


def test_power_monitor_energy_matches_the_window_within_one_percent(fake_nvml):
    fake_nvml.write([fake_device(power_draw_w=280)])
    power = PowerMonitor(update_period=0.02)
    windows = ZeusMonitor(sync_execution_with=None)
    try:
        time.sleep(0.1)
        start = time.time()
        windows.begin_window("step", sync_execution=False)
        _torch_loop(0.8)
        measurement = windows.end_window("step", sync_execution=False)
        end = time.time()
        time.sleep(0.05)  # a sample after `end`, so the range is covered (nothing is extrapolated)
        sampled = power.get_energy(start, end)[0]
        assert sampled == pytest.approx(measurement.gpu_energy[0], rel=0.01)
    finally:
        power.stop()


@pytest.mark.parametrize("period, message", [(0.01, "might be too fast"), (0.0005, "below 1 ms")])
def test_fast_polling_warns(period, message):
    code = ("from zeus_cpp.monitor import PowerMonitor\n"
            f"PowerMonitor(update_period={period}).stop()\n")
    env = dict(os.environ, ZEUS_LOG_LEVEL="warning")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert message in done.stderr
    quiet = subprocess.run([sys.executable, "-c", code.replace(str(period), "0.1")], env=env,
                           capture_output=True, text=True, timeout=60)
    assert "too fast" not in quiet.stderr and "below 1 ms" not in quiet.stderr


def test_get_gpus_reads_memory_power_and_temperature(fake_nvml):
    from zeus_cpp.device import get_gpus

    fake_nvml.write([fake_device(memory_power_mw=61500, temperature_c=66), fake_device()])
    gpus = get_gpus()
    assert gpus.get_average_memory_power_usage(0) == 61500
    assert gpus.get_gpu_temperature(0) == 66
    with pytest.raises(zeus_cpp.NotSupportedError, match="memory power of GPU 1"):
        gpus.get_average_memory_power_usage(1)
