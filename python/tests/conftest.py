"""Shared fixtures: every test runs against the fake libnvidia-ml.so.1 with its own state file.

ctest sets ZEUS_NVML_PATH to the fake (build/fakes/libnvidia-ml.so.1) and PYTHONPATH to the built
package. Each test gets a fresh state file (ZEUS_FAKE_NVML_STATE, format in
testing/fake_nvml_state.h) and an empty powercap root, so no real RAPL or GPU is touched.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest


def fake_device(
    power_draw_w: float = 350,
    min_limit_w: int = 200,
    max_limit_w: int = 700,
    name: str = "NVIDIA H100 80GB HBM3",
    architecture: int = 9,
    **extra: Any,
) -> Dict[str, Any]:
    """One fake GPU of the state file (watts here, mW in the file)."""
    device = {
        "name": name,
        "architecture": architecture,
        "power_draw_mw": int(power_draw_w * 1000),
        "min_limit_mw": int(min_limit_w * 1000),
        "max_limit_mw": int(max_limit_w * 1000),
        "default_limit_mw": int(max_limit_w * 1000),
        "limit_mw": int(max_limit_w * 1000),
        "energy_mj": 0.0,
        "energy_time_ns": time.time_ns(),
    }
    device.update(extra)
    return device


class FakeNvml:
    """The state file of the fake NVML for one test."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, devices: List[Dict[str, Any]], errors: Optional[Dict[str, int]] = None) -> None:
        """Replaces the fake's devices (read at the next nvmlInit, i.e. the next discovery)."""
        state: Dict[str, Any] = {"devices": devices}
        if errors:
            state["errors"] = errors
        self.path.write_text(json.dumps(state))

    def read(self) -> Dict[str, Any]:
        """What the fake wrote back (limits set, set_power_limit_log, ...)."""
        return json.loads(self.path.read_text())

    def limit_log_w(self, index: int = 0) -> List[int]:
        """The power limits (W) set on GPU `index`, in order."""
        return [e["limit_mw"] // 1000 for e in self.read().get("set_power_limit_log", []) if e["index"] == index]

    def limit_w(self, index: int = 0) -> int:
        """GPU `index`'s current limit in W."""
        return self.read()["devices"][index]["limit_mw"] // 1000


@pytest.fixture(autouse=True)
def fake_nvml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeNvml:
    """A private fake NVML state (one H100 drawing 350 W), no RAPL and no Jetson."""
    if not os.environ.get("ZEUS_NVML_PATH"):
        pytest.fail("ZEUS_NVML_PATH must name the fake libnvidia-ml.so.1 (run through ctest)")
    state = tmp_path / "nvml_state.json"
    powercap = tmp_path / "powercap"
    powercap.mkdir()
    monkeypatch.setenv("ZEUS_FAKE_NVML_STATE", str(state))
    monkeypatch.setenv("ZEUS_POWERCAP_ROOT", str(powercap))
    # An empty sysfs: no Jetson power monitors, whatever the test machine is.
    sysfs = tmp_path / "sysfs"
    sysfs.mkdir()
    monkeypatch.setenv("ZEUS_SYSFS_ROOT", str(sysfs))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    fake = FakeNvml(state)
    fake.write([fake_device()])
    return fake


@pytest.fixture
def powercap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake /sys/class/powercap with package 0 and its DRAM zone (energies in uJ)."""
    root = tmp_path / "powercap"
    package = root / "intel-rapl:0"
    dram = package / "intel-rapl:0:0"
    dram.mkdir(parents=True, exist_ok=True)
    for zone, name, energy_uj in ((package, "package-0", 1_000_000), (dram, "dram", 10_000)):
        (zone / "name").write_text(name + "\n")
        (zone / "energy_uj").write_text(f"{energy_uj}\n")
        (zone / "max_energy_range_uj").write_text("262143328850\n")
    (root / "intel-rapl:0:0").symlink_to(dram, target_is_directory=True)
    return root
