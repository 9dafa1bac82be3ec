"""What a Zeus 0.16 job does through zeusd (ZeusdNVIDIAGPU / ZeusdRAPLCPU), against our zeusd:
discover, read and set limits, persistence and clocks, read energy and power, see the daemon's
refusals. Leaves GPU 0 changed, prints READY and waits to be killed.
Usage: zeus016_zeusd_scenario.py SOCKET"""

from __future__ import annotations

import sys
import time

from zeus016_zeusd import Zeus016ZeusdClient, ZeusdError


def expect_refusal(call, *words: str) -> None:
    try:
        call()
    except ZeusdError as error:
        for word in words:
            assert word in str(error), f"{word!r} not in {error}"
        return
    raise AssertionError("zeusd accepted what it should refuse")


def main() -> None:
    client = Zeus016ZeusdClient(sys.argv[1])
    assert [g["id"] for g in client.gpus] == [0, 1], client.gpus
    assert client.gpus[0]["pci_address"] == "0000:01:00.0", client.gpus
    assert client.gpus[1]["name"] == "NVIDIA A100-SXM4-40GB", client.gpus
    assert all(g["cumulative_energy_available"] for g in client.gpus), client.gpus
    assert client.cpus == [{"id": 0, "dram_available": True}], client.cpus
    assert not client.auth_required
    assert client.can_read_gpu and client.can_control_gpu and client.can_read_cpu
    assert abs(client.get_time() - time.time()) < 5

    assert client.get_power_limit_constraints() == {0: (200000, 700000), 1: (100000, 400000)}
    assert client.get_power_limit() == {0: 700000, 1: 400000}
    client.set_power_limit([0, 1], 300000)
    assert client.get_power_limit([1, 0]) == {0: 300000, 1: 300000}
    client.set_power_limit([1], 400000, block=False)
    assert client.get_power_limit([1]) == {1: 400000}

    assert client.get_persistence_mode() == {0: False, 1: False}
    client.set_persistence_mode([0], True)
    assert client.get_persistence_mode([0]) == {0: True}

    client.set_gpu_locked_clocks([0, 1], 900, 1500)
    client.set_mem_locked_clocks([0], 1593, 1593)
    client.reset_gpu_locked_clocks([1])
    client.reset_mem_locked_clocks([1])
    client.reset_locked_clocks([1])

    energy = client.get_gpu_energy([0, 1])
    assert set(energy) == {0, 1} and all(isinstance(v, int) and v >= 0 for v in energy.values()), energy
    stamp, power = client.get_gpu_power()
    assert power == {0: 300000, 1: 250000} and stamp > 0, power  # the fake draws at most its limit
    cpu = client.get_cpu_energy()
    assert cpu == {0: (123456789, 5555)}, cpu  # the raw counters, as upstream reports them
    assert client.get_cpu_energy([0], cpu=True, dram=False)[0][1] is None
    _, cpu_power = client.get_cpu_power([0])
    assert set(cpu_power) == {0} and cpu_power[0][0] >= 0, cpu_power

    # The daemon's refusals, as Zeus reports them.
    expect_refusal(lambda: client.set_power_limit([0], 50000), "set_power_limit", "errors", "outside")
    expect_refusal(lambda: client.get_power_limit([5]), "GPU 5 not found")
    expect_refusal(lambda: client.set_gpu_locked_clocks([0], 1500, 900), "errors")

    print("READY", flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
