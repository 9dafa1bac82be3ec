"""Zeus in C++ for Python: GPU energy measurement and optimisation with the Python Zeus's names.

Change the import line, keep the code::

    from zeus_cpp.monitor import ZeusMonitor          # was: from zeus.monitor import ZeusMonitor
    from zeus_cpp.optimizer.power_limit import GlobalPowerLimitOptimizer

Errors raised by the library are subclasses of `ZeusError`, one class per error code:
`NotSupportedError`, `PermissionDeniedError` (also a PermissionError), `NotFoundError` (also a
KeyError and a ValueError), `InvalidArgumentError` (also a ValueError), `UnavailableError` and
`InternalError` (both RuntimeErrors). Their message is the library's message (`str(error)`, and
upstream's `error.message`). `ZeusError` is also upstream's `zeus.exception.ZeusBaseError`
(`zeus_cpp.exception`); `zeus_cpp.device.gpu` has upstream's `ZeusGPU...Error` classes, which
the GPU calls raise.

No GPU here? `ZEUS_FAKE_GPU=1` makes zeus_cpp use the fake NVIDIA GPU it ships (zeus_cpp.fake_gpu).
"""

from zeus_cpp import _fake_gpu

_fake_gpu.apply_switch()  # ZEUS_FAKE_GPU=1: the bundled fake NVML, before any GPU is discovered

from zeus_cpp._zeus_cpp import (  # noqa: E402
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    NotSupportedError,
    PermissionDeniedError,
    UnavailableError,
    ZeusError,
)
from zeus_cpp.exception import ZeusBaseError  # noqa: E402  upstream's name for ZeusError (zeus.exception)

__version__ = "0.1.0"

__all__ = [
    "ZeusError",
    "NotSupportedError",
    "PermissionDeniedError",
    "NotFoundError",
    "InvalidArgumentError",
    "UnavailableError",
    "InternalError",
    "__version__",
]
