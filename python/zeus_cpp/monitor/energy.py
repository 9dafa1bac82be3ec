"""Energy measurement of code regions: `ZeusMonitor` and `Measurement` (as `zeus.monitor.energy`).

    monitor = ZeusMonitor(gpu_indices=[0])
    monitor.begin_window("training")
    train()
    measurement = monitor.end_window("training")   # .time (s), .gpu_energy {0: J}, .total_energy
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Union

from zeus_cpp import _fake_gpu as fake_gpu
from zeus_cpp import _zeus_cpp
from zeus_cpp._zeus_cpp import InvalidArgumentError, NotFoundError
from zeus_cpp.utils.framework import sync_function


@dataclass
class JetsonMeasurement:
    """A Jetson's rail energy over one window, in mJ (upstream Zeus's `JetsonMeasurement`).

    Each field is None when the board has no such rail. The total rail includes the CPU and
    GPU rails: do not add them up.
    """

    cpu_energy_mj: Optional[float] = None
    gpu_energy_mj: Optional[float] = None
    total_energy_mj: Optional[float] = None


def _soc_measurement(soc: Optional[tuple]) -> Optional[JetsonMeasurement]:
    if soc is None:
        return None
    cpu_j, gpu_j, total_j = soc
    return JetsonMeasurement(*(None if j is None else j * 1000.0 for j in (cpu_j, gpu_j, total_j)))


@dataclass
class Measurement:
    """What one measurement window measured.

    Attributes:
        time: elapsed time of the window, in seconds.
        gpu_energy: joules per framework-visible GPU index.
        cpu_energy: joules per CPU package (None when no CPU is measured).
        dram_energy: joules per CPU package's DRAM (None when no DRAM is measured).
        soc_energy: the SoC's rail energy (a `JetsonMeasurement`, mJ) on an NVIDIA Jetson; None
            elsewhere. Not part of `total_energy` (as upstream).
    """

    time: float
    gpu_energy: Dict[int, float]
    cpu_energy: Optional[Dict[int, float]] = None
    dram_energy: Optional[Dict[int, float]] = None
    soc_energy: Optional[JetsonMeasurement] = None

    @property
    def total_energy(self) -> float:
        """The GPUs' energy in joules, as upstream Zeus's `Measurement.total_energy` (GPUs only),
        so a script ported by its import line gets the same number."""
        return sum(self.gpu_energy.values())

    @property
    def total_energy_with_cpu(self) -> float:
        """GPUs plus CPU packages plus DRAM, in joules (not in upstream Zeus).

        RAPL's DRAM zone is not part of its package counter on Intel CPUs, so both are added.
        Equals `total_energy` when no CPU is measured.
        """
        total = self.total_energy
        for part in (self.cpu_energy, self.dram_energy):
            if part:
                total += sum(part.values())
        return total


# The largest index the C++ core takes (a C int); anything above names no device.
_MAX_INDEX = 2**31 - 1


def _check_indices(name: str, indices: Optional[List[int]]) -> Optional[List[int]]:
    """Validates an index list here so the error names the argument (not pybind's dump)."""
    if indices is None:
        return None
    if isinstance(indices, (str, bytes)) or not hasattr(indices, "__iter__"):
        raise TypeError(f"{name} must be a list of ints or None, not {type(indices).__name__}")
    out = []
    for index in indices:
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"{name} must hold ints, not {type(index).__name__} ({index!r})")
        if index > _MAX_INDEX:
            raise NotFoundError(
                f"{name}: index {index} does not exist (indices count from 0 over the visible devices)"
            )
        if index < 0:
            raise InvalidArgumentError(
                f"{name}: index {index} is negative: indices count from 0 over the visible devices"
            )
        out.append(index)
    return out


def _check_key(key: str) -> str:
    """A window name: a str that can be encoded as UTF-8 (no lone surrogate)."""
    if not isinstance(key, str):
        raise TypeError(f"window key must be a str, not {type(key).__name__}")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidArgumentError(
            f"window key {key!r} is not valid text: {error.reason} at position {error.start} "
            "(a lone surrogate, e.g. from a file name decoded with surrogateescape)"
        ) from None
    return key


