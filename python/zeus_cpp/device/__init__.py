"""GPU discovery and control: `get_gpus()` (as `zeus.device`).

    gpus = get_gpus()
    for index in range(len(gpus)):
        print(gpus.get_name(index), gpus.get_power_management_limit_constraints(index))

Units are the hardware's: mW, mJ, MHz. Each call of get_gpus() discovers afresh (NVML,
then AMD; CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES apply). Device calls release the GIL.
Setting limits or clocks needs root or CAP_SYS_ADMIN (PermissionDeniedError otherwise), or zeusd
(ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT): zeusd undoes this process's changes when it exits, and the
devices a change went through are kept until then (over TCP their lease session closes with them).

A failing call raises upstream's GPU error for it (`zeus_cpp.device.gpu`: ZeusGPUNoPermissionError,
ZeusGPUNotSupportedError, ...), which is also an instance of zeus_cpp's class for its error code
(PermissionDeniedError, NotSupportedError, ...).
"""

from __future__ import annotations

import atexit
from typing import Any, Dict, List, Optional, Sequence, Tuple

from zeus_cpp import InvalidArgumentError, _zeus_cpp
from zeus_cpp.device._gpu_errors import ZeusGPUHeterogeneousError, combined_class, gpu_error_class

# Devices through which a change went to zeusd: kept until the process exits, so that zeusd undoes
# the change then, whatever happens to the GPUs object (over TCP the devices hold the lease
# session that owns the change, and dropping them would close it early). Released at exit.
_changed_through_zeusd: Dict[int, Any] = {}


@atexit.register
def _release_changed_devices() -> None:
    _changed_through_zeusd.clear()  # their lease sessions close now, while Python still runs


