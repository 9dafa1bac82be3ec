"""The Python API on AMD GPUs through the fake libamd_smi.so (AMD SMI backend): discovery with
HIP indices, the energy monitor (counter and power-sampled GPUs), and the power-limit optimizer
driving caps in microwatts. NVML is pointed at a missing library so AMD SMI is the backend."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from zeus_cpp.device import get_gpus
from zeus_cpp.monitor import ZeusMonitor


def amd_device(power_w: float = 300, hip_id: int = 0, **extra: Any) -> Dict[str, Any]:
    """One fake AMD GPU (the state format of testing/fake_rocm_smi/fake_state.h; uW inside)."""
    device = {
        "name": "AMD Instinct MI300X", "hip_id": hip_id, "unique_id": 0xC000 + hip_id,
        "power_uw": int(power_w * 1e6), "cap_uw": 300_000_000, "default_cap_uw": 300_000_000,
        "min_cap_uw": 100_000_000, "max_cap_uw": 300_000_000, "energy_count": 0,
        "energy_time_ns": time.time_ns(), "energy_resolution_uj": 15.3,
        "sclk_mhz": [500, 2100], "mclk_mhz": [1300], "temperature_c": 55,
    }
    device.update(extra)
    return device


class FakeAmd:
    """The fake AMD libraries' state file for one test."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self, devices: List[Dict[str, Any]]) -> None:
        self.path.write_text(json.dumps({"errors": {}, "devices": devices}))

    def device(self, index: int) -> Dict[str, Any]:
        return json.loads(self.path.read_text())["devices"][index]


@pytest.fixture
def fake_amd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeAmd:
    build = os.environ.get("ZEUS_BUILD_DIR")
    if not build:
        pytest.fail("ZEUS_BUILD_DIR must name the build folder (run through ctest)")
    monkeypatch.setenv("ZEUS_NVML_PATH", str(tmp_path / "none.so"))
    monkeypatch.setenv("ZEUS_ROCM_SMI_PATH", str(tmp_path / "none.so"))
    monkeypatch.setenv("ZEUS_AMDSMI_PATH", f"{build}/fakes/libamd_smi.so")
    monkeypatch.setenv("ZEUS_FAKE_ROCM_SMI_STATE", str(tmp_path / "amd_state.json"))
    for variable in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(variable, raising=False)
    fake = FakeAmd(tmp_path / "amd_state.json")
    fake.write([amd_device()])
    return fake


def test_gpus_in_hip_order_with_hip_visible_devices(fake_amd, monkeypatch):
    fake_amd.write([amd_device(power_w=300, hip_id=1), amd_device(power_w=200, hip_id=0)])
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "1")
    gpus = get_gpus()
    assert len(gpus) == 1
    # HIP 1 is the first GPU in AMD SMI's order, the one drawing 300 W.
    assert gpus.get_instant_power_usage(0) == 300_000
    assert gpus.get_gpu_temperature(0) == 55


def test_monitor_window_energy_from_the_counter_and_from_sampled_power(fake_amd):
    # GPU 1's counter runs at 5 % of its power: it fails the check and is measured by sampling.
    fake_amd.write([amd_device(power_w=300, hip_id=0),
                    amd_device(power_w=200, hip_id=1, energy_scale=0.05)])
    gpus = get_gpus()
    assert gpus.supports_get_total_energy_consumption(0)
    assert not gpus.supports_get_total_energy_consumption(1)
    monitor = ZeusMonitor(gpu_indices=[0, 1])
    monitor.begin_window("w")
    time.sleep(1.0)
    m = monitor.end_window("w")
    assert m.gpu_energy[0] / m.time == pytest.approx(300, rel=0.03)
    assert m.gpu_energy[1] / m.time == pytest.approx(200, rel=0.05)


def test_power_limit_optimizer_sets_caps_in_microwatts(fake_amd):
    torch = pytest.importorskip("torch")  # noqa: F841
    from training import Job
    from zeus_cpp.optimizer.power_limit import Done, GlobalPowerLimitOptimizer, MaxSlowdownConstraint

    monitor = ZeusMonitor(gpu_indices=[0])
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=MaxSlowdownConstraint(factor=1.4),
                                    wait_steps=1, warmup_steps=1, profile_steps=8, pl_step=50)
    gpu = get_gpus().gpus[0]
    job = Job()
    plo.on_epoch_begin()
    for batch in job.batches():
        plo.on_step_begin()
        job.step(batch, gpu.get_power_management_limit() / 1000)
        plo.on_step_end()
    plo.on_epoch_end()
    assert plo.power_limits == [300, 250, 200, 150, 100]
    assert plo.state == Done(optimal_power_limit=150_000)
    assert plo.optimal_power_limit == 150  # slowdown 1.26 at 150 W, 1.74 at 100 W
    assert fake_amd.device(0)["cap_uw"] == 150_000_000
    plo.restore()
    assert fake_amd.device(0)["cap_uw"] == 300_000_000
