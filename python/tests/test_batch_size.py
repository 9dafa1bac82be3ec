"""The batch-size optimizer client and the Listing 1 data loader, locally and against `zeus serve`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

import zeus_cpp
from zeus_cpp.monitor import ZeusMonitor
from zeus_cpp.optimizer.batch_size import BatchSizeOptimizer, JobSpec
from zeus_cpp.optimizer.batch_size.exceptions import ZeusBSOTrainFailError

from conftest import fake_device

HERE = Path(__file__).parent


@pytest.fixture
def server(tmp_path):
    """A real `zeus serve` on a free port with an in-memory store; yields its URL."""
    zeus = Path(os.environ["ZEUS_BIN"]) / "zeus"
    assert zeus.exists(), f"{zeus} is not built"
    process = subprocess.Popen([str(zeus), "serve", "--db", "memory://", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = process.stdout.readline()
    match = re.search(r"listening on (http://\S+)", line)
    assert match, line
    yield match.group(1)
    process.terminate()
    process.wait(timeout=10)


def job(job_id, **overrides):
    spec = dict(job_id_prefix="py", job_id=job_id, batch_sizes=[8, 16, 32], default_batch_size=16,
                target_metric=0.5, max_epochs=3, mab_seed=1)
    spec.update(overrides)
    return JobSpec(**spec)


def run_trial(url, spec, metrics):
    """One recurrence: returns (batch size, the answers to each on_evaluate)."""
    bso = BatchSizeOptimizer(ZeusMonitor(sync_execution_with=None), url, spec)
    batch_size = bso.get_batch_size()
    bso.on_train_begin()
    answers = [bso.on_evaluate(metric) for metric in metrics]
    return batch_size, answers, bso


def test_local_client_converges_and_stops(fake_nvml):
    batch_size, answers, bso = run_trial("memory://", job("py-local"), [0.2, 0.6])
    assert batch_size == 16  # pruning starts at the default batch size
    assert [a.stop_train for a in answers] == [False, True]
    assert answers[1].converged
    assert bso.training_finished and bso.cur_epoch == 2
    assert bso.on_evaluate(0.9) is None  # nothing more once finished
    assert bso.consumed_energy > 0 and bso.running_time > 0
    assert bso.job.job_id == "py-local"


def test_trial_that_misses_the_target_raises_train_fail(fake_nvml):
    with pytest.raises(ZeusBSOTrainFailError, match="Train failed"):
        run_trial("memory://", job("py-fail", max_epochs=2), [0.1, 0.2])


class _FlakyService:
    """Forwards to the real service; its next `failures` reports fail like an unreachable server."""

    def __init__(self, inner, failures):
        self.inner, self.failures, self.epochs = inner, failures, []

    def report(self, *args):
        if self.failures:
            self.failures -= 1
            raise zeus_cpp.UnavailableError("cannot reach the batch-size server")
        self.epochs.append(args[-1])
        return self.inner.report(*args)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def test_on_evaluate_recovers_after_a_bad_metric(fake_nvml):
    bso = BatchSizeOptimizer(ZeusMonitor(sync_execution_with=None), "memory://", job("py-b8-nan"))
    bso.get_batch_size()
    bso.on_train_begin()
    for bad in (float("nan"), float("inf")):
        with pytest.raises(zeus_cpp.InvalidArgumentError, match="finite"):
            bso.on_evaluate(bad)
    assert bso.cur_epoch == 0
    answer = bso.on_evaluate(0.2)  # the epoch is still open and reports as usual
    assert answer is not None and not answer.stop_train and bso.cur_epoch == 1
    assert bso.on_evaluate(0.6).converged


def test_on_evaluate_reports_the_epoch_again_after_a_failed_report(fake_nvml):
    bso = BatchSizeOptimizer(ZeusMonitor(sync_execution_with=None), "memory://", job("py-b8-down"))
    bso.get_batch_size()
    bso.on_train_begin()
    bso._service = flaky = _FlakyService(bso._service, failures=1)
    with pytest.raises(zeus_cpp.UnavailableError):
        bso.on_evaluate(0.2)
    assert bso.cur_epoch == 0
    time_after_failure = bso.running_time
    answer = bso.on_evaluate(0.2)  # reported again: epoch 1, still measured
    assert not answer.stop_train and bso.cur_epoch == 1
    assert bso.running_time > time_after_failure
    assert bso.on_evaluate(0.6).converged
    assert flaky.epochs == [1, 2]


def test_recurrences_against_zeus_serve(fake_nvml, server):
    # Each recurrence is a new client; pruning goes from the default downward, then upward.
    sizes = []
    for _ in range(3):
        batch_size, answers, _ = run_trial(server, job("py-served", beta_knob=None), [0.9])
        assert answers[0].stop_train and answers[0].converged
        sizes.append(batch_size)
    assert sizes == [16, 8, 32]
    # The spec went over the wire with the GPU fields the client fills in.
    with urllib.request.urlopen(f"{server}/jobs/py-served") as answer:
        text = answer.read().decode()
    assert "NVIDIA H100 80GB HBM3" in text and "700" in text


def test_a_run_that_dies_has_its_trial_marked_failed(fake_nvml, server):
    child = (
        "from zeus_cpp.monitor import ZeusMonitor\n"
        "from zeus_cpp.optimizer.batch_size import BatchSizeOptimizer, JobSpec\n"
        f"spec = JobSpec(job_id_prefix='py', batch_sizes=[8, 16, 32], default_batch_size=16, job_id='py-dies')\n"
        f"bso = BatchSizeOptimizer(ZeusMonitor(sync_execution_with=None), '{server}', spec)\n"
        "print(bso.get_batch_size())\n"
        "raise SystemExit(3)  # training died before any report\n"
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == "16"
    with urllib.request.urlopen(f"{server}/jobs/py-dies") as answer:
        trials = json.loads(answer.read())["trials"]
    assert [t["status"] for t in trials] == ["failed"]


def test_listing1_data_loader_two_recurrences(fake_nvml, tmp_path):
    torch = pytest.importorskip("torch")
    from torch.utils.data import TensorDataset

    from zeus_cpp.run import ZeusDataLoader

    fake_nvml.write([fake_device(power_draw_w=300, min_limit_w=100, max_limit_w=300)])
    store = f"sqlite:///{tmp_path / 'bso.db'}"
    torch.manual_seed(0)
    x = torch.randn(256, 8)
    dataset = TensorDataset(x, (x[:, 0] > 0).long())
    spec = job("py-listing1", target_metric=0.9, max_epochs=6, beta_knob=None)  # no early stop
    batch_sizes, epochs_trained = [], []
    for _ in range(2):
        monitor = ZeusMonitor()
        model = torch.nn.Linear(8, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        train_loader = ZeusDataLoader(dataset, spec, monitor=monitor, server_url=store,
                                      warmup_steps=1, profile_steps=2, pl_step=100, shuffle=False)
        report = None
        for epoch in train_loader.epochs():
            for inputs, labels in train_loader:
                optimizer.zero_grad()
                torch.nn.functional.cross_entropy(model(inputs), labels).backward()
                optimizer.step()
            with torch.no_grad():
                accuracy = float((model(x).argmax(dim=1) == dataset.tensors[1]).float().mean())
            report = train_loader.report_metric(accuracy)
        assert report.stop_train and report.converged, report
        assert train_loader.optimal_power_limit in (300, 200, 100)
        assert train_loader.energy > 0 and train_loader.time > 0
        batch_sizes.append(train_loader.batch_size)
        epochs_trained.append(train_loader.epochs_done)
        train_loader.close()
    assert batch_sizes == [16, 8]  # the second recurrence explores the next batch size
    assert all(1 <= e <= 6 for e in epochs_trained)
    # The first epoch profiled 300, 200 and 100 W on the fake GPU, then set the optimum.
    log = fake_nvml.limit_log_w()
    assert log[:3] == [300, 200, 100]
