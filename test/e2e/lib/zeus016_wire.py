"""The wire models of Zeus 0.16's pipeline-frequency optimizer
(`zeus.optimizer.pipeline_frequency.common`), field for field, in pydantic v1, and its routes.
Shared by the e2e tests that speak to `zeus pfo serve` as Zeus's client does."""

from __future__ import annotations

from typing import Optional

from pydantic import BaseModel, Field, validator

REGISTER_JOB_URL = "/register_job"
REGISTER_RANK_URL = "/register_rank/{job_id}"
GET_FREQUENCY_SCHEDULE_URL = "/schedule/{job_id}"
REPORT_PROFILING_RESULT_URL = "/result/{job_id}"


class JobInfo(BaseModel):
    job_id: str = ""
    pp_degree: int = Field(ge=1)
    dp_degree: int = Field(ge=1)
    tp_degree: int = Field(ge=1)
    world_size: int = Field(ge=1)
    job_metadata: Optional[str] = None

    @validator("job_id")
    def _check_empty_job_id(cls, job_id):
        assert not job_id
        return job_id

    @validator("world_size")
    def _check_world_size(cls, world_size, values):
        assert values["pp_degree"] * values["dp_degree"] * values["tp_degree"] == world_size
        return world_size


class RankInfo(BaseModel):
    rank: int = Field(ge=0)
    dp_rank: int = Field(ge=0)
    pp_rank: int = Field(ge=0)
    tp_rank: int = Field(ge=0)
    available_frequencies: list[int]


class FrequencySchedule(BaseModel):
    rank: int = Field(ge=0)
    frequencies: list[tuple[str, int]]


class ProfilingResult(BaseModel):
    rank: int = Field(ge=0)
    iter_time: list[float]
    iter_energy: list[float]
    time_breakdown: dict[str, list[list[float]]] = {}
    energy_breakdown: dict[str, list[list[float]]] = {}
