"""Carbon emissions of code regions (as `zeus.monitor.carbon`).

    provider = ElectricityMapsClient((42.28, -83.74), estimate=True)   # ELECTRICITYMAPS_API_KEY
    monitor = CarbonEmissionMonitor(provider)
    monitor.begin_window("epoch")
    train()
    m = monitor.end_window("epoch")   # m.gpu_carbon_emission {0: gCO2eq}, m.gpu_energy {0: J}

Each hour of a window is charged at that hour's intensity. `CsvCarbonIntensity` replays a series
(the columns of data/carbon_hist.csv: timestamp, duration in minutes, value in gCO2eq/kWh).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Literal, Optional, Sequence, Tuple, Union

from zeus_cpp import _zeus_cpp
from zeus_cpp.monitor._accounting import RateProvider, _AccountingMonitor


class CarbonIntensityProvider(RateProvider):
    """A carbon intensity (gCO2eq/kWh) over time."""


class ElectricityMapsClient(CarbonIntensityProvider):
    """Hourly grid carbon intensity from Electricity Maps (its API key in ELECTRICITYMAPS_API_KEY
    unless `api_key` is given; ZEUS_ELECTRICITYMAPS_URL overrides the service's address)."""

    def __init__(
        self,
        location: Tuple[float, float],
        estimate: bool = False,
        emission_factor_type: Literal["direct", "lifecycle"] = "direct",
        *,
        api_key: str = "",
        timeout_s: float = 10.0,
    ) -> None:
        latitude, longitude = location
        self.lat, self.long = float(latitude), float(longitude)
        self.estimate = bool(estimate)
        self.emission_factor_type = emission_factor_type
        self._provider = _zeus_cpp.electricity_maps(
            self.lat, self.long, self.estimate, emission_factor_type, api_key,
            os.environ.get("ZEUS_ELECTRICITYMAPS_URL", ""), float(timeout_s))

    def get_current_carbon_intensity(self) -> float:
        """The intensity now, in gCO2eq/kWh."""
        import time

        return self.value_at(time.time())


# Upstream Zeus spells the class this way; both names work.
ElectrictyMapsClient = ElectricityMapsClient


class CsvCarbonIntensity(CarbonIntensityProvider):
    """A recorded series: a CSV with timestamp (ISO 8601 with offset), duration (minutes) and
    value (gCO2eq/kWh) columns, and `location` to pick rows when the file has several."""

    def __init__(self, path: Union[str, os.PathLike], location: str = "") -> None:
        self._provider = _zeus_cpp.intensity_csv(os.fspath(path), location, "gCO2eq/kWh")


class CarbonIntensitySeries(CarbonIntensityProvider):
    """A series given as (start_unix_s, end_unix_s, gCO2eq/kWh) intervals."""

    def __init__(self, intervals: Sequence[Tuple[float, float, float]]) -> None:
        self._provider = _zeus_cpp.intensity_series(
            [(float(a), float(b), float(v)) for a, b, v in intervals], "gCO2eq/kWh")


@dataclass
class CarbonEmissionMeasurement:
    """One window: time (s), energy (J) and emissions (gCO2eq) per device.

    The *_carbon_emission fields are None when the intensity of some part of the window was
    unknown; `unknown_reason` then says why (the energy is still measured)."""

    time: float
    gpu_energy: Dict[int, float]
    gpu_carbon_emission: Optional[Dict[int, float]]
    cpu_energy: Optional[Dict[int, float]] = None
    cpu_carbon_emission: Optional[Dict[int, float]] = None
    dram_energy: Optional[Dict[int, float]] = None
    dram_carbon_emission: Optional[Dict[int, float]] = None
    unknown_reason: str = ""
    intervals: List[Tuple[float, float, Optional[float]]] = field(default_factory=list)


class CarbonEmissionMonitor(_AccountingMonitor):
    """Measures the time, energy and carbon emissions of windows (see the module docstring)."""

    def __init__(
        self,
        carbon_intensity_provider: CarbonIntensityProvider,
        gpu_indices: Optional[List[int]] = None,
        cpu_indices: Optional[List[int]] = None,
        sync_execution_with: Union[str, Callable[[], None], None] = "torch",
    ) -> None:
        super().__init__(carbon_intensity_provider, gpu_indices, cpu_indices, sync_execution_with)
        self.carbon_intensity_provider = carbon_intensity_provider

    def end_window(self, key: str, sync_execution: bool = True) -> CarbonEmissionMeasurement:
        """Ends window `key`; its time, energy and emissions."""
        (time_s, gpu, cpu, dram, complete, gpu_g, cpu_g, dram_g, _unit, reason,
         parts) = self._end(key, sync_execution)
        return CarbonEmissionMeasurement(
            time=time_s,
            gpu_energy=gpu,
            gpu_carbon_emission=gpu_g if complete else None,
            cpu_energy=self._cpu(cpu),
            cpu_carbon_emission=self._cpu(cpu_g) if complete else None,
            dram_energy=dram or None,
            dram_carbon_emission=(dram_g or None) if complete else None,
            unknown_reason=reason,
            intervals=parts,
        )
