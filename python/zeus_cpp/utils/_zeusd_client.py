"""`ZeusdClient` and `require_capabilities`, upstream's typed client of a zeusd daemon
(`zeus.utils.zeusd`), over the C++ HTTP layer (`_zeus_cpp._ZeusdConnection`) on the Unix socket or
TCP with a bearer token. Re-exported by `zeus_cpp.utils.zeusd`.

```python
from zeus_cpp.utils.zeusd import ZeusdClient, ZeusdConfig, require_capabilities

client = ZeusdClient(ZeusdConfig.uds("/run/zeusd/zeusd.sock"))  # or None: ZEUSD_SOCK_PATH / ZEUSD_HOST_PORT
require_capabilities(client, control_gpu=True, gpu_ids=[0])
client.set_power_limit([0], 250_000)  # undone by zeusd when this process exits
```

One lease rule for the whole package: zeusd undoes every change this process makes through
it (power limits, clock locks, persistence mode) when the process exits, even by SIGKILL. On the
Unix socket zeusd follows the process; over TCP the client opens a lease session with its first
change (as the C++ library does, zeus/zeusd_client/zeusd_client.h), heart-beats it and closes it at exit (a
killed process's session times out). `ZeusdClient(config, persist=True)` opts out over TCP:
changes then persist as upstream's client leaves them (listed under `persistent` in zeusd's
`GET /leases`), until someone resets them.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, List, Optional, Tuple
from urllib.parse import urlencode

from zeus_cpp import NotFoundError, PermissionDeniedError, UnavailableError, ZeusError, _zeus_cpp
from zeus_cpp.device.exception import ZeusdError

logger = logging.getLogger(__name__)


class ZeusdConnectionError(ZeusError):
    """Cannot reach the zeusd daemon (or it is not one)."""


class ZeusdAuthError(ZeusError):
    """Authentication or authorization failure."""


class ZeusdCapabilityError(ZeusError):
    """The daemon does not offer what the caller requires."""


@dataclass(frozen=True)
class GpuInfo:
    """A GPU the daemon serves: its index, model, PCI address (`lspci -D`) and whether
    `get_cumulative_energy` is trustworthy for it."""

    id: int
    name: str
    pci_address: Optional[str]
    cumulative_energy_available: bool


@dataclass(frozen=True)
class CpuInfo:
    """A RAPL package the daemon serves, and whether it has a DRAM zone."""

    id: int
    dram_available: bool


@dataclass(frozen=True)
class GpuPowerSnapshot:
    """Instant GPU power: the daemon's Unix time in ms and mW per GPU index."""

    timestamp_ms: int
    power_mw: Dict[int, int]


@dataclass(frozen=True)
class CpuDramPower:
    """One package's power in mW, and its DRAM's (None without a DRAM zone)."""

    cpu_mw: int
    dram_mw: Optional[int]


@dataclass(frozen=True)
class CpuPowerSnapshot:
    """CPU power: the daemon's Unix time in ms and the readings per package index."""

    timestamp_ms: int
    power_mw: Dict[int, CpuDramPower]


@dataclass(frozen=True)
class CpuEnergyResult:
    """One package's cumulative energy in uJ (None for what was not asked or is missing)."""

    cpu_energy_uj: Optional[int]
    dram_energy_uj: Optional[int]


def _ids(ids: List[int]) -> str:
    return ",".join(str(int(i)) for i in ids)


def _flag(value: bool) -> str:
    return "true" if value else "false"


# Connections holding a lease session: kept until the process exits (so a client dropped early
# does not undo its changes before then), and their sessions closed at exit.
_leasing: List[Any] = []
_leasing_lock = threading.Lock()


@atexit.register
def _close_lease_sessions() -> None:
    with _leasing_lock:
        connections = list(_leasing)
        _leasing.clear()
    for connection in connections:
        try:
            connection.close_lease_session()  # zeusd restores the session's changes now
        except Exception:  # noqa: BLE001 - best effort at exit; zeusd's session timeout follows
            pass


