"""Zeus 0.16's PowerStreamingClient (re-created in zeus016_power_streaming.py) against our zeusd
over the fake libnvidia-ml.so.1 (two GPUs at 350 W and 250 W) and a fake powercap zone whose
counters stand still: the first readings, then GPU power changed in the fake's state file and
a RAPL counter bumped, each seen by the client with the right values; explicit ids stream only
those devices; scopes decide what streams over TCP. Prints STREAM-<MODE>-OK.

Usage: zeus016_stream_scenario.py uds SOCKET STATE_JSON RAPL_ZONE
       zeus016_stream_scenario.py tcp STATE_JSON RAPL_ZONE
         (ZEUSD_HOST_PORT and ZEUSD_TOKEN, all scopes, as Zeus's ZeusdConfig.from_env reads them;
          ZEUSD_READ_TOKEN: a gpu-read token)
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import httpx

from zeus016_power_streaming import (PowerStreamingClient, ZeusdCapabilityError, ZeusdConfig)

WAIT_S = 5.0


class RecordingClient(PowerStreamingClient):
    """Upstream's client, plus a log of every reading it stores: (local time, kind, id, value)."""

    def __init__(self, *args, **kwargs):
        self.log: list[tuple[float, str, int, object]] = []
        super().__init__(*args, **kwargs)

    def _store_reading(self, endpoint, timestamp_s, kind, device_id, value):
        self.log.append((time.time(), kind, device_id, value))
        super()._store_reading(endpoint, timestamp_s, kind, device_id, value)


def write_replacing(path: str, text: str) -> None:
    """A new file in place of the old (the fake NVML reloads a new inode; zeusd never reads half)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.rename(tmp, path)


def set_gpu_power(state: str, gpu: int, mw: int) -> float:
    with open(state) as f:
        data = json.load(f)
    data["devices"][gpu]["power_draw_mw"] = mw
    before = time.time()
    write_replacing(state, json.dumps(data))
    return before


def wait_for(client: PowerStreamingClient, endpoint: str, check, what: str):
    deadline = time.time() + WAIT_S
    while time.time() < deadline:
        readings = client.get_power().get(endpoint)
        if readings is not None and check(readings):
            return readings
        time.sleep(0.01)
    raise AssertionError(f"{what}: not seen within {WAIT_S} s; readings: {client.get_power()}")


def check_stream_of_everything(config: ZeusdConfig, state: str, rapl_zone: str) -> None:
    endpoint = config.endpoint
    client = RecordingClient([config], reconnect_delay_s=0.2)
    try:
        assert [t.name.split("-")[0] for t in client.threads] == ["gpu", "cpu"], client.threads
        # Same machine: the offset from 5 x GET /time is well under a second.
        assert abs(client.clock_offsets[endpoint]) < 0.5, client.clock_offsets
        # The first readings: the fake's powers; static RAPL counters are 0 W, DRAM included.
        first = wait_for(client, endpoint, lambda r: len(r.gpu_power_w) == 2 and 0 in r.cpu_power_w,
                         "the first GPU and CPU readings")
        assert first.gpu_power_w == {0: 350.0, 1: 250.0}, first
        assert first.cpu_power_w[0].cpu_w == 0.0 and first.cpu_power_w[0].dram_w == 0.0, first
        assert abs(first.timestamp_s - time.time()) < 2.0, (first.timestamp_s, time.time())

        # GPU 1 to 123.456 W: the client sees exactly that, soon; GPU 0 stays.
        before = set_gpu_power(state, 1, 123456)
        seen = wait_for(client, endpoint, lambda r: r.gpu_power_w.get(1) == 123.456, "GPU 1 at 123.456 W")
        latency = time.time() - before
        assert seen.gpu_power_w[0] == 350.0, seen
        assert seen.timestamp_s >= before - 0.5, (seen.timestamp_s, before)
        later = [v for t, kind, i, v in client.log if kind == "gpu" and i == 1 and t >= before]
        assert set(later) == {123.456}, later

        # The blocking iterator yields the next change (GPU 0 to 401 W, made once it waits).
        change = threading.Timer(0.2, set_gpu_power, (state, 0, 401000))
        give_up = threading.Timer(WAIT_S, client.stop)  # ends the iteration if it never comes
        change.start()
        give_up.start()
        found = None
        for readings in client:
            if readings[endpoint].gpu_power_w.get(0) == 401.0:
                found = readings[endpoint]
                break
        give_up.cancel()
        change.join()
        assert found is not None, f"the iterator never yielded GPU 0 at 401 W: {client.get_power()}"
        assert found.gpu_power_w[1] == 123.456, found

        # The package counter jumps by 2,000 J: a CPU reading of at least 2 kW (the jump over at
        # most a second of polling), DRAM still 0 W, then back to 0 W.
        with open(os.path.join(rapl_zone, "energy_uj")) as f:
            counter = int(f.read())
        bumped_at = time.time()
        write_replacing(os.path.join(rapl_zone, "energy_uj"), f"{counter + 2_000_000_000}\n")
        wait_for(client, endpoint, lambda r: any(
            kind == "cpu" and t >= bumped_at and v.cpu_w >= 2000.0 for t, kind, _, v in client.log),
            "the CPU power of the counter's jump")
        wait_for(client, endpoint, lambda r: r.cpu_power_w[0].cpu_w == 0.0, "the CPU back at 0 W")
        cpu_after = [v for t, kind, _, v in client.log if kind == "cpu" and t >= bumped_at]
        assert all(v.dram_w == 0.0 for v in cpu_after), cpu_after
        print(f"{endpoint}: GPU change seen after {latency * 1000:.0f} ms; CPU jump "
              f"{max(v.cpu_w for v in cpu_after):.0f} W; clock offset "
              f"{client.clock_offsets[endpoint] * 1000:.2f} ms")
    finally:
        client.stop()
    assert not any(t.is_alive() for t in client.threads), "a stream thread outlived stop()"
    assert set(client.thread_results.values()) == {"stopped"}, client.thread_results


def check_explicit_ids(config: ZeusdConfig, state: str) -> None:
    """gpu_ids=1 and no CPUs: the daemon sends GPU 1 only, and no CPU stream is opened."""
    picked = ZeusdConfig(host_port=config.host_port, socket_path=config.socket_path, token=config.token,
                         gpu_indices=[1], cpu_indices=[])
    client = RecordingClient([picked], reconnect_delay_s=0.2)
    try:
        assert [t.name.split("-")[0] for t in client.threads] == ["gpu"], client.threads
        wait_for(client, picked.endpoint, lambda r: 1 in r.gpu_power_w, "GPU 1 alone")
        set_gpu_power(state, 0, 222000)
        set_gpu_power(state, 1, 111000)
        got = wait_for(client, picked.endpoint, lambda r: r.gpu_power_w.get(1) == 111.0, "GPU 1 at 111 W")
        assert list(got.gpu_power_w) == [1] and not got.cpu_power_w, got
        assert {i for _, kind, i, _ in client.log} == {1}, client.log
    finally:
        client.stop()
    try:
        RecordingClient([ZeusdConfig(host_port=config.host_port, socket_path=config.socket_path,
                                     token=config.token, gpu_indices=[7])])
    except ValueError as error:
        assert "GPU indices [7]" in str(error), error
    else:
        raise AssertionError("GPU 7 was accepted")
    set_gpu_power(state, 0, 350000)
    set_gpu_power(state, 1, 250000)


def check_stream_headers(config: ZeusdConfig) -> None:
    """What upstream's daemon answers: an SSE stream, not cached."""
    with config.make_client() as http, http.stream("GET", config.url("/gpu/stream_power?gpu_ids=0"),
                                                   timeout=5) as response:
        assert response.status_code == 200, response.status_code
        assert response.headers["content-type"].startswith("text/event-stream"), response.headers
        assert response.headers["cache-control"] == "no-cache", response.headers
        text = ""
        for chunk in response.iter_text():
            text += chunk
            if "\n\n" in text:
                break
        event = json.loads(text.split("\n\n", 1)[0].removeprefix("data: "))
        assert set(event) == {"timestamp_ms", "gpu_id", "power_mw"} and event["gpu_id"] == 0, text


