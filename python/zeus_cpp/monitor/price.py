"""Electricity cost of code regions (as `zeus.monitor.price`).

    provider = OpenEIClient((42.28, -83.74), label="539f6e1dec4f024411ecbeaf")  # OPENEI_API_KEY
    monitor = EnergyCostMonitor(provider)
    monitor.begin_window("epoch")
    train()
    m = monitor.end_window("epoch")   # m.gpu_energy_cost {0: $}, m.gpu_energy {0: J}

Each local hour of a window is charged at that hour's rate of the utility's time-of-use schedule
(as upstream: the first tier of the period; adjustments are not added).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Literal, Optional, Sequence, Tuple, Union

from zeus_cpp import _zeus_cpp
from zeus_cpp.monitor._accounting import RateProvider, _AccountingMonitor


class ElectricityPriceProvider(RateProvider):
    """An electricity price ($/kWh) over time."""


class OpenEIClient(ElectricityPriceProvider):
    """A utility's rate from OpenEI's utility-rate database (its API key in OPENEI_API_KEY unless
    `api_key` is given; ZEUS_OPENEI_URL overrides the service's address)."""

    def __init__(
        self,
        location: Tuple[float, float],
        label: str,
        sector: Literal["Residential", "Commercial", "Industrial", "Lighting"] = "Residential",
        radius: int = 0,
        *,
        api_key: str = "",
        timeout_s: float = 10.0,
    ) -> None:
        latitude, longitude = location
        self.lat, self.long = float(latitude), float(longitude)
        self.label, self.sector, self.radius = label, sector, int(radius)
        self._provider = _zeus_cpp.openei(self.lat, self.long, label, sector, self.radius,
                                          api_key, os.environ.get("ZEUS_OPENEI_URL", ""),
                                          float(timeout_s))


class CsvElectricityPrice(ElectricityPriceProvider):
    """A recorded price series: a CSV with timestamp, duration (minutes) and value ($/kWh)."""

    def __init__(self, path: Union[str, os.PathLike], location: str = "") -> None:
        self._provider = _zeus_cpp.intensity_csv(os.fspath(path), location, "$/kWh")


class ElectricityPriceSeries(ElectricityPriceProvider):
    """Prices given as (start_unix_s, end_unix_s, $/kWh) intervals."""

    def __init__(self, intervals: Sequence[Tuple[float, float, float]]) -> None:
        self._provider = _zeus_cpp.intensity_series(
            [(float(a), float(b), float(v)) for a, b, v in intervals], "$/kWh")


@dataclass
class EnergyCostMeasurement:
    """One window: time (s), energy (J) and cost ($) per device (costs None when unknown;
    `unknown_reason` says why)."""

    time: float
    gpu_energy: Dict[int, float]
    gpu_energy_cost: Optional[Dict[int, float]]
    cpu_energy: Optional[Dict[int, float]] = None
    cpu_energy_cost: Optional[Dict[int, float]] = None
    dram_energy: Optional[Dict[int, float]] = None
    dram_energy_cost: Optional[Dict[int, float]] = None
    unknown_reason: str = ""
    intervals: List[Tuple[float, float, Optional[float]]] = field(default_factory=list)


class EnergyCostMonitor(_AccountingMonitor):
    """Measures the time, energy and electricity cost of windows (see the module docstring)."""

    def __init__(
        self,
        electricity_price_provider: ElectricityPriceProvider,
        gpu_indices: Optional[List[int]] = None,
        cpu_indices: Optional[List[int]] = None,
        sync_execution_with: Union[str, Callable[[], None], None] = "torch",
    ) -> None:
        super().__init__(electricity_price_provider, gpu_indices, cpu_indices,
                         sync_execution_with)
        self.electricity_price_provider = electricity_price_provider

    def end_window(self, key: str, sync_execution: bool = True) -> EnergyCostMeasurement:
        """Ends window `key`; its time, energy and cost."""
        (time_s, gpu, cpu, dram, complete, gpu_c, cpu_c, dram_c, _unit, reason,
         parts) = self._end(key, sync_execution)
        return EnergyCostMeasurement(
            time=time_s,
            gpu_energy=gpu,
            gpu_energy_cost=gpu_c if complete else None,
            cpu_energy=self._cpu(cpu),
            cpu_energy_cost=self._cpu(cpu_c) if complete else None,
            dram_energy=dram or None,
            dram_energy_cost=(dram_c or None) if complete else None,
            unknown_reason=reason,
            intervals=parts,
        )