@gpu_error_class
class GPU:
    """One GPU; index is the framework-visible index."""

    def __init__(self, handle: "_zeus_cpp.Gpu", _zeusd_devices: Any = None) -> None:
        self._gpu = handle
        self._zeusd_devices = _zeusd_devices  # the Devices when they route changes through zeusd
        self.gpu_index: int = handle.index

    def _changed(self) -> None:
        """Keeps the devices a change went through zeusd with until the process exits."""
        if self._zeusd_devices is not None:
            _changed_through_zeusd[id(self._zeusd_devices)] = self._zeusd_devices

    def get_name(self) -> str:
        """Product name, e.g. "NVIDIA H100 80GB HBM3"."""
        return self._gpu.name

    def get_uuid(self) -> str:
        """Stable unique id, e.g. "GPU-8f2c..."."""
        return self._gpu.uuid

    def get_architecture(self) -> str:
        """Architecture name, e.g. "Hopper"."""
        return self._gpu.architecture

    def get_power_scope(self) -> str:
        """What the power and energy readings cover: "gpu", or "module" on C2C superchips
        (Grace Hopper) whose NVML reports the whole CPU + GPU module."""
        return self._gpu.power_scope()

    def get_power_management_limit_constraints(self) -> Tuple[int, int]:
        """(minimum, maximum) power limit in mW."""
        return self._gpu.power_limit_range_mw()

    def get_power_management_limit(self) -> int:
        """Current power limit in mW."""
        return self._gpu.power_limit_mw()

    def get_default_power_management_limit(self) -> int:
        """Default power limit in mW."""
        return self._gpu.default_power_limit_mw()

    def set_power_management_limit(self, power_limit_mw: int, block: bool = True) -> None:
        """Sets the power limit (mW); `block` is accepted for compatibility (always blocks)."""
        del block
        self._gpu.set_power_limit_mw(power_limit_mw)
        self._changed()

    def reset_power_management_limit(self, block: bool = True) -> None:
        """Back to the default power limit."""
        del block
        self._gpu.reset_power_limit()
        self._changed()

    def set_persistence_mode(self, enabled: bool, block: bool = True) -> None:
        """Turns persistence mode on or off."""
        del block
        self._gpu.set_persistence_mode(enabled)
        self._changed()

    def get_persistence_mode(self) -> bool:
        """True when persistence mode is on."""
        return self._gpu.persistence_mode()

    def get_supported_memory_clocks(self) -> List[int]:
        """Supported memory clocks in MHz."""
        return self._gpu.supported_memory_clocks_mhz()

    def get_supported_graphics_clocks(self, memory_clock_mhz: Optional[int] = None) -> List[int]:
        """Supported SM clocks in MHz (for the highest memory clock)."""
        del memory_clock_mhz
        return self._gpu.supported_sm_clocks_mhz()

    def set_gpu_locked_clocks(self, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Locks the SM clock to [min, max] MHz."""
        del block
        self._gpu.lock_sm_clocks_mhz(min_clock_mhz, max_clock_mhz)
        self._changed()

    def reset_gpu_locked_clocks(self, block: bool = True) -> None:
        """Unlocks the SM clock."""
        del block
        self._gpu.reset_sm_clocks()
        self._changed()

    def set_memory_locked_clocks(self, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Locks the memory clock to [min, max] MHz."""
        del block
        self._gpu.lock_memory_clocks_mhz(min_clock_mhz, max_clock_mhz)
        self._changed()

    def reset_memory_locked_clocks(self, block: bool = True) -> None:
        """Unlocks the memory clock."""
        del block
        self._gpu.reset_memory_clocks()
        self._changed()

    def reset_locked_clocks(self, block: bool = True) -> None:
        """Unlocks the SM and the memory clocks (upstream's default: one domain, then the other)."""
        self.reset_gpu_locked_clocks(block)
        self.reset_memory_locked_clocks(block)

    @property
    def supports_nonblocking_setters(self) -> bool:
        """False: every setter returns once the change is made (through zeusd too), so
        `block=False` is accepted and behaves as `block=True`."""
        return False

    def get_average_power_usage(self) -> int:
        """The driver's moving average of power draw, in mW."""
        return self._gpu.average_power_mw()

    def get_instant_power_usage(self) -> int:
        """Instant power draw in mW."""
        return self._gpu.instant_power_mw()

    def get_average_memory_power_usage(self) -> int:
        """The driver's moving average of the memory's power draw, in mW (NotSupportedError
        where the GPU lacks it, e.g. before Hopper)."""
        return self._gpu.memory_average_power_mw()

    def get_gpu_temperature(self) -> int:
        """GPU temperature in degrees Celsius."""
        return self._gpu.temperature_c()

    def supports_get_total_energy_consumption(self) -> bool:
        """True when the GPU has a cumulative energy counter (NVIDIA Volta and newer)."""
        return self._gpu.has_energy_counter()

    def get_total_energy_consumption(self) -> int:
        """Energy since driver load in mJ (NotSupportedError without a counter)."""
        return self._gpu.total_energy_mj()

    # The Python Zeus's older camelCase names.
    getName = get_name
    getPowerManagementLimitConstraints = get_power_management_limit_constraints
    setPowerManagementLimit = set_power_management_limit
    resetPowerManagementLimit = reset_power_management_limit
    setPersistenceMode = set_persistence_mode
    getSupportedMemoryClocks = get_supported_memory_clocks
    getSupportedGraphicsClocks = get_supported_graphics_clocks
    setGpuLockedClocks = set_gpu_locked_clocks
    resetGpuLockedClocks = reset_gpu_locked_clocks
    setMemoryLockedClocks = set_memory_locked_clocks
    resetMemoryLockedClocks = reset_memory_locked_clocks
    getAveragePowerUsage = get_average_power_usage
    getInstantPowerUsage = get_instant_power_usage
    supportsGetTotalEnergyConsumption = supports_get_total_energy_consumption
    getTotalEnergyConsumption = get_total_energy_consumption


@gpu_error_class
class GPUs:
    """The visible GPUs; methods take a GPU index and forward to that `GPU`."""

    def __init__(self, ensure_homogeneous: bool = False) -> None:
        """Discovers the GPUs.

        Raises:
            ZeusGPUHeterogeneousError (also an InvalidArgumentError): ensure_homogeneous and the
                GPUs are of different models.
            ZeusGPUInvalidArgError (also an InvalidArgumentError): a malformed / MIG
                CUDA_VISIBLE_DEVICES.
        """
        self._devices = _zeus_cpp.Devices.discover()
        through_zeusd = any(backend == "zeusd" and used for backend, used, _ in self._devices.backends)
        self._zeusd_devices = self._devices if through_zeusd else None
        self._gpus = [GPU(self._devices.gpu(i), self._zeusd_devices) for i in range(self._devices.gpu_count)]
        if ensure_homogeneous:
            names = [gpu.get_name() for gpu in self._gpus]
            if len(set(names)) > 1:
                raise combined_class(ZeusGPUHeterogeneousError, InvalidArgumentError)(
                    f"Heterogeneous GPUs found: {names}")

    @property
    def gpus(self) -> Sequence[GPU]:
        """The GPU objects, by framework-visible index."""
        return self._gpus

    @property
    def backends(self) -> List[Tuple[str, bool, str]]:
        """(backend, used, detail) for each backend tried: why it was used or skipped."""
        return list(self._devices.backends)

    def __len__(self) -> int:
        return len(self._gpus)

    def _gpu(self, gpu_index: int) -> GPU:
        if isinstance(gpu_index, bool) or not isinstance(gpu_index, int):
            raise TypeError(f"gpu_index must be an int, not {type(gpu_index).__name__}")
        return GPU(self._devices.gpu(gpu_index), self._zeusd_devices)  # raises for bad indices

    def get_name(self, gpu_index: int) -> str:
        """Product name of a GPU."""
        return self._gpu(gpu_index).get_name()

    def get_power_management_limit_constraints(self, gpu_index: int) -> Tuple[int, int]:
        """(min, max) power limit of a GPU in mW."""
        return self._gpu(gpu_index).get_power_management_limit_constraints()

    def get_power_management_limit(self, gpu_index: int) -> int:
        """Current power limit of a GPU in mW."""
        return self._gpu(gpu_index).get_power_management_limit()

    def set_power_management_limit(self, gpu_index: int, power_limit_mw: int, block: bool = True) -> None:
        """Sets a GPU's power limit in mW."""
        self._gpu(gpu_index).set_power_management_limit(power_limit_mw, block)

    def reset_power_management_limit(self, gpu_index: int, block: bool = True) -> None:
        """Resets a GPU's power limit to its default."""
        self._gpu(gpu_index).reset_power_management_limit(block)

    def set_persistence_mode(self, gpu_index: int, enabled: bool, block: bool = True) -> None:
        """Sets a GPU's persistence mode."""
        self._gpu(gpu_index).set_persistence_mode(enabled, block)

    def get_supported_memory_clocks(self, gpu_index: int) -> List[int]:
        """Supported memory clocks of a GPU in MHz."""
        return self._gpu(gpu_index).get_supported_memory_clocks()

    def get_supported_graphics_clocks(self, gpu_index: int, memory_clock_mhz: Optional[int] = None) -> List[int]:
        """Supported SM clocks of a GPU in MHz."""
        return self._gpu(gpu_index).get_supported_graphics_clocks(memory_clock_mhz)

    def get_persistence_mode(self, gpu_index: int) -> bool:
        """True when a GPU's persistence mode is on."""
        return self._gpu(gpu_index).get_persistence_mode()

    def set_gpu_locked_clocks(
        self, gpu_index: int, min_clock_mhz: int, max_clock_mhz: int, block: bool = True
    ) -> None:
        """Locks a GPU's SM clock to [min, max] MHz."""
        self._gpu(gpu_index).set_gpu_locked_clocks(min_clock_mhz, max_clock_mhz, block)

    def reset_gpu_locked_clocks(self, gpu_index: int, block: bool = True) -> None:
        """Unlocks a GPU's SM clock."""
        self._gpu(gpu_index).reset_gpu_locked_clocks(block)

    def set_memory_locked_clocks(
        self, gpu_index: int, min_clock_mhz: int, max_clock_mhz: int, block: bool = True
    ) -> None:
        """Locks a GPU's memory clock to [min, max] MHz."""
        self._gpu(gpu_index).set_memory_locked_clocks(min_clock_mhz, max_clock_mhz, block)

    def reset_memory_locked_clocks(self, gpu_index: int, block: bool = True) -> None:
        """Unlocks a GPU's memory clock."""
        self._gpu(gpu_index).reset_memory_locked_clocks(block)

    def reset_locked_clocks(self, gpu_index: int, block: bool = True) -> None:
        """Unlocks a GPU's SM and memory clocks."""
        self._gpu(gpu_index).reset_locked_clocks(block)

    def get_average_power_usage(self, gpu_index: int) -> int:
        """Average power draw of a GPU in mW."""
        return self._gpu(gpu_index).get_average_power_usage()

    def get_instant_power_usage(self, gpu_index: int) -> int:
        """Instant power draw of a GPU in mW."""
        return self._gpu(gpu_index).get_instant_power_usage()

    def get_average_memory_power_usage(self, gpu_index: int) -> int:
        """Average memory power draw of a GPU in mW."""
        return self._gpu(gpu_index).get_average_memory_power_usage()

    def get_gpu_temperature(self, gpu_index: int) -> int:
        """Temperature of a GPU in degrees Celsius."""
        return self._gpu(gpu_index).get_gpu_temperature()

    def supports_get_total_energy_consumption(self, gpu_index: int) -> bool:
        """True when a GPU has an energy counter."""
        return self._gpu(gpu_index).supports_get_total_energy_consumption()

    def get_total_energy_consumption(self, gpu_index: int) -> int:
        """Energy of a GPU since driver load in mJ."""
        return self._gpu(gpu_index).get_total_energy_consumption()

    getName = get_name
    getPowerManagementLimitConstraints = get_power_management_limit_constraints
    setPowerManagementLimit = set_power_management_limit
    resetPowerManagementLimit = reset_power_management_limit
    setPersistenceMode = set_persistence_mode
    getSupportedMemoryClocks = get_supported_memory_clocks
    getSupportedGraphicsClocks = get_supported_graphics_clocks
    getAveragePowerUsage = get_average_power_usage
    getInstantPowerUsage = get_instant_power_usage
    supportsGetTotalEnergyConsumption = supports_get_total_energy_consumption
    getTotalEnergyConsumption = get_total_energy_consumption


def get_gpus(ensure_homogeneous: bool = False) -> GPUs:
    """Discovers the visible GPUs (an empty GPUs when there are none)."""
    return GPUs(ensure_homogeneous=ensure_homogeneous)


def get_cpus():  # noqa: ANN201 (zeus_cpp.device.cpu.CPUs)
    """The CPU packages through RAPL (zeus_cpp.device.cpu.get_cpus)."""
    from zeus_cpp.device.cpu import get_cpus as _get_cpus  # noqa: PLC0415 (no cycle at import)

    return _get_cpus()


def get_soc():  # noqa: ANN201 (zeus_cpp.device.soc.SoC)
    """The system-on-chip (zeus_cpp.device.soc.get_soc)."""
    from zeus_cpp.device.soc import get_soc as _get_soc  # noqa: PLC0415

    return _get_soc()


__all__ = ["GPU", "GPUs", "get_cpus", "get_gpus", "get_soc"]
