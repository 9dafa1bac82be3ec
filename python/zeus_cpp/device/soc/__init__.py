"""System-on-chip energy (as `zeus.device.soc`): `get_soc()` and upstream's `SoC` API.

    soc = get_soc()                  # Jetson; ZeusSoCInitError where no SoC can be observed
    soc.begin_window("step")
    ...
    m = soc.end_window("step")       # JetsonMeasurement(cpu_energy_mj=..., gpu_energy_mj=..., total_energy_mj=...)

NVIDIA Jetson boards are read through their rails' power monitors (ZEUS_SYSFS_ROOT points at
another tree), integrated by the C++ core. Apple silicon is not observable here: on a Mac,
get_soc() raises ZeusAppleInitError (a ZeusSoCInitError), as upstream does without
zeus-apple-silicon.
"""

from __future__ import annotations

import platform
import sys
from dataclasses import asdict, dataclass, fields
from typing import Dict, Optional, Set

from zeus_cpp import ZeusError, _zeus_cpp
from zeus_cpp.device.exception import ZeusBaseSoCError


class ZeusSoCInitError(ZeusBaseSoCError):
    """No observable SoC."""


class ZeusJetsonInitError(ZeusSoCInitError):
    """A Jetson board whose rails cannot be read."""


class ZeusAppleInitError(ZeusSoCInitError):
    """Apple silicon, which this build cannot observe."""


class SoCMeasurement:
    """Energy of a SoC's subsystems in mJ; the fields depend on the SoC."""

    def __sub__(self, other: "SoCMeasurement") -> "SoCMeasurement":
        raise NotImplementedError

    def zero_all_fields(self) -> None:
        """Sets every field to zero."""
        raise NotImplementedError

    zeroAllFields = zero_all_fields


@dataclass
class JetsonMeasurement(SoCMeasurement):
    """A Jetson's CPU, GPU and whole-board energy in mJ (None for a rail the board lacks)."""

    cpu_energy_mj: Optional[float] = None
    gpu_energy_mj: Optional[float] = None
    total_energy_mj: Optional[float] = None

    def __sub__(self, other: "JetsonMeasurement") -> "JetsonMeasurement":
        """Field by field; a field missing on either side is None."""
        if not isinstance(other, JetsonMeasurement):
            raise TypeError("Subtraction is only supported between JetsonMeasurement instances.")
        out: Dict[str, Optional[float]] = {}
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            out[f.name] = None if a is None or b is None else a - b
        return JetsonMeasurement(**out)

    def zero_all_fields(self) -> None:
        """Sets every present field to 0.0."""
        for f in fields(self):
            if getattr(self, f.name) is not None:
                setattr(self, f.name, 0.0)

    zeroAllFields = zero_all_fields


class SoC:
    """A SoC's cumulative energy and named measurement windows."""

    def __init__(self) -> None:
        self.measurement_states: Dict[str, SoCMeasurement] = {}

    def get_available_metrics(self) -> Set[str]:
        """The measurement's fields this SoC reports."""
        raise NotImplementedError

    def get_total_energy_consumption(self) -> SoCMeasurement:
        """The cumulative energy since the SoC object was made, in mJ."""
        raise NotImplementedError

    def begin_window(self, key: str, restart: bool = False) -> None:
        """Starts window `key` (KeyError when it exists, unless restart)."""
        if key in self.measurement_states:
            if not restart:
                raise KeyError(f"Measurement window '{key}' already exists")
            self.measurement_states.pop(key)
        self.measurement_states[key] = self.get_total_energy_consumption()

    def end_window(self, key: str) -> SoCMeasurement:
        """Ends window `key`: the energy since its begin, in mJ (KeyError when unknown)."""
        try:
            start = self.measurement_states.pop(key)
        except KeyError:
            raise KeyError(f"Measurement window '{key}' does not exist") from None
        return self.get_total_energy_consumption() - start

    getAvailableMetrics = get_available_metrics
    getTotalEnergyConsumption = get_total_energy_consumption
    beginWindow = begin_window
    endWindow = end_window


class Jetson(SoC):
    """An NVIDIA Jetson board, through its rails' power monitors."""

    def __init__(self) -> None:
        super().__init__()
        devices = _zeus_cpp.Devices.discover()
        if not devices.has_soc:
            why = "; ".join(detail for backend, used, detail in devices.backends if backend == "jetson")
            raise ZeusJetsonInitError("No Jetson power monitor could be read" + (f" ({why})" if why else ""))
        self._devices = devices
        self.rails = list(devices.soc_rails)

    def get_total_energy_consumption(self) -> JetsonMeasurement:
        """The rails' energy integrated since discovery, in mJ."""
        cpu, gpu, total = self._devices.soc_energy_mj()
        return JetsonMeasurement(cpu_energy_mj=cpu, gpu_energy_mj=gpu, total_energy_mj=total)

    def get_available_metrics(self) -> Set[str]:
        """The fields this board reports (its rails)."""
        return {name for name, value in asdict(self.get_total_energy_consumption()).items() if value is not None}


def apple_silicon_is_available() -> bool:
    """True on Apple silicon (which this build cannot observe: get_soc() says so)."""
    return sys.platform == "darwin" and platform.processor() == "arm"


def jetson_is_available() -> bool:
    """True when a Jetson's power monitors can be read."""
    return bool(_zeus_cpp.Devices.discover().has_soc)


def get_soc() -> SoC:
    """The SoC of this machine: a Jetson. ZeusAppleInitError on Apple silicon, ZeusSoCInitError
    where nothing can be observed."""
    if apple_silicon_is_available():
        raise ZeusAppleInitError(
            "Apple silicon is not observable by zeus_cpp (upstream reads it through the "
            "zeus-apple-silicon package); measure its GPUs' and CPUs' energy another way")
    try:
        return Jetson()
    except ZeusJetsonInitError as error:
        raise ZeusSoCInitError(f"No observable SoC was found on the current machine: {error}") from error


__all__ = [
    "Jetson",
    "JetsonMeasurement",
    "SoC",
    "SoCMeasurement",
    "ZeusAppleInitError",
    "ZeusBaseSoCError",
    "ZeusJetsonInitError",
    "ZeusSoCInitError",
    "apple_silicon_is_available",
    "get_soc",
    "jetson_is_available",
]
