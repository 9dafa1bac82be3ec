"""Power scope on C2C superchips, Jetson SoC energy and RAPL zone selection, on fakes: the fake
NVML's GH200 profile, a fake Orin sysfs tree and fake CPU topology / powercap trees."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import FakeNvml, fake_device

from zeus_cpp import InvalidArgumentError, NotFoundError
from zeus_cpp.device import get_gpus
from zeus_cpp.device.cpu import get_current_rapl_zone_id
from zeus_cpp.monitor import ZeusMonitor


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def orin(sysfs: Path, gpu_mw: int = 5000) -> None:
    """An AGX Orin's first INA3221 (hwmon layout; 5 V rails, currents in mA)."""
    hwmon = sysfs / "bus/i2c/drivers/ina3221/1-0040/hwmon/hwmon3"
    for channel, label, mw in ((1, "VDD_GPU_SOC", gpu_mw), (2, "VDD_CPU_CV", 2000), (3, "VIN_SYS_5V0", 10000)):
        write(hwmon / f"in{channel}_label", label)
        write(hwmon / f"in{channel}_input", "5000")
        write(hwmon / f"curr{channel}_input", str(mw // 5))


def test_grace_hopper_gpu_reports_module_scope(fake_nvml: FakeNvml) -> None:
    fake_nvml.write([fake_device(name="NVIDIA GH200 480GB", power_scopes=["module"], module_cpu_power_mw=120000),
                     fake_device()])
    gpus = get_gpus()
    assert gpus.gpus[0].get_power_scope() == "module"
    assert gpus.gpus[1].get_power_scope() == "gpu"
    # The module reading holds the Grace CPU's 120 W.
    assert gpus.gpus[0]._gpu.instant_power_mw() == 350000 + 120000


def test_jetson_soc_energy_in_measurement(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    sysfs = tmp_path / "jetson_sysfs"
    orin(sysfs)
    monkeypatch.setenv("ZEUS_SYSFS_ROOT", str(sysfs))
    monitor = ZeusMonitor(gpu_indices=[])
    monitor.begin_window("w")
    started = time.monotonic()
    time.sleep(0.3)
    measurement = monitor.end_window("w")
    elapsed = time.monotonic() - started
    soc = measurement.soc_energy
    assert soc is not None
    # 5 W on the GPU rail, 2 W on the CPU rail, 10 W in: mJ = mW x s.
    assert 5000 * 0.25 < soc.gpu_energy_mj <= 5000 * (elapsed + 0.05)
    assert 2000 * 0.25 < soc.cpu_energy_mj <= 2000 * (elapsed + 0.05)
    assert 10000 * 0.25 < soc.total_energy_mj <= 10000 * (elapsed + 0.05)
    assert measurement.total_energy == 0.0


def test_no_soc_is_none() -> None:
    monitor = ZeusMonitor(gpu_indices=[0])
    monitor.begin_window("w")
    assert monitor.end_window("w").soc_energy is None


def test_rapl_zone_of_this_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    sysfs = tmp_path / "topology_sysfs"
    powercap = tmp_path / "two_sockets"
    # Socket 1 listed first: zone 0 is package-1, zone 1 is package-0.
    write(powercap / "intel-rapl:0/name", "package-1")
    write(powercap / "intel-rapl:1/name", "package-0")
    for cpu in range(os.cpu_count() or 1):
        write(sysfs / f"devices/system/cpu/cpu{cpu}/topology/physical_package_id", "0")
    monkeypatch.setenv("ZEUS_SYSFS_ROOT", str(sysfs))
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(powercap))
    assert get_current_rapl_zone_id() == 1
    assert get_current_rapl_zone_id(os.getpid()) == 1
    for cpu in range(os.cpu_count() or 1):
        write(sysfs / f"devices/system/cpu/cpu{cpu}/topology/physical_package_id", "1")
    assert get_current_rapl_zone_id("current") == 0


def test_rapl_zone_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError):
        get_current_rapl_zone_id(-3)
    with pytest.raises(InvalidArgumentError):
        get_current_rapl_zone_id("self")  # type: ignore[arg-type]
    monkeypatch.setenv("ZEUS_SYSFS_ROOT", str(tmp_path / "empty"))
    with pytest.raises(NotFoundError, match="physical_package_id"):
        get_current_rapl_zone_id()
