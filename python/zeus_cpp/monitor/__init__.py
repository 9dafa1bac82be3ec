"""Measure time and energy: `ZeusMonitor` (windows), `Measurement`, `PowerMonitor` (sampling).

Mirrors `zeus.monitor`: `from zeus_cpp.monitor import ZeusMonitor`.
"""

from zeus_cpp.monitor.energy import Measurement, ZeusMonitor
from zeus_cpp.monitor.power import PowerMonitor

__all__ = ["ZeusMonitor", "Measurement", "PowerMonitor"]
