"""Perseus from Python with zeusd: 2 stages x 2 replicas (4 processes, torch.distributed gloo on
CPU) under `zeus pfo serve --scheduler point-solution-3d`, each rank's fake GPU reached through
zeusd (ZEUSD_SOCK_PATH) over one fake NVML state. Once the schedule has locked every GPU's clocks
(and the controller has put the power limit back to its default, from a lower one), the ranks
are stopped, one is SIGKILLed, then the other three: nothing runs in them, so only zeusd's leases
can undo their changes. Each killed rank's GPU (and only it) is unlocked, its power limit back to
what it was before the job, within seconds, and zeusd's log says it restored that process's GPU.
The Python twin of step 3 of test/e2e/pfo_pipeline_fake_nvml.sh."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator, List

import pytest

pytest.importorskip("torch")

from pfo_helpers import (CLOCKS_MHZ, SCHEDULE, STAGES, WORLD, clock_log,  # noqa: E402
                         rank_errors, start_pfo_server, start_rank_workers, stop_pfo_server,
                         write_gpus, write_json)

BEFORE_MW, DEFAULT_MW = 500_000, 700_000  # the GPUs' limit before the job; their default
RESTORE_BOUND_S = 5.0  # from a killed rank's death to its GPU restored (zeusd: at once)


class Job:
    """zeusd on a socket in a private 0755 folder under /tmp (short enough for a socket path;
    its lease journal beside it, as in production), `zeus pfo serve`, and the ranks."""

    def __init__(self, tmp_path: Path, state: Path) -> None:
        self.tmp_path, self.state = tmp_path, state
        self.dir = Path(tempfile.mkdtemp(prefix="zpfo", dir="/tmp"))
        self.dir.chmod(0o755)
        self.sock = self.dir / "zeusd.sock"
        self.log = tmp_path / "zeusd.log"
        self.zeusd: subprocess.Popen | None = None
        self.server: subprocess.Popen | None = None
        self.ranks: List[subprocess.Popen] = []

    def start_zeusd(self) -> None:
        self.zeusd = subprocess.Popen(
            [f"{os.environ['ZEUS_BIN']}/zeusd", "--socket", str(self.sock), "--socket-mode", "0600",
             "--allow", "gpu-read=*", "--log-level", "info"],
            stdout=subprocess.DEVNULL, stderr=open(self.log, "w"))
        deadline = time.monotonic() + 20
        while "zeusd: serving" not in self.log.read_text():
            assert self.zeusd.poll() is None, "zeusd exited: " + self.log.read_text()
            assert time.monotonic() < deadline, "zeusd did not start: " + self.log.read_text()
            time.sleep(0.02)

    def zeusd_log(self) -> str:
        return self.log.read_text()

    def errors(self) -> str:
        ranks = rank_errors(self.tmp_path, "kill", WORLD)
        return ranks + "\n--- zeusd\n" + self.zeusd_log()[-3000:]

    def stop(self) -> None:
        for rank in self.ranks:
            if rank.poll() is None:
                rank.kill()
                rank.wait(timeout=10)
        if self.server is not None:
            stop_pfo_server(self.server)
        if self.zeusd is not None and self.zeusd.poll() is None:
            self.zeusd.terminate()
            self.zeusd.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def job(tmp_path, fake_nvml, monkeypatch) -> Iterator[Job]:
    write_gpus(fake_nvml.path, WORLD, limit_mw=BEFORE_MW)
    job = Job(tmp_path, fake_nvml.path)
    try:
        job.start_zeusd()
        schedule = write_json(tmp_path / "stages.json", [[list(e) for e in s] for s in SCHEDULE])
        job.server, url = start_pfo_server(tmp_path / "server.log", "--scheduler",
                                           "point-solution-3d", "--schedule", str(schedule))
        monkeypatch.setenv("ZEUSD_SOCK_PATH", str(job.sock))  # the ranks' environment
        # One schedule for the whole run (no round barriers), so every rank stays in its loop.
        job.ranks = start_rank_workers(tmp_path, url, "kill", WORLD, STAGES, iterations=100000,
                                       steps_per_round=0)
        yield job
    finally:
        job.stop()


def gpus(state: Path) -> list:
    return json.loads(state.read_text())["devices"]


def wait_locked(job: Job) -> None:
    """Until every GPU runs its stage's schedule through zeusd: SM clocks locked, a schedule
    clock in its log, memory clocks locked, the power limit reset to the default."""
    wanted = [{mhz for _, mhz in SCHEDULE[r % STAGES]} for r in range(WORLD)]
    deadline = time.monotonic() + 60
    while True:
        assert all(r.poll() is None for r in job.ranks), job.errors()
        devices = gpus(job.state)
        if all(d.get("locked_sm_clocks_mhz") is not None
               and d.get("locked_memory_clocks_mhz") is not None
               and d["limit_mw"] == DEFAULT_MW
               and len(set(clock_log(job.state, r)) & wanted[r]) >= 2
               for r, d in enumerate(devices)):
            return
        assert time.monotonic() < deadline, (devices, job.errors())
        time.sleep(0.05)


def restored(job: Job, gpu: int) -> bool:
    device = gpus(job.state)[gpu]
    return (device.get("locked_sm_clocks_mhz") is None
            and device.get("locked_memory_clocks_mhz") is None
            and device["limit_mw"] == BEFORE_MW)


def check_restored_by_zeusd(job: Job, killed: List[int]) -> float:
    """Every GPU in `killed` (ranks SIGKILLed and reaped) is restored within RESTORE_BOUND_S, by
    zeusd for that process; the seconds it took."""
    start = time.monotonic()
    while not all(restored(job, r) for r in killed):
        assert time.monotonic() - start < RESTORE_BOUND_S, (
            [gpus(job.state)[r] for r in killed], job.zeusd_log()[-3000:])
        time.sleep(0.01)
    took = time.monotonic() - start
    # zeusd logs each action just after taking it: the last line may trail the GPU's state.
    expected = [rf"pid {job.ranks[r].pid} \(uid \d+\) exited: {action} on GPU {r}\b"
                for r in killed for action in ("unlock SM clocks", "unlock memory clocks",
                                               f"restore power limit {BEFORE_MW} mW")]
    while True:
        log = job.zeusd_log()
        missing = [line for line in expected if not re.search(line, log)]
        if not missing or time.monotonic() - start >= RESTORE_BOUND_S:
            break
        time.sleep(0.01)
    assert not missing, (missing, log[-3000:])
    for r in killed:
        # The locked clocks went through zeusd too, and the last SM change was zeusd's unlock.
        assert clock_log(job.state, r)[-1] == 0
    return took


def test_sigkill_one_rank_then_the_rest_leaves_no_gpu_changed(job):
    wait_locked(job)
    # Every rank stopped first, so that none runs a line (the exit path of a rank whose peer died
    # included) between the checks below and its SIGKILL: what changes on the GPUs is zeusd's.
    for rank in job.ranks:
        rank.send_signal(signal.SIGSTOP)
    for r, device in enumerate(gpus(job.state)):
        assert device["locked_sm_clocks_mhz"] is not None, (r, device)  # the test can fail
        assert device["locked_sm_clocks_mhz"][1] in {m for _, m in SCHEDULE[r % STAGES]}, device
        assert device["limit_mw"] == DEFAULT_MW, (r, device)
        assert clock_log(job.state, r)[0] == CLOCKS_MHZ[0], r  # the controller's start

    # One rank (stage 1 of replica 0): its GPU alone is restored; the others' leases hold.
    job.ranks[1].kill()
    assert job.ranks[1].wait(timeout=10) == -signal.SIGKILL
    one = check_restored_by_zeusd(job, [1])
    for r in (0, 2, 3):
        device = gpus(job.state)[r]
        assert device["locked_sm_clocks_mhz"] is not None and device["limit_mw"] == DEFAULT_MW, (
            r, device)

    # Then the rest, at once.
    for r in (0, 2, 3):
        job.ranks[r].kill()
    for r in (0, 2, 3):
        assert job.ranks[r].wait(timeout=10) == -signal.SIGKILL
    rest = check_restored_by_zeusd(job, [0, 2, 3])
    print(f"zeusd restored the GPU of one SIGKILLed rank in {one:.3f} s, of the other three in "
          f"{rest:.3f} s (after they were reaped)")
