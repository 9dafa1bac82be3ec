"""The P2P blocking power: what a GPU draws while it waits on a pipeline receive.

Perseus charges every stage's idle time in an iteration at this power (`zeus pfo plan
--p2p-power W`), so it is measured once per GPU type, with two ranks of torch.distributed: the
sender waits `wait_s` before it sends, and the receiver measures its GPU's energy over the
blocking receive. The power is that energy over that time.

    dist.init_process_group("nccl")            # two ranks or more, one GPU each
    watts = measure_p2p_power(device_id=local_rank, wait_s=60)
"""

from __future__ import annotations

import importlib
import time

from zeus_cpp.monitor.energy import ZeusMonitor
from zeus_cpp.utils.framework import torch_broadcast


def measure_p2p_power(device_id: int = 0, wait_s: float = 60.0, sender: int = 1,
                      receiver: int = 0) -> float:
    """The receiver's GPU power (W) while blocked on a receive, returned on every rank.

    Every rank of the process group calls it; ranks other than `sender` and `receiver` only
    take part in handing the result around.

    Args:
        device_id: the framework-visible index of this rank's GPU.
        wait_s: how long the sender waits before sending (the measured window).
        sender, receiver: the two global ranks that exchange the message.

    Raises:
        InvalidArgumentError: torch.distributed is not initialised, has fewer than two ranks,
            or sender/receiver are not two distinct ranks of it.
    """
    from zeus_cpp import InvalidArgumentError

    torch = importlib.import_module("torch")
    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized()):
        raise InvalidArgumentError(
            "measure_p2p_power needs torch.distributed: call torch.distributed."
            "init_process_group(...) on two ranks or more first")
    world_size = dist.get_world_size()
    if sender == receiver or not (0 <= sender < world_size and 0 <= receiver < world_size):
        raise InvalidArgumentError(
            f"sender {sender} and receiver {receiver} must be two distinct ranks of the "
            f"{world_size} of the process group (start two ranks or more)")
    if wait_s <= 0:
        raise InvalidArgumentError(f"wait_s must be positive, not {wait_s}")
    rank = dist.get_rank()
    device = torch.device(f"cuda:{device_id}") if dist.get_backend() == "nccl" else torch.device("cpu")
    message = torch.zeros(1, device=device)
    power_w = 0.0
    if rank == receiver:
        monitor = ZeusMonitor(gpu_indices=[device_id], cpu_indices=[], sync_execution_with="torch")
        dist.recv(message, src=sender)  # the first exchange sets the connection up
        monitor.begin_window("p2p_blocking")
        dist.recv(message, src=sender)
        measured = monitor.end_window("p2p_blocking")
        power_w = measured.gpu_energy[device_id] / measured.time
    elif rank == sender:
        dist.send(message, dst=receiver)
        time.sleep(wait_s)
        dist.send(message, dst=receiver)
    broadcast = torch_broadcast(src=receiver)
    assert broadcast is not None  # torch.distributed is initialised (checked above)
    return float(broadcast(power_w))
