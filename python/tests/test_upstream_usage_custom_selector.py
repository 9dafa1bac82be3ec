"""Upstream's extension point: "Users can inherit from OptimumSelector to implement their custom
optimum selector" (zeus.optimizer.power_limit). A subclass defines
`select(self, measurements: list[PowerLimitMeasurement]) -> int` (a power limit in W) and is
passed to GlobalPowerLimitOptimizer; the C++ core calls it when every limit is profiled. On the
fake NVML (one GPU, limits 100..300 W, candidates 300, 200, 100 W)."""

from __future__ import annotations

import time
from typing import List

import pytest

import zeus_cpp
from zeus_cpp.monitor import ZeusMonitor
from zeus_cpp.optimizer.power_limit import (
    Done,
    Energy,
    GlobalPowerLimitOptimizer,
    OptimumSelector,
    PowerLimitMeasurement,
    Profiling,
)

from conftest import fake_device


class SecondHighest(OptimumSelector):
    """Picks the second-highest profiled limit, and records what it was given."""

    def __init__(self) -> None:
        self.calls: List[List[PowerLimitMeasurement]] = []

    def select(self, measurements: List[PowerLimitMeasurement]) -> int:
        self.calls.append(list(measurements))
        return sorted((m.power_limit for m in measurements), reverse=True)[1]


class Scripted(OptimumSelector):
    """Answers (or raises) what `answers` holds, one per call."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.calls = 0

    def select(self, measurements: List[PowerLimitMeasurement]) -> int:
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


def make_plo(fake_nvml, selector, **kwargs):
    fake_nvml.write([fake_device(power_draw_w=300, min_limit_w=100, max_limit_w=300)])
    monitor = ZeusMonitor(gpu_indices=[0], cpu_indices=[], sync_execution_with=None)
    return GlobalPowerLimitOptimizer(monitor, optimum_selector=selector, wait_steps=1, warmup_steps=1,
                                     profile_steps=2, pl_step=100, **kwargs)


def step(plo):
    plo.on_step_begin()
    time.sleep(0.01)  # the fake GPU's energy grows with wall time
    plo.on_step_end()


def steps_until_selection(plo) -> int:
    """Steps until the step begin that selects is next (every limit profiled but the last window
    still open); returns how many were taken."""
    for taken in range(100):
        if plo.state == Profiling(current_power_limit=100_000, steps=1):
            return taken
        step(plo)
    raise AssertionError(f"never reached the selection: {plo.state}")


def test_custom_optimum_selector_subclass_chooses_the_power_limit(fake_nvml):
    selector = SecondHighest()
    plo = make_plo(fake_nvml, selector)
    for _ in range(100):
        if isinstance(plo.state, Done):
            break
        step(plo)
    assert plo.state == Done(optimal_power_limit=200_000)
    assert plo.optimal_power_limit == 200
    assert fake_nvml.limit_w() == 200
    # Called once, with upstream's measurement objects: W, J and s per profiled limit.
    assert len(selector.calls) == 1
    given = selector.calls[0]
    assert [m.power_limit for m in given] == [300, 200, 100]
    assert all(isinstance(m, PowerLimitMeasurement) for m in given)
    for m in given:
        assert m.time > 0 and m.energy / m.time == pytest.approx(m.power_limit, rel=0.1)
    assert repr(selector) == "SecondHighest()"
    plo.restore()
    assert fake_nvml.limit_w() == 300


def test_custom_selector_that_raises_leaves_the_maximum_and_is_retried_at_the_next_step(fake_nvml):
    selector = Scripted(ValueError("my selector is broken"), 100)
    plo = make_plo(fake_nvml, selector)
    steps_until_selection(plo)
    assert fake_nvml.limit_w() == 100  # profiling the last limit
    with pytest.raises(ValueError, match="my selector is broken") as raised:
        plo.on_step_begin()  # the user's own exception, as upstream's optimizer lets it through
    if hasattr(raised.value, "__notes__"):
        assert "back at the maximum power limit" in raised.value.__notes__[0]
    assert fake_nvml.limit_w() == 300  # a valid limit: the maximum
    assert not isinstance(plo.state, Done)
    assert plo.optimal_power_limit is None
    plo.on_epoch_end()  # nothing to interrupt while the selection waits
    assert fake_nvml.limit_w() == 300
    step(plo)  # retried: answers 100 W
    assert plo.state == Done(optimal_power_limit=100_000)
    assert fake_nvml.limit_w() == 100
    assert selector.calls == 2
    assert [m.power_limit for m in plo.measurements] == [300, 200, 100]  # not profiled again


def test_custom_selector_returning_a_limit_that_was_not_measured_is_refused(fake_nvml):
    selector = Scripted(123, 250, None, 200.0)
    plo = make_plo(fake_nvml, selector)
    steps_until_selection(plo)
    for refused in (123, 250):
        with pytest.raises(zeus_cpp.InvalidArgumentError) as raised:
            plo.on_step_begin()
        message = str(raised.value)
        assert f"custom:Scripted chose {refused}, which is not a measured setting" in message, message
        assert "300, 200, 100" in message and "the GPUs are at the maximum" in message, message
        assert fake_nvml.limit_w() == 300
    with pytest.raises(TypeError, match=r"Scripted.select returned None; it must return one of the measured"):
        plo.on_step_begin()
    assert fake_nvml.limit_w() == 300
    step(plo)  # 200.0: a whole number of watts is taken
    assert plo.state == Done(optimal_power_limit=200_000)
    assert fake_nvml.limit_w() == 200


def test_optimum_selector_is_abstract_as_upstreams():
    with pytest.raises(TypeError):
        OptimumSelector()

    class NoSelect(OptimumSelector):
        pass

    with pytest.raises(TypeError):
        NoSelect()


def test_a_builtin_subclass_that_overrides_select_is_used_as_a_custom_selector(fake_nvml):
    class EnergyButNotBelow200(Energy):
        def select(self, measurements):
            return max(super().select(measurements), 200)

    plo = make_plo(fake_nvml, EnergyButNotBelow200())
    for _ in range(100):
        if isinstance(plo.state, Done):
            break
        step(plo)
    # Energy alone picks 100 W (power x time on the fake); the override lifts it to 200 W.
    assert plo.state == Done(optimal_power_limit=200_000)


def test_a_loaded_profile_is_selected_by_the_custom_selector(fake_nvml, tmp_path):
    path = tmp_path / "profile.json"
    plo = make_plo(fake_nvml, Energy(), profile_path=path)
    for _ in range(100):
        if isinstance(plo.state, Done):
            break
        step(plo)
    assert path.exists()
    plo.restore()
    selector = SecondHighest()
    again = make_plo(fake_nvml, selector, profile_path=path)
    assert again.state == Done(optimal_power_limit=200_000)
    assert len(selector.calls) == 1 and fake_nvml.limit_w() == 200
    again.restore()
    # A selector that fails on a loaded profile fails the construction; the GPU stays at the maximum.
    with pytest.raises(RuntimeError, match="no"):
        make_plo(fake_nvml, Scripted(RuntimeError("no")), profile_path=path)
    assert fake_nvml.limit_w() == 300


def test_not_a_selector_is_a_type_error_naming_the_subclass_route(fake_nvml):
    fake_nvml.write([fake_device()])
    with pytest.raises(TypeError, match="OptimumSelector subclass that defines select"):
        GlobalPowerLimitOptimizer(ZeusMonitor(gpu_indices=[0]), optimum_selector=lambda ms: 300)
