"""What CarbonEmissionMonitor and EnergyCostMonitor share: windows measured by the C++
AccountingMonitor, split where the provider's rate may change and charged interval by interval.

A window whose rate cannot be had (a gap in the series, the service down, a refused key) is still
measured: its amounts are None and `unknown_reason` says why; the training loop goes on.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple, Union

from zeus_cpp import _zeus_cpp
from zeus_cpp.monitor.energy import _check_indices, _check_key
from zeus_cpp.utils.framework import sync_function

# (time, gpu_j, cpu_j, dram_j, complete, gpu_amount, cpu_amount, dram_amount, unit, reason, parts)
Accounted = Tuple[float, Dict[int, float], Dict[int, float], Dict[int, float], bool,
                  Dict[int, float], Dict[int, float], Dict[int, float], str, str,
                  List[Tuple[float, float, Optional[float]]]]


class RateProvider:
    """A rate per kWh over time; subclasses build the C++ provider (`self._provider`)."""

    _provider: "_zeus_cpp.IntensityProvider"

    @property
    def unit(self) -> str:
        """What one kWh costs in, e.g. "gCO2eq/kWh" or "$/kWh"."""
        return self._provider.unit

    def value_at(self, unix_s: float) -> float:
        """The rate per kWh at Unix time `unix_s` (raises where there is none)."""
        return self._provider.value_at(float(unix_s))


class _AccountingMonitor:
    """Windows charged by a RateProvider (see the module docstring)."""

    def __init__(
        self,
        provider: RateProvider,
        gpu_indices: Optional[List[int]],
        cpu_indices: Optional[List[int]],
        sync_execution_with: Union[str, Callable[[], None], None],
    ) -> None:
        if not isinstance(provider, RateProvider):
            raise TypeError(f"the provider must be one of zeus_cpp's providers, not "
                            f"{type(provider).__name__}")
        holder: List[Optional[Callable[[], None]]] = [None]

        def sync() -> None:
            function = holder[0]
            if function is not None:
                function()

        sync_function(sync_execution_with, [])  # validates the name before touching devices
        self._monitor = _zeus_cpp.AccountingMonitor(
            provider._provider,
            gpu_indices=_check_indices("gpu_indices", gpu_indices),
            cpu_indices=_check_indices("cpu_indices", cpu_indices),
            sync=sync if sync_execution_with is not None else None,
        )
        holder[0] = sync_function(sync_execution_with, self._monitor.gpu_indices)
        self._sync = holder
        self.gpu_indices: List[int] = list(self._monitor.gpu_indices)
        self.cpu_indices: List[int] = list(self._monitor.cpu_indices)

    def begin_window(self, key: str, sync_execution: bool = True) -> None:
        """Begins window `key` (ValueError/InvalidArgumentError when it is open)."""
        self._monitor.begin_window(_check_key(key), bool(sync_execution) and
                                   self._sync[0] is not None)

    def _end(self, key: str, sync_execution: bool) -> Accounted:
        return self._monitor.end_window(_check_key(key), bool(sync_execution) and
                                        self._sync[0] is not None)

    def _cpu(self, values: Dict[int, float]) -> Optional[Dict[int, float]]:
        return values if self.cpu_indices else None
