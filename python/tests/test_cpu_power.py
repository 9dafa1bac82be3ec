"""CPU package and DRAM power timelines in PowerMonitor (issue 23): RAPL energy deltas over the
measured time, across counter wraparounds, on a fake powercap tree (ZEUS_POWERCAP_ROOT), with the
names of upstream Zeus's CPU power monitor branch (cpu_indices, cpu_index, cpu_package_average,
cpu_dram_average)."""

from __future__ import annotations

import threading
import time

import pytest

import zeus_cpp
from zeus_cpp.monitor import PowerDomain, PowerMonitor

from conftest import fake_device

GPU_DOMAINS = ["device_instant", "device_average"]  # the default fake H100 has no memory power
CPU_DOMAINS = ["cpu_package_average", "cpu_dram_average"]


class _Rapl:
    """Moves the fake package counter like RAPL: +step_uj every period_s, wrapping at max_uj."""

    def __init__(self, zone, start_uj: int, max_uj: int, step_uj: int, period_s: float) -> None:
        self.zone, self.value, self.max_uj = zone, start_uj, max_uj
        self.step_uj, self.period_s = step_uj, period_s
        (zone / "max_energy_range_uj").write_text(f"{max_uj}\n")
        (zone / "energy_uj").write_text(f"{start_uj}\n")
        self.wraps = 0
        self.written = [(time.time(), 0)]  # (Unix time, energy written since the start in uJ)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            self.value += self.step_uj
            if self.value > self.max_uj:
                self.value -= self.max_uj
                self.wraps += 1
            # Replaced whole, as sysfs answers a whole value (no half-written file is read).
            (self.zone / "energy_uj.new").write_text(f"{self.value}\n")
            (self.zone / "energy_uj.new").replace(self.zone / "energy_uj")
            self.written.append((time.time(), self.written[-1][1] + self.step_uj))

    def joules_between(self, t0: float, t1: float) -> float:
        """The energy written between two Unix times (the counter's value at each)."""
        def at(t: float) -> int:
            return max(uj for when, uj in self.written if when <= t)
        return (at(t1) - at(t0)) / 1e6

    def __enter__(self) -> "_Rapl":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def test_cpu_package_timeline_is_energy_over_time_across_wraps(fake_nvml, powercap):
    # 20 W: 0.2 J every 10 ms; the counter wraps at 5 J, so about every 250 ms (reads must come
    # more often than one wrap, as on real RAPL: 5 per wrap here, even on a loaded machine).
    package = powercap / "intel-rapl:0"
    with _Rapl(package, start_uj=4_900_000, max_uj=5_000_000, step_uj=200_000,
               period_s=0.01) as rapl:
        monitor = PowerMonitor(gpu_indices=[], cpu_indices=[0], update_period=0.05)
        try:
            assert monitor.gpu_indices == [] and monitor.cpu_indices == [0]
            assert monitor.measurement_domains == [PowerDomain(d) for d in CPU_DOMAINS]
            time.sleep(1.2)
        finally:
            monitor.stop()
    assert rapl.wraps >= 3
    timeline = monitor.get_power_timeline("cpu_package_average", cpu_index=0)[0]
    assert len(timeline) >= 8
    watts = [w for _, w in timeline]
    assert all(0 <= w < 100 for w in watts), watts
    # Each sample is the average power since the previous one, so summing power x interval gives
    # back the energy the counter moved between the first and last sample, wraps included (a
    # wrap read wrongly would lose up to 5 J each). The reads race the writer by one step at
    # each end.
    sampled_j = sum(w * (t - t_prev) for (t_prev, _), (t, w) in zip(timeline, timeline[1:]))
    written_j = rapl.joules_between(timeline[0][0], timeline[-1][0])
    assert written_j > 5
    assert sampled_j == pytest.approx(written_j, abs=2 * 0.2 + 1e-6), (sampled_j, written_j)
    # The DRAM zone did not move: 0 W.
    dram = monitor.get_power_timeline(PowerDomain.CPU_DRAM_AVERAGE)[0]
    assert dram and {w for _, w in dram} == {0.0}


