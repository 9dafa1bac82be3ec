"""The requests Zeus 0.16's daemon client (`zeus.utils.zeusd.ZeusdClient`, used by
`ZeusdNVIDIAGPU` and `ZeusdRAPLCPU`) sends, re-created request for request: httpx over the Unix
socket at `http://localhost<path>`, every parameter in the query string (comma-joined ids,
`"true"`/`"false"` booleans, numbers as decimal strings), POST bodies empty, and any status but
200 raised with the answer's text. Shared by the e2e tests that put our zeusd in upstream's place.
"""

from __future__ import annotations

from typing import Optional

import httpx


class ZeusdError(RuntimeError):
    """What Zeus raises (zeus.device.exception.ZeusdError) when the daemon answers non-200."""


def _ids(ids: list[int]) -> str:
    return ",".join(str(i) for i in ids)


def _flag(value: bool) -> str:
    return "true" if value else "false"


class Zeus016ZeusdClient:
    """One connection to zeusd, opened the way Zeus 0.16 opens it: GET /discover first."""

    def __init__(self, socket_path: str, token: Optional[str] = None) -> None:
        """socket_path: a Unix socket (ZEUSD_SOCK_PATH), or host:port for TCP (ZEUSD_HOST_PORT),
        as Zeus's ZeusdConfig.from_env chooses; token: ZEUSD_TOKEN."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if socket_path.startswith("/"):
            self._base = "http://localhost"
            self._http = httpx.Client(transport=httpx.HTTPTransport(uds=socket_path), headers=headers)
        else:
            self._base = f"http://{socket_path}"
            self._http = httpx.Client(headers=headers)
        resp = self._http.get(self._url("/discover"))
        if resp.status_code != 200:
            raise ZeusdError(f"/discover answered HTTP {resp.status_code}: {resp.text}")
        data = resp.json()
        # Zeus reads exactly these keys (a KeyError means "daemon too old").
        self.gpus = [
            {
                "id": g["id"],
                "name": g["name"],
                "pci_address": g["pci_address"],
                "cumulative_energy_available": g["cumulative_energy_available"],
            }
            for g in data["gpus"]
        ]
        self.cpus = [{"id": c["id"], "dram_available": c["dram_available"]} for c in data["cpus"]]
        self.enabled_api_groups = set(data["enabled_api_groups"])
        self.auth_required = data["auth_required"]
        self.scopes: frozenset[str] = frozenset()
        if self.auth_required and token:
            whoami = self._http.get(self._url("/auth/whoami"))
            self._check(whoami, "whoami")
            self.scopes = frozenset(whoami.json().get("scopes", []))

    def _url(self, path: str) -> str:
        return f"{self._base}{path}"

    @staticmethod
    def _check(resp: httpx.Response, operation: str) -> None:
        if resp.status_code != 200:
            raise ZeusdError(f"Failed to {operation}: {resp.text}")

    def _can(self, group: str) -> bool:
        return group in self.enabled_api_groups and (not self.auth_required or group in self.scopes)

    @property
    def can_read_gpu(self) -> bool:
        return self._can("gpu-read")

    @property
    def can_control_gpu(self) -> bool:
        return self._can("gpu-control")

    @property
    def can_read_cpu(self) -> bool:
        return self._can("cpu-read")

    def _read(self, path: str, operation: str, params: dict[str, str]) -> dict:
        resp = self._http.get(self._url(path), params=params)
        self._check(resp, operation)
        return resp.json()

    def _write(self, path: str, operation: str, params: dict[str, str]) -> None:
        resp = self._http.post(self._url(path), params=params)
        self._check(resp, operation)

    @staticmethod
    def _optional_ids(gpu_ids: Optional[list[int]], name: str = "gpu_ids") -> dict[str, str]:
        return {} if gpu_ids is None else {name: _ids(gpu_ids)}

    # GPU reads
    def get_gpu_energy(self, gpu_ids: list[int]) -> dict[int, int]:
        data = self._read("/gpu/get_cumulative_energy", "get_gpu_energy", {"gpu_ids": _ids(gpu_ids)})
        return {int(k): v["energy_mj"] for k, v in data.items()}

    def get_gpu_power(self, gpu_ids: Optional[list[int]] = None) -> tuple[int, dict[int, int]]:
        data = self._read("/gpu/get_power", "get_gpu_power", self._optional_ids(gpu_ids))
        return data["timestamp_ms"], {int(k): v for k, v in data["power_mw"].items()}

    def get_power_limit(self, gpu_ids: Optional[list[int]] = None) -> dict[int, int]:
        data = self._read("/gpu/get_power_limit", "get_power_limit", self._optional_ids(gpu_ids))
        return {int(k): v["power_limit_mw"] for k, v in data.items()}

    def get_power_limit_constraints(self, gpu_ids: Optional[list[int]] = None) -> dict[int, tuple[int, int]]:
        data = self._read(
            "/gpu/get_power_limit_constraints", "get_power_limit_constraints", self._optional_ids(gpu_ids)
        )
        return {int(k): (v["min_power_limit_mw"], v["max_power_limit_mw"]) for k, v in data.items()}

    def get_persistence_mode(self, gpu_ids: Optional[list[int]] = None) -> dict[int, bool]:
        data = self._read("/gpu/get_persistence_mode", "get_persistence_mode", self._optional_ids(gpu_ids))
        return {int(k): v["enabled"] for k, v in data.items()}

    # GPU writes
    def set_power_limit(self, gpu_ids: list[int], power_limit_mw: int, block: bool = True) -> None:
        self._write(
            "/gpu/set_power_limit",
            "set_power_limit",
            {"gpu_ids": _ids(gpu_ids), "power_limit_mw": str(power_limit_mw), "block": _flag(block)},
        )

    def set_persistence_mode(self, gpu_ids: list[int], enabled: bool, block: bool = True) -> None:
        self._write(
            "/gpu/set_persistence_mode",
            "set_persistence_mode",
            {"gpu_ids": _ids(gpu_ids), "enabled": _flag(enabled), "block": _flag(block)},
        )

    def _lock(self, path: str, operation: str, gpu_ids: list[int], lo: int, hi: int, block: bool) -> None:
        self._write(
            path,
            operation,
            {
                "gpu_ids": _ids(gpu_ids),
                "min_clock_mhz": str(lo),
                "max_clock_mhz": str(hi),
                "block": _flag(block),
            },
        )

    def set_gpu_locked_clocks(self, gpu_ids: list[int], lo: int, hi: int, block: bool = True) -> None:
        self._lock("/gpu/set_gpu_locked_clocks", "set_gpu_locked_clocks", gpu_ids, lo, hi, block)

    def set_mem_locked_clocks(self, gpu_ids: list[int], lo: int, hi: int, block: bool = True) -> None:
        self._lock("/gpu/set_mem_locked_clocks", "set_mem_locked_clocks", gpu_ids, lo, hi, block)

    def _reset(self, name: str, gpu_ids: list[int], block: bool) -> None:
        self._write(f"/gpu/{name}", name, {"gpu_ids": _ids(gpu_ids), "block": _flag(block)})

    def reset_gpu_locked_clocks(self, gpu_ids: list[int], block: bool = True) -> None:
        self._reset("reset_gpu_locked_clocks", gpu_ids, block)

    def reset_mem_locked_clocks(self, gpu_ids: list[int], block: bool = True) -> None:
        self._reset("reset_mem_locked_clocks", gpu_ids, block)

    def reset_locked_clocks(self, gpu_ids: list[int], block: bool = True) -> None:
        self._reset("reset_locked_clocks", gpu_ids, block)

    # CPU and time
    def get_cpu_energy(
        self, cpu_ids: Optional[list[int]] = None, cpu: bool = True, dram: bool = True
    ) -> dict[int, tuple[Optional[int], Optional[int]]]:
        params = {"cpu": _flag(cpu), "dram": _flag(dram), **self._optional_ids(cpu_ids, "cpu_ids")}
        data = self._read("/cpu/get_cumulative_energy", "get_cpu_energy", params)
        return {int(k): (v.get("cpu_energy_uj"), v.get("dram_energy_uj")) for k, v in data.items()}

    def get_cpu_power(self, cpu_ids: Optional[list[int]] = None) -> tuple[int, dict[int, tuple[int, Optional[int]]]]:
        data = self._read("/cpu/get_power", "get_cpu_power", self._optional_ids(cpu_ids, "cpu_ids"))
        return data["timestamp_ms"], {
            int(k): (v["cpu_mw"], v.get("dram_mw")) for k, v in data["power_mw"].items()
        }

    def get_time(self) -> float:
        resp = self._http.get(self._url("/time"))
        self._check(resp, "get_time")
        return resp.json()["timestamp_ms"] / 1000.0
