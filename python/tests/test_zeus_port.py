"""A Zeus 0.16 measurement script ported by changing only its imports (windows with restart and
reset, power and temperature timelines, the log file), and the log file's upstream format."""

from __future__ import annotations

import csv
import json
import time

import pytest

import zeus_cpp
from conftest import fake_device

# The script, as written for upstream Zeus, with only these import lines changed
# (was: from zeus.monitor import ...; from zeus.monitor.power import PowerMonitor; ...).
from zeus_cpp.monitor import ZeusMonitor
from zeus_cpp.monitor.power import PowerMonitor
from zeus_cpp.monitor.temperature import TemperatureMonitor


def benchmark_script(log_file, work_s: float) -> dict:
    """What the ML.ENERGY benchmark does around one run, reduced to its Zeus calls."""
    monitor = ZeusMonitor(log_file=log_file)
    power_monitor = PowerMonitor(update_period=0.1)
    temperature_monitor = TemperatureMonitor(update_period=0.5)
    monitor.begin_window("entire_benchmark", sync_execution=False)
    start = time.time()
    for step in range(3):
        monitor.begin_window("iteration", sync_execution=False)
        time.sleep(work_s)
        monitor.end_window("iteration", sync_execution=False)
    monitor.begin_window("steady_state", sync_execution=False)
    monitor.begin_window("steady_state", sync_execution=False, restart=True)  # a crashed cell
    time.sleep(work_s)
    steady = monitor.end_window("steady_state", sync_execution=False)
    end = time.time()
    entire = monitor.end_window("entire_benchmark", sync_execution=False)
    monitor.begin_window("left_open", sync_execution=False)
    monitor.reset_windows()
    time.sleep(0.15)  # samples after `end`: the timelines cover the whole range
    results = {
        "steady_state_measurement": {"time": steady.time, "gpu_energy": steady.gpu_energy},
        "entire_benchmark_measurement": {"time": entire.time, "gpu_energy": entire.gpu_energy},
        "timeline": {
            "benchmark_start_time": start,
            "benchmark_end_time": end,
            "power": power_monitor.get_all_power_timelines(start_time=start, end_time=end),
            "temperature": temperature_monitor.get_temperature_timeline(start_time=start,
                                                                        end_time=end),
        },
        "sampled_energy": power_monitor.get_energy(start, end),
    }
    power_monitor.stop()
    temperature_monitor.stop()
    assert not monitor._monitor.is_window_open("left_open")
    return results


def test_ported_script_produces_upstreams_keys_files_and_energies(fake_nvml, tmp_path, powercap):
    fake_nvml.write([fake_device(power_draw_w=320, memory_power_mw=70000, temperature_c=57)] * 2)
    log = tmp_path / "logs" / "zeus_monitor.csv"
    log.parent.mkdir()
    results = json.loads(json.dumps(benchmark_script(log, work_s=0.2)))
    assert set(results["timeline"]["power"]) == {"device_instant", "device_average",
                                                 "memory_average"}
    assert set(results["timeline"]["power"]["memory_average"]) == {"0", "1"}
    assert set(results["timeline"]["temperature"]) == {"0", "1"}
    entire = results["entire_benchmark_measurement"]
    for gpu in ("0", "1"):
        # The counter windows and the sampled timeline agree within 1 % on the same fake.
        assert entire["gpu_energy"][gpu] == pytest.approx(320 * entire["time"], rel=0.01)
        assert results["sampled_energy"][gpu] == pytest.approx(
            entire["gpu_energy"][gpu] * (results["timeline"]["benchmark_end_time"]
                                         - results["timeline"]["benchmark_start_time"])
            / entire["time"], rel=0.01)
    # The log is upstream's: GPU columns only (CPUs are measured here, RAPL is faked), one row
    # per ended window in end order, every number written as Python writes a float.
    text = log.read_text()
    assert text.splitlines()[0] == "start_time,window_name,elapsed_time,gpu0_energy,gpu1_energy"
    rows = list(csv.reader(text.splitlines()[1:]))
    assert [r[1] for r in rows] == ["iteration"] * 3 + ["steady_state", "entire_benchmark"]
    for row in rows:
        assert len(row) == 5
        for number in (row[0], row[2], row[3], row[4]):
            assert repr(float(number)) == number, number
    assert float(rows[3][2]) == pytest.approx(results["steady_state_measurement"]["time"])


def test_log_file_with_another_header_is_an_error_and_untouched(fake_nvml, tmp_path):
    log = tmp_path / "results.csv"
    log.write_text("step,loss\n1,0.5\n")
    with pytest.raises(zeus_cpp.InvalidArgumentError) as raised:
        ZeusMonitor(log_file=log, sync_execution_with=None)
    assert "start_time,window_name,elapsed_time,gpu0_energy" in str(raised.value)
    assert log.read_text() == "step,loss\n1,0.5\n"


def test_log_file_with_the_same_header_is_appended_to(fake_nvml, tmp_path):
    log = tmp_path / "windows.csv"
    for run in range(2):
        monitor = ZeusMonitor(log_file=log, sync_execution_with=None)
        monitor.begin_window(f"run{run}")
        monitor.end_window(f"run{run}")
        del monitor
    lines = log.read_text().splitlines()
    assert lines[0] == "start_time,window_name,elapsed_time,gpu0_energy"
    assert [line.split(",")[1] for line in lines[1:]] == ["run0", "run1"]


def test_restart_and_reset_windows(fake_nvml):
    monitor = ZeusMonitor(sync_execution_with=None)
    monitor.begin_window("w")
    with pytest.raises(zeus_cpp.InvalidArgumentError, match="already open"):
        monitor.begin_window("w")
    time.sleep(0.2)
    monitor.begin_window("w", restart=True)
    m = monitor.end_window("w")
    assert m.time < 0.15  # measured from the restart, not the first begin
    monitor.begin_window("a")
    monitor.begin_window("b")
    monitor.reset_windows()
    for key in ("a", "b"):
        with pytest.raises(zeus_cpp.NotFoundError):
            monitor.end_window(key)
    monitor.reset_windows()  # nothing open: a no-op
