"""Zeus 0.16's client protocol driving `zeus serve` through 16 recurrences with interruptions.

The client (upstream_bso_client.py) sends what Zeus 0.16's Python client sends, with httpx and
pydantic 1. The expected decisions follow the original server's rules:
- pruning walks down from the default batch size, then up; a direction ends at the first trial
  that does not converge (not reaching the target by max_epochs, or stopped early at beta x the
  job's minimum cost); the next round repeats over the converged batch sizes, starting from the
  cheapest;
- a trial that ends without a result (the client's exit hook sends PATCH /trials while it is
  still dispatched: a crash, a preemption) is no observation: the same batch size is offered
  again, and in the bandit phase no arm is updated;
- after the pruning rounds, Gaussian Thompson sampling over the converged batch sizes.
The same sequence runs on SQLite, on PostgreSQL and on MariaDB (the last named as upstream's
operators name it: ZEUS_BSO_DATABASE_URL=mysql+asyncmy://user:password@host:port/db).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import pytest

from upstream_bso_client import JobParams, TrainFail, UpstreamBatchSizeOptimizer

# Per-epoch (time s, energy J) and the epoch at which the target is reached (0 = never).
# zeus_cost with eta 0.5 and 300 W = 0.5 E + 150 T per epoch.
EPOCH = {32: (14.0, 1500.0), 64: (10.0, 1000.0), 128: (12.0, 1800.0), 256: (10.0, 2000.0),
         512: (8.0, 2600.0), 1024: (6.0, 3400.0)}
CONVERGES_AT = {32: 3, 64: 0, 128: 3, 256: 4, 512: 4, 1024: 0}
# The cost of a converged run: 256 -> 10,000; 128 -> 8,100 (the cheapest); 512 -> 10,000.
# 64 and 1024 never reach the target: beta x 8,100 ends them (after 8-9 and 6-7 epochs).

# (expected batch size, what the run does, expected outcome)
SCRIPT: List[Tuple[int, str, str]] = [
    (256, "train", "converged"),        # round 1, down from the default
    (128, "crash", "interrupted"),      # node failure after 2 epochs: no result
    (128, "train", "converged"),        # offered again, not pruned
    (64, "train", "not converged"),     # early-stopped: the downward direction ends here
    (512, "train", "converged"),        # up
    (1024, "crash", "interrupted"),
    (1024, "train", "not converged"),   # early-stopped: round 1 over, converged {128, 256, 512}
    (128, "train", "converged"),        # round 2 from the cheapest, 128
    (256, "crash", "interrupted"),
    (256, "train", "converged"),
    (512, "train", "converged"),        # pruning over: arms 128, 256, 512
    (128, "train", "converged"),        # Thompson sampling: 128 is far the cheapest
    (128, "crash", "interrupted"),      # no arm is updated
    (128, "train", "converged"),
    (128, "train", "converged"),
    (128, "train", "converged"),
]


@dataclass
class Measurement:
    time: float
    total_energy: float


class ScriptedMonitor:
    """Stands in for ZeusMonitor: each epoch costs epoch[batch size], with a small +-2 % wobble."""

    def __init__(self, batch_size: Callable[[], int], wobble: float,
                 epoch: Dict[int, Tuple[float, float]]) -> None:
        self.batch_size = batch_size
        self.wobble = wobble
        self.epoch = epoch
        self.open = False

    def begin_window(self, name: str) -> None:
        assert not self.open, name
        self.open = True

    def end_window(self, name: str) -> Measurement:
        assert self.open, name
        self.open = False
        time_s, energy_j = self.epoch[self.batch_size()]
        return Measurement(time_s * self.wobble, energy_j * self.wobble)


def run_recurrence(url: str, job: JobParams, index: int, behaviour: str,
                   epoch: Dict[int, Tuple[float, float]] = EPOCH,
                   converges_at: Dict[int, int] = CONVERGES_AT) -> Tuple[int, str]:
    """One training run as a user's script runs it; the exit hooks run as at process exit."""
    exit_hooks: List[Callable[[], None]] = []
    holder: Dict[str, int] = {}
    monitor = ScriptedMonitor(lambda: holder["bs"], 1.0 + 0.01 * ((index * 7) % 5 - 2), epoch)
    bso = UpstreamBatchSizeOptimizer(monitor, url, job, max_power_w=300, number_of_gpus=1,
                                     gpu_model="NVIDIA A100-SXM4-40GB",
                                     register_exit_hook=exit_hooks.append)
    batch_size = holder["bs"] = bso.get_batch_size()
    outcome = "max epochs without an answer"
    try:
        bso.on_train_begin()
        for epoch in range(1, job.max_epochs + 1):
            if behaviour == "crash" and epoch == 3:
                outcome = "interrupted"  # the process dies: no more reports
                break
            reached = converges_at[batch_size] and epoch >= converges_at[batch_size]
            bso.on_evaluate(0.95 if reached else 0.1 * min(epoch, 5))
            if bso.training_finished:
                outcome = "converged"
                break
    except TrainFail:
        outcome = "not converged"
    for hook in exit_hooks:  # atexit: PATCH /trials
        hook()
    return batch_size, outcome


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def served(request, tmp_path):
    """`zeus serve` on a free port over a fresh SQLite file, PostgreSQL or MariaDB database."""
    env = None
    if request.param == "sqlite":
        db = f"sqlite://{tmp_path / 'bso.db'}"
    elif request.param == "mariadb":
        state = os.environ.get("ZEUS_MARIADB_STATE")
        if not state:
            pytest.skip("ZEUS_MARIADB_STATE is unset (ctest sets it and starts the server)")
        created = subprocess.run(
            ["bash", str(Path(os.environ["ZEUS_SOURCE_DIR"]) / "scripts" / "mariadb_server.sh"),
             "createdb", state, f"upstream{os.getpid()}"],
            capture_output=True, text=True, timeout=60)
        assert created.returncode == 0, created.stderr
        url = created.stdout.strip().splitlines()[-1]
        assert url.startswith("mysql://"), url
        # Upstream's operators' setting (SQLAlchemy's form), read from the environment.
        env = dict(os.environ, ZEUS_BSO_DATABASE_URL="mysql+asyncmy://" + url[len("mysql://"):])
        db = None
    else:
        state = os.environ.get("ZEUS_PG_STATE")
        if not state:
            pytest.skip("ZEUS_PG_STATE is unset (ctest sets it and starts the cluster)")
        created = subprocess.run(
            ["bash", str(Path(os.environ["ZEUS_SOURCE_DIR"]) / "scripts" / "pg_cluster.sh"),
             "createdb", state, f"upstream{os.getpid()}"],
            capture_output=True, text=True, timeout=60)
        assert created.returncode == 0, created.stderr
        db = created.stdout.strip().splitlines()[-1]
    process, url = start_serve(db, env=env)
    yield request.param, url
    process.terminate()
    process.wait(timeout=10)
    if request.param == "mariadb":
        subprocess.run(
            ["bash", str(Path(os.environ["ZEUS_SOURCE_DIR"]) / "scripts" / "mariadb_server.sh"),
             "sql", state, f"DROP DATABASE IF EXISTS upstream{os.getpid()}"],
            capture_output=True, timeout=60)


