"""Live GPU and CPU power of many zeusd daemons: `PowerStreamingClient`, as in
`zeus.monitor.power_streaming` (upstream Zeus), on the C++ client (zeus::PowerStreamingClient).

Each daemon's clock offset is measured (median of several GET /time round trips) and its
readings are put on this machine's clock; a dropped stream is reconnected. Beyond upstream's
`get_power()`, `get_totals()` gives each node's and the cluster's power now and the energy
integrated since the first reading.

```python
from zeus_cpp.monitor import PowerStreamingClient
from zeus_cpp.utils.zeusd import ZeusdConfig

client = PowerStreamingClient(servers=[ZeusdConfig.tcp("node1", 4938), ZeusdConfig.uds("/run/zeusd.sock")])
readings = client.get_power()          # {"node1:4938": PowerReadings(...), ...}
totals = client.get_totals()           # ClusterTotals(power_w=..., energy_j=..., nodes={...})
for readings in client: ...            # a snapshot per update (at least 1/s), until stop()
client.stop()
```
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field

from zeus_cpp import _zeus_cpp
from zeus_cpp.utils.zeusd import ZeusdConfig


@dataclass
class CpuPowerReading:
    """One CPU package's power in watts, and its DRAM's (None without a DRAM zone)."""

    cpu_w: float = 0.0
    dram_w: float | None = None


@dataclass
class PowerReadings:
    """One daemon's latest readings: the newest reading's time (Unix seconds, this machine's
    clock) and the power of each GPU and CPU, keyed by index."""

    timestamp_s: float = 0.0
    gpu_power_w: dict[int, float] = field(default_factory=dict)
    cpu_power_w: dict[int, CpuPowerReading] = field(default_factory=dict)


@dataclass
class NodeTotals:
    """One daemon: power now (W), energy since its first reading (J), and its stream's health."""

    power_w: float = 0.0
    energy_j: float = 0.0
    connected: bool = False
    clock_offset_s: float = 0.0
    events: int = 0
    reconnects: int = 0
    error: str = ""


@dataclass
class ClusterTotals:
    """Every daemon together, at `timestamp_s` (this machine's clock)."""

    timestamp_s: float = 0.0
    power_w: float = 0.0
    energy_j: float = 0.0
    nodes: dict[str, NodeTotals] = field(default_factory=dict)


class PowerStreamingClient:
    """Streams GPU and CPU power from the zeusd daemons `servers` (`ZeusdConfig`s), in
    background threads, until `stop()`.

    Args:
        servers: the daemons, each with the GPUs and CPUs to stream (None: all it lets the
            caller read; []: none; a list: those, and a refusal is an error).
        reconnect_delay_s: seconds between a dropped stream and the next attempt.

    Raises:
        ValueError: a daemon given twice, or a negative index.
        UnavailableError: a daemon cannot be reached at start.
    """

    def __init__(self, servers: Sequence[ZeusdConfig], reconnect_delay_s: float = 1.0) -> None:
        """Measures each daemon's clock offset and starts the streams."""
        self._servers = list(servers)
        endpoints = [s.endpoint for s in self._servers]
        duplicates = sorted({e for e in endpoints if endpoints.count(e) > 1})
        if duplicates:
            raise ValueError(f"Duplicate server endpoints: {duplicates}")
        targets = []
        for s in self._servers:
            address = s.socket_path if s.socket_path is not None else s.host_port
            if s.socket_path is not None and not s.socket_path.startswith("/"):
                address = "unix:" + s.socket_path  # refused below with the accepted forms
            targets.append((address, s.gpu_indices, s.cpu_indices, s.effective_token))
        self._client = _zeus_cpp._PowerStreamingClient(targets, reconnect_delay_s=reconnect_delay_s)
        self._endpoint_of = {t[0]: e for t, e in zip(targets, endpoints)}
        self._stopped = False

    def stop(self) -> None:
        """Ends every stream and wakes blocked iterators."""
        self._stopped = True
        self._client.stop()

    def get_power(self) -> dict[str, PowerReadings]:
        """The latest readings of each daemon that has sent one, keyed by endpoint."""
        out = {}
        for node in self._client.power()["nodes"]:
            if node["events"] == 0:
                continue
            out[self._endpoint_of[node["endpoint"]]] = PowerReadings(
                timestamp_s=node["timestamp_s"],
                gpu_power_w=dict(node["gpu_power_w"]),
                cpu_power_w={i: CpuPowerReading(cpu_w=c, dram_w=d) for i, (c, d) in node["cpu_power_w"].items()},
            )
        return out

    def get_totals(self) -> ClusterTotals:
        """Power now and energy integrated so far, per daemon and for all of them."""
        now = self._client.power()
        return ClusterTotals(
            timestamp_s=now["timestamp_s"],
            power_w=now["power_w"],
            energy_j=now["energy_j"],
            nodes={
                self._endpoint_of[n["endpoint"]]: NodeTotals(
                    power_w=n["power_w"],
                    energy_j=n["energy_j"],
                    connected=n["connected"],
                    clock_offset_s=n["clock_offset_s"],
                    events=n["events"],
                    reconnects=n["reconnects"],
                    error=n["error"],
                )
                for n in now["nodes"]
            },
        )

    def __iter__(self) -> Iterator[dict[str, PowerReadings]]:
        """Yields `get_power()` each time a reading arrives, until `stop()`. A daemon whose power
        holds steady says so once a second (zeusd's keep-alive): the unchanged readings are
        yielded again then, so a loop on a steady GPU keeps turning rather than looking hung
        (upstream's client waits for the next change)."""
        while not self._stopped:
            if self._client.wait_for_update(1.0) and not self._stopped:
                yield self.get_power()

    async def __aiter__(self) -> AsyncIterator[dict[str, PowerReadings]]:
        """As iteration, without blocking the event loop."""
        loop = asyncio.get_running_loop()
        while not self._stopped:
            updated = await loop.run_in_executor(None, self._client.wait_for_update, 1.0)
            if updated and not self._stopped:
                yield self.get_power()

    def __enter__(self) -> PowerStreamingClient:
        """Use as a context manager: `stop()` at the end."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Stops the streams."""
        self.stop()
