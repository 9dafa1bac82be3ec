"""CarbonEmissionMonitor and EnergyCostMonitor (zeus.monitor.carbon / zeus.monitor.price names)
on the fake NVML (one H100 drawing 350 W): windows charged interval by interval, the online
providers against a local server answering in Electricity Maps' and OpenEI's shapes, and the
failures that must never stop a training loop (401, garbage, a gap)."""

from __future__ import annotations

import datetime
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Iterator, Tuple

import pytest

from zeus_cpp.monitor.carbon import (CarbonEmissionMonitor, CarbonIntensitySeries,
                                     CsvCarbonIntensity, ElectrictyMapsClient)
from zeus_cpp.monitor.price import ElectricityPriceSeries, EnergyCostMonitor, OpenEIClient


@pytest.fixture
def service(monkeypatch) -> Iterator[Callable[[Callable[[str], Tuple[int, str]]], str]]:
    """serve(answer): a local HTTP server whose answer(path) gives (status, body); its URL."""
    servers = []

    def serve(answer: Callable[[str], Tuple[int, str]]) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                status, body = answer(self.path)
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:  # quiet
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield serve
    for server in servers:
        server.shutdown()


def iso(t: float) -> str:
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def test_a_window_across_a_boundary_is_charged_at_both_rates():
    now = time.time()
    provider = CarbonIntensitySeries([(now - 600, now + 0.4, 400.0), (now + 0.4, now + 600, 100.0)])
    monitor = CarbonEmissionMonitor(provider, sync_execution_with=None)
    monitor.begin_window("step")
    time.sleep(0.8)
    m = monitor.end_window("step")
    energy = m.gpu_energy[0]
    assert energy == pytest.approx(350 * m.time, rel=0.05)
    assert [value for _, _, value in m.intervals] == [400.0, 100.0]
    assert energy / 3.6e6 * 100 < m.gpu_carbon_emission[0] < energy / 3.6e6 * 400
    assert m.cpu_energy is None and m.cpu_carbon_emission is None and m.unknown_reason == ""
    with pytest.raises(ValueError):
        monitor.end_window("step")


def test_a_gap_leaves_the_window_measured(tmp_path):
    csv = tmp_path / "carbon.csv"
    csv.write_text("timestamp,duration,value\n2022-10-20T06:20:00+00:00,30,646.8\n")
    monitor = CarbonEmissionMonitor(CsvCarbonIntensity(csv), sync_execution_with=None)
    monitor.begin_window("w")
    m = monitor.end_window("w")
    assert m.gpu_carbon_emission is None and m.gpu_energy[0] >= 0
    assert "has no value" in m.unknown_reason


def test_electricity_maps_from_a_local_server(service, monkeypatch):
    hour = int(time.time()) // 3600 * 3600
    url = service(lambda path: (200, json.dumps(
        {"zone": "US-MIDW-MISO", "carbonIntensity": 480, "datetime": iso(hour)}
        if "/latest" in path else
        {"zone": "US-MIDW-MISO", "history": [{"carbonIntensity": 500, "datetime": iso(hour - 3600)}]})))
    monkeypatch.setenv("ZEUS_ELECTRICITYMAPS_URL", url)
    provider = ElectrictyMapsClient((42.28, -83.74), estimate=True, api_key="k")
    assert provider.get_current_carbon_intensity() == 480
    assert provider.value_at(hour - 1800) == 500
    monitor = CarbonEmissionMonitor(provider, sync_execution_with=None)
    monitor.begin_window("epoch")
    m = monitor.end_window("epoch")
    assert m.gpu_carbon_emission[0] == pytest.approx(m.gpu_energy[0] / 3.6e6 * 480)


def test_a_refused_key_or_garbage_never_stops_training(service, monkeypatch):
    for status, body, says in ((401, '{"error": "bad token"}', "ELECTRICITYMAPS_API_KEY"),
                               (200, "<html>", "not JSON")):
        monkeypatch.setenv("ZEUS_ELECTRICITYMAPS_URL", service(lambda path: (status, body)))
        monitor = CarbonEmissionMonitor(ElectrictyMapsClient((1.0, 2.0)), sync_execution_with=None)
        monitor.begin_window("w")
        m = monitor.end_window("w")
        assert m.gpu_carbon_emission is None and says in m.unknown_reason, m.unknown_reason


def test_energy_cost_from_a_series_and_openei(service, monkeypatch):
    now = time.time()
    monitor = EnergyCostMonitor(ElectricityPriceSeries([(now - 60, now + 60, 0.25)]),
                                sync_execution_with=None)
    monitor.begin_window("w")
    time.sleep(0.1)
    m = monitor.end_window("w")
    assert m.gpu_energy_cost[0] == pytest.approx(m.gpu_energy[0] / 3.6e6 * 0.25)

    schedule = [[1] * 24 for _ in range(12)]
    answer = {"items": [{"label": "rate-1", "energyratestructure": [[{"rate": 0.1}], [{"rate": 0.3}]],
                         "energyweekdayschedule": schedule, "energyweekendschedule": schedule}]}
    monkeypatch.setenv("ZEUS_OPENEI_URL", service(lambda path: (200, json.dumps(answer))))
    provider = OpenEIClient((42.28, -83.74), label="rate-1", api_key="k")
    assert provider.unit == "$/kWh" and provider.value_at(now) == 0.3
    with pytest.raises(Exception, match="label"):
        OpenEIClient((42.28, -83.74), label="")
    with pytest.raises(Exception, match="sector"):
        OpenEIClient((42.28, -83.74), label="x", sector="Domestic")


def test_bad_arguments():
    with pytest.raises(TypeError):
        CarbonEmissionMonitor("electricitymaps")  # type: ignore[arg-type]
    with pytest.raises(Exception, match="overlap"):
        CarbonIntensitySeries([(0, 10, 1.0), (5, 20, 2.0)])
    with pytest.raises(Exception, match="latitude"):
        ElectrictyMapsClient((95.0, 0.0))