class ZeusdClient:
    """A zeusd daemon: discovery and authentication at construction, then a typed method per
    route (upstream's names, units and results).

    Changes (set_power_limit, set_persistence_mode, the clock locks) are undone by zeusd when this
    process exits: on the Unix socket zeusd follows the process; over TCP the first change opens a
    lease session that the process holds until it exits (or until `close_lease_session()`), so a
    change is not undone when the client object is dropped. `persist=True` opts out over TCP.

    Args:
        config: the daemon (`ZeusdConfig.uds` / `.tcp`); None: ZEUSD_SOCK_PATH, else
            ZEUSD_HOST_PORT, with ZEUSD_TOKEN.
        persist: over TCP, make changes without a lease session, so that they persist after the
            process exits, as upstream's client leaves them (a token with gpu-control; zeusd lists
            them under `persistent` in GET /leases). No effect on the Unix socket, where the
            operator's `zeusd serve --upstream-changes` decides.

    Raises:
        ZeusdConnectionError: none configured, unreachable, or its /discover is not zeusd's.
    """

    def __init__(self, config: Any = None, *, persist: bool = False) -> None:
        """Connects, reads /discover and, when the daemon requires it, checks the token."""
        if not isinstance(persist, bool):
            raise TypeError(f"persist must be True or False, not {persist!r}")
        self._persist = persist
        from zeus_cpp.utils.zeusd import ZeusdConfig  # noqa: PLC0415 (that module imports this one)

        if config is None:
            config = ZeusdConfig.from_env()
            if config is None:
                raise ZeusdConnectionError(
                    "No Zeusd connection configured. Set ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT, or pass a ZeusdConfig."
                )
        self._config = config
        self._connection = _zeus_cpp._ZeusdConnection(
            socket_path=config.socket_path or "", host_port=config.host_port or "", token=config.effective_token
        )
        try:
            data = json.loads(self._connection.request("GET", "/discover"))
            self._gpus = [
                GpuInfo(g["id"], g["name"], g.get("pci_address"), bool(g["cumulative_energy_available"]))
                for g in data["gpus"]
            ]
            self._cpus = [CpuInfo(c["id"], bool(c["dram_available"])) for c in data["cpus"]]
            self._enabled_api_groups = set(data["enabled_api_groups"])
            self._auth_required = bool(data["auth_required"])
        except ZeusError as error:
            raise ZeusdConnectionError(f"Cannot reach Zeusd at {config.endpoint}: {error}") from error
        except (KeyError, TypeError, ValueError) as error:
            raise ZeusdConnectionError(
                f"Zeusd at {config.endpoint} did not report {error} in /discover; the daemon is older "
                "than this version of Zeus or not zeusd. Upgrade zeusd."
            ) from error
        self._auth_error: Optional[str] = None
        self._granted_scopes: FrozenSet[str] = frozenset()
        if self._auth_required:
            self._authenticate()

    def _authenticate(self) -> None:
        if not self._config.effective_token:
            self._auth_error = (
                f"Zeusd at {self.endpoint} requires authentication but no token was provided. "
                "Set the ZEUSD_TOKEN environment variable or pass token= in the config."
            )
        else:
            try:
                whoami = json.loads(self._connection.request("GET", "/auth/whoami"))
                self._granted_scopes = frozenset(whoami.get("scopes", []))
                logger.info(
                    "Authenticated with Zeusd at %s as user '%s' (scopes: %s)",
                    self.endpoint, whoami.get("sub"), sorted(self._granted_scopes),
                )
            except PermissionDeniedError as error:
                self._auth_error = f"Token rejected by Zeusd at {self.endpoint}: {error}"
            except ZeusError as error:
                self._auth_error = f"Unexpected response from /auth/whoami at {self.endpoint}: {error}"
        if self._auth_error:
            logger.warning("Auth issue with Zeusd at %s: %s", self.endpoint, self._auth_error)

    @property
    def endpoint(self) -> str:
        """The daemon's socket path or `host:port`."""
        return self._config.endpoint

    @property
    def persist(self) -> bool:
        """Whether changes over TCP are made without a lease session (they persist)."""
        return self._persist

    @property
    def lease_session(self) -> Optional[str]:
        """The id of the lease session this process's changes over TCP belong to (None on the Unix
        socket, with persist=True, or before the first change)."""
        return self._connection.lease_session or None

    def close_lease_session(self) -> None:
        """Closes the lease session now: zeusd restores the changes made through it (they are
        restored at exit anyway). The next change opens a new one. Nothing without a session."""
        with _leasing_lock:
            if self._connection in _leasing:
                _leasing.remove(self._connection)
        self._connection.close_lease_session()

    def _ensure_lease_session(self, operation: str) -> None:
        """Over TCP (unless persist): this process's lease session, opened on the first change."""
        if self._config.socket_path is not None or self._persist:
            return
        try:
            self._connection.ensure_lease_session()
        except NotFoundError as error:
            raise ZeusdError(
                f"Failed to {operation}: {error}. If the daemon is upstream's zeusd, which has no "
                "lease sessions, pass ZeusdClient(..., persist=True) to make changes that persist "
                "after this process exits, as upstream's client does"
            ) from error
        except ZeusError as error:
            raise ZeusdError(f"Failed to {operation}: {error}") from error
        with _leasing_lock:
            if self._connection not in _leasing:
                _leasing.append(self._connection)

    @property
    def gpus(self) -> List[GpuInfo]:
        """The GPUs the daemon serves."""
        return list(self._gpus)

    @property
    def gpu_ids(self) -> List[int]:
        """Their indices."""
        return [g.id for g in self._gpus]

    @property
    def cpus(self) -> List[CpuInfo]:
        """The CPU packages the daemon serves."""
        return list(self._cpus)

    @property
    def cpu_ids(self) -> List[int]:
        """Their indices."""
        return [c.id for c in self._cpus]

    @property
    def dram_available(self) -> List[bool]:
        """Per package (aligned with cpu_ids): whether it has a DRAM zone."""
        return [c.dram_available for c in self._cpus]

    @property
    def auth_required(self) -> bool:
        """Whether the daemon requires a bearer token."""
        return self._auth_required

    @property
    def auth_error(self) -> Optional[str]:
        """Why authentication failed, or None."""
        return self._auth_error

    @property
    def granted_scopes(self) -> FrozenSet[str]:
        """The token's scopes (empty without authentication)."""
        return self._granted_scopes

    def _can(self, group: str) -> bool:
        return group in self._enabled_api_groups and not (self._auth_required and group not in self._granted_scopes)

    @property
    def can_read_gpu(self) -> bool:
        """Whether the GPU read routes are open to this client."""
        return self._can("gpu-read")

    @property
    def can_control_gpu(self) -> bool:
        """Whether the GPU control routes are open to this client."""
        return self._can("gpu-control")

    @property
    def can_read_cpu(self) -> bool:
        """Whether the CPU read routes are open to this client."""
        return self._can("cpu-read")

    def _call(self, method: str, path: str, operation: str, **params: str) -> Any:
        target = path + ("?" + urlencode(params) if params else "")
        try:
            return json.loads(self._connection.request(method, target) or "null")
        except UnavailableError as error:
            if "cannot reach" in str(error).lower() or "connect" in str(error).lower():
                raise ZeusdConnectionError(f"Cannot reach Zeusd at {self.endpoint}: {error}") from error
            raise ZeusdError(f"Failed to {operation}: {error}") from error
        except ZeusError as error:
            raise ZeusdError(f"Failed to {operation}: {error}") from error

    def _read(self, path: str, operation: str, gpu_ids: Optional[List[int]]) -> Dict[str, Any]:
        params = {} if gpu_ids is None else {"gpu_ids": _ids(gpu_ids)}
        return self._call("GET", path, operation, **params)

    def _write(self, path: str, operation: str, gpu_ids: List[int], block: bool, **params: str) -> None:
        self._ensure_lease_session(operation)
        self._call("POST", path, operation, gpu_ids=_ids(gpu_ids), **params, block=_flag(block))

    def get_gpu_energy(self, gpu_ids: List[int]) -> Dict[int, int]:
        """Cumulative energy per GPU in mJ."""
        data = self._read("/gpu/get_cumulative_energy", "get_gpu_energy", gpu_ids)
        return {int(k): v["energy_mj"] for k, v in data.items()}

    def get_gpu_power(self, gpu_ids: Optional[List[int]] = None) -> GpuPowerSnapshot:
        """Instant power per GPU in mW (None: every GPU)."""
        data = self._read("/gpu/get_power", "get_gpu_power", gpu_ids)
        return GpuPowerSnapshot(data["timestamp_ms"], {int(k): v for k, v in data["power_mw"].items()})

    def set_power_limit(self, gpu_ids: List[int], power_limit_mw: int, block: bool = True) -> None:
        """Sets the GPUs' power limit in mW."""
        self._write("/gpu/set_power_limit", "set_power_limit", gpu_ids, block, power_limit_mw=str(int(power_limit_mw)))

    def set_persistence_mode(self, gpu_ids: List[int], enabled: bool, block: bool = True) -> None:
        """Turns the GPUs' persistence mode on or off."""
        self._write("/gpu/set_persistence_mode", "set_persistence_mode", gpu_ids, block, enabled=_flag(enabled))

    def get_persistence_mode(self, gpu_ids: Optional[List[int]] = None) -> Dict[int, bool]:
        """Persistence mode per GPU."""
        data = self._read("/gpu/get_persistence_mode", "get_persistence_mode", gpu_ids)
        return {int(k): v["enabled"] for k, v in data.items()}

    def get_power_limit(self, gpu_ids: Optional[List[int]] = None) -> Dict[int, int]:
        """Power limit per GPU in mW."""
        data = self._read("/gpu/get_power_limit", "get_power_limit", gpu_ids)
        return {int(k): v["power_limit_mw"] for k, v in data.items()}

    def get_power_limit_constraints(self, gpu_ids: Optional[List[int]] = None) -> Dict[int, Tuple[int, int]]:
        """(min, max) power limit per GPU in mW."""
        data = self._read("/gpu/get_power_limit_constraints", "get_power_limit_constraints", gpu_ids)
        return {int(k): (v["min_power_limit_mw"], v["max_power_limit_mw"]) for k, v in data.items()}

    def set_gpu_locked_clocks(self, gpu_ids: List[int], min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Locks the GPUs' SM clock to [min, max] MHz."""
        self._write("/gpu/set_gpu_locked_clocks", "set_gpu_locked_clocks", gpu_ids, block,
                    min_clock_mhz=str(int(min_clock_mhz)), max_clock_mhz=str(int(max_clock_mhz)))

    def reset_gpu_locked_clocks(self, gpu_ids: List[int], block: bool = True) -> None:
        """Unlocks the GPUs' SM clock."""
        self._write("/gpu/reset_gpu_locked_clocks", "reset_gpu_locked_clocks", gpu_ids, block)

    def reset_locked_clocks(self, gpu_ids: List[int], block: bool = True) -> None:
        """Unlocks the GPUs' SM and memory clocks."""
        self._write("/gpu/reset_locked_clocks", "reset_locked_clocks", gpu_ids, block)

    def set_mem_locked_clocks(self, gpu_ids: List[int], min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Locks the GPUs' memory clock to [min, max] MHz."""
        self._write("/gpu/set_mem_locked_clocks", "set_mem_locked_clocks", gpu_ids, block,
                    min_clock_mhz=str(int(min_clock_mhz)), max_clock_mhz=str(int(max_clock_mhz)))

    def reset_mem_locked_clocks(self, gpu_ids: List[int], block: bool = True) -> None:
        """Unlocks the GPUs' memory clock."""
        self._write("/gpu/reset_mem_locked_clocks", "reset_mem_locked_clocks", gpu_ids, block)

    def get_cpu_energy(self, cpu_ids: Optional[List[int]] = None, cpu: bool = True, dram: bool = True) -> Dict[int, CpuEnergyResult]:
        """Cumulative package (and DRAM) energy per CPU in uJ."""
        params = {"cpu": _flag(cpu), "dram": _flag(dram)}
        if cpu_ids is not None:
            params["cpu_ids"] = _ids(cpu_ids)
        data = self._call("GET", "/cpu/get_cumulative_energy", "get_cpu_energy", **params)
        return {int(k): CpuEnergyResult(v.get("cpu_energy_uj"), v.get("dram_energy_uj")) for k, v in data.items()}

    def get_cpu_power(self, cpu_ids: Optional[List[int]] = None) -> CpuPowerSnapshot:
        """Package (and DRAM) power per CPU in mW."""
        params = {} if cpu_ids is None else {"cpu_ids": _ids(cpu_ids)}
        data = self._call("GET", "/cpu/get_power", "get_cpu_power", **params)
        return CpuPowerSnapshot(
            data["timestamp_ms"],
            {int(k): CpuDramPower(v["cpu_mw"], v.get("dram_mw")) for k, v in data["power_mw"].items()},
        )

    def get_time(self) -> float:
        """The daemon's clock, Unix seconds."""
        return self._call("GET", "/time", "get_time")["timestamp_ms"] / 1000.0


def _capability_reason(client: ZeusdClient, scope: str) -> str:
    if scope not in client._enabled_api_groups:
        return f"API group '{scope}' is not enabled on this server"
    if client.auth_required and scope not in client.granted_scopes:
        return f"Token lacks required scope '{scope}' (granted: {sorted(client.granted_scopes)})"
    return f"'{scope}' is not available"


def require_capabilities(
    client: ZeusdClient,
    *,
    read_gpu: bool = False,
    control_gpu: bool = False,
    read_cpu: bool = False,
    gpu_ids: Optional[List[int]] = None,
    cpu_ids: Optional[List[int]] = None,
) -> None:
    """Fails fast unless the daemon offers what is asked: ZeusdAuthError when authentication
    failed, ZeusdCapabilityError naming every group, scope or device index missing."""
    if client.auth_error:
        raise ZeusdAuthError(client.auth_error)
    errors = []
    for wanted, scope, allowed in ((read_gpu, "gpu-read", client.can_read_gpu),
                                   (control_gpu, "gpu-control", client.can_control_gpu),
                                   (read_cpu, "cpu-read", client.can_read_cpu)):
        if wanted and not allowed:
            errors.append(_capability_reason(client, scope))
    for kind, wanted_ids, available in (("GPU", gpu_ids, client.gpu_ids), ("CPU", cpu_ids, client.cpu_ids)):
        if wanted_ids is not None:
            missing = set(wanted_ids) - set(available)
            if missing:
                errors.append(f"{kind} indices {sorted(missing)} not available (available: {sorted(available)})")
    if errors:
        raise ZeusdCapabilityError(f"Zeusd at {client.endpoint}: " + "; ".join(errors))
