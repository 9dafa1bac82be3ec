"""CPU energy through RAPL (as `zeus.device.cpu`): `get_cpus()` and upstream's `CPUs` API.

    cpus = get_cpus()                                  # RAPLCPUs; ZeusCPUInitError without RAPL
    before = cpus.get_total_energy_consumption(0)      # CpuDramMeasurement(cpu_mj, dram_mj)
    ...
    used = cpus.get_total_energy_consumption(0) - before

The counters are the packages' RAPL counters (ZEUS_POWERCAP_ROOT points at another tree) with
their wraparounds added, in mJ; `dram_mj` is None for a package without a DRAM zone. Reading
them needs root since Linux 5.10: unreadable packages are not listed, and with none readable
get_cpus() raises ZeusCPUInitError naming why. Each call of get_cpus() discovers afresh (upstream
keeps a singleton; the counters read the same either way).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from zeus_cpp import ZeusError, _zeus_cpp
from zeus_cpp.device.exception import ZeusBaseCPUError
from zeus_cpp.device.cpu.rapl import get_current_rapl_zone_id


class ZeusCPUInitError(ZeusBaseCPUError):
    """No CPU energy interface could be used."""


class ZeusCPUNoPermissionError(ZeusBaseCPUError):
    """A counter cannot be read (root is needed since Linux 5.10)."""


class ZeusCPUNotFoundError(ZeusBaseCPUError):
    """No CPU package of that index."""


@dataclass
class CpuDramMeasurement:
    """A package's and its DRAM's energy in mJ (dram_mj None without a DRAM zone)."""

    cpu_mj: float
    dram_mj: Optional[float] = None

    def __sub__(self, other: "CpuDramMeasurement") -> "CpuDramMeasurement":
        """The difference, field by field (a DRAM value on one side only is kept, negated when
        it is the other's)."""
        if self.dram_mj is not None and other.dram_mj is not None:
            dram: Optional[float] = self.dram_mj - other.dram_mj
        elif self.dram_mj is not None:
            dram = self.dram_mj
        elif other.dram_mj is not None:
            dram = -other.dram_mj
        else:
            dram = None
        return CpuDramMeasurement(self.cpu_mj - other.cpu_mj, dram)

    def __truediv__(self, other: object) -> "CpuDramMeasurement":
        """Both fields divided by a number; ZeroDivisionError for 0."""
        if not isinstance(other, (int, float)) or isinstance(other, bool):
            return NotImplemented
        if other == 0:
            raise ZeroDivisionError("Division by zero is not allowed")
        return CpuDramMeasurement(self.cpu_mj / other, None if self.dram_mj is None else self.dram_mj / other)


def _translate(error: ZeusError, index: int) -> ZeusBaseCPUError:
    if isinstance(error, _zeus_cpp.PermissionDeniedError):
        return ZeusCPUNoPermissionError(f"CPU {index}: {error}")
    if isinstance(error, (_zeus_cpp.NotFoundError, _zeus_cpp.InvalidArgumentError)):
        return ZeusCPUNotFoundError(str(error))
    return ZeusBaseCPUError(f"CPU {index}: {error}")


class CPU:
    """One CPU package."""

    def __init__(self, cpu_index: int) -> None:
        self.cpu_index = cpu_index

    def get_total_energy_consumption(self) -> CpuDramMeasurement:
        """The package's (and DRAM's) energy counters in mJ."""
        raise NotImplementedError

    def supports_get_dram_energy_consumption(self) -> bool:
        """True when the package has a DRAM zone."""
        raise NotImplementedError

    getTotalEnergyConsumption = get_total_energy_consumption
    supportsGetDramEnergyConsumption = supports_get_dram_energy_consumption


class RAPLCPU(CPU):
    """A RAPL package (intel-rapl:N)."""

    def __init__(self, cpu_index: int, handle: "_zeus_cpp.Cpu") -> None:
        super().__init__(cpu_index)
        self._cpu = handle

    @property
    def name(self) -> str:
        """The zone's name, e.g. "package-0"."""
        return self._cpu.name

    def get_total_energy_consumption(self) -> CpuDramMeasurement:
        """The package's (and DRAM's) counters in mJ, wraparounds added."""
        try:
            package_uj = self._cpu.package_energy_uj()
            dram_uj = self._cpu.dram_energy_uj()
        except ZeusError as error:
            raise _translate(error, self.cpu_index) from error
        return CpuDramMeasurement(package_uj / 1000.0, None if dram_uj is None else dram_uj / 1000.0)

    def supports_get_dram_energy_consumption(self) -> bool:
        """True when the package has a DRAM zone."""
        return bool(self._cpu.has_dram)

    getTotalEnergyConsumption = get_total_energy_consumption
    supportsGetDramEnergyConsumption = supports_get_dram_energy_consumption


class CPUs:
    """The readable CPU packages; methods take a package index."""

    def __init__(self) -> None:
        self._cpus: list = []

    @property
    def cpus(self) -> Sequence[CPU]:
        """The CPU objects."""
        return self._cpus

    def _cpu(self, index: int) -> CPU:
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"index must be an int, not {type(index).__name__}")
        if not 0 <= index < len(self._cpus):
            raise ZeusCPUNotFoundError(f"CPU index {index} does not exist ({len(self._cpus)} CPU packages)")
        return self._cpus[index]

    def get_total_energy_consumption(self, index: int) -> CpuDramMeasurement:
        """Package `index`'s (and its DRAM's) counters in mJ."""
        return self._cpu(index).get_total_energy_consumption()

    def supports_get_dram_energy_consumption(self, index: int) -> bool:
        """True when package `index` has a DRAM zone."""
        return self._cpu(index).supports_get_dram_energy_consumption()

    def __len__(self) -> int:
        return len(self._cpus)

    getTotalEnergyConsumption = get_total_energy_consumption
    supportsGetDramEnergyConsumption = supports_get_dram_energy_consumption


def _discover() -> "_zeus_cpp.Devices":
    return _zeus_cpp.Devices.discover()


class RAPLCPUs(CPUs):
    """Every readable RAPL package (ZeusCPUInitError when there is none)."""

    def __init__(self) -> None:
        super().__init__()
        devices = _discover()
        if devices.cpu_count == 0:
            why = "; ".join(detail for backend, used, detail in devices.backends if backend == "rapl")
            raise ZeusCPUInitError(
                "No readable RAPL CPU package" + (f" ({why})" if why else "") +
                ": RAPL needs Linux's intel-rapl (or AMD's) powercap zones, readable by root since "
                "Linux 5.10 (run as root, or through zeusd with ZEUSD_SOCK_PATH)")
        self._devices = devices  # keeps the session alive
        self._cpus = [RAPLCPU(i, devices.cpu(i)) for i in range(devices.cpu_count)]


def rapl_is_available() -> bool:
    """True when at least one RAPL package can be read."""
    return _discover().cpu_count > 0


def get_cpus() -> CPUs:
    """The CPU packages through RAPL; ZeusCPUInitError when none can be read."""
    return RAPLCPUs()


__all__ = [
    "CPU",
    "CPUs",
    "CpuDramMeasurement",
    "RAPLCPU",
    "RAPLCPUs",
    "ZeusBaseCPUError",
    "ZeusCPUInitError",
    "ZeusCPUNoPermissionError",
    "ZeusCPUNotFoundError",
    "get_cpus",
    "get_current_rapl_zone_id",
    "rapl_is_available",
]
