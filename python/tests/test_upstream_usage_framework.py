"""zeus_cpp.utils.framework used as upstream's zeus.utils.framework is: the same calls, results,
types and errors (upstream: zeus/utils/framework.py), with torch, without any framework, with
JAX's branch, and across two torch.distributed ranks (gloo)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import types

import pytest

torch = pytest.importorskip("torch")

from zeus_cpp.utils import framework  # noqa: E402
from zeus_cpp.utils.framework import (  # noqa: E402
    MODULE_CACHE,
    all_reduce,
    cupy_is_available,
    get_rank,
    get_world_size,
    is_distributed,
    jax_is_available,
    sync_execution,
    torch_is_available,
)

CACHED = (torch_is_available, jax_is_available, cupy_is_available)


@pytest.fixture(autouse=True)
def fresh_caches():
    """The *_is_available answers are cached (as upstream): each test starts and ends afresh."""
    for function in CACHED:
        function.cache_clear()
    saved = dict(MODULE_CACHE)
    yield
    for function in CACHED:
        function.cache_clear()
    MODULE_CACHE.clear()
    MODULE_CACHE.update(saved)


def test_signatures_are_upstreams():
    def params(function):
        return [(p.name, p.default) for p in inspect.signature(function).parameters.values()]

    empty = inspect.Parameter.empty
    assert params(sync_execution) == [("gpu_devices", empty), ("sync_with", "torch")]
    assert params(all_reduce) == [("object", empty), ("operation", empty)]
    assert params(torch_is_available) == [("ensure_available", False), ("ensure_cuda", True)]
    assert params(jax_is_available) == [("ensure_available", False), ("ensure_cuda", True)]
    assert params(cupy_is_available) == [("ensure_available", False)]
    for function in (get_rank, get_world_size, is_distributed):
        assert params(function) == []


def test_single_torch_process_is_rank_zero_of_one_and_all_reduce_returns_its_input():
    assert get_rank() == 0 and isinstance(get_rank(), int)
    assert get_world_size() == 1 and isinstance(get_world_size(), int)
    assert is_distributed() is False
    ints, floats = [1, 2, 3], [0.5, 2.25]
    assert all_reduce(ints, operation="sum") is ints
    assert all_reduce(floats, operation="max") is floats
    assert all_reduce(ints, "sum") == [1, 2, 3]  # not summed with anything


@pytest.mark.parametrize("operation", ["min", "mean", "SUM", ""])
def test_all_reduce_rejects_other_operations(operation):
    with pytest.raises(ValueError, match=f"all_reduce unsupported operation: {operation}"):
        all_reduce([1.0], operation=operation)


def test_torch_is_available_imports_torch_and_enforces_cuda_by_default():
    assert torch_is_available(ensure_cuda=False) is True
    assert MODULE_CACHE["torch"] is torch
    torch_is_available.cache_clear()
    if torch.cuda.is_available():
        assert torch_is_available() is True
    else:
        with pytest.raises(RuntimeError, match="PyTorch is available but does not have CUDA support."):
            torch_is_available()


def test_sync_execution_with_torch_synchronizes_each_device(monkeypatch):
    calls = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: calls.append(device))
    assert sync_execution([0, 2]) is None
    assert sync_execution([1], sync_with="torch") is None
    assert calls == [0, 2, 1]


def test_sync_execution_with_torch_without_cuda_raises():
    if torch.cuda.is_available():
        assert sync_execution([0]) is None  # a real synchronize on the GPU
        return
    with pytest.raises(RuntimeError, match="does not have CUDA support"):
        sync_execution([0])


def test_sync_execution_with_an_unknown_or_missing_framework_raises(monkeypatch):
    with pytest.raises(RuntimeError, match="No framework is available."):
        sync_execution([0], sync_with="tensorflow")
    monkeypatch.setitem(sys.modules, "jax", None)  # JAX absent, whatever the machine has
    with pytest.raises(RuntimeError, match="Failed to import JAX"):
        sync_execution([0], sync_with="jax")
    monkeypatch.setitem(sys.modules, "cupy", None)
    with pytest.raises(RuntimeError, match="Failed to import CuPy"):
        sync_execution([0], sync_with="cupy")
    assert jax_is_available() is False and cupy_is_available() is False


def test_without_any_framework_a_single_process(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # "import torch" fails from here on
    monkeypatch.setitem(sys.modules, "jax", None)
    assert torch_is_available() is False
    with pytest.raises(RuntimeError, match="Failed to import Pytorch"):
        torch_is_available(ensure_available=True)
    assert (get_rank(), get_world_size(), is_distributed()) == (0, 1, False)
    values = [3, 4]
    assert all_reduce(values, "sum") is values
    with pytest.raises(RuntimeError, match="Failed to import Pytorch"):
        sync_execution([0])


def test_rank_queries_do_not_import_torch():
    code = ("import sys\nfrom zeus_cpp.utils.framework import all_reduce, get_rank, get_world_size, "
            "is_distributed\nprint(get_rank(), get_world_size(), is_distributed(), all_reduce([1], 'max'), "
            "'torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "1", "False", "[1]", "False"]


def fake_jax(devices: int, process_index: int = 0, process_count: int = 1, gpu: bool = True):
    """A stand-in `jax` module (JAX is not installed here) recording what Zeus calls on it."""
    jax = types.ModuleType("jax")
    jax.calls = []

    def jax_devices(kind=None):
        if kind == "gpu" and not gpu:
            raise RuntimeError("Unknown backend: 'gpu' requested")
        return [f"{kind}{i}" for i in range(devices if kind == "gpu" else 1)]

    jax.devices = jax_devices
    jax.device_count = lambda: devices
    jax.process_index = lambda: process_index
    jax.process_count = lambda: process_count
    jax.device_put = lambda value, device=None: (jax.calls.append(("put", device)), value)[1]
    jax.block_until_ready = lambda futures: jax.calls.append(("block", list(futures)))
    return jax


def test_jax_branch_when_torch_is_absent(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    jax = fake_jax(devices=1, process_index=0, process_count=1)
    monkeypatch.setitem(sys.modules, "jax", jax)
    assert jax_is_available() is True and MODULE_CACHE["jax"] is jax
    values = [1.0, 2.0]
    assert all_reduce(values, "sum") is values  # one device: not distributed
    assert (get_rank(), get_world_size(), is_distributed()) == (0, 1, False)
    sync_execution([0], sync_with="jax")
    assert jax.calls == [("put", "gpu0"), ("put", "cpu0"), ("block", [0.0, 0.0])]


def test_jax_with_several_devices_is_distributed_and_all_reduce_is_not_implemented(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "jax", fake_jax(devices=4, process_index=1, process_count=2))
    assert is_distributed() is True
    assert (get_rank(), get_world_size()) == (1, 2)
    with pytest.raises(NotImplementedError, match="JAX distributed is not supported yet."):
        all_reduce([1.0], "max")


def test_jax_without_gpu_fails_the_cuda_check(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", fake_jax(devices=1, gpu=False))
    with pytest.raises(RuntimeError, match="JAX is available but does not have CUDA support."):
        jax_is_available()
    jax_is_available.cache_clear()
    assert jax_is_available(ensure_cuda=False) is True


def test_torch_wins_over_jax_when_both_import(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", fake_jax(devices=8, process_index=3, process_count=4))
    assert (get_rank(), get_world_size(), is_distributed()) == (0, 1, False)  # torch's answer


def test_the_helpers_zeus_cpp_builds_on_are_still_there():
    assert framework.sync_function(None, [0]) is None
    assert framework.torch_all_reduce() is None and framework.torch_broadcast() is None
    assert framework.torch_is_distributed() is False


RANK = r"""
import json, sys
import torch.distributed as dist
from zeus_cpp.utils.framework import all_reduce, get_rank, get_world_size, is_distributed

