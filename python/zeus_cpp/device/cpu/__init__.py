"""CPU energy through RAPL (as `zeus.device.cpu`): `get_current_rapl_zone_id`."""

from zeus_cpp.device.cpu.rapl import get_current_rapl_zone_id

__all__ = ["get_current_rapl_zone_id"]
