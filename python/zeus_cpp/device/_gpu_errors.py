"""Upstream's GPU errors (`zeus.device.gpu.common`), and how zeus_cpp's GPU calls raise them.

zeus_cpp raises one class per error code (`PermissionDeniedError`, `NotSupportedError`, ...).
A failing call of `zeus_cpp.device`'s `GPU` or `GPUs` raises instead a class that derives from
both upstream's class for the failure and the code's class: an NVML "no permission" is an
instance of `ZeusGPUNoPermissionError` (and so `ZeusBaseGPUError`, `ZeusBaseError`) and of
`PermissionDeniedError` (and so `PermissionError`), so upstream's `except` clauses and
zeus_cpp's documented ones both catch it. The NVML return code named in the library's message
(`(NVML_ERROR_GPU_IS_LOST)`) picks upstream's class as upstream's NVML map does; otherwise the
error code does. Public names: `zeus_cpp.device.gpu` and `zeus_cpp.device.gpu.common`.
"""

from __future__ import annotations

import functools
import re
import sys
from typing import Callable, Dict, Tuple, Type, TypeVar

import zeus_cpp
from zeus_cpp import (
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    NotSupportedError,
    PermissionDeniedError,
    UnavailableError,
    ZeusError,
)
from zeus_cpp.device.exception import ZeusBaseGPUError

_PUBLIC_MODULE = "zeus_cpp.device.gpu.common"


def _error(name: str, doc: str) -> Type[ZeusBaseGPUError]:
    cls = type(name, (ZeusBaseGPUError,), {"__doc__": doc, "__module__": _PUBLIC_MODULE})
    return cls


ZeusGPUInitError = _error("ZeusGPUInitError", "Import error or GPU library initialization failures.")
ZeusGPUInvalidArgError = _error("ZeusGPUInvalidArgError", "Zeus GPU exception that wraps Invalid Argument.")
ZeusGPUNotSupportedError = _error("ZeusGPUNotSupportedError",
                                  "Zeus GPU exception that wraps Not Supported Operation on GPU.")
ZeusGPUNoPermissionError = _error("ZeusGPUNoPermissionError",
                                  "Zeus GPU exception that wraps No Permission to perform GPU operation.")
ZeusGPUAlreadyInitializedError = _error("ZeusGPUAlreadyInitializedError",
                                        "Zeus GPU exception that wraps Already Initialized GPU.")
ZeusGPUNotFoundError = _error("ZeusGPUNotFoundError", "Zeus GPU exception that wraps Not Found GPU.")
ZeusGPUInsufficientSizeError = _error("ZeusGPUInsufficientSizeError",
                                      "Zeus GPU exception that wraps Insufficient Size.")
ZeusGPUInsufficientPowerError = _error("ZeusGPUInsufficientPowerError",
                                       "Zeus GPU exception that wraps Insufficient Power.")
ZeusGPUDriverNotLoadedError = _error("ZeusGPUDriverNotLoadedError", "Zeus GPU exception that wraps Driver Error.")
ZeusGPUTimeoutError = _error("ZeusGPUTimeoutError", "Zeus GPU exception that wraps Timeout Error.")
ZeusGPUIRQError = _error("ZeusGPUIRQError", "Zeus GPU exception that wraps IRQ Error.")
ZeusGPULibraryNotFoundError = _error("ZeusGPULibraryNotFoundError",
                                     "Zeus GPU exception that wraps Library Not Found Error.")
ZeusGPUFunctionNotFoundError = _error("ZeusGPUFunctionNotFoundError",
                                      "Zeus GPU exception that wraps Function Not Found Error.")
ZeusGPUCorruptedInfoROMError = _error("ZeusGPUCorruptedInfoROMError",
                                      "Zeus GPU exception that wraps Corrupted Info ROM Error.")
ZeusGPULostError = _error("ZeusGPULostError", "Zeus GPU exception that wraps Lost GPU Error.")
ZeusGPUResetRequiredError = _error("ZeusGPUResetRequiredError", "Zeus GPU exception that wraps Reset Required Error.")
ZeusGPUOperatingSystemError = _error("ZeusGPUOperatingSystemError",
                                     "Zeus GPU exception that wraps Operating System Error.")
ZeusGPULibRMVersionMismatchError = _error("ZeusGPULibRMVersionMismatchError",
                                          "Zeus GPU exception that wraps LibRM Version Mismatch Error.")
ZeusGPUMemoryError = _error("ZeusGPUMemoryError", "Zeus GPU exception that wraps Insufficient Memory Error.")
ZeusGPUUnknownError = _error("ZeusGPUUnknownError", "Zeus GPU exception that wraps Unknown Error.")
ZeusGPUHeterogeneousError = _error("ZeusGPUHeterogeneousError", "Exception for when GPUs are not homogeneous.")

UPSTREAM_GPU_ERRORS = [
    ZeusGPUInitError, ZeusGPUInvalidArgError, ZeusGPUNotSupportedError, ZeusGPUNoPermissionError,
    ZeusGPUAlreadyInitializedError, ZeusGPUNotFoundError, ZeusGPUInsufficientSizeError,
    ZeusGPUInsufficientPowerError, ZeusGPUDriverNotLoadedError, ZeusGPUTimeoutError, ZeusGPUIRQError,
    ZeusGPULibraryNotFoundError, ZeusGPUFunctionNotFoundError, ZeusGPUCorruptedInfoROMError,
    ZeusGPULostError, ZeusGPUResetRequiredError, ZeusGPUOperatingSystemError,
    ZeusGPULibRMVersionMismatchError, ZeusGPUMemoryError, ZeusGPUUnknownError, ZeusGPUHeterogeneousError,
]

