"""Zeus's daemon client over TCP with a token (ZEUSD_HOST_PORT + ZEUSD_TOKEN), against our zeusd
with a signing key: /discover says auth is required, /auth/whoami gives the scopes, reads and
writes go through, a missing scope is refused. Prints what it checked.
Usage: ZEUSD_HOST_PORT=127.0.0.1:PORT ZEUSD_TOKEN=... ZEUSD_READ_TOKEN=... zeus016_zeusd_tcp_scenario.py"""

from __future__ import annotations

import os

from zeus016_zeusd import Zeus016ZeusdClient, ZeusdError


def main() -> None:
    host_port = os.environ["ZEUSD_HOST_PORT"]
    client = Zeus016ZeusdClient(host_port, os.environ["ZEUSD_TOKEN"])
    assert client.auth_required
    assert client.scopes == {"gpu-control", "gpu-read", "cpu-read"}, client.scopes
    assert client.can_read_gpu and client.can_control_gpu and client.can_read_cpu
    assert client.get_power_limit() == {0: 700000, 1: 400000}
    client.set_power_limit([1], 150000)
    assert client.get_power_limit([1]) == {1: 150000}
    client.set_gpu_locked_clocks([0], 900, 1500)
    client.reset_locked_clocks([0])
    assert client.get_cpu_energy() == {0: (123456789, 5555)}

    reader = Zeus016ZeusdClient(host_port, os.environ["ZEUSD_READ_TOKEN"])
    assert reader.scopes == {"gpu-read"} and reader.can_read_gpu and not reader.can_control_gpu
    try:
        reader.set_power_limit([0], 300000)
    except ZeusdError as error:
        assert "lacks required scope 'gpu-control'" in str(error), error
    else:
        raise AssertionError("a gpu-read token changed a power limit")

    try:
        Zeus016ZeusdClient(host_port, "not-a-token")
    except ZeusdError as error:
        assert "Invalid token" in str(error), error
    else:
        raise AssertionError("whoami accepted a bad token")
    print("TCP-CLIENT-OK")


if __name__ == "__main__":
    main()
