"""The JIT power-limit optimizer (as `zeus.optimizer.power_limit`).

    monitor = ZeusMonitor(gpu_indices=[0])
    plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=ZeusCost(eta_knob=0.5))
    for epoch in range(epochs):
        plo.on_epoch_begin()
        for batch in loader:
            plo.on_step_begin(); train(batch); plo.on_step_end()
        plo.on_epoch_end()

The state machine, the selectors and the device control are the C++ core's; step callbacks
release the GIL. With torch.distributed initialised, energy (sum) and time (max) are
all-reduced across ranks so every rank sets the same limit.

`plo.state` is one of upstream's state objects, `Ready`, `Warmup`, `Profiling` or `Done`, with
upstream's fields (power limits in mW, as upstream), e.g. `isinstance(plo.state, Done)` and
`plo.state.optimal_power_limit`.
"""

from __future__ import annotations

import atexit
import numbers
import os
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

from zeus_cpp import _zeus_cpp
from zeus_cpp.callback import Callback
from zeus_cpp.monitor.energy import ZeusMonitor
from zeus_cpp.utils.framework import torch_all_reduce


@dataclass
class PowerLimitMeasurement:
    """Energy (J) and time (s) measured over one profiling window at one power limit (W)."""

    power_limit: int
    energy: float
    time: float