# Upstream's map from NVML return codes (zeus.device.gpu.nvidia), by the name our messages carry.
_BY_NVML_NAME: Dict[str, Type[ZeusBaseGPUError]] = {
    "NVML_ERROR_UNINITIALIZED": ZeusGPUInitError,
    "NVML_ERROR_INVALID_ARGUMENT": ZeusGPUInvalidArgError,
    "NVML_ERROR_NOT_SUPPORTED": ZeusGPUNotSupportedError,
    "NVML_ERROR_NO_PERMISSION": ZeusGPUNoPermissionError,
    "NVML_ERROR_ALREADY_INITIALIZED": ZeusGPUAlreadyInitializedError,
    "NVML_ERROR_NOT_FOUND": ZeusGPUNotFoundError,
    "NVML_ERROR_INSUFFICIENT_SIZE": ZeusGPUInsufficientSizeError,
    "NVML_ERROR_INSUFFICIENT_POWER": ZeusGPUInsufficientPowerError,
    "NVML_ERROR_DRIVER_NOT_LOADED": ZeusGPUDriverNotLoadedError,
    "NVML_ERROR_TIMEOUT": ZeusGPUTimeoutError,
    "NVML_ERROR_IRQ_ISSUE": ZeusGPUIRQError,
    "NVML_ERROR_LIBRARY_NOT_FOUND": ZeusGPULibraryNotFoundError,
    "NVML_ERROR_FUNCTION_NOT_FOUND": ZeusGPUFunctionNotFoundError,
    "NVML_ERROR_CORRUPTED_INFOROM": ZeusGPUCorruptedInfoROMError,
    "NVML_ERROR_GPU_IS_LOST": ZeusGPULostError,
    "NVML_ERROR_RESET_REQUIRED": ZeusGPUResetRequiredError,
    "NVML_ERROR_OPERATING_SYSTEM": ZeusGPUOperatingSystemError,
    "NVML_ERROR_LIB_RM_VERSION_MISMATCH": ZeusGPULibRMVersionMismatchError,
    "NVML_ERROR_MEMORY": ZeusGPUMemoryError,
    "NVML_ERROR_UNKNOWN": ZeusGPUUnknownError,
}
# Otherwise by zeus_cpp's error code.
_BY_CODE: Dict[type, Type[ZeusBaseGPUError]] = {
    PermissionDeniedError: ZeusGPUNoPermissionError,
    NotSupportedError: ZeusGPUNotSupportedError,
    InvalidArgumentError: ZeusGPUInvalidArgError,
    NotFoundError: ZeusGPUNotFoundError,
    UnavailableError: ZeusGPUUnknownError,
    InternalError: ZeusGPUUnknownError,
}
_NVML_NAME = re.compile(r"\((NVML_ERROR_[A-Z_]+)\)")

_combined: Dict[Tuple[type, type], type] = {}


def _rebuild(upstream_name: str, code_name: str, args: tuple) -> BaseException:
    """Unpickles a combined error (multiprocessing sends exceptions pickled)."""
    upstream = getattr(sys.modules[__name__], upstream_name)
    return combined_class(upstream, getattr(zeus_cpp, code_name))(*args)


def _reduce(self: BaseException):
    upstream, code = type(self)._zeus_classes
    return _rebuild, (upstream.__name__, code.__name__, self.args)


def combined_class(upstream: Type[ZeusBaseGPUError], code: type) -> type:
    """The class that is both `upstream` (a ZeusGPU...Error) and `code` (a zeus_cpp code class),
    named as `upstream`."""
    key = (upstream, code)
    cls = _combined.get(key)
    if cls is None:
        cls = type(upstream.__name__, (upstream, code), {
            "__doc__": upstream.__doc__, "__module__": _PUBLIC_MODULE, "__qualname__": upstream.__qualname__,
            "_zeus_classes": key, "__reduce__": _reduce,
        })
        _combined[key] = cls
    return cls


def to_gpu_error(error: ZeusError) -> BaseException:
    """`error` (of a zeus_cpp code class) as upstream's GPU error for it, still of its own class."""
    code = type(error)
    match = _NVML_NAME.search(str(error))
    upstream = _BY_NVML_NAME.get(match.group(1)) if match else None
    if upstream is None:
        upstream = _BY_CODE[code]
    return combined_class(upstream, code)(*error.args)


F = TypeVar("F", bound=Callable)


def raises_gpu_errors(function: F) -> F:
    """Wraps a GPU call so that zeus_cpp's code errors leave it as upstream's GPU errors too."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except ZeusBaseGPUError:
            raise
        except ZeusError as error:
            if type(error) not in _BY_CODE:
                raise
            raise to_gpu_error(error).with_traceback(error.__traceback__) from None

    return wrapper  # type: ignore[return-value]


def gpu_error_class(cls: type) -> type:
    """Class decorator: every public method (and __init__) raises upstream's GPU errors."""
    for name, member in list(vars(cls).items()):
        if callable(member) and not isinstance(member, type) and (not name.startswith("_") or name == "__init__"):
            setattr(cls, name, raises_gpu_errors(member))
    return cls