def start_serve(db: Optional[str], *options: str,
                env: Optional[Dict[str, str]] = None) -> Tuple[subprocess.Popen, str]:
    """`zeus serve --port 0` on db (None: ZEUS_BSO_DATABASE_URL of env); its URL."""
    zeus = Path(os.environ["ZEUS_BIN"]) / "zeus"
    command = [str(zeus), "serve", "--port", "0", *options]
    if db is not None:
        command += ["--db", db]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env)
    line = process.stdout.readline()
    if db is None:  # first the line saying which upstream setting was used
        assert "from ZEUS_BSO_DATABASE_URL" in line and "***@" in line, line
        assert env["ZEUS_BSO_DATABASE_URL"].split("@")[0].split(":")[-1] not in line, line
        line = process.stdout.readline()
    match = re.search(r"listening on (http://\S+)", line)
    assert match, line
    return process, match.group(1)


def test_sixteen_recurrences_with_interruptions_take_upstream_decisions(served):
    store, url = served
    job = JobParams(job_id=f"upstream-{store}", job_id_prefix="upstream",
                    batch_sizes=[32, 64, 128, 256, 512, 1024], default_batch_size=256,
                    eta_knob=0.5, beta_knob=2.0, target_metric=0.9, max_epochs=10,
                    num_pruning_rounds=2, mab_seed=7)
    seen = [run_recurrence(url, job, i, behaviour)
            for i, (_, behaviour, _) in enumerate(SCRIPT)]
    assert seen == [(bs, outcome) for bs, _, outcome in SCRIPT]

    # What the server stored: the interrupted trials failed, every other one has its result.
    with urllib.request.urlopen(f"{url}/jobs/{job.job_id}") as answer:
        trials = json.loads(answer.read())["trials"]
    stored = {"interrupted": "failed", "converged": "converged", "not converged": "not_converged"}
    assert [(t["batch_size"], t["status"]) for t in trials] == [
        (bs, stored[outcome]) for bs, _, outcome in SCRIPT]


def test_a_finished_trial_ended_again_changes_nothing(served):
    # The exit hook runs after every run, also after one that reported its result.
    _, url = served
    job = JobParams(job_id="upstream-end", job_id_prefix="upstream", batch_sizes=[128, 256],
                    default_batch_size=256, target_metric=0.9, max_epochs=5)
    assert run_recurrence(url, job, 0, "train") == (256, "converged")
    with urllib.request.urlopen(f"{url}/jobs/upstream-end") as answer:
        trials = json.loads(answer.read())["trials"]
    assert [t["status"] for t in trials] == ["converged"]


@pytest.mark.parametrize("rules", ["zeus", "upstream"])
def test_job_rules_upstream_reruns_every_survivor(tmp_path, rules):
    # Round 1: 256 and 128 converge cheaply, 512 converges at almost twice 128's cost. Our default
    # rules skip 512 in round 2 (over 1.5 x the cheapest); `--job-rules upstream` re-runs every
    # survivor, as the original server does.
    epoch = {128: (12.0, 1800.0), 256: (10.0, 2000.0), 512: (8.0, 2600.0)}
    converges_at = {128: 3, 256: 4, 512: 6}  # costs 8,100, 10,000, 15,000
    process, url = start_serve(f"sqlite://{tmp_path / 'bso.db'}", "--job-rules", rules)
    try:
        job = JobParams(job_id=f"upstream-{rules}", job_id_prefix="upstream",
                        batch_sizes=[128, 256, 512], default_batch_size=256, target_metric=0.9,
                        max_epochs=10, num_pruning_rounds=2, mab_seed=3)
        seen = [run_recurrence(url, job, i, "train", epoch, converges_at)[0] for i in range(6)]
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert seen[:5] == [256, 128, 512, 128, 256]
    if rules == "upstream":
        assert seen[5] == 512  # round 2 goes on up to 512
    else:
        assert seen[5] == 128  # pruning over: the bandit, and 128 is far the cheapest