def main() -> None:
    mode = sys.argv[1]
    if mode == "uds":
        sock, state, rapl_zone = sys.argv[2:5]
        os.environ.pop("ZEUSD_HOST_PORT", None)
        os.environ["ZEUSD_SOCK_PATH"] = sock
        config = ZeusdConfig.from_env()
        assert config is not None and config.socket_path == sock and config.token is None
        check_stream_headers(config)
        check_stream_of_everything(config, state, rapl_zone)
        check_explicit_ids(config, state)
        print("STREAM-UDS-OK")
        return

    state, rapl_zone = sys.argv[2:4]
    config = ZeusdConfig.from_env()  # ZEUSD_HOST_PORT + ZEUSD_TOKEN
    assert config is not None and config.host_port and config.token
    host, port = config.host_port.rsplit(":", 1)

    # Without a token the stream is 401 with the challenge, as every guarded route.
    with httpx.Client() as http, http.stream("GET", config.url("/gpu/stream_power"), timeout=5) as response:
        assert response.status_code == 401, response.status_code
        assert response.headers["www-authenticate"] == 'Bearer realm="zeusd"', response.headers
    check_stream_headers(config)
    check_stream_of_everything(config, state, rapl_zone)
    check_explicit_ids(config, state)

    # A gpu-read token: the GPUs stream, the CPUs are skipped silently; asked for, refused.
    reader = RecordingClient([ZeusdConfig.tcp(host, int(port), token=os.environ["ZEUSD_READ_TOKEN"])])
    try:
        assert [t.name.split("-")[0] for t in reader.threads] == ["gpu"], reader.threads
        assert reader.daemon_clients[config.host_port].granted_scopes == {"gpu-read"}
        got = wait_for(reader, config.host_port, lambda r: len(r.gpu_power_w) == 2, "the reader's GPUs")
        assert got.gpu_power_w == {0: 350.0, 1: 250.0} and not got.cpu_power_w, got
    finally:
        reader.stop()
    try:
        RecordingClient([ZeusdConfig.tcp(host, int(port), token=os.environ["ZEUSD_READ_TOKEN"], cpu_indices=[0])])
    except ZeusdCapabilityError as error:
        assert "lacks required scope 'cpu-read'" in str(error), error
    else:
        raise AssertionError("a gpu-read token was let stream CPUs")

    # A token zeusd rejects: whoami's 401 is kept as the auth error, nothing streams; asked for, refused.
    bad = RecordingClient([ZeusdConfig.tcp(host, int(port), token="not-a-token")])
    assert not bad.threads, bad.threads
    assert "Token rejected" in bad.daemon_clients[config.host_port].auth_error, bad.daemon_clients
    bad.stop()
    try:
        RecordingClient([ZeusdConfig.tcp(host, int(port), token="not-a-token", gpu_indices=[0])])
    except ZeusdCapabilityError as error:
        assert "lacks required scope 'gpu-read'" in str(error), error
    else:
        raise AssertionError("a rejected token was let stream GPUs")
    print("STREAM-TCP-OK")


if __name__ == "__main__":
    main()
