"""Zeus in C++ for Python: GPU energy measurement and optimisation with the Python Zeus's names.

Change the import line, keep the code::

    from zeus_cpp.monitor import ZeusMonitor          # was: from zeus.monitor import ZeusMonitor
    from zeus_cpp.optimizer.power_limit import GlobalPowerLimitOptimizer

Errors raised by the library are subclasses of `ZeusError`, one class per error code:
`NotSupportedError`, `PermissionDeniedError` (also a PermissionError), `NotFoundError` (also a
KeyError and a ValueError), `InvalidArgumentError` (also a ValueError), `UnavailableError` and
`InternalError` (both RuntimeErrors). Their message is the library's message.
"""

from zeus_cpp._zeus_cpp import (
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    NotSupportedError,
    PermissionDeniedError,
    UnavailableError,
    ZeusError,
)

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
