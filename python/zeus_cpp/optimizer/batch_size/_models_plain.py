"""The batch-size optimizer's wire models without pydantic, and the rules both versions share.

`zeus_cpp.optimizer.batch_size.common` exports these classes when pydantic is not importable
(and pydantic models with the same fields otherwise). They keep pydantic 1's behaviour where a
user can see it:

- keyword-only construction; unknown keywords are ignored (pydantic's default `Extra.ignore`);
- values are coerced as pydantic 1 does it for these types ("16" -> 16, 1 -> 1.0, "yes" -> True,
  a number given for a str -> its text); defaults are not validated;
- every bad field is reported in one `ValidationError` (a ValueError, like pydantic's), with
  upstream's messages; the model-wide checks run only when every field is valid;
- `dict()`, `json()`, `parse_obj()` and `parse_raw()` as in pydantic 1; instances are mutable
  dataclasses (`dataclasses.fields`/`asdict` work), compared field by field.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, List, Optional, Tuple

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


# ---- Upstream's rules, shared with the pydantic models (each raises ValueError). ----


def sorted_batch_sizes(batch_sizes: List[int]) -> List[int]:
    """The batch sizes sorted ascending; an empty list is refused."""
    if batch_sizes is not None and len(batch_sizes) > 0:
        return sorted(batch_sizes)
    raise ValueError(f"Batch Sizes = {batch_sizes} is empty")


def checked_eta_knob(eta_knob: float) -> float:
    """eta_knob, which must lie in [0, 1]."""
    if eta_knob < 0 or eta_knob > 1:
        raise ValueError("eta_knob should be in range [0,1]")
    return eta_knob


def checked_beta_knob(beta_knob: Optional[float]) -> Optional[float]:
    """beta_knob, which must be positive, or None (no early stopping)."""
    if beta_knob is None or beta_knob > 0:
        return beta_knob
    raise ValueError(
        f"Invalid beta_knob({beta_knob}). To disable early stop, set beta_knob = None to disable "
        "or positive value."
    )


def checked_gpu_model(gpu_model: str) -> str:
    """gpu_model, which must not be empty."""
    if gpu_model is None or gpu_model == "":
        raise ValueError(f"Invalid gpu_model({gpu_model}). Shouldn't be empty.")
    return gpu_model


def check_default_batch_size(values: Dict[str, Any]) -> Dict[str, Any]:
    """Refuses a default_batch_size that is not one of batch_sizes."""
    default, sizes = values["default_batch_size"], values["batch_sizes"]
    if default not in sizes:
        raise ValueError(f"Default BS({default}) not in batch_sizes({sizes}).")
    return values


def check_job_id_prefix(values: Dict[str, Any]) -> Dict[str, Any]:
    """Refuses a job_id (when given) that does not start with job_id_prefix."""
    job_id, prefix = values.get("job_id"), values["job_id_prefix"]
    if job_id is not None and not job_id.startswith(prefix):
        raise ValueError(f"Job_id({job_id}) does not start with prefix({prefix}).")
    return values


# ---- Coercion as pydantic 1 does it for the field types used here. ----


class ValidationError(ValueError):
    """One or more fields of a model are invalid (pydantic's ValidationError, without pydantic).

    `errors()` lists them as pydantic does: dicts with "loc" (a tuple: the field, or
    "__root__" for a model-wide check), "msg" and "type".
    """

    def __init__(self, errors: List[Dict[str, Any]], model: str) -> None:
        self._errors = errors
        self.model = model
        lines = [f"{len(errors)} validation error{'s' if len(errors) > 1 else ''} for {model}"]
        for error in errors:
            lines.append(" -> ".join(str(part) for part in error["loc"]))
            lines.append(f"  {error['msg']} (type={error['type']})")
        super().__init__("\n".join(lines))

    def errors(self) -> List[Dict[str, Any]]:
        """The errors, each {"loc": (field,), "msg": text, "type": kind}."""
        return list(self._errors)


class _Invalid(Exception):
    """One field's error: (message, pydantic's error type)."""

    def __init__(self, msg: str, kind: str, where: Tuple[Any, ...] = ()) -> None:
        super().__init__(msg)
        self.msg = msg
        self.kind = kind
        self.where = where  # inside the field: (index,) for a list item


_TRUE = {"1", "on", "t", "true", "y", "yes"}
_FALSE = {"0", "off", "f", "false", "n", "no"}


def _as_int(value: Any) -> int:
    if isinstance(value, int):
        return int(value)
    try:
        if isinstance(value, float):
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError
            return int(value)  # pydantic 1 truncates
        if isinstance(value, (str, bytes)):
            return int(value.strip())
    except ValueError:
        pass
    raise _Invalid("value is not a valid integer", "type_error.integer")


def _as_float(value: Any) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (str, bytes)):
        try:
            return float(value)
        except ValueError:
            pass
    raise _Invalid("value is not a valid float", "type_error.float")


def _as_bool(value: Any) -> bool:
    if value is True or value is False:
        return value
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, str):
        value = value.lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
    elif isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    raise _Invalid("value could not be parsed to a boolean", "type_error.bool")


def _as_str(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)  # pydantic 1 turns numbers (bools included) into their text
    raise _Invalid("str type expected", "type_error.str")


def _as_int_list(value: Any) -> List[int]:
    if isinstance(value, (list, tuple, set, frozenset)):
        items = []
        for index, item in enumerate(value):
            try:
                items.append(_as_int(item))
            except _Invalid as error:
                raise _Invalid(error.msg, error.kind, (index,)) from None
        return items
    raise _Invalid("value is not a valid list", "type_error.list")


_COERCE: Dict[str, Callable[[Any], Any]] = {
    "int": _as_int, "float": _as_float, "bool": _as_bool, "str": _as_str,
    "List[int]": _as_int_list,
}


def _bound(value: Any, gt: Optional[float], ge: Optional[float]) -> Any:
    if gt is not None and not value > gt:
        raise _Invalid(f"ensure this value is greater than {gt}", "value_error.number.not_gt")
    if ge is not None and not value >= ge:
        raise _Invalid(f"ensure this value is greater than or equal to {ge}",
                       "value_error.number.not_ge")
    return value


class _PlainModel:
    """Keyword construction with pydantic 1's coercion, field checks and model checks.

    Subclasses are dataclasses(init=False) whose annotations are among "int", "float", "bool",
    "str", "List[int]" and their Optional[...]; _bounds maps a field to (gt, ge); _checks maps a
    field to its check; _model_checks run, in order, once every field is valid.
    """

    _bounds: ClassVar[Dict[str, Tuple[Optional[float], Optional[float]]]] = {}
    _checks: ClassVar[Dict[str, Callable[[Any], Any]]] = {}
    _model_checks: ClassVar[Tuple[Callable[[Dict[str, Any]], Dict[str, Any]], ...]] = ()

    def __init__(self, **data: Any) -> None:
        """Validates `data` (unknown keys are ignored). Raises ValidationError (a ValueError)."""
        values: Dict[str, Any] = {}
        errors: List[Dict[str, Any]] = []
        for field in dataclasses.fields(self):
            if field.name not in data:
                if field.default is dataclasses.MISSING:
                    errors.append({"loc": (field.name,), "msg": "field required",
                                   "type": "value_error.missing"})
                else:
                    values[field.name] = field.default
                continue
            try:
                values[field.name] = self._validate(field, data[field.name])
            except _Invalid as error:
                errors.append({"loc": (field.name, *error.where), "msg": error.msg,
                               "type": error.kind})
            except ValueError as error:
                errors.append({"loc": (field.name,), "msg": str(error), "type": "value_error"})
        if not errors:
            for check in self._model_checks:
                try:
                    values = check(values)
                except ValueError as error:
                    errors.append({"loc": ("__root__",), "msg": str(error), "type": "value_error"})
                    break
        if errors:
            raise ValidationError(errors, type(self).__name__)
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def _validate(self, field: dataclasses.Field, value: Any) -> Any:
        kind = str(field.type)
        optional = kind.startswith("Optional[")
        if optional:
            kind = kind[len("Optional["):-1]
        if value is None:
            if optional:
                return None
            raise _Invalid("none is not an allowed value", "type_error.none.not_allowed")
        value = _COERCE[kind](value)
        gt, ge = self._bounds.get(field.name, (None, None))
        value = _bound(value, gt, ge)
        check = self._checks.get(field.name)
        return check(value) if check is not None else value

    def dict(self) -> Dict[str, Any]:
        """The fields as a dict, in declaration order (lists are copied)."""
        return {f.name: _copied(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def json(self, **dumps_kwargs: Any) -> str:
        """The fields as JSON text (json.dumps keywords, e.g. indent, are passed on)."""
        return json.dumps(self.dict(), **dumps_kwargs)

    @classmethod
    def parse_obj(cls, obj: Any) -> Any:
        """A model from a dict (ValidationError when `obj` is not one or does not validate)."""
        if isinstance(obj, cls):
            return obj
        if not isinstance(obj, dict):
            raise ValidationError([{"loc": ("__root__",),
                                    "msg": f"{cls.__name__} expected dict not {type(obj).__name__}",
                                    "type": "type_error"}], cls.__name__)
        return cls(**obj)

    @classmethod
    def parse_raw(cls, text: Any) -> Any:
        """A model from JSON text (ValidationError for text that is not JSON)."""
        try:
            obj = json.loads(text)
        except (TypeError, ValueError) as error:
            raise ValidationError([{"loc": ("__root__",), "msg": str(error),
                                    "type": "value_error.jsondecode"}], cls.__name__) from None
        return cls.parse_obj(obj)


def _copied(value: Any) -> Any:
    return list(value) if isinstance(value, list) else value


_PLAIN = dict(init=False, eq=True, repr=True)


@dataclass(**_PLAIN)
class JobParams(_PlainModel):
    r"""A job's parameters (job_id required); see JobSpec for the meaning of each field."""

    job_id: str
    job_id_prefix: str
    batch_sizes: List[int]
    default_batch_size: int
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

    _bounds = {"default_batch_size": (0, None), "max_epochs": (0, None),
               "num_pruning_rounds": (None, 0), "mab_num_explorations": (None, 0)}
    _checks = {"batch_sizes": sorted_batch_sizes, "eta_knob": checked_eta_knob,
               "beta_knob": checked_beta_knob}
    _model_checks = (check_default_batch_size,)