def _positive_int(owner: str, name: str, value: object) -> int:
    """`value` as a positive int (upstream's pydantic PositiveInt); ValueError otherwise (pydantic's
    ValidationError is a ValueError too)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{owner}.{name} must be a positive integer, not {value!r}")
    return value


@dataclass
class Ready:
    """Ready to warm up the next power limit (upstream's `Ready` state).

    The first state (unless a saved profile was loaded), and the state after an epoch ended
    during warm-up or profiling. `Ready` -> `Warmup` at the `steps`-th next `on_step_begin`.

    Attributes:
        next_power_limit: the limit to warm up next, in mW.
        steps: step begins left before it is set (the first time wait_steps + 1, later 1).
    """

    next_power_limit: int
    steps: int

    def __post_init__(self) -> None:
        """Checks the fields as upstream's pydantic model does."""
        self.next_power_limit = _positive_int("Ready", "next_power_limit", self.next_power_limit)
        self.steps = _positive_int("Ready", "steps", self.steps)


@dataclass
class Warmup:
    """Warming up at a power limit (upstream's `Warmup` state).

    `Warmup` -> `Profiling` at the `steps`-th next `on_step_begin`; -> `Ready` when the epoch
    ends first.

    Attributes:
        current_power_limit: the limit set now, in mW.
        steps: step begins left before its profiling window opens.
    """

    current_power_limit: int
    steps: int

    def __post_init__(self) -> None:
        """Checks the fields as upstream's pydantic model does."""
        self.current_power_limit = _positive_int("Warmup", "current_power_limit", self.current_power_limit)
        self.steps = _positive_int("Warmup", "steps", self.steps)


@dataclass
class Profiling:
    """Profiling a power limit in a monitor window (upstream's `Profiling` state).

    At the `steps`-th next `on_step_begin` the window closes: -> `Warmup` of the next limit, or
    `Done` after the last one; -> `Ready` when the epoch ends first.

    Attributes:
        current_power_limit: the limit being profiled, in mW.
        steps: step begins left before its window closes.
    """

    current_power_limit: int
    steps: int

    def __post_init__(self) -> None:
        """Checks the fields as upstream's pydantic model does."""
        self.current_power_limit = _positive_int("Profiling", "current_power_limit",
                                                 self.current_power_limit)
        self.steps = _positive_int("Profiling", "steps", self.steps)


@dataclass
class Done:
    """Every limit is profiled and the optimum is set (upstream's `Done` state).

    The first state when a saved profile was loaded, and the last one in any case.

    Attributes:
        optimal_power_limit: the selected limit, in mW.
    """

    optimal_power_limit: int

    def __post_init__(self) -> None:
        """Checks the field as upstream's pydantic model does."""
        self.optimal_power_limit = _positive_int("Done", "optimal_power_limit", self.optimal_power_limit)


PowerLimitState = Union[Ready, Warmup, Profiling, Done]


def _to_tuples(measurements: List[PowerLimitMeasurement]):
    return [(int(m.power_limit), float(m.energy), float(m.time)) for m in measurements]


class OptimumSelector(ABC):
    """Base class of the optimum power-limit selectors (upstream's extension point).

    Subclass it and define `select` to choose the power limit yourself::

        class LowestWithin5Percent(OptimumSelector):
            def select(self, measurements: list[PowerLimitMeasurement]) -> int:
                fastest = min(m.time for m in measurements)
                return min(m.power_limit for m in measurements if m.time <= 1.05 * fastest)

        plo = GlobalPowerLimitOptimizer(monitor, optimum_selector=LowestWithin5Percent())

    `select` gets one `PowerLimitMeasurement` per profiled limit (W, J summed over the GPUs and
    ranks, s) once every limit is profiled, and returns one of their `power_limit`s in W. It runs
    inside `on_step_begin` (or at construction, for a loaded profile) and must not call back into
    the optimizer. If it raises, or returns a limit that was not profiled, the GPUs go back to the
    maximum limit, the error reaches the caller of `on_step_begin`, and the selection is tried
    again at the next step begin. The built-in `Energy`, `Time`, `ZeusCost` and
    `MaxSlowdownConstraint` run in the C++ core.
    """

    @abstractmethod
    def select(self, measurements: List[PowerLimitMeasurement]) -> int:
        """The optimal power limit (W) among `measurements`."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _CoreSelector(OptimumSelector):
    """A selector of the C++ core (zeus::PowerLimitSelector): the built-ins."""

    _selector: "_zeus_cpp.PowerLimitSelector"

    def select(self, measurements: List[PowerLimitMeasurement]) -> int:
        """The optimal power limit (W) among `measurements` (ties go to the higher limit)."""
        return self._selector.select(_to_tuples(measurements), self._max_power_w(measurements))

    def _max_power_w(self, measurements: List[PowerLimitMeasurement]) -> float:
        return _zeus_cpp.default_max_power_w(_to_tuples(measurements), 1)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._selector.name})"


def _custom_select(selector: OptimumSelector):
    """The function the C++ core calls for a Python `select`: tuples in, a limit in W out."""
    name = type(selector).__name__

    def select(tuples, max_power_w: float) -> int:
        del max_power_w  # upstream's select sees the measurements only
        measurements = [PowerLimitMeasurement(p, e, t) for p, e, t in tuples]
        try:
            chosen = selector.select(measurements)
        except Exception as error:
            if hasattr(error, "add_note"):  # Python 3.11+
                error.add_note(f"zeus_cpp: raised by {name}.select; the GPUs are back at the maximum "
                               "power limit and the selection is tried again at the next step")
            raise
        if isinstance(chosen, float) and chosen.is_integer():
            chosen = int(chosen)
        if isinstance(chosen, bool) or not isinstance(chosen, numbers.Integral):
            raise TypeError(f"{name}.select returned {chosen!r}; it must return one of the measured "
                            f"power limits in W (an int): {sorted((m.power_limit for m in measurements), reverse=True)}")
        return int(chosen)

    return select


def core_selector(selector: OptimumSelector) -> "_zeus_cpp.PowerLimitSelector":
    """The C++ core's selector for `selector`: a built-in's own, or one that calls a subclass's
    `select` (with the GIL) when the optimizer selects."""
    if not isinstance(selector, OptimumSelector):
        raise TypeError(
            "optimum_selector must be Energy(), Time(), ZeusCost(...), MaxSlowdownConstraint(...) or "
            f"an OptimumSelector subclass that defines select(), not {type(selector).__name__}"
        )
    if type(selector).select is _CoreSelector.select:
        return selector._selector  # type: ignore[attr-defined]
    return _zeus_cpp.PowerLimitSelector.custom(f"custom:{type(selector).__name__}", _custom_select(selector))


class Energy(_CoreSelector):
    """Selects the power limit that minimises energy."""

    def __init__(self) -> None:
        self._selector = _zeus_cpp.PowerLimitSelector.min_energy()


class Time(_CoreSelector):
    """Selects the power limit that minimises time."""

    def __init__(self) -> None:
        self._selector = _zeus_cpp.PowerLimitSelector.min_time()


class ZeusCost(_CoreSelector):
    r"""Minimises eta * Energy + (1 - eta) * MaxPower * Time.

    MaxPower is the largest profiled limit times the number of GPUs; inside the optimizer the
    GPU count comes from the monitor (and the all-reduce across ranks), so world_size only
    matters for select() called directly.
    """

    def __init__(self, eta_knob: float, world_size: int = 1) -> None:
        """Raises InvalidArgumentError unless 0 <= eta_knob <= 1 and world_size >= 1."""
        if isinstance(world_size, bool) or not isinstance(world_size, int):
            raise TypeError(f"world_size must be an int, not {type(world_size).__name__}")
        self._selector = _zeus_cpp.PowerLimitSelector.zeus_cost(eta_knob)
        if world_size < 1:
            from zeus_cpp import InvalidArgumentError

            raise InvalidArgumentError("world_size must be greater than or equal to 1.")
        self.eta_knob = float(eta_knob)
        self.world_size = world_size

    def _max_power_w(self, measurements: List[PowerLimitMeasurement]) -> float:
        return _zeus_cpp.default_max_power_w(_to_tuples(measurements), self.world_size)


class MaxSlowdownConstraint(_CoreSelector):
    """Selects the lowest power limit whose time is at most factor x the time at the maximum."""

    def __init__(self, factor: float) -> None:
        """Raises InvalidArgumentError unless factor >= 1."""
        self._selector = _zeus_cpp.PowerLimitSelector.max_slowdown(factor)
        self.factor = float(factor)


# Optimizers still alive at exit get their GPUs' maximum limit back (the C++ core does this too;
# this runs first, while Python still works).
_live_optimizers: "weakref.WeakSet[GlobalPowerLimitOptimizer]" = weakref.WeakSet()


def _forget_in_child() -> None:
    """A forked child (multiprocessing, DataLoader workers) owns none of its parent's optimizers:
    it must not put the parent's GPUs back when it exits."""
    _live_optimizers.clear()


os.register_at_fork(after_in_child=_forget_in_child)


@atexit.register
def _restore_all() -> None:
    for optimizer in list(_live_optimizers):
        try:
            optimizer._optimizer.restore()
        except Exception:  # noqa: BLE001 - best effort at exit; the C++ hook tries again
            pass


class GlobalPowerLimitOptimizer(Callback):
    """Profiles power limits in the first epoch and trains at the best one.

    States (`state`): Ready -> Warmup -> Profiling -> Done, as upstream: Ready lasts
    wait_steps + 1 step begins (warm-up of the first limit starts at the (wait_steps + 1)-th),
    Warmup warmup_steps and Profiling profile_steps; an epoch that ends during Warmup or Profiling
    re-profiles that limit after one more step begin. The maximum limit is restored at exit
    (normal return, exceptions, SIGINT/SIGTERM).
    """

    def __init__(
        self,
        monitor: ZeusMonitor,
        optimum_selector: Optional[OptimumSelector] = None,
        wait_steps: int = 1,
        warmup_steps: int = 10,
        profile_steps: int = 40,
        pl_step: int = 25,
        profile_path: Optional[Union[str, os.PathLike]] = None,
    ) -> None:
        """Sets the maximum power limit (or loads the profile and sets its optimum).

        Args:
            monitor: the ZeusMonitor whose GPUs are profiled and controlled.
            optimum_selector: Energy(), Time(), ZeusCost(eta_knob), MaxSlowdownConstraint(factor)
                or your own OptimumSelector subclass (see its docstring); default
                ZeusCost(eta_knob=0.5).
            wait_steps: steps to let pass before anything is done (warm-up of the first limit
                starts at step begin wait_steps + 1, as upstream).
            warmup_steps: steps at a limit before its window opens.
            profile_steps: steps the profiling window spans.
            pl_step: stride between candidate limits in W (from the maximum downward).
            profile_path: load the profile from here if the file exists (no profiling), else
                save it here when done.

        Raises:
            TypeError: wrong argument types (e.g. a monitor that is not a ZeusMonitor).
            InvalidArgumentError: bad step counts, GPUs with different limit ranges, a profile
                for another GPU model.
            PermissionDeniedError: setting limits needs root or CAP_SYS_ADMIN.
        """
        if not isinstance(monitor, ZeusMonitor):
            raise TypeError(f"monitor must be a ZeusMonitor, not {type(monitor).__name__}")
        if optimum_selector is None:
            optimum_selector = ZeusCost(eta_knob=0.5, world_size=len(monitor.gpu_indices))
        core = core_selector(optimum_selector)  # TypeError for anything else
        for name, value in (("wait_steps", wait_steps), ("warmup_steps", warmup_steps),
                            ("profile_steps", profile_steps), ("pl_step", pl_step)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
        if wait_steps < 0:
            from zeus_cpp import InvalidArgumentError  # noqa: PLC0415

            raise InvalidArgumentError(f"wait_steps must be non-negative, not {wait_steps}")
        self.monitor = monitor
        self.optimum_selector = optimum_selector
        self.warmup_steps = warmup_steps
        self.profile_steps = profile_steps
        self.pl_step = pl_step
        self.profile_path = None if profile_path is None else os.fspath(profile_path)
        self._optimizer = _zeus_cpp.PowerLimitOptimizer(
            monitor._monitor,
            core,
            # The core counts the step begin that starts the warm-up among its wait steps;
            # upstream lets wait_steps pass first (Ready(steps=wait_steps + 1)).
            wait_steps=wait_steps + 1,
            warmup_steps=warmup_steps,
            profile_steps=profile_steps,
            pl_step_w=pl_step,
            profile_path=self.profile_path or "",
            all_reduce=torch_all_reduce(),
        )
        # What `state` reports as steps left: step begins counted since the phase began, and how
        # long the current Ready lasts (wait_steps + 1 at first, 1 after an interruption).
        self._ready_steps = wait_steps + 1
        self._phase_steps = 0
        self._phase = self._phase_key()
        _live_optimizers.add(self)

    def _phase_key(self) -> Tuple[str, Optional[int], int]:
        """(state name, limit warmed up or profiled, limits measured): changes with each phase."""
        optimizer = self._optimizer
        return optimizer.state, optimizer.current_setting_w, len(optimizer.measurements)

    def _count_step(self, before: Tuple[str, Optional[int], int]) -> None:
        """Updates the step count of the phase after a callback that started in phase `before`."""
        after = self._phase_key()
        if after == before:
            self._phase_steps += 1
            return
        self._phase, self._phase_steps = after, 0
        if after[0] == "Ready":  # an interruption or a failed measurement: one step, then re-warm
            self._ready_steps = 1

    def on_train_begin(self) -> None:
        """Does nothing (kept for the Callback interface)."""

    def on_train_end(self) -> None:
        """Does nothing (limits are restored at exit)."""

    def on_epoch_begin(self) -> None:
        """Marks the beginning of an epoch."""
        self._optimizer.on_epoch_begin()

    def on_epoch_end(self) -> None:
        """Marks the end of an epoch (interrupts warm-up or profiling of the current limit)."""
        before = self._phase_key()
        try:
            self._optimizer.on_epoch_end()
        finally:
            if self._phase_key() != before:
                self._count_step(before)

    def on_step_begin(self) -> None:
        """Marks the beginning of a training step (drives the state machine)."""
        if self._phase[0] == "Done":
            self._optimizer.on_step_begin()
            return
        before = self._phase_key()
        try:
            self._optimizer.on_step_begin()
        finally:
            self._count_step(before)

    def on_step_end(self) -> None:
        """Marks the end of a training step."""
        self._optimizer.on_step_end()

    def on_evaluate(self, metric: float) -> None:
        """Does nothing (kept for the Callback interface)."""
        del metric

    def restore(self) -> None:
        """Puts the maximum power limit back on every GPU now."""
        self._optimizer.restore()

    @property
    def state(self) -> PowerLimitState:
        """The state machine's state: a `Ready`, `Warmup`, `Profiling` or `Done` (upstream's
        classes; power limits in mW, as upstream).

        A new snapshot at each access: changing its fields does not change the optimizer.
        """
        name, current_w, measured = self._phase_key()
        if name == "Done":
            return Done(optimal_power_limit=self._optimizer.optimal_setting_w * 1000)
        if name == "Ready":
            candidates = self._optimizer.candidates_w
            next_w = candidates[min(measured, len(candidates) - 1)]
            return Ready(next_power_limit=next_w * 1000,
                         steps=max(1, self._ready_steps - self._phase_steps))
        if name == "Warmup":
            return Warmup(current_power_limit=current_w * 1000,
                          steps=max(1, max(self.warmup_steps, 1) - self._phase_steps))
        return Profiling(current_power_limit=current_w * 1000,
                         steps=max(1, self.profile_steps - self._phase_steps))

    @property
    def power_limits(self) -> List[int]:
        """Candidate power limits in W, highest first."""
        return list(self._optimizer.candidates_w)

    @property
    def current_power_limit(self) -> Optional[int]:
        """The limit (W) being warmed up or profiled; None in Ready and Done."""
        return self._optimizer.current_setting_w

    @property
    def optimal_power_limit(self) -> Optional[int]:
        """The selected limit (W) once Done, else None."""
        return self._optimizer.optimal_setting_w

    @property
    def measurements(self) -> List[PowerLimitMeasurement]:
        """One measurement per profiled limit (after the all-reduce across ranks)."""
        return [PowerLimitMeasurement(p, e, t) for p, e, t in self._optimizer.measurements]


def __getattr__(name: str):
    """HFGlobalPowerLimitOptimizer, built on first use (transformers is imported only then)."""
    if name == "HFGlobalPowerLimitOptimizer":
        from zeus_cpp.integrations.huggingface import hf_power_limit_optimizer_class  # noqa: PLC0415

        return hf_power_limit_optimizer_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "GlobalPowerLimitOptimizer",
    "Ready",
    "Warmup",
    "Profiling",
    "Done",
    "HFGlobalPowerLimitOptimizer",
    "OptimumSelector",
    "Energy",
    "Time",
    "ZeusCost",
    "MaxSlowdownConstraint",
    "PowerLimitMeasurement",
]
