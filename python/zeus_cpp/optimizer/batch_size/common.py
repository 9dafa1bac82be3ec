"""The batch-size optimizer's shared models and routes (as `zeus.optimizer.batch_size.common`).

    job = JobSpec(job_id="resnet50-1", job_id_prefix="resnet50", batch_sizes=[64, 128, 256],
                  default_batch_size=128, eta_knob=0.5, beta_knob=2.0, max_epochs=90)
    body = JobSpecFromClient(**job.dict(), max_power=2800, number_of_gpus=4,
                             gpu_model="NVIDIA A100-SXM4-40GB").json()   # POST /jobs

The models are upstream Zeus's, with its fields, defaults and validators: pydantic (v1 API)
models when pydantic is importable (pydantic 2 through `pydantic.v1`), otherwise dataclasses
with the same fields, checks and messages, whose errors are `ValidationError`, a ValueError like
pydantic's (see `_models_plain`). `PYDANTIC` says which. Both serialise to the wire of the
Python Zeus server, which `zeus serve` speaks:

- POST `REGISTER_JOB_URL` (/jobs) with a JobSpecFromClient; the answer is a CreatedJob;
- GET `GET_NEXT_BATCH_SIZE_URL` (/jobs/batch_size?job_id=...); the answer is a TrialId;
- POST `REPORT_RESULT_URL` (/report) with a TrainingResult; the answer is a ReportResponse;
- PATCH `REPORT_END_URL` (/trials) with a TrialId when a run ends;
- DELETE `DELETE_JOB_URL` (/jobs?job_id=...) deletes a job.
"""

from __future__ import annotations

REGISTER_JOB_URL = "/jobs"
DELETE_JOB_URL = "/jobs"
GET_NEXT_BATCH_SIZE_URL = "/jobs/batch_size"
REPORT_RESULT_URL = "/report"
REPORT_END_URL = "/trials"


def _pydantic_importable() -> bool:
    """Whether pydantic with the v1 API (pydantic 1, or pydantic 2's pydantic.v1) imports."""
    try:
        import pydantic.v1  # noqa: F401
        return True
    except ImportError:
        pass
    try:
        import pydantic
    except ImportError:
        return False
    return str(getattr(pydantic, "VERSION", "")).startswith("1.")


PYDANTIC: bool = _pydantic_importable()

if PYDANTIC:
    from zeus_cpp.optimizer.batch_size._models_pydantic import (
        CreatedJob,
        GpuConfig,
        JobParams,
        JobSpec,
        JobSpecFromClient,
        ReportResponse,
        TrainingResult,
        TrialId,
        ValidationError,
    )
else:
    from zeus_cpp.optimizer.batch_size._models_plain import (  # type: ignore[assignment]
        CreatedJob,
        GpuConfig,
        JobParams,
        JobSpec,
        JobSpecFromClient,
        ReportResponse,
        TrainingResult,
        TrialId,
        ValidationError,
    )

__all__ = [
    "REGISTER_JOB_URL",
    "DELETE_JOB_URL",
    "GET_NEXT_BATCH_SIZE_URL",
    "REPORT_RESULT_URL",
    "REPORT_END_URL",
    "PYDANTIC",
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
