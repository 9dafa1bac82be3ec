"""The power-limit optimizer's restores belong to the process that created it.

A forked child (a multiprocessing worker, a PyTorch DataLoader worker) must neither restore the
parent's GPU limit when it exits nor forward its signals to the parent. Each case runs in a
subprocess, so a failure cannot take the test runner down with it.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import fake_device

PARENT = r"""
import json, os, signal, sys, time
from zeus_cpp.monitor import ZeusMonitor
from zeus_cpp.optimizer.power_limit import Done, Energy, GlobalPowerLimitOptimizer
monitor = ZeusMonitor(gpu_indices=[0], sync_execution_with=None)
plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=Energy(), warmup_steps=1, profile_steps=2,
                                pl_step=100)
plo.on_epoch_begin()
while not isinstance(plo.state, Done):
    plo.on_step_begin(); time.sleep(0.005); plo.on_step_end()
limit = lambda: json.load(open(os.environ["ZEUS_FAKE_NVML_STATE"]))["devices"][0]["limit_mw"] // 1000
print("optimum", plo.optimal_power_limit, "limit", limit(), flush=True)
"""

CASES = {
    # A child that leaves through sys.exit (atexit hooks run) must not reset the parent's limit.
    "fork_sys_exit": PARENT + r"""
pid = os.fork()
if pid == 0:
    sys.exit(0)
os.waitpid(pid, 0)
print("after child limit", limit(), flush=True)
""",
    # SIGTERM to a multiprocessing worker ends the worker only.
    "mp_sigterm": PARENT + r"""
import multiprocessing as mp
def work():
    time.sleep(30)
p = mp.get_context("fork").Process(target=work); p.start(); time.sleep(0.3)
os.kill(p.pid, signal.SIGTERM); p.join(10)
print("child exitcode", p.exitcode, "after child limit", limit(), flush=True)
""",
    # SIGINT to a worker raises KeyboardInterrupt in the worker, not in the parent.
    "mp_sigint": PARENT + r"""
import multiprocessing as mp
def work():
    try:
        time.sleep(30)
    except KeyboardInterrupt:
        os._exit(42)
p = mp.get_context("fork").Process(target=work); p.start(); time.sleep(0.3)
os.kill(p.pid, signal.SIGINT); p.join(10)
print("child exitcode", p.exitcode, "after child limit", limit(), flush=True)
""",
    # A pool of workers that exit normally.
    "mp_pool": PARENT + r"""
import multiprocessing as mp
with mp.get_context("fork").Pool(2) as pool:
    assert pool.map(abs, [-1, -2, -3]) == [1, 2, 3]
print("after child limit", limit(), flush=True)
""",
    # A PyTorch DataLoader with forked workers.
    "dataloader": PARENT + r"""
import torch
from torch.utils.data import DataLoader, TensorDataset
loader = DataLoader(TensorDataset(torch.arange(64.0)), batch_size=8, num_workers=2)
for epoch in range(2):
    assert sum(len(b[0]) for b in loader) == 64
print("after child limit", limit(), flush=True)
""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_forked_children_leave_the_parents_limit_alone(fake_nvml, case):
    if case == "dataloader":
        pytest.importorskip("torch")
    fake_nvml.write([fake_device(power_draw_w=300, min_limit_w=100, max_limit_w=300)])
    done = subprocess.run([sys.executable, "-c", CASES[case]], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    first = done.stdout.split()
    optimum = int(first[first.index("optimum") + 1])
    assert optimum < 300
    after = int(first[first.index("after") + 3])  # "after child limit N"
    assert after == optimum, done.stdout
    if case == "mp_sigterm":
        assert "child exitcode -15" in done.stdout, done.stdout
    if case == "mp_sigint":
        assert "child exitcode 42" in done.stdout, done.stdout
    # The parent's own exit restores the maximum, once, as before.
    assert fake_nvml.limit_w() == 300
