"""Zeus 0.16's live power client, `zeus.monitor.power_streaming.PowerStreamingClient` (with the
parts of `zeus.utils.zeusd.ZeusdConfig` / `ZeusdClient` it uses), re-created request for request
so the e2e tests can replay it against our zeusd. Our own code; what it does on the wire:

- Every connection is a fresh httpx client: over a Unix socket (HTTPTransport(uds=PATH)) at
  `http://localhost<path>`, over TCP at `http://host:port<path>`; with a token, every request
  carries `Authorization: Bearer <token>`. `ZeusdConfig.from_env` takes ZEUSD_SOCK_PATH first,
  then ZEUSD_HOST_PORT, and the token from ZEUSD_TOKEN.
- Per server, at construction: GET /discover (transport error or non-200: a connection error;
  reads gpus[id, name, pci_address, cumulative_energy_available], cpus[id, dram_available],
  enabled_api_groups, auth_required); when auth is required and there is a token, GET
  /auth/whoami: 200 gives the scopes, any other answer is recorded as an auth error, not raised
  (then no scope is granted). A device kind is read when its API group is enabled and, with
  auth, the token has the scope of that name.
- Which kinds to stream: indices None = all the daemon has, silently none when it has none or
  the scope is missing; [] = never; a list = those ids, ValueError for an id the daemon lacks,
  ZeusdCapabilityError when the scope is missing.
- Clock offset: 5 x GET /time on one new client; offset = median(client midpoint -
  timestamp_ms / 1000); added to every event's timestamp.
- One thread per kind: a new client, GET /gpu/stream_power or /cpu/stream_power, with
  `?gpu_ids=a,b` / `?cpu_ids=a,b` only when indices were given (in the caller's order), no
  timeout; raise_for_status; the decoded text is buffered and cut at each blank line ("\\n\\n");
  each event's stripped lines that start with "data: " are JSON: GPU {timestamp_ms, gpu_id,
  power_mw}, CPU {timestamp_ms, cpu_id, cpu_mw, dram_mw|null}; missing fields or bad JSON skip
  the event. Watts = mW / 1000. 401 or 403 ends the thread; any other status or a transport
  error reconnects after reconnect_delay_s. stop() is seen at the next chunk (a keep-alive).
- Readings: per endpoint (socket path or host:port) one PowerReadings whose timestamp is the
  latest event's; get_power() copies them; iterating yields a snapshot at every stored event.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional, Sequence

import httpx


class ZeusdConnectionError(RuntimeError):
    """zeus.utils.zeusd.ZeusdConnectionError: the daemon cannot be reached or discovered."""


class ZeusdCapabilityError(RuntimeError):
    """zeus.utils.zeusd.ZeusdCapabilityError: streaming asked for exceeds the token's scopes."""