@dataclass(**_PLAIN)
class GpuConfig(_PlainModel):
    """The GPUs of a training run: max_power (W, all GPUs together), number_of_gpus, gpu_model."""

    max_power: float
    number_of_gpus: int
    gpu_model: str

    _bounds = {"max_power": (0, None), "number_of_gpus": (0, None)}
    _checks = {"gpu_model": checked_gpu_model}


@dataclass(**_PLAIN)
class JobSpec(JobParams):
    """The job a user specifies; job_id may be None (the server then generates one)."""

    job_id: Optional[str] = None

    _model_checks = (check_default_batch_size, check_job_id_prefix)


@dataclass(**_PLAIN)
class JobSpecFromClient(JobSpec, GpuConfig):
    """A JobSpec with the GPU fields, as the client registers it (POST /jobs)."""

    _bounds = {**JobParams._bounds, **GpuConfig._bounds}
    _checks = {**JobParams._checks, **GpuConfig._checks}
    _model_checks = JobSpec._model_checks


@dataclass(**_PLAIN)
class CreatedJob(JobParams, GpuConfig):
    """A registered job as the server answers it (job_id required)."""

    _bounds = {**JobParams._bounds, **GpuConfig._bounds}
    _checks = {**JobParams._checks, **GpuConfig._checks}
    _model_checks = JobParams._model_checks


@dataclass(**_PLAIN)
class TrialId(_PlainModel):
    """A dispatched trial (GET /jobs/batch_size; PATCH /trials): job_id, batch_size, trial_number."""

    job_id: str
    batch_size: int
    trial_number: int


@dataclass(**_PLAIN)
class TrainingResult(TrialId):
    """A trial's report (POST /report): cumulative time (s) and energy (J), metric, current_epoch."""

    time: float
    energy: float
    metric: float
    current_epoch: int


@dataclass(**_PLAIN)
class ReportResponse(_PlainModel):
    """The answer to a report: stop_train, converged, and the server's message."""

    stop_train: bool
    converged: bool
    message: str
