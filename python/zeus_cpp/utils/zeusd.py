"""zeusd daemons as in `zeus.utils.zeusd` (upstream Zeus): where one listens (`ZeusdConfig`) and
its typed client (`ZeusdClient`, `require_capabilities`; utils/_zeusd_client.py).

```python
from zeus_cpp.utils.zeusd import ZeusdConfig
ZeusdConfig.tcp("node1", 4938, gpu_indices=[0, 1])
ZeusdConfig.uds("/var/run/zeusd.sock")
```
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ZeusdConfig:
    """One zeusd daemon: its TCP `host:port` or its Unix socket, an optional JWT, and (for
    `PowerStreamingClient`) which GPUs and CPUs to stream: None means all, [] means none.
    """

    host_port: str | None = None
    socket_path: str | None = None
    token: str | None = None
    gpu_indices: list[int] | None = None
    cpu_indices: list[int] | None = None

    @classmethod
    def tcp(
        cls,
        host: str,
        port: int,
        *,
        token: str | None = None,
        gpu_indices: list[int] | None = None,
        cpu_indices: list[int] | None = None,
    ) -> ZeusdConfig:
        """A daemon at `host:port` (zeusd --tcp). `token` falls back to ZEUSD_TOKEN."""
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"  # an IPv6 address
        return cls(host_port=f"{host}:{port}", token=token, gpu_indices=gpu_indices, cpu_indices=cpu_indices)

    @classmethod
    def uds(
        cls,
        socket_path: str,
        *,
        token: str | None = None,
        gpu_indices: list[int] | None = None,
        cpu_indices: list[int] | None = None,
    ) -> ZeusdConfig:
        """A daemon on the Unix socket `socket_path`. `token` falls back to ZEUSD_TOKEN."""
        return cls(socket_path=socket_path, token=token, gpu_indices=gpu_indices, cpu_indices=cpu_indices)

    @classmethod
    def from_env(cls) -> ZeusdConfig | None:
        """ZEUSD_SOCK_PATH (a socket) or else ZEUSD_HOST_PORT (`host:port`), with ZEUSD_TOKEN;
        None when neither is set."""
        token = os.environ.get("ZEUSD_TOKEN")
        sock = os.environ.get("ZEUSD_SOCK_PATH")
        if sock is not None:
            return cls.uds(sock, token=token)
        host_port = os.environ.get("ZEUSD_HOST_PORT")
        if host_port is not None:
            return cls(host_port=host_port, token=token)
        return None

    @property
    def endpoint(self) -> str:
        """The daemon's name in readings: the socket path or `host:port`."""
        if self.socket_path is not None:
            return self.socket_path
        if self.host_port is not None:
            return self.host_port
        raise ValueError("ZeusdConfig has neither socket_path nor host_port: use ZeusdConfig.tcp() or .uds()")

    @property
    def effective_token(self) -> str:
        """The token sent: the one given, else ZEUSD_TOKEN, else none ("")."""
        return self.token or os.environ.get("ZEUSD_TOKEN") or ""


# Upstream's typed client lives beside the config, as in zeus.utils.zeusd.
from zeus_cpp.utils._zeusd_client import (  # noqa: E402 (after ZeusdConfig, which it uses)
    CpuDramPower,
    CpuEnergyResult,
    CpuInfo,
    CpuPowerSnapshot,
    GpuInfo,
    GpuPowerSnapshot,
    ZeusdAuthError,
    ZeusdCapabilityError,
    ZeusdClient,
    ZeusdConnectionError,
    require_capabilities,
)

__all__ = [
    "CpuDramPower",
    "CpuEnergyResult",
    "CpuInfo",
    "CpuPowerSnapshot",
    "GpuInfo",
    "GpuPowerSnapshot",
    "ZeusdAuthError",
    "ZeusdCapabilityError",
    "ZeusdClient",
    "ZeusdConfig",
    "ZeusdConnectionError",
    "require_capabilities",
]
