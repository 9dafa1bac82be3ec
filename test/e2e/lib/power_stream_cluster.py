"""Three zeusd daemons, each over its own fake libnvidia-ml.so.1 state (a "node" of two GPUs),
streamed by one `zeus power --from ... --json --events`. The GPUs' power is changed at known
times by rewriting the state files; every change must reach the client within two poll periods
of the daemons (20 Hz: 100 ms), and each node's and the cluster's energy must equal the fakes'
power x time within 1 %.

Usage: power_stream_cluster.py ZEUS_BIN ZEUS_FAKES WORKDIR [--long]   (10 s; --long: 30 s)
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time

from zeusd_port import zeusd_tcp_port

POLL_PERIOD_S = 1 / 20
NODES = 3
GPUS = 2


def write_state(path, powers_mw):
    devices = [
        {"name": "NVIDIA H100 80GB HBM3", "architecture": 9, "power_draw_mw": mw,
         "uuid": f"GPU-{os.path.basename(os.path.dirname(path))}-{i}",
         "min_limit_mw": 100000, "max_limit_mw": 700000}
        for i, mw in enumerate(powers_mw)
    ]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"devices": devices}, f)
    os.rename(tmp, path)  # a new inode: the fake reloads it at its next call


def main():
    zeus_bin, fakes, work = sys.argv[1:4]
    duration = 30.0 if "--long" in sys.argv[4:] else 10.0
    env = dict(os.environ)
    env.update(ZEUS_NVML_PATH=f"{fakes}/libnvidia-ml.so.1", ZEUS_ROCM_SMI_PATH="/nonexistent.so",
               ZEUS_LOG_LEVEL="warning")
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.pop("ZEUSD_SOCK_PATH", None)
    power = [[200000 + 50000 * n + 25000 * g for g in range(GPUS)] for n in range(NODES)]
    daemons, addresses = [], []
    for n in range(NODES):
        node_dir = os.path.join(work, f"node{n}")
        os.makedirs(node_dir, mode=0o700)
        os.makedirs(os.path.join(node_dir, "powercap"))
        state = os.path.join(node_dir, "state.json")
        write_state(state, power[n])
        node_env = dict(env, ZEUS_FAKE_NVML_STATE=state,
                        ZEUS_POWERCAP_ROOT=os.path.join(node_dir, "powercap"))
        sock = os.path.join(node_dir, "zeusd.sock")
        log = open(os.path.join(node_dir, "zeusd.log"), "w+")
        daemons.append((subprocess.Popen(
            [f"{zeus_bin}/zeusd", "--socket", sock, "--tcp", "127.0.0.1:0",
             "--lease-journal", "none", "--allow", "gpu-read=*"],
            env=node_env, stdout=subprocess.DEVNULL, stderr=log), log, state))
        # Two nodes over loopback TCP, one over its Unix socket: both kinds of address.
        port = zeusd_tcp_port(log, daemons[-1][0], f"zeusd {n}")
        addresses.append(f"unix:{sock}" if n == NODES - 1 else f"127.0.0.1:{port}")

    client = None
    try:
        client = subprocess.Popen(
            [f"{zeus_bin}/zeus", "power", "--from", ",".join(addresses), "--json", "--events",
             "--interval", "1", "--duration", str(duration)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = []
        first_event = threading.Event()

        def read():
            for line in client.stdout:
                lines.append((json.loads(line), time.time()))
                if lines[-1][0].get("event"):
                    first_event.set()

        reader = threading.Thread(target=read)
        reader.start()
        assert first_event.wait(10), "no event reached the client: " + client.stderr.read()
        t0 = time.time()
        # Changes at known times: every 0.7 s one GPU of the next node takes a new power.
        # (time before the write, node, gpu, mW): the latency is measured from before the write
        # (an upper bound), since the daemon may see the new file before time.time() runs again.
        changes = []
        k = 0
        while time.time() < t0 + duration - 1.5:
            time.sleep(0.7)
            node, gpu = k % NODES, (k // NODES) % GPUS
            mw = 150000 + (37000 * (k + 1)) % 400000
            if mw == power[node][gpu]:
                mw += 1000
            power[node][gpu] = mw
            before = time.time()
            write_state(daemons[node][2], power[node])
            changes.append((before, node, gpu, mw))
            k += 1
        rc = client.wait(timeout=duration + 30)
        reader.join()
        assert rc == 0, f"zeus power failed ({rc}): {client.stderr.read()}"
    finally:
        if client and client.poll() is None:
            client.kill()
        for proc, log, _ in daemons:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)
            log.close()

    events = [(line, t) for line, t in lines if line.get("event")]
    summary = lines[-1][0]
    assert summary.get("summary"), summary

    # 1. Every change reached the client within two poll periods.
    latencies = []
    for when, node, gpu, mw in changes:
        arrived = [e["received_s"] for e, _ in events
                   if e["endpoint"] == addresses[node] and e.get("gpu_id") == gpu
                   and round(e["power_w"] * 1000) == mw and e["received_s"] >= when]
        seen = [(round(e["power_w"] * 1000), round(e["received_s"] - when, 3)) for e, _ in events
                if e["endpoint"] == addresses[node] and e.get("gpu_id") == gpu]
        assert arrived, (f"the change of node {node} GPU {gpu} to {mw} mW never arrived; its "
                         f"readings (mW, s after the change): {seen}")
        latencies.append(arrived[0] - when)
    worst = max(latencies)
    assert worst <= 2 * POLL_PERIOD_S, (
        f"a change took {worst * 1000:.0f} ms to arrive (limit {2 * POLL_PERIOD_S * 1000:.0f} ms); "
        f"all: {[round(x * 1000) for x in latencies]}")

    # 2. Energy: each GPU's schedule (its power from each change on), integrated from the first
    # reading the client got of it to the summary's time.
    end = summary["timestamp_s"]
    cluster_expected = 0.0
    for n in range(NODES):
        expected = 0.0
        node = next(x for x in summary["nodes"] if x["endpoint"] == addresses[n])
        for g in range(GPUS):
            start = min(e["timestamp_s"] for e, _ in events
                        if e["endpoint"] == addresses[n] and e.get("gpu_id") == g)
            initial = 200000 + 50000 * n + 25000 * g
            steps = [(start, initial)] + [(w, mw) for w, nn, gg, mw in changes if nn == n and gg == g]
            for i, (t, mw) in enumerate(steps):
                t_next = steps[i + 1][0] if i + 1 < len(steps) else end
                expected += mw / 1000 * (t_next - max(t, start))
        error = abs(node["energy_j"] - expected) / expected
        print(f"node {addresses[n]}: {node['energy_j']:.1f} J, expected {expected:.1f} J "
              f"({error * 100:.3f} %), {node['events']} readings, clock offset "
              f"{node['clock_offset_s'] * 1000:.2f} ms")
        assert error <= 0.01, f"node {addresses[n]}: energy off by {error * 100:.2f} %"
        assert node["connected"] and node["reconnects"] == 0, node
        cluster_expected += expected
    cluster_error = abs(summary["cluster_energy_j"] - cluster_expected) / cluster_expected
    assert cluster_error <= 0.01, f"cluster energy off by {cluster_error * 100:.2f} %"
    final_power = sum(sum(p) for p in power) / 1000
    assert abs(summary["cluster_power_w"] - final_power) < 1e-6, (summary, final_power)
    print(f"{len(changes)} changes over {duration:.0f} s, latency ms: median "
          f"{sorted(latencies)[len(latencies) // 2] * 1000:.1f}, worst {worst * 1000:.1f}; "
          f"cluster {summary['cluster_energy_j']:.1f} J vs {cluster_expected:.1f} J "
          f"({cluster_error * 100:.3f} %)")


if __name__ == "__main__":
    main()
