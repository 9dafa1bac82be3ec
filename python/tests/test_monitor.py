"""ZeusMonitor, Measurement, PowerMonitor and get_gpus over the fake NVML."""

from __future__ import annotations

import csv
import threading
import time

import pytest

import zeus_cpp
from zeus_cpp.device import get_gpus
from zeus_cpp.monitor import Measurement, PowerMonitor, ZeusMonitor

from conftest import fake_device


def test_window_energy_follows_the_fake_power(fake_nvml):
    fake_nvml.write([fake_device(power_draw_w=300), fake_device(power_draw_w=150)])
    monitor = ZeusMonitor(sync_execution_with=None)
    assert monitor.gpu_indices == [0, 1]
    assert monitor.cpu_indices == []
    monitor.begin_window("outer")
    monitor.begin_window("inner")
    time.sleep(0.05)
    inner = monitor.end_window("inner")
    time.sleep(0.05)
    outer = monitor.end_window("outer")
    assert isinstance(outer, Measurement)
    assert outer.time > inner.time > 0.04
    for measurement in (inner, outer):
        # The fake's counter grows at exactly the drawn power: energy / time is that power.
        assert measurement.gpu_energy[0] / measurement.time == pytest.approx(300, rel=0.05)
        assert measurement.gpu_energy[1] / measurement.time == pytest.approx(150, rel=0.05)
        assert measurement.cpu_energy is None and measurement.dram_energy is None
        assert measurement.total_energy == pytest.approx(sum(measurement.gpu_energy.values()))


def test_gpu_indices_select_and_cancel(fake_nvml):
    fake_nvml.write([fake_device(power_draw_w=300), fake_device(power_draw_w=150)])
    monitor = ZeusMonitor(gpu_indices=[1], sync_execution_with=None)
    assert monitor.gpu_indices == [1]
    monitor.begin_window("w")
    cancelled = monitor.end_window("w", cancel=True)
    assert cancelled.gpu_energy == {} and cancelled.time == 0
    assert not monitor.is_window_open("w")
    monitor.begin_window("w")  # a cancelled window can be begun again
    time.sleep(0.02)
    assert set(monitor.end_window("w").gpu_energy) == {1}


def test_cuda_visible_devices_maps_framework_indices(fake_nvml, monkeypatch):
    fake_nvml.write([fake_device(power_draw_w=300), fake_device(power_draw_w=150)])
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    monitor = ZeusMonitor(sync_execution_with=None)
    assert monitor.gpu_indices == [0]
    monitor.begin_window("w")
    time.sleep(0.03)
    m = monitor.end_window("w")
    assert m.gpu_energy[0] / m.time == pytest.approx(150, rel=0.05)  # physical GPU 1


def test_cpu_and_dram_energy_from_rapl(fake_nvml, powercap):
    monitor = ZeusMonitor(cpu_indices=[0], sync_execution_with=None)
    assert monitor.cpu_indices == [0]
    monitor.begin_window("w")
    (powercap / "intel-rapl:0" / "energy_uj").write_text("3500000\n")  # +2.5 J
    (powercap / "intel-rapl:0" / "intel-rapl:0:0" / "energy_uj").write_text("510000\n")  # +0.5 J
    m = monitor.end_window("w")
    assert m.cpu_energy == {0: pytest.approx(2.5)}
    assert m.dram_energy == {0: pytest.approx(0.5)}
    # Upstream's meaning: total_energy is the GPUs' only; the sum with CPUs has its own name and
    # adds DRAM, which RAPL does not count inside the package.
    assert m.total_energy == pytest.approx(sum(m.gpu_energy.values()))
    assert m.total_energy_with_cpu == pytest.approx(sum(m.gpu_energy.values()) + 2.5 + 0.5)


def test_log_file_gets_one_row_per_ended_window(tmp_path):
    log = tmp_path / "windows.csv"
    monitor = ZeusMonitor(log_file=log, sync_execution_with=None)
    monitor.begin_window("kept")
    monitor.end_window("kept")
    monitor.begin_window("dropped")
    monitor.end_window("dropped", cancel=True)
    rows = list(csv.reader(log.open()))
    assert rows[0][:4] == ["start_time", "window_name", "elapsed_time", "gpu0_energy"]
    assert [r[1] for r in rows[1:]] == ["kept"]


def test_sync_callback_runs_at_both_edges_only_when_asked():
    calls = []
    monitor = ZeusMonitor(sync_execution_with=lambda: calls.append(time.monotonic()))
    monitor.begin_window("w")
    monitor.end_window("w")
    assert len(calls) == 2
    monitor.begin_window("w", sync_execution=False)
    monitor.end_window("w", sync_execution=False)
    assert len(calls) == 2


def test_torch_sync_on_cpu_training_needs_no_cuda():
    torch = pytest.importorskip("torch")
    monitor = ZeusMonitor()  # sync_execution_with="torch"
    monitor.begin_window("step")
    torch.ones(8) @ torch.ones(8)
    assert monitor.end_window("step").time >= 0


def test_windows_from_several_threads_do_not_crash():
    monitor = ZeusMonitor(sync_execution_with=None)
    errors = []

    def worker(n):
        try:
            for i in range(200):
                key = f"t{n}-{i % 3}"
                monitor.begin_window(key)
                monitor.end_window(key)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_power_monitor_integrates_samples(fake_nvml):
    fake_nvml.write([fake_device(power_draw_w=250)])
    monitor = PowerMonitor(update_period=0.01)
    start = time.time()
    time.sleep(0.3)
    end = time.time()
    energy = monitor.get_energy(start, end)
    assert energy[0] == pytest.approx(250 * (end - start), rel=0.1)
    assert monitor.get_power() == {0: pytest.approx(250)}
    assert monitor.get_power(time=start - 3600) is None  # nothing sampled back then
    monitor.stop()


def test_get_gpus_reads_and_controls_the_fake(fake_nvml):
    fake_nvml.write([fake_device(min_limit_w=100, max_limit_w=300)])
    gpus = get_gpus()
    assert len(gpus) == 1
    assert gpus.get_name(0) == "NVIDIA H100 80GB HBM3"
    assert gpus.getPowerManagementLimitConstraints(0) == (100_000, 300_000)
    gpus.set_power_management_limit(0, 150_000)
    assert gpus.get_power_management_limit(0) == 150_000
    assert fake_nvml.limit_w() == 150
    assert gpus.supports_get_total_energy_consumption(0)
    gpus.reset_power_management_limit(0)
    assert fake_nvml.limit_w() == 300
    assert gpus.gpus[0].get_architecture() == "Hopper"


def test_old_gpu_without_counter_is_sampled(fake_nvml):
    fake_nvml.write([fake_device(power_draw_w=200, architecture=4, name="Tesla P100")])
    assert not get_gpus().supports_get_total_energy_consumption(0)
    with pytest.raises(zeus_cpp.NotSupportedError):
        get_gpus().get_total_energy_consumption(0)
    monitor = ZeusMonitor(sync_execution_with=None)
    monitor.begin_window("w")
    time.sleep(0.3)
    m = monitor.end_window("w")
    assert m.gpu_energy[0] / m.time == pytest.approx(200, rel=0.1)
