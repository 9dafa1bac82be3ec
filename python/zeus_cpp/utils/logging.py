"""Upstream's `zeus.utils.logging`: `FileAndConsole` and `get_logger`.

    from zeus_cpp.utils.logging import get_logger
    logger = get_logger(__name__)          # INFO and above to stdout, or ZEUS_LOG_LEVEL
    logger.info("hello")

`get_logger` is the helper upstream had until 0.12 (0.13 dropped it for plain
`logging.getLogger`); it is kept so that code written against it still imports. zeus_cpp's own
Python modules log through `logging.getLogger(__name__)` and add no handler. ZEUS_LOG_LEVEL also sets
the C++ library's level (debug, info, warning, error; any case here).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Union


class FileAndConsole:
    """Like tee, but for Python prints: `sys.stdout = FileAndConsole("run.log")`."""

    def __init__(self, filepath: Union[str, Path]) -> None:
        """Opens `filepath` for writing (truncated) beside the current stdout."""
        self.file = open(filepath, "w")  # noqa: SIM115 (kept open, as upstream's)
        self.stdout = sys.stdout

    def write(self, message: str) -> None:
        """Writes `message` to both and flushes both."""
        self.file.write(message)
        self.stdout.write(message)
        self.file.flush()
        self.stdout.flush()

    def flush(self) -> None:
        """Flushes both the log file and stdout."""
        self.file.flush()
        self.stdout.flush()


def _level(value: Union[str, int]) -> Union[str, int]:
    """A level for Logger.setLevel: a number, or a name in any case (warn as warning)."""
    if isinstance(value, str):
        name = value.strip().upper()
        if name.isdigit():
            return int(name)
        return "WARNING" if name == "WARN" else name
    return value


def get_logger(name: str, level: int = logging.INFO, propagate: bool = False) -> logging.Logger:
    """A logger named `name` that writes `[time] [name](file:line) message` to stdout at `level`
    (or ZEUS_LOG_LEVEL), not propagated to the root logger; an existing logger of that name is
    returned as it is (upstream's behaviour)."""
    if name in logging.Logger.manager.loggerDict:
        return logging.getLogger(name)
    logger = logging.getLogger(name)
    logger.propagate = propagate
    try:
        logger.setLevel(_level(os.environ.get("ZEUS_LOG_LEVEL", level)))
    except ValueError:  # an unknown name in ZEUS_LOG_LEVEL: the caller's level
        logger.setLevel(level)
    formatter = logging.Formatter("[%(asctime)s] [%(name)s](%(filename)s:%(lineno)d) %(message)s")
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(formatter)
    logger.addHandler(handler)
    return logger


__all__ = ["FileAndConsole", "get_logger"]
