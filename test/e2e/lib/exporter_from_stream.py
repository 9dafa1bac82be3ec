"""`zeus exporter --from` over two zeusd daemons (two fake libnvidia-ml.so.1 states, one node over
loopback TCP, one over its Unix socket, both checking tokens: the exporter sends ZEUSD_TOKEN's).
Scraped over real HTTP: the per-node GPU gauges match the fakes and follow a power change within
a few poll periods, the cluster gauge is the nodes' sum, the energy counters grow as power x time
within 3 %, and a killed daemon reads as disconnected (its energy held, its reconnects counted)
while the exporter keeps serving the other node. The exporter itself has no devices of its own.

Usage: exporter_from_stream.py ZEUS_BIN ZEUS_FAKES WORKDIR
"""

import base64
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

from zeusd_port import zeusd_tcp_port

POLL_HZ = 20
POLL_PERIOD_S = 1 / POLL_HZ
START_MW = [[200000, 225000], [250000, 275000]]  # node, GPU


def write_state(path, powers_mw):
    devices = [{"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "power_draw_mw": mw,
                "uuid": f"GPU-{os.path.basename(os.path.dirname(path))}-{i}",
                "min_limit_mw": 100000, "max_limit_mw": 700000}
               for i, mw in enumerate(powers_mw)]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"devices": devices}, f)
    os.rename(tmp, path)  # a new inode: the fake reloads it at its next call


def fake_rapl(root):
    """Package 0 and its DRAM, counters that do not move: 0 W each."""
    zone = os.path.join(root, "intel-rapl:0")
    os.makedirs(os.path.join(zone, "intel-rapl:0:0"))
    for path, text in [("name", "package-0"), ("energy_uj", "1000000"),
                       ("max_energy_range_uj", "262143328850"), ("intel-rapl:0:0/name", "dram"),
                       ("intel-rapl:0:0/energy_uj", "500000"),
                       ("intel-rapl:0:0/max_energy_range_uj", "65532610987")]:
        with open(os.path.join(zone, path), "w") as f:
            f.write(text + "\n")


def parse(text):
    """{(name, ((label, value), ...)): value} and {name: type} of an exposition."""
    types, samples = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE"):
            _, _, name, kind = line.split()
            types[name] = kind
        elif line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            name, _, labels = series.partition("{")
            samples[(name, tuple(sorted(re.findall(r'(\w+)="([^"]*)"', labels))))] = float(value)
    return types, samples


def start_exporter(zeus_bin, sources, env, out_path, err_path):
    """An exporter streaming from `sources`, and the port it printed (it must not exit first)."""
    proc = subprocess.Popen(
        [f"{zeus_bin}/zeus", "exporter", "--port", "0", "--interval", "0.5", "--from",
         ",".join(sources)],
        env=env, stdout=open(out_path, "w"), stderr=open(err_path, "w"))
    for _ in range(200):
        m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", open(out_path).read())
        if m:
            return proc, m.group(1)
        assert proc.poll() is None, (
            f"the exporter exited: {open(out_path).read()} {open(err_path).read()}")
        time.sleep(0.05)
    raise AssertionError(f"no port printed: {open(out_path).read()} {open(err_path).read()}")


class Exporter:
    def __init__(self, port):
        self.url = f"http://127.0.0.1:{port}/metrics"
        self.scrapes = []  # (time, samples), to check that counters never go back

    def scrape(self):
        """(midpoint time of the request, samples)."""
        before = time.time()
        with urllib.request.urlopen(self.url, timeout=5) as answer:
            assert answer.status == 200, answer.status
            text = answer.read().decode()
        at = (before + time.time()) / 2
        types, samples = parse(text)
        self.types = types
        self.scrapes.append((at, samples))
        return at, samples


