"""Upstream's `zeus.exception`: `ZeusBaseError`, the base of every error Zeus raises.

Here it is `zeus_cpp.ZeusError` itself, so an upstream `except ZeusBaseError:` catches every error
zeus_cpp raises (the per-code classes `NotSupportedError`, `PermissionDeniedError`, ... and the
upstream-named ones of `zeus_cpp.device.gpu`, `zeus_cpp.device.exception`, `zeus_cpp.utils.zeusd`),
and a subclass of it, as upstream users write their own, is a `ZeusError` too. Every one has
upstream's `message` attribute (the text `str()` gives).

    from zeus_cpp.exception import ZeusBaseError

    try:
        monitor.end_window("never begun")
    except ZeusBaseError as error:
        print(error.message)
"""

from __future__ import annotations

from zeus_cpp._zeus_cpp import ZeusError


def _get_message(self: BaseException) -> str:
    """The error's message: what was set (upstream's subclasses set it), else its text."""
    stored = self.__dict__.get("_zeus_message")
    if stored is not None:
        return stored
    if len(self.args) == 1 and isinstance(self.args[0], str):
        return self.args[0]
    return BaseException.__str__(self)


def _set_message(self: BaseException, message: str) -> None:
    self.__dict__["_zeus_message"] = message


# Upstream's ZeusBaseError stores `message`; zeus_cpp's errors are raised from C++ with a text only.
ZeusError.message = property(_get_message, _set_message, doc="The error's message (upstream's attribute).")

#: Upstream's base class: zeus_cpp's own base, so that both `except` clauses catch the same errors.
ZeusBaseError = ZeusError

__all__ = ["ZeusBaseError"]
