"""The batch-size optimizer's wire models as pydantic (v1 API) models.

Imported by `zeus_cpp.optimizer.batch_size.common` when pydantic is importable: with pydantic 2
through its `pydantic.v1` package (as upstream's `zeus.utils.pydantic_v1` does), with pydantic 1
directly. Fields, defaults, constraints and validators are upstream Zeus's; the rules themselves
live in `_models_plain` so that both versions say the same.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

try:  # pydantic 2 (and 1.10.17+) keep the v1 API here
    from pydantic.v1 import BaseModel, Field, ValidationError, root_validator, validator
except ImportError:  # pydantic 1
    from pydantic import BaseModel, Field, ValidationError, root_validator, validator  # type: ignore

from zeus_cpp.optimizer.batch_size import _models_plain as _rules

__all__ = [
    "ValidationError",
    "JobParams",
    "GpuConfig",
    "JobSpec",
    "JobSpecFromClient",
    "CreatedJob",
    "TrialId",
    "TrainingResult",
    "ReportResponse",
]


class JobParams(BaseModel):
    r"""A recurring training job's parameters (job_id required).

    Attributes:
        job_id: the job's unique id.
        job_id_prefix: prefix of the job's id (ids the server generates start with it).
        batch_sizes: candidate batch sizes (non-empty; kept sorted ascending).
        default_batch_size: the first batch size to try (> 0, one of batch_sizes).
        eta_knob: $\eta$ in [0, 1], the weight of energy against time in `zeus_cost`.
        beta_knob: a trial costing more than beta_knob x the least cost so far is stopped
            (> 0); None disables early stopping.
        target_metric: the validation metric that counts as converged.
        higher_is_better_metric: whether reaching the target means going above it.
        max_epochs: epochs after which a trial stops (> 0).
        num_pruning_rounds: pruning rounds before Thompson sampling (>= 0).
        window_size: only the newest N measurements per batch size count (0: all).
        mab_prior_mean: mean of the belief prior distribution.
        mab_prior_precision: precision of the belief prior distribution.
        mab_num_explorations: static explorations per arm without observations (>= 0).
        mab_seed: seed of the job's random stream (None: random).
    """

    job_id: str
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
    def _validate_batch_sizes(cls, batch_sizes: List[int]) -> List[int]:
        return _rules.sorted_batch_sizes(batch_sizes)

    @validator("eta_knob")
    def _validate_eta_knob(cls, eta_knob: float) -> float:
        return _rules.checked_eta_knob(eta_knob)

    @validator("beta_knob")
    def _validate_beta_knob(cls, beta_knob: Optional[float]) -> Optional[float]:
        return _rules.checked_beta_knob(beta_knob)

    @root_validator(skip_on_failure=True)
    def _check_default_batch_size(cls, values: Dict[str, Any]) -> Dict[str, Any]:
        return _rules.check_default_batch_size(values)


class GpuConfig(BaseModel):
    """The GPUs of a training run.

    Attributes:
        max_power: the GPUs' maximum power limit, summed over all of them (W, > 0).
        number_of_gpus: how many GPUs train (> 0).
        gpu_model: the GPUs' model name (not empty).
    """

    max_power: float = Field(gt=0)
    number_of_gpus: int = Field(gt=0)
    gpu_model: str

    @validator("gpu_model")
    def _validate_gpu_model(cls, gpu_model: str) -> str:
        return _rules.checked_gpu_model(gpu_model)


class JobSpec(JobParams):
    """The job a user specifies: JobParams with an optional job_id.

    Attributes:
        job_id: the job's id (must start with job_id_prefix); None lets the server generate one,
            which makes every run a new job: set it for real recurrences.
    """

    job_id: Optional[str]

    @root_validator(skip_on_failure=True)
    def _check_job_id(cls, values: Dict[str, Any]) -> Dict[str, Any]:
        return _rules.check_job_id_prefix(values)


class JobSpecFromClient(JobSpec, GpuConfig):
    """A JobSpec with the GPU fields, as the client registers it (POST /jobs)."""


class CreatedJob(JobParams, GpuConfig):
    """A registered job as the server answers it (job_id required)."""


class TrialId(BaseModel):
    """A dispatched trial (the answer to GET /jobs/batch_size; the body of PATCH /trials).

    Attributes:
        job_id: the job's id.
        batch_size: the batch size to train with.
        trial_number: the trial's number within the job.
    """

    job_id: str
    batch_size: int
    trial_number: int


class TrainingResult(TrialId):
    """A trial's report after an epoch (POST /report).

    Attributes:
        time: the trial's total time so far (s).
        energy: the trial's total energy so far (J).
        metric: the validation metric after current_epoch.
        current_epoch: the epoch just finished (the server stops the trial at max_epochs).
    """

    time: float
    energy: float
    metric: float
    current_epoch: int


class ReportResponse(BaseModel):
    """The server's answer to a report.

    Attributes:
        stop_train: whether training should stop.
        converged: whether the target metric was reached.
        message: the server's explanation (e.g. why training should stop).
    """

    stop_train: bool
    converged: bool
    message: str
