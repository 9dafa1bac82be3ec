"""Upstream's `zeus.device.gpu.common`: the `GPU` and `GPUs` classes and the GPU errors.

    from zeus_cpp.device.gpu.common import ZeusGPUNoPermissionError   # was: zeus.device.gpu.common

Every `ZeusGPU...Error` derives from `ZeusBaseGPUError` (`zeus_cpp.device.exception`) and so from
`ZeusBaseError` / `zeus_cpp.ZeusError`. What `GPU` and `GPUs` raise is upstream's class for the
failure and zeus_cpp's class for its error code at once (zeus_cpp/device/_gpu_errors.py): e.g. an
NVML "no permission" is a `ZeusGPUNoPermissionError` and a `PermissionDeniedError`.
"""

from __future__ import annotations

from zeus_cpp.device import GPU, GPUs
from zeus_cpp.device._gpu_errors import (
    ZeusGPUAlreadyInitializedError,
    ZeusGPUCorruptedInfoROMError,
    ZeusGPUDriverNotLoadedError,
    ZeusGPUFunctionNotFoundError,
    ZeusGPUHeterogeneousError,
    ZeusGPUInitError,
    ZeusGPUInsufficientPowerError,
    ZeusGPUInsufficientSizeError,
    ZeusGPUInvalidArgError,
    ZeusGPUIRQError,
    ZeusGPULibraryNotFoundError,
    ZeusGPULibRMVersionMismatchError,
    ZeusGPULostError,
    ZeusGPUMemoryError,
    ZeusGPUNoPermissionError,
    ZeusGPUNotFoundError,
    ZeusGPUNotSupportedError,
    ZeusGPUOperatingSystemError,
    ZeusGPUResetRequiredError,
    ZeusGPUTimeoutError,
    ZeusGPUUnknownError,
)
from zeus_cpp.device.exception import ZeusBaseGPUError

__all__ = [
    "GPU",
    "GPUs",
    "ZeusBaseGPUError",
    "ZeusGPUAlreadyInitializedError",
    "ZeusGPUCorruptedInfoROMError",
    "ZeusGPUDriverNotLoadedError",
    "ZeusGPUFunctionNotFoundError",
    "ZeusGPUHeterogeneousError",
    "ZeusGPUIRQError",
    "ZeusGPUInitError",
    "ZeusGPUInsufficientPowerError",
    "ZeusGPUInsufficientSizeError",
    "ZeusGPUInvalidArgError",
    "ZeusGPULibRMVersionMismatchError",
    "ZeusGPULibraryNotFoundError",
    "ZeusGPULostError",
    "ZeusGPUMemoryError",
    "ZeusGPUNoPermissionError",
    "ZeusGPUNotFoundError",
    "ZeusGPUNotSupportedError",
    "ZeusGPUOperatingSystemError",
    "ZeusGPUResetRequiredError",
    "ZeusGPUTimeoutError",
    "ZeusGPUUnknownError",
]
