"""A batch-size optimizer client that speaks exactly as Zeus 0.16's Python client does.

Written here from Zeus 0.16's documented client (``zeus.optimizer.batch_size.client``) and its
shared models (``zeus.optimizer.batch_size.common``), with the same libraries upstream uses —
httpx for HTTP and pydantic 1 for the bodies — so that tests can drive ``zeus serve`` the way an
unchanged Zeus installation does:

- ``POST /jobs`` with the job spec plus the GPU fields (``max_power``, ``number_of_gpus``,
  ``gpu_model``), every field present, unset ones as ``null``;
- ``GET /jobs/batch_size?job_id=…`` for a trial, then an exit hook that sends
  ``PATCH /trials`` with the trial's id (the server marks a still-dispatched trial failed);
- ``POST /report`` after every epoch with the cumulative time and energy of the trial;
- an answer that says stop without convergence raises ``TrainFail``.

Only the GPU discovery and the energy monitor are replaced: the caller passes the GPU fields and
an object with ``begin_window(name)`` / ``end_window(name)`` returning ``.time`` and
``.total_energy``, as ``ZeusMonitor`` does.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional

import httpx
from pydantic import BaseModel, Field, root_validator, validator

REGISTER_JOB_URL = "/jobs"
GET_NEXT_BATCH_SIZE_URL = "/jobs/batch_size"
REPORT_RESULT_URL = "/report"
REPORT_END_URL = "/trials"
WINDOW = "BatciSizeOptimizerClient"  # upstream's window name, typo included


class JobParams(BaseModel):
    job_id: Optional[str]
    job_id_prefix: str
    batch_sizes: List[int]
    default_batch_size: int = Field(gt=0)
    eta_knob: float = 0.5
    beta_knob: Optional[float] = 2.0
    target_metric: float = 0.50
    higher_is_better_metric: bool = True
    max_epochs: int = Field(default=100, gt=0)
    num_pruning_rounds: int = Field(default=2, ge=0)
    window_size: int = 0
    mab_prior_mean: float = 0.0
    mab_prior_precision: float = 0.0
    mab_num_explorations: int = Field(default=2, ge=0)
    mab_seed: Optional[int] = None

    @validator("batch_sizes")
    def _sorted(cls, sizes: List[int]) -> List[int]:
        if not sizes:
            raise ValueError("batch_sizes is empty")
        return sorted(sizes)

    @root_validator(skip_on_failure=True)
    def _default_in_sizes(cls, values: dict) -> dict:
        if values["default_batch_size"] not in values["batch_sizes"]:
            raise ValueError("default_batch_size not in batch_sizes")
        return values


class JobSpecFromClient(JobParams):
    max_power: float = Field(gt=0)
    number_of_gpus: int = Field(gt=0)
    gpu_model: str


class CreatedJob(JobSpecFromClient):
    job_id: str


class TrialId(BaseModel):
    job_id: str
    batch_size: int
    trial_number: int


class TrainingResult(TrialId):
    time: float
    energy: float
    metric: float
    current_epoch: int


class ReportResponse(BaseModel):
    stop_train: bool
    converged: bool
    message: str


class RuntimeFailure(Exception):
    """The server answered outside 2xx (upstream: ZeusBSORuntimError)."""


class TrainFail(Exception):
    """The trial ended without converging (upstream: ZeusBSOTrainFailError)."""


class UpstreamBatchSizeOptimizer:
    """One training session of a job, step for step as Zeus 0.16's client."""

    def __init__(self, monitor: Any, server_url: str, job: JobParams, max_power_w: float,
                 number_of_gpus: int, gpu_model: str,
                 register_exit_hook: Callable[[Callable[[], None]], None]) -> None:
        self.monitor = monitor
        self.server_url = server_url
        self.cur_epoch = 0
        self.running_time = 0.0
        self.consumed_energy = 0.0
        self.training_finished = False
        self.trial_number = 0
        self.current_batch_size = 0
        self._register_exit_hook = register_exit_hook  # atexit.register in upstream
        spec = JobSpecFromClient(**job.dict(), max_power=max_power_w * number_of_gpus,
                                 number_of_gpus=number_of_gpus, gpu_model=gpu_model)
        res = httpx.post(server_url + REGISTER_JOB_URL, content=spec.json())
        self._check(res)
        self.job = CreatedJob.parse_obj(res.json())

    def get_batch_size(self) -> int:
        if self.current_batch_size != 0:
            return self.current_batch_size
        self.cur_epoch = 0
        res = httpx.get(self.server_url + GET_NEXT_BATCH_SIZE_URL,
                        params={"job_id": self.job.job_id})
        self._check(res)
        trial_id = TrialId.parse_obj(res.json())
        if trial_id.batch_size not in self.job.batch_sizes:
            raise RuntimeFailure(f"strange batch_size {trial_id.batch_size}")
        self.current_batch_size = trial_id.batch_size
        self.trial_number = trial_id.trial_number

        def report_end() -> None:
            httpx.patch(self.server_url + REPORT_END_URL, content=trial_id.json())

        self._register_exit_hook(report_end)
        return trial_id.batch_size

    def on_train_begin(self) -> None:
        self.training_finished = False
        self.monitor.begin_window(WINDOW)

    def on_evaluate(self, metric: float) -> None:
        if self.training_finished:
            return
        self.cur_epoch += 1
        measurement = self.monitor.end_window(WINDOW)
        self.running_time += measurement.time
        self.consumed_energy += measurement.total_energy
        result = TrainingResult(job_id=self.job.job_id, batch_size=self.current_batch_size,
                                trial_number=self.trial_number, time=self.running_time,
                                energy=self.consumed_energy, metric=metric,
                                current_epoch=self.cur_epoch)
        res = httpx.post(self.server_url + REPORT_RESULT_URL, content=result.json())
        self._check(res)
        answer = ReportResponse.parse_obj(res.json())
        if not answer.stop_train:
            self.monitor.begin_window(WINDOW)
        else:
            self.training_finished = True
            if not answer.converged:
                raise TrainFail(f"Train failed: {answer.message}")

    @staticmethod
    def _check(res: httpx.Response) -> None:
        if not 200 <= res.status_code < 300:
            raise RuntimeFailure(f"Zeus server returned status code {res.status_code}: {res.text}")
