"""Bad input from Python raises the right exception and never crashes the interpreter."""

from __future__ import annotations

import pytest

import zeus_cpp
from zeus_cpp import _zeus_cpp
from zeus_cpp.device import get_gpus
from zeus_cpp.monitor import PowerMonitor, ZeusMonitor
from zeus_cpp.optimizer.batch_size import BatchSizeOptimizer, JobSpec
from zeus_cpp.optimizer.power_limit import (
    GlobalPowerLimitOptimizer,
    MaxSlowdownConstraint,
    ZeusCost,
)

from conftest import fake_device


def test_error_classes_form_one_hierarchy():
    classes = {
        zeus_cpp.NotSupportedError: NotImplementedError,
        zeus_cpp.PermissionDeniedError: PermissionError,
        zeus_cpp.NotFoundError: KeyError,
        zeus_cpp.InvalidArgumentError: ValueError,
        zeus_cpp.UnavailableError: RuntimeError,
        zeus_cpp.InternalError: RuntimeError,
    }
    for cls, builtin in classes.items():
        assert issubclass(cls, zeus_cpp.ZeusError) and issubclass(cls, builtin)
    assert issubclass(zeus_cpp.NotFoundError, ValueError)  # as the Python Zeus's window errors
    assert str(zeus_cpp.NotFoundError("no window")) == "no window"  # not KeyError's quotes


@pytest.mark.parametrize(
    "kwargs",
    [{"gpu_indices": "0"}, {"gpu_indices": 0}, {"gpu_indices": [0.5]}, {"gpu_indices": [True]},
     {"cpu_indices": ["a"]}, {"log_file": 3}, {"sync_execution_with": 1}],
)
def test_monitor_arguments_of_the_wrong_type(kwargs):
    with pytest.raises(TypeError):
        ZeusMonitor(**kwargs)


def test_negative_and_unknown_indices():
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="negative"):
        ZeusMonitor(gpu_indices=[-1])
    with pytest.raises(ValueError):
        ZeusMonitor(gpu_indices=[-1])
    with pytest.raises(zeus_cpp.NotFoundError, match="GPU index 3 does not exist"):
        ZeusMonitor(gpu_indices=[3])
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="twice"):
        ZeusMonitor(gpu_indices=[0, 0])
    with pytest.raises(zeus_cpp.NotFoundError):  # CPUs asked for, but no RAPL here
        ZeusMonitor(cpu_indices=[0])
    with pytest.raises(zeus_cpp.InvalidArgumentError):
        PowerMonitor(gpu_indices=[-2])
    with pytest.raises(zeus_cpp.InvalidArgumentError):
        PowerMonitor(update_period=0)
    gpus = get_gpus()
    with pytest.raises(zeus_cpp.InvalidArgumentError):
        gpus.get_name(-1)
    with pytest.raises(zeus_cpp.NotFoundError):
        gpus.get_name(1)
    with pytest.raises(TypeError):
        gpus.get_name("0")


def test_unknown_and_duplicate_windows():
    monitor = ZeusMonitor(sync_execution_with=None)
    with pytest.raises(zeus_cpp.NotFoundError, match="no window named 'never'") as raised:
        monitor.end_window("never")
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, KeyError)
    monitor.begin_window("w")
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="w"):
        monitor.begin_window("w")
    monitor.end_window("w")
    with pytest.raises(zeus_cpp.NotFoundError):
        monitor.end_window("w")  # already ended
    with pytest.raises(TypeError):
        monitor.begin_window(42)
    with pytest.raises(TypeError):
        monitor.end_window(None)


def test_unknown_sync_framework():
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="mxnet"):
        ZeusMonitor(sync_execution_with="mxnet")


def test_a_raising_sync_callback_propagates_and_leaves_no_window():
    def sync():
        raise RuntimeError("device fell off the bus")

    monitor = ZeusMonitor(sync_execution_with=sync)
    with pytest.raises(RuntimeError, match="fell off"):
        monitor.begin_window("w")
    assert not monitor.is_window_open("w")
    monitor.begin_window("w", sync_execution=False)  # the monitor still works
    with pytest.raises(RuntimeError, match="fell off"):
        monitor.end_window("w")  # the window is closed, its measurement dropped
    assert not monitor.is_window_open("w")
    monitor.begin_window("w", sync_execution=False)
    assert monitor.end_window("w", sync_execution=False).time >= 0


