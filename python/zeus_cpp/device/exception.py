"""The device errors of upstream's `zeus.device.exception`, as zeus_cpp raises them: every one is
also a `zeus_cpp.ZeusError`, so `except ZeusError` catches them with the library's own."""

from __future__ import annotations

from zeus_cpp import ZeusError


class ZeusBaseGPUError(ZeusError):
    """Base of the GPU errors."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ZeusBaseCPUError(ZeusError):
    """Base of the CPU errors."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ZeusBaseSoCError(ZeusError):
    """Base of the SoC errors."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ZeusdError(ZeusBaseGPUError):
    """A zeusd request that did not succeed (its status and message in the text)."""


__all__ = ["ZeusBaseCPUError", "ZeusBaseGPUError", "ZeusBaseSoCError", "ZeusdError"]
