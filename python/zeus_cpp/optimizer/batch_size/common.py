"""The batch-size optimizer's job specification (as `zeus.optimizer.batch_size.common`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Dict, List, Optional


@dataclass
class JobSpec:
    """A recurring training job. Defaults follow the Python Zeus.

    Attributes:
        job_id: the job's id (must start with job_id_prefix); None lets the optimizer generate
            one, which makes every run a new job: set it for real recurrences.
        job_id_prefix: prefix of generated ids.
        batch_sizes: candidate batch sizes (non-empty).
        default_batch_size: one of batch_sizes; pruning explores from it.
        eta_knob: weight of energy against time in the cost, in [0, 1].
        beta_knob: early stop when the cost exceeds beta x the best cost; None: never.
        target_metric: the validation metric that counts as converged.
        higher_is_better_metric: whether a higher metric is better.
        max_epochs: epochs after which a trial stops.
        num_pruning_rounds: pruning exploration rounds before Thompson sampling.
        window_size: only the newest N costs per batch size count (0: all).
        mab_prior_mean, mab_prior_precision: the Gaussian prior of an arm's cost.
        mab_num_explorations: observations per arm before sampling.
        mab_seed: seed of the job's random stream (None: random).
    """

    job_id_prefix: str
    batch_sizes: List[int]
    default_batch_size: int
    job_id: Optional[str] = None
    eta_knob: float = 0.5
    beta_knob: Optional[float] = 2.0
    target_metric: float = 0.50
    higher_is_better_metric: bool = True
    max_epochs: int = 100
    num_pruning_rounds: int = 2
    window_size: int = 0
    mab_prior_mean: float = 0.0
    mab_prior_precision: float = 0.0
    mab_num_explorations: int = 2
    mab_seed: Optional[int] = None

    def to_dict(self) -> Dict[str, Any]:
        """The fields as a dict (the wire names of the service)."""
        return asdict(self)


@dataclass
class TrialId:
    """A dispatched trial: the batch size to train with and its number."""

    job_id: str
    batch_size: int
    trial_number: int


@dataclass
class ReportResponse:
    """The optimizer's answer to a report."""

    stop_train: bool
    converged: bool
    message: str = ""


__all__ = ["JobSpec", "TrialId", "ReportResponse"]