def main():
    zeus_bin, fakes, work = sys.argv[1:4]
    env = dict(os.environ)
    for name in ["CUDA_VISIBLE_DEVICES", "ZEUSD_SOCK_PATH", "ZEUSD_HOST_PORT", "ZEUSD_TOKEN"]:
        env.pop(name, None)
    env.update(ZEUS_NVML_PATH=f"{fakes}/libnvidia-ml.so.1", ZEUS_ROCM_SMI_PATH="/nonexistent.so",
               ZEUS_AMDSMI_PATH="/nonexistent.so", ZEUS_LOG_LEVEL="warning")
    key = os.path.join(work, "signing.key")
    with open(key, "w") as f:
        f.write(base64.b64encode(os.urandom(32)).decode() + "\n")
    os.chmod(key, 0o600)
    token = subprocess.run(
        [f"{zeus_bin}/zeusd", "token", "issue", "--signing-key-path", key, "--user", "metrics",
         "--scope", "gpu-read,cpu-read", "--expires", "1h"],
        check=True, capture_output=True, text=True).stdout.strip()

    power = [list(p) for p in START_MW]
    daemons, addresses, states = [], [], []
    exporter_proc = None
    try:
        for n in range(2):
            node_dir = os.path.join(work, f"node{n}")
            os.makedirs(node_dir, mode=0o700)
            powercap = os.path.join(node_dir, "powercap")
            os.makedirs(powercap)
            if n == 1:
                fake_rapl(powercap)
            state = os.path.join(node_dir, "state.json")
            write_state(state, power[n])
            states.append(state)
            sock = os.path.join(node_dir, "zeusd.sock")
            log = open(os.path.join(node_dir, "zeusd.log"), "w+")
            proc = subprocess.Popen(
                [f"{zeus_bin}/zeusd", "--socket", sock, "--tcp", "127.0.0.1:0",
                 "--lease-journal", "none", "--signing-key-path", key, "--allow", "gpu-read=*",
                 "--allow", "cpu-read=*", "--gpu-power-poll-hz", str(POLL_HZ)],
                env=dict(env, ZEUS_FAKE_NVML_STATE=state, ZEUS_POWERCAP_ROOT=powercap),
                stdout=subprocess.DEVNULL, stderr=log)
            daemons.append((proc, log))
            port = zeusd_tcp_port(log, proc, f"zeusd {n}")
            # Node 0 over loopback TCP, node 1 over its Unix socket: both kinds of address.
            addresses.append(f"127.0.0.1:{port}" if n == 0 else f"unix:{sock}")

        # The exporter's host has no GPU and no RAPL: it serves the streamed nodes only.
        no_devices = dict(env, ZEUS_NVML_PATH="/nonexistent.so",
                          ZEUS_POWERCAP_ROOT=os.path.join(work, "no-powercap"))
        bad = subprocess.run([f"{zeus_bin}/zeus", "exporter", "--port", "0", "--from", "nowhere"],
                             env=no_devices, capture_output=True, text=True, timeout=30)
        assert bad.returncode != 0 and "is not a zeusd address" in bad.stderr, bad
        # A node that is down at start (rebooting) does not stop the exporter:
        # it starts, shows the node disconnected and keeps retrying; only when no node at all can
        # be reached does it refuse to start.
        down = "127.0.0.1:9"
        nobody = subprocess.run([f"{zeus_bin}/zeus", "exporter", "--port", "0", "--from", down],
                                env=no_devices, capture_output=True, text=True, timeout=60)
        assert nobody.returncode != 0 and "cannot reach zeusd 127.0.0.1:9" in nobody.stderr, nobody
        partial, partial_port = start_exporter(
            zeus_bin, [addresses[0], down], dict(no_devices, ZEUSD_TOKEN=token),
            os.path.join(work, "partial.out"), os.path.join(work, "partial.err"))
        try:
            connected = None
            for _ in range(100):
                _, samples = Exporter(partial_port).scrape()
                connected = samples.get(("zeus_node_connected", (("node", down),)))
                if connected == 0 and samples.get(("zeus_node_connected", (("node", addresses[0]),))) == 1:
                    break
                time.sleep(0.1)
            assert connected == 0, f"the down node reads {connected}"
        finally:
            partial.terminate()
            partial.wait(timeout=30)
        out_path = os.path.join(work, "exporter.out")
        err_path = os.path.join(work, "exporter.err")
        exporter_proc, port = start_exporter(zeus_bin, addresses, dict(no_devices, ZEUSD_TOKEN=token),
                                             out_path, err_path)
        assert "2 zeusd node(s) streamed" in open(out_path).read(), open(out_path).read()
        exporter = Exporter(port)
        node = [(("node", a),) for a in addresses]

        def gpu(n, g):
            return ("zeus_node_gpu_power_watts", (("gpu", str(g)), ("node", addresses[n])))

        def expect_power(samples):
            """Per-GPU gauges match the fakes; node and cluster gauges are the sums."""
            for n in range(2):
                for g in range(2):
                    assert samples.get(gpu(n, g)) == power[n][g] / 1000, (n, g, samples)
                cpu = sum(v for (name, labels), v in samples.items()
                          if name == "zeus_node_cpu_power_watts" and ("node", addresses[n]) in labels)
                assert abs(samples[("zeus_node_power_watts", node[n])]
                           - (sum(power[n]) / 1000 + cpu)) < 1e-6, (n, samples)
            cluster = samples[("zeus_cluster_power_watts", ())]
            nodes = sum(samples[("zeus_node_power_watts", node[n])] for n in range(2))
            assert abs(cluster - nodes) < 1e-6, (cluster, nodes)

        # 1. Both nodes connected, every GPU and node 1's CPU package and DRAM served.
        deadline = time.time() + 10
        while True:
            at, samples = exporter.scrape()
            ready = (all(samples.get(("zeus_node_connected", node[n])) == 1 for n in range(2))
                     and all(gpu(n, g) in samples for n in range(2) for g in range(2))
                     and ("zeus_node_cpu_power_watts",
                          (("node", addresses[1]), ("package", "0"), ("zone", "dram"))) in samples)
            if ready:
                break
            assert time.time() < deadline, f"the nodes never came up: {samples}"
            time.sleep(0.1)
        types = {k: v for k, v in exporter.types.items() if k.startswith("zeus_")}
        assert types == {
            "zeus_node_gpu_power_watts": "gauge", "zeus_node_cpu_power_watts": "gauge",
            "zeus_node_power_watts": "gauge", "zeus_node_energy_joules_total": "counter",
            "zeus_node_connected": "gauge", "zeus_node_reconnects_total": "counter",
            "zeus_node_clock_offset_seconds": "gauge", "zeus_cluster_power_watts": "gauge",
            "zeus_cluster_energy_joules_total": "counter"}, types
        time.sleep(0.3)  # past the first readings
        at0, s0 = exporter.scrape()
        expect_power(s0)
        for n in range(2):
            assert s0[("zeus_node_reconnects_total", node[n])] == 0, s0
            assert abs(s0[("zeus_node_clock_offset_seconds", node[n])]) < 0.05, s0

        # 2. Energy over 2 s of constant power: power x time within 3 %.
        time.sleep(2)
        at1, s1 = exporter.scrape()
        expect_power(s1)

        def check_energy(a, b, t_a, t_b, expected_w):
            for n in range(2):
                gained = (b[("zeus_node_energy_joules_total", node[n])]
                          - a[("zeus_node_energy_joules_total", node[n])])
                expected = expected_w[n] * (t_b - t_a)
                print(f"node {addresses[n]}: +{gained:.1f} J over {t_b - t_a:.2f} s, expected "
                      f"{expected:.1f} J ({(gained / expected - 1) * 100:+.2f} %)")
                assert abs(gained / expected - 1) <= 0.03, (n, gained, expected)
            cluster = (b[("zeus_cluster_energy_joules_total", ())]
                       - a[("zeus_cluster_energy_joules_total", ())])
            nodes = sum(b[("zeus_node_energy_joules_total", node[n])]
                        - a[("zeus_node_energy_joules_total", node[n])] for n in range(2))
            assert abs(cluster - nodes) < 1e-3 * max(1.0, nodes), (cluster, nodes)

        check_energy(s0, s1, at0, at1, [sum(p) / 1000 for p in power])

        # 3. A power change on node 0's GPU 1 reaches its gauge within a few poll periods.
        old_w = [sum(p) / 1000 for p in power]
        power[0][1] = 333000
        before = time.time()
        write_state(states[0], power[0])
        while True:
            at, samples = exporter.scrape()
            if samples.get(gpu(0, 1)) == 333.0:
                break
            assert at - before < 5, f"the change never reached the gauge: {samples.get(gpu(0, 1))}"
            time.sleep(0.005)
        latency = at - before
        print(f"the change reached zeus_node_gpu_power_watts after {latency * 1000:.0f} ms "
              f"(poll period {POLL_PERIOD_S * 1000:.0f} ms)")
        assert latency <= 4 * POLL_PERIOD_S, f"the gauge took {latency * 1000:.0f} ms"
        expect_power(samples)
        time.sleep(1.5)
        at2, s2 = exporter.scrape()
        expect_power(s2)
        # Energy from before the change to after it: old power until the write, new after.
        new_w = [sum(p) / 1000 for p in power]
        for n in range(2):
            gained = (s2[("zeus_node_energy_joules_total", node[n])]
                      - s1[("zeus_node_energy_joules_total", node[n])])
            expected = old_w[n] * (before - at1) + new_w[n] * (at2 - before)
            print(f"node {addresses[n]} across the change: +{gained:.1f} J, expected "
                  f"{expected:.1f} J ({(gained / expected - 1) * 100:+.2f} %)")
            assert abs(gained / expected - 1) <= 0.03, (n, gained, expected)

        # 4. Node 1's daemon killed: disconnected, no GPU gauges, energy held, reconnects
        # counted; node 0 still served, the cluster now node 0 alone.
        daemons[1][0].send_signal(signal.SIGKILL)
        daemons[1][0].wait(timeout=10)
        deadline = time.time() + 5
        while True:
            at, samples = exporter.scrape()
            # Both of its streams (GPU and CPU) seen to drop.
            if (samples.get(("zeus_node_connected", node[1])) == 0
                    and samples.get(("zeus_node_power_watts", node[1])) == 0
                    and gpu(1, 0) not in samples and gpu(1, 1) not in samples):
                break
            assert time.time() < deadline, f"the killed node still reads as connected: {samples}"
            time.sleep(0.05)
        held = samples[("zeus_node_energy_joules_total", node[1])]
        time.sleep(2.5)  # reconnect attempts every second
        at3, s3 = exporter.scrape()
        assert exporter_proc.poll() is None, "the exporter stopped with a node"
        assert s3[("zeus_node_connected", node[1])] == 0, s3
        assert s3[("zeus_node_connected", node[0])] == 1, s3
        assert s3[("zeus_node_energy_joules_total", node[1])] == held, (held, s3)
        assert s3[("zeus_node_reconnects_total", node[1])] >= 1, s3
        assert s3[("zeus_node_power_watts", node[1])] == 0, s3
        assert s3[gpu(0, 1)] == 333.0, s3
        assert abs(s3[("zeus_cluster_power_watts", ())]
                   - s3[("zeus_node_power_watts", node[0])]) < 1e-6, s3
        print(f"killed node: disconnected, {held:.1f} J held, "
              f"{s3[('zeus_node_reconnects_total', node[1])]:.0f} reconnect(s); node 0 served")

        # 5. Counters never went back, over every scrape.
        for (_, a), (_, b) in zip(exporter.scrapes, exporter.scrapes[1:]):
            for key, value in a.items():
                if exporter.types.get(key[0]) == "counter" and key in b:
                    assert b[key] >= value, (key, value, b[key])

        # 6. SIGTERM: a clean stop.
        exporter_proc.send_signal(signal.SIGTERM)
        rc = exporter_proc.wait(timeout=15)
        assert rc == 0, f"exporter exited {rc}: {open(err_path).read()}"
        assert "zeus exporter: stopped" in open(out_path).read(), open(out_path).read()
        print(f"{len(exporter.scrapes)} scrapes")
    finally:
        if exporter_proc and exporter_proc.poll() is None:
            exporter_proc.kill()
        for proc, log in daemons:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=10)
            log.close()


if __name__ == "__main__":
    main()