def test_raw_extension_rejects_wrong_types():
    with pytest.raises(TypeError):
        _zeus_cpp.EnergyMonitor(gpu_indices="x")
    with pytest.raises(TypeError):
        _zeus_cpp.EnergyMonitor(sync=5)
    monitor = _zeus_cpp.EnergyMonitor()
    with pytest.raises(TypeError):
        monitor.begin_window(b"\xff\xfe", 1, 2, 3)
    with pytest.raises(TypeError):
        _zeus_cpp.PowerLimitOptimizer(None, None)
    with pytest.raises(TypeError):
        _zeus_cpp.PowerLimitSelector.zeus_cost("half")
    with pytest.raises(TypeError):
        _zeus_cpp.BatchSizeService.local(None)


def test_selector_and_optimizer_arguments(fake_nvml):
    with pytest.raises(zeus_cpp.InvalidArgumentError):
        ZeusCost(eta_knob=1.5)
    with pytest.raises(zeus_cpp.InvalidArgumentError):
        ZeusCost(eta_knob=0.5, world_size=0)
    with pytest.raises(zeus_cpp.InvalidArgumentError):
        MaxSlowdownConstraint(factor=0.9)
    with pytest.raises(TypeError):
        ZeusCost(eta_knob="half")
    monitor = ZeusMonitor()
    with pytest.raises(TypeError):
        GlobalPowerLimitOptimizer(object())
    with pytest.raises(TypeError):
        GlobalPowerLimitOptimizer(monitor, optimum_selector="energy")
    with pytest.raises(zeus_cpp.InvalidArgumentError):
        GlobalPowerLimitOptimizer(monitor, profile_steps=0)
    with pytest.raises(zeus_cpp.InvalidArgumentError):
        GlobalPowerLimitOptimizer(monitor, wait_steps=-1)
    with pytest.raises(TypeError):
        GlobalPowerLimitOptimizer(monitor, pl_step=2.5)
    with pytest.raises(zeus_cpp.InvalidArgumentError):
        get_gpus().set_power_management_limit(0, 1_000_000)  # above the 700 W maximum
    assert fake_nvml.limit_log_w() == []  # none of that reached the driver


def test_no_gpu_is_a_clear_error(fake_nvml, monkeypatch):
    monkeypatch.setenv("ZEUS_NVML_PATH", "/nonexistent/libnvidia-ml.so.1")
    monkeypatch.setenv("ZEUS_ROCM_SMI_PATH", "/nonexistent/librocm_smi64.so")
    assert len(get_gpus()) == 0
    monitor = ZeusMonitor(sync_execution_with=None)
    assert monitor.gpu_indices == []
    with pytest.raises(zeus_cpp.ZeusError):
        GlobalPowerLimitOptimizer(monitor)
    with pytest.raises(zeus_cpp.ZeusError, match="No GPUs"):
        BatchSizeOptimizer(monitor, "memory://", JobSpec(job_id_prefix="j", batch_sizes=[8, 16], default_batch_size=16))


def test_heterogeneous_limit_ranges_are_rejected(fake_nvml):
    fake_nvml.write([fake_device(max_limit_w=700), fake_device(max_limit_w=400)])
    with pytest.raises(zeus_cpp.InvalidArgumentError):
        GlobalPowerLimitOptimizer(ZeusMonitor())


def test_bad_job_specs(fake_nvml):
    monitor = ZeusMonitor()
    with pytest.raises(TypeError):
        BatchSizeOptimizer(monitor, "memory://", {"batch_sizes": [8]})
    # As upstream, JobSpec validates itself (pydantic's ValidationError is a ValueError).
    with pytest.raises(ValueError, match=r"Default BS\(32\) not in batch_sizes"):
        JobSpec(job_id_prefix="j", batch_sizes=[8, 16], default_batch_size=32)
    with pytest.raises(ValueError, match="batch_sizes"):
        JobSpec(job_id_prefix="j", batch_sizes="8,16", default_batch_size=16)
    with pytest.raises(zeus_cpp.InvalidArgumentError):
        BatchSizeOptimizer(monitor, "not a url", JobSpec(job_id_prefix="j", batch_sizes=[8, 16], default_batch_size=16))
    with pytest.raises(zeus_cpp.UnavailableError):  # nothing listens there
        BatchSizeOptimizer(monitor, "http://127.0.0.1:9", JobSpec(job_id_prefix="j", batch_sizes=[8, 16], default_batch_size=16))
