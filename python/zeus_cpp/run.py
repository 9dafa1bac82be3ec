"""The paper's Listing 1: a data loader that runs a recurring job the Zeus way.

    train_loader = ZeusDataLoader(train_set, job=JobSpec(...), server_url="http://127.0.0.1:8000")
    eval_loader = DataLoader(eval_set, batch_size=train_loader.batch_size)
    for epoch_number in train_loader.epochs():
        for batch in train_loader:
            learn(batch)
        train_loader.report_metric(evaluate(eval_loader))

The batch size comes from the batch-size optimizer (pruning, then Thompson sampling across
recurrences); the first epoch profiles power limits (JIT power-limit optimizer) and the rest
runs at the best one; each epoch's time and GPU energy are reported, and epochs() stops when
the target metric is reached, the cost bound is crossed or max_epochs is hit. Built on the C++
TrainingLoop: every step callback releases the GIL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Optional

from zeus_cpp import ZeusError, _zeus_cpp
from zeus_cpp.monitor.energy import ZeusMonitor
from zeus_cpp.optimizer.batch_size.client import connect, gpu_fields
from zeus_cpp.optimizer.batch_size.common import JobSpec
from zeus_cpp.optimizer.power_limit import OptimumSelector, ZeusCost, core_selector


@dataclass
class EpochReport:
    """The optimizer's answer after an epoch."""

    stop_train: bool
    converged: bool
    message: str


class ZeusDataLoader:
    """Iterates a dataset in batches of the optimizer's batch size, driving Zeus per step."""

    def __init__(
        self,
        dataset: Any = None,
        job: Optional[JobSpec] = None,
        *,
        monitor: Optional[ZeusMonitor] = None,
        server_url: str = "memory://",
        optimize_power_limit: bool = True,
        optimum_selector: Optional[OptimumSelector] = None,
        warmup_steps: int = 10,
        profile_steps: int = 40,
        pl_step: int = 25,
        loader_factory: Optional[Callable[[int], Iterable[Any]]] = None,
        **dataloader_kwargs: Any,
    ) -> None:
        """Registers the job, gets this run's batch size and prepares the power-limit optimizer.

        Args:
            dataset: what to iterate (a torch Dataset: wrapped in torch.utils.data.DataLoader
                with the chosen batch size and dataloader_kwargs).
            job: the recurring job (JobSpec).
            monitor: the ZeusMonitor of the training GPUs (default: all GPUs).
            server_url: "http://host:port" for `zeus serve`; "sqlite:///PATH" or "memory://"
                for an optimizer in this process.
            optimize_power_limit: run the JIT power-limit optimizer in the first epoch.
            optimum_selector: its selector (default ZeusCost(eta_knob=job.eta_knob)).
            warmup_steps, profile_steps, pl_step: as GlobalPowerLimitOptimizer's.
            loader_factory: instead of a dataset: batch_size -> an iterable of batches.

        Raises:
            TypeError: neither dataset nor loader_factory, or a job that is not a JobSpec.
            ZeusError subclasses: from the service, the monitor or the devices.
        """
        if not isinstance(job, JobSpec):
            raise TypeError(f"job must be a JobSpec, not {type(job).__name__}")
        if dataset is None and loader_factory is None:
            raise TypeError("ZeusDataLoader needs a dataset or a loader_factory")
        self.monitor = monitor if monitor is not None else ZeusMonitor()
        if optimum_selector is None:
            optimum_selector = ZeusCost(eta_knob=job.eta_knob)
        spec = job.dict()
        spec.update(gpu_fields(self.monitor))
        self._service = connect(server_url)
        self._loop = _zeus_cpp.TrainingLoop(
            self._service,
            self.monitor._monitor,
            spec,
            optimize_power_limit=optimize_power_limit,
            selector=core_selector(optimum_selector),
            warmup_steps=warmup_steps,
            profile_steps=profile_steps,
            pl_step_w=pl_step,
        )
        self.batch_size: int = self._loop.batch_size
        self.job_id: str = self._loop.trial[0]
        self.trial_number: int = self._loop.trial[2]
        if loader_factory is not None:
            self._loader = loader_factory(self.batch_size)
        else:
            from torch.utils.data import DataLoader

            self._loader = DataLoader(dataset, batch_size=self.batch_size, **dataloader_kwargs)

    def epochs(self) -> Iterator[int]:
        """Yields epoch numbers (from 0) while training should go on.

        Raises:
            ZeusError: when starting an epoch failed (e.g. the previous epoch was not reported).
        """
        while self._loop.next_epoch():
            yield self._loop.epochs_done
        if self._loop.error is not None:
            raise ZeusError(self._loop.error)

    def __iter__(self) -> Iterator[Any]:
        """The batches of one epoch; each step is forwarded to the power-limit optimizer."""
        for batch in self._loader:
            self._loop.on_step_begin()
            yield batch
            self._loop.on_step_end()

    def __len__(self) -> int:
        return len(self._loader)  # type: ignore[arg-type]

    def report_metric(self, metric: float) -> EpochReport:
        """Ends the epoch after evaluation: reports cumulative time and energy and `metric`."""
        return EpochReport(*self._loop.report_metric(float(metric)))

    def close(self) -> None:
        """Ends the run now: an unfinished trial is marked failed, power limits are restored."""
        self._loop.close()

    @property
    def epochs_done(self) -> int:
        """Epochs reported so far."""
        return self._loop.epochs_done

    @property
    def time(self) -> float:
        """Cumulative training time of this trial (s)."""
        return self._loop.time_s

    @property
    def energy(self) -> float:
        """Cumulative GPU energy of this trial (J)."""
        return self._loop.energy_j

    @property
    def optimal_power_limit(self) -> Optional[int]:
        """The power limit (W) the JIT profiler chose, once it is done."""
        return self._loop.optimal_power_limit_w


__all__ = ["ZeusDataLoader", "EpochReport"]
