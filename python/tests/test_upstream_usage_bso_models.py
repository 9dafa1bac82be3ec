"""Upstream Zeus's batch-size optimizer models, used as an upstream user types them.

`zeus.optimizer.batch_size.common` with `zeus` -> `zeus_cpp`: the route names, the models' fields,
defaults, coercion and validation errors (messages as upstream's), their serialisation to the
wire `zeus serve` speaks (driven over HTTP exactly as upstream's client does), and the same
models without pydantic: every model test runs on the pydantic models ("pydantic") and on the
dataclasses the module falls back to ("plain"); a subprocess that cannot import pydantic checks
that the module, and the client on top of it, pick the dataclasses and work.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from zeus_cpp.optimizer.batch_size import _models_plain, common
from zeus_cpp.optimizer.batch_size.common import (
    DELETE_JOB_URL,
    GET_NEXT_BATCH_SIZE_URL,
    REGISTER_JOB_URL,
    REPORT_END_URL,
    REPORT_RESULT_URL,
)

UPSTREAM_DEFAULTS = {
    "job_id": None, "eta_knob": 0.5, "beta_knob": 2.0, "target_metric": 0.5,
    "higher_is_better_metric": True, "max_epochs": 100, "num_pruning_rounds": 2, "window_size": 0,
    "mab_prior_mean": 0.0, "mab_prior_precision": 0.0, "mab_num_explorations": 2, "mab_seed": None,
}
JOB_FIELDS = ["job_id", "job_id_prefix", "batch_sizes", "default_batch_size", "eta_knob",
              "beta_knob", "target_metric", "higher_is_better_metric", "max_epochs",
              "num_pruning_rounds", "window_size", "mab_prior_mean", "mab_prior_precision",
              "mab_num_explorations", "mab_seed"]
GPU_FIELDS = ["max_power", "number_of_gpus", "gpu_model"]


@pytest.fixture(params=["pydantic", "plain"])
def m(request):
    """The models as `common` exports them with pydantic, or its pydantic-free fallback."""
    if request.param == "pydantic":
        assert common.PYDANTIC, "Debian's python3-pydantic is installed for /usr/bin/python3"
        return common
    return _models_plain


def test_route_names_are_upstreams():
    assert (REGISTER_JOB_URL, DELETE_JOB_URL, GET_NEXT_BATCH_SIZE_URL, REPORT_RESULT_URL,
            REPORT_END_URL) == ("/jobs", "/jobs", "/jobs/batch_size", "/report", "/trials")


def test_with_pydantic_the_models_are_pydantic_v1_models():
    import pydantic

    if pydantic.VERSION.startswith("1."):
        base, error = pydantic.BaseModel, pydantic.ValidationError
    else:  # pydantic 2: its v1 API, as upstream's zeus.utils.pydantic_v1
        import pydantic.v1

        base, error = pydantic.v1.BaseModel, pydantic.v1.ValidationError
    for name in ["JobParams", "GpuConfig", "JobSpec", "JobSpecFromClient", "CreatedJob",
                 "TrialId", "TrainingResult", "ReportResponse"]:
        assert issubclass(getattr(common, name), base), name
    assert common.ValidationError is error
    with pytest.raises(error):
        common.JobSpec(job_id_prefix="a", batch_sizes=[], default_batch_size=8)


def test_class_hierarchy_is_upstreams(m):
    assert issubclass(m.JobSpec, m.JobParams)
    assert issubclass(m.JobSpecFromClient, m.JobSpec) and issubclass(m.JobSpecFromClient, m.GpuConfig)
    assert issubclass(m.CreatedJob, m.JobParams) and issubclass(m.CreatedJob, m.GpuConfig)
    assert not issubclass(m.CreatedJob, m.JobSpec)
    assert issubclass(m.TrainingResult, m.TrialId)
    assert issubclass(m.ValidationError, ValueError)


def test_job_spec_defaults_sorting_and_field_order(m):
    sizes = [256, 32, 128, 64]
    job = m.JobSpec(job_id_prefix="mnist", batch_sizes=sizes, default_batch_size=128)
    assert list(job.dict()) == JOB_FIELDS
    assert {k: v for k, v in job.dict().items() if k in UPSTREAM_DEFAULTS} == UPSTREAM_DEFAULTS
    assert job.batch_sizes == [32, 64, 128, 256]  # upstream sorts them
    assert sizes == [256, 32, 128, 64]  # ... in its own copy
    assert job.job_id is None and job.beta_knob == 2.0 and job.max_epochs == 100
    # Upstream's client builds the registration from job.dict(); GPU fields come first there.
    spec = m.JobSpecFromClient(**job.dict(), max_power=2800, number_of_gpus=4, gpu_model="A100")
    assert list(spec.dict()) == GPU_FIELDS + JOB_FIELDS
    assert isinstance(spec.max_power, float) and spec.max_power == 2800.0


def test_values_are_coerced_as_pydantic_1_does(m):
    job = m.JobSpec(job_id="bert-1", job_id_prefix="bert", batch_sizes=("16", 8.0),
                    default_batch_size="16", eta_knob=1, beta_knob=None, max_epochs="3",
                    higher_is_better_metric="false", mab_seed="7")
    assert job.batch_sizes == [8, 16] and all(type(b) is int for b in job.batch_sizes)
    assert type(job.default_batch_size) is int and job.default_batch_size == 16
    assert type(job.eta_knob) is float and job.eta_knob == 1.0
    assert job.beta_knob is None  # None disables early stopping
    assert job.max_epochs == 3 and job.higher_is_better_metric is False and job.mab_seed == 7
    result = m.TrainingResult(job_id=5, batch_size=8, trial_number=1, time=2, energy="3.5",
                              metric=0, current_epoch=1)
    assert result.job_id == "5" and type(result.time) is float and result.energy == 3.5


BAD_JOBS = [
    ({"batch_sizes": []}, "batch_sizes", "Batch Sizes = [] is empty"),
    ({"batch_sizes": "8,16"}, "batch_sizes", "value is not a valid list"),
    ({"batch_sizes": [8, "x"]}, "batch_sizes", "value is not a valid integer"),  # loc (.., 1)
    ({"default_batch_size": 0, "batch_sizes": [0, 8]}, "default_batch_size",
     "ensure this value is greater than 0"),
    ({"eta_knob": 1.5}, "eta_knob", "eta_knob should be in range [0,1]"),
    ({"eta_knob": -0.1}, "eta_knob", "eta_knob should be in range [0,1]"),
    ({"beta_knob": 0}, "beta_knob", "Invalid beta_knob(0.0). To disable early stop, set beta_knob "
     "= None to disable or positive value."),
    ({"max_epochs": 0}, "max_epochs", "ensure this value is greater than 0"),
    ({"num_pruning_rounds": -1}, "num_pruning_rounds", "ensure this value is greater than or equal to 0"),
    ({"mab_num_explorations": -1}, "mab_num_explorations", "ensure this value is greater than or equal to 0"),
    ({"higher_is_better_metric": "maybe"}, "higher_is_better_metric", "value could not be parsed to a boolean"),
    ({"job_id_prefix": None}, "job_id_prefix", "none is not an allowed value"),
    ({"default_batch_size": 24}, "__root__", "Default BS(24) not in batch_sizes([8, 16, 32])."),
    ({"job_id": "gpt-1"}, "__root__", "Job_id(gpt-1) does not start with prefix(bert)."),
]


@pytest.mark.parametrize("bad, field, message", BAD_JOBS, ids=[f"{b[1]}-{i}" for i, b in enumerate(BAD_JOBS)])
def test_job_spec_validation_errors_are_upstreams(m, bad, field, message):
    spec = {"job_id_prefix": "bert", "batch_sizes": [32, 8, 16], "default_batch_size": 16}
    spec.update(bad)
    with pytest.raises(ValueError) as raised:
        m.JobSpec(**spec)
    assert isinstance(raised.value, m.ValidationError)
    assert [(e["loc"][0], e["msg"]) for e in raised.value.errors()] == [(field, message)]
    assert message in str(raised.value) and "validation error for JobSpec" in str(raised.value)


def test_a_bad_list_item_is_located(m):
    with pytest.raises(ValueError) as raised:
        m.JobSpec(job_id_prefix="a", batch_sizes=[8, 16, "x"], default_batch_size=8)
    assert [e["loc"] for e in raised.value.errors()] == [("batch_sizes", 2)]


def test_every_bad_field_is_reported_and_model_checks_wait_for_valid_fields(m):
    with pytest.raises(ValueError) as raised:
        m.JobSpec(job_id="x", job_id_prefix="bert", batch_sizes=[8], default_batch_size=16,
                  eta_knob=3, max_epochs=-1)
    # Both field errors; the root checks (prefix, default in sizes) are skipped, as upstream.
    assert [e["loc"] for e in raised.value.errors()] == [("eta_knob",), ("max_epochs",)]
    assert str(raised.value).startswith("2 validation errors for JobSpec")


def test_required_fields_and_unknown_keys(m):
    with pytest.raises(ValueError) as raised:
        m.JobParams(job_id_prefix="a", batch_sizes=[8], default_batch_size=8)  # job_id is required
    assert [(e["loc"], e["msg"]) for e in raised.value.errors()] == [(("job_id",), "field required")]
    with pytest.raises(ValueError, match="field required"):
        m.ReportResponse(stop_train=True, converged=False)  # message has no default upstream
    with pytest.raises(ValueError) as raised:
        m.TrainingResult(job_id="a", batch_size=8, trial_number=1)
    assert [e["loc"][0] for e in raised.value.errors()] == ["time", "energy", "metric", "current_epoch"]
    # Upstream's conftest passes a "seed" key JobSpec does not have: it is ignored.
    job = m.JobSpec.parse_obj({"job_id": "test-1", "job_id_prefix": "test", "seed": 1,
                               "batch_sizes": [32, 1024], "default_batch_size": 1024})
    assert not hasattr(job, "seed") and "seed" not in job.dict()
    with pytest.raises(TypeError):
        m.JobSpec("bert", [8], 8)  # keyword-only, as pydantic


def test_gpu_config_validation_is_upstreams(m):
    assert m.GpuConfig(max_power=300, number_of_gpus=1, gpu_model="A40").dict() == {
        "max_power": 300.0, "number_of_gpus": 1, "gpu_model": "A40"}
    with pytest.raises(ValueError) as raised:
        m.GpuConfig(max_power=0, number_of_gpus=0, gpu_model="")
    assert [(e["loc"][0], e["msg"]) for e in raised.value.errors()] == [
        ("max_power", "ensure this value is greater than 0"),
        ("number_of_gpus", "ensure this value is greater than 0"),
        ("gpu_model", "Invalid gpu_model(). Shouldn't be empty."),
    ]
    job = m.JobSpec(job_id_prefix="a", batch_sizes=[8], default_batch_size=8)
    with pytest.raises(ValueError, match="gpu_model"):
        m.JobSpecFromClient(**job.dict(), max_power=300, number_of_gpus=1, gpu_model="")


def test_json_round_trips_and_parse_raw(m):
    result = m.TrainingResult(job_id="a-1", batch_size=8, trial_number=2, time=1.5, energy=300,
                              metric=0.25, current_epoch=1)
    assert json.loads(result.json()) == {"job_id": "a-1", "batch_size": 8, "trial_number": 2,
                                         "time": 1.5, "energy": 300.0, "metric": 0.25,
                                         "current_epoch": 1}
    assert m.TrainingResult.parse_raw(result.json()) == result
    assert m.TrialId.parse_obj({"job_id": "a-1", "batch_size": 8, "trial_number": 2}).trial_number == 2
    with pytest.raises(ValueError):
        m.TrialId.parse_raw("not json")
    with pytest.raises(ValueError):
        m.TrialId.parse_obj(["a-1", 8, 2])


def test_plain_models_are_dataclasses():
    job = _models_plain.JobSpec(job_id_prefix="a", batch_sizes=[8], default_batch_size=8)
    assert dataclasses.is_dataclass(job)
    assert [f.name for f in dataclasses.fields(_models_plain.CreatedJob)] == GPU_FIELDS + JOB_FIELDS
    assert dataclasses.asdict(job) == job.dict()
    assert repr(job).startswith("JobSpec(job_id=None, job_id_prefix='a', batch_sizes=[8]")


def test_the_same_inputs_serialise_as_the_upstream_client_stand_in(m):
    # upstream_bso_client.py holds the models as Zeus 0.16's client sends them (pydantic 1).
    import upstream_bso_client as upstream

    fields = dict(job_id="llama-7", job_id_prefix="llama", batch_sizes=[4, 2, 8],
                  default_batch_size=4, beta_knob=None, mab_seed=3)
    gpus = dict(max_power=1400, number_of_gpus=2, gpu_model="NVIDIA H100 80GB HBM3")
    ours = m.JobSpecFromClient(**m.JobSpec(**fields).dict(), **gpus)
    theirs = upstream.JobSpecFromClient(**upstream.JobParams(**fields).dict(), **gpus)
    assert json.loads(ours.json()) == json.loads(theirs.json())
    trial = dict(job_id="llama-7", batch_size=4, trial_number=1)
    assert json.loads(m.TrialId(**trial).json()) == json.loads(upstream.TrialId(**trial).json())


@pytest.fixture
def served(tmp_path):
    """`zeus serve` on a free port with an in-memory store; yields its URL."""
    zeus = Path(os.environ["ZEUS_BIN"]) / "zeus"
    process = subprocess.Popen([str(zeus), "serve", "--db", "memory://", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = process.stdout.readline()
    match = re.search(r"listening on (http://\S+)", line)
    assert match, line
    yield match.group(1)
    process.terminate()
    process.wait(timeout=10)


def test_the_models_speak_the_wire_of_zeus_serve(m, served):
    # Upstream's client, step by step, with our models in its place.
    job = m.JobSpec(job_id_prefix="resnet", batch_sizes=[128, 64, 256], default_batch_size=128,
                    target_metric=0.9, max_epochs=5, mab_seed=1)
    spec = m.JobSpecFromClient(**job.dict(), max_power=700, number_of_gpus=1,
                               gpu_model="NVIDIA H100 80GB HBM3")
    res = httpx.post(served + REGISTER_JOB_URL, content=spec.json())
    assert res.status_code == 201, res.text  # created, as upstream's server answers
    created = m.CreatedJob.parse_obj(res.json())  # our server's extra fields are ignored
    assert isinstance(created, m.CreatedJob) and created.job_id.startswith("resnet")
    assert created.batch_sizes == [64, 128, 256] and created.max_power == 700.0
    assert created.gpu_model == "NVIDIA H100 80GB HBM3" and created.target_metric == 0.9
    # The next recurrence registers the same job under its id: 200, the same job.
    again = m.JobSpecFromClient(**{**spec.dict(), "job_id": created.job_id})
    res = httpx.post(served + REGISTER_JOB_URL, content=again.json())
    assert res.status_code == 200, res.text
    assert m.CreatedJob.parse_obj(res.json()) == created

    res = httpx.get(served + GET_NEXT_BATCH_SIZE_URL, params={"job_id": created.job_id})
    assert res.status_code == 200, res.text
    trial = m.TrialId.parse_obj(res.json())
    assert (trial.job_id, trial.batch_size) == (created.job_id, 128)

    answers = []
    for epoch, metric in [(1, 0.5), (2, 0.95)]:
        result = m.TrainingResult(job_id=trial.job_id, batch_size=trial.batch_size,
                                  trial_number=trial.trial_number, time=10.0 * epoch,
                                  energy=2000.0 * epoch, metric=metric, current_epoch=epoch)
        res = httpx.post(served + REPORT_RESULT_URL, content=result.json())
        assert res.status_code == 200, res.text
        answers.append(m.ReportResponse.parse_obj(res.json()))
    assert [(a.stop_train, a.converged) for a in answers] == [(False, False), (True, True)]
    assert all(isinstance(a.message, str) and a.message for a in answers)

    res = httpx.patch(served + REPORT_END_URL, content=trial.json())
    assert res.is_success, res.text
    trials = httpx.get(f"{served}/jobs/{created.job_id}").json()["trials"]
    assert [(t["batch_size"], t["status"]) for t in trials] == [(128, "converged")]

    res = httpx.delete(served + DELETE_JOB_URL, params={"job_id": created.job_id})
    assert res.is_success, res.text
    assert httpx.get(f"{served}/jobs/{created.job_id}").status_code == 404


def test_the_client_registers_a_job_spec_from_client_and_keeps_the_created_job(fake_nvml):
    from zeus_cpp.monitor import ZeusMonitor
    from zeus_cpp.optimizer.batch_size import BatchSizeOptimizer, JobSpec

    job = JobSpec(job_id="vit-1", job_id_prefix="vit", batch_sizes=[16, 8], default_batch_size=16,
                  target_metric=0.5, max_epochs=3, mab_seed=1)
    bso = BatchSizeOptimizer(ZeusMonitor(sync_execution_with=None), "memory://", job)
    assert isinstance(bso.job_spec, common.JobSpecFromClient)
    assert (bso.job_spec.max_power, bso.job_spec.number_of_gpus, bso.job_spec.gpu_model) == (
        700.0, 1, "NVIDIA H100 80GB HBM3")  # the fake NVML's H100
    assert isinstance(bso.job, common.CreatedJob) and bso.job.job_id == "vit-1"
    assert bso.get_batch_size() == 16
    bso.on_train_begin()
    answer = bso.on_evaluate(0.7)
    assert isinstance(answer, common.ReportResponse) and answer.stop_train and answer.converged


BLOCK_PYDANTIC = """
import importlib.abc, sys

