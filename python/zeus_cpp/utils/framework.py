"""Deep-learning framework glue: GPU synchronisation and torch.distributed all-reduce.

Mirrors `zeus.utils.framework` of the Python Zeus. Frameworks are imported only when asked for.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

SyncWith = Union[str, Callable[[], None], None]


def _import(name: str):
    """The module if it is importable, else None."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _torch_sync(torch: Any, indices: List[int]) -> Optional[Callable[[], None]]:
    """torch.cuda.synchronize on each of indices, or None without CUDA."""
    if not torch.cuda.is_available():
        return None
    synchronize = torch.cuda.synchronize

    def sync_torch() -> None:
        for index in indices:
            synchronize(index)

    return sync_torch


def sync_function(sync_with: SyncWith, gpu_indices: Sequence[int]) -> Optional[Callable[[], None]]:
    """The callable that waits for queued GPU work, or None when there is nothing to wait for.

    Args:
        sync_with: "torch" (torch.cuda.synchronize on each monitored GPU, when CUDA is
            available), "jax" (blocks until a dummy computation is done), "cupy"
            (cupy.cuda.Device(i).synchronize()), a callable to use as is, or None (never sync).
        gpu_indices: the framework-visible GPUs to synchronise.

    Raises:
        InvalidArgumentError: for an unknown framework name.
    """
    from zeus_cpp import InvalidArgumentError

    if sync_with is None:
        return None
    if callable(sync_with):
        return sync_with
    if not isinstance(sync_with, str):
        raise TypeError(f"sync_execution_with must be a str, a callable or None, not {type(sync_with).__name__}")
    indices = list(gpu_indices)
    if sync_with == "torch":
        if not indices:
            return None
        if "torch" not in sys.modules:
            # Nothing ran on a GPU through torch before the program imports it, and importing it
            # here costs seconds even without a GPU (probe item D6): wait for it instead.
            resolved: List[Optional[Callable[[], None]]] = []

            def sync_once_imported() -> None:
                if not resolved:
                    if "torch" not in sys.modules:
                        return
                    resolved.append(_torch_sync(sys.modules["torch"], indices))
                if resolved[0] is not None:
                    resolved[0]()

            return sync_once_imported
        torch = _import("torch")
        return None if torch is None else _torch_sync(torch, indices)
    if sync_with == "jax":
        jax = _import("jax")
        if jax is None:
            return None
        return lambda: jax.numpy.zeros(()).block_until_ready()
    if sync_with == "cupy":
        cupy = _import("cupy")
        if cupy is None or not indices:
            return None

        def sync_cupy() -> None:
            for index in indices:
                cupy.cuda.Device(index).synchronize()

        return sync_cupy
    raise InvalidArgumentError(
        f"sync_execution_with='{sync_with}' is not supported: use 'torch', 'jax', 'cupy', a callable or None"
    )


def is_distributed() -> bool:
    """True when torch.distributed is initialised in this process (torch already imported)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    dist = torch.distributed
    return bool(dist.is_available() and dist.is_initialized())


def torch_all_reduce() -> Optional[Callable[[float, float, int], Tuple[float, float, int]]]:
    """The all-reduce of (energy J, time s, GPU count) over torch.distributed ranks, or None.

    Energy and GPU count are summed, time is the maximum, so every rank sees the same numbers
    and selects the same power limit. With the NCCL backend the tensors live on the current GPU.
    """
    if not is_distributed():
        return None
    torch = sys.modules["torch"]
    dist = torch.distributed

    def all_reduce(energy_j: float, time_s: float, gpu_count: int) -> Tuple[float, float, int]:
        device = "cpu"
        if dist.get_backend() == "nccl":
            device = f"cuda:{torch.cuda.current_device()}"
        summed = torch.tensor([energy_j, float(gpu_count)], dtype=torch.float64, device=device)
        longest = torch.tensor([time_s], dtype=torch.float64, device=device)
        dist.all_reduce(summed, op=dist.ReduceOp.SUM)
        dist.all_reduce(longest, op=dist.ReduceOp.MAX)
        return float(summed[0].item()), float(longest[0].item()), int(round(summed[1].item()))

    return all_reduce


def torch_broadcast(src: int = 0) -> Optional[Callable[[Any], Any]]:
    """broadcast(value) -> rank `src`'s value on every rank (torch.distributed), or None.

    Every rank calls it at the same point; a picklable object travels through
    broadcast_object_list (with NCCL, through the current GPU).
    """
    if not is_distributed():
        return None
    dist = sys.modules["torch"].distributed

    def broadcast(value: Any) -> Any:
        box = [value]
        dist.broadcast_object_list(box, src=src)
        return box[0]

    return broadcast