def test_gpus_and_cpus_together_in_upstreams_shapes(fake_nvml, powercap):
    fake_nvml.write([fake_device(power_draw_w=300)])
    monitor = PowerMonitor(update_period=0.05, cpu_indices=[0])
    try:
        assert monitor.gpu_indices == [0] and monitor.cpu_indices == [0]
        assert [d.value for d in monitor.measurement_domains] == GPU_DOMAINS + CPU_DOMAINS
        start = time.time()
        dram = powercap / "intel-rapl:0" / "intel-rapl:0:0" / "energy_uj"
        for step in range(1, 6):
            time.sleep(0.05)
            dram.write_text(f"{10_000 + step * 250_000}\n")  # 5 W of DRAM
        time.sleep(0.1)
        end = time.time()
        timelines = monitor.get_all_power_timelines(start_time=start, end_time=end)
        assert list(timelines) == GPU_DOMAINS + CPU_DOMAINS
        assert all(list(timelines[d]) == [0] for d in timelines)
        assert {w for _, w in timelines["device_instant"][0]} == {300.0}
        energy = monitor.get_energy(start, end, power_domain="cpu_dram_average")
        assert list(energy) == [0] and 0 < energy[0] <= 5 * (end - start) * 1.5, energy
        assert monitor.get_energy(start, end) is not None  # the default stays the GPUs'
        assert list(monitor.get_power(power_domain="cpu_package_average")) == [0]
        # The wrong kind of index for a domain is an error that names the right one.
        with pytest.raises(ValueError, match="pass cpu_index, not gpu_index"):
            monitor.get_power_timeline("cpu_package_average", gpu_index=0)
        with pytest.raises(ValueError, match="pass gpu_index, not cpu_index"):
            monitor.get_power_timeline("device_instant", cpu_index=0)
        with pytest.raises(zeus_cpp.NotFoundError, match="CPU package 3 is not monitored"):
            monitor.get_power_timeline("cpu_package_average", cpu_index=3)
        # Times outside the timeline: nothing, not an error.
        assert monitor.get_power_timeline("cpu_dram_average", start_time=end + 100,
                                          end_time=end + 200) == {0: []}
        assert monitor.get_energy(start - 100, start - 90, power_domain="cpu_dram_average") is None
    finally:
        monitor.stop()


def test_cpu_indices_can_turn_cpus_off_and_domains_pick_them(fake_nvml, powercap):
    fake_nvml.write([fake_device()])
    # As upstream's release: without cpu_indices or a CPU domain, no CPU is sampled (a ported
    # script gets the same keys), even where RAPL is readable.
    default = PowerMonitor(update_period=0.1)
    try:
        assert default.cpu_indices == []
        assert list(default.get_all_power_timelines()) == GPU_DOMAINS
    finally:
        default.stop()
    gpu_only = PowerMonitor(update_period=0.1, cpu_indices=[])
    try:
        assert gpu_only.cpu_indices == []
        assert [d.value for d in gpu_only.measurement_domains] == GPU_DOMAINS
        with pytest.raises(ValueError, match="cpu_package_average is not being monitored"):
            gpu_only.get_power_timeline("cpu_package_average")
    finally:
        gpu_only.stop()
    with pytest.raises(ValueError, match="cpu_dram_average is not supported"):
        PowerMonitor(update_period=0.1, cpu_indices=[], power_domains=["cpu_dram_average"])
    picked = PowerMonitor(update_period=0.1, power_domains=["cpu_dram_average"])
    try:
        assert picked.measurement_domains == [PowerDomain.CPU_DRAM_AVERAGE]
        assert picked.cpu_indices == [0]  # a CPU domain asked for: every readable package
        # Queries that name no domain use the GPU domains, which are not monitored here.
        with pytest.raises(ValueError, match="pass power_domain explicitly"):
            picked.get_power()
    finally:
        picked.stop()
