"""The batch-size optimizer client (as `zeus.optimizer.batch_size.client`).

    monitor = ZeusMonitor(gpu_indices=[0])
    bso = BatchSizeOptimizer(monitor, "http://127.0.0.1:8000", JobSpec(...))
    batch_size = bso.get_batch_size()
    bso.on_train_begin()
    for epoch in range(max_epochs):
        train(batch_size); bso.on_evaluate(validate())   # raises ZeusBSOTrainFailError / stops

Talks to `zeus serve` with the C++ HTTP client (the wire protocol of the Python Zeus server).
"""

from __future__ import annotations

import atexit
import math
from typing import Optional

from zeus_cpp import _zeus_cpp
from zeus_cpp.monitor.energy import ZeusMonitor
from zeus_cpp.optimizer.batch_size.common import (
    CreatedJob,
    JobSpec,
    JobSpecFromClient,
    ReportResponse,
    TrialId,
)
from zeus_cpp.optimizer.batch_size.exceptions import (
    ZeusBSOBadOperationError,
    ZeusBSOConfigError,
    ZeusBSOOperationOrderError,
    ZeusBSORuntimError,
    ZeusBSOTrainFailError,
)

_WINDOW = "BatciSizeOptimizerClient"  # the Python Zeus's window name, typo included


def connect(server_url: str, token: str = "", timeout_s: float = 10.0) -> "_zeus_cpp.BatchSizeService":
    """The batch-size service at `server_url`.

    Args:
        server_url: "http://host:port" (or https) for `zeus serve`; or, for an optimizer in
            this process, a store URL as `zeus serve --db` takes it: "sqlite:///PATH" (kept
            across runs) or "memory://" (this process only).
        token: bearer token for a server started with one.
        timeout_s: per-request timeout.

    Raises:
        InvalidArgumentError: a malformed URL.
    """
    if not isinstance(server_url, str):
        raise TypeError(f"server_url must be a str, not {type(server_url).__name__}")
    if server_url == "memory://":
        return _zeus_cpp.BatchSizeService.local("")
    if server_url.startswith("sqlite://"):
        path = server_url[len("sqlite://"):]
        if not path:
            from zeus_cpp import InvalidArgumentError

            raise InvalidArgumentError(f"'{server_url}' names no file: use sqlite:///PATH")
        return _zeus_cpp.BatchSizeService.local(path)
    return _zeus_cpp.BatchSizeService.http(server_url, token, timeout_s)