rank, world_size, store, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
result = {"before": [get_rank(), get_world_size(), is_distributed()]}
dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world_size)
result["during"] = [get_rank(), get_world_size(), is_distributed()]
result["sum"] = all_reduce([rank + 1, 10.5 * (rank + 1)], operation="sum")
result["max"] = all_reduce([float(rank), -float(rank)], operation="max")
ints = all_reduce([rank + 1, 7], "sum")
result["int_sum"], result["int_types"] = ints, [type(v).__name__ for v in ints]
# How upstream's GlobalPowerLimitOptimizer aggregates one profiling window.
result["energy"] = sum(all_reduce([100.0 * (rank + 1), 1.0], operation="sum"))
result["time"] = max(all_reduce([1.5 + rank], operation="max"))
dist.destroy_process_group()
result["after"] = [get_rank(), get_world_size(), is_distributed()]
json.dump(result, open(out, "w"))
"""


def test_two_ranks_all_reduce_through_torch_distributed(tmp_path):
    processes, outputs = [], []
    for rank in range(2):
        out = tmp_path / f"rank{rank}.json"
        outputs.append(out)
        processes.append(subprocess.Popen(
            [sys.executable, "-c", RANK, str(rank), "2", str(tmp_path / "store"), str(out)],
            env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for process in processes:
        output, _ = process.communicate(timeout=120)
        assert process.returncode == 0, output
    results = [json.loads(out.read_text()) for out in outputs]
    for rank, result in enumerate(results):
        assert result["before"] == [0, 1, False]
        assert result["during"] == [rank, 2, True]
        assert result["after"] == [0, 1, False]
        assert result["sum"] == [3.0, 31.5]
        assert result["max"] == [1.0, 0.0]
        assert result["int_sum"] == [3.0, 14.0] and result["int_types"] == ["float", "float"]
        assert result["energy"] == 302.0
        assert result["time"] == 2.5
