"""Upstream's exception and logging modules under zeus_cpp (issue 48, item 2): `zeus.exception`,
`zeus.device.gpu` / `zeus.device.gpu.common` and `zeus.utils.logging` import with `zeus` replaced
by `zeus_cpp`, and upstream's `except` clauses catch what zeus_cpp raises (while zeus_cpp's
documented classes still do), on the fake NVML."""

from __future__ import annotations

import logging
import pickle
import subprocess
import sys

import pytest

import zeus_cpp
from conftest import fake_device

# zeus.device.gpu.common's error classes (upstream 0.16), all re-exported by zeus.device.gpu.
UPSTREAM_GPU_ERRORS = [
    "ZeusGPUInitError", "ZeusGPUInvalidArgError", "ZeusGPUNotSupportedError", "ZeusGPUNoPermissionError",
    "ZeusGPUAlreadyInitializedError", "ZeusGPUNotFoundError", "ZeusGPUInsufficientSizeError",
    "ZeusGPUInsufficientPowerError", "ZeusGPUDriverNotLoadedError", "ZeusGPUTimeoutError", "ZeusGPUIRQError",
    "ZeusGPULibraryNotFoundError", "ZeusGPUFunctionNotFoundError", "ZeusGPUCorruptedInfoROMError",
    "ZeusGPULostError", "ZeusGPUResetRequiredError", "ZeusGPUOperatingSystemError",
    "ZeusGPULibRMVersionMismatchError", "ZeusGPUMemoryError", "ZeusGPUUnknownError", "ZeusGPUHeterogeneousError",
]


