"""Test utilities: `ReplayZeusMonitor` (as `zeus.utils.testing`).

    monitor = ReplayZeusMonitor(log_file="zeus_monitor.csv")   # a ZeusMonitor log_file
    monitor.begin_window("step")
    m = monitor.end_window("step")     # the next logged window: its time and GPU energy

A drop-in ZeusMonitor for tests and fast-forwarded runs: every ended window returns the next row
of a log written by ZeusMonitor(log_file=...), so a training loop replays what a real run
measured without touching a GPU. Rows are consumed in end_window order; cancelled windows
consume none.
"""

from __future__ import annotations

import csv
import os
import re
from typing import Dict, List, Optional, Union

from zeus_cpp._zeus_cpp import InvalidArgumentError, NotFoundError
from zeus_cpp.monitor.energy import Measurement

_FIXED_COLUMNS = ["start_time", "window_name", "elapsed_time"]
_GPU_COLUMN = re.compile(r"gpu(\d+)_energy")


class ReplayZeusMonitor:
    """Replays the windows of a ZeusMonitor log file."""

    def __init__(
        self,
        gpu_indices: Optional[List[int]] = None,
        approx_instant_energy: bool = False,
        log_file: Union[str, os.PathLike, None] = None,
        ignore_sync_execution: bool = False,
        match_window_name: bool = True,
    ) -> None:
        """Opens the log and reads its header.

        Args:
            gpu_indices: the GPUs of the log's columns; None: read from the header.
            approx_instant_energy: accepted for compatibility; not used.
            log_file: the CSV a ZeusMonitor wrote (start_time,window_name,elapsed_time,
                gpu{i}_energy,...). Required.
            ignore_sync_execution: accepted for compatibility (nothing is synchronised here).
            match_window_name: check that each ended window is the one the next row logged.

        Raises:
            InvalidArgumentError: no log_file, a header that is not a ZeusMonitor log's, or
                gpu_indices that do not match its columns.
            NotFoundError: the file does not exist.
        """
        del approx_instant_energy, ignore_sync_execution
        if log_file is None:
            raise InvalidArgumentError("log_file is required: the ZeusMonitor log to replay")
        path = os.fspath(log_file)
        if not os.path.isfile(path):
            raise NotFoundError(f"log file '{path}' does not exist (or is not a file)")
        self._file = open(path, newline="")
        self._rows = csv.reader(self._file)
        self._path = path
        header = next(self._rows, [])
        columns = [_GPU_COLUMN.fullmatch(name) for name in header[3:]]
        if header[:3] != _FIXED_COLUMNS or not columns or not all(columns):
            self._file.close()
            raise InvalidArgumentError(
                f"'{path}' is not a ZeusMonitor log: its header is {','.join(header)!r}, expected "
                "'start_time,window_name,elapsed_time,gpu0_energy,...'")
        logged = [int(m.group(1)) for m in columns if m is not None]
        if gpu_indices is not None and list(gpu_indices) != logged:
            self._file.close()
            raise InvalidArgumentError(
                f"gpu_indices {list(gpu_indices)} do not match the log's GPU columns {logged}")
        self.gpu_indices: List[int] = logged
        self.nvml_gpu_indices: List[int] = logged
        self.match_window_name = bool(match_window_name)
        self._open: List[str] = []
        self._line = 1

    def begin_window(self, key: str, sync_execution: bool = True, restart: bool = False) -> None:
        """Opens window `key` (InvalidArgumentError when open and restart is False)."""
        del sync_execution
        if key in self._open:
            if not restart:
                raise InvalidArgumentError(f"window '{key}' is already open")
            self._open.remove(key)
        self._open.append(key)

    def end_window(self, key: str, sync_execution: bool = True, cancel: bool = False) -> Measurement:
        """Closes window `key` and returns the next logged window's time and GPU energy.

        Raises:
            NotFoundError: `key` is not open.
            InvalidArgumentError: the log has no row left, a malformed row, or (with
                match_window_name) a row logged for another window.
        """
        del sync_execution
        if key not in self._open:
            raise NotFoundError(f"no window named '{key}' is open")
        self._open.remove(key)
        if cancel:
            return Measurement(time=0.0, gpu_energy={i: 0.0 for i in self.gpu_indices})
        row = next(self._rows, None)
        self._line += 1
        where = f"'{self._path}' line {self._line}"
        if row is None:
            raise InvalidArgumentError(f"{where}: no more windows in the log to replay")
        if len(row) != 3 + len(self.gpu_indices):
            raise InvalidArgumentError(
                f"{where}: {len(row)} fields, expected {3 + len(self.gpu_indices)}")
        if self.match_window_name and row[1] != key:
            raise InvalidArgumentError(f"{where}: logged window '{row[1]}', not '{key}'")
        try:
            elapsed, *energies = (float(field) for field in row[2:])
        except ValueError:
            raise InvalidArgumentError(f"{where}: a time or energy that is not a number") from None
        gpu_energy: Dict[int, float] = dict(zip(self.gpu_indices, energies))
        return Measurement(time=elapsed, gpu_energy=gpu_energy)

    def reset_windows(self) -> None:
        """Drops every open window."""
        self._open.clear()

    def is_window_open(self, key: str) -> bool:
        """True when window `key` is open."""
        return key in self._open

    def __del__(self) -> None:
        file = getattr(self, "_file", None)
        if file is not None:
            file.close()


__all__ = ["ReplayZeusMonitor"]
