"""Upstream's `zeus.device.gpu`: `get_gpus()`, `GPU`, `GPUs` and the GPU errors.

    from zeus_cpp.device.gpu import get_gpus, ZeusGPUInitError, ZeusGPUNoPermissionError

    try:
        get_gpus().set_power_management_limit(0, 250_000)
    except ZeusGPUNoPermissionError:   # also a zeus_cpp.PermissionDeniedError
        ...

`get_gpus()` is `zeus_cpp.device.get_gpus` (it discovers afresh at each call, and returns an empty
`GPUs` where upstream raises ZeusGPUInitError for a machine without NVML and AMD SMI). The errors are
those of `zeus_cpp.device.gpu.common`.
"""

from __future__ import annotations

from zeus_cpp.device import get_gpus
from zeus_cpp.device.gpu.common import *  # noqa: F401,F403 (upstream's star export)
from zeus_cpp.device.gpu.common import __all__ as _common_all

__all__ = ["get_gpus", *_common_all]