class _NoPydantic(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "pydantic" or name.startswith("pydantic."):
            raise ImportError(f"No module named {name!r} (blocked by the test)")
        return None

sys.meta_path.insert(0, _NoPydantic())
"""


def test_without_pydantic_the_module_and_the_client_use_dataclasses(fake_nvml):
    script = BLOCK_PYDANTIC + textwrap.dedent("""
        import dataclasses
        from zeus_cpp.optimizer.batch_size import common
        from zeus_cpp.optimizer.batch_size.common import (
            JobSpec, JobSpecFromClient, CreatedJob, TrialId, TrainingResult, ReportResponse)
        from zeus_cpp.optimizer.batch_size import BatchSizeOptimizer
        from zeus_cpp.monitor import ZeusMonitor

        assert common.PYDANTIC is False
        assert not any(n == "pydantic" or n.startswith("pydantic.") for n in sys.modules)
        assert JobSpec.__module__ == "zeus_cpp.optimizer.batch_size._models_plain"
        job = JobSpec(job_id="cnn-1", job_id_prefix="cnn", batch_sizes=[64, 32], default_batch_size=32,
                      max_epochs=2)
        assert dataclasses.is_dataclass(job) and job.batch_sizes == [32, 64]
        for bad, message in [(dict(eta_knob=2), "eta_knob should be in range [0,1]"),
                             (dict(default_batch_size=48), "Default BS(48) not in batch_sizes([32, 64])."),
                             (dict(job_id="rnn-1"), "Job_id(rnn-1) does not start with prefix(cnn).")]:
            kwargs = dict(job_id_prefix="cnn", batch_sizes=[32, 64], default_batch_size=32)
            kwargs.update(bad)
            try:
                JobSpec(**kwargs)
            except ValueError as error:
                assert message in str(error), str(error)
            else:
                raise AssertionError(f"{bad} was accepted")
        bso = BatchSizeOptimizer(ZeusMonitor(sync_execution_with=None), "memory://", job)
        assert type(bso.job) is CreatedJob and type(bso.job_spec) is JobSpecFromClient
        assert bso.get_batch_size() == 32
        bso.on_train_begin()
        answer = bso.on_evaluate(0.9)
        assert type(answer) is ReportResponse and answer.converged and answer.stop_train
        print("plain models OK")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "plain models OK"
