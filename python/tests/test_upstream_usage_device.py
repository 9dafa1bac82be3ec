"""Upstream Zeus's device API as its users type it, with `zeus` replaced by `zeus_cpp` (issue 37):
the GPUs' locked clocks and persistence mode (upstream's `GPUs` methods, `block=`), `get_cpus()`
with `RAPLCPUs` and `CpuDramMeasurement`, and `get_soc()` with `Jetson` / upstream's errors, on
the fake NVML, a fake powercap tree and a fake Jetson sysfs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import FakeNvml, fake_device
from test_devices_superchip import orin

import zeus_cpp.device.cpu as cpu_module
import zeus_cpp.device.soc as soc_module
from zeus_cpp.device import get_cpus, get_gpus, get_soc
from zeus_cpp.device.cpu import CpuDramMeasurement, RAPLCPUs, ZeusCPUInitError, ZeusCPUNotFoundError
from zeus_cpp.device.soc import Jetson, JetsonMeasurement, ZeusAppleInitError, ZeusSoCInitError

CLOCKS = [1980, 1500, 1005]
MEMORY = [2619, 1593]


def clock_gpus(fake: FakeNvml, count: int = 2) -> None:
    fake.write([fake_device(memory_clocks_mhz=MEMORY, graphics_clocks_mhz=CLOCKS) for _ in range(count)])


def locks(fake: FakeNvml, index: int) -> tuple:
    device = fake.read()["devices"][index]
    return device.get("locked_sm_clocks_mhz"), device.get("locked_memory_clocks_mhz")


def test_gpus_have_every_method_upstreams_gpus_have() -> None:
    names = [
        "get_name", "get_power_management_limit_constraints", "get_power_management_limit",
        "set_power_management_limit", "reset_power_management_limit", "set_persistence_mode",
        "get_persistence_mode", "get_supported_memory_clocks", "set_memory_locked_clocks",
        "reset_memory_locked_clocks", "get_supported_graphics_clocks", "set_gpu_locked_clocks",
        "reset_gpu_locked_clocks", "reset_locked_clocks", "get_average_power_usage",
        "get_instant_power_usage", "get_average_memory_power_usage",
        "supports_get_total_energy_consumption", "get_total_energy_consumption", "get_gpu_temperature",
    ]
    gpus = get_gpus()
    missing = [n for n in names if not callable(getattr(gpus, n, None))]
    assert missing == []
    assert all(isinstance(g.supports_nonblocking_setters, bool) for g in gpus.gpus)


def test_locked_clocks_through_gpus_with_block_as_upstream(fake_nvml: FakeNvml) -> None:
    clock_gpus(fake_nvml)
    gpus = get_gpus()
    assert gpus.get_supported_graphics_clocks(1) == CLOCKS
    gpus.set_gpu_locked_clocks(1, 1005, 1500)
    gpus.set_memory_locked_clocks(1, 1593, 1593, block=False)
    assert locks(fake_nvml, 1) == ([1005, 1500], [1593, 1593])
    assert locks(fake_nvml, 0) == (None, None)  # only GPU 1
    gpus.reset_gpu_locked_clocks(1)
    assert locks(fake_nvml, 1) == (None, [1593, 1593])
    gpus.set_gpu_locked_clocks(1, 1500, 1980, block=True)
    gpus.reset_locked_clocks(1)  # both domains
    assert locks(fake_nvml, 1) == (None, None)
    gpus.set_gpu_locked_clocks(0, 1005, 1005)
    gpus.gpus[0].reset_locked_clocks()
    assert locks(fake_nvml, 0) == (None, None)


def test_persistence_mode_read_back_by_index(fake_nvml: FakeNvml) -> None:
    gpus = get_gpus()
    gpus.set_persistence_mode(0, True)
    assert gpus.get_persistence_mode(0) is True
    gpus.set_persistence_mode(0, False, block=False)
    assert gpus.get_persistence_mode(0) is False


def test_get_cpus_reads_rapl_as_upstreams_raplcpus(powercap: Path) -> None:
    cpus = get_cpus()
    assert isinstance(cpus, RAPLCPUs) and len(cpus) == 1 and len(cpus.cpus) == 1
    assert cpus.supports_get_dram_energy_consumption(0) is True
    first = cpus.get_total_energy_consumption(0)
    assert first == CpuDramMeasurement(cpu_mj=1000.0, dram_mj=10.0)  # 1,000,000 uJ and 10,000 uJ
    (powercap / "intel-rapl:0" / "energy_uj").write_text("1500000\n")
    (powercap / "intel-rapl:0" / "intel-rapl:0:0" / "energy_uj").write_text("30000\n")
    used = cpus.get_total_energy_consumption(0) - first
    assert used == CpuDramMeasurement(cpu_mj=500.0, dram_mj=20.0)
    assert used / 2 == CpuDramMeasurement(cpu_mj=250.0, dram_mj=10.0)
    with pytest.raises(ZeroDivisionError):
        used / 0
    assert CpuDramMeasurement(5.0) - CpuDramMeasurement(2.0, 1.0) == CpuDramMeasurement(3.0, -1.0)
    with pytest.raises(ZeusCPUNotFoundError):
        cpus.get_total_energy_consumption(1)
    assert cpu_module.rapl_is_available() is True


def test_a_wrapped_rapl_counter_keeps_counting(powercap: Path) -> None:
    cpus = get_cpus()
    zone = powercap / "intel-rapl:0"
    (zone / "energy_uj").write_text("262143000000\n")  # near the top of its range
    before = cpus.get_total_energy_consumption(0).cpu_mj
    (zone / "energy_uj").write_text("1000000\n")  # wrapped
    after = cpus.get_total_energy_consumption(0).cpu_mj
    assert after - before == pytest.approx((262143328850 - 262143000000 + 1_000_000) / 1000.0)


def test_get_cpus_without_rapl_is_upstreams_init_error() -> None:
    # The autouse fixture gives an empty powercap tree.
    with pytest.raises(ZeusCPUInitError, match="RAPL"):
        get_cpus()
    assert cpu_module.rapl_is_available() is False


def test_get_soc_on_a_jetson_measures_its_rails(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    sysfs = tmp_path / "jetson"
    orin(sysfs)  # 5 W GPU rail, 2 W CPU rail, 10 W in
    monkeypatch.setenv("ZEUS_SYSFS_ROOT", str(sysfs))
    soc = get_soc()
    assert isinstance(soc, Jetson)
    assert soc.get_available_metrics() == {"cpu_energy_mj", "gpu_energy_mj", "total_energy_mj"}
    soc.begin_window("step")
    with pytest.raises(KeyError, match="already exists"):
        soc.begin_window("step")
    started = time.monotonic()
    time.sleep(0.3)
    m = soc.end_window("step")
    elapsed = time.monotonic() - started
    assert isinstance(m, JetsonMeasurement)
    assert 5000 * 0.25 < m.gpu_energy_mj <= 5000 * (elapsed + 0.05)
    assert 2000 * 0.25 < m.cpu_energy_mj <= 2000 * (elapsed + 0.05)
    assert 10000 * 0.25 < m.total_energy_mj <= 10000 * (elapsed + 0.05)
    with pytest.raises(KeyError, match="does not exist"):
        soc.end_window("step")
    m.zero_all_fields()
    assert m == JetsonMeasurement(0.0, 0.0, 0.0)
    assert JetsonMeasurement(3.0, None, 5.0) - JetsonMeasurement(1.0, 2.0, 1.0) == JetsonMeasurement(2.0, None, 4.0)


def test_get_soc_without_one_and_on_apple_silicon_raise_upstreams_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ZeusSoCInitError, match="No observable SoC"):
        get_soc()
    monkeypatch.setattr(soc_module.sys, "platform", "darwin")
    monkeypatch.setattr(soc_module.platform, "processor", lambda: "arm")
    with pytest.raises(ZeusAppleInitError) as raised:
        get_soc()
    assert isinstance(raised.value, ZeusSoCInitError)


def test_the_fake_state_is_json(fake_nvml: FakeNvml) -> None:
    # Guard for the helpers above: the fake writes its locks back as lists.
    clock_gpus(fake_nvml, 1)
    get_gpus().set_gpu_locked_clocks(0, 1005, 1500)
    assert json.loads(fake_nvml.path.read_text())["devices"][0]["locked_sm_clocks_mhz"] == [1005, 1500]
