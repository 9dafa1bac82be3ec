"""RAPL zone selection (as `zeus.device.cpu.rapl`).

    zone = get_current_rapl_zone_id()          # the socket this process runs on
    monitor = ZeusMonitor(cpu_indices=[zone])  # measure only that socket

The process's last CPU (/proc/<pid>/stat) gives its physical_package_id and die_id (sysfs CPU
topology), and the zone is the top-level RAPL zone named "package-N" or "package-N-die-D": its
id is not assumed to equal the package id. Pin the process (taskset) so it stays on the socket.
ZEUS_SYSFS_ROOT and ZEUS_POWERCAP_ROOT point at other trees; inside a container without the
host's powercap tree at /sys/class/powercap, /zeus_sys/class/powercap is used.
"""

from __future__ import annotations

from typing import Literal, Union

from zeus_cpp import _zeus_cpp


def get_current_rapl_zone_id(pid: Union[int, Literal["current"]] = "current") -> int:
    """The RAPL package zone id of the socket process `pid` last ran on.

    Args:
        pid: a process id, or "current" for this process.

    Raises:
        NotFoundError: the process, its CPU's topology or a matching zone does not exist.
        InvalidArgumentError: `pid` is neither "current" nor a non-negative int.
    """
    if pid == "current":
        return _zeus_cpp.get_current_rapl_zone_id(None)
    if isinstance(pid, bool) or not isinstance(pid, int) or pid < 0:
        raise _zeus_cpp.InvalidArgumentError(
            f'pid must be "current" or a non-negative process id, not {pid!r}'
        )
    return _zeus_cpp.get_current_rapl_zone_id(pid)
