"""Deep-learning framework glue: GPU synchronisation and all-reduce across ranks.

Mirrors `zeus.utils.framework` of the Python Zeus: `torch_is_available`, `jax_is_available`,
`cupy_is_available`, `sync_execution`, `all_reduce`, `is_distributed`, `get_rank` and
`get_world_size` keep upstream's names, arguments, results and errors. As upstream, PyTorch wins
over JAX when it can be imported; with neither, the process is a single rank (rank 0, world size
1) and `all_reduce` returns its argument. Frameworks are imported only when asked for: the rank
queries never import torch (a process that has not imported it cannot have initialised
torch.distributed), so they answer in microseconds where upstream spends the seconds of
`import torch`.

The helpers below them (`sync_function`, `torch_all_reduce`, `torch_broadcast`,
`torch_is_distributed`) are what the monitors and optimizers of zeus_cpp build on.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys
import types
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

logger = logging.getLogger(__name__)

# The framework modules imported by the *_is_available checks (upstream's MODULE_CACHE).
MODULE_CACHE: Dict[str, types.ModuleType] = {}

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
            # here costs seconds even without a GPU: wait for it instead.
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


def torch_is_distributed() -> bool:
    """True when torch.distributed is initialised in this process (torch already imported).

    Unlike `is_distributed`, JAX is never consulted: the torch-based all-reduce and broadcast
    of the optimizers rely on this.
    """
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
    if not torch_is_distributed():
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
    if not torch_is_distributed():
        return None
    dist = sys.modules["torch"].distributed

    def broadcast(value: Any) -> Any:
        box = [value]
        dist.broadcast_object_list(box, src=src)
        return box[0]

    return broadcast


# Upstream's public functions (zeus.utils.framework). -------------------------------------------


@lru_cache(maxsize=1)
def torch_is_available(ensure_available: bool = False, ensure_cuda: bool = True) -> bool:
    """Whether PyTorch can be imported (it is then imported and kept in MODULE_CACHE["torch"]).

    As upstream, the answer is cached (`torch_is_available.cache_clear()` forgets it) and
    `ensure_cuda` defaults to True, so on a machine without CUDA the plain call raises.

    Args:
        ensure_available: raise instead of returning False when torch cannot be imported.
        ensure_cuda: raise when torch imports but `torch.cuda.is_available()` is False.

    Raises:
        RuntimeError: "Failed to import Pytorch" (ensure_available) or "PyTorch is available but
            does not have CUDA support." (ensure_cuda).
    """
    try:
        import torch  # noqa: PLC0415 - imported only when asked for
    except ImportError as error:
        logger.info("PyTorch is not available.")
        if ensure_available:
            raise RuntimeError("Failed to import Pytorch") from error
        return False
    cuda_available = torch.cuda.is_available()
    if ensure_cuda and not cuda_available:
        raise RuntimeError("PyTorch is available but does not have CUDA support.")
    MODULE_CACHE["torch"] = torch
    logger.info("PyTorch %s CUDA support is available.", "with" if cuda_available else "without")
    return True


@lru_cache(maxsize=1)
def jax_is_available(ensure_available: bool = False, ensure_cuda: bool = True) -> bool:
    """Whether JAX can be imported (it is then imported and kept in MODULE_CACHE["jax"]).

    Cached like `torch_is_available`. A JAX without a GPU backend counts as "no CUDA support"
    (upstream lets JAX's own RuntimeError from `jax.devices("gpu")` escape even with
    ensure_cuda=False).

    Args:
        ensure_available: raise instead of returning False when jax cannot be imported.
        ensure_cuda: raise when jax imports but has no GPU device.

    Raises:
        RuntimeError: "Failed to import JAX" (ensure_available) or "JAX is available but does not
            have CUDA support." (ensure_cuda).
    """
    try:
        import jax  # type: ignore[import-not-found]  # noqa: PLC0415
    except ImportError as error:
        logger.info("JAX is not available")
        if ensure_available:
            raise RuntimeError("Failed to import JAX") from error
        return False
    try:
        gpus = jax.devices("gpu")
    except RuntimeError:  # "Unknown backend: 'gpu'": a CPU-only JAX
        gpus = []
    if ensure_cuda and not gpus:
        raise RuntimeError("JAX is available but does not have CUDA support.")
    MODULE_CACHE["jax"] = jax
    logger.info("JAX %s CUDA support is available.", "with" if gpus else "without")
    return True


@lru_cache(maxsize=1)
def cupy_is_available(ensure_available: bool = False) -> bool:
    """Whether CuPy can be imported (it is then imported and kept in MODULE_CACHE["cupy"]).

    Raises:
        RuntimeError: "Failed to import CuPy" when ensure_available and it cannot be imported.
    """
    try:
        import cupy  # type: ignore[import-not-found]  # noqa: PLC0415
    except ImportError as error:
        logger.info("CuPy is not available.")
        if ensure_available:
            raise RuntimeError("Failed to import CuPy") from error
        return False
    MODULE_CACHE["cupy"] = cupy
    logger.info("CuPy is available.")
    return True


def sync_execution(gpu_devices: List[int], sync_with: str = "torch") -> None:
    """Blocks until all queued work on the given GPUs is finished.

    "torch": `torch.cuda.synchronize(i)` for each GPU. "jax": a tiny computation is put on each
    GPU and on CPU device 0, and `jax.block_until_ready` waits for all of them (JAX runs CPU work
    asynchronously too). "cupy": `cupy.cuda.Device(i).synchronize()` for each GPU.

    Args:
        gpu_devices: framework-visible GPU indices (CUDA_VISIBLE_DEVICES applies).
        sync_with: "torch" (default), "jax" or "cupy".

    Raises:
        RuntimeError: the framework cannot be imported ("Failed to import ..."), has no CUDA
            support (torch, jax), or `sync_with` is none of the three ("No framework is
            available.").
    """
    if sync_with == "torch" and torch_is_available(ensure_available=True):
        torch = MODULE_CACHE["torch"]
        for device in gpu_devices:
            torch.cuda.synchronize(device)
        return
    if sync_with == "jax" and jax_is_available(ensure_available=True):
        jax = MODULE_CACHE["jax"]
        gpus = jax.devices("gpu")
        futures = [jax.device_put(0.0, device=gpus[device]) + 0 for device in gpu_devices]
        futures.append(jax.device_put(0.0, device=jax.devices("cpu")[0]) + 0)
        jax.block_until_ready(futures)
        return
    if sync_with == "cupy" and cupy_is_available(ensure_available=True):
        cupy = MODULE_CACHE["cupy"]
        for device in gpu_devices:
            cupy.cuda.Device(device).synchronize()
        return
    raise RuntimeError("No framework is available.")


def _torch_importable() -> bool:
    """Whether torch is imported or could be, without importing it."""
    if "torch" in sys.modules:
        return sys.modules["torch"] is not None
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def _jax() -> Optional[types.ModuleType]:
    """The jax module when torch is absent and jax imports (upstream's fallback order)."""
    return MODULE_CACHE["jax"] if jax_is_available(ensure_cuda=False) else None


def all_reduce(object: Union[List[int], List[float]], operation: str) -> Union[List[int], List[float]]:  # noqa: A002
    """Reduces a list of numbers element-wise over every rank; every rank gets the result.

    Not distributed (no torch.distributed process group, a single JAX device, or no framework):
    `object` itself is returned. With torch.distributed the result is a new list of floats (as
    upstream); the values travel as float64 (upstream: float32) on the current GPU with NCCL
    and on the CPU with any other backend (gloo, MPI; upstream always moves them to the GPU).

    Args:
        object: the numbers this rank contributes (the same length on every rank).
        operation: "sum" or "max".

    Raises:
        ValueError: an operation other than "sum" or "max".
        NotImplementedError: JAX with more than one device (as upstream).
    """
    if operation not in ("sum", "max"):
        raise ValueError(f"all_reduce unsupported operation: {operation}")
    if _torch_importable():
        if not torch_is_distributed():
            return object
        torch = sys.modules["torch"]
        dist = torch.distributed
        device = f"cuda:{torch.cuda.current_device()}" if dist.get_backend() == "nccl" else "cpu"
        tensor = torch.tensor([float(value) for value in object], dtype=torch.float64, device=device)
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM if operation == "sum" else dist.ReduceOp.MAX)
        return tensor.cpu().tolist()
    jax = _jax()
    if jax is not None:
        if jax.device_count() == 1:
            return object
        raise NotImplementedError("JAX distributed is not supported yet.")
    return object


def is_distributed() -> bool:
    """Whether this execution spans several processes or devices.

    With torch importable: whether torch.distributed is initialised. Else, with JAX: whether it
    sees more than one device (as upstream). Else False.
    """
    if _torch_importable():
        return torch_is_distributed()
    jax = _jax()
    return jax is not None and jax.device_count() > 1


def get_rank() -> int:
    """This process's rank: torch.distributed's when initialised, JAX's process index when torch
    is absent, else 0."""
    if _torch_importable():
        return int(sys.modules["torch"].distributed.get_rank()) if torch_is_distributed() else 0
    jax = _jax()
    return int(jax.process_index()) if jax is not None else 0


def get_world_size() -> int:
    """The number of processes: torch.distributed's world size when initialised, JAX's process
    count when torch is absent, else 1."""
    if _torch_importable():
        return int(sys.modules["torch"].distributed.get_world_size()) if torch_is_distributed() else 1
    jax = _jax()
    return int(jax.process_count()) if jax is not None else 1