class ZeusMonitor:
    """Measures the time and energy of named code regions ("windows") on GPUs, CPUs and DRAM.

    Windows may nest and overlap. GPUs with an energy counter (NVIDIA Volta and newer) are read
    directly; older ones are sampled in the background by the C++ core. Device calls release
    the GIL.
    """

    def __init__(
        self,
        gpu_indices: Optional[List[int]] = None,
        cpu_indices: Optional[List[int]] = None,
        approx_instant_energy: bool = False,
        log_file: Optional[Union[str, os.PathLike]] = None,
        sync_execution_with: Union[str, Callable[[], None], None] = "torch",
    ) -> None:
        """Discovers the devices and prepares the monitor.

        Args:
            gpu_indices: framework-visible GPU indices to measure (CUDA_VISIBLE_DEVICES applies);
                None measures all GPUs.
            cpu_indices: CPU packages (RAPL) to measure; None measures all readable ones (an
                unreadable RAPL turns CPU measurement off with a warning); an explicit list makes
                an unreadable RAPL an error.
            approx_instant_energy: when a GPU counter reads 0 J over a non-empty window (window
                shorter than its update period), use instant power x elapsed time instead.
            log_file: one CSV row per ended window, upstream Zeus's format
                (start_time,window_name,elapsed_time,gpu{i}_energy,...). A file that exists with
                this header is appended to; one with any other content is an error (nothing is
                overwritten).
            sync_execution_with: "torch" (torch.cuda.synchronize when CUDA is available), "jax",
                "cupy", a callable, or None: what to wait on before each timestamp.

        Raises:
            TypeError: for arguments of the wrong type.
            InvalidArgumentError: negative or duplicate indices, unknown sync framework.
            NotFoundError: an index past the visible devices.
            PermissionDeniedError: CPUs asked for explicitly but RAPL is unreadable.
        """
        gpu_indices = _check_indices("gpu_indices", gpu_indices)
        cpu_indices = _check_indices("cpu_indices", cpu_indices)
        if log_file is not None and not isinstance(log_file, (str, os.PathLike)):
            raise TypeError(f"log_file must be a path or None, not {type(log_file).__name__}")
        # The sync callable needs the final GPU list; build it once the monitor knows it.
        self._sync_with = sync_execution_with
        self._sync_holder: List[Optional[Callable[[], None]]] = [None]
        holder = self._sync_holder

        def sync() -> None:
            function = holder[0]
            if function is not None:
                function()

        sync_function(sync_execution_with, [])  # validates the name before touching devices
        try:
            self._monitor = _zeus_cpp.EnergyMonitor(
                gpu_indices=gpu_indices,
                cpu_indices=cpu_indices,
                approx_instant_energy=bool(approx_instant_energy),
                log_file="" if log_file is None else os.fspath(log_file),
                log_append=True,
                log_gpu_columns_only=True,
                sync=sync if sync_execution_with is not None else None,
            )
        except NotFoundError as error:
            if "(no GPUs visible)" not in str(error) or fake_gpu.enabled() or fake_gpu.bundled_path() is None:
                raise
            # A machine without a GPU: name the switch to the fake this package ships.
            raise type(error)(f"{error}; to try zeus_cpp without a GPU, set {fake_gpu.SWITCH}=1 to use the "
                              "fake NVIDIA GPU shipped with it (python -m zeus_cpp.fake_gpu)") from None
        holder[0] = sync_function(sync_execution_with, self._monitor.gpu_indices)
        self.gpu_indices: List[int] = list(self._monitor.gpu_indices)
        self.cpu_indices: List[int] = list(self._monitor.cpu_indices)

    def begin_window(self, key: str, sync_execution: bool = True, restart: bool = False) -> None:
        """Starts the measurement window `key`.

        Args:
            key: the window's name; windows with different names may nest and overlap.
            sync_execution: wait for queued GPU work before the timestamp.
            restart: when `key` is already open, drop it and begin it again (e.g. after a
                notebook cell failed between begin_window and end_window).

        Raises:
            InvalidArgumentError: a window named `key` is already open and restart is False.
        """
        sync = bool(sync_execution) and self._sync_holder[0] is not None
        self._monitor.begin_window(_check_key(key), sync, bool(restart))

    def _synchronize(self) -> None:
        """Waits for queued GPU work as the windows do (nothing without a sync function)."""
        function = self._sync_holder[0]
        if function is not None:
            function()

    def reset_windows(self) -> None:
        """Drops every open window; their measurements are lost (nothing is logged)."""
        self._monitor.reset_windows()

    def end_window(self, key: str, sync_execution: bool = True, cancel: bool = False) -> Measurement:
        """Ends the window `key` and returns what it measured.

        Args:
            key: the window's name.
            sync_execution: wait for queued GPU work before the timestamp.
            cancel: drop the window without measuring (an empty Measurement is returned).

        Raises:
            NotFoundError: no window named `key` is open (also a ValueError, as in the Python Zeus).
            Whatever the sync callable raised: the window is then closed and its measurement
            dropped (at begin_window, the window is not opened).
        """
        time_s, gpu, cpu, dram, soc = self._monitor.end_window(
            _check_key(key), bool(sync_execution) and self._sync_holder[0] is not None, bool(cancel)
        )
        return Measurement(
            time=time_s,
            gpu_energy=gpu,
            cpu_energy=cpu if self.cpu_indices else None,
            dram_energy=dram if dram else None,
            soc_energy=_soc_measurement(soc),
        )

    def is_window_open(self, key: str) -> bool:
        """True when a window named `key` is open."""
        return self._monitor.is_window_open(_check_key(key))
