"""The Perseus client of one pipeline rank (as `zeus.optimizer.pipeline_frequency`'s).

    pfo = PipelineFrequencyOptimizer(rank, dp_rank, pp_rank, tp_rank, device_id,
                                     dp_degree, pp_degree, tp_degree, world_size,
                                     server_url="http://127.0.0.1:7787")
    pfo.on_step_begin()
    pfo.on_instruction_begin("forward"); forward(); pfo.on_instruction_end("forward")
    ...
    pfo.on_step_end()

The C++ core (zeus::PipelineFrequencyOptimizer) registers the job and the rank, locks each
instruction's SM clock from a background controller, measures every instruction with the energy
monitor and reports each round to the server. Every call releases the GIL while C++ works (the
first schedule and each round boundary are barriers over all ranks).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from zeus_cpp import _zeus_cpp
from zeus_cpp.callback import Callback
from zeus_cpp.utils.framework import sync_function, torch_broadcast


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    return value


class PipelineFrequencyOptimizer(Callback):
    """Locks the SM clock of each pipeline instruction as the Perseus server plans it.

    Rank 0 registers the job with the server and the job id reaches every other rank through
    torch.distributed (broadcast_object_list), so with world_size > 1 torch.distributed must be
    initialised first. Clocks are unlocked again by stop(), at exit, and on SIGINT/SIGTERM.
    """

    def __init__(
        self,
        rank: int,
        dp_rank: int,
        pp_rank: int,
        tp_rank: int,
        device_id: int,
        dp_degree: int,
        pp_degree: int,
        tp_degree: int,
        world_size: int,
        server_url: str,
        job_metadata: Optional[str] = None,
        *,
        steps_per_round: int = 5,
        timeout_s: float = 30.0,
        schedule_timeout_s: float = 3600.0,
    ) -> None:
        """Registers the job (rank 0) and this rank, and waits for the first schedule.

        Args:
            rank, dp_rank, pp_rank, tp_rank: this rank's global rank and its place in each
                parallel dimension.
            device_id: the framework-visible index of this rank's GPU (CUDA_VISIBLE_DEVICES
                applies).
            dp_degree, pp_degree, tp_degree, world_size: the job's shape (world_size must be
                dp_degree x pp_degree x tp_degree).
            server_url: the pipeline-frequency server (`zeus pfo serve`).
            job_metadata: appended to the job id the server makes.
            steps_per_round: steps between reports of measurements to the server and fetches of
                the next schedule (0: never; one schedule for the whole job, as Zeus 0.16).
            timeout_s: limit of each request but the schedule barrier.
            schedule_timeout_s: limit of the schedule barrier.

        Raises:
            TypeError: an argument of the wrong type.
            InvalidArgumentError: an inconsistent job shape, or world_size > 1 without
                torch.distributed initialised.
            PermissionDeniedError: locking clocks needs root or zeusd's gpu-control.
            UnavailableError: the server cannot be reached, or rank 0 could not register.
        """
        for name, value in (("rank", rank), ("dp_rank", dp_rank), ("pp_rank", pp_rank),
                            ("tp_rank", tp_rank), ("device_id", device_id),
                            ("dp_degree", dp_degree), ("pp_degree", pp_degree),
                            ("tp_degree", tp_degree), ("world_size", world_size),
                            ("steps_per_round", steps_per_round)):
            _check_int(name, value)
        if not isinstance(server_url, str):
            raise TypeError(f"server_url must be a str, not {type(server_url).__name__}")
        if job_metadata is not None and not isinstance(job_metadata, str):
            raise TypeError(f"job_metadata must be a str or None, not {type(job_metadata).__name__}")
        broadcast = torch_broadcast(src=0)
        if world_size > 1 and broadcast is None:
            from zeus_cpp import InvalidArgumentError

            raise InvalidArgumentError(
                f"a job of world_size {world_size} needs torch.distributed: call "
                "torch.distributed.init_process_group(...) before creating the "
                "PipelineFrequencyOptimizer (rank 0's job id reaches the other ranks through it)")
        self.rank = rank
        self.dp_rank, self.pp_rank, self.tp_rank = dp_rank, pp_rank, tp_rank
        self.device_id = device_id
        self.world_size = world_size
        self.server_url = server_url
        self._optimizer = _zeus_cpp.PipelineFrequencyOptimizer(
            server_url, device_id, rank, dp_rank, pp_rank, tp_rank, dp_degree, pp_degree,
            tp_degree, world_size, job_metadata=job_metadata, broadcast=broadcast,
            sync=sync_function("torch", [device_id]), steps_per_round=steps_per_round,
            timeout_s=float(timeout_s), schedule_timeout_s=float(schedule_timeout_s))

    def on_step_begin(self) -> None:
        """Marks the beginning of a training iteration."""
        self._optimizer.on_step_begin()

    def on_step_end(self) -> None:
        """Marks its end; the schedule must be fully consumed. At a round's end, reports the
        round's measurements and fetches the next schedule (a barrier over all ranks)."""
        self._optimizer.on_step_end()

    def on_instruction_begin(self, name: str) -> None:
        """Takes the schedule's next (name, MHz) and asks for its clock; `name` ("forward",
        "backward") must match it."""
        self._optimizer.on_instruction_begin(name)

    def on_instruction_end(self, name: str) -> None:
        """Ends the measurement of instruction `name`."""
        self._optimizer.on_instruction_end(name)

    def wait_for_clock(self) -> None:
        """Blocks until the clock asked for last is applied (tests; training never needs it)."""
        self._optimizer.wait_for_clock()

    def stop(self) -> None:
        """Unlocks the GPU's clocks now; idempotent, hooks raise afterwards."""
        self._optimizer.stop()

    @property
    def job_id(self) -> str:
        """The id the server gave the job (the same on every rank)."""
        return self._optimizer.job_id

    @property
    def schedule(self) -> List[Tuple[str, int]]:
        """The current round's (instruction, MHz) list."""
        return list(self._optimizer.schedule)

    @property
    def rounds(self) -> int:
        """Schedules received so far (1 after the constructor)."""
        return self._optimizer.rounds

    @property
    def controller_stats(self) -> Dict[str, float]:
        """What the clock controller did: requests, taken, applied, skipped, failed,
        apply_total_s."""
        return dict(self._optimizer.controller_stats)