def gpu_fields(monitor: ZeusMonitor) -> dict:
    """max_power (W, x GPUs), number_of_gpus and gpu_model of the monitor's GPUs."""
    if not monitor.gpu_indices:
        raise ZeusBSOConfigError("No GPUs detected.")
    devices = monitor._monitor.devices
    first = devices.gpu(monitor.gpu_indices[0])
    _, max_mw = first.power_limit_range_mw()
    return {
        "max_power": float(max_mw // 1000 * len(monitor.gpu_indices)),
        "number_of_gpus": len(monitor.gpu_indices),
        "gpu_model": first.name,
    }


class BatchSizeOptimizer:
    """Client of the batch-size optimizer service for one training run of a job.

    Call get_batch_size() at the start, on_train_begin() before the first epoch, and
    on_evaluate(metric) after each epoch's validation.
    """

    def __init__(self, monitor: ZeusMonitor, server_url: str, job: JobSpec, rank: int = 0) -> None:
        """Registers the job (an identical registered job is reused).

        Args:
            monitor: measures exactly the GPUs used for training.
            server_url: the service (see connect()).
            job: the job specification.
            rank: only rank 0 asks for a batch size.

        Raises:
            ZeusBSOConfigError: the monitor has no GPU.
            InvalidArgumentError: a spec the server refuses, or the job id exists with
                another spec.
            ValidationError (a ValueError): GPU fields JobSpecFromClient refuses.
            UnavailableError: the server cannot be reached.

        Attributes set: job_spec (the JobSpecFromClient registered) and job (the server's
        CreatedJob, whose job_id is the one to use), as upstream.
        """
        if not isinstance(monitor, ZeusMonitor):
            raise TypeError(f"monitor must be a ZeusMonitor, not {type(monitor).__name__}")
        if not isinstance(job, JobSpec):
            raise TypeError(f"job must be a JobSpec, not {type(job).__name__}")
        self.monitor = monitor
        self.server_url = server_url
        self.rank = rank
        self.cur_epoch = 0
        self.running_time = 0.0
        self.consumed_energy = 0.0
        self.training_finished = False
        self.current_batch_size = 0
        self.trial_number = 0
        self._service = connect(server_url)
        # As upstream: the spec plus the GPU fields, validated, then the server's CreatedJob.
        self.job_spec = JobSpecFromClient(**job.dict(), **gpu_fields(monitor))
        self.job = CreatedJob.parse_obj(self._service.register_job(self.job_spec.dict()))

    def get_batch_size(self) -> int:
        """The batch size of this run (asked once; later calls return the same).

        Raises:
            ZeusBSOBadOperationError: called on a rank other than 0.
        """
        if self.rank != 0:
            raise ZeusBSOBadOperationError("Only rank 0 gpu can ask for a batch size.")
        if self.current_batch_size != 0:
            return self.current_batch_size
        self.cur_epoch = 0
        job_id, batch_size, trial_number = self._service.next_batch_size(self.job.job_id)
        trial = TrialId(job_id=job_id, batch_size=batch_size, trial_number=trial_number)
        if trial.batch_size not in self.job.batch_sizes:
            raise ZeusBSORuntimError(f"Zeus server returned a strange batch_size: {trial.batch_size}")
        self.current_batch_size = trial.batch_size
        self.trial_number = trial.trial_number
        service = self._service

        def report_end() -> None:
            try:
                service.end_trial(trial.job_id, trial.batch_size, trial.trial_number)
            except Exception:  # noqa: BLE001 - best effort at exit
                pass

        atexit.register(report_end)
        return trial.batch_size

    def on_train_begin(self) -> None:
        """Opens the measurement window of the first epoch."""
        self.training_finished = False
        self.monitor.begin_window(_WINDOW)

    def on_evaluate(self, metric: float) -> Optional[ReportResponse]:
        """Reports this epoch (cumulative time and energy, and `metric`); stops when told to.

        A call that fails leaves the optimizer as it was: a bad metric is refused before the
        epoch ends, and a report the service did not take (server unreachable, 503) leaves the
        epoch unreported with its window open again, so the next on_evaluate() reports it, with
        the time and energy measured until then.

        Returns:
            The service's answer (None once training has finished).

        Raises:
            ZeusBSOOperationOrderError: get_batch_size was not called first.
            ZeusBSOTrainFailError: the trial ended without converging.
            InvalidArgumentError: `metric` is not a finite number.
            UnavailableError: the service could not be reached (call again to report the epoch).
        """
        if self.current_batch_size == 0:
            raise ZeusBSOOperationOrderError("Call get_batch_size to set the batch size first")
        if self.training_finished:
            return None
        metric = float(metric)
        if not math.isfinite(metric):
            from zeus_cpp import InvalidArgumentError

            raise InvalidArgumentError(
                f"metric must be a finite number, got {metric} (the epoch is still open: "
                "call on_evaluate again with a finite metric)"
            )
        measurement = self.monitor.end_window(_WINDOW)
        self.running_time += measurement.time
        self.consumed_energy += measurement.total_energy
        try:
            stop_train, converged, message = self._service.report(
                self.job.job_id,
                self.current_batch_size,
                self.trial_number,
                self.running_time,
                self.consumed_energy,
                metric,
                self.cur_epoch + 1,
            )
            response = ReportResponse(stop_train=stop_train, converged=converged, message=message)
        except BaseException:
            # Not reported: measure on, so that the next call reports this epoch.
            self.monitor.begin_window(_WINDOW)
            raise
        self.cur_epoch += 1
        if not response.stop_train:
            self.monitor.begin_window(_WINDOW)
        else:
            self.training_finished = True
            if not response.converged:
                raise ZeusBSOTrainFailError(
                    f"Train failed: {response.message} This batch size will not be selected "
                    "again. Please re-launch the training"
                )
        return response


__all__ = ["BatchSizeOptimizer", "connect"]