@dataclass(frozen=True)
class ZeusdConfig:
    host_port: Optional[str] = None
    socket_path: Optional[str] = None
    token: Optional[str] = None
    gpu_indices: Optional[list[int]] = None
    cpu_indices: Optional[list[int]] = None

    @classmethod
    def tcp(cls, host: str, port: int, *, token: Optional[str] = None,
            gpu_indices: Optional[list[int]] = None,
            cpu_indices: Optional[list[int]] = None) -> "ZeusdConfig":
        return cls(host_port=f"{host}:{port}", token=token, gpu_indices=gpu_indices,
                   cpu_indices=cpu_indices)

    @classmethod
    def uds(cls, socket_path: str, *, token: Optional[str] = None,
            gpu_indices: Optional[list[int]] = None,
            cpu_indices: Optional[list[int]] = None) -> "ZeusdConfig":
        return cls(socket_path=socket_path, token=token, gpu_indices=gpu_indices,
                   cpu_indices=cpu_indices)

    @classmethod
    def from_env(cls) -> Optional["ZeusdConfig"]:
        token = os.environ.get("ZEUSD_TOKEN")
        if os.environ.get("ZEUSD_SOCK_PATH") is not None:
            return cls.uds(os.environ["ZEUSD_SOCK_PATH"], token=token)
        if os.environ.get("ZEUSD_HOST_PORT") is not None:
            return cls(host_port=os.environ["ZEUSD_HOST_PORT"], token=token)
        return None

    def make_client(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        if self.socket_path is not None:
            return httpx.Client(transport=httpx.HTTPTransport(uds=self.socket_path), headers=headers)
        return httpx.Client(headers=headers)

    def url(self, path: str) -> str:
        if self.socket_path is not None:
            return f"http://localhost{path}"
        return f"http://{self.host_port}{path}"

    @property
    def endpoint(self) -> str:
        if self.socket_path is not None:
            return self.socket_path
        if self.host_port is not None:
            return self.host_port
        raise ValueError("ZeusdConfig has neither socket_path nor host_port set.")


class ZeusdClient:
    """The discovery and authorisation part of zeus.utils.zeusd.ZeusdClient."""

    def __init__(self, config: ZeusdConfig) -> None:
        self.config = config
        self._http = config.make_client()
        try:
            resp = self._http.get(config.url("/discover"))
        except httpx.RequestError as exc:
            raise ZeusdConnectionError(f"Cannot reach Zeusd at {config.endpoint}: {exc}") from exc
        if resp.status_code != 200:
            raise ZeusdConnectionError(
                f"Zeusd at {config.endpoint} returned HTTP {resp.status_code} on /discover: {resp.text}")
        data = resp.json()
        try:
            self.gpus = [(g["id"], g["name"], g["pci_address"], g["cumulative_energy_available"])
                         for g in data["gpus"]]
        except KeyError as exc:
            raise ZeusdConnectionError(f"Zeusd at {config.endpoint} did not report {exc} in /discover") from exc
        self.cpus = [(c["id"], c["dram_available"]) for c in data["cpus"]]
        self.gpu_ids = [g[0] for g in self.gpus]
        self.cpu_ids = [c[0] for c in self.cpus]
        self.enabled_api_groups = set(data["enabled_api_groups"])
        self.auth_required = bool(data["auth_required"])
        self.auth_error: Optional[str] = None
        self.granted_scopes: frozenset[str] = frozenset()
        self.whoami_sub: Optional[str] = None
        if self.auth_required:
            if not config.token:
                self.auth_error = f"Zeusd at {config.endpoint} requires authentication but no token was provided."
            else:
                whoami = self._http.get(config.url("/auth/whoami"))
                if whoami.status_code == 401:
                    self.auth_error = f"Token rejected by Zeusd at {config.endpoint}: {whoami.text}"
                elif whoami.status_code != 200:
                    self.auth_error = f"Unexpected response from /auth/whoami (HTTP {whoami.status_code}): {whoami.text}"
                else:
                    body = whoami.json()
                    self.granted_scopes = frozenset(body.get("scopes", []))
                    self.whoami_sub = body.get("sub")
        self._http.close()

    def _can(self, group: str) -> bool:
        if group not in self.enabled_api_groups:
            return False
        return not (self.auth_required and group not in self.granted_scopes)

    @property
    def can_read_gpu(self) -> bool:
        return self._can("gpu-read")

    @property
    def can_read_cpu(self) -> bool:
        return self._can("cpu-read")


@dataclass
class CpuPowerReading:
    cpu_w: float = 0.0
    dram_w: Optional[float] = None


@dataclass
class PowerReadings:
    timestamp_s: float = 0.0
    gpu_power_w: dict[int, float] = field(default_factory=dict)
    cpu_power_w: dict[int, CpuPowerReading] = field(default_factory=dict)


class PowerStreamingClient:
    def __init__(self, servers: Sequence[ZeusdConfig], reconnect_delay_s: float = 1.0) -> None:
        self._servers = list(servers)
        self._reconnect_delay = reconnect_delay_s
        endpoints = [s.endpoint for s in self._servers]
        duplicates = sorted({e for e in endpoints if endpoints.count(e) > 1})
        if duplicates:
            raise ValueError(f"Duplicate server endpoints: {duplicates}")
        self._lock = threading.Lock()
        self._condition = threading.Condition(self._lock)
        self._readings: dict[str, PowerReadings] = {}
        self.clock_offsets: dict[str, float] = {}
        self.daemon_clients: dict[str, ZeusdClient] = {}
        self.threads: list[threading.Thread] = []
        self._stop_event = threading.Event()
        # What each thread ended with, by "GPU <endpoint>" (for the tests): "stopped", or
        # "HTTP 401: <body>" (upstream logs that and ends the thread).
        self.thread_results: dict[str, str] = {}
        for server in self._servers:
            stream_gpu, stream_cpu = self._init_server(server)
            endpoint = server.endpoint
            self.clock_offsets[endpoint] = self._estimate_clock_offset(endpoint)
            for wanted, loop, kind in ((stream_gpu, self._gpu_stream_loop, "gpu"),
                                       (stream_cpu, self._cpu_stream_loop, "cpu")):
                if wanted:
                    t = threading.Thread(target=loop, args=(server, endpoint),
                                         name=f"{kind}-power-stream-{endpoint}", daemon=True)
                    t.start()
                    self.threads.append(t)

    def stop(self) -> None:
        self._stop_event.set()
        with self._condition:
            self._condition.notify_all()
        for t in self.threads:
            t.join(timeout=5.0)

    def get_power(self) -> dict[str, PowerReadings]:
        with self._lock:
            return {
                k: PowerReadings(
                    timestamp_s=v.timestamp_s,
                    gpu_power_w=dict(v.gpu_power_w),
                    cpu_power_w={i: CpuPowerReading(r.cpu_w, r.dram_w) for i, r in v.cpu_power_w.items()},
                )
                for k, v in self._readings.items()
            }

    def __iter__(self) -> Iterator[dict[str, PowerReadings]]:
        while not self._stop_event.is_set():
            with self._condition:
                notified = self._condition.wait(timeout=1.0)
            if self._stop_event.is_set():
                break
            if notified:
                yield self.get_power()

    # Setup
    def _init_server(self, server: ZeusdConfig) -> tuple[bool, bool]:
        client = ZeusdClient(server)
        self.daemon_clients[server.endpoint] = client
        return (
            self._resolve(server.gpu_indices, set(client.gpu_ids), client.can_read_gpu, "gpu-read", "GPU",
                          server.endpoint),
            self._resolve(server.cpu_indices, set(client.cpu_ids), client.can_read_cpu, "cpu-read", "CPU",
                          server.endpoint),
        )

    @staticmethod
    def _resolve(indices: Optional[list[int]], available: set[int], permitted: bool, scope: str,
                 kind: str, endpoint: str) -> bool:
        if indices is not None:
            if not indices:
                return False
            missing = set(indices) - available
            if missing:
                raise ValueError(f"{kind} indices {sorted(missing)} requested for {endpoint} but only "
                                 f"{sorted(available)} are available")
            if not permitted:
                raise ZeusdCapabilityError(f"Token for {endpoint} lacks required scope '{scope}' "
                                           f"(explicitly requested {kind.lower()}_indices={indices})")
            return True
        return bool(available) and permitted

    def _estimate_clock_offset(self, endpoint: str, num_samples: int = 5) -> float:
        config = self.daemon_clients[endpoint].config
        offsets = []
        with config.make_client() as http:
            for _ in range(num_samples):
                t1 = time.time()
                response = http.get(config.url("/time"))
                t2 = time.time()
                response.raise_for_status()
                offsets.append((t1 + t2) / 2.0 - response.json()["timestamp_ms"] / 1000.0)
        return statistics.median(offsets)

    # Streams
    def _gpu_stream_loop(self, server: ZeusdConfig, endpoint: str) -> None:
        url = server.url("/gpu/stream_power")
        if server.gpu_indices is not None:
            url += "?gpu_ids=" + ",".join(str(i) for i in server.gpu_indices)
        self._stream_loop(url, server, self._process_gpu_event, "GPU")

    def _cpu_stream_loop(self, server: ZeusdConfig, endpoint: str) -> None:
        url = server.url("/cpu/stream_power")
        if server.cpu_indices is not None:
            url += "?cpu_ids=" + ",".join(str(i) for i in server.cpu_indices)
        self._stream_loop(url, server, self._process_cpu_event, "CPU")

    def _stream_loop(self, url: str, server: ZeusdConfig, process: Callable[[str, str], None],
                     label: str) -> None:
        while not self._stop_event.is_set():
            try:
                self._connect_and_stream(url, server, process)
            except httpx.HTTPStatusError as e:
                if e.response.status_code in (401, 403):
                    self.thread_results[f"{label} {server.endpoint}"] = (
                        f"HTTP {e.response.status_code}: {e.response.text}")
                    return
                self._stop_event.wait(timeout=self._reconnect_delay)
            except httpx.RequestError:
                self._stop_event.wait(timeout=self._reconnect_delay)
        self.thread_results[f"{label} {server.endpoint}"] = "stopped"

    def _connect_and_stream(self, url: str, server: ZeusdConfig, process: Callable[[str, str], None]) -> None:
        with server.make_client() as http, http.stream("GET", url, timeout=None) as response:
            if response.is_error:
                response.read()  # upstream logs e.response.text on 401/403: read the body first
            response.raise_for_status()
            buffer = ""
            for chunk in response.iter_text():
                if self._stop_event.is_set():
                    return
                buffer += chunk
                while "\n\n" in buffer:
                    event_text, buffer = buffer.split("\n\n", 1)
                    process(event_text, server.endpoint)

    @staticmethod
    def _event_data(event_text: str) -> Iterator[dict[str, Any]]:
        for line in event_text.strip().split("\n"):
            if line.startswith("data: "):
                try:
                    yield json.loads(line[len("data: "):])
                except json.JSONDecodeError:
                    continue

    def _store_reading(self, endpoint: str, timestamp_s: float, kind: str, device_id: int, value: Any) -> None:
        with self._condition:
            readings = self._readings.get(endpoint)
            if readings is None:
                readings = PowerReadings(timestamp_s=timestamp_s)
                self._readings[endpoint] = readings
            else:
                readings.timestamp_s = max(readings.timestamp_s, timestamp_s)
            (readings.gpu_power_w if kind == "gpu" else readings.cpu_power_w)[device_id] = value
            self._condition.notify_all()

    def _process_gpu_event(self, event_text: str, endpoint: str) -> None:
        for data in self._event_data(event_text):
            gpu_id, power_mw, timestamp_ms = data.get("gpu_id"), data.get("power_mw"), data.get("timestamp_ms")
            if gpu_id is None or power_mw is None or timestamp_ms is None:
                continue
            try:
                gpu = int(gpu_id)
                watts = float(power_mw) / 1000.0
                when = float(timestamp_ms) / 1000.0 + self.clock_offsets[endpoint]
            except (TypeError, ValueError):
                continue
            self._store_reading(endpoint, when, "gpu", gpu, watts)

    def _process_cpu_event(self, event_text: str, endpoint: str) -> None:
        for data in self._event_data(event_text):
            cpu_id, cpu_mw, timestamp_ms = data.get("cpu_id"), data.get("cpu_mw"), data.get("timestamp_ms")
            if cpu_id is None or cpu_mw is None or timestamp_ms is None:
                continue
            dram_mw = data.get("dram_mw")
            try:
                cpu = int(cpu_id)
                reading = CpuPowerReading(float(cpu_mw) / 1000.0,
                                          float(dram_mw) / 1000.0 if dram_mw is not None else None)
                when = float(timestamp_ms) / 1000.0 + self.clock_offsets[endpoint]
            except (TypeError, ValueError):
                continue
            self._store_reading(endpoint, when, "cpu", cpu, reading)