def test_upstreams_exception_and_logging_modules_import():
    from zeus_cpp.device import exception as device_exception
    from zeus_cpp.device import gpu
    from zeus_cpp.device.gpu import common
    from zeus_cpp.exception import ZeusBaseError
    from zeus_cpp.utils.logging import FileAndConsole, get_logger  # noqa: F401

    assert ZeusBaseError is zeus_cpp.ZeusError
    for name in UPSTREAM_GPU_ERRORS:
        cls = getattr(common, name)
        assert getattr(gpu, name) is cls, name
        assert issubclass(cls, device_exception.ZeusBaseGPUError) and issubclass(cls, ZeusBaseError), name
        assert cls.__doc__, name
        error = cls("the message")  # upstream's constructor: one message
        assert error.message == "the message" and str(error) == "the message"
    assert gpu.get_gpus is zeus_cpp.device.get_gpus
    assert common.GPU is zeus_cpp.device.GPU and common.GPUs is zeus_cpp.device.GPUs
    for base in ("ZeusBaseGPUError", "ZeusBaseCPUError", "ZeusBaseSoCError", "ZeusdError"):
        assert issubclass(getattr(device_exception, base), ZeusBaseError)
    # As upstream's users write it, in a fresh interpreter (no test import order helps).
    code = ("from zeus_cpp.device.gpu import *; from zeus_cpp.device.gpu.common import ZeusGPUInitError; "
            "from zeus_cpp.exception import ZeusBaseError; from zeus_cpp.utils.logging import get_logger; "
            "print(ZeusGPUNoPermissionError.__mro__[1].__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ZeusBaseGPUError", done.stderr


def test_upstream_except_clauses_catch_what_the_gpu_calls_raise(fake_nvml):
    from zeus_cpp.device.gpu import (
        ZeusGPUInvalidArgError,
        ZeusGPULostError,
        ZeusGPUNoPermissionError,
        ZeusGPUNotFoundError,
        ZeusGPUNotSupportedError,
        get_gpus,
    )
    from zeus_cpp.exception import ZeusBaseError

    fake_nvml.write([fake_device(errors={"nvmlDeviceGetTemperature": 15})],  # NVML_ERROR_GPU_IS_LOST
                    errors={"nvmlDeviceSetPowerManagementLimit": 4,  # NVML_ERROR_NO_PERMISSION
                            "nvmlDeviceSetGpuLockedClocks": 3})  # NVML_ERROR_NOT_SUPPORTED
    gpus = get_gpus()
    cases = [
        (lambda: gpus.set_power_management_limit(0, 300_000), ZeusGPUNoPermissionError,
         zeus_cpp.PermissionDeniedError, PermissionError, "NVML_ERROR_NO_PERMISSION"),
        (lambda: gpus.gpus[0].set_gpu_locked_clocks(600, 600), ZeusGPUNotSupportedError,
         zeus_cpp.NotSupportedError, NotImplementedError, "NVML_ERROR_NOT_SUPPORTED"),
        (lambda: gpus.get_gpu_temperature(0), ZeusGPULostError, zeus_cpp.UnavailableError, RuntimeError,
         "NVML_ERROR_GPU_IS_LOST"),
        (lambda: gpus.get_name(3), ZeusGPUNotFoundError, zeus_cpp.NotFoundError, KeyError, "GPU index 3"),
        (lambda: get_gpus().set_power_management_limit(0, 10_000), ZeusGPUInvalidArgError,
         zeus_cpp.InvalidArgumentError, ValueError, "outside the range"),
    ]
    for call, upstream, ours, builtin, text in cases:
        try:
            call()
        except upstream as error:  # upstream's clause
            assert isinstance(error, ours) and isinstance(error, builtin), (upstream, type(error).__mro__)
            assert isinstance(error, ZeusBaseError) and isinstance(error, zeus_cpp.ZeusError)
            assert type(error).__name__ == upstream.__name__
            assert text in str(error) and error.message == str(error), str(error)
            # Sent between processes (multiprocessing pickles exceptions), it stays both.
            again = pickle.loads(pickle.dumps(error))
            assert isinstance(again, upstream) and isinstance(again, ours) and str(again) == str(error)
        else:
            raise AssertionError(f"{upstream.__name__} was not raised")
    # zeus_cpp's documented clause catches the same error.
    with pytest.raises(zeus_cpp.PermissionDeniedError):
        gpus.set_power_management_limit(0, 300_000)


def test_heterogeneous_gpus_raise_upstreams_error(fake_nvml):
    from zeus_cpp.device.gpu import ZeusGPUHeterogeneousError, get_gpus

    fake_nvml.write([fake_device(name="NVIDIA H100 80GB HBM3"), fake_device(name="NVIDIA A100-SXM4-40GB")])
    with pytest.raises(ZeusGPUHeterogeneousError, match="Heterogeneous GPUs found") as raised:
        get_gpus(ensure_homogeneous=True)
    assert isinstance(raised.value, zeus_cpp.InvalidArgumentError)
    assert len(get_gpus()) == 2


def test_zeus_base_error_catches_the_librarys_errors_and_has_a_message(fake_nvml):
    from zeus_cpp.exception import ZeusBaseError
    from zeus_cpp.monitor import ZeusMonitor

    monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
    with pytest.raises(ZeusBaseError) as raised:
        monitor.end_window("never begun")
    assert raised.value.message == str(raised.value) and "never begun" in raised.value.message

    class MyError(ZeusBaseError):  # upstream users derive their own errors from it
        pass

    with pytest.raises(zeus_cpp.ZeusError) as mine:
        raise MyError("mine")
    assert mine.value.message == "mine"


def test_get_logger_as_upstreams(monkeypatch, capsys, tmp_path):
    from zeus_cpp.utils.logging import FileAndConsole, get_logger

    monkeypatch.delenv("ZEUS_LOG_LEVEL", raising=False)
    logger = get_logger("zeus_cpp_test.upstream_logger")
    assert logger.level == logging.INFO and logger.propagate is False and len(logger.handlers) == 1
    logger.debug("hidden")
    logger.info("shown")
    out = capsys.readouterr().out
    assert "shown" in out and "hidden" not in out and "[zeus_cpp_test.upstream_logger]" in out
    assert get_logger("zeus_cpp_test.upstream_logger") is logger and len(logger.handlers) == 1
    monkeypatch.setenv("ZEUS_LOG_LEVEL", "error")  # the C++ library's spelling
    assert get_logger("zeus_cpp_test.quiet").level == logging.ERROR
    monkeypatch.setenv("ZEUS_LOG_LEVEL", "nonsense")
    assert get_logger("zeus_cpp_test.fallback", level=logging.WARNING).level == logging.WARNING

    tee = FileAndConsole(tmp_path / "log.txt")
    tee.write("both\n")
    tee.flush()
    assert (tmp_path / "log.txt").read_text() == "both\n" and "both" in capsys.readouterr().out
