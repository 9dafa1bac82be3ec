"""Measure time and energy: `ZeusMonitor` (windows), `Measurement`, `PowerMonitor` (power
timelines per domain), `TemperatureMonitor` (temperature timelines), `PowerStreamingClient` (live power of many zeusd
daemons).

Mirrors `zeus.monitor`: `from zeus_cpp.monitor import ZeusMonitor`.
"""

from zeus_cpp.monitor.energy import Measurement, ZeusMonitor
from zeus_cpp.monitor.power import PowerDomain, PowerMonitor
from zeus_cpp.monitor.power_streaming import PowerStreamingClient
from zeus_cpp.monitor.temperature import TemperatureMonitor

__all__ = ["ZeusMonitor", "Measurement", "PowerMonitor", "PowerDomain", "TemperatureMonitor", "PowerStreamingClient"]
